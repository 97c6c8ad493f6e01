//! Decoding a clip a block at a time, resampled as it goes: for sound a mix plays rather than
//! analyses, where the file may be as long as the episode (a 90-minute music bed) and holding
//! it whole, as [`super::decode_file`] does, would cost gigabytes.
//!
//! [`ClipStream`] demuxes and decodes one packet at a time (symphonia, or libopus for Ogg
//! Opus), averages the channels, and feeds a streaming [`Resampler`] to the mix's rate, so
//! memory is a packet and a resampler block whatever the length. A looping stream (a bed)
//! reopens the file at its end and keeps feeding the same resampler, so the seam is the file's
//! own last and first samples. Every failure is a [`DecodeError`] naming the file; a packet
//! that does not decode is skipped and the stream says so in [`ClipStream::damaged`]; a panic
//! inside a decoder is caught ([`crate::panic_guard::catch`]) and becomes a corrupt stream.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use symphonia::core::codecs::audio::{AudioDecoder, AudioDecoderOptions};
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, FormatReader, TrackType};
use symphonia::core::io::{MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::MetadataOptions;

use super::{downmix_into, ogg_opus, DecodeError, RATE_RANGE};
use crate::audio::Resampler;

/// A clip decoded a block at a time to mono at a chosen rate.
pub struct ClipStream {
    path: PathBuf,
    rate: u32,
    looping: bool,
    packets: Packets,
    resampler: Option<Resampler>,
    /// Decoded samples at the source rate, and resampled ones waiting to be read.
    mono: Vec<f32>,
    ready: Vec<f32>,
    taken: usize,
    /// Samples this pass over the file gave (to stop a looping file that gives none).
    this_pass: u64,
    ended: bool,
    damaged: Option<String>,
}

impl ClipStream {
    /// Opens `path` to be read as mono at `rate` Hz; fails when the file cannot be read or is
    /// not audio Banter decodes.
    pub fn open(path: &Path, rate: u32) -> Result<Self, DecodeError> {
        let packets = Packets::open(path)?;
        let from = packets.rate();
        let resampler = (from != rate)
            .then(|| Resampler::new(from, rate))
            .transpose()
            .map_err(|e| DecodeError::Resample {
                file: path.to_owned(),
                from,
                to: rate,
                detail: e.to_string(),
            })?;
        Ok(Self {
            path: path.to_owned(),
            rate,
            looping: false,
            packets,
            resampler,
            mono: Vec::new(),
            ready: Vec::new(),
            taken: 0,
            this_pass: 0,
            ended: false,
            damaged: None,
        })
    }

    /// Starts the file again at its end, for ever (a bed); the reader decides when to stop.
    #[must_use]
    pub fn looping(mut self, looping: bool) -> Self {
        self.looping = looping;
        self
    }

    /// The rate the file is decoded at, before resampling.
    #[must_use]
    pub fn source_rate(&self) -> u32 {
        self.packets.rate()
    }

    /// Set once a packet failed to decode or the stream broke off (what decoded is kept).
    #[must_use]
    pub fn damaged(&self) -> Option<&str> {
        self.damaged.as_deref()
    }

    /// Appends up to `max` samples at the stream's rate to `out` and returns how many; 0 once
    /// the clip has ended (never, while looping, unless the file holds no audio).
    pub fn read(&mut self, out: &mut Vec<f32>, max: usize) -> Result<usize, DecodeError> {
        while self.ready.len() - self.taken < max && !self.ended {
            self.refill()?;
        }
        let n = (self.ready.len() - self.taken).min(max);
        out.extend_from_slice(&self.ready[self.taken..self.taken + n]);
        self.taken += n;
        // What is left (less than a packet) moves to the front, so the buffer never grows.
        self.ready.drain(..self.taken);
        self.taken = 0;
        Ok(n)
    }

    /// Samples decoded and not yet read: at most a read and a packet.
    #[must_use]
    pub fn buffered(&self) -> usize {
        self.ready.len() - self.taken
    }

    /// Decodes one more packet (or ends the pass) into `ready`.
    fn refill(&mut self) -> Result<(), DecodeError> {
        self.mono.clear();
        let more = self
            .packets
            .next(&mut self.mono, &self.path, &mut self.damaged)?;
        self.this_pass += self.mono.len() as u64;
        self.resample()?;
        if more {
            return Ok(());
        }
        if self.looping && self.this_pass > 0 {
            self.packets = Packets::open(&self.path)?;
            self.this_pass = 0;
            return Ok(());
        }
        if let Some(r) = self.resampler.as_mut() {
            r.flush(&mut self.ready)
                .map_err(|e| self.resample_error(&e))?;
        }
        self.ended = true;
        Ok(())
    }

    fn resample(&mut self) -> Result<(), DecodeError> {
        if let Some(r) = self.resampler.as_mut() {
            return r
                .process(&self.mono, &mut self.ready)
                .map_err(|e| self.resample_error(&e));
        }
        self.ready.extend_from_slice(&self.mono);
        Ok(())
    }

    fn resample_error(&self, e: &crate::audio::AudioError) -> DecodeError {
        DecodeError::Resample {
            file: self.path.clone(),
            from: self.packets.rate(),
            to: self.rate,
            detail: e.to_string(),
        }
    }
}

/// One pass over a file's packets.
enum Packets {
    Symphonia(Box<SymphoniaPackets>),
    Opus(Box<ogg_opus::OpusPackets<std::fs::File>>),
}

struct SymphoniaPackets {
    format: Box<dyn FormatReader>,
    decoder: Box<dyn AudioDecoder>,
    track: u32,
    rate: u32,
    interleaved: Vec<f32>,
}

impl Packets {
    fn open(path: &Path) -> Result<Self, DecodeError> {
        let io = |source| DecodeError::Io {
            file: path.to_owned(),
            source,
        };
        let mut file = fs_err::File::open(path).map_err(io)?.into_parts().0;
        let mut head = Vec::with_capacity(64);
        (&mut file).take(64).read_to_end(&mut head).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        let opened = crate::panic_guard::catch(std::panic::AssertUnwindSafe(|| {
            if ogg_opus::sniff(&head) {
                ogg_opus::OpusPackets::new(file, path).map(|p| Self::Opus(Box::new(p)))
            } else {
                SymphoniaPackets::open(file, path).map(|p| Self::Symphonia(Box::new(p)))
            }
        }));
        opened.unwrap_or_else(|_| Err(gave_up(path)))
    }

    fn rate(&self) -> u32 {
        match self {
            Self::Symphonia(p) => p.rate,
            Self::Opus(_) => ogg_opus::RATE,
        }
    }

    /// Appends one packet's mono samples to `mono`; `false` at the end of the file.
    fn next(
        &mut self,
        mono: &mut Vec<f32>,
        path: &Path,
        damaged: &mut Option<String>,
    ) -> Result<bool, DecodeError> {
        let step = crate::panic_guard::catch(std::panic::AssertUnwindSafe(|| match self {
            Self::Symphonia(p) => p.next(mono, path, damaged),
            Self::Opus(p) => Ok(p.next(mono, damaged)),
        }));
        step.unwrap_or_else(|_| Err(gave_up(path)))
    }
}

fn gave_up(path: &Path) -> DecodeError {
    DecodeError::Corrupt {
        file: path.to_owned(),
        detail: "the decoder gave up on malformed data".to_owned(),
        decoded_secs: 0.0,
    }
}

impl SymphoniaPackets {
    fn open(file: std::fs::File, path: &Path) -> Result<Self, DecodeError> {
        let name = || path.to_owned();
        let mut hint = Hint::new();
        if let Some(ext) = path.extension().and_then(|e| e.to_str()) {
            hint.with_extension(ext);
        }
        let mss = MediaSourceStream::new(Box::new(file), MediaSourceStreamOptions::default());
        let format = symphonia::default::get_probe()
            .probe(
                &hint,
                mss,
                FormatOptions::default(),
                MetadataOptions::default(),
            )
            .map_err(|e| DecodeError::NotAudio {
                file: name(),
                detail: e.to_string(),
            })?;
        let track =
            format
                .default_track(TrackType::Audio)
                .ok_or_else(|| DecodeError::NotAudio {
                    file: name(),
                    detail: "no audio track".to_owned(),
                })?;
        let id = track.id;
        let params = track
            .codec_params
            .as_ref()
            .and_then(|p| p.audio())
            .ok_or_else(|| DecodeError::UnsupportedCodec {
                file: name(),
                detail: "the track has no audio codec parameters".to_owned(),
            })?
            .clone();
        let rate = params.sample_rate.unwrap_or(0);
        if !RATE_RANGE.contains(&rate) {
            return Err(DecodeError::UnsupportedRate { file: name(), rate });
        }
        let decoder = symphonia::default::get_codecs()
            .make_audio_decoder(&params, &AudioDecoderOptions::default())
            .map_err(|e| DecodeError::UnsupportedCodec {
                file: name(),
                detail: e.to_string(),
            })?;
        Ok(Self {
            format,
            decoder,
            track: id,
            rate,
            interleaved: Vec::new(),
        })
    }

    fn next(
        &mut self,
        mono: &mut Vec<f32>,
        path: &Path,
        damaged: &mut Option<String>,
    ) -> Result<bool, DecodeError> {
        loop {
            let packet = match self.format.next_packet() {
                Ok(Some(p)) => p,
                Ok(None) => return Ok(false),
                Err(e) => {
                    damaged.get_or_insert_with(|| e.to_string());
                    return Ok(false);
                }
            };
            if packet.track_id != self.track {
                continue;
            }
            let buf = match self.decoder.decode(&packet) {
                Ok(buf) => buf,
                Err(SymphoniaError::DecodeError(e)) => {
                    damaged.get_or_insert_with(|| format!("bad packet: {e}"));
                    continue;
                }
                Err(e) => {
                    damaged.get_or_insert_with(|| e.to_string());
                    return Ok(false);
                }
            };
            let spec = buf.spec();
            let channels = spec.channels().count();
            if spec.rate() != self.rate {
                // A rate change inside a file: the resampler was built for the first.
                return Err(DecodeError::UnsupportedRate {
                    file: path.to_owned(),
                    rate: spec.rate(),
                });
            }
            if channels == 0 {
                return Err(DecodeError::UnsupportedCodec {
                    file: path.to_owned(),
                    detail: "a stream with no channels".to_owned(),
                });
            }
            buf.copy_to_vec_interleaved(&mut self.interleaved);
            downmix_into(&self.interleaved, channels, mono);
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::wav::{write_wav_file, SampleFormat};

    fn tone(secs: f32, rate: u32) -> Vec<f32> {
        let n = (secs * rate as f32) as usize;
        (0..n)
            .map(|i| 0.5 * (i as f32 * 440.0 * std::f32::consts::TAU / rate as f32).sin())
            .collect()
    }

    #[test]
    fn reads_in_blocks_no_larger_than_asked_and_resamples_the_whole_length() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("a.wav");
        write_wav_file(&path, &tone(1.5, 44_100), 44_100, SampleFormat::Pcm16).expect("wav");
        let mut clip = ClipStream::open(&path, 24_000).expect("opens");
        assert_eq!(clip.source_rate(), 44_100);
        let (mut out, mut reads) = (Vec::new(), 0);
        loop {
            let before = out.len();
            let n = clip.read(&mut out, 1000).expect("reads");
            assert_eq!(out.len() - before, n);
            assert!(n <= 1000);
            if n == 0 {
                break;
            }
            reads += 1;
        }
        assert_eq!(out.len(), 36_000, "1.5 s at 24 kHz");
        assert!(reads >= 36, "{reads} reads");
        assert!(clip.damaged().is_none());
    }

    #[test]
    fn memory_stays_a_block_and_a_packet_however_long_it_plays() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("loop.wav");
        write_wav_file(&path, &tone(0.5, 44_100), 44_100, SampleFormat::Pcm16).expect("wav");
        let mut clip = ClipStream::open(&path, 24_000)
            .expect("opens")
            .looping(true);
        let mut out = Vec::with_capacity(16_384);
        let mut most = 0;
        // Ten minutes, as a mix reads a bed: a block at a time.
        for _ in 0..(600 * 24_000 / 16_384) {
            out.clear();
            assert_eq!(clip.read(&mut out, 16_384).expect("reads"), 16_384);
            assert!(
                clip.buffered() < 16_384 + 4096,
                "{} waiting",
                clip.buffered()
            );
            most = most.max(clip.ready.capacity());
        }
        assert!(most < 3 * 16_384, "{most} samples of room held");
    }

    #[test]
    fn a_looping_clip_starts_again_and_never_ends() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("loop.wav");
        write_wav_file(&path, &tone(0.1, 24_000), 24_000, SampleFormat::Float32).expect("wav");
        let mut clip = ClipStream::open(&path, 24_000)
            .expect("opens")
            .looping(true);
        let mut out = Vec::new();
        for _ in 0..50 {
            assert_eq!(clip.read(&mut out, 480).expect("reads"), 480);
        }
        // Ten passes of 2400 samples, sample for sample.
        assert_eq!(out.len(), 24_000);
        assert!(out[..2400]
            .iter()
            .zip(&out[2400 * 7..2400 * 8])
            .all(|(a, b)| (a - b).abs() < 1e-6));
    }

    #[test]
    fn what_is_not_audio_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("notes.wav");
        std::fs::write(&path, b"these are not the samples you are looking for").expect("write");
        let Err(e) = ClipStream::open(&path, 24_000) else {
            panic!("text decoded as audio");
        };
        assert!(e.to_string().contains("notes.wav"), "{e}");
        let Err(e) = ClipStream::open(&dir.path().join("missing.wav"), 24_000) else {
            panic!("a missing file opened");
        };
        assert!(matches!(e, DecodeError::Io { .. }), "{e}");
    }
}
