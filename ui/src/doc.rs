//! The open script: its text, the parse of that text (re-done on every edit: parsing is linear
//! and takes well under a millisecond for an episode), and the author's cast choices, which
//! override the script's own cast when rendering. What each source line became (spoken, or
//! skipped and why) is worked out with the parse ([`SourceMap`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use engine::script::{Episode, GenderGuess, ParseOptions, ScriptError};

mod cue_options;
mod cues;
mod source;
mod turns;

pub use cue_options::{cue_at, shown_values, CueOptions};
pub use cues::CueEditError;
pub use source::{SkippedRun, SourceMap, SourceRole};

/// A speaker's voice and speed as chosen in the cast panel.
#[derive(Debug, Clone, PartialEq)]
pub struct CastChoice {
    pub voice: String,
    pub speed: f32,
}

pub struct Document {
    /// Unique per document opened in this process (the undo history follows it).
    pub id: u64,
    /// Project name (in the library) and script name in messages.
    pub name: String,
    /// The file it was imported from, if any.
    pub path: Option<PathBuf>,
    pub text: String,
    pub parsed: Result<Episode, ScriptError>,
    /// What each line of `text` became in `parsed`; kept in step with it by [`Self::edited`].
    source: SourceMap,
    /// Overrides by speaker name.
    pub cast: BTreeMap<String, CastChoice>,
    /// Changed since the last save.
    pub dirty: bool,
    /// Changed (text or cast) since the last autosave was sent.
    pub unsaved_edits: bool,
    /// Bumped on every change (the timeline knows when its audio is stale).
    pub revision: u64,
}

pub const EXAMPLE: &str = "---\ntitle: A first episode\n---\n\
Alice: Welcome to the show! Today we're trying Banter, a studio for podcast scripts.\n\
Bob: Glad to be here. Type your lines on the left, pick voices, then press play.\n\
Alice: And when it sounds right, export it with captions and chapters.\n";

impl Document {
    #[must_use]
    pub fn new(name: &str, text: String, path: Option<PathBuf>) -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let parsed = parse(name, &text);
        let source = source_map(&parsed, &text);
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name: name.to_owned(),
            path,
            text,
            parsed,
            source,
            cast: BTreeMap::new(),
            dirty: false,
            unsaved_edits: false,
            revision: 0,
        }
    }

    /// Call after `text` changed.
    pub fn edited(&mut self) {
        self.parsed = parse(&self.name, &self.text);
        self.source = source_map(&self.parsed, &self.text);
        self.changed();
    }

    /// Gives `speaker` a voice and speed (the cast panel, the blend editor, a line's menu, a
    /// voice match). Saved and autosaved with the text.
    pub fn set_choice(&mut self, speaker: &str, choice: CastChoice) {
        self.cast.insert(speaker.to_owned(), choice);
        self.changed();
    }

    /// Work recovered after a crash: unsaved until the author saves or discards it.
    pub fn mark_recovered(&mut self) {
        self.changed();
    }

    /// Whether closing this document would lose work the author made: a change since it was
    /// opened or saved. A script just imported (its file is still on disk) or a project just
    /// loaded has none.
    #[must_use]
    pub fn needs_saving(&self) -> bool {
        self.dirty && self.revision > 0
    }

    /// Any change: unsaved, not yet autosaved, and a new revision (audio rendered before it is
    /// stale).
    fn changed(&mut self) {
        self.dirty = true;
        self.unsaved_edits = true;
        self.revision += 1;
    }

    /// The project's folder: the one its script was opened from, if it was.
    #[must_use]
    pub fn folder(&self) -> Option<PathBuf> {
        self.path
            .as_ref()
            .and_then(|p| p.parent())
            .filter(|p| !p.as_os_str().is_empty())
            .map(PathBuf::from)
    }

    /// The folder the project works in: its script's folder, else the working folder. The files
    /// its sound cues name are found from here (as `banter render -` finds them for a script read
    /// from nowhere), and its export goes here by default.
    #[must_use]
    pub fn project_dir(&self) -> PathBuf {
        self.folder()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// What each source line became in the parse (all blank when the script does not parse).
    #[must_use]
    pub fn source(&self) -> &SourceMap {
        &self.source
    }

    /// Speakers in order of appearance with their effective voice and speed.
    #[must_use]
    pub fn speakers(&self) -> Vec<(String, CastChoice)> {
        let Ok(ep) = &self.parsed else {
            return Vec::new();
        };
        ep.cast
            .members
            .iter()
            .map(|m| {
                let choice = self.cast.get(&m.name).cloned().unwrap_or(CastChoice {
                    voice: m.voice.clone(),
                    speed: m.speed.or(ep.settings.speed).unwrap_or(1.0),
                });
                (m.name.clone(), choice)
            })
            .collect()
    }

    /// How automatic casting guessed `speaker`'s voice from the name, while that voice is still
    /// the one it chose (a voice picked in the cast panel is the author's, not a guess).
    #[must_use]
    pub fn guess(&self, speaker: &str) -> Option<&GenderGuess> {
        if self.cast.contains_key(speaker) {
            return None;
        }
        let ep = self.parsed.as_ref().ok()?;
        ep.cast
            .members
            .iter()
            .find(|m| m.name == speaker)?
            .guess
            .as_ref()
    }

    /// The episode to render: the parse with the cast panel's choices applied.
    #[must_use]
    pub fn episode(&self) -> Option<Episode> {
        let mut ep = self.parsed.as_ref().ok()?.clone();
        for member in &mut ep.cast.members {
            if let Some(choice) = self.cast.get(&member.name) {
                member.voice.clone_from(&choice.voice);
                member.speed = Some(choice.speed);
            }
        }
        Some(ep)
    }

    /// The cast choices as the library stores them (speaker → `voice@speed`).
    #[must_use]
    pub fn cast_map(&self) -> BTreeMap<String, String> {
        self.cast
            .iter()
            .map(|(k, c)| (k.clone(), format!("{}@{}", c.voice, c.speed)))
            .collect()
    }

    /// Restores cast choices saved by [`Self::cast_map`].
    pub fn set_cast_map(&mut self, map: &BTreeMap<String, String>) {
        self.cast = map
            .iter()
            .map(|(k, v)| {
                let (voice, speed) = v
                    .rsplit_once('@')
                    .map_or((v.as_str(), 1.0), |(v, s)| (v, s.parse().unwrap_or(1.0)));
                (
                    k.clone(),
                    CastChoice {
                        voice: voice.to_owned(),
                        speed,
                    },
                )
            })
            .collect();
    }
}

fn parse(name: &str, text: &str) -> Result<Episode, ScriptError> {
    Episode::parse(name, text, &ParseOptions::default())
}

fn source_map(parsed: &Result<Episode, ScriptError>, text: &str) -> SourceMap {
    parsed.as_ref().map_or_else(
        |_| SourceMap::default(),
        |ep| SourceMap::of(ep, text.lines().count()),
    )
}

/// A stable, readable colour index for a speaker.
#[must_use]
pub fn speaker_index(doc: &Document, speaker: &str) -> usize {
    doc.parsed
        .as_ref()
        .ok()
        .and_then(|ep| ep.cast.members.iter().position(|m| m.name == speaker))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cast_choices_override_the_script_and_round_trip() {
        let mut doc = Document::new("t.txt", "Alice: Hi.\nBob: Hello.".into(), None);
        assert_eq!(doc.speakers().len(), 2);
        doc.cast.insert(
            "Bob".into(),
            CastChoice {
                voice: "bm_george".into(),
                speed: 1.2,
            },
        );
        let ep = doc.episode().expect("parses");
        let bob = ep.cast.get("Bob").expect("Bob is cast");
        assert_eq!(bob.voice, "bm_george");
        assert_eq!(bob.speed, Some(1.2));
        let map = doc.cast_map();
        let mut other = Document::new("t.txt", doc.text.clone(), None);
        other.set_cast_map(&map);
        assert_eq!(other.cast, doc.cast);
    }

    #[test]
    fn a_guessed_voice_is_a_guess_until_the_author_chooses() {
        let mut doc = Document::new("t.txt", "Tom: Hi.\nHost: Hello.".into(), None);
        let tom = doc.guess("Tom").map(GenderGuess::describe);
        assert_eq!(
            tom.as_deref(),
            Some("a male voice, guessed from the given name \"Tom\"")
        );
        assert_eq!(doc.guess("Host"), None, "nothing in the name: not a guess");
        doc.set_choice(
            "Tom",
            CastChoice {
                voice: "am_adam".into(),
                speed: 1.0,
            },
        );
        assert_eq!(doc.guess("Tom"), None);
    }

    #[test]
    fn an_edit_reparses_and_marks_dirty() {
        let mut doc = Document::new("t.txt", "Alice: Hi.".into(), None);
        assert!(doc.parsed.is_ok());
        doc.text = String::new();
        doc.edited();
        assert!(doc.parsed.is_err());
        assert!(doc.dirty && doc.unsaved_edits);
        assert_eq!(doc.revision, 1);
    }

    #[test]
    fn a_cast_choice_is_a_change_to_save_and_autosave() {
        let mut doc = Document::new("t.txt", "Alice: Hi.".into(), None);
        assert!(!doc.needs_saving());
        let choice = CastChoice {
            voice: "af_sky".into(),
            speed: 1.1,
        };
        doc.set_choice("Alice", choice.clone());
        assert_eq!(doc.cast.get("Alice"), Some(&choice));
        assert!(doc.dirty && doc.unsaved_edits && doc.needs_saving());
        assert_eq!(doc.revision, 1);
    }
}
