//! Response formats: which `response_format` values exist, and a chunk encoder for each one the
//! server can stream today.
//!
//! Streaming rules the encoders follow: bytes go out as soon as a chunk is encoded, so nothing
//! may need the total length up front. `pcm` is raw 24 kHz mono s16le (OpenAI's `pcm`). `wav`
//! is the same samples behind a 44-byte header whose RIFF and data sizes are 0xFFFFFFFF
//! ("unknown, read to the end"), as OpenAI's streamed WAV does. `flac` (16-bit, no total length
//! or MD5 in STREAMINFO) and `mp3` (LAME CBR at [`MP3_KBPS`], no Xing frame) come from the
//! engine's [`stream_encoder`], which flushes every ~100 ms block, so bytes flow while the
//! speech is still being made. `opus` is Ogg Opus at [`OPUS_KBPS`] (RFC 7845, one Ogg page per
//! chunk, so it streams too). `aac` is a clear 400.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use engine::audio::{stream_encoder, AudioError, AudioSink, Codec, Metadata, OutputFormat};
use engine::SAMPLE_RATE;

use super::errors::ApiError;

/// A `response_format`: one of the engine's codecs ([`Codec`], whose names, MIME types and
/// rules are the engine's), or OpenAI's two names that are not files of Banter's: raw `pcm`,
/// which the server streams itself, and `aac`, which it refuses by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AudioFormat {
    Coded(Codec),
    Pcm,
    Aac,
}

impl AudioFormat {
    pub const WAV: Self = Self::Coded(Codec::Wav);
    pub const MP3: Self = Self::Coded(Codec::Mp3);

    pub fn parse(name: &str) -> Result<Self, ApiError> {
        Ok(match name {
            "pcm" => Self::Pcm,
            "aac" => Self::Aac,
            other => Self::Coded(Codec::from_name(other).ok_or_else(|| {
                ApiError::invalid(
                    "response_format",
                    "invalid_response_format",
                    format!("unknown response_format `{other}`; use wav, pcm, flac, mp3 or opus"),
                )
            })?),
        })
    }

    /// OpenAI's default when a request names no format.
    #[must_use]
    pub fn default_for_server() -> Self {
        Self::MP3
    }

    #[must_use]
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Coded(codec) => codec.mime(),
            Self::Pcm => "audio/pcm",
            Self::Aac => "audio/aac",
        }
    }

    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Coded(codec) => codec.name(),
            Self::Pcm => "pcm",
            Self::Aac => "aac",
        }
    }
}

/// MP3 bit rate: 64 kbit/s CBR is transparent enough for 24 kHz mono speech.
pub const MP3_KBPS: u32 = 64;
/// Opus target bit rate: 48 kbit/s VBR is transparent for 24 kHz mono speech.
pub const OPUS_KBPS: u32 = 48;

/// Turns 24 kHz mono f32 chunks into the bytes of one format, chunk by chunk.
pub trait ChunkEncoder: Send {
    /// Bytes for `samples` (may be empty when the encoder buffers).
    fn encode(&mut self, samples: &[f32]) -> Result<Vec<u8>, AudioError>;
    /// Whatever is left at the end of the stream.
    fn finish(&mut self) -> Result<Vec<u8>, AudioError>;
}

/// The encoder for `format`, or a 400 naming the format when Banter cannot produce it.
pub fn encoder_for(format: AudioFormat) -> Result<Box<dyn ChunkEncoder>, ApiError> {
    let engine_format = match format {
        AudioFormat::Pcm => return Ok(Box::new(Pcm16)),
        AudioFormat::Coded(Codec::Wav) => return Ok(Box::new(StreamingWav { header_sent: false })),
        AudioFormat::Coded(Codec::Flac) => OutputFormat::Flac { bits: 16 },
        AudioFormat::Coded(Codec::Mp3) => OutputFormat::Mp3 { kbps: MP3_KBPS },
        AudioFormat::Coded(Codec::Opus) => OutputFormat::Opus { kbps: OPUS_KBPS },
        AudioFormat::Aac => {
            return Err(ApiError::invalid(
                "response_format",
                "unsupported_response_format",
                format!(
                    "response_format `{}` is not supported by Banter; use wav, pcm, flac, mp3 \
                     or opus",
                    format.name()
                ),
            ))
        }
    };
    engine_encoder(engine_format, SAMPLE_RATE, format.name())
}

/// A streaming FLAC, MP3 or Opus encoder for mono `rate` Hz input (the WebSocket endpoints
/// resample first and ask for 44.1 kHz MP3).
pub fn engine_encoder(
    format: OutputFormat,
    rate: u32,
    name: &str,
) -> Result<Box<dyn ChunkEncoder>, ApiError> {
    let tap = Tap::default();
    let sink = stream_encoder(tap.clone(), format, rate, &Metadata::default()).map_err(|e| {
        tracing::error!("{name} encoder: {e}");
        ApiError::internal(format!("the {name} encoder could not start"))
    })?;
    Ok(Box::new(Engine {
        sink: Some(sink),
        tap,
    }))
}

/// The bytes an engine encoder wrote and nobody has taken yet.
#[derive(Clone, Default)]
struct Tap(Arc<Mutex<Vec<u8>>>);

impl Tap {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Write for Tap {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// FLAC or MP3 through `engine::audio::stream_encoder`, writing into a [`Tap`] drained after
/// each chunk (the header comes out with the first chunk's bytes).
struct Engine {
    sink: Option<Box<dyn AudioSink>>,
    tap: Tap,
}

impl ChunkEncoder for Engine {
    fn encode(&mut self, samples: &[f32]) -> Result<Vec<u8>, AudioError> {
        if let Some(sink) = &mut self.sink {
            sink.write(samples)?;
        }
        Ok(self.tap.take())
    }
    fn finish(&mut self) -> Result<Vec<u8>, AudioError> {
        if let Some(sink) = self.sink.take() {
            sink.finish()?;
        }
        Ok(self.tap.take())
    }
}

struct Pcm16;

impl ChunkEncoder for Pcm16 {
    fn encode(&mut self, samples: &[f32]) -> Result<Vec<u8>, AudioError> {
        Ok(s16le(samples))
    }
    fn finish(&mut self) -> Result<Vec<u8>, AudioError> {
        Ok(Vec::new())
    }
}

struct StreamingWav {
    header_sent: bool,
}

impl ChunkEncoder for StreamingWav {
    fn encode(&mut self, samples: &[f32]) -> Result<Vec<u8>, AudioError> {
        let mut out = Vec::with_capacity(44 + samples.len() * 2);
        if !self.header_sent {
            self.header_sent = true;
            out.extend_from_slice(&streaming_wav_header());
        }
        out.extend_from_slice(&s16le(samples));
        Ok(out)
    }
    fn finish(&mut self) -> Result<Vec<u8>, AudioError> {
        // An empty utterance is still a valid (empty) WAV file.
        if self.header_sent {
            Ok(Vec::new())
        } else {
            self.header_sent = true;
            Ok(streaming_wav_header().to_vec())
        }
    }
}

/// A canonical 44-byte PCM WAV header (mono, 16-bit, 24 kHz) with "unknown" sizes.
#[must_use]
pub fn streaming_wav_header() -> [u8; 44] {
    let mut h = [0u8; 44];
    let channels: u16 = 1;
    let bits: u16 = 16;
    let block_align = channels * bits / 8;
    let byte_rate = SAMPLE_RATE * u32::from(block_align);
    h[0..4].copy_from_slice(b"RIFF");
    h[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    h[8..12].copy_from_slice(b"WAVE");
    h[12..16].copy_from_slice(b"fmt ");
    h[16..20].copy_from_slice(&16u32.to_le_bytes());
    h[20..22].copy_from_slice(&1u16.to_le_bytes()); // PCM
    h[22..24].copy_from_slice(&channels.to_le_bytes());
    h[24..28].copy_from_slice(&SAMPLE_RATE.to_le_bytes());
    h[28..32].copy_from_slice(&byte_rate.to_le_bytes());
    h[32..34].copy_from_slice(&block_align.to_le_bytes());
    h[34..36].copy_from_slice(&bits.to_le_bytes());
    h[36..40].copy_from_slice(b"data");
    h[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
    h
}

/// Samples in [-1, 1] as little-endian signed 16-bit (clipped, rounded).
#[must_use]
pub fn s16le(samples: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(samples.len() * 2);
    for &s in samples {
        let s = if s.is_finite() {
            s.clamp(-1.0, 1.0)
        } else {
            0.0
        };
        out.extend_from_slice(&((s * 32767.0).round() as i16).to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wav_header_then_samples_once() {
        let mut enc = encoder_for(AudioFormat::WAV).expect("wav");
        let a = enc.encode(&[0.0, 1.0]).expect("encode");
        let b = enc.encode(&[-1.0, 2.0, f32::NAN]).expect("encode");
        assert_eq!(&a[..4], b"RIFF");
        assert_eq!(&a[4..8], &[0xFF; 4]);
        assert_eq!(u32::from_le_bytes([a[24], a[25], a[26], a[27]]), 24_000);
        assert_eq!(&a[40..44], &[0xFF; 4]);
        assert_eq!(&a[44..], &[0, 0, 0xFF, 0x7F]);
        assert_eq!(b, vec![0x01, 0x80, 0xFF, 0x7F, 0, 0]);
        assert!(enc.finish().expect("finish").is_empty());
    }

    #[test]
    fn empty_wav_is_a_header() {
        let mut enc = encoder_for(AudioFormat::WAV).expect("wav");
        assert_eq!(enc.finish().expect("finish").len(), 44);
    }

    #[test]
    fn pcm_is_raw() {
        let mut enc = encoder_for(AudioFormat::Pcm).expect("pcm");
        assert_eq!(
            enc.encode(&[0.5]).expect("encode"),
            16384i16.to_le_bytes().to_vec()
        );
    }

    #[test]
    fn formats_parse_and_unsupported_ones_say_so() {
        assert!(AudioFormat::parse("ogg").is_err());
        let Err(e) = encoder_for(AudioFormat::parse("aac").expect("known")) else {
            panic!("aac should be unsupported");
        };
        assert_eq!(e.status.as_u16(), 400);
        assert!(e.message.contains("aac"), "{}", e.message);
        assert!(encoder_for(AudioFormat::parse("opus").expect("known")).is_ok());
    }

    /// A second of a 220 Hz tone in 100 ms chunks: bytes come out before `finish`, and the
    /// whole stream decodes (as any client would) to about a second at 24 kHz.
    #[test]
    fn flac_mp3_and_opus_stream_and_decode() {
        let tone: Vec<f32> = (0..24_000)
            .map(|i| 0.3 * (i as f32 * 220.0 * std::f32::consts::TAU / 24_000.0).sin())
            .collect();
        for (format, ext, magic) in [
            (
                AudioFormat::Coded(engine::audio::Codec::Flac),
                "flac",
                &b"fLaC"[..],
            ),
            (AudioFormat::MP3, "mp3", &b"ID3"[..]),
            (
                AudioFormat::Coded(engine::audio::Codec::Opus),
                "opus",
                &b"OggS"[..],
            ),
        ] {
            let mut enc = encoder_for(format).expect("encoder");
            let mut bytes = Vec::new();
            let mut early = 0;
            for (k, chunk) in tone.chunks(2400).enumerate() {
                bytes.extend(enc.encode(chunk).expect("encode"));
                if k == 1 {
                    early = bytes.len();
                }
            }
            let before_finish = bytes.len();
            bytes.extend(enc.finish().expect("finish"));
            assert!(early > 0, "{ext}: nothing after 200 ms");
            assert!(
                before_finish * 10 > bytes.len() * 8,
                "{ext}: {before_finish} of {} bytes before finish",
                bytes.len()
            );
            let starts = bytes.starts_with(magic) || (ext == "mp3" && bytes[0] == 0xFF);
            assert!(starts, "{ext}: starts with {:?}", &bytes[..4]);
            let decoded = engine::audio::decode::decode_bytes(
                bytes,
                std::path::Path::new(&format!("t.{ext}")),
                &engine::audio::decode::DecodeOptions {
                    target_rate: Some(24_000),
                    max_secs: None,
                },
            )
            .expect("decodes");
            assert_eq!(decoded.sample_rate, 24_000, "{ext}");
            let secs = decoded.duration_secs();
            assert!((0.95..1.15).contains(&secs), "{ext}: {secs} s");
        }
        assert_eq!(AudioFormat::default_for_server(), AudioFormat::MP3);
    }
}
