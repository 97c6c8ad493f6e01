//! FLAC as an [`AudioSink`](super::AudioSink) codec, built frame by frame on `flacenc`.
//!
//! `flacenc`'s top-level API encodes a whole in-memory source; we drive its per-frame encoder
//! instead so a long episode is never held in memory and a stream can start at once. The block
//! size is the largest power of two at most 100 ms long (2048 at 24 kHz, 4096 at 44.1/48 kHz),
//! so a streaming client gets its first frame after ~100 ms of audio.
//!
//! The STREAMINFO block starts with unknown totals (zero sample count, zero MD5, zero frame
//! sizes: all "unknown" in the FLAC spec), which is what a stream keeps; a file has them patched
//! in on finish. Title, artist and chapters go into a Vorbis comment (`TITLE`, `ARTIST`, and the
//! `CHAPTERnnn` / `CHAPTERnnnNAME` convention players read).

use flacenc::bitsink::MemSink;
use flacenc::component::{BitRepr, MetadataBlockData, Stream};
use flacenc::config;
use flacenc::error::Verify;
use flacenc::source::{Context, Fill, FrameBuf};

use super::sink::Codec;
use super::{quantize, AudioError, Metadata};

const FORMAT: &str = "FLAC";

pub(crate) struct FlacCodec {
    config: flacenc::error::Verified<config::Encoder>,
    stream: Stream,
    bits: u8,
    block: usize,
    framebuf: FrameBuf,
    context: Context,
    pending: Vec<i32>,
    frame_bytes: Option<(usize, usize)>,
}

fn enc_err(e: &impl std::fmt::Display) -> AudioError {
    AudioError::Encoder {
        format: FORMAT,
        detail: e.to_string(),
    }
}

impl FlacCodec {
    pub(crate) fn new(sample_rate: u32, bits: u8, meta: &Metadata) -> Result<Self, AudioError> {
        if bits != 16 && bits != 24 {
            return Err(AudioError::UnsupportedSetting {
                format: FORMAT,
                setting: "bit depth",
                value: u32::from(bits),
            });
        }
        // STREAMINFO holds the rate in 20 bits.
        if sample_rate >= 1 << 20 {
            return Err(AudioError::UnsupportedRate {
                format: FORMAT,
                rate: sample_rate,
                hint: " (FLAC's limit is 1048575 Hz)",
            });
        }
        let block = block_size(sample_rate);
        let config = config::Encoder::default()
            .into_verified()
            .map_err(|(_, e)| enc_err(&e))?;
        let mut stream =
            Stream::new(sample_rate as usize, 1, usize::from(bits)).map_err(|e| enc_err(&e))?;
        let comment = vorbis_comment(meta);
        if let Some(comment) = comment {
            let block = MetadataBlockData::new_unknown(4, &comment).map_err(|e| enc_err(&e))?;
            stream.add_metadata_block(block);
        }
        let info = stream.stream_info_mut();
        info.set_block_sizes(block, block)
            .map_err(|e| enc_err(&e))?;
        info.set_frame_sizes(0, 0).map_err(|e| enc_err(&e))?;
        Ok(Self {
            config,
            stream,
            bits,
            block,
            framebuf: FrameBuf::with_size(1, block).map_err(|e| enc_err(&e))?,
            context: Context::new(usize::from(bits), 1),
            pending: Vec::with_capacity(block),
            frame_bytes: None,
        })
    }

    fn header_bytes(&self) -> Result<Vec<u8>, AudioError> {
        let mut sink = MemSink::<u8>::new();
        self.stream.write(&mut sink).map_err(|e| enc_err(&e))?;
        Ok(sink.into_inner())
    }

    /// Encodes `pending[..n]` as the next frame and appends it to `out`.
    fn encode_frame(&mut self, n: usize, out: &mut Vec<u8>) -> Result<(), AudioError> {
        let samples = &self.pending[..n];
        (&mut self.framebuf, &mut self.context)
            .fill_interleaved(samples)
            .map_err(|e| enc_err(&e))?;
        let number = self.context.current_frame_number().unwrap_or(0);
        let frame = flacenc::encode_fixed_size_frame(
            &self.config,
            &self.framebuf,
            number,
            self.stream.stream_info(),
        )
        .map_err(|e| enc_err(&e))?;
        let mut sink = MemSink::<u8>::with_capacity(frame.count_bits());
        frame.write(&mut sink).map_err(|e| enc_err(&e))?;
        let bytes = sink.as_slice();
        out.extend_from_slice(bytes);
        let len = bytes.len();
        self.frame_bytes = Some(match self.frame_bytes {
            None => (len, len),
            Some((lo, hi)) => (lo.min(len), hi.max(len)),
        });
        self.pending.drain(..n);
        Ok(())
    }
}

/// The largest power of two at most 100 ms long, within FLAC's streamable subset (<= 4096 here).
fn block_size(sample_rate: u32) -> usize {
    let tenth = (sample_rate / 10).max(256) as usize;
    let pow = 1usize << (usize::BITS - 1 - tenth.leading_zeros());
    pow.clamp(256, 4096)
}

/// A Vorbis comment block body, or `None` when there is nothing to tag.
fn vorbis_comment(meta: &Metadata) -> Option<Vec<u8>> {
    let mut fields = Vec::new();
    if let Some(t) = &meta.title {
        fields.push(format!("TITLE={t}"));
    }
    if let Some(a) = &meta.artist {
        fields.push(format!("ARTIST={a}"));
    }
    for (i, c) in meta.chapters.iter().enumerate() {
        let ms = (c.start_secs.max(0.0) * 1000.0).round() as u64;
        let (h, m, s, ms) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
        fields.push(format!("CHAPTER{:03}={h:02}:{m:02}:{s:02}.{ms:03}", i + 1));
        fields.push(format!("CHAPTER{:03}NAME={}", i + 1, c.title));
    }
    if fields.is_empty() {
        return None;
    }
    let vendor = b"Banter";
    let mut body = Vec::new();
    body.extend_from_slice(&(vendor.len() as u32).to_le_bytes());
    body.extend_from_slice(vendor);
    body.extend_from_slice(&(fields.len() as u32).to_le_bytes());
    for f in fields {
        body.extend_from_slice(&(f.len() as u32).to_le_bytes());
        body.extend_from_slice(f.as_bytes());
    }
    Some(body)
}

impl Codec for FlacCodec {
    fn header(&mut self) -> Result<Vec<u8>, AudioError> {
        self.header_bytes()
    }

    fn encode(&mut self, samples: &[f32], out: &mut Vec<u8>) -> Result<(), AudioError> {
        let bits = self.bits;
        for chunk in samples.chunks(self.block) {
            self.pending
                .extend(chunk.iter().map(|&s| quantize(s, bits)));
            while self.pending.len() >= self.block {
                self.encode_frame(self.block, out)?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), AudioError> {
        if !self.pending.is_empty() {
            self.encode_frame(self.pending.len(), out)?;
        }
        Ok(())
    }

    fn patches(&mut self, _total_len: u64) -> Result<Vec<(u64, Vec<u8>)>, AudioError> {
        let md5 = self.context.md5_digest();
        let total = self.context.total_samples();
        if total >= 1 << 36 {
            return Err(AudioError::TooLong {
                format: FORMAT,
                detail: "over 2^36 samples",
            });
        }
        let info = self.stream.stream_info_mut();
        info.set_md5_digest(&md5);
        info.set_total_samples(total);
        if let Some((lo, hi)) = self.frame_bytes {
            info.set_frame_sizes(lo, hi).map_err(|e| enc_err(&e))?;
        }
        Ok(vec![(0, self.header_bytes()?)])
    }
}
