//! The frame loop's first step: take everything the workers reported since the last frame
//! (model load, playback audio, imports, voice matches, dropped Piper voices checked, library
//! answers, export progress) and fold it into the studio's state. Only `try_iter`: nothing here
//! waits.

use std::time::Instant;

use crate::app::{EngineState, Studio};
use crate::doc::Document;
use crate::waveform::Waveform;
use crate::work::library::{LibCmd, LibEvent};
use crate::work::load::LoadEvent;
use crate::work::play::PlayEvent;

impl Studio {
    pub(crate) fn drain_all(&mut self) {
        if let Some(rx) = &self.tasks.load {
            let events: Vec<_> = rx.try_iter().collect();
            let mut loaded = false;
            for event in events {
                self.engine = match (event, &self.engine) {
                    (LoadEvent::Fetching { root }, _) => EngineState::Fetching {
                        root,
                        text: "starting the fetch…".into(),
                        fraction: None,
                    },
                    (
                        LoadEvent::Progress { text, fraction },
                        EngineState::Fetching { root, .. },
                    ) => EngineState::Fetching {
                        root: root.clone(),
                        text,
                        fraction,
                    },
                    (LoadEvent::Progress { text, fraction }, _) => {
                        EngineState::Loading { text, fraction }
                    }
                    (LoadEvent::Failed(e), _) => EngineState::Failed(e),
                    (LoadEvent::Loaded(l), _) => {
                        loaded = true;
                        EngineState::Ready(l)
                    }
                };
            }
            if loaded {
                self.install_voice_tools();
            }
        }
        if let Some(job) = &self.tasks.play {
            let mut finished = false;
            for event in job.rx.try_iter() {
                match event {
                    PlayEvent::LineStart { line, speaker, at } => {
                        self.waveform.line_start(line, speaker, at);
                    }
                    PlayEvent::Speech(samples) => self.waveform.push(&samples),
                    PlayEvent::Mixed { heard, cues } => {
                        self.buffer.append(&heard);
                        self.waveform.lane.push(&cues);
                    }
                    PlayEvent::Cues(marks) => {
                        for (mark, len) in &marks {
                            self.waveform.lane.add(mark, *len);
                        }
                    }
                    PlayEvent::Notices(notices) => {
                        let text = format!("sound cues: {}", notices.join("; "));
                        tracing::info!("studio: {text}");
                        self.message = Some((text, Instant::now()));
                    }
                    PlayEvent::Words { line, words } => self.waveform.add_words(line, &words),
                    PlayEvent::Done => {
                        self.waveform.lane.finish(self.buffer.len());
                        self.buffer.set_complete(true);
                        self.waveform.complete = true;
                        finished = true;
                    }
                    PlayEvent::Failed(e) => {
                        self.buffer.set_complete(true);
                        self.message = Some((format!("playback failed: {e}"), Instant::now()));
                        finished = true;
                    }
                }
            }
            if finished {
                self.tasks.play = None;
            }
            self.resolve_pending_word();
        }
        self.drain_open();
        self.drain_voice_tools();
        self.drain_piper();
        self.drain_outputs();
        self.drain_library();
        self.drain_export();
    }

    fn drain_library(&mut self) {
        let events: Vec<_> = self.library.rx.try_iter().collect();
        for event in events {
            match event {
                LibEvent::Unavailable(e) => {
                    self.say(format!("projects unavailable: {e}"));
                    self.library_error = Some(e);
                }
                LibEvent::Saved { name } => {
                    self.say(format!("saved project \"{name}\""));
                    self.library.send(LibCmd::ListProjects);
                }
                LibEvent::Loaded(draft) => {
                    self.stop();
                    let mut doc = Document::new(&draft.name, draft.script, None);
                    doc.set_cast_map(&draft.cast);
                    self.doc = doc;
                    self.selected = 0;
                    self.waveform = Waveform::default();
                    self.buffer.clear();
                    self.say(format!("opened project \"{}\"", draft.name));
                }
                LibEvent::Projects(p) => {
                    self.reopen_latest(&p);
                    self.projects = p;
                }
                LibEvent::Voices(v) => self.library_voices = v,
                LibEvent::PiperAdded(added) => self.piper_added(&added),
                LibEvent::Autosaves(a) => self.recovery = a,
                LibEvent::Error(e) => self.say(e.to_string()),
            }
        }
    }

    fn drain_export(&mut self) {
        let Some(job) = &self.tasks.export else {
            return;
        };
        let mut done = None;
        for event in job.rx.try_iter() {
            match event {
                crate::work::export::ExportEvent::Progress(p) => self.export.progress = Some(p),
                crate::work::export::ExportEvent::Done(r) => done = Some(r),
            }
        }
        if let Some(result) = done {
            match &result {
                Ok(report) => self.last_xrt = Some(report.xrt()),
                Err(e) => tracing::warn!("export: {e}"),
            }
            self.export.finished = Some(result);
            self.tasks.export = None;
        }
    }
}
