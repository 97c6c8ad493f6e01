//! One socket: reads the client's messages, runs its contexts, writes their messages.
//!
//! The reader never waits on the engine or on the client's reading (text is queued per
//! context, see [`super::context`]), so keep-alives, `flush` and `close_context` take effect
//! at once; only the writer waits on the client. Limits are per socket: message size, waiting
//! text per context, contexts at once; each refusal is an error message naming the limit and,
//! where the socket cannot go on, a close code ([`super::protocol::close`]).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use engine::follow::ChunkConfig;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;

use super::super::backend::{BackendError, FollowJob};
use super::super::listener::BusyGuard;
use super::super::token::constant_time_eq;
use super::super::AppState;
use super::context::{Context, Finished, Outgoing, Start};
use super::output::ElevenLabsFormat;
use super::protocol::{self, close, ClientMessage};
use super::{MAX_CONTEXTS, MAX_MESSAGE_BYTES, MAX_WAITING_CHARS};

/// The context of the single-context endpoint.
const SINGLE: &str = "default";
/// Ids of closed contexts remembered (to tell a reuse while one is still finishing).
const REMEMBERED: usize = 256;

/// What the upgrade request decided.
pub struct Setup {
    pub voice: String,
    pub multi: bool,
    pub format: ElevenLabsFormat,
    pub query: protocol::Query,
    /// The token came with the upgrade request (header); otherwise the first message must
    /// carry it.
    pub authed: bool,
    /// Held while the socket is open, so the listener never closes it as idle.
    pub _busy: Option<BusyGuard>,
}

struct Session {
    state: AppState,
    setup: Setup,
    out: mpsc::Sender<Outgoing>,
    finished_tx: mpsc::UnboundedSender<Finished>,
    contexts: HashMap<String, Context>,
    /// Contexts ended and still finishing their audio.
    closing: HashSet<String>,
    /// Contexts that said their final message (a late `close_context` for one is no error).
    finished: HashSet<String>,
    /// Single context: the input has ended; multi: `close_socket` was asked.
    ending: bool,
    last_audio: Arc<AtomicU64>,
    epoch: Instant,
}

/// What reading a message led to.
enum Step {
    Go,
    Close(u16, String),
}

pub async fn run(socket: WebSocket, state: AppState, setup: Setup) {
    let (mut sink, mut stream) = socket.split();
    let (out, mut out_rx) = mpsc::channel::<Outgoing>(8);
    let writer = tokio::spawn(async move {
        while let Some(o) = out_rx.recv().await {
            let result = match o {
                Outgoing::Text(text) => sink.send(Message::Text(text.into())).await,
                Outgoing::Close(code, reason) => {
                    let _ = sink
                        .send(Message::Close(Some(CloseFrame {
                            code,
                            reason: reason.into(),
                        })))
                        .await;
                    break;
                }
            };
            if result.is_err() {
                break;
            }
        }
    });
    let (finished_tx, mut finished_rx) = mpsc::unbounded_channel();
    let timeout = Duration::from_secs(setup.query.inactivity_secs);
    let mut s = Session {
        state,
        setup,
        out: out.clone(),
        finished_tx,
        contexts: HashMap::new(),
        closing: HashSet::new(),
        finished: HashSet::new(),
        ending: false,
        last_audio: Arc::default(),
        epoch: Instant::now(),
    };
    let mut last_message = Instant::now();
    let closing = loop {
        let audio_at = s.epoch + Duration::from_millis(s.last_audio.load(Ordering::Relaxed));
        let deadline = last_message.max(audio_at) + timeout;
        tokio::select! {
            frame = stream.next() => {
                let step = match frame {
                    None | Some(Ok(Message::Close(_))) => break None,
                    Some(Err(e)) => {
                        // tungstenite refuses frames beyond its own cap, and text frames that
                        // are not UTF-8, before we see them; both get their close code.
                        let text = e.to_string();
                        if text.contains("too long") || text.contains("size") {
                            Step::Close(close::TOO_BIG, format!("message too big: {text}"))
                        } else if text.to_ascii_lowercase().contains("utf-8")
                            || text.to_ascii_lowercase().contains("utf8")
                        {
                            Step::Close(
                                close::INVALID_DATA,
                                "text frames must be UTF-8 JSON".into(),
                            )
                        } else {
                            break None;
                        }
                    }
                    Some(Ok(Message::Text(text))) => {
                        // Only messages count as activity: a client that only pings (or
                        // never authenticates) still meets its inactivity timeout.
                        last_message = Instant::now();
                        s.message(text.as_str()).await
                    }
                    Some(Ok(Message::Binary(_))) => Step::Close(
                        close::UNSUPPORTED,
                        "binary frames are not accepted: send JSON messages as text frames".into(),
                    ),
                    Some(Ok(_)) => Step::Go, // ping and pong: the library answers pings
                };
                if let Step::Close(code, reason) = step {
                    break Some((code, reason));
                }
            }
            Some(done) = finished_rx.recv() => {
                s.contexts.remove(&done.id);
                s.closing.remove(&done.id);
                if s.finished.len() >= REMEMBERED {
                    s.finished.clear();
                }
                s.finished.insert(done.id.clone());
                if let Some((code, reason)) = done.failure {
                    if !s.setup.multi {
                        break Some((code, reason));
                    }
                }
                if s.ending && s.contexts.is_empty() {
                    break Some((close::NORMAL, "done".into()));
                }
            }
            () = tokio::time::sleep_until(deadline.into()) => {
                let busy = s.contexts.values().any(|c| c.ended);
                if !busy {
                    let secs = timeout.as_secs();
                    break Some((close::POLICY, format!(
                        "no message for {secs} s (inactivity_timeout): send text, or \
                         {{\"text\": \"\"}} on a context to keep it alive"
                    )));
                }
                last_message = Instant::now();
            }
        }
    };
    if let Some((code, reason)) = closing {
        if code != close::NORMAL {
            let _ = out
                .send(Outgoing::Text(protocol::error(
                    error_code(code),
                    &reason,
                    Some(code),
                    None,
                )))
                .await;
        }
        // A close reason is at most 123 bytes.
        let mut short = reason;
        while short.len() > 120 {
            short.pop();
        }
        let _ = out.send(Outgoing::Close(code, short)).await;
    }
    drop(s); // contexts still running are aborted with it
    drop(out);
    let _ = writer.await;
}

fn error_code(close_code: u16) -> &'static str {
    match close_code {
        close::UNSUPPORTED => "binary_frame",
        close::TOO_BIG => "message_too_big",
        close::TRY_LATER => "queue_full",
        close::INTERNAL => "internal_error",
        _ => "policy_violation",
    }
}

impl Session {
    async fn say(&self, code: &str, message: &str, context: Option<&str>) {
        let _ = self
            .out
            .send(Outgoing::Text(protocol::error(
                code, message, None, context,
            )))
            .await;
    }

    async fn message(&mut self, frame: &str) -> Step {
        if frame.len() > MAX_MESSAGE_BYTES {
            return Step::Close(
                close::TOO_BIG,
                format!(
                    "a message of {} bytes is over the {MAX_MESSAGE_BYTES}-byte limit: send text \
                     in smaller pieces",
                    frame.len()
                ),
            );
        }
        let msg = match ClientMessage::parse(frame) {
            Ok(m) => m,
            Err(e) => {
                self.say("invalid_message", &e, None).await;
                return Step::Go;
            }
        };
        if !self.setup.authed {
            let ok = msg.token().is_some_and(|t| {
                constant_time_eq(t.as_bytes(), self.state.policy.token.as_bytes())
            });
            if !ok {
                return Step::Close(
                    close::POLICY,
                    "missing or wrong API token: send it as the xi-api-key header, an \
                     Authorization: Bearer header, or xi_api_key in the first message"
                        .into(),
                );
            }
            self.setup.authed = true;
        }
        if msg.close_socket == Some(true) {
            return self.end_all().await;
        }
        let id = if self.setup.multi {
            msg.context_id.clone().unwrap_or_else(|| SINGLE.to_owned())
        } else {
            SINGLE.to_owned()
        };
        let wire = self.setup.multi.then(|| id.clone());
        if msg.close_context == Some(true) {
            if !self.setup.multi {
                self.say("invalid_message", "close_context is for the multi-stream-input endpoint; end input with {\"text\": \"\"}", None).await;
                return Step::Go;
            }
            return self.end_context(&id).await;
        }
        let Some(text) = msg.text.as_deref() else {
            if msg.flush == Some(true) {
                if let Some(c) = self.contexts.get_mut(&id) {
                    c.text("", true);
                }
                return Step::Go;
            }
            self.say(
                "invalid_message",
                "a message needs `text` (or `flush`, `close_context`, `close_socket`)",
                wire.as_deref(),
            )
            .await;
            return Step::Go;
        };
        let is_init = msg.voice_settings.is_some() || msg.generation_config.is_some();
        if !self.contexts.contains_key(&id) {
            if text.is_empty() && self.setup.multi {
                return Step::Go; // a keep-alive before any context: nothing to keep
            }
            if self.closing.contains(&id) || (!self.setup.multi && self.ending) {
                let what = if self.setup.multi {
                    format!("context `{id}` is closed and still finishing; use a new context_id")
                } else {
                    "input has ended ({\"text\": \"\"} was sent); text after it is ignored"
                        .to_owned()
                };
                self.say("context_closed", &what, wire.as_deref()).await;
                return Step::Go;
            }
            if self.contexts.len() >= MAX_CONTEXTS {
                return Step::Close(
                    close::POLICY,
                    format!(
                        "at most {MAX_CONTEXTS} contexts may be open on one socket; close one \
                         (close_context) before opening `{id}`"
                    ),
                );
            }
            if let Err(step) = self.open(&id, &msg).await {
                return step;
            }
        } else if is_init && self.contexts.get(&id).is_some_and(|c| c.has_text) {
            self.say(
                "context_exists",
                &format!("context `{id}` is already open and speaking; its settings are kept (close it, or use a new context_id, to change them)"),
                wire.as_deref(),
            )
            .await;
        }
        let Some(context) = self.contexts.get_mut(&id) else {
            return Step::Go;
        };
        if context.ended {
            self.say(
                "context_closed",
                &format!("context `{id}` has ended; text after its end is ignored"),
                wire.as_deref(),
            )
            .await;
            return Step::Go;
        }
        if text.is_empty() {
            if !self.setup.multi {
                // End of input: say what is left, then the final message and a normal close.
                context.finish_input();
                self.ending = true;
            }
            return Step::Go; // multi: a keep-alive
        }
        let waiting = context.text(text, msg.flush == Some(true));
        if waiting > MAX_WAITING_CHARS {
            return Step::Close(
                close::POLICY,
                format!(
                    "context `{id}` has {waiting} characters waiting, over the {MAX_WAITING_CHARS} \
                     limit: read the audio as it comes"
                ),
            );
        }
        Step::Go
    }

    /// Opens context `id` with the settings of `msg`.
    async fn open(&mut self, id: &str, msg: &ClientMessage) -> Result<(), Step> {
        let speed = msg
            .voice_settings
            .as_ref()
            .and_then(|v| v.speed)
            .map_or(1.0, |s| s as f32)
            .clamp(*engine::SPEED_RANGE.start(), *engine::SPEED_RANGE.end());
        let schedule: Vec<usize> = msg
            .generation_config
            .as_ref()
            .and_then(|g| g.chunk_length_schedule.clone())
            .unwrap_or_default()
            .into_iter()
            .filter(|n| n.is_finite() && *n >= 1.0)
            .map(|n| n as usize)
            .collect();
        let config = ChunkConfig {
            schedule,
            auto: self.setup.query.auto_mode,
            ..ChunkConfig::default()
        };
        let job = FollowJob {
            voice: self.setup.voice.clone(),
            speed,
        };
        let state = self.state.clone();
        let opened = tokio::task::spawn_blocking(move || state.backend.open_follow(job))
            .await
            .map_err(|e| Step::Close(close::INTERNAL, format!("opening the stream: {e}")))?;
        let (input, events) = match opened {
            Ok(o) => o,
            Err(BackendError::Input { message, .. }) => {
                return Err(Step::Close(close::POLICY, message));
            }
            Err(BackendError::Busy { queued }) => {
                return Err(Step::Close(
                    close::TRY_LATER,
                    format!("{queued} speech jobs are already waiting; try again shortly"),
                ));
            }
            Err(e) => return Err(Step::Close(close::INTERNAL, e.to_string())),
        };
        let context = Context::start(Start {
            id: id.to_owned(),
            wire_id: self.setup.multi.then(|| id.to_owned()),
            input,
            events,
            config,
            format: self.setup.format,
            out: self.out.clone(),
            finished: self.finished_tx.clone(),
            last_audio: Arc::clone(&self.last_audio),
            epoch: self.epoch,
        })
        .map_err(|e| Step::Close(close::INTERNAL, e))?;
        self.contexts.insert(id.to_owned(), context);
        Ok(())
    }

    /// `close_context`: flushed text finishes (then its final message), as ElevenLabs
    /// documents and pipecat relies on at the end of every turn (flush, then close); a context
    /// closed without a flush, or closed a second time while it finishes, stops at once (an
    /// interruption) and says its final message now.
    async fn end_context(&mut self, id: &str) -> Step {
        let Some(mut context) = self.contexts.remove(id) else {
            if !self.finished.contains(id) {
                self.say(
                    "unknown_context",
                    &format!("no open context `{id}`"),
                    Some(id),
                )
                .await;
            }
            return Step::Go;
        };
        if context.flushed && !context.ended {
            context.finish_input();
            if self.closing.len() >= REMEMBERED {
                self.closing.clear();
            }
            self.closing.insert(id.to_owned());
            self.contexts.insert(id.to_owned(), context);
        } else {
            self.closing.remove(id);
            if self.finished.len() >= REMEMBERED {
                self.finished.clear();
            }
            self.finished.insert(id.to_owned());
            context.cancel(&self.out).await;
        }
        Step::Go
    }

    /// `close_socket`: every context ends as `close_context` would; the socket closes when
    /// the last has said its final message.
    async fn end_all(&mut self) -> Step {
        self.ending = true;
        let ids: Vec<String> = self.contexts.keys().cloned().collect();
        for id in ids {
            self.end_context(&id).await;
        }
        if self.contexts.is_empty() {
            return Step::Close(close::NORMAL, "closed".into());
        }
        Step::Go
    }
}
