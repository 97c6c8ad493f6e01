//! Audio output: the containers and DSP an episode goes through on its way to a file or an HTTP
//! body.
//!
//! The renderer produces mono f32 at 24 kHz. Before it is written it may be resampled
//! ([`resample`]), measured and normalised to a loudness target ([`loudness`]) and kept under a
//! true-peak ceiling ([`limiter`]). Then one [`AudioSink`] encodes it: [`file_encoder`] for a
//! seekable file (headers are completed at the end: WAV sizes, FLAC totals and MD5, the MP3
//! LAME/Xing frame) or [`stream_encoder`] for a body that can only be appended to (sizes left
//! unknown, bytes flushed as each block is encoded so playback can start at once).
//!
//! Every encoder takes samples in [-1, 1] and writes integers with the same scaling as
//! [`wav::WavWriter`] (×32767 for 16 bits, ×8388607 for 24), so a WAV and a FLAC of the same
//! audio hold the same sample values.

pub mod decode;
pub mod format;
pub mod limiter;
pub mod loudness;
pub mod resample;
pub mod wav;

mod flac;
mod mp3;
mod ogg_opus;
mod sink;
mod wav_sink;

use std::io::{Seek, Write};
use std::path::PathBuf;

pub use format::{Codec, OutputFormat, EPISODE_RATES};
pub use limiter::TruePeakLimiter;
pub use loudness::{gain_for, LoudnessMeter};
pub use resample::Resampler;
pub use wav::{write_wav_file, SampleFormat, WavWriter};

/// One chapter of an episode, in seconds from the start of the audio.
#[derive(Debug, Clone, PartialEq)]
pub struct ChapterMark {
    pub title: String,
    pub start_secs: f64,
    pub end_secs: f64,
}

/// Tags written into the output where the container has a place for them (ID3v2.4 for MP3,
/// a Vorbis comment for FLAC; WAV gets none).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Metadata {
    pub title: Option<String>,
    pub artist: Option<String>,
    pub chapters: Vec<ChapterMark>,
}

/// Why audio could not be encoded, converted or measured.
#[derive(thiserror::Error, Debug)]
pub enum AudioError {
    #[error("writing audio{}: {source}", path.as_ref().map(|p| format!(" to {}", p.display())).unwrap_or_default())]
    Io {
        /// The file, where the writer knows it (a bare `Write` does not).
        path: Option<PathBuf>,
        #[source]
        source: std::io::Error,
    },
    #[error("{format} cannot be written at {rate} Hz{hint}")]
    UnsupportedRate {
        format: &'static str,
        rate: u32,
        hint: &'static str,
    },
    #[error("{format}: unsupported {setting} {value}")]
    UnsupportedSetting {
        format: &'static str,
        setting: &'static str,
        value: u32,
    },
    #[error("{format} encoder failed: {detail}")]
    Encoder {
        format: &'static str,
        detail: String,
    },
    #[error("{format} output too long: {detail}")]
    TooLong {
        format: &'static str,
        detail: &'static str,
    },
    #[error("ID3 tag: {0}")]
    Id3(#[from] id3::Error),
    #[error("resampler {from} Hz -> {to} Hz: {detail}")]
    Resample { from: u32, to: u32, detail: String },
    #[error("loudness meter at {rate} Hz: {source}")]
    Loudness {
        rate: u32,
        #[source]
        source: ebur128::Error,
    },
}

impl From<std::io::Error> for AudioError {
    fn from(source: std::io::Error) -> Self {
        AudioError::Io { path: None, source }
    }
}

impl AudioError {
    /// Names the file an I/O error happened on (the encoders only see a `Write`).
    #[must_use]
    pub fn with_path(self, file: impl Into<PathBuf>) -> Self {
        match self {
            AudioError::Io { path: None, source } => AudioError::Io {
                path: Some(file.into()),
                source,
            },
            other => other,
        }
    }
}

/// Mono f32 samples in [-1, 1] (clip beyond) at the encoder's sample rate.
pub trait AudioSink: Send {
    fn write(&mut self, samples: &[f32]) -> Result<(), AudioError>;
    /// Encodes what is buffered, completes the headers where the writer can seek, and flushes.
    fn finish(self: Box<Self>) -> Result<(), AudioError>;
}

/// A file encoder: the writer may seek (WAV patches its header; FLAC writes STREAMINFO
/// totals/MD5; MP3 writes an ID3v2.4 tag first with TIT2 title, TPE1 artist, one CHAP frame per
/// chapter plus a CTOC table of contents, then the LAME frames, the first one being the LAME/Xing
/// info frame completed at the end).
pub fn file_encoder<W: Write + Seek + Send + 'static>(
    out: W,
    format: OutputFormat,
    sample_rate: u32,
    meta: &Metadata,
) -> Result<Box<dyn AudioSink>, AudioError> {
    let codec = sink::codec_for(format, sample_rate, meta, true)?;
    Ok(Box::new(sink::FileSink::new(out, codec)?))
}

/// A streaming encoder for a non-seekable sink (an HTTP body): WAV with 0xFFFFFFFF sizes, FLAC
/// with unknown total length and MD5, MP3 frames as they come (no LAME/Xing frame, which would
/// need patching). The writer is flushed after every `write` that produced bytes; each block is
/// at most ~100 ms of audio, so output flows from the first 100 ms written.
pub fn stream_encoder<W: Write + Send + 'static>(
    out: W,
    format: OutputFormat,
    sample_rate: u32,
    meta: &Metadata,
) -> Result<Box<dyn AudioSink>, AudioError> {
    let codec = sink::codec_for(format, sample_rate, meta, false)?;
    Ok(Box::new(sink::StreamSink::new(out, codec)?))
}

/// Converts one sample to a signed integer of `bits` bits with the WAV writer's scaling: clipped
/// to [-1, 1], NaN and infinities as silence.
pub(crate) fn quantize(s: f32, bits: u8) -> i32 {
    let s = if s.is_finite() {
        s.clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let full = ((1i64 << (bits - 1)) - 1) as f32;
    (s * full).round() as i32
}

#[cfg(test)]
mod tests;
