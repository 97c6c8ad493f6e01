//! Snapshot images of the studio's main screens at 1280×800: the main window with a script
//! imported (lines, cast, timeline, status bar), in both themes; the raw editor with an inline
//! parse error; the export dialog; the F1 help. They are rendered on the CPU by
//! [`raster::Raster`] (no GPU needed) and compared with the PNGs committed in `tests/snapshots/`.
//!
//! After an intended change to the UI, regenerate them with
//! `UPDATE_SNAPSHOTS=1 cargo test -p ui --test screens`, look at the new PNGs, and commit them.
//! A failing comparison leaves `NAME.new.png` and `NAME.diff.png` beside the snapshot.
//!
//! Nothing time-dependent is on screen: the studio runs without a model (at a fixed relative
//! path, so the message naming it is the same on every machine), the "opened …" message is let
//! expire, dialogs get a fixed destination instead of a temporary folder, no pointer is drawn
//! (so no hover or tooltip), and each snapshot waits until two frames in a row look the same.

#[path = "support/raster.rs"]
mod raster;
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use support::{step_until, Fixture, SIZE};
use ui::Studio;

/// A model folder that does not exist, named relative to the crate so the first-run message
/// ("the model is not in … yet") reads the same everywhere.
const NO_MODEL: &str = "no-model-for-snapshots";

const SCRIPT: &str = "\
Ann: Good morning, and welcome to Banter Radio.
Ben: Morning, Ann! Today we are talking about night trains.
Ann: Again? We did trains last week.
Cleo: Those were day trains. I brought the timetable.
Ben: And a flask of tea, for the long stretch through the mountains.
";

/// The studio without a model, settled in its first-run state.
fn studio(fx: &Fixture) -> Harness<'static, Studio> {
    let builder = Harness::builder()
        .with_size(SIZE)
        .with_render_cursor(false)
        .renderer(raster::Raster::new(Color32::BLACK));
    let mut h = fx.harness_with(Some(Path::new(NO_MODEL)), builder);
    step_until(
        &mut h,
        Duration::from_secs(10),
        "the model to be missing",
        |h| h.state().engine_error().is_some(),
    );
    h
}

/// The studio with [`SCRIPT`] imported by a drop, once its "opened" message has expired.
fn imported(fx: &Fixture) -> Harness<'static, Studio> {
    let script = fx.write("night-trains.txt", SCRIPT);
    let mut h = studio(fx);
    ui::input::drop_file(h.input_mut(), &script);
    step_until(&mut h, Duration::from_secs(10), "the import", |h| {
        h.state().document().name == "night-trains"
    });
    // The status bar shows the message for 8 s of wall time: wait it out rather than race it.
    let start = Instant::now();
    while h.state().message().is_some() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the message stays"
        );
        std::thread::sleep(Duration::from_millis(100));
        h.step();
    }
    h
}

/// Steps until two frames in a row render the same image: windows have sized themselves,
/// panels have settled and animations have finished, whatever number of frames start-up took.
fn settle(h: &mut Harness<'_, Studio>) {
    let mut last = None;
    for _ in 0..40 {
        h.step();
        let image = h.render().expect("renders");
        if last.as_ref() == Some(&image) {
            return;
        }
        last = Some(image);
    }
    panic!("the screen did not settle in 40 frames");
}

#[test]
fn main_window_with_a_script() {
    let fx = Fixture::new();
    let mut h = imported(&fx);
    settle(&mut h);
    assert!(h
        .query_by_label("Again? We did trains last week.")
        .is_some());
    h.snapshot("main_window");
}

#[test]
fn main_window_in_the_light_theme() {
    let fx = Fixture::new();
    let mut h = imported(&fx);
    h.key_press_modifiers(
        egui::Modifiers::COMMAND | egui::Modifiers::SHIFT,
        egui::Key::T,
    );
    settle(&mut h);
    assert!(
        !h.ctx.global_style().visuals.dark_mode,
        "the light theme is on"
    );
    h.snapshot("main_window_light");
}

#[test]
fn raw_editor_with_a_parse_error() {
    let fx = Fixture::new();
    let mut h = studio(&fx);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::L);
    // Ben's second turn has a label and nothing to say: an error at line 5.
    let broken = SCRIPT.replace(
        "Ben: And a flask of tea, for the long stretch through the mountains.",
        "Ben:",
    );
    h.state_mut().apply(ui::Command::EditText(broken));
    settle(&mut h);
    let err = h
        .state()
        .document()
        .parsed
        .clone()
        .expect_err("the script is broken");
    assert_eq!(err.line, 5);
    h.snapshot("raw_editor_parse_error");
}

#[test]
fn export_dialog() {
    let fx = Fixture::new();
    let mut h = studio(&fx);
    // The default destination is beside the script or in the working directory: fix it.
    let mut settings = h.state().export_dialog().settings.clone();
    settings.path = "episodes/a-first-episode.wav".into();
    h.state_mut()
        .apply(ui::Command::SetExportSettings(settings));
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::E);
    settle(&mut h);
    assert!(h.query_by_label("Chapters JSON").is_some());
    h.snapshot("export_dialog");
}

#[test]
fn help_overlay() {
    let fx = Fixture::new();
    let mut h = studio(&fx);
    h.key_press(egui::Key::F1);
    settle(&mut h);
    assert!(h.query_by_label("Keyboard shortcuts").is_some());
    h.snapshot("help_overlay");
}
