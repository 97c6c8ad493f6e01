//! The export dialog's state: its settings (saved with the project: rate, stems, destination),
//! whether it is open, and the running export's progress and result. The export itself runs in
//! [`crate::work::export`]; [`crate::Studio::apply`] starts and cancels it.

use std::path::PathBuf;

use engine::audio::{Codec, OutputFormat, SampleFormat};
use engine::render::{CaptionFormat, Progress, RenderOptions, RenderReport};

use crate::doc::Document;

/// Opus' bit rate for exports: speech at 48 kbit/s VBR is transparent and a quarter of MP3's.
pub const OPUS_KBPS: u32 = 48;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Captions {
    None,
    Srt,
    Vtt,
    Both,
    /// Word timing: `WebVTT` marking each word as it is spoken, and SRT in short phrases.
    Words,
}

/// What the author chooses in the dialog (the view edits a copy and sends it back with
/// [`crate::command::Command::SetExportSettings`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportSettings {
    /// The engine's codec; its rules (which rates it has) are the engine's.
    pub format: Codec,
    pub rate: u32,
    pub captions: Captions,
    pub markers: bool,
    pub stems: bool,
    /// Destination file (edited as text).
    pub path: String,
}

impl Default for ExportSettings {
    fn default() -> Self {
        Self {
            format: Codec::Wav,
            rate: 24_000,
            captions: Captions::Srt,
            markers: true,
            stems: false,
            path: String::new(),
        }
    }
}

impl ExportSettings {
    /// Moves a rate the format does not have to one it has (Opus: 44.1 kHz becomes 48 kHz).
    pub fn normalise(&mut self) {
        self.rate = self.format.nearest_rate(self.rate);
    }

    #[must_use]
    pub fn options(&self) -> RenderOptions {
        RenderOptions {
            format: match self.format {
                Codec::Wav => OutputFormat::Wav(SampleFormat::Pcm16),
                Codec::Flac => OutputFormat::Flac { bits: 16 },
                Codec::Mp3 => OutputFormat::Mp3 { kbps: 128 },
                Codec::Opus => OutputFormat::Opus { kbps: OPUS_KBPS },
            },
            sample_rate: self.format.nearest_rate(self.rate),
            captions: match self.captions {
                Captions::None => vec![],
                Captions::Srt => vec![CaptionFormat::Srt],
                Captions::Vtt => vec![CaptionFormat::Vtt],
                Captions::Both => vec![CaptionFormat::Srt, CaptionFormat::Vtt],
                Captions::Words => vec![CaptionFormat::WordSrt, CaptionFormat::WordVtt],
            },
            markers: self.markers,
            stems: self.stems,
            ..RenderOptions::default()
        }
    }

    #[must_use]
    pub fn extension(&self) -> &'static str {
        self.format.name()
    }

    /// Where `doc` exports by default: beside its script (or in the working directory), named
    /// after the project, with this format's extension.
    #[must_use]
    pub fn default_path(&self, doc: &Document) -> PathBuf {
        let dir = doc.project_dir();
        dir.join(format!(
            "{}.{}",
            engine::render::slug(&doc.name),
            self.extension()
        ))
    }
}

#[derive(Default)]
pub struct ExportDialog {
    pub open: bool,
    pub settings: ExportSettings,
    pub progress: Option<Progress>,
    pub finished: Option<Result<RenderReport, crate::work::export::ExportError>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opus_exports_at_a_rate_opus_has() {
        let mut settings = ExportSettings {
            format: Codec::Opus,
            rate: 44_100,
            ..ExportSettings::default()
        };
        let options = settings.options();
        assert_eq!(options.format, OutputFormat::Opus { kbps: OPUS_KBPS });
        assert_eq!(options.sample_rate, 48_000, "Opus has no 44.1 kHz");
        assert_eq!(settings.extension(), "opus");
        settings.rate = 24_000;
        assert_eq!(settings.options().sample_rate, 24_000);
        settings.format = Codec::Mp3;
        settings.rate = 44_100;
        assert_eq!(
            settings.options().sample_rate,
            44_100,
            "other formats keep 44.1 kHz"
        );
        settings.format = Codec::Opus;
        settings.normalise();
        assert_eq!(settings.rate, 48_000);
    }

    #[test]
    fn word_captions_are_word_vtt_and_phrase_srt() {
        let settings = ExportSettings {
            captions: Captions::Words,
            ..ExportSettings::default()
        };
        assert_eq!(
            settings.options().captions,
            vec![CaptionFormat::WordSrt, CaptionFormat::WordVtt]
        );
    }
}
