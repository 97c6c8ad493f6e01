//! [`Studio::apply`]: the one place where what the author asks for changes the studio's state.
//! Views and shortcuts only emit [`Command`]s (see [`crate::command`] for why); each arm here
//! is short and defers to the rule's owner: [`crate::doc::Document`] for the script and the
//! cast, [`crate::history`] for undo, the `Studio` methods that start workers for playback,
//! previews, exports and the model. Script and cast changes are shown to the undo history as
//! soon as they are made.

use crate::app::{EngineState, Studio};
use crate::command::Command;
use crate::doc::Document;
use crate::state::dialogs::{Leaving, UnsavedAnswer};
use crate::state::EditorMode;
use crate::work::library::LibCmd;

impl Studio {
    /// Applies every command in `commands` in order, leaving it empty.
    pub(crate) fn apply_all(&mut self, commands: &mut Vec<Command>) {
        for command in commands.drain(..) {
            self.apply(command);
        }
    }

    /// Makes the change `command` asks for.
    pub fn apply(&mut self, command: Command) {
        match command {
            Command::EditText(text) => self.edit_document(|doc| {
                doc.text = text;
                doc.edited();
            }),
            Command::EditLine { line, text } => {
                self.edit_document(|doc| doc.replace_turn(line, &text));
            }
            Command::SetLineRate { line, speed } => {
                let mut result = Ok(());
                self.edit_document(|doc| result = doc.set_turn_rate(line, speed));
                if let Err(e) = result {
                    self.say(e.to_string());
                }
            }
            Command::InsertCue { line, file, bed } => {
                let mut result = Ok(String::new());
                self.edit_document(|doc| result = doc.insert_cue(line, &file, bed));
                match result {
                    Ok(cue) => self.say(format!("added {cue} before line {}", line + 1)),
                    Err(e) => self.say(format!("not added: {e}")),
                }
            }
            Command::SetCueOptions { at, options } => {
                let mut result = Ok(String::new());
                self.edit_document(|doc| result = doc.set_cue_options(at, &options));
                match result {
                    Ok(cue) => self.say(format!("line {}: {cue}", at.line)),
                    Err(e) => self.say(format!("cue not changed: {e}")),
                }
            }
            Command::SetCast { speaker, choice } => {
                self.edit_document(|doc| doc.set_choice(&speaker, choice));
            }
            Command::Undo => self.undo(),
            Command::Redo => self.redo(),
            Command::Select(line) => self.selected = line,

            Command::NewProject => self.leave(Leaving::NewProject),
            Command::ShowOpen => self.show_open(),
            Command::ShowOpenPath => self.show_open_path(None),
            Command::DismissOpenError => self.dialogs.open_error = None,
            Command::SetOpenPath(path) => {
                if self.dialogs.open.is_some() {
                    self.dialogs.open = Some(path);
                }
            }
            Command::CloseOpen => {
                self.dialogs.open = None;
                self.dialogs.no_dialog = None;
            }
            Command::Import(path) => self.import(&path),
            Command::LoadProject(name) => self.library_load(&name),
            Command::Save => {
                self.save();
            }
            Command::ShowSaveAs => self.dialogs.save_as = Some(self.doc.name.clone()),
            Command::SetSaveAsName(name) => {
                if self.dialogs.save_as.is_some() {
                    self.dialogs.save_as = Some(name);
                }
            }
            Command::CloseSaveAs => self.dialogs.save_as = None,
            Command::SaveAs(name) => {
                let old = std::mem::replace(&mut self.doc.name, name.trim().to_owned());
                if old != self.doc.name {
                    // The work autosaved under the old name is in the project now.
                    self.library.send(LibCmd::ClearAutosave(old));
                }
                self.save();
                self.dialogs.save_as = None;
            }
            Command::RecoverAutosave => {
                if self.recovery.is_empty() {
                    return;
                }
                let first = self.recovery.remove(0);
                self.stop();
                let mut doc = Document::new(&first.project_name, first.script, None);
                doc.set_cast_map(&first.cast);
                doc.mark_recovered();
                self.doc = doc;
            }
            Command::DiscardAutosave => {
                if self.recovery.is_empty() {
                    return;
                }
                let first = self.recovery.remove(0);
                self.library.send(LibCmd::ClearAutosave(first.project_name));
            }
            Command::ReplaceScript(open) => {
                if let Some(incoming) = self.incoming.take() {
                    if open {
                        self.autosave_now();
                        self.replace_document(incoming);
                    }
                }
            }
            Command::RetryLoad => self.retry_load(),
            Command::Quit => self.leave(Leaving::Quit),
            Command::AnswerUnsaved(answer) => self.answer_unsaved(answer),

            Command::TogglePlay => self.toggle_play(),
            Command::Stop => self.stop(),
            Command::Seek(sample) => self.seek(sample),
            Command::SeekWord { line, at } => self.seek_word(line, at),
            Command::PlayFromWord { line, at } => self.play_from_word(line, at),
            Command::PreviewSpeaker(speaker) => self.preview_speaker(&speaker),
            Command::PreviewVoice {
                speaker,
                voice,
                speed,
            } => self.preview_voice(&speaker, &voice, speed),

            Command::ShowExport => {
                self.export.open = true;
                self.fill_export_path();
            }
            Command::HideExport => self.export.open = false,
            Command::SetExportSettings(mut settings) => {
                settings.normalise();
                self.export.settings = settings;
                self.fill_export_path();
            }
            Command::StartExport => self.start_export(),
            Command::CancelExport => {
                if let Some(job) = &self.tasks.export {
                    job.cancel();
                }
            }
            Command::ShowInFolder(dir) => {
                if let Err(e) = std::process::Command::new("xdg-open").arg(&dir).spawn() {
                    self.say(format!("cannot open {}: {e}", dir.display()));
                }
            }

            Command::MatchVoice { speaker, clip } => self.start_voice_match(speaker, clip),
            Command::TuneVoice { speaker, clip } => self.start_voice_tune(speaker, clip),
            Command::CancelTune { speaker } => self.cancel_voice_tune(&speaker),
            Command::AddPiperVoice { onnx, speaker } => self.start_piper_add(onnx, speaker),

            Command::OpenFind => self.open_find(),
            Command::CloseFind => self.find.open = false,
            Command::SetFindQuery(query) => {
                self.find.query = query;
                self.find.current = 0;
            }
            Command::FindStep(forward) => self.find_step(forward),
            Command::FindFocus(focus) => self.find.focus = focus,
            Command::FindScrolled => self.find.scroll_to = None,

            Command::SetMode(mode) => self.mode = mode,
            Command::ToggleMode => {
                self.mode = match self.mode {
                    EditorMode::Lines => EditorMode::Raw,
                    EditorMode::Raw => EditorMode::Lines,
                };
            }
            Command::ToggleTheme => self.dark = !self.dark,
            Command::SetHelp(show) => self.dialogs.help = show,
            Command::ToggleHelp => self.dialogs.help = !self.dialogs.help,
            Command::Dismiss => {
                if self.dialogs.open_error.is_some() {
                    self.dialogs.open_error = None;
                } else if self.dialogs.unsaved.is_some() {
                    self.dialogs.unsaved = None;
                } else if self.dialogs.help {
                    self.dialogs.help = false;
                } else if self.export.open && self.tasks.export.is_none() {
                    self.export.open = false;
                } else {
                    self.stop();
                }
            }
            Command::Say(text) => self.say(text),

            Command::RefreshOutputs => self.refresh_outputs(),
            Command::ChooseOutput(name) => self.choose_output(&name),
            Command::SwitchApi(on) => {
                if !on {
                    self.api.stop();
                } else if let EngineState::Ready(engine) = &self.engine {
                    self.api.start(engine.engine.clone());
                }
            }
        }
    }

    /// Changes the document through `change`, shows the result to the undo history (so the
    /// change is one undo step however many frames pass before the next) and hands it to the
    /// autosave at once.
    fn edit_document(&mut self, change: impl FnOnce(&mut Document)) {
        self.history.observe(&self.doc);
        change(&mut self.doc);
        self.history.observe(&self.doc);
        self.autosave_now();
    }

    /// Carries out the author's answer to "Save changes?" and then what was asked for.
    fn answer_unsaved(&mut self, answer: UnsavedAnswer) {
        let Some(leaving) = self.dialogs.unsaved.take() else {
            return;
        };
        match answer {
            UnsavedAnswer::Cancel => return,
            UnsavedAnswer::Save => {
                if !self.save() {
                    return;
                }
            }
            UnsavedAnswer::Discard => {
                self.doc.unsaved_edits = false;
                self.doc.dirty = false;
                self.library
                    .send(LibCmd::ClearAutosave(self.doc.name.clone()));
            }
        }
        self.go_on(leaving);
    }

    /// An open export dialog with no destination gets the default one.
    fn fill_export_path(&mut self) {
        if self.export.open && self.export.settings.path.is_empty() {
            self.export.settings.path = self
                .export
                .settings
                .default_path(&self.doc)
                .display()
                .to_string();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::MockOut;
    use crate::doc::CastChoice;
    use crate::StudioConfig;
    use eframe::egui;

    /// A studio with no model and a private library (the model load fails at once).
    fn studio(dir: &tempfile::TempDir) -> Studio {
        studio_playing_on(dir, Box::new(MockOut::new()))
    }

    /// [`studio`] with `audio` as its output.
    fn studio_playing_on(
        dir: &tempfile::TempDir,
        audio: Box<dyn crate::audio::AudioOut>,
    ) -> Studio {
        let config = StudioConfig {
            models: Some(dir.path().join("no-models")),
            library: Some(dir.path().join("library.sqlite")),
            fetch_models: false,
            ..StudioConfig::default()
        };
        let mut studio = Studio::new(&egui::Context::default(), config, audio);
        studio.apply(Command::EditText("Ann: One.\nBen: Two.\n".into()));
        studio
    }

    #[test]
    fn an_edit_marks_the_document_edited_and_can_be_undone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut s = studio(&dir);
        let revision = s.doc.revision;
        s.apply(Command::EditText("Ann: One.\nBen: Two, three.\n".into()));
        assert!(s.doc.dirty && s.doc.needs_saving());
        assert!(!s.doc.unsaved_edits, "handed to the autosave at once");
        assert_eq!(s.doc.revision, revision + 1);
        assert!(s.doc.parsed.is_ok(), "reparsed");
        s.apply(Command::EditLine {
            line: 0,
            text: "Ann: Uno.".into(),
        });
        assert_eq!(s.doc.text, "Ann: Uno.\nBen: Two, three.\n");
        s.apply(Command::Undo);
        assert_eq!(s.doc.text, "Ann: One.\nBen: Two, three.\n");
        s.apply(Command::Redo);
        assert_eq!(s.doc.text, "Ann: Uno.\nBen: Two, three.\n");
    }

    #[test]
    fn a_dropped_cue_is_one_undoable_edit_named_from_the_project_folder() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut s = studio(&dir);
        let project = dir.path().join("show");
        let text = "Ann: One.\nBen: Two.\n";
        s.doc = Document::new("ep", text.into(), Some(project.join("ep.txt")));
        assert_eq!(
            s.export_options().sounds_dir,
            Some(project.clone()),
            "the export finds cue files in the project's folder"
        );
        s.apply(Command::InsertCue {
            line: 1,
            file: project.join("sfx/sting.wav"),
            bed: false,
        });
        assert_eq!(s.doc.text, "Ann: One.\n[sound: sfx/sting.wav]\nBen: Two.\n");
        assert_eq!(
            s.message(),
            Some("added [sound: sfx/sting.wav] before line 2")
        );
        // Refused: said, and nothing changes (no undo step either).
        s.apply(Command::InsertCue {
            line: 5,
            file: project.join("a.wav"),
            bed: true,
        });
        assert_eq!(s.message(), Some("not added: line 6 is not in the script"));
        s.apply(Command::Undo);
        assert_eq!(s.doc.text, text, "one step undoes the cue");
        s.apply(Command::Redo);
        assert!(s.doc.text.contains("[sound: sfx/sting.wav]"));
    }

    #[test]
    fn a_cast_choice_goes_through_the_document_and_the_history() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut s = studio(&dir);
        s.autosave_now();
        let revision = s.doc.revision;
        let choice = CastChoice {
            voice: "bm_lewis".into(),
            speed: 1.2,
        };
        s.apply(Command::SetCast {
            speaker: "Ben".into(),
            choice: choice.clone(),
        });
        assert_eq!(s.doc.cast.get("Ben"), Some(&choice));
        assert_eq!(s.doc.revision, revision + 1);
        assert!(s.doc.needs_saving(), "a cast change is unsaved");
        assert!(
            !s.doc.unsaved_edits,
            "and handed to the autosave like a change of text"
        );
        let ep = s.doc.episode().expect("parses");
        assert_eq!(
            ep.cast.get("Ben").map(|m| m.voice.as_str()),
            Some("bm_lewis")
        );
        s.apply(Command::Undo);
        assert!(s.doc.cast.is_empty());
    }

    #[test]
    fn escape_closes_help_then_the_export_dialog() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut s = studio(&dir);
        s.apply(Command::ShowExport);
        assert!(s.export.open);
        assert!(
            s.export.settings.path.ends_with("untitled.wav"),
            "{}",
            s.export.settings.path
        );
        s.apply(Command::ToggleHelp);
        s.apply(Command::Dismiss);
        assert!(!s.dialogs.help && s.export.open);
        s.apply(Command::Dismiss);
        assert!(!s.export.open);
    }

    /// A studio whose timeline holds a rendered first line, "Good morning, Ann!", with its words
    /// at 0.1 s, 0.4 s and 1.0 s (0.3 s each), as playback would have left it (no model needed).
    fn heard(dir: &tempfile::TempDir) -> Studio {
        rendered(studio(dir))
    }

    /// `s` with [`heard`]'s rendered first line.
    fn rendered(mut s: Studio) -> Studio {
        s.apply(Command::EditText(
            "Ann: Good morning, Ann!\nBen: Two trains.\n".into(),
        ));
        let sr = engine::SAMPLE_RATE as usize;
        s.waveform = crate::waveform::Waveform::new(s.doc.revision, 0);
        s.waveform.line_start(0, "Ann".into(), 0);
        let audio = vec![0.0; 2 * sr];
        s.buffer.append(&audio);
        s.waveform.push(&audio);
        let word = |w: &str, start: f64| engine::words::TimedWord {
            word: w.into(),
            start,
            end: start + 0.3,
            source_line: 1,
            source_column: 1,
        };
        s.waveform.add_words(
            0,
            &[word("Good", 0.1), word("morning", 0.5), word("Ann", 1.0)],
        );
        s
    }

    #[test]
    fn clicking_a_heard_word_seeks_to_it_and_an_unheard_line_is_selected() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut s = heard(&dir);
        let sr = engine::SAMPLE_RATE as usize;
        // "Good morning, Ann!": byte 7 is in "morning", which follows "Good" at once.
        s.apply(Command::SeekWord { line: 0, at: 7 });
        assert_eq!(s.buffer.position(), sr * 4 / 10);
        assert_eq!(s.selected, 0);
        assert!(
            !s.is_playing(),
            "a click moves the playhead; it does not start playing"
        );
        // The comma after "morning" means the next word, "Ann", after a pause: a little
        // before it.
        s.apply(Command::SeekWord { line: 0, at: 12 });
        assert_eq!(s.buffer.position(), sr - crate::words::PRE_ROLL);
        // Ben's line has not been heard: the click selects it and the playhead stays.
        s.apply(Command::SeekWord { line: 1, at: 0 });
        assert_eq!(
            (s.selected, s.buffer.position()),
            (1, sr - crate::words::PRE_ROLL)
        );
        // "Play from here" on a heard word plays from it (the line starts at 0).
        s.apply(Command::PlayFromWord { line: 0, at: 0 });
        assert_eq!(s.buffer.position(), 0);
        assert!(s.is_playing());
    }

    #[test]
    fn a_pending_play_from_here_starts_at_its_word_once_it_arrives() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut s = heard(&dir);
        s.pending_word = Some(crate::words::PendingWord { line: 0, at: 15 });
        s.resolve_pending_word();
        assert_eq!(s.pending_word, None);
        let ann = engine::SAMPLE_RATE as usize - crate::words::PRE_ROLL;
        assert_eq!(s.buffer.position(), ann);
        assert!(s.is_playing(), "started at \"Ann\"");
        // A word that never comes (no durations): playback starts where it is once the
        // line is over (here: nothing is rendering any more).
        s.stop();
        s.pending_word = Some(crate::words::PendingWord { line: 1, at: 0 });
        s.resolve_pending_word();
        assert!(s.pending_word.is_none() && s.is_playing());
    }

    #[test]
    fn without_an_audio_output_nothing_claims_to_play_and_a_preview_keeps_the_timeline() {
        let dir = tempfile::tempdir().expect("temp dir");
        let none = crate::audio::NoAudio(crate::audio::AudioOutError::NoDevice {
            host: "ALSA".into(),
        });
        let mut s = rendered(studio_playing_on(&dir, Box::new(none)));
        assert!(!s.can_sound());
        assert!(s
            .audio_problem()
            .is_some_and(|p| p.contains("no audio output device")));
        s.apply(Command::TogglePlay);
        assert!(
            !s.is_playing(),
            "Play must not turn into Pause with nothing to hear"
        );
        s.apply(Command::PlayFromWord { line: 0, at: 7 });
        assert!(!s.is_playing());
        assert_eq!(
            s.buffer.position(),
            engine::SAMPLE_RATE as usize * 4 / 10,
            "the playhead still moves to the word"
        );
        let samples = s.waveform.samples;
        s.apply(Command::PreviewSpeaker("Ann".into()));
        assert!(s.tasks.preview.is_none() && !s.is_playing());
        assert_eq!(s.waveform.samples, samples, "the rendered timeline is kept");
        assert_eq!(s.buffer.len(), samples);
        let said = s.message().unwrap_or_default().to_owned();
        assert!(
            said.contains("cannot preview Ann") && said.contains("no audio output device"),
            "{said}"
        );
    }
}
