//! Opus in Ogg (RFC 7845) as an [`AudioSink`](super::AudioSink) codec: libopus (built from its
//! bundled source, statically) in 20 ms frames, mono, VBR at a target bit rate.
//!
//! Why Opus: it is what web and voice clients ask for (`OpenAI`'s `response_format=opus`), and at
//! 32–64 kbit/s speech is transparent where MP3 needs twice that. Ogg carries it with no total
//! length up front, so the same codec serves files and HTTP streams: every call to `encode`
//! ends its Ogg page, so a stream's bytes leave as soon as a chunk is encoded.
//!
//! The layout: page 1 holds `OpusHead` (mono, the encoder's look-ahead as pre-skip, the input
//! rate for information), page 2 `OpusTags` (title and artist as Vorbis comments, plus chapter
//! marks as `CHAPTERxxx` comments, the Ogg convention), then audio pages. A page's granule
//! position counts the 48 kHz samples its packets decode to, pre-skip included; the last page's
//! says where the audio ends, so decoders trim both the encoder delay and the padding of the
//! last frame.

use std::borrow::Cow;

use ogg::writing::{PacketWriteEndInfo, PacketWriter};
use opus::{Application, Bitrate, Channels, Encoder, Signal};

use super::sink::Codec;
use super::{AudioError, Metadata};

const FORMAT: &str = "Opus";
/// Input rates libopus encodes natively (no resampling).
const RATES: [u32; 5] = [8_000, 12_000, 16_000, 24_000, 48_000];
/// Opus' granule rate, whatever the input rate.
const GRANULE_RATE: u64 = 48_000;
/// Frame length in milliseconds.
const FRAME_MS: u32 = 20;
/// Largest packet libopus may return (its recommended buffer size).
const MAX_PACKET: usize = 4000;
/// The logical stream's serial number (one stream per file).
const SERIAL: u32 = 0x4241_4e54; // "BANT"
/// Bit rates accepted, in kbit/s.
pub(crate) const KBPS_RANGE: (u32, u32) = (6, 256);

pub(crate) struct OpusCodec {
    encoder: Encoder,
    writer: PacketWriter<'static, Vec<u8>>,
    sample_rate: u32,
    /// Samples per frame at the input rate.
    frame: usize,
    /// Input not yet a whole frame.
    pending: Vec<f32>,
    /// Encoder delay in 48 kHz samples (`OpusHead`'s pre-skip).
    pre_skip: u64,
    /// Input samples taken so far (for the final granule).
    taken: u64,
    /// 48 kHz samples the frames encoded so far decode to (pre-skip included).
    granule: u64,
    header: Option<Vec<u8>>,
    /// A packet held back so the last one can be marked as the end of the stream.
    held: Option<(Vec<u8>, u64)>,
}

fn enc_err(e: &impl std::fmt::Display) -> AudioError {
    AudioError::Encoder {
        format: FORMAT,
        detail: e.to_string(),
    }
}

impl OpusCodec {
    pub(crate) fn new(sample_rate: u32, kbps: u32, meta: &Metadata) -> Result<Self, AudioError> {
        if !RATES.contains(&sample_rate) {
            return Err(AudioError::UnsupportedRate {
                format: FORMAT,
                rate: sample_rate,
                hint: " (Opus rates: 8000, 12000, 16000, 24000, 48000)",
            });
        }
        if !(KBPS_RANGE.0..=KBPS_RANGE.1).contains(&kbps) {
            return Err(AudioError::UnsupportedSetting {
                format: FORMAT,
                setting: "bit rate (kbit/s, 6–256)",
                value: kbps,
            });
        }
        let mut encoder = Encoder::new(sample_rate, Channels::Mono, Application::Audio)
            .map_err(|e| enc_err(&e))?;
        let bits = i32::try_from(kbps * 1000).map_err(|e| enc_err(&e))?;
        encoder
            .set_bitrate(Bitrate::Bits(bits))
            .map_err(|e| enc_err(&e))?;
        encoder.set_signal(Signal::Voice).map_err(|e| enc_err(&e))?;
        let lookahead = encoder.get_lookahead().map_err(|e| enc_err(&e))?;
        let per_input = GRANULE_RATE / u64::from(sample_rate);
        let pre_skip = u64::try_from(lookahead).unwrap_or(0) * per_input;
        let mut writer = PacketWriter::new(Vec::new());
        let head = opus_head(sample_rate, pre_skip)?;
        write(&mut writer, head, PacketWriteEndInfo::EndPage, 0)?;
        write(&mut writer, opus_tags(meta), PacketWriteEndInfo::EndPage, 0)?;
        let header = std::mem::take(writer.inner_mut());
        Ok(Self {
            encoder,
            writer,
            sample_rate,
            frame: (sample_rate * FRAME_MS / 1000) as usize,
            pending: Vec::new(),
            pre_skip,
            taken: 0,
            granule: 0,
            header: Some(header),
            held: None,
        })
    }

    /// 48 kHz samples per frame.
    fn frame_granules(&self) -> u64 {
        self.frame as u64 * GRANULE_RATE / u64::from(self.sample_rate)
    }

    /// Encodes one whole frame and queues its packet (writing the one held before it).
    fn encode_frame(&mut self, frame: &[f32]) -> Result<(), AudioError> {
        let packet = self
            .encoder
            .encode_vec_float(frame, MAX_PACKET)
            .map_err(|e| enc_err(&e))?;
        self.granule += self.frame_granules();
        if let Some((data, granule)) = self.held.replace((packet, self.granule)) {
            write(
                &mut self.writer,
                data,
                PacketWriteEndInfo::NormalPacket,
                granule,
            )?;
        }
        Ok(())
    }

    /// Ends the current page with the held packet, so its bytes can leave now.
    fn flush_page(&mut self, last: bool) -> Result<(), AudioError> {
        if let Some((data, granule)) = self.held.take() {
            let (info, granule) = if last {
                // The last granule says where the audio really ends (the rest is padding).
                let end = self.pre_skip + self.taken * GRANULE_RATE / u64::from(self.sample_rate);
                (PacketWriteEndInfo::EndStream, end.min(granule))
            } else {
                (PacketWriteEndInfo::EndPage, granule)
            };
            write(&mut self.writer, data, info, granule)?;
        }
        Ok(())
    }

    fn drain(&mut self, out: &mut Vec<u8>) {
        out.append(self.writer.inner_mut());
    }
}

impl Codec for OpusCodec {
    fn header(&mut self) -> Result<Vec<u8>, AudioError> {
        Ok(self.header.take().unwrap_or_default())
    }

    fn encode(&mut self, samples: &[f32], out: &mut Vec<u8>) -> Result<(), AudioError> {
        self.taken += samples.len() as u64;
        self.pending.extend(samples.iter().map(|s| {
            if s.is_finite() {
                s.clamp(-1.0, 1.0)
            } else {
                0.0
            }
        }));
        let whole = self.pending.len() / self.frame * self.frame;
        let pending = std::mem::take(&mut self.pending);
        for frame in pending[..whole].chunks_exact(self.frame) {
            self.encode_frame(frame)?;
        }
        self.pending = pending[whole..].to_vec();
        self.flush_page(false)?;
        self.drain(out);
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), AudioError> {
        // Pad the last partial frame, then one more frame of silence so the encoder's
        // look-ahead is flushed out; the final granule trims both.
        let mut tail = std::mem::take(&mut self.pending);
        let delay = self.pre_skip * u64::from(self.sample_rate) / GRANULE_RATE;
        let frames = (tail.len() + delay as usize).div_ceil(self.frame).max(1);
        tail.resize(frames * self.frame, 0.0);
        for frame in tail.chunks_exact(self.frame) {
            self.encode_frame(frame)?;
        }
        self.flush_page(true)?;
        self.drain(out);
        Ok(())
    }

    fn patches(&mut self, _total_len: u64) -> Result<Vec<(u64, Vec<u8>)>, AudioError> {
        Ok(Vec::new())
    }
}

fn write(
    writer: &mut PacketWriter<'static, Vec<u8>>,
    data: Vec<u8>,
    info: PacketWriteEndInfo,
    granule: u64,
) -> Result<(), AudioError> {
    writer
        .write_packet(Cow::Owned(data), SERIAL, info, granule)
        .map_err(|e| enc_err(&e))
}

/// The identification header (RFC 7845 §5.1).
fn opus_head(sample_rate: u32, pre_skip: u64) -> Result<Vec<u8>, AudioError> {
    let pre_skip = u16::try_from(pre_skip).map_err(|e| enc_err(&e))?;
    let mut h = Vec::with_capacity(19);
    h.extend_from_slice(b"OpusHead");
    h.push(1); // version
    h.push(1); // channels
    h.extend_from_slice(&pre_skip.to_le_bytes());
    h.extend_from_slice(&sample_rate.to_le_bytes());
    h.extend_from_slice(&0i16.to_le_bytes()); // output gain
    h.push(0); // mapping family 0: mono/stereo
    Ok(h)
}

/// The comment header (RFC 7845 §5.2): vendor string, then `TITLE`, `ARTIST` and the
/// chapters as `CHAPTERxxx=HH:MM:SS.mmm` / `CHAPTERxxxNAME=…` comments.
fn opus_tags(meta: &Metadata) -> Vec<u8> {
    let vendor = concat!("Banter ", env!("CARGO_PKG_VERSION"), " (libopus)");
    let mut comments = Vec::new();
    if let Some(t) = &meta.title {
        comments.push(format!("TITLE={t}"));
    }
    if let Some(a) = &meta.artist {
        comments.push(format!("ARTIST={a}"));
    }
    for (i, c) in meta.chapters.iter().enumerate().take(1000) {
        let ms = (c.start_secs.max(0.0) * 1000.0).round() as u64;
        comments.push(format!(
            "CHAPTER{i:03}={:02}:{:02}:{:02}.{:03}",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000
        ));
        comments.push(format!("CHAPTER{i:03}NAME={}", c.title));
    }
    let mut t = Vec::new();
    t.extend_from_slice(b"OpusTags");
    let len = |n: usize| u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes();
    t.extend_from_slice(&len(vendor.len()));
    t.extend_from_slice(vendor.as_bytes());
    t.extend_from_slice(&len(comments.len()));
    for c in &comments {
        t.extend_from_slice(&len(c.len()));
        t.extend_from_slice(c.as_bytes());
    }
    t
}
