//! Shared fixtures for the studio's UI tests: a harness around the real `Studio` with the mock
//! audio backend, a private library, and the model store (or a polite skip without it).

#![allow(dead_code)] // each test file uses a different subset

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use eframe::egui;
use egui_kittest::{Harness, HarnessBuilder};
use engine::assets::ModelStore;
use ui::audio::MockOut;
use ui::{Studio, StudioConfig};

/// The fetched model store, or `None` (test skipped) outside CI.
pub fn model_store() -> Option<ModelStore> {
    let store = ModelStore::open_default().expect("model store location");
    if store.is_ready() {
        return Some(store);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "model assets missing in {} (CI must fetch them first: `banter models fetch`)",
        store.root().display()
    );
    eprintln!("skipped: model not fetched ({})", store.root().display());
    None
}

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub mock: MockOut,
}

impl Fixture {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
            mock: MockOut::new(),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).expect("write fixture");
        p
    }

    /// A studio over `models` (an empty folder = no model) with a private library.
    pub fn harness(&self, models: Option<&Path>, size: egui::Vec2) -> Harness<'static, Studio> {
        self.harness_with(models, Harness::builder().with_size(size))
    }

    /// A studio over `models` on a machine with no audio output at all.
    pub fn harness_without_sound(
        &self,
        models: Option<&Path>,
        size: egui::Vec2,
    ) -> Harness<'static, Studio> {
        let config = self.config(models);
        Harness::builder().with_size(size).build_eframe(move |cc| {
            let none = ui::audio::NoAudio(ui::audio::AudioOutError::NoDevice {
                host: "ALSA".into(),
            });
            Studio::new(&cc.egui_ctx, config, Box::new(none))
        })
    }

    /// A studio without sound that renders on `remote` (`banter --engine …`).
    pub fn harness_remote(
        &self,
        models: &Path,
        remote: ui::work::load::RemoteEngine,
    ) -> Harness<'static, Studio> {
        let config = StudioConfig {
            remote: Some(remote),
            ..self.config(Some(models))
        };
        Harness::builder().with_size(SIZE).build_eframe(move |cc| {
            let none = ui::audio::NoAudio(ui::audio::AudioOutError::NoDevice {
                host: "ALSA".into(),
            });
            Studio::new(&cc.egui_ctx, config, Box::new(none))
        })
    }

    /// A studio started as a plain `banter` is (no script: it reopens the latest project).
    pub fn harness_reopening(&self, size: egui::Vec2) -> Harness<'static, Studio> {
        let config = StudioConfig {
            reopen_last: true,
            ..self.config(None)
        };
        let mock = self.mock.clone();
        Harness::builder()
            .with_size(size)
            .build_eframe(move |cc| Studio::new(&cc.egui_ctx, config, Box::new(mock)))
    }

    fn config(&self, models: Option<&Path>) -> StudioConfig {
        StudioConfig {
            models: Some(
                models.map_or_else(|| self.dir.path().join("no-models"), Path::to_path_buf),
            ),
            library: Some(self.dir.path().join("library.sqlite")),
            fetch_models: false,
            ..StudioConfig::default()
        }
    }

    /// [`Self::harness`] from a given builder (size, renderer, options).
    pub fn harness_with(
        &self,
        models: Option<&Path>,
        builder: HarnessBuilder<Studio>,
    ) -> Harness<'static, Studio> {
        let config = self.config(models);
        let mock = self.mock.clone();
        builder.build_eframe(move |cc| Studio::new(&cc.egui_ctx, config, Box::new(mock)))
    }
}

/// Steps the harness until `done` holds, or panics after `timeout`.
pub fn step_until(
    harness: &mut Harness<'_, Studio>,
    timeout: Duration,
    what: &str,
    mut done: impl FnMut(&mut Harness<'_, Studio>) -> bool,
) {
    let start = Instant::now();
    while !done(harness) {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        harness.step();
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Steps the harness until the studio's engine has loaded, failing on an engine error.
pub fn wait_for_model(harness: &mut Harness<'_, Studio>) {
    step_until(harness, Duration::from_mins(2), "the model to load", |h| {
        assert!(
            h.state().engine_error().is_none(),
            "{:?}",
            h.state().engine_error()
        );
        h.state().is_ready()
    });
}

pub const SIZE: egui::Vec2 = egui::Vec2::new(1280.0, 800.0);
