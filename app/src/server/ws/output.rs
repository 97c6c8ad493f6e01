//! ElevenLabs' `output_format` values: raw PCM at several rates, G.711 µ-law and A-law at
//! 8 kHz for telephony, and MP3. Kokoro's 24 kHz is resampled (the engine's streaming
//! resampler, exact in length) before encoding.

use engine::audio::{resample::Resampler, AudioError, OutputFormat};
use engine::SAMPLE_RATE;

use super::super::format::{engine_encoder, s16le, ChunkEncoder};

/// An ElevenLabs `output_format`, as the endpoints stream it: their vocabulary, mapped here onto
/// the engine's formats (MP3 through [`OutputFormat`], checked by the engine) and the raw and
/// G.711 telephony encodings, which are bytes without a container and exist only at this edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElevenLabsFormat {
    Pcm(u32),
    Ulaw,
    Alaw,
    Mp3 { rate: u32, kbps: u32 },
}

const PCM_RATES: [u32; 7] = [8000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000];
const MP3: [(u32, u32); 6] = [
    (22_050, 32),
    (44_100, 32),
    (44_100, 64),
    (44_100, 96),
    (44_100, 128),
    (44_100, 192),
];

impl ElevenLabsFormat {
    /// `pcm_16000`, `ulaw_8000`, `mp3_44100_128`, …; the error lists what is accepted.
    pub fn parse(name: &str) -> Result<Self, String> {
        let parts: Vec<&str> = name.split('_').collect();
        let num = |s: &str| s.parse::<u32>().ok();
        let found = match parts.as_slice() {
            ["pcm", rate] => num(rate).filter(|r| PCM_RATES.contains(r)).map(Self::Pcm),
            ["ulaw", "8000"] => Some(Self::Ulaw),
            ["alaw", "8000"] => Some(Self::Alaw),
            ["mp3", rate, kbps] => match (num(rate), num(kbps)) {
                (Some(rate), Some(kbps)) if MP3.contains(&(rate, kbps)) => {
                    Some(Self::Mp3 { rate, kbps })
                }
                _ => None,
            },
            _ => None,
        };
        found.ok_or_else(|| {
            format!(
                "output_format `{name}` is not supported; use pcm_8000, pcm_16000, pcm_22050, \
                 pcm_24000, pcm_32000, pcm_44100, pcm_48000, ulaw_8000, alaw_8000 or \
                 mp3_44100_128 (also mp3_22050_32, mp3_44100_32/64/96/192)"
            )
        })
    }

    /// The HTTP `Content-Type` of this format's bytes.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Mp3 { .. } => "audio/mpeg",
            Self::Pcm(_) => "audio/pcm",
            Self::Ulaw => "audio/basic",
            Self::Alaw => "audio/x-alaw-basic",
        }
    }

    fn rate(self) -> u32 {
        match self {
            Self::Pcm(rate) | Self::Mp3 { rate, .. } => rate,
            Self::Ulaw | Self::Alaw => 8000,
        }
    }
}

/// Turns 24 kHz chunks into one format's bytes, chunk by chunk.
pub struct Encoder {
    format: ElevenLabsFormat,
    resampler: Option<Resampler>,
    mp3: Option<Box<dyn ChunkEncoder>>,
    scratch: Vec<f32>,
}

impl Encoder {
    pub fn new(format: ElevenLabsFormat) -> Result<Self, String> {
        let resampler = (format.rate() != SAMPLE_RATE)
            .then(|| Resampler::new(SAMPLE_RATE, format.rate()))
            .transpose()
            .map_err(|e| e.to_string())?;
        let mp3 = match format {
            ElevenLabsFormat::Mp3 { rate, kbps } => Some(
                engine_encoder(OutputFormat::Mp3 { kbps }, rate, "mp3").map_err(|e| e.message)?,
            ),
            _ => None,
        };
        Ok(Self {
            format,
            resampler,
            mp3,
            scratch: Vec::new(),
        })
    }

    /// Bytes for `samples` (24 kHz); may be short of them while the resampler or the MP3
    /// encoder holds a little back.
    pub fn encode(&mut self, samples: &[f32]) -> Result<Vec<u8>, String> {
        let Some(resampler) = &mut self.resampler else {
            return self.bytes(samples);
        };
        let mut at_rate = std::mem::take(&mut self.scratch);
        at_rate.clear();
        let bytes = resampler
            .process(samples, &mut at_rate)
            .map_err(|e| e.to_string())
            .and_then(|()| self.bytes(&at_rate));
        self.scratch = at_rate;
        bytes
    }

    /// What is held back, at the end of the stream.
    pub fn finish(&mut self) -> Result<Vec<u8>, String> {
        let mut tail = Vec::new();
        if let Some(r) = &mut self.resampler {
            r.flush(&mut tail).map_err(|e| e.to_string())?;
        }
        let mut out = self.bytes(&tail)?;
        if let Some(mp3) = &mut self.mp3 {
            out.extend(mp3.finish().map_err(|e| e.to_string())?);
        }
        Ok(out)
    }

    fn bytes(&mut self, samples: &[f32]) -> Result<Vec<u8>, String> {
        Ok(match self.format {
            ElevenLabsFormat::Pcm(_) => s16le(samples),
            ElevenLabsFormat::Ulaw => samples.iter().map(|&s| ulaw(pcm16(s))).collect(),
            ElevenLabsFormat::Alaw => samples.iter().map(|&s| alaw(pcm16(s))).collect(),
            ElevenLabsFormat::Mp3 { .. } => match &mut self.mp3 {
                Some(mp3) => mp3.encode(samples).map_err(|e| e.to_string())?,
                None => Vec::new(),
            },
        })
    }
}

/// The same bytes for the HTTP routes, which stream through [`ChunkEncoder`].
impl ChunkEncoder for Encoder {
    fn encode(&mut self, samples: &[f32]) -> Result<Vec<u8>, AudioError> {
        Self::encode(self, samples).map_err(encoder_error)
    }

    fn finish(&mut self) -> Result<Vec<u8>, AudioError> {
        Self::finish(self).map_err(encoder_error)
    }
}

fn encoder_error(detail: String) -> AudioError {
    AudioError::Encoder {
        format: "output_format",
        detail,
    }
}

fn pcm16(s: f32) -> i16 {
    let s = if s.is_finite() {
        s.clamp(-1.0, 1.0)
    } else {
        0.0
    };
    (s * 32767.0).round() as i16
}

/// G.711 µ-law (ITU-T G.711, the segment encoding with bias 0x84).
fn ulaw(sample: i16) -> u8 {
    const BIAS: i32 = 0x84;
    const CLIP: i32 = 32_635;
    let mut s = i32::from(sample);
    let sign = if s < 0 {
        s = -s;
        0x80
    } else {
        0
    };
    let s = s.min(CLIP) + BIAS;
    let exponent = (7 - (s.leading_zeros() as i32 - 17)).clamp(0, 7);
    let mantissa = (s >> (exponent + 3)) & 0x0F;
    !(sign | (exponent << 4) as u8 | mantissa as u8)
}

/// G.711 A-law.
fn alaw(sample: i16) -> u8 {
    let mut s = i32::from(sample) >> 3; // 13-bit
    let sign = if s >= 0 {
        0x80
    } else {
        s = -s - 1;
        0
    };
    let s = s.min(0x0FFF);
    let byte = if s < 32 {
        (s >> 1) as u8
    } else {
        let exponent = (s as u32).ilog2() as i32 - 4; // 1..=7
        ((exponent << 4) as u8) | ((s >> exponent) & 0x0F) as u8
    };
    (sign | byte) ^ 0x55
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The µ-law decoder of G.711, to check the encoder round-trips.
    fn ulaw_decode(b: u8) -> i32 {
        let b = !b;
        let exponent = i32::from((b >> 4) & 7);
        let mantissa = i32::from(b & 0x0F);
        let magnitude = ((mantissa << 3) + 0x84) << exponent;
        let v = magnitude - 0x84;
        if b & 0x80 != 0 {
            -v
        } else {
            v
        }
    }

    fn alaw_decode(b: u8) -> i32 {
        let b = b ^ 0x55;
        let exponent = i32::from((b >> 4) & 7);
        let mantissa = i32::from(b & 0x0F);
        let magnitude = if exponent == 0 {
            (mantissa << 4) + 8
        } else {
            ((mantissa << 4) + 0x108) << (exponent - 1)
        };
        if b & 0x80 != 0 {
            magnitude
        } else {
            -magnitude
        }
    }

    #[test]
    fn g711_round_trips_within_its_step() {
        assert_eq!(ulaw(0), 0xFF);
        assert_eq!(alaw(0), 0xD5);
        for s in [
            -32_768i32, -20_000, -1000, -100, -5, 0, 5, 100, 1000, 8000, 20_000, 32_767,
        ] {
            let x = s as i16;
            let step = (s.abs() / 16).max(16);
            let u = ulaw_decode(ulaw(x));
            assert!((u - s).abs() <= step, "µ-law {s} → {u}");
            let a = alaw_decode(alaw(x));
            assert!((a - s).abs() <= step, "A-law {s} → {a}");
        }
    }

    #[test]
    fn formats_parse_and_lengths_follow_the_rate() {
        assert_eq!(
            ElevenLabsFormat::parse("pcm_16000"),
            Ok(ElevenLabsFormat::Pcm(16_000))
        );
        assert_eq!(
            ElevenLabsFormat::parse("ulaw_8000"),
            Ok(ElevenLabsFormat::Ulaw)
        );
        assert_eq!(
            ElevenLabsFormat::parse("mp3_44100_128"),
            Ok(ElevenLabsFormat::Mp3 {
                rate: 44_100,
                kbps: 128
            })
        );
        for bad in ["pcm_12345", "mp3_44100_100", "opus", "ulaw_16000", ""] {
            assert!(ElevenLabsFormat::parse(bad).is_err(), "{bad}");
        }
        // A second at 24 kHz in 0.1 s chunks is a second at the output rate, exactly.
        let tone: Vec<f32> = (0..24_000).map(|i| (i as f32 * 0.05).sin() * 0.3).collect();
        for (name, bytes_per_second) in [
            ("pcm_16000", 32_000),
            ("pcm_24000", 48_000),
            ("ulaw_8000", 8000),
            ("pcm_44100", 88_200),
        ] {
            let mut enc =
                Encoder::new(ElevenLabsFormat::parse(name).expect("format")).expect("encoder");
            let mut n = 0;
            for chunk in tone.chunks(2400) {
                n += enc.encode(chunk).expect("encode").len();
            }
            n += enc.finish().expect("finish").len();
            assert_eq!(n, bytes_per_second, "{name}");
        }
        let mut mp3 =
            Encoder::new(ElevenLabsFormat::parse("mp3_44100_128").expect("mp3")).expect("mp3");
        let mut bytes = Vec::new();
        for chunk in tone.chunks(2400) {
            bytes.extend(mp3.encode(chunk).expect("encode"));
        }
        bytes.extend(mp3.finish().expect("finish"));
        let decoded = engine::audio::decode::decode_bytes(
            bytes,
            std::path::Path::new("x.mp3"),
            &engine::audio::decode::DecodeOptions::default(),
        )
        .expect("decodes");
        assert_eq!(decoded.sample_rate, 44_100);
        assert!((0.95..1.1).contains(&decoded.duration_secs()));
    }
}
