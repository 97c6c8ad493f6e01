//! MP3 as an [`AudioSink`](super::AudioSink) codec: LAME (CBR, mono) behind an ID3v2.4 tag.
//!
//! The tag comes first and carries what podcast players show: TIT2 title, TPE1 artist, one CHAP
//! frame per chapter (times in ms, each with its own TIT2) and a top-level ordered CTOC listing
//! them. LAME's own ID3 support has no chapters, so the tag is built with the `id3` crate.
//!
//! For a file LAME is asked for its LAME/Xing info frame: it reserves the first frame while
//! encoding and we overwrite it on finish with the real one, which carries the frame count and
//! the encoder delay/padding that gapless decoders trim. A stream has no such frame (it could not
//! be patched; a blank one would be decoded as an extra frame of silence by some players).
//!
//! LAME scales the input by 0.95 (-0.45 dB) at 160 kbit/s and below (its ABR/CBR presets), so
//! that decoders' overshoot does not clip; the decoded level is that much under the WAV/FLAC one.
//! We keep that: it is what every LAME-made podcast does, and it protects a -1 dBTP master.
//!
//! The sample rate must be one MP3 can carry (MPEG-1/2/2.5 rates); LAME would otherwise resample
//! silently, and the renderer should make that choice explicitly with its own resampler.

use std::num::NonZeroU32;

use id3::frame::{Chapter, Frame, TableOfContents};
use id3::{Tag, TagLike, Version};
use mp3lame_encoder::{Bitrate, Builder, Encoder, FlushGap, Mode, MonoPcm, Quality, VbrMode};

use super::sink::Codec;
use super::{AudioError, Metadata};

const FORMAT: &str = "MP3";
const RATES: [u32; 9] = [
    8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000,
];
/// Samples handed to LAME per call, so its output buffer stays small.
const CHUNK: usize = 4608;

pub(crate) struct Mp3Codec {
    encoder: Encoder,
    tag: Vec<u8>,
    scratch: Vec<f32>,
}

fn enc_err(e: &impl std::fmt::Display) -> AudioError {
    AudioError::Encoder {
        format: FORMAT,
        detail: e.to_string(),
    }
}

fn bitrate(kbps: u32) -> Option<Bitrate> {
    Some(match kbps {
        8 => Bitrate::Kbps8,
        16 => Bitrate::Kbps16,
        24 => Bitrate::Kbps24,
        32 => Bitrate::Kbps32,
        40 => Bitrate::Kbps40,
        48 => Bitrate::Kbps48,
        64 => Bitrate::Kbps64,
        80 => Bitrate::Kbps80,
        96 => Bitrate::Kbps96,
        112 => Bitrate::Kbps112,
        128 => Bitrate::Kbps128,
        160 => Bitrate::Kbps160,
        192 => Bitrate::Kbps192,
        224 => Bitrate::Kbps224,
        256 => Bitrate::Kbps256,
        320 => Bitrate::Kbps320,
        _ => return None,
    })
}

impl Mp3Codec {
    pub(crate) fn new(
        sample_rate: u32,
        kbps: u32,
        meta: &Metadata,
        seekable: bool,
    ) -> Result<Self, AudioError> {
        if !RATES.contains(&sample_rate) {
            return Err(AudioError::UnsupportedRate {
                format: FORMAT,
                rate: sample_rate,
                hint: " (MP3 rates: 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)",
            });
        }
        let unsupported = AudioError::UnsupportedSetting {
            format: FORMAT,
            setting: "bit rate (kbit/s) at this sample rate",
            value: kbps,
        };
        // MPEG-2/2.5 (below 32 kHz) tops out at 160 kbit/s, MPEG-1 starts at 32; LAME would
        // silently pick another rate instead of failing.
        let fits = if sample_rate < 32_000 {
            kbps <= 160
        } else {
            kbps >= 32
        };
        let rate = bitrate(kbps).filter(|_| fits).ok_or(unsupported)?;
        let mut b = Builder::new().ok_or(AudioError::Encoder {
            format: FORMAT,
            detail: "LAME could not allocate its state".into(),
        })?;
        b.set_num_channels(1).map_err(|e| enc_err(&e))?;
        b.set_sample_rate(sample_rate).map_err(|e| enc_err(&e))?;
        b.set_output_sample_rate(NonZeroU32::new(sample_rate))
            .map_err(|e| enc_err(&e))?;
        b.set_mode(Mode::Mono).map_err(|e| enc_err(&e))?;
        b.set_vbr_mode(VbrMode::Off).map_err(|e| enc_err(&e))?;
        b.set_brate(rate).map_err(|e| enc_err(&e))?;
        b.set_quality(Quality::NearBest).map_err(|e| enc_err(&e))?;
        b.set_to_write_vbr_tag(seekable).map_err(|e| enc_err(&e))?;
        let encoder = b.build().map_err(|e| enc_err(&e))?;
        Ok(Self {
            encoder,
            tag: id3_tag(meta)?,
            scratch: Vec::with_capacity(CHUNK),
        })
    }
}

/// The ID3v2.4 tag for `meta`, empty when there is nothing to say.
pub(crate) fn id3_tag(meta: &Metadata) -> Result<Vec<u8>, AudioError> {
    if meta.title.is_none() && meta.artist.is_none() && meta.chapters.is_empty() {
        return Ok(Vec::new());
    }
    let mut tag = Tag::new();
    if let Some(t) = &meta.title {
        tag.set_title(t.as_str());
    }
    if let Some(a) = &meta.artist {
        tag.set_artist(a.as_str());
    }
    let ms = |secs: f64| {
        (secs.max(0.0) * 1000.0)
            .round()
            .min(f64::from(u32::MAX - 1)) as u32
    };
    let mut ids = Vec::with_capacity(meta.chapters.len());
    for (i, c) in meta.chapters.iter().enumerate() {
        let id = format!("chp{i}");
        tag.add_frame(Chapter {
            element_id: id.clone(),
            start_time: ms(c.start_secs),
            end_time: ms(c.end_secs),
            // all ones: "use the times, not byte offsets"
            start_offset: u32::MAX,
            end_offset: u32::MAX,
            frames: vec![Frame::text("TIT2", c.title.as_str())],
        });
        ids.push(id);
    }
    if !ids.is_empty() {
        tag.add_frame(TableOfContents {
            element_id: "toc".into(),
            top_level: true,
            ordered: true,
            elements: ids,
            frames: Vec::new(),
        });
    }
    let mut out = Vec::new();
    tag.write_to(&mut out, Version::Id3v24)?;
    Ok(out)
}

impl Codec for Mp3Codec {
    fn header(&mut self) -> Result<Vec<u8>, AudioError> {
        Ok(self.tag.clone())
    }

    fn encode(&mut self, samples: &[f32], out: &mut Vec<u8>) -> Result<(), AudioError> {
        for chunk in samples.chunks(CHUNK) {
            self.scratch.clear();
            self.scratch.extend(chunk.iter().map(|&s| {
                if s.is_finite() {
                    s.clamp(-1.0, 1.0)
                } else {
                    0.0
                }
            }));
            // LAME's documented worst case: 1.25 * samples + 7200 bytes.
            out.reserve(chunk.len() * 5 / 4 + 7200);
            self.encoder
                .encode_to_vec(MonoPcm(self.scratch.as_slice()), out)
                .map_err(|e| enc_err(&e))?;
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), AudioError> {
        out.reserve(7200);
        self.encoder
            .flush_to_vec::<FlushGap>(out)
            .map_err(|e| enc_err(&e))?;
        Ok(())
    }

    fn patches(&mut self, _total_len: u64) -> Result<Vec<(u64, Vec<u8>)>, AudioError> {
        if !self.encoder.is_lame_tag_written() {
            return Ok(Vec::new());
        }
        let mut frame = Vec::with_capacity(self.encoder.lame_tag_size());
        if self.encoder.lame_tag_encode_to_vec(&mut frame).is_none() {
            return Err(AudioError::Encoder {
                format: FORMAT,
                detail: "LAME produced no info frame".into(),
            });
        }
        Ok(vec![(self.tag.len() as u64, frame)])
    }
}
