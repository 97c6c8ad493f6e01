//! Decoding audio clips someone hands us (a reference recording for the voice library, our own
//! renders) into mono `f32` at a chosen rate.
//!
//! Containers and codecs: WAV (PCM and float), FLAC, MP3 and Ogg Vorbis through symphonia, and
//! Ogg Opus through libopus ([`ogg_opus`]).
//! Every channel is averaged into one (mono, stereo, 5.1, 7.1… alike), then the whole clip is
//! resampled at once with rubato's FFT resampler (an offline conversion: the clip is short and
//! already in memory, so there is no streaming state to keep).
//!
//! The input is untrusted, so nothing here panics on any bytes: each failure is a typed
//! [`DecodeError`] naming the file, a stream that breaks off part-way keeps what decoded
//! when that is at least [`MIN_DAMAGED_SECS`] long (and says so in
//! [`DecodedAudio::damaged`]), and `max_secs` bounds the work and memory for long files.
//! symphonia is fuzzed upstream, but as a last line of defence a panic inside it is caught (by
//! [`crate::panic_guard::catch`], so the app's panic hook lets it unwind here) and reported as a
//! corrupt stream.

use std::io::{Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Fft, FixedSync, Resampler};
use symphonia::core::codecs::audio::AudioDecoderOptions;
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, TrackType};
use symphonia::core::io::{MediaSource, MediaSourceStream};
use symphonia::core::meta::MetadataOptions;

/// A stream that breaks off is still accepted when at least this much decoded before.
pub const MIN_DAMAGED_SECS: f64 = 0.25;
/// Sample rates outside this range are refused (a corrupt header, not audio we can use).
pub const RATE_RANGE: std::ops::RangeInclusive<u32> = 1_000..=1_536_000;

/// What to decode.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DecodeOptions {
    /// Resample to this rate (Hz); `None` keeps the source rate.
    pub target_rate: Option<u32>,
    /// Decode at most this many seconds from the start; `None` decodes everything.
    pub max_secs: Option<f64>,
}

/// A decoded clip: mono samples at `sample_rate`.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedAudio {
    pub samples: Vec<f32>,
    pub sample_rate: u32,
    /// The source's rate and channel count.
    pub source_rate: u32,
    pub source_channels: usize,
    /// True when `max_secs` cut the clip short.
    pub truncated: bool,
    /// Set when the stream broke off or had bad packets; what decoded before is kept.
    pub damaged: Option<String>,
}

impl DecodedAudio {
    /// Length in seconds.
    #[must_use]
    pub fn duration_secs(&self) -> f64 {
        self.samples.len() as f64 / f64::from(self.sample_rate.max(1))
    }
}

/// Why a clip could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("cannot read {}: {source}", file.display())]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not an audio file Banter can read (WAV, FLAC, MP3, M4A/AAC, ALAC, AIFF, Ogg Vorbis, Ogg Opus): {detail}", file.display())]
    NotAudio { file: PathBuf, detail: String },
    #[error("{} uses a codec Banter cannot decode: {detail}", file.display())]
    UnsupportedCodec { file: PathBuf, detail: String },
    #[error("{} has an unusable sample rate ({rate} Hz)", file.display())]
    UnsupportedRate { file: PathBuf, rate: u32 },
    #[error("{} holds no audio", file.display())]
    Empty { file: PathBuf },
    #[error("{} is corrupt: {detail} (only {decoded_secs:.2} s decoded before it)", file.display())]
    Corrupt {
        file: PathBuf,
        detail: String,
        decoded_secs: f64,
    },
    #[error("resampling {} from {from} Hz to {to} Hz failed: {detail}", file.display())]
    Resample {
        file: PathBuf,
        from: u32,
        to: u32,
        detail: String,
    },
}

/// Decodes the file at `path` (its extension is a hint, not trusted).
pub fn decode_file(path: &Path, options: &DecodeOptions) -> Result<DecodedAudio, DecodeError> {
    let file = fs_err::File::open(path).map_err(|source| DecodeError::Io {
        file: path.to_owned(),
        source,
    })?;
    let ext = path.extension().and_then(|e| e.to_str());
    decode_source(Box::new(file.into_parts().0), path, ext, options)
}

/// Decodes an in-memory clip; `name` labels it in errors, its extension is a hint.
pub fn decode_bytes(
    bytes: Vec<u8>,
    name: &Path,
    options: &DecodeOptions,
) -> Result<DecodedAudio, DecodeError> {
    let ext = name.extension().and_then(|e| e.to_str());
    decode_source(Box::new(Cursor::new(bytes)), name, ext, options)
}

fn decode_source(
    mut source: Box<dyn MediaSource>,
    name: &Path,
    ext: Option<&str>,
    options: &DecodeOptions,
) -> Result<DecodedAudio, DecodeError> {
    let io = |source| DecodeError::Io {
        file: name.to_owned(),
        source,
    };
    let mut head = Vec::with_capacity(64);
    (&mut source).take(64).read_to_end(&mut head).map_err(io)?;
    source.seek(SeekFrom::Start(0)).map_err(io)?;
    let opus = ogg_opus::sniff(&head);
    let run = std::panic::AssertUnwindSafe(|| {
        if opus {
            ogg_opus::decode(source, name, options)
        } else {
            decode_mono(source, name, ext, options)
        }
    });
    let decoded = crate::panic_guard::catch(run).unwrap_or_else(|_| {
        Err(DecodeError::Corrupt {
            file: name.to_owned(),
            detail: "the decoder gave up on malformed data".to_owned(),
            decoded_secs: 0.0,
        })
    })?;
    match options.target_rate {
        Some(to) if to != decoded.sample_rate => resample(decoded, to, name),
        _ => Ok(decoded),
    }
}

/// Demuxes and decodes the default audio track to mono at the source rate.
fn decode_mono(
    source: Box<dyn MediaSource>,
    name: &Path,
    ext: Option<&str>,
    options: &DecodeOptions,
) -> Result<DecodedAudio, DecodeError> {
    let file = || name.to_owned();
    let mut hint = Hint::new();
    if let Some(ext) = ext {
        hint.with_extension(ext);
    }
    let mss = MediaSourceStream::new(
        source,
        symphonia::core::io::MediaSourceStreamOptions::default(),
    );
    let mut format = symphonia::default::get_probe()
        .probe(
            &hint,
            mss,
            FormatOptions::default(),
            MetadataOptions::default(),
        )
        .map_err(|e| match e {
            SymphoniaError::IoError(source)
                if source.kind() != std::io::ErrorKind::UnexpectedEof =>
            {
                DecodeError::Io {
                    file: file(),
                    source,
                }
            }
            other => DecodeError::NotAudio {
                file: file(),
                detail: other.to_string(),
            },
        })?;
    let track = format
        .default_track(TrackType::Audio)
        .ok_or_else(|| DecodeError::NotAudio {
            file: file(),
            detail: "no audio track".to_owned(),
        })?;
    let track_id = track.id;
    let expected_frames = track.num_frames;
    let params = track
        .codec_params
        .as_ref()
        .and_then(|p| p.audio())
        .ok_or_else(|| DecodeError::UnsupportedCodec {
            file: file(),
            detail: "the track has no audio codec parameters".to_owned(),
        })?
        .clone();
    let mut decoder = symphonia::default::get_codecs()
        .make_audio_decoder(&params, &AudioDecoderOptions::default())
        .map_err(|e| DecodeError::UnsupportedCodec {
            file: file(),
            detail: e.to_string(),
        })?;

    let mut rate = params.sample_rate.unwrap_or(0);
    let mut channels = params
        .channels
        .as_ref()
        .map_or(0, symphonia::core::audio::Channels::count);
    let mut mono: Vec<f32> = Vec::new();
    let mut interleaved: Vec<f32> = Vec::new();
    let mut damaged: Option<String> = None;
    let mut truncated = false;
    let limit = |rate: u32| {
        options.max_secs.map(|s| {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // clamped >= 0
            let frames = (s.max(0.0) * f64::from(rate)).ceil() as usize;
            frames
        })
    };
    loop {
        let packet = match format.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) => {
                damaged = Some(e.to_string());
                break;
            }
        };
        if packet.track_id != track_id {
            continue;
        }
        if limit(rate).is_some_and(|max| rate > 0 && mono.len() >= max) {
            // Audio follows the limit: the clip was cut.
            truncated = true;
            break;
        }
        let buf = match decoder.decode(&packet) {
            Ok(buf) => buf,
            Err(SymphoniaError::DecodeError(e)) => {
                damaged.get_or_insert_with(|| format!("bad packet: {e}"));
                continue;
            }
            Err(e) => {
                damaged = Some(e.to_string());
                break;
            }
        };
        let spec = buf.spec();
        rate = spec.rate();
        channels = spec.channels().count();
        if !RATE_RANGE.contains(&rate) {
            return Err(DecodeError::UnsupportedRate { file: file(), rate });
        }
        if channels == 0 {
            return Err(DecodeError::UnsupportedCodec {
                file: file(),
                detail: "a stream with no channels".to_owned(),
            });
        }
        buf.copy_to_vec_interleaved(&mut interleaved);
        downmix_into(&interleaved, channels, &mut mono);
        if let Some(max) = limit(rate) {
            if mono.len() > max {
                mono.truncate(max);
                truncated = true;
                break;
            }
        }
    }

    if !truncated && damaged.is_none() {
        if let Some(expected) = expected_frames {
            if (mono.len() as u64) < expected {
                damaged = Some(format!(
                    "the stream ends after {} of {expected} frames",
                    mono.len()
                ));
            }
        }
    }
    let secs = mono.len() as f64 / f64::from(rate.max(1));
    if let Some(detail) = &damaged {
        if secs < MIN_DAMAGED_SECS {
            return Err(DecodeError::Corrupt {
                file: file(),
                detail: detail.clone(),
                decoded_secs: secs,
            });
        }
    }
    if mono.is_empty() {
        return Err(DecodeError::Empty { file: file() });
    }
    if !RATE_RANGE.contains(&rate) {
        return Err(DecodeError::UnsupportedRate { file: file(), rate });
    }
    Ok(DecodedAudio {
        samples: mono,
        sample_rate: rate,
        source_rate: rate,
        source_channels: channels,
        truncated,
        damaged,
    })
}

/// Appends the average of each frame's `channels` samples to `mono`.
fn downmix_into(interleaved: &[f32], channels: usize, mono: &mut Vec<f32>) {
    if channels == 1 {
        mono.extend_from_slice(interleaved);
        return;
    }
    #[allow(clippy::cast_precision_loss)] // a channel count
    let scale = 1.0 / channels as f32;
    mono.extend(
        interleaved
            .chunks_exact(channels)
            .map(|frame| frame.iter().sum::<f32>() * scale),
    );
}

/// Resamples the whole clip to `to` Hz.
fn resample(mut clip: DecodedAudio, to: u32, name: &Path) -> Result<DecodedAudio, DecodeError> {
    let from = clip.sample_rate;
    let err = |detail: String| DecodeError::Resample {
        file: name.to_owned(),
        from,
        to,
        detail,
    };
    if !RATE_RANGE.contains(&to) {
        return Err(err("the target rate is out of range".to_owned()));
    }
    let frames = clip.samples.len();
    let mut resampler = Fft::<f32>::new(from as usize, to as usize, 1024, 1, FixedSync::Input)
        .map_err(|e| err(e.to_string()))?;
    let input = InterleavedSlice::new(&clip.samples, 1, frames).map_err(|e| err(e.to_string()))?;
    let out = resampler
        .process_all(&input, frames, None)
        .map_err(|e| err(e.to_string()))?;
    clip.samples = out.take_data();
    clip.sample_rate = to;
    Ok(clip)
}

mod ogg_opus;
pub mod stream;

pub use stream::ClipStream;

#[cfg(test)]
mod tests;
