//! The sound beside the voices: the music beds and sound effects a script's cues ask for
//! (`[bed: FILE]`, `[sound: FILE]`, FORMATS.md), made into two tracks the master mixes with
//! the speech.
//!
//! Why its own stage between the draft and the master: the voices are placed first (their
//! lengths are only known once rendered), which says where every cue lands and where the
//! speech that ducks the beds is; then [`mix_tracks`] writes the music track ([`bed`], ducked
//! by [`duck`]) and the effects track ([`sfx`]) beside the draft as raw 24 kHz files, a block at
//! a time, decoding each file as it plays ([`ClipStream`]). The master then reads the three in
//! step, so the whole mix goes through one loudness normalisation and one true-peak limiter, and
//! the stems it writes share the mix's gain sample for sample (they add up to the mix).
//! Memory is a block per track and per sound playing, whatever the length of the episode or
//! its files.

pub mod bed;
pub mod duck;
pub mod live;
pub mod resolve;
pub mod sfx;

use std::io::{BufWriter, Write as _};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use tempfile::NamedTempFile;

use crate::audio::decode::{ClipStream, DecodeError};
use crate::script::{CueAction, Episode};
use crate::speech::SAMPLE_RATE;

use super::timeline::{samples, SoundMark};
use super::RenderError;
use bed::{BedAction, BedEvent, Beds};
use duck::Ducker;
pub use live::LiveMix;
pub use resolve::{resolve, SoundFiles};
use sfx::{SoundEvent, Sounds};

/// Where the mix reads a clip: a file in a render, anything at all in a test.
pub trait ClipSource {
    /// Appends up to `max` samples at the model's rate to `out`; how many (0: the end).
    fn read(&mut self, out: &mut Vec<f32>, max: usize) -> Result<usize, DecodeError>;
}

impl ClipSource for ClipStream {
    fn read(&mut self, out: &mut Vec<f32>, max: usize) -> Result<usize, DecodeError> {
        ClipStream::read(self, out, max)
    }
}

/// Opens a clip, looping (a bed) or not (a sound).
pub type Opener<'a> = dyn Fn(&Path, bool) -> Result<Box<dyn ClipSource>, RenderError> + 'a;

/// Opens files at the model's rate.
pub fn open_file(path: &Path, looping: bool) -> Result<Box<dyn ClipSource>, RenderError> {
    Ok(Box::new(
        ClipStream::open(path, SAMPLE_RATE)?.looping(looping),
    ))
}

/// Samples per block of the tracks.
const BLOCK: usize = 1 << 14;

/// A cue on the finished timeline, for the markers JSON (seconds from the start).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SoundSpan {
    /// `sound`, `bed` or `bed_off`.
    pub kind: &'static str,
    /// The file as the script names it (none for `bed_off`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub start: f64,
    /// Where it falls silent: a sound's last sample, a bed's fade-out done.
    pub end: f64,
    /// Index of the script line (0-based) and where the cue was written (1-based).
    pub line: usize,
    pub source_line: usize,
    pub source_column: usize,
}

/// The music and effects tracks of an episode (raw f32 at the model's rate, `samples` long),
/// and where each cue sounds.
pub struct SoundTracks {
    pub music: Option<NamedTempFile>,
    pub sfx: Option<NamedTempFile>,
    pub samples: u64,
    pub spans: Vec<SoundSpan>,
}

/// Builds the tracks for the cues `marks` placed, beside the draft in `dir`. `speech` is where
/// the voices sound (it ducks the beds) and `speech_len` the draft's length; the episode lasts
/// until the last sound has finished.
#[allow(clippy::too_many_arguments)] // the stage's inputs, each from a different place
pub fn mix_tracks(
    marks: &[SoundMark],
    files: &SoundFiles,
    speech: &[Range<u64>],
    speech_len: u64,
    episode: &Episode,
    dir: &Path,
    open: &Opener<'_>,
    cancel: &AtomicBool,
) -> Result<SoundTracks, RenderError> {
    let mut sounds = Vec::new();
    let mut beds = Vec::new();
    for mark in marks {
        match event(mark, files, episode)? {
            Event::Sound(e) => sounds.push(e),
            Event::Bed(e) => beds.push(e),
        }
    }
    let mut effects = Sounds::new(sounds, open);
    let total = speech_len.max(effects.end());
    let spans = spans(marks, files, total);
    let sfx = if marks
        .iter()
        .any(|m| matches!(m.cue.action, CueAction::Sound { .. }))
    {
        Some(write_track(dir, "sfx", total, cancel, |at, out| {
            effects.fill(at, out)
        })?)
    } else {
        None
    };
    let music = if beds.is_empty() {
        None
    } else {
        let mut music = Beds::new(beds, Ducker::new(speech, SAMPLE_RATE), total, open);
        Some(write_track(dir, "music", total, cancel, |at, out| {
            music.fill(at, out)
        })?)
    };
    Ok(SoundTracks {
        music,
        sfx,
        samples: total,
        spans,
    })
}

/// What a placed cue asks of the mix.
enum Event {
    Sound(SoundEvent),
    Bed(BedEvent),
}

/// The mix's event for the cue `mark` placed, its file found in `files` (an error at the cue
/// when it is not there: the cue was not checked before the render).
fn event(mark: &SoundMark, files: &SoundFiles, episode: &Episode) -> Result<Event, RenderError> {
    let path = |file: &str| {
        files
            .get(file)
            .map(|f| f.path.clone())
            .ok_or_else(|| RenderError::Script {
                at: episode.locate(mark.cue.position),
                message: format!("`{file}` was not checked before the render"),
            })
    };
    Ok(match &mark.cue.action {
        CueAction::Sound {
            file,
            volume_db,
            fade_secs,
            ..
        } => Event::Sound(SoundEvent {
            at: mark.at,
            path: path(file)?,
            len: files.get(file).and_then(|f| f.samples).unwrap_or(0),
            gain: gain(*volume_db),
            fade: samples(*fade_secs) as u64,
        }),
        CueAction::Bed {
            file,
            volume_db,
            fade_secs,
            duck_db,
        } => Event::Bed(BedEvent {
            at: mark.at,
            action: BedAction::Start {
                path: path(file)?,
                gain: gain(*volume_db),
                fade: samples(*fade_secs) as u64,
                duck_db: *duck_db,
            },
        }),
        CueAction::BedOff { fade_secs } => Event::Bed(BedEvent {
            at: mark.at,
            action: BedAction::Off {
                fade: samples(*fade_secs) as u64,
            },
        }),
    })
}

/// A level in dB as a gain.
fn gain(db: f32) -> f32 {
    10f32.powf(db / 20.0)
}

/// Writes `total` samples of a track, a block at a time, to a raw file in `dir`.
fn write_track(
    dir: &Path,
    name: &str,
    total: u64,
    cancel: &AtomicBool,
    mut fill: impl FnMut(u64, &mut [f32]) -> Result<(), RenderError>,
) -> Result<NamedTempFile, RenderError> {
    let raw = tempfile::Builder::new()
        .prefix(&crate::scratch::prefix("render"))
        .suffix(&format!(".{name}.raw"))
        .tempfile_in(dir)
        .map_err(|e| RenderError::io(dir, e))?;
    let path = raw.path().to_path_buf();
    let mut out = BufWriter::with_capacity(1 << 16, raw.as_file());
    let mut block = vec![0.0f32; BLOCK];
    let mut bytes = Vec::with_capacity(BLOCK * 4);
    let mut at = 0u64;
    while at < total {
        if cancel.load(Ordering::Relaxed) {
            return Err(RenderError::Cancelled);
        }
        let n = usize::try_from(total - at).map_or(BLOCK, |left| left.min(BLOCK));
        fill(at, &mut block[..n])?;
        bytes.clear();
        for s in &block[..n] {
            bytes.extend_from_slice(&s.to_le_bytes());
        }
        out.write_all(&bytes)
            .map_err(|e| RenderError::io(&path, e))?;
        at += n as u64;
    }
    out.flush().map_err(|e| RenderError::io(&path, e))?;
    drop(out);
    Ok(raw)
}

/// Each cue's start and end on the finished timeline: a bed ends when the next bed cue's fade
/// (a crossfade, or `[bed: off]`) is done, or with the episode.
fn spans(marks: &[SoundMark], files: &SoundFiles, total: u64) -> Vec<SoundSpan> {
    let secs = |s: u64| s.min(total) as f64 / f64::from(SAMPLE_RATE);
    let mut order: Vec<&SoundMark> = marks.iter().collect();
    order.sort_by_key(|m| m.at);
    order
        .iter()
        .enumerate()
        .map(|(i, mark)| {
            let (kind, file, end) = match &mark.cue.action {
                CueAction::Sound { file, .. } => {
                    let len = files.get(file).and_then(|f| f.samples).unwrap_or(0);
                    ("sound", Some(file.clone()), mark.at + len)
                }
                CueAction::Bed { file, .. } => {
                    let end = order[i + 1..]
                        .iter()
                        .find_map(|m| match &m.cue.action {
                            CueAction::Bed { fade_secs, .. } | CueAction::BedOff { fade_secs } => {
                                Some(m.at + samples(*fade_secs) as u64)
                            }
                            CueAction::Sound { .. } => None,
                        })
                        .unwrap_or(total);
                    ("bed", Some(file.clone()), end)
                }
                CueAction::BedOff { fade_secs } => {
                    ("bed_off", None, mark.at + samples(*fade_secs) as u64)
                }
            };
            SoundSpan {
                kind,
                file,
                start: secs(mark.at),
                end: secs(end),
                line: mark.line,
                source_line: mark.cue.position.line,
                source_column: mark.cue.position.column,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
