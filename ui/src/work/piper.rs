//! A Piper voice dropped on the studio (`NAME.onnx` with `NAME.onnx.json` beside it), added to
//! the library as `banter voices add` adds one.
//!
//! Two steps, neither on the UI thread. The inspection reads and hashes a model of tens of
//! megabytes and loads its graph to prove it can speak, so it runs on a thread of its own
//! ([`start`]) rather than on the library's, whose autosaves must not wait for it; the insert
//! ([`add`]) runs on the library thread, which owns the connection and sees the names already
//! taken. A multi-speaker model adds one voice per speaker (`NAME/SPEAKER`), all or none, as
//! the CLI does. What the `.onnx.json` says of the dataset and licence is kept with the voice
//! and said to the author when it is added ([`PiperAdded::summary`]): Piper voices carry their
//! own licences.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use engine::library::{Library, LibraryError, NewPiperVoice};
use engine::voice::{inspect_piper_model, PiperModelInfo, VoiceError};

use super::{send, spawn, Waker};

/// What the inspection worker reports for one dropped model.
pub struct Inspected {
    /// The file as dropped.
    pub onnx: PathBuf,
    /// The speaker to cast once the voice is added (it was dropped on that speaker's row).
    pub speaker: Option<String>,
    pub result: Result<Box<PiperModelInfo>, VoiceError>,
}

/// A checked model for the library thread to name and add.
pub struct PiperAdd {
    /// The name asked for (from the file name); ` 2`, ` 3`... is appended when it is taken.
    pub name: String,
    pub info: PiperModelInfo,
    pub speaker: Option<String>,
}

/// What the library added.
pub struct PiperAdded {
    /// The voices' names: one, or one per speaker of the model.
    pub names: Vec<String>,
    pub info: PiperModelInfo,
    pub speaker: Option<String>,
}

impl PiperAdded {
    /// "added Piper voice joe (22050 Hz, `en_US`; dataset joe; licence: ...)".
    #[must_use]
    pub fn summary(&self) -> String {
        let config = &self.info.config;
        let voices = match self.names.as_slice() {
            [one] => format!("Piper voice {one}"),
            [first, .., last] => format!("{} Piper voices ({first} … {last})", self.names.len()),
            [] => "no Piper voice".to_owned(),
        };
        let language = config
            .language
            .as_deref()
            .or(Some(config.espeak_voice.as_str()).filter(|v| !v.is_empty()))
            .map(|l| format!(", {l}"))
            .unwrap_or_default();
        format!(
            "added {voices} ({} Hz{language}; dataset {}; licence: {})",
            config.sample_rate,
            config.dataset.as_deref().unwrap_or("not stated"),
            config
                .license
                .as_deref()
                .unwrap_or("not stated in the .onnx.json")
        )
    }
}

/// Inspects `onnx` on a worker thread and reports on `tx`.
pub fn start(
    onnx: PathBuf,
    speaker: Option<String>,
    tx: mpsc::SyncSender<Inspected>,
    waker: Waker,
) {
    let (tx2, waker2, onnx2, speaker2) = (tx.clone(), waker.clone(), onnx.clone(), speaker.clone());
    if let Err(e) = spawn("banter-piper", move || {
        let result = inspect_piper_model(&onnx).map(Box::new);
        send(
            &tx,
            &waker,
            Inspected {
                onnx,
                speaker,
                result,
            },
        );
    }) {
        send(
            &tx2,
            &waker2,
            Inspected {
                result: Err(VoiceError::PiperFile {
                    name: file_name(&onnx2),
                    path: onnx2.clone(),
                    reason: e.to_string(),
                }),
                onnx: onnx2,
                speaker: speaker2,
            },
        );
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// Piper's quality suffixes (`lang_REGION-name-quality`).
const QUALITIES: [&str; 4] = ["x_low", "low", "medium", "high"];

/// The voice's name from its file: `en_US-joe-medium.onnx` is `joe`; a file not named the
/// Piper way keeps its whole stem.
#[must_use]
pub fn name_from_file(onnx: &Path) -> String {
    let stem = onnx
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let parts: Vec<&str> = stem.split('-').collect();
    let locale = |s: &str| {
        let (lang, region) = s.split_once('_').unwrap_or((s, ""));
        (2..=3).contains(&lang.len())
            && lang.chars().all(|c| c.is_ascii_lowercase())
            && (region.is_empty()
                || (region.len() == 2 && region.chars().all(|c| c.is_ascii_uppercase())))
    };
    match parts.as_slice() {
        [lang, middle @ .., quality]
            if !middle.is_empty() && locale(lang) && QUALITIES.contains(quality) =>
        {
            middle.join("-")
        }
        _ => stem.trim().to_owned(),
    }
}

/// Adds `add`'s voices to `lib` under the first of `name`, `name 2`, `name 3`... whose names are
/// all free (on the library thread).
///
/// # Errors
/// The library refused the voices (a duplicate model, a database error).
pub fn add(lib: &Library, add: PiperAdd) -> Result<PiperAdded, LibraryError> {
    let taken: std::collections::HashSet<String> =
        lib.list_voices()?.into_iter().map(|v| v.name).collect();
    let base = add.name.trim();
    let base = if base.is_empty() { "piper" } else { base };
    let mut n = 1;
    let free = loop {
        let candidate = if n == 1 {
            base.to_owned()
        } else {
            format!("{base} {n}")
        };
        let voices = NewPiperVoice::for_model(&add.info, &candidate, "");
        if voices.iter().all(|v| !taken.contains(&v.name)) {
            break voices;
        }
        n += 1;
    };
    let added = lib.add_piper_voices(&free)?;
    Ok(PiperAdded {
        names: added.into_iter().map(|v| v.name).collect(),
        info: add.info,
        speaker: add.speaker,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_piper_file_names_or_the_whole_stem() {
        let name = |f: &str| name_from_file(Path::new(f));
        assert_eq!(name("/v/en_US-joe-medium.onnx"), "joe");
        assert_eq!(
            name("de_DE-thorsten_emotional-x_low.onnx"),
            "thorsten_emotional"
        );
        assert_eq!(name("en_GB-semaine-high.onnx"), "semaine");
        assert_eq!(name("fi-harri-low.onnx"), "harri");
        assert_eq!(name("my-voice.onnx"), "my-voice");
        assert_eq!(name("narrator.onnx"), "narrator");
        assert_eq!(name("en_US-joe-best.onnx"), "en_US-joe-best");
    }
}
