//! The sound lane drawn in the real studio: each cue's band and label under the speech, sounds
//! above beds, at the cue's time, and what hovering a cue says.

use eframe::egui::{self, Rect};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use engine::render::SoundMark;
use engine::script::{Episode, ParseOptions};
use engine::SAMPLE_RATE;

use crate::app::Studio;
use crate::command::Command;
use crate::test_support::{drawn_text, studio};
use crate::waveform::Waveform;

const SR: usize = SAMPLE_RATE as usize;

fn find<'a>(d: &'a [(String, Rect)], name: &str) -> &'a Rect {
    &d.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{name} drawn: {d:?}"))
        .1
}

/// The script [`rendered`] plays: a bed from the start and a sting before the second line.
const SCRIPT: &str = "[bed: music/theme.mp3]\nAnn: Hello there, and welcome.\n[sound: sting.wav volume=-6dB]\nAnn: Bye.\n";

/// Four seconds of Ann's speech under a bed from the start and a sting at two seconds.
fn rendered() -> Waveform {
    let ep = Episode::parse("ep", SCRIPT, &ParseOptions::default()).expect("parses");
    let mut tl = Waveform::new(0, 0);
    tl.line_start(0, "Ann".into(), 0);
    tl.push(&vec![0.2; 4 * SR]);
    for ((line, cue), at) in ep.sounds().zip([0, 2 * SR as u64]) {
        let mark = SoundMark {
            cue: cue.clone(),
            at,
            line,
        };
        tl.lane.add(&mark, Some(SR as u64 / 2));
    }
    tl.lane.push(&vec![0.05; 4 * SR]);
    tl.lane.finish(4 * SR);
    tl.complete = true;
    tl
}

#[test]
fn each_cue_is_drawn_under_the_speech_at_its_time_sounds_above_beds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut h = studio(&dir);
    let names = ["Ann", "theme.mp3", "sting.wav"];
    // Without cues there is no lane.
    let mut speech_only = rendered();
    speech_only.lane = crate::waveform::SoundLane::default();
    h.state_mut().waveform = speech_only;
    h.run_steps(2);
    let d = drawn_text(&h, &names);
    assert!(d.iter().all(|(n, _)| n == "Ann"), "{d:?}");

    h.state_mut().waveform = rendered();
    h.run_steps(2);
    let d = drawn_text(&h, &names);
    let (ann, theme, sting) = (
        find(&d, "Ann"),
        find(&d, "theme.mp3"),
        find(&d, "sting.wav"),
    );
    assert!(
        theme.top() > ann.bottom() && sting.top() > ann.bottom(),
        "under the speech"
    );
    assert!(
        sting.bottom() <= theme.top() + 1.0,
        "the sound above the bed: {sting:?} {theme:?}"
    );
    // The whole timeline shows 4 s: the sting's label starts half way along, the bed's at 0.
    let width = ann.left() - 4.0;
    assert!((theme.left() - ann.left()).abs() < 2.0, "{theme:?} {ann:?}");
    let half = ann.left() + (h.ctx.content_rect().width() - 2.0 * width) / 2.0;
    assert!(
        (sting.left() - half).abs() < 30.0,
        "{sting:?} against {half}"
    );
}

#[test]
fn hovering_a_cue_says_what_it_is_and_where_the_script_writes_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut h = studio(&dir);
    h.state_mut().waveform = rendered();
    h.run_steps(2);
    let sting = *find(&drawn_text(&h, &["sting.wav"]), "sting.wav");
    h.hover_at(sting.center());
    h.run_steps(6);
    let said = "[sound: sting.wav] at line 3, column 1: volume -6 dB, fade 0.01 s, overlap 0 s";
    assert!(
        !drawn_text(&h, &[said]).is_empty(),
        "the tooltip: {:?}",
        h.output()
            .shapes
            .iter()
            .filter_map(|c| match &c.shape {
                egui::Shape::Text(t) => Some(t.galley.text().to_owned()),
                _ => None,
            })
            .collect::<Vec<_>>()
    );
}

/// Clicks at `pos` (press and release, then lets the studio draw).
fn click_at(h: &mut Harness<'_, Studio>, pos: egui::Pos2) {
    h.hover_at(pos);
    h.run_steps(1);
    h.drag_at(pos);
    h.run_steps(1);
    h.drop_at(pos);
    h.run_steps(3);
}

#[test]
fn clicking_a_cue_edits_its_volume_in_the_script_as_one_undoable_step() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut h = studio(&dir);
    h.state_mut().apply(Command::EditText(SCRIPT.into()));
    h.state_mut().waveform = rendered();
    h.run_steps(2);
    let sting = *find(&drawn_text(&h, &["sting.wav"]), "sting.wav");
    let playhead = h.state().buffer.position();
    click_at(&mut h, sting.center());
    assert_eq!(
        h.state().buffer.position(),
        playhead,
        "a click on a cue opens it, it does not seek"
    );
    // The editor shows the cue's volume as written and its default fade.
    h.get_by_label_contains("[sound: sting.wav] at line 3, column 1");
    let volume = h.get_by_role_and_label(egui::Role::TextInput, "Volume (dB)");
    assert_eq!(volume.value().as_deref(), Some("-6"));
    let fade = h.get_by_role_and_label(egui::Role::TextInput, "Fade (s)");
    assert_eq!(fade.value().as_deref(), Some("0.01"));
    volume.set_text_value_accesskit("-3");
    h.run_steps(2);
    h.get_by_label("Apply").click();
    h.run_steps(2);
    let changed = SCRIPT.replace("volume=-6dB", "volume=-3dB");
    assert_eq!(h.state().doc.text, changed);
    assert!(matches!(
        crate::doc::cue_at(h.state().doc.parsed.as_ref().expect("parses"), engine::script::Position::new(3, 1))
            .map(|c| &c.action),
        Some(engine::script::CueAction::Sound { volume_db, .. }) if (*volume_db + 3.0).abs() < 1e-6
    ));
    // A level the parser refuses is said with its reason and changes nothing.
    h.get_by_role_and_label(egui::Role::TextInput, "Volume (dB)")
        .set_text_value_accesskit("30");
    h.run_steps(2);
    h.get_by_label("Apply").click();
    h.run_steps(2);
    assert_eq!(h.state().doc.text, changed);
    let said = h.state().message().unwrap_or_default().to_owned();
    assert!(said.contains("write a level from -60 to +12 dB"), "{said}");
    // One undo puts the script back.
    h.state_mut().apply(Command::Undo);
    h.run_steps(1);
    assert_eq!(h.state().doc.text, SCRIPT);
}
