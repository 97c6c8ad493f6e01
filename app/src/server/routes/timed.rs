//! `POST /v1/audio/speech/timed`: the speech request's body, answered with one JSON holding the
//! whole file and when each word is spoken in it, for clients that want captions or karaoke
//! highlighting without reading a stream (the shape Kokoro-FastAPI's captioned speech made
//! familiar, in Banter's words).
//!
//! ```json
//! {"audio": "<base64 of the file in response_format>", "format": "mp3", "sample_rate": 24000,
//!  "duration": 2.35,
//!  "words": [{"word": "It", "start": 0.1, "end": 0.2, "source_line": 1, "source_column": 1}]}
//! ```
//!
//! Times are seconds from the file's first sample, the same for every format; `source_line`
//! and `source_column` (1-based, columns in characters) say where the word is in `input`. A word
//! the normaliser reads as several (`$4.1 billion`) is one entry, spelled as written. The audio
//! is the same samples `/v1/audio/speech` streams for the same body; a WAV here has its real
//! sizes in the header (the streamed one cannot). `stream_format: "sse"` is a 400: this route
//! does not stream. Auth, limits and errors are the speech route's.

use std::sync::atomic::Ordering;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::speech::{
    add_notes, backend_error, job_slot, read_body, speed_note, start_job, SpeechParams,
};
use crate::server::backend::{AudioEvent, BackendError, SpeechJob};
use crate::server::errors::ApiError;
use crate::server::format::{AudioFormat, ChunkEncoder};
use crate::server::{sse, AppState};

pub async fn timed(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    let started = Instant::now();
    let (body, _busy) = read_body(&state, request).await?;
    let mut params = SpeechParams::parse(&body, state.limits.max_input_chars)?;
    if params.sse {
        return Err(ApiError::invalid(
            "stream_format",
            "invalid_stream_format",
            "/v1/audio/speech/timed answers one JSON; for events with words use \
             /v1/audio/speech with stream_format sse",
        ));
    }
    params.job.words = true;
    let Collected {
        mut audio,
        words,
        samples,
    } = collect(&state, params.job, params.encoder.as_mut(), started).await?;
    if params.format == AudioFormat::WAV {
        set_wav_sizes(&mut audio);
    }
    let rate = engine::SAMPLE_RATE;
    let answer = serde_json::json!({
        "audio": sse::base64(&audio),
        "format": params.format.name(),
        "sample_rate": rate,
        "duration": samples as f64 / f64::from(rate),
        "words": words,
    });
    let mut response = json_answer(&state, &answer, audio.len(), params.clamped_from);
    add_notes(&mut response, &params.language_notes);
    Ok(response)
}

/// A whole speech answer as JSON (`audio_bytes` of audio in it, counted as sent), not cached,
/// with `x-banter-speed` when the speed was clamped from `clamped_from`.
pub(crate) fn json_answer(
    state: &AppState,
    answer: &serde_json::Value,
    audio_bytes: usize,
    clamped_from: Option<f32>,
) -> Response {
    state
        .metrics
        .bytes_sent
        .fetch_add(audio_bytes as u64, Ordering::Relaxed);
    let mut response = Json(answer).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(note) = clamped_from.and_then(speed_note) {
        headers.insert("x-banter-speed", note);
    }
    response
}

/// A speech job's whole answer: the encoded file, its words and its length in samples.
pub(crate) struct Collected {
    pub audio: Vec<u8>,
    pub words: Vec<engine::words::TimedWord>,
    pub samples: usize,
}

/// Runs `job` to its end, encoding its audio with `encoder` (finished) and keeping its words.
pub(crate) async fn collect(
    state: &AppState,
    job: SpeechJob,
    encoder: &mut dyn ChunkEncoder,
    started: Instant,
) -> Result<Collected, ApiError> {
    let _slot = job_slot(state)?;
    let mut waiting = Some(state.metrics.queue_depth.enter());
    let mut events = start_job(state, job).await?;
    let _active = state.metrics.active_streams.enter();
    let (mut audio, mut words, mut samples) = (Vec::new(), Vec::new(), 0usize);
    let encoding = |e: engine::audio::AudioError| {
        tracing::error!("encoding whole speech: {e}");
        ApiError::internal("encoding the audio failed; the server log has details")
    };
    loop {
        match events.recv().await {
            Some(AudioEvent::Chunk {
                samples: chunk,
                words: timed,
            }) => {
                if waiting.take().is_some() {
                    state.metrics.record_ttfa(started.elapsed());
                }
                samples += chunk.len();
                words.extend(timed);
                audio.extend(encoder.encode(&chunk).map_err(encoding)?);
            }
            Some(AudioEvent::Done) => break,
            Some(AudioEvent::Failed(e)) => return Err(backend_error(e)),
            None => return Err(backend_error(BackendError::Stopped)),
        }
    }
    audio.extend(encoder.finish().map_err(encoding)?);
    Ok(Collected {
        audio,
        words,
        samples,
    })
}

/// Writes the RIFF and data sizes into a streamed WAV's header (the stream sends 0xFFFFFFFF,
/// "read to the end"; a whole file can say its length).
fn set_wav_sizes(wav: &mut [u8]) {
    let (Ok(riff), Ok(data)) = (
        u32::try_from(wav.len().saturating_sub(8)),
        u32::try_from(wav.len().saturating_sub(44)),
    ) else {
        return; // over 4 GiB: keep "unknown"
    };
    if wav.len() >= 44 && &wav[36..40] == b"data" {
        wav[4..8].copy_from_slice(&riff.to_le_bytes());
        wav[40..44].copy_from_slice(&data.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::format::{encoder_for, streaming_wav_header};

    #[test]
    fn a_whole_wav_says_its_sizes() {
        let mut encoder = encoder_for(AudioFormat::WAV).expect("wav");
        let mut wav = encoder.encode(&[0.5; 10]).expect("encode");
        wav.extend(encoder.finish().expect("finish"));
        assert_eq!(wav[..44], streaming_wav_header());
        set_wav_sizes(&mut wav);
        assert_eq!(wav[4..8], (36u32 + 20).to_le_bytes());
        assert_eq!(wav[40..44], 20u32.to_le_bytes());
        assert_eq!(wav[8..40], streaming_wav_header()[8..40]);
    }
}
