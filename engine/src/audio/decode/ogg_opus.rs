//! Ogg Opus (RFC 7845), which symphonia does not decode: libopus at 48 kHz, every channel
//! averaged into one, the pre-skip trimmed from the front and the last page's granule position
//! trimming the padding at the end.
//!
//! Why here: Banter writes Opus (`response_format=opus`, episode exports), so it must read it
//! back, and an author may hand the voice library an `.opus` recording. The input is untrusted:
//! every failure is a [`DecodeError`], and a stream that breaks off keeps what decoded before it
//! (at least [`MIN_DAMAGED_SECS`]), as for the other formats.

use std::io::{Read, Seek};
use std::path::Path;

use ogg::reading::PacketReader;
use opus::{Channels, Decoder};

use super::{downmix_into, DecodeError, DecodeOptions, DecodedAudio, MIN_DAMAGED_SECS};

/// libopus decodes at this rate (Opus' own).
pub(super) const RATE: u32 = 48_000;
/// The longest Opus packet: 120 ms at 48 kHz.
const MAX_FRAME: usize = 5760;

/// True when `head` (the start of a file) is an Ogg page carrying an `OpusHead` packet.
pub(super) fn sniff(head: &[u8]) -> bool {
    head.len() >= 36 && &head[..4] == b"OggS" && &head[28..36] == b"OpusHead"
}

/// What an `OpusHead` packet says, and a decoder for it.
struct Head {
    channels: usize,
    pre_skip: usize,
    source_rate: u32,
    serial: u32,
    decoder: Decoder,
}

/// Reads the first packet, which must be an `OpusHead` Banter can decode.
fn read_head<R: Read + Seek>(
    reader: &mut PacketReader<R>,
    name: &Path,
) -> Result<Head, DecodeError> {
    let file = || name.to_owned();
    let head = reader
        .read_packet()
        .map_err(|e| DecodeError::Corrupt {
            file: file(),
            detail: e.to_string(),
            decoded_secs: 0.0,
        })?
        .ok_or_else(|| DecodeError::Empty { file: file() })?;
    let h = &head.data;
    if h.len() < 19 || &h[..8] != b"OpusHead" {
        return Err(DecodeError::NotAudio {
            file: file(),
            detail: "the first Ogg packet is not an OpusHead".to_owned(),
        });
    }
    let channels = usize::from(h[9]);
    let pre_skip = usize::from(u16::from_le_bytes([h[10], h[11]]));
    let source_rate = u32::from_le_bytes([h[12], h[13], h[14], h[15]]);
    let (mapping, layout) = (
        h[18],
        match channels {
            1 => Some(Channels::Mono),
            2 => Some(Channels::Stereo),
            _ => None,
        },
    );
    let Some(layout) = layout.filter(|_| mapping == 0) else {
        return Err(DecodeError::UnsupportedCodec {
            file: file(),
            detail: format!("Opus with {channels} channels (mapping family {mapping})"),
        });
    };
    let decoder = Decoder::new(RATE, layout).map_err(|e| DecodeError::UnsupportedCodec {
        file: file(),
        detail: e.to_string(),
    })?;
    Ok(Head {
        channels,
        pre_skip,
        source_rate,
        serial: head.stream_serial(),
        decoder,
    })
}

/// An Ogg Opus file a packet at a time (for [`super::stream::ClipStream`]): the pre-skip
/// dropped from the front, and the end trimmed to the last page's granule position.
pub(super) struct OpusPackets<R: Read + Seek> {
    reader: PacketReader<R>,
    head: Head,
    /// Pre-skip samples still to drop, packets seen, and frames decoded (pre-skip included).
    skip: usize,
    index: usize,
    decoded: u64,
    pcm: Vec<f32>,
    done: bool,
}

impl<R: Read + Seek> OpusPackets<R> {
    pub(super) fn new(source: R, name: &Path) -> Result<Self, DecodeError> {
        let mut reader = PacketReader::new(source);
        let head = read_head(&mut reader, name)?;
        Ok(Self {
            reader,
            skip: head.pre_skip,
            pcm: vec![0f32; MAX_FRAME * head.channels],
            head,
            index: 0,
            decoded: 0,
            done: false,
        })
    }

    /// Appends the next packet's mono samples to `mono`; `false` at the end of the stream (a
    /// stream that breaks off ends there, `damaged` saying why).
    pub(super) fn next(&mut self, mono: &mut Vec<f32>, damaged: &mut Option<String>) -> bool {
        while !self.done {
            let packet = match self.reader.read_packet() {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(e) => {
                    damaged.get_or_insert_with(|| e.to_string());
                    break;
                }
            };
            if packet.stream_serial() != self.head.serial {
                continue;
            }
            self.index += 1;
            if self.index == 1 {
                continue; // OpusTags
            }
            self.done = packet.last_in_stream();
            let n = match self
                .head
                .decoder
                .decode_float(&packet.data, &mut self.pcm, false)
            {
                Ok(n) => n,
                Err(e) => {
                    damaged.get_or_insert_with(|| format!("bad packet: {e}"));
                    continue;
                }
            };
            let mut keep = n;
            if self.done {
                // The last page's granule says how many samples (pre-skip included) are audio.
                let end = packet.absgp_page();
                keep = usize::try_from(end.saturating_sub(self.decoded)).map_or(n, |k| k.min(n));
            }
            self.decoded += n as u64;
            let skip = self.skip.min(keep);
            self.skip -= skip;
            let ch = self.head.channels;
            downmix_into(&self.pcm[skip * ch..keep * ch], ch, mono);
            return true;
        }
        self.done = true;
        false
    }
}

pub(super) fn decode<R: Read + Seek>(
    source: R,
    name: &Path,
    options: &DecodeOptions,
) -> Result<DecodedAudio, DecodeError> {
    let file = || name.to_owned();
    let corrupt = |detail: String, decoded: usize| DecodeError::Corrupt {
        file: file(),
        detail,
        decoded_secs: decoded as f64 / f64::from(RATE),
    };
    let mut reader = PacketReader::new(source);
    let Head {
        channels,
        pre_skip,
        source_rate,
        serial,
        mut decoder,
    } = read_head(&mut reader, name)?;
    let limit = options.max_secs.map(|s| {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // clamped >= 0
        let frames = (s.max(0.0) * f64::from(RATE)).ceil() as usize + pre_skip;
        frames
    });
    let mut mono = Vec::new();
    let mut pcm = vec![0f32; MAX_FRAME * channels];
    let mut damaged = None;
    let mut truncated = false;
    let mut end_granule = None;
    let mut index = 0usize;
    loop {
        let packet = match reader.read_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) => {
                damaged = Some(e.to_string());
                break;
            }
        };
        if packet.stream_serial() != serial {
            continue;
        }
        index += 1;
        if index == 1 {
            continue; // OpusTags
        }
        if limit.is_some_and(|max| mono.len() >= max) {
            truncated = true;
            break;
        }
        match decoder.decode_float(&packet.data, &mut pcm, false) {
            Ok(n) => downmix_into(&pcm[..n * channels], channels, &mut mono),
            Err(e) => {
                damaged.get_or_insert_with(|| format!("bad packet: {e}"));
                continue;
            }
        }
        if packet.last_in_page() {
            end_granule = Some(packet.absgp_page());
        }
        if packet.last_in_stream() {
            break;
        }
    }
    if !truncated {
        // The last page's granule says how many samples (pre-skip included) are audio.
        if let Some(end) = end_granule.and_then(|g| usize::try_from(g).ok()) {
            mono.truncate(end.max(pre_skip));
        }
    }
    let audio = mono.len().saturating_sub(pre_skip);
    mono.drain(..pre_skip.min(mono.len()));
    if let Some(max) = limit.map(|m| m - pre_skip) {
        if mono.len() > max {
            mono.truncate(max);
            truncated = true;
        }
    }
    if let Some(detail) = &damaged {
        if (audio as f64) < MIN_DAMAGED_SECS * f64::from(RATE) {
            return Err(corrupt(detail.clone(), audio));
        }
    }
    if mono.is_empty() {
        return Err(DecodeError::Empty { file: file() });
    }
    Ok(DecodedAudio {
        samples: mono,
        sample_rate: RATE,
        source_rate: if source_rate == 0 { RATE } else { source_rate },
        source_channels: channels,
        truncated,
        damaged,
    })
}
