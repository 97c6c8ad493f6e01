//! A Piper voice dropped on the studio: the studio's side of [`crate::work::piper`]. The drop
//! starts the inspection on a worker; a model that passes goes to the library thread to be named
//! and added; the answer refreshes the cast's list of library voices, says what was added with
//! its licence facts, and, when the model was dropped on a speaker, casts that speaker in it as
//! one undo step, as choosing the voice in the cast panel would. Every refusal is said in the
//! status line with its reason and changes nothing else.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::command::Command;
use crate::doc::CastChoice;
use crate::work::library::LibCmd;
use crate::work::piper::{self, PiperAdd, PiperAdded};

use super::Studio;

impl Studio {
    /// Checks the dropped model `onnx` on a worker thread (it is read and hashed whole).
    pub(crate) fn start_piper_add(&mut self, onnx: PathBuf, speaker: Option<String>) {
        if let Some(e) = &self.library_error {
            self.say(format!(
                "Piper voice {} not added: the library is unavailable ({e})",
                onnx.display()
            ));
            return;
        }
        self.say(format!("checking the Piper voice {}…", onnx.display()));
        piper::start(
            onnx,
            speaker,
            self.tasks.piper.tx.clone(),
            self.waker.clone(),
        );
    }

    /// Hands checked models to the library; says why the others were refused.
    pub(crate) fn drain_piper(&mut self) {
        let inspected: Vec<_> = self.tasks.piper.rx.try_iter().collect();
        for done in inspected {
            match done.result {
                Ok(info) => self.library.send(LibCmd::AddPiper(Box::new(PiperAdd {
                    name: piper::name_from_file(&done.onnx),
                    info: *info,
                    speaker: done.speaker,
                }))),
                Err(e) => self.say(format!("not added: {e}")),
            }
        }
    }

    /// The library added a model's voices: list them, say so, cast the speaker it was dropped on.
    pub(crate) fn piper_added(&mut self, added: &PiperAdded) {
        self.library.send(LibCmd::ListVoices);
        let mut said = added.summary();
        if let (Some(speaker), Some(voice)) = (&added.speaker, added.names.first()) {
            let speakers = self.doc.speakers();
            if let Some((_, choice)) = speakers.iter().find(|(s, _)| s == speaker) {
                self.apply(Command::SetCast {
                    speaker: speaker.clone(),
                    choice: CastChoice {
                        voice: voice.clone(),
                        speed: choice.speed,
                    },
                });
                let _ = write!(said, "; {speaker} now speaks as {voice}");
            }
        }
        self.say(said);
    }
}
