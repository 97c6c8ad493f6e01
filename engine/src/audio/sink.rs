//! The two ways an encoded episode leaves the engine, shared by every codec.
//!
//! A codec only turns samples into bytes and says, once finished, which header bytes it would
//! like to rewrite now that totals are known. [`FileSink`] writes those patches by seeking back;
//! [`StreamSink`] drops them (the codec was built with streaming headers that need none) and
//! flushes after every block so an HTTP client hears audio while the rest is still rendering.

use std::io::{Seek, SeekFrom, Write};

use super::{flac, mp3, ogg_opus, wav_sink, AudioError, AudioSink, Metadata, OutputFormat};

/// Turns samples into container bytes.
pub(crate) trait Codec: Send {
    /// Bytes that start the output (headers, tags).
    fn header(&mut self) -> Result<Vec<u8>, AudioError>;
    /// Encodes `samples`, appending whatever is ready to `out`.
    fn encode(&mut self, samples: &[f32], out: &mut Vec<u8>) -> Result<(), AudioError>;
    /// Encodes what is still buffered.
    fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), AudioError>;
    /// After `finish`: bytes to overwrite at offsets from the start of the output, given its
    /// total length. Only a seekable output applies them.
    fn patches(&mut self, total_len: u64) -> Result<Vec<(u64, Vec<u8>)>, AudioError>;
}

/// Builds the codec for `format`; `seekable` says whether its headers will be patched.
pub(crate) fn codec_for(
    format: OutputFormat,
    sample_rate: u32,
    meta: &Metadata,
    seekable: bool,
) -> Result<Box<dyn Codec>, AudioError> {
    if sample_rate == 0 {
        return Err(AudioError::UnsupportedRate {
            format: format.name(),
            rate: sample_rate,
            hint: "",
        });
    }
    Ok(match format {
        OutputFormat::Wav(sf) => Box::new(wav_sink::WavCodec::new(sample_rate, sf, seekable)),
        OutputFormat::Flac { bits } => Box::new(flac::FlacCodec::new(sample_rate, bits, meta)?),
        OutputFormat::Mp3 { kbps } => {
            Box::new(mp3::Mp3Codec::new(sample_rate, kbps, meta, seekable)?)
        }
        OutputFormat::Opus { kbps } => Box::new(ogg_opus::OpusCodec::new(sample_rate, kbps, meta)?),
    })
}

/// Encodes into a seekable writer and completes the headers on `finish`.
pub(crate) struct FileSink<W: Write + Seek + Send> {
    out: W,
    codec: Box<dyn Codec>,
    start: u64,
    written: u64,
    buf: Vec<u8>,
}

impl<W: Write + Seek + Send> FileSink<W> {
    pub(crate) fn new(mut out: W, mut codec: Box<dyn Codec>) -> Result<Self, AudioError> {
        let start = out.stream_position()?;
        let header = codec.header()?;
        out.write_all(&header)?;
        Ok(Self {
            out,
            codec,
            start,
            written: header.len() as u64,
            buf: Vec::new(),
        })
    }

    fn drain(&mut self) -> Result<(), AudioError> {
        self.out.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

impl<W: Write + Seek + Send> AudioSink for FileSink<W> {
    fn write(&mut self, samples: &[f32]) -> Result<(), AudioError> {
        self.codec.encode(samples, &mut self.buf)?;
        self.drain()
    }

    fn finish(mut self: Box<Self>) -> Result<(), AudioError> {
        self.codec.finish(&mut self.buf)?;
        self.drain()?;
        for (at, bytes) in self.codec.patches(self.written)? {
            self.out.seek(SeekFrom::Start(self.start + at))?;
            self.out.write_all(&bytes)?;
        }
        self.out.seek(SeekFrom::Start(self.start + self.written))?;
        self.out.flush()?;
        Ok(())
    }
}

/// Encodes into an append-only writer, flushing as blocks come out.
pub(crate) struct StreamSink<W: Write + Send> {
    out: W,
    codec: Box<dyn Codec>,
    buf: Vec<u8>,
}

impl<W: Write + Send> StreamSink<W> {
    pub(crate) fn new(mut out: W, mut codec: Box<dyn Codec>) -> Result<Self, AudioError> {
        let header = codec.header()?;
        out.write_all(&header)?;
        out.flush()?;
        Ok(Self {
            out,
            codec,
            buf: Vec::new(),
        })
    }
}

impl<W: Write + Send> AudioSink for StreamSink<W> {
    fn write(&mut self, samples: &[f32]) -> Result<(), AudioError> {
        self.codec.encode(samples, &mut self.buf)?;
        if !self.buf.is_empty() {
            self.out.write_all(&self.buf)?;
            self.out.flush()?;
            self.buf.clear();
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), AudioError> {
        self.codec.finish(&mut self.buf)?;
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(())
    }
}
