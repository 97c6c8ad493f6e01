//! Choosing the audio output device as the studio carries it out: opening a device on a worker
//! thread, attaching it to the play buffer when it opens, and hearing that the one in use went
//! away. The catalogs that list and open devices are [`crate::devices`].

use std::sync::Arc;

use crate::audio::DeviceNews;
use crate::devices::{DeviceEvent, OutputCatalog};
use crate::work::{send, spawn};

use super::Studio;

impl Studio {
    /// Sets where output devices are listed from and lists them (the window: cpal; tests: mocks).
    pub fn set_output_catalog(&mut self, catalog: Arc<dyn OutputCatalog>) {
        self.outputs.catalog = catalog;
        self.refresh_outputs();
    }

    /// Lists the output devices on a worker thread.
    pub(crate) fn refresh_outputs(&self) {
        let catalog = Arc::clone(&self.outputs.catalog);
        let (tx, waker) = (self.tasks.outputs.tx.clone(), self.waker.clone());
        if let Err(e) = spawn("banter-outputs", move || {
            send(&tx, &waker, DeviceEvent::Names(catalog.names()));
        }) {
            let _ = self
                .tasks
                .outputs
                .tx
                .try_send(DeviceEvent::Names(Err(e.into())));
        }
    }

    /// The output devices listed, the default first.
    #[must_use]
    pub fn output_names(&self) -> &[String] {
        &self.outputs.names
    }

    /// The device playback goes to, in words.
    #[must_use]
    pub fn output_device(&self) -> String {
        self.audio.describe()
    }

    /// Opens output `name` on a worker thread; playback moves there when it is open.
    pub fn choose_output(&mut self, name: &str) {
        let catalog = Arc::clone(&self.outputs.catalog);
        let (tx, waker) = (self.tasks.outputs.tx.clone(), self.waker.clone());
        let name = name.to_owned();
        self.outputs.opening = Some(name.clone());
        if let Err(e) = spawn("banter-output-open", move || {
            let out = catalog.open(&name);
            send(&tx, &waker, DeviceEvent::Opened { name, out });
        }) {
            self.outputs.opening = None;
            self.say(e.to_string());
        }
    }

    pub(crate) fn drain_outputs(&mut self) {
        self.drain_device_news();
        let events: Vec<_> = self.tasks.outputs.rx.try_iter().collect();
        for event in events {
            match event {
                DeviceEvent::Names(Ok(names)) => {
                    self.outputs.names = names;
                    self.outputs.error = None;
                }
                DeviceEvent::Names(Err(e)) => self.outputs.error = Some(e),
                DeviceEvent::Opened { name, out } => {
                    self.outputs.opening = None;
                    match out {
                        Ok(mut out) => {
                            self.buffer.set_playing(false);
                            match out.attach(Arc::clone(&self.buffer)) {
                                Ok(()) => {
                                    self.audio = out;
                                    self.audio_error = None;
                                    self.say(format!("playing through {name}"));
                                }
                                Err(e) => self.say(format!("cannot play through {name}: {e}")),
                            }
                        }
                        Err(e) => self.say(format!("cannot open {name}: {e}")),
                    }
                }
            }
        }
    }

    /// The device went away: say where playback went, or that it stopped (the status bar shows
    /// `audio_error`), and list the devices again, since the list changed.
    fn drain_device_news(&mut self) {
        while let Some(news) = self.audio.news() {
            match news {
                DeviceNews::Moved { from, to } => {
                    self.audio_error = None;
                    self.say(format!("{from} went away: playing through {to}"));
                }
                DeviceNews::Lost(e) => {
                    self.buffer.set_playing(false);
                    self.say(format!("playback stopped: {e}"));
                    self.audio_error = Some(e.to_string());
                }
            }
            self.refresh_outputs();
        }
    }
}
