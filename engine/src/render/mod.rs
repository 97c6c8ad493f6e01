//! Episodes to finished audio: the podcast author's core job.
//!
//! [`render_episode`] takes a parsed [`Episode`] and writes the episode file, its captions, its
//! chapters/markers JSON and, on request, one stem per speaker:
//!
//! 1. [`plan`]: every line to sentences of phonemes (normalised text, lexicon and IPA applied)
//!    and silences, before any audio is made, so script errors surface first;
//!    the files its sound cues name are found and measured ([`mix::resolve`](fn@mix::resolve));
//! 2. [`first_pass`]: one Kokoro pass per sentence, trimmed and placed with natural gaps
//!    ([`timing`]), streamed to a raw file on disk while the loudness is measured;
//! 3. [`mix`]: the music beds (looped, crossfaded, ducked under the voices) and sound effects
//!    the cues ask for, as two more raw tracks beside the draft;
//! 4. [`master`]: the tracks mixed, gain to the loudness target (EBU R128, −16 LUFS),
//!    resampling, a true-peak limiter (−1 dBTP) and the encoder, block by block, with the stems
//!    in the same pass.
//!
//! Memory is bounded by a block plus the timeline, whatever the length. Every output is written
//! to a temporary file beside its target and renamed into place when complete, so a crash or
//! Ctrl-C (the `cancel` flag, checked between sentences and blocks) never leaves a half-written
//! file under the target's name; the raw draft is deleted on every path out.

mod ahead;
pub mod cache;
pub mod captions;
pub mod first_pass;
pub mod listening;
pub mod master;
pub mod mix;
pub mod plan;
mod reads_as;
pub mod timeline;
pub mod timing;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tempfile::NamedTempFile;

use crate::audio::{gain_for, AudioError, ChapterMark, Metadata, OutputFormat};
use crate::script::Episode;
use crate::speech::{SpeechRequest, SynthError, SAMPLE_RATE};
use crate::{Engine, Mode, SchedulerError};

pub use captions::{CaptionFormat, ChapterSpan, Cue, LineMark, Markers};
pub use plan::{plan_episode, InlineSound, LinePlan, PlannedWord, SentencePlan, SoundStep, Step};
pub use reads_as::reads_as;
pub use timeline::{Placed, Placement, SentenceSlot, SoundMark, Timeline};

/// Loudness target for spoken-word podcasts (EBU R128 / AES streaming recommendation).
pub const TARGET_LUFS: f64 = -16.0;
/// How close to the target the measured loudness of the finished file must come.
const LOUDNESS_TOLERANCE_LU: f64 = 0.2;
/// True-peak ceiling of the finished file.
pub const CEILING_DBTP: f64 = -1.0;

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A problem in the script found while planning: `at` is `FILE:LINE:COLUMN`.
    #[error("{at}: {message}")]
    Script { at: String, message: String },
    #[error(transparent)]
    Synth(#[from] SynthError),
    #[error(transparent)]
    Audio(#[from] AudioError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the script has no line to speak")]
    NothingToSay,
    /// A file the render would write beside the audio is the script itself (`ep.srt` rendered
    /// to `ep.wav` with SRT captions).
    #[error(
        "{}: is the script being rendered; writing the {what} there would replace it: choose \
         another output name, or no {what}",
        path.display()
    )]
    WouldReplaceScript { path: PathBuf, what: &'static str },
    /// The engine's queue refused or lost the work (full, shut down).
    #[error("scheduler: {0}")]
    Scheduler(Box<SchedulerError>),
    #[error("render cancelled; no output was written")]
    Cancelled,
    /// A sound file that could be read when the script was checked and no longer can.
    #[error(transparent)]
    Decode(#[from] crate::audio::decode::DecodeError),
    /// Something Banter itself got wrong, refused rather than written into the episode.
    #[error("internal error (a bug in Banter; please report it): {0}")]
    Internal(String),
}

impl From<SchedulerError> for RenderError {
    /// A model error keeps its kind (an input error stays one); the queue's own are `Scheduler`.
    fn from(e: SchedulerError) -> Self {
        match e {
            SchedulerError::Synth(e) => Self::Synth(e),
            other => Self::Scheduler(Box::new(other)),
        }
    }
}

impl RenderError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// True when the user's input was at fault (exit status 2).
    #[must_use]
    pub fn is_input_error(&self) -> bool {
        match self {
            Self::Script { .. }
            | Self::NothingToSay
            | Self::Decode(_)
            | Self::WouldReplaceScript { .. } => true,
            Self::Synth(e) => e.is_input_error(),
            _ => false,
        }
    }
}

/// Where rendering stands, reported after every sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub done_phonemes: usize,
    pub total_phonemes: usize,
    /// Seconds of episode rendered so far.
    pub audio_secs: f64,
    pub elapsed: Duration,
    /// The line being rendered, and how many there are.
    pub line: usize,
    pub lines: usize,
}

impl Progress {
    /// Fraction done, 0 to 1.
    #[must_use]
    pub fn fraction(&self) -> f64 {
        if self.total_phonemes == 0 {
            return 1.0;
        }
        self.done_phonemes as f64 / self.total_phonemes as f64
    }

    /// Time left at the pace so far.
    #[must_use]
    pub fn eta(&self) -> Option<Duration> {
        let f = self.fraction();
        (f > 0.0).then(|| self.elapsed.mul_f64((1.0 - f) / f))
    }
}

/// A sentence's 24 kHz audio and the frames the model gave every token of each Kokoro pass it
/// took (pads included), which say when each word is spoken ([`crate::words`]).
pub type SentenceAudio = crate::TimedAudio;

/// Where a sentence's audio comes from: the model, or a cache in front of it.
pub trait SentenceSource: Sync {
    /// The audio of one sentence of phonemes.
    fn sentence(
        &self,
        engine: &Engine,
        phonemes: &str,
        request: &SpeechRequest,
    ) -> Result<SentenceAudio, RenderError>;
}

/// From the model: one Kokoro pass per sentence, through the engine's scheduler as offline
/// work, so an export running beside the studio or the API yields to anyone listening (and a
/// CLI render, alone in its process, runs at full speed). Whole segments, exactly.
pub struct FromModel;

impl SentenceSource for FromModel {
    fn sentence(
        &self,
        engine: &Engine,
        phonemes: &str,
        request: &SpeechRequest,
    ) -> Result<SentenceAudio, RenderError> {
        let segments = engine.sentence_segments_for(phonemes, request)?;
        Ok(engine.render_segments_timed(segments, request, Mode::Offline)?)
    }
}

/// How to render.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    pub format: OutputFormat,
    /// Output sample rate (24000, or resampled: 44100, 48000).
    pub sample_rate: u32,
    pub target_lufs: f64,
    pub ceiling_dbtp: f64,
    /// Caption files to write beside the output.
    pub captions: Vec<CaptionFormat>,
    /// Write `STEM.chapters.json` beside the output.
    pub markers: bool,
    /// One file per speaker beside the output (`STEM.SPEAKER.EXT`), and the music and effects
    /// tracks (`STEM.music.EXT`, `STEM.sfx.EXT`) when the script has sound cues.
    pub stems: bool,
    /// Where the files the script's sound cues name are found (the script's folder); `None`:
    /// the folder of the episode's `source` when that names a file, else the current folder.
    pub sounds_dir: Option<PathBuf>,
    /// Tag title (defaults to the script's title, then the file stem).
    pub title: Option<String>,
    /// Tag artist (defaults to the speakers' names).
    pub artist: Option<String>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            format: OutputFormat::Wav(crate::audio::SampleFormat::Pcm16),
            sample_rate: SAMPLE_RATE,
            target_lufs: TARGET_LUFS,
            ceiling_dbtp: CEILING_DBTP,
            captions: vec![CaptionFormat::Srt],
            markers: true,
            stems: false,
            sounds_dir: None,
            title: None,
            artist: None,
        }
    }
}

/// What was written and what it measured.
#[derive(Debug, Clone)]
pub struct RenderReport {
    pub outputs: Vec<PathBuf>,
    pub duration_secs: f64,
    pub sentences: usize,
    pub lines: usize,
    pub loudness_lufs: Option<f64>,
    pub true_peak_dbtp: f64,
    /// Model and placement time (pass one) and the whole render.
    pub compute: Duration,
    pub total: Duration,
    /// Things worth knowing that did not stop the render (a damaged sound file, an overlap
    /// longer than its sound), each a sentence.
    pub notices: Vec<String>,
}

impl RenderReport {
    /// Seconds of audio per second of wall-clock time for the whole render (`shared/docs/
    /// streaming.md`'s xRT: above 1 is faster than real time).
    #[must_use]
    pub fn xrt(&self) -> f64 {
        self.duration_secs / self.total.as_secs_f64().max(1e-9)
    }
}

/// Renders `episode` to `dest` (and the files beside it that `options` asks for).
pub fn render_episode(
    engine: &Engine,
    source: &dyn SentenceSource,
    episode: &Episode,
    dest: &Path,
    options: &RenderOptions,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RenderReport, RenderError> {
    let started = std::time::Instant::now();
    let mut plans =
        plan::plan_episode_with(episode, &|spec| engine.piper_voice(spec).ok().flatten())?;
    if !plans.iter().any(LinePlan::speaks) {
        return Err(RenderError::NothingToSay);
    }
    refuse_to_replace_the_script(episode, dest, options)?;
    let mut notices = Vec::new();
    let sounds_dir = options
        .sounds_dir
        .clone()
        .unwrap_or_else(|| sounds_dir_of(episode));
    let files = mix::resolve(&mut plans, episode, &sounds_dir, &mut notices)?;
    let dir = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // What a killed render left in this folder goes before this one adds its own.
    let swept = crate::scratch::sweep(&dir);
    if !swept.is_empty() {
        notices.push(crate::scratch::describe(swept.len(), Some(&dir)));
    }
    let draft = first_pass::render_draft(
        engine,
        source,
        &plans,
        episode.settings.gap_secs,
        &dir,
        cancel,
        progress,
    )?;
    let tracks = if draft.sounds.is_empty() {
        None
    } else {
        Some(mix::mix_tracks(
            &draft.sounds,
            &files,
            &draft.speech,
            draft.samples,
            episode,
            &dir,
            &mix::open_file,
            cancel,
        )?)
    };
    let samples = tracks.as_ref().map_or(draft.samples, |t| t.samples);
    let duration = samples as f64 / f64::from(SAMPLE_RATE);
    let raw = master::Tracks {
        speech: draft.raw.path(),
        music: tracks
            .as_ref()
            .and_then(|t| t.music.as_ref())
            .map(NamedTempFile::path),
        sfx: tracks
            .as_ref()
            .and_then(|t| t.sfx.as_ref())
            .map(NamedTempFile::path),
    };
    let mut gain = draft
        .loudness
        .map_or(1.0, |l| gain_for(l, options.target_lufs));
    let chapters = chapter_spans(episode, &draft.lines, duration);
    let meta = Metadata {
        title: Some(title_of(episode, options, dest)),
        artist: Some(options.artist.clone().unwrap_or_else(|| {
            let names: Vec<&str> = episode
                .cast
                .members
                .iter()
                .map(|m| m.name.as_str())
                .collect();
            names.join(", ")
        })),
        chapters: chapters
            .iter()
            .map(|c| ChapterMark {
                title: c.title.clone(),
                start_secs: c.start,
                end_secs: c.end,
            })
            .collect(),
    };
    let spec = master::MasterSpec {
        format: options.format,
        sample_rate: options.sample_rate,
        gain,
        ceiling_dbtp: options.ceiling_dbtp,
        meta: &meta,
    };
    // The limiter takes back some of the loudness the gain gave (more for voices with sharp
    // peaks), so settle the gain on measuring runs first: they cost a fraction of a second per
    // minute of audio, and land the file within a few tenths of a LU of the target.
    let mut spec = spec;
    for _ in 0..4 {
        let probe = master::master(raw, &spec, None, &[], cancel)?;
        let Some(lufs) = probe.loudness_lufs else {
            break;
        };
        let error = options.target_lufs - lufs;
        tracing::debug!(
            gain,
            lufs,
            true_peak = probe.true_peak_dbtp,
            "loudness settling"
        );
        if error.abs() < LOUDNESS_TOLERANCE_LU {
            break;
        }
        gain *= 10f32.powf(error as f32 / 20.0);
        spec.gain = gain;
    }
    let mut outputs = vec![dest.to_path_buf()];
    let mut stems = Vec::new();
    if options.stems {
        stems = stem_files(
            episode,
            &draft.spans,
            &raw,
            dest,
            options.format.extension(),
        );
    }
    let stem_list: Vec<master::Stem<'_>> = stems
        .iter()
        .map(|(part, path)| master::Stem {
            part: part.clone(),
            dest: path,
        })
        .collect();
    let measured = master::master(raw, &spec, Some(dest), &stem_list, cancel)?;
    outputs.extend(stems.into_iter().map(|(_, path)| path));
    for format in &options.captions {
        let path = dest.with_extension(format.extension());
        write_atomic(&path, captions::captions(&draft.cues, *format).as_bytes())?;
        outputs.push(path);
    }
    if options.markers {
        let path = beside(dest, "chapters", "json");
        let title = meta.title.clone().unwrap_or_default();
        let markers = Markers {
            title: &title,
            duration,
            chapters: &chapters,
            lines: &draft.lines,
            sounds: tracks.as_ref().map_or(&[], |t| &t.spans),
        };
        let json = serde_json::to_vec_pretty(&markers).map_err(|e| RenderError::Io {
            path: path.clone(),
            source: e.into(),
        })?;
        write_atomic(&path, &json)?;
        outputs.push(path);
    }
    Ok(RenderReport {
        outputs,
        duration_secs: duration,
        sentences: draft.cues.len(),
        lines: draft.lines.len(),
        loudness_lufs: measured.loudness_lufs,
        true_peak_dbtp: measured.true_peak_dbtp,
        compute: draft.compute,
        total: started.elapsed(),
        notices,
    })
}

/// The folder an episode's sound files are named from: its script's.
fn sounds_dir_of(episode: &Episode) -> PathBuf {
    let source = Path::new(&episode.source);
    match source.parent() {
        Some(p) if !p.as_os_str().is_empty() && !episode.source.starts_with('<') => p.into(),
        _ => PathBuf::from("."),
    }
}

/// The stems `--stems` writes: each speaker's lines, then the music and effects tracks when
/// there are any (a speaker whose name would take `music` or `sfx` gets `-voice` after it).
fn stem_files(
    episode: &Episode,
    spans: &[(String, std::ops::Range<u64>)],
    raw: &master::Tracks<'_>,
    dest: &Path,
    ext: &str,
) -> Vec<(master::Part, PathBuf)> {
    let mut stems = Vec::new();
    for member in &episode.cast.members {
        let keep: Vec<_> = spans
            .iter()
            .filter(|(s, _)| *s == member.name)
            .map(|(_, r)| r.clone())
            .collect();
        if keep.is_empty() {
            continue;
        }
        stems.push((
            master::Part::Speech(keep),
            speaker_stem(dest, &member.name, ext),
        ));
    }
    if raw.music.is_some() {
        stems.push((master::Part::Music, beside(dest, "music", ext)));
    }
    if raw.sfx.is_some() {
        stems.push((master::Part::Sfx, beside(dest, "sfx", ext)));
    }
    stems
}

/// Where `--stems` writes `speaker`'s lines beside `dest` (`STEM.SPEAKER.EXT`; a speaker whose
/// name would take `music` or `sfx` gets `-voice` after it).
#[must_use]
pub fn speaker_stem(dest: &Path, speaker: &str, ext: &str) -> PathBuf {
    let mut tag = slug(speaker);
    if tag == "music" || tag == "sfx" {
        tag.push_str("-voice");
    }
    beside(dest, &tag, ext)
}

fn title_of(episode: &Episode, options: &RenderOptions, dest: &Path) -> String {
    options
        .title
        .clone()
        .or_else(|| episode.settings.title.clone())
        .unwrap_or_else(|| {
            dest.file_stem()
                .map_or_else(|| "Episode".into(), |s| s.to_string_lossy().into_owned())
        })
}

/// Chapters from the script's headings; the first starts at 0 so the whole episode is covered.
fn chapter_spans(episode: &Episode, lines: &[LineMark], duration: f64) -> Vec<ChapterSpan> {
    let mut spans: Vec<ChapterSpan> = Vec::new();
    for chapter in &episode.chapters {
        let start = lines
            .iter()
            .find(|l| l.line >= chapter.first_line)
            .map_or(duration, |l| l.start);
        if let Some(prev) = spans.last_mut() {
            prev.end = start;
        }
        let start = if spans.is_empty() { 0.0 } else { start };
        spans.push(ChapterSpan {
            title: chapter.title.clone(),
            start,
            end: duration,
        });
    }
    spans.retain(|c| c.end > c.start);
    spans
}

/// `dir/STEM.TAG.EXT` for `dir/STEM.ANY`.
#[must_use]
pub fn beside(dest: &Path, tag: &str, ext: &str) -> PathBuf {
    let stem = dest
        .file_stem()
        .map_or_else(|| "episode".into(), |s| s.to_string_lossy().into_owned());
    dest.with_file_name(format!("{stem}.{tag}.{ext}"))
}

/// Refuses before any work when a caption or markers file would land on the script's own file:
/// a transcript exported as `ep.srt`, rendered to `ep.wav` with SRT captions, would lose the
/// author's script to the captions.
fn refuse_to_replace_the_script(
    episode: &Episode,
    dest: &Path,
    options: &RenderOptions,
) -> Result<(), RenderError> {
    let Ok(script) = std::fs::canonicalize(&episode.source) else {
        return Ok(()); // standard input, or a script that is not a file
    };
    let captions = options
        .captions
        .iter()
        .map(|f| (dest.with_extension(f.extension()), "captions"));
    let markers = options
        .markers
        .then(|| (beside(dest, "chapters", "json"), "markers"));
    for (path, what) in captions.chain(markers) {
        if std::fs::canonicalize(&path).is_ok_and(|p| p == script) {
            return Err(RenderError::WouldReplaceScript { path, what });
        }
    }
    Ok(())
}

/// A speaker's name made safe for a file name: letters and digits kept (any script), the rest
/// turned into single dashes.
#[must_use]
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_owned();
    if out.is_empty() {
        "speaker".into()
    } else {
        out
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RenderError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(&crate::scratch::prefix("side"))
        // A finished file gets the user's usual permissions (0666 less the umask), not a
        // temporary's private 0600.
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| RenderError::io(dir, e))?;
    tmp.write_all(bytes).map_err(|e| RenderError::io(path, e))?;
    tmp.persist(path)
        .map_err(|e| RenderError::io(path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(slug("Dr. Ada Lovelace"), "dr-ada-lovelace");
        assert_eq!(slug("🎙️ Host"), "host");
        assert_eq!(slug("שרה"), "שרה");
        assert_eq!(slug("../.."), "speaker");
    }

    #[test]
    fn captions_never_replace_the_script() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("ep.srt");
        let text = "1\n00:00:01,000 --> 00:00:02,000\nHOST: Hi.\n";
        std::fs::write(&script, text).unwrap();
        let episode = Episode::parse(
            &script.to_string_lossy(),
            text,
            &crate::script::ParseOptions::default(),
        )
        .unwrap();
        let with = |captions: Vec<CaptionFormat>, markers: bool| RenderOptions {
            captions,
            markers,
            ..RenderOptions::default()
        };
        let srt = with(vec![CaptionFormat::Srt], true);
        let err =
            refuse_to_replace_the_script(&episode, &dir.path().join("ep.wav"), &srt).unwrap_err();
        assert!(
            matches!(
                err,
                RenderError::WouldReplaceScript {
                    what: "captions",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.is_input_error());
        let vtt = with(vec![CaptionFormat::Vtt], true);
        assert!(refuse_to_replace_the_script(&episode, &dir.path().join("ep.wav"), &vtt).is_ok());
        let elsewhere = dir.path().join("ep.episode.wav");
        assert!(refuse_to_replace_the_script(&episode, &elsewhere, &srt).is_ok());
        // Markers too: a script named like the markers file.
        let json = dir.path().join("ep.chapters.json");
        std::fs::write(&json, text).unwrap();
        let episode = Episode::parse(
            &json.to_string_lossy(),
            text,
            &crate::script::ParseOptions::default(),
        )
        .unwrap();
        let err =
            refuse_to_replace_the_script(&episode, &dir.path().join("ep.mp3"), &vtt).unwrap_err();
        assert!(matches!(
            err,
            RenderError::WouldReplaceScript {
                what: "markers",
                ..
            }
        ));
    }

    #[test]
    fn beside_names() {
        let p = Path::new("/x/ep.final.wav");
        assert_eq!(
            beside(p, "chapters", "json"),
            Path::new("/x/ep.final.chapters.json")
        );
    }

    #[test]
    fn eta_from_pace() {
        let p = Progress {
            done_phonemes: 25,
            total_phonemes: 100,
            audio_secs: 10.0,
            elapsed: Duration::from_secs(5),
            line: 0,
            lines: 4,
        };
        assert_eq!(p.eta(), Some(Duration::from_secs(15)));
    }
}
