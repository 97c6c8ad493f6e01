//! One stream on a thread of its own: the plan submitted to the instance's engine, every audio
//! chunk the scheduler hands back sent as its own response, then the final flag.
//!
//! At 24 kHz the samples go out untouched, so a remote render equals a local one bit for bit.
//! At another rate each segment runs through the engine's streaming resampler and is flushed
//! at the segment's end, so a segment is exactly `round(n × rate / 24000)` samples and its word
//! timing (the durations on its first chunk) stays its own. Between chunks the thread asks
//! whether the client cancelled or the instance is unloading; either drops the engine's
//! [`engine::StreamHandle`], which cancels the stream on the model thread.

use engine::audio::Resampler;
use engine::{Engine, SchedulerError, StreamEvent, SAMPLE_RATE};
use triton_wire::protocol::Chunk;

use crate::ffi::{self, Code, ResponseFactory};
use crate::instance::{InstanceState, StreamTicket};
use crate::plan::{Plan, Speech};
use crate::{guarded, Failure};

/// Starts `plan`'s stream; its responses go through `factory`, from a new thread.
pub fn start(state: &InstanceState, plan: Plan, factory: ResponseFactory) {
    let engine = state.engine.clone();
    let ticket = state.streams.enter();
    let (tx, rx) = std::sync::mpsc::sync_channel::<(Plan, ResponseFactory)>(1);
    let spawned = std::thread::Builder::new()
        .name("banter-stream".to_owned())
        .spawn(move || {
            if let Ok((plan, factory)) = rx.recv() {
                run(&engine, plan, &factory, &ticket);
            }
        });
    match spawned {
        // The thread is waiting on the channel, which cannot be full or closed yet.
        Ok(_) => {
            let _ = tx.send((plan, factory));
        }
        Err(e) => {
            let failure = Failure::new(Code::Unavailable, format!("starting a stream: {e}"));
            if let Err(e) = factory.send_error(&failure) {
                ffi::log_error(&format!("banter: {e}"));
            }
        }
    }
}

/// The stream's whole life; every way out ends the response stream with a final flag.
fn run(engine: &Engine, plan: Plan, factory: &ResponseFactory, ticket: &StreamTicket) {
    let sent = match guarded(|| stream(engine, plan, factory, ticket)) {
        Ok(()) => factory.send_final(),
        Err(failure) => {
            if failure.code == Code::Cancelled {
                ffi::log_info("banter: a client cancelled its stream; the engine dropped it");
            }
            factory.send_error(&failure)
        }
    };
    if let Err(e) = sent {
        ffi::log_error(&format!("banter: ending a stream: {e}"));
    }
}

fn stream(
    engine: &Engine,
    plan: Plan,
    factory: &ResponseFactory,
    ticket: &StreamTicket,
) -> Result<(), Failure> {
    let mode = plan.mode();
    let segments = match plan.speech {
        Speech::Segments(segments) => segments,
        Speech::Text(text) => {
            engine
                .segments_with_words(&text, &plan.request)
                .map_err(|e| Failure::from_scheduler(&SchedulerError::Synth(e)))?
                .0
        }
    };
    let submitted = if plan.whole {
        engine.submit_whole(segments, plan.request, mode)
    } else {
        engine.submit(segments, plan.request, mode)
    };
    let mut handle = submitted.map_err(|e| Failure::from_scheduler(&e))?;
    let mut resampler = match plan.sample_rate {
        SAMPLE_RATE => None,
        rate => {
            Some(Resampler::new(SAMPLE_RATE, rate).map_err(|e| Failure::internal(e.to_string()))?)
        }
    };
    loop {
        if factory.is_cancelled() {
            drop(handle);
            return Err(Failure::new(
                Code::Cancelled,
                "the client cancelled the request",
            ));
        }
        if ticket.streams().closing() {
            drop(handle);
            return Err(Failure::new(
                Code::Unavailable,
                "model banter is being unloaded",
            ));
        }
        let Some(event) = handle.blocking_next() else {
            return Ok(());
        };
        let (samples, segment, segment_end, durations) = match event {
            StreamEvent::Audio {
                samples,
                segment,
                segment_end,
                durations,
            } => (samples, segment, segment_end, durations),
            StreamEvent::Failed(e) => {
                return Err(Failure::from_scheduler(&SchedulerError::Synth(e)));
            }
        };
        let audio = match &mut resampler {
            None => samples,
            Some(r) => resample(r, &samples, segment_end)?,
        };
        // The resampler holds back up to a block; a chunk that brings nothing is not sent.
        if audio.is_empty() && durations.is_none() && !segment_end {
            continue;
        }
        let chunk = Chunk {
            audio,
            segment: u32::try_from(segment).unwrap_or(u32::MAX),
            segment_end,
            durations: durations.map(|d| d.to_vec()),
        };
        factory.send(&chunk.to_tensors())?;
    }
}

/// One chunk at the output rate; a segment's last chunk flushes the resampler.
fn resample(r: &mut Resampler, samples: &[f32], segment_end: bool) -> Result<Vec<f32>, Failure> {
    let mut out = Vec::with_capacity(samples.len() * 2);
    let failed = |e: engine::audio::AudioError| Failure::internal(e.to_string());
    r.process(samples, &mut out).map_err(failed)?;
    if segment_end {
        r.flush(&mut out).map_err(failed)?;
    }
    Ok(out)
}
