//! [`TritonServer`]: one Triton endpoint as the engine's [`SegmentServer`].
//!
//! The engine calls `speak` and `ready` from its own plain threads, several at once, and
//! blocks on the answer. So the async gRPC stack runs on one small tokio runtime made on first
//! use and shared by every server in the process (two workers: the work is waiting on sockets),
//! and each call `block_on`s it from the calling thread; a runtime per call would cost threads
//! and a fresh connection per segment. The channel is lazy (nothing is dialled until a call)
//! and multiplexes every concurrent segment to one server over one HTTP/2 connection.
//!
//! One segment is one `ModelStreamInfer` call with one request. The request stream stays open
//! until Triton's final response arrives (half-closing early is legal, but waiting costs
//! nothing and keeps the call alive on servers that end the stream when the client does); a
//! stream that ends or breaks before that flag, or goes silent for the idle timeout, is the
//! server going away (`Unavailable`), an `error_message` is the server refusing the segment
//! (`Refused`). HTTP/2 keep-alive pings notice a dead peer while a long segment is decoding.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use engine::remote::{RemoteChunk, RemoteError, RemoteJob, SegmentServer};
use futures_util::{Stream, StreamExt};
use tokio::runtime::Runtime;
use tonic::transport::{Channel, Endpoint as GrpcEndpoint};
use tonic::Status;
use triton_wire::protocol::{self, Chunk, OwnedTensor};

use crate::convert::{self, Item, Reply};
use crate::proto::{
    grpc_inference_service_client::GrpcInferenceServiceClient, ModelInferRequest,
    ModelReadyRequest, ModelStreamInferResponse, ServerReadyRequest,
};
use crate::{ClientError, Endpoint};

/// How long dialling may take before the server counts as unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long `ready` waits for both answers: it is asked between segments, so it must be short.
const READY_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a segment's stream may stay silent: far above a window's decode on a busy GPU.
const IDLE_TIMEOUT: Duration = Duration::from_mins(1);
/// A whole segment at 48 kHz is megabytes; gRPC's 4 MiB default would refuse long ones.
const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// The one runtime every [`TritonServer`] in the process runs its calls on.
fn runtime() -> Result<&'static Runtime, ClientError> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("triton-client")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| ClientError::Unavailable(format!("cannot start the gRPC runtime: {e}")))
}

/// A Triton server serving model `banter`, reached over `KServe` v2 gRPC.
///
/// Its blocking methods must be called from plain threads, not from inside an async runtime
/// (tokio refuses to block one of its own threads).
pub struct TritonServer {
    name: String,
    client: GrpcInferenceServiceClient<Channel>,
    runtime: &'static Runtime,
    next_id: AtomicU64,
    idle_timeout: Duration,
}

impl std::fmt::Debug for TritonServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TritonServer")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl TritonServer {
    /// A client for `endpoint`. Nothing is dialled yet: an unreachable server shows as
    /// `Unavailable` from the first call, or `false` from [`SegmentServer::ready`].
    pub fn connect(endpoint: &Endpoint) -> Result<Self, ClientError> {
        let name = endpoint.to_string();
        let runtime = runtime()?;
        let channel = GrpcEndpoint::from_shared(endpoint.uri())
            .map_err(|e| ClientError::Endpoint(format!("server {name}: {e}")))?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(15))
            .keep_alive_timeout(Duration::from_secs(20))
            .keep_alive_while_idle(true);
        // The lazy channel spawns its connection task on the runtime it is made in.
        let channel = {
            let _inside = runtime.enter();
            channel.connect_lazy()
        };
        let client = GrpcInferenceServiceClient::new(channel)
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES);
        Ok(Self {
            name,
            client,
            runtime,
            next_id: AtomicU64::new(0),
            idle_timeout: IDLE_TIMEOUT,
        })
    }

    /// The same server with another limit on a stream's silence (tests, slow links).
    #[must_use]
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sends arbitrary input tensors to model `banter` in one streamed request and collects
    /// every response until Triton's final one: a chunk, or the text of a response the server
    /// refused or this client could not read. For tests and tools; `Err` only when the server
    /// could not be reached or the stream broke off.
    pub fn stream_raw(
        &self,
        tensors: Vec<OwnedTensor>,
    ) -> Result<Vec<Result<Chunk, String>>, ClientError> {
        let request = convert::infer_request(self.request_id(), tensors);
        self.runtime.block_on(async {
            let (_open, inbound) = self.open(request).await.map_err(ClientError::Unavailable)?;
            collect(&self.name, inbound, self.idle_timeout)
                .await
                .map_err(ClientError::Unavailable)
        })
    }

    /// Whether the server says it is ready.
    pub fn server_ready(&self) -> Result<bool, ClientError> {
        self.runtime.block_on(self.ask_server_ready())
    }

    /// Whether the server says model `banter` is loaded and ready.
    pub fn model_ready(&self) -> Result<bool, ClientError> {
        self.runtime.block_on(self.ask_model_ready())
    }

    async fn ask_server_ready(&self) -> Result<bool, ClientError> {
        let mut client = self.client.clone();
        within(
            READY_TIMEOUT,
            &self.name,
            client.server_ready(ServerReadyRequest {}),
        )
        .await
        .map(|r| r.into_inner().ready)
        .map_err(ClientError::Unavailable)
    }

    async fn ask_model_ready(&self) -> Result<bool, ClientError> {
        let mut client = self.client.clone();
        let request = ModelReadyRequest {
            name: protocol::MODEL.to_owned(),
            version: String::new(),
        };
        within(READY_TIMEOUT, &self.name, client.model_ready(request))
            .await
            .map(|r| r.into_inner().ready)
            .map_err(ClientError::Unavailable)
    }

    fn request_id(&self) -> String {
        format!("banter-{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Starts the call with `request` as its only message. The returned sender keeps the
    /// request stream open; dropping it half-closes the call.
    async fn open(
        &self,
        request: ModelInferRequest,
    ) -> Result<
        (
            tokio::sync::mpsc::Sender<ModelInferRequest>,
            tonic::Streaming<ModelStreamInferResponse>,
        ),
        String,
    > {
        let (open, requests) = tokio::sync::mpsc::channel(1);
        open.try_send(request)
            .map_err(|e| format!("{}: cannot queue the request: {e}", self.name))?;
        let outbound = futures_util::stream::unfold(requests, |mut requests| async move {
            requests.recv().await.map(|m| (m, requests))
        });
        let mut client = self.client.clone();
        let inbound = within(
            self.idle_timeout,
            &self.name,
            client.model_stream_infer(outbound),
        )
        .await?;
        Ok((open, inbound.into_inner()))
    }
}

impl SegmentServer for TritonServer {
    fn name(&self) -> &str {
        &self.name
    }

    fn speak(
        &self,
        job: &RemoteJob,
        sink: &mut dyn FnMut(RemoteChunk) -> bool,
    ) -> Result<(), RemoteError> {
        let request = convert::infer_request(self.request_id(), convert::job_tensors(job));
        self.runtime.block_on(async {
            let (_open, inbound) = self.open(request).await.map_err(RemoteError::Unavailable)?;
            deliver(&self.name, inbound, self.idle_timeout, sink).await
        })
    }

    fn ready(&self) -> bool {
        self.runtime.block_on(async {
            // Both questions at once: an unreachable server costs one timeout, not two.
            let (server, model) = tokio::join!(self.ask_server_ready(), self.ask_model_ready());
            matches!((server, model), (Ok(true), Ok(true)))
        })
    }
}

/// A unary call or a stream's start, bounded by `limit`; failures as text naming the server.
async fn within<T>(
    limit: Duration,
    name: &str,
    call: impl Future<Output = Result<T, Status>>,
) -> Result<T, String> {
    match tokio::time::timeout(limit, call).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(status)) => Err(status_text(name, &status)),
        Err(_) => Err(format!(
            "{name} did not answer within {} s",
            limit.as_secs_f32()
        )),
    }
}

/// A gRPC status as the user reads it: the server, what failed, and the cause underneath
/// (tonic's own message for a refused connection is only "transport error").
fn status_text(name: &str, status: &Status) -> String {
    let mut text = format!("{name}: {}", status.message());
    let mut cause = std::error::Error::source(status);
    while let Some(e) = cause {
        let e_text = e.to_string();
        if !text.contains(&e_text) {
            text.push_str(": ");
            text.push_str(&e_text);
        }
        cause = e.source();
    }
    if status.message().is_empty() {
        text = format!("{text} ({:?})", status.code());
    }
    text
}

/// The next message of a segment's stream, or why there is none (always the server's fault).
async fn next_message<S>(
    name: &str,
    inbound: &mut S,
    idle: Duration,
) -> Result<ModelStreamInferResponse, String>
where
    S: Stream<Item = Result<ModelStreamInferResponse, Status>> + Unpin,
{
    match tokio::time::timeout(idle, inbound.next()).await {
        Ok(Some(Ok(message))) => Ok(message),
        Ok(Some(Err(status))) => Err(status_text(name, &status)),
        Ok(None) => Err(format!(
            "{name} closed the stream before the final response"
        )),
        Err(_) => Err(format!("{name} sent nothing for {} s", idle.as_secs_f32())),
    }
}

/// Reads one segment's answer into `sink`, checking it is one segment's chunks ending with its
/// last.
async fn deliver<S>(
    name: &str,
    mut inbound: S,
    idle: Duration,
    sink: &mut dyn FnMut(RemoteChunk) -> bool,
) -> Result<(), RemoteError>
where
    S: Stream<Item = Result<ModelStreamInferResponse, Status>> + Unpin,
{
    let unavailable = |text: String| RemoteError::Unavailable(text);
    let mut complete = false;
    loop {
        let message = next_message(name, &mut inbound, idle)
            .await
            .map_err(unavailable)?;
        let Reply { item, last } = convert::read_reply(message);
        match item {
            None => {}
            // A server shutting down or reloading has unloaded the model: that is the server
            // going away, not the segment's fault.
            Some(Item::Refused(message)) if is_model_gone(&message) => {
                return Err(unavailable(format!("{name}: {message}")))
            }
            Some(Item::Refused(message)) => return Err(RemoteError::Refused(message)),
            Some(Item::Malformed(why)) => {
                return Err(unavailable(format!(
                    "{name} sent a response this client cannot read: {why}"
                )))
            }
            Some(Item::Chunk(chunk)) => {
                if complete {
                    return Err(unavailable(format!(
                        "{name} sent audio after the segment's last chunk"
                    )));
                }
                if chunk.segment != 0 {
                    return Err(unavailable(format!(
                        "{name} answered a one-segment request with segment {}",
                        chunk.segment
                    )));
                }
                complete = chunk.segment_end;
                let more = sink(RemoteChunk {
                    samples: chunk.audio,
                    durations: chunk.durations,
                    end: chunk.segment_end,
                });
                if !more {
                    // Dropping the call cancels it on the server.
                    return Ok(());
                }
            }
        }
        if last {
            return if complete {
                Ok(())
            } else {
                Err(unavailable(format!(
                    "{name} ended its answer before the segment's last chunk"
                )))
            };
        }
    }
}

/// Every response until the final one, refusals and unreadable responses as text.
async fn collect<S>(
    name: &str,
    mut inbound: S,
    idle: Duration,
) -> Result<Vec<Result<Chunk, String>>, String>
where
    S: Stream<Item = Result<ModelStreamInferResponse, Status>> + Unpin,
{
    let mut out = Vec::new();
    loop {
        let Reply { item, last } =
            convert::read_reply(next_message(name, &mut inbound, idle).await?);
        match item {
            None => {}
            Some(Item::Chunk(chunk)) => out.push(Ok(chunk)),
            Some(Item::Refused(e) | Item::Malformed(e)) => out.push(Err(e)),
        }
        if last {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests;

/// Triton's answers for a model that is not (or no longer) loaded.
fn is_model_gone(message: &str) -> bool {
    message.contains("unknown model") || message.contains("has no available versions")
}
