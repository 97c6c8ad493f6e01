//! The one description of the audio files and streams Banter writes: which codecs exist, their
//! names, extensions and MIME types, and their rules (which sample rates an episode may have in
//! each, which bit rates, which sample formats).
//!
//! Why one place: the CLI's `--format`, the studio's export dialog, the HTTP `response_format`
//! and the WebSocket `output_format` each have their own vocabulary, and each used to carry its
//! own enum and its own copy of rules such as "Opus has no 44.1 kHz". Now every front end maps
//! its words onto [`Codec`] and [`OutputFormat`] at its edge and asks them the rules, so a rule
//! changes once and every front end says the same thing.

use std::ops::RangeInclusive;
use std::path::Path;

use super::{ogg_opus, AudioError, SampleFormat};

/// The sample rates an episode (or a response) may be written at: the model's own 24 kHz, or
/// resampled to CD's 44.1 kHz or video's 48 kHz. [`Codec::allows_rate`] narrows it per codec.
pub const EPISODE_RATES: [u32; 3] = [24_000, 44_100, 48_000];

/// A kind of audio file, by the name every front end uses for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    Wav,
    Flac,
    Mp3,
    Opus,
}

impl Codec {
    /// Every codec, in the order menus and help list them.
    pub const ALL: [Codec; 4] = [Codec::Wav, Codec::Flac, Codec::Mp3, Codec::Opus];

    /// The lower-case name (`wav`, `flac`, `mp3`, `opus`): the CLI's `--format`, the HTTP
    /// `response_format` and the file name extension.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Codec::Wav => "wav",
            Codec::Flac => "flac",
            Codec::Mp3 => "mp3",
            Codec::Opus => "opus",
        }
    }

    /// The name people read (`WAV`, `FLAC`, `MP3`, `Opus`).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Codec::Wav => "WAV",
            Codec::Flac => "FLAC",
            Codec::Mp3 => "MP3",
            Codec::Opus => "Opus",
        }
    }

    /// The codec called `name` (any case), if there is one.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Codec> {
        Codec::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The codec a file name's extension asks for (`episode.mp3`), if it names one.
    #[must_use]
    pub fn from_path(path: &Path) -> Option<Codec> {
        Codec::from_name(path.extension()?.to_str()?)
    }

    /// The MIME type an HTTP response carries.
    #[must_use]
    pub fn mime(self) -> &'static str {
        match self {
            Codec::Wav => "audio/wav",
            Codec::Flac => "audio/flac",
            Codec::Mp3 => "audio/mpeg",
            Codec::Opus => "audio/ogg",
        }
    }

    /// Whether an episode may be written in this codec at `rate` Hz: one of
    /// [`EPISODE_RATES`], and for Opus not 44.1 kHz (libopus runs at 8, 12, 16, 24 or 48 kHz).
    #[must_use]
    pub fn allows_rate(self, rate: u32) -> bool {
        EPISODE_RATES.contains(&rate) && (self != Codec::Opus || rate != 44_100)
    }

    /// The rate to use instead of one the codec does not have (Opus: 44.1 kHz becomes 48 kHz).
    #[must_use]
    pub fn nearest_rate(self, rate: u32) -> u32 {
        if self.allows_rate(rate) {
            rate
        } else {
            48_000
        }
    }

    /// [`Self::allows_rate`] as an error that says which rates the codec has.
    pub fn check_rate(self, rate: u32) -> Result<(), AudioError> {
        if self.allows_rate(rate) {
            return Ok(());
        }
        Err(AudioError::UnsupportedRate {
            format: self.label(),
            rate,
            hint: match self {
                Codec::Opus => " (use 24000 or 48000: Opus has no 44100)",
                _ => " (use 24000, 44100 or 48000)",
            },
        })
    }

    /// The bit rates (kbit/s) the codec takes, for the lossy ones.
    #[must_use]
    pub fn bitrates(self) -> Option<RangeInclusive<u32>> {
        match self {
            Codec::Wav | Codec::Flac => None,
            Codec::Mp3 => Some(32..=320),
            Codec::Opus => Some(ogg_opus::KBPS_RANGE.0..=ogg_opus::KBPS_RANGE.1),
        }
    }
}

/// The container and codec of an episode file or stream, with its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// RIFF/WAVE PCM or float.
    Wav(SampleFormat),
    /// Lossless FLAC at 16 or 24 bits.
    Flac { bits: u8 },
    /// MP3 (LAME, CBR) at a bit rate in kbit/s (128 is the usual podcast choice).
    Mp3 { kbps: u32 },
    /// Opus in Ogg (libopus, VBR) at a target bit rate in kbit/s (6–256; 48 is transparent for
    /// speech).
    Opus { kbps: u32 },
}

impl Default for OutputFormat {
    fn default() -> Self {
        OutputFormat::Wav(SampleFormat::Pcm16)
    }
}

impl OutputFormat {
    /// `codec` with these settings: `sample` for WAV and FLAC (FLAC stores integers only),
    /// `kbps` for MP3 and Opus (checked against [`Codec::bitrates`]); the error names the
    /// setting that does not fit.
    pub fn new(codec: Codec, sample: SampleFormat, kbps: u32) -> Result<Self, AudioError> {
        let unsupported = |setting, value| AudioError::UnsupportedSetting {
            format: codec.label(),
            setting,
            value,
        };
        if let Some(range) = codec.bitrates() {
            if !range.contains(&kbps) {
                return Err(unsupported("bit rate (kbit/s)", kbps));
            }
        }
        Ok(match codec {
            Codec::Wav => OutputFormat::Wav(sample),
            Codec::Flac => match sample {
                SampleFormat::Pcm16 => OutputFormat::Flac { bits: 16 },
                SampleFormat::Pcm24 => OutputFormat::Flac { bits: 24 },
                SampleFormat::Float32 => {
                    return Err(unsupported(
                        "sample format (FLAC stores integers), bits",
                        32,
                    ))
                }
            },
            Codec::Mp3 => OutputFormat::Mp3 { kbps },
            Codec::Opus => OutputFormat::Opus { kbps },
        })
    }

    /// The codec, without its settings.
    #[must_use]
    pub fn codec(&self) -> Codec {
        match self {
            OutputFormat::Wav(_) => Codec::Wav,
            OutputFormat::Flac { .. } => Codec::Flac,
            OutputFormat::Mp3 { .. } => Codec::Mp3,
            OutputFormat::Opus { .. } => Codec::Opus,
        }
    }

    /// The file name extension, without the dot.
    #[must_use]
    pub fn extension(&self) -> &'static str {
        self.codec().name()
    }

    /// The MIME type an HTTP response carries.
    #[must_use]
    pub fn mime(&self) -> &'static str {
        self.codec().mime()
    }

    pub(crate) fn name(self) -> &'static str {
        self.codec().label()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_extensions_and_rates_agree_for_every_codec() {
        for c in Codec::ALL {
            assert_eq!(Codec::from_name(c.name()), Some(c));
            assert_eq!(Codec::from_name(&c.label().to_uppercase()), Some(c));
            assert_eq!(
                Codec::from_path(Path::new(&format!("a/b.{}", c.name()))),
                Some(c)
            );
            for rate in EPISODE_RATES {
                assert_eq!(c.check_rate(rate).is_ok(), c.allows_rate(rate));
                assert!(c.allows_rate(c.nearest_rate(rate)));
            }
            assert!(
                !c.allows_rate(22_050),
                "{c:?} at a rate episodes do not use"
            );
        }
        assert_eq!(Codec::from_name("aac"), None);
        assert_eq!(Codec::from_path(Path::new("episode")), None);
        let err = Codec::Opus
            .check_rate(44_100)
            .expect_err("no 44.1 kHz Opus");
        assert!(
            err.to_string()
                .contains("Opus cannot be written at 44100 Hz"),
            "{err}"
        );
    }

    #[test]
    fn settings_are_checked_when_a_format_is_made() {
        let f = OutputFormat::new(Codec::Flac, SampleFormat::Pcm24, 0).expect("flac 24");
        assert_eq!(f, OutputFormat::Flac { bits: 24 });
        assert!(OutputFormat::new(Codec::Flac, SampleFormat::Float32, 0).is_err());
        assert!(OutputFormat::new(Codec::Mp3, SampleFormat::Pcm16, 16).is_err());
        assert!(OutputFormat::new(Codec::Opus, SampleFormat::Pcm16, 300).is_err());
        let mp3 = OutputFormat::new(Codec::Mp3, SampleFormat::Pcm16, 128).expect("mp3");
        assert_eq!(
            (mp3.codec(), mp3.extension(), mp3.mime()),
            (Codec::Mp3, "mp3", "audio/mpeg")
        );
    }
}
