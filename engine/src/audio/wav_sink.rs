//! WAV as an [`AudioSink`](super::AudioSink) codec, for files and for streams.
//!
//! The header is written with 0xFFFFFFFF in the RIFF and data sizes, which is what streaming TTS
//! servers send and what decoders read as "until the end of the stream". A file gets the real
//! sizes patched in on finish (and its odd-length data padded, as RIFF requires). Samples are
//! quantised exactly like [`WavWriter`](super::WavWriter) does.

use super::sink::Codec;
use super::{quantize, AudioError, SampleFormat};

const HEADER_LEN: u32 = 44;
const UNKNOWN: u32 = 0xFFFF_FFFF;

pub(crate) struct WavCodec {
    sample_rate: u32,
    format: SampleFormat,
    seekable: bool,
    data_bytes: u64,
}

impl WavCodec {
    pub(crate) fn new(sample_rate: u32, format: SampleFormat, seekable: bool) -> Self {
        Self {
            sample_rate,
            format,
            seekable,
            data_bytes: 0,
        }
    }

    fn bytes_per_sample(&self) -> u16 {
        match self.format {
            SampleFormat::Pcm16 => 2,
            SampleFormat::Pcm24 => 3,
            SampleFormat::Float32 => 4,
        }
    }
}

impl Codec for WavCodec {
    fn header(&mut self) -> Result<Vec<u8>, AudioError> {
        let block = self.bytes_per_sample();
        let tag: u16 = if self.format == SampleFormat::Float32 {
            3
        } else {
            1
        };
        let mut h = Vec::with_capacity(HEADER_LEN as usize);
        h.extend_from_slice(b"RIFF");
        h.extend_from_slice(&UNKNOWN.to_le_bytes());
        h.extend_from_slice(b"WAVEfmt ");
        h.extend_from_slice(&16u32.to_le_bytes());
        h.extend_from_slice(&tag.to_le_bytes());
        h.extend_from_slice(&1u16.to_le_bytes());
        h.extend_from_slice(&self.sample_rate.to_le_bytes());
        h.extend_from_slice(&(self.sample_rate * u32::from(block)).to_le_bytes());
        h.extend_from_slice(&block.to_le_bytes());
        h.extend_from_slice(&(block * 8).to_le_bytes());
        h.extend_from_slice(b"data");
        h.extend_from_slice(&UNKNOWN.to_le_bytes());
        Ok(h)
    }

    fn encode(&mut self, samples: &[f32], out: &mut Vec<u8>) -> Result<(), AudioError> {
        let before = out.len();
        out.reserve(samples.len() * usize::from(self.bytes_per_sample()));
        for &s in samples {
            match self.format {
                SampleFormat::Pcm16 => {
                    out.extend_from_slice(&(quantize(s, 16) as i16).to_le_bytes());
                }
                SampleFormat::Pcm24 => out.extend_from_slice(&quantize(s, 24).to_le_bytes()[..3]),
                SampleFormat::Float32 => {
                    let s = if s.is_finite() { s } else { 0.0 };
                    out.extend_from_slice(&s.to_le_bytes());
                }
            }
        }
        self.data_bytes += (out.len() - before) as u64;
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), AudioError> {
        if self.seekable && self.data_bytes % 2 == 1 {
            out.push(0); // RIFF chunks are word-aligned
        }
        Ok(())
    }

    fn patches(&mut self, _total_len: u64) -> Result<Vec<(u64, Vec<u8>)>, AudioError> {
        let too_long = AudioError::TooLong {
            format: "WAV",
            detail: "data over 4 GiB does not fit RIFF sizes",
        };
        let data = u32::try_from(self.data_bytes).map_err(|_| too_long)?;
        let riff = data
            .checked_add(data % 2)
            .and_then(|d| d.checked_add(HEADER_LEN - 8))
            .ok_or(AudioError::TooLong {
                format: "WAV",
                detail: "RIFF size over 4 GiB",
            })?;
        Ok(vec![
            (4, riff.to_le_bytes().to_vec()),
            (u64::from(HEADER_LEN - 4), data.to_le_bytes().to_vec()),
        ])
    }
}
