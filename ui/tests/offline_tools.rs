//! Studio UI tests of the cast tools and editing aids that need no model: voice matching by
//! dropping a clip on a speaker and the cast check (both through scripted voice tools that stand
//! in for the engine), previews without a model, undo/redo and find. They drive the real widgets.

mod support;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use eframe::egui;
use eframe::egui::Role;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use engine::voicematch::{CastPair, VoiceMatchError};
use support::{step_until, Fixture, SIZE};
use ui::work::voicematch::{MatchState, Matched, Progress, ToolError, VoiceTools};
use ui::Studio;

/// Voice tools with known answers: a clip called `short*` has too little speech; any other
/// matches `af_bella:0.7+af_sky:0.3`. Speakers sharing a voice are flagged.
struct Scripted;

/// Steps of a scripted tuning (100 ms each).
const TUNE_STEPS: usize = 15;

impl VoiceTools for Scripted {
    fn match_clip(
        &self,
        speaker: &str,
        clip: &Path,
        progress: Progress<'_>,
    ) -> Result<Matched, ToolError> {
        progress("embedding the clip…".into(), Some(0.1));
        std::thread::sleep(Duration::from_millis(200));
        progress("comparing with af_bella (1/2)".into(), Some(0.5));
        std::thread::sleep(Duration::from_millis(200));
        let name = clip.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with("short") {
            return Err(VoiceMatchError::TooLittleSpeech {
                path: clip.to_owned(),
                speech_secs: 0.8,
            }
            .into());
        }
        Ok(Matched {
            name: format!("{speaker} (matched)"),
            recipe: "af_bella:0.7+af_sky:0.3".into(),
            similarity: 0.8765,
            nearest: vec![("af_bella".into(), 0.85)],
            notes: Vec::new(),
            clip: clip.to_owned(),
            tuned_from: None,
        })
    }

    /// Tunes in steps of 100 ms until done or cancelled; `0.8765 → 0.91`.
    fn tune_clip(
        &self,
        speaker: &str,
        clip: &Path,
        cancel: &AtomicBool,
        progress: Progress<'_>,
    ) -> Result<Matched, ToolError> {
        for step in 0..TUNE_STEPS {
            if cancel.load(Ordering::Relaxed) {
                return Err(VoiceMatchError::Cancelled.into());
            }
            progress(
                format!("candidate {step}: similarity so far about 0.88"),
                Some(step as f32 / TUNE_STEPS as f32),
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(Matched {
            name: format!("{speaker} (tuned)"),
            recipe: "af_bella:0.7+af_sky:0.3".into(),
            similarity: 0.91,
            nearest: vec![("af_bella".into(), 0.85)],
            notes: Vec::new(),
            clip: clip.to_owned(),
            tuned_from: Some(0.8765),
        })
    }

    fn check_cast(&self, cast: &[(String, String)]) -> Result<Vec<CastPair>, ToolError> {
        let mut out = Vec::new();
        for (i, (sa, va)) in cast.iter().enumerate() {
            for (sb, vb) in &cast[i + 1..] {
                if va == vb {
                    out.push(CastPair {
                        speaker_a: sa.clone(),
                        voice_a: va.clone(),
                        speaker_b: sb.clone(),
                        voice_b: vb.clone(),
                        similarity: 1.0,
                    });
                }
            }
        }
        Ok(out)
    }
}

fn with_tools(fx: &Fixture, script: &str) -> Harness<'static, Studio> {
    let mut h = fx.harness(None, SIZE);
    h.state_mut().set_voice_tools(Arc::new(Scripted));
    h.state_mut().apply(ui::Command::EditText(script.into()));
    h.run_steps(3);
    h
}

/// Drops `clip` with the pointer over `speaker`'s row in the cast panel.
fn drop_on_speaker(h: &mut Harness<'static, Studio>, speaker: &str, clip: &Path) {
    let row = h
        .query_all_by_label(speaker)
        .map(|n| n.rect())
        .min_by(|a, b| a.left().total_cmp(&b.left()))
        .expect("the speaker is in the cast panel");
    h.hover_at(row.center());
    h.run_steps(1);
    ui::input::drop_file(h.input_mut(), clip);
    h.run_steps(1);
}

#[test]
fn a_clip_dropped_on_a_speaker_matches_a_voice_with_progress_and_an_honest_note() {
    let fx = Fixture::new();
    let mut h = with_tools(&fx, "Ann: Hello there.\nBen: Hi, Ann.\n");
    let clip = fx.write("ann.wav", "RIFF");
    drop_on_speaker(&mut h, "Ben", &clip);
    assert!(
        matches!(
            h.state().match_state("Ben"),
            Some(MatchState::Running { .. })
        ),
        "the match runs on a worker: the frame did not wait for it"
    );
    step_until(&mut h, Duration::from_secs(5), "match progress", |h| {
        h.query_by_label_contains("Matching a voice: comparing with af_bella")
            .is_some()
    });
    step_until(&mut h, Duration::from_secs(5), "the match", |h| {
        matches!(h.state().match_state("Ben"), Some(MatchState::Done(_)))
    });
    h.run_steps(2);
    // Ben gets the library voice the match was saved as; Ann is untouched.
    let ep = h.state().document().episode().expect("parses");
    assert_eq!(
        ep.cast.get("Ben").map(|m| m.voice.as_str()),
        Some("Ben (matched)")
    );
    assert_ne!(
        ep.cast.get("Ann").map(|m| m.voice.as_str()),
        Some("Ben (matched)")
    );
    assert!(h
        .query_by_label_contains("Matched voice \"Ben (matched)\"")
        .is_some());
    assert!(h.query_by_label_contains("(similarity 0.88)").is_some());
    assert!(h.query_by_label_contains("it does not clone").is_some());

    // A clip with too little speech fails clearly, and the speaker keeps the voice.
    let short = fx.write("short.wav", "RIFF");
    drop_on_speaker(&mut h, "Ben", &short);
    step_until(&mut h, Duration::from_secs(5), "the failed match", |h| {
        matches!(h.state().match_state("Ben"), Some(MatchState::Failed(_)))
    });
    h.run_steps(2);
    assert!(h
        .query_by_label_contains("Voice match or tuning failed: ")
        .is_some());
    // In the cast panel and in the status bar.
    assert!(h.query_all_by_label_contains("0.8 s of speech").count() >= 1);
    let ep = h.state().document().episode().expect("parses");
    assert_eq!(
        ep.cast.get("Ben").map(|m| m.voice.as_str()),
        Some("Ben (matched)")
    );
}

#[test]
fn tune_beside_a_match_runs_in_the_background_can_be_cancelled_and_says_what_it_is() {
    let fx = Fixture::new();
    let mut h = with_tools(&fx, "Ann: Hello there.\nBen: Hi, Ann.\n");
    let clip = fx.write("ben.wav", "RIFF");
    let matched = |h: &mut Harness<'_, Studio>| {
        matches!(h.state().match_state("Ben"), Some(MatchState::Done(_)))
    };
    drop_on_speaker(&mut h, "Ben", &clip);
    step_until(&mut h, Duration::from_secs(5), "the match", matched);
    h.run_steps(2);

    // Tune, then cancel: nothing changes in the cast.
    h.get_by_label("Tune").click();
    h.run_steps(1);
    step_until(&mut h, Duration::from_secs(5), "tuning progress", |h| {
        h.query_by_label_contains("Tuning a voice: candidate")
            .is_some()
    });
    assert!(h.query_all_by_label_contains("permission").next().is_some());
    h.get_by_label("Cancel tuning").click();
    step_until(
        &mut h,
        Duration::from_secs(5),
        "the cancelled tuning",
        |h| matches!(h.state().match_state("Ben"), Some(MatchState::Failed(_))),
    );
    h.run_steps(2);
    assert!(h
        .query_by_label_contains("Voice match or tuning failed: cancelled")
        .is_some());
    let voice = |h: &Harness<'static, Studio>| {
        let ep = h.state().document().episode().expect("parses");
        ep.cast.get("Ben").map(|m| m.voice.clone())
    };
    assert_eq!(voice(&h).as_deref(), Some("Ben (matched)"));

    // Match again, tune to the end: Ben speaks in the tuned voice, before and after shown.
    drop_on_speaker(&mut h, "Ben", &clip);
    step_until(&mut h, Duration::from_secs(5), "the match", matched);
    h.run_steps(2);
    h.get_by_label("Tune").click();
    step_until(&mut h, Duration::from_secs(10), "the tuning", |h| {
        matches!(
            h.state().match_state("Ben"),
            Some(MatchState::Done(m)) if m.tuned_from.is_some()
        )
    });
    h.run_steps(2);
    assert_eq!(voice(&h).as_deref(), Some("Ben (tuned)"));
    assert!(h
        .query_by_label_contains("similarity 0.88 (best blend), now 0.91")
        .is_some());
    assert!(h.query_by_label_contains("not a clone").is_some());
}

#[test]
fn the_cast_panel_warns_when_two_speakers_sound_alike() {
    let fx = Fixture::new();
    let mut h = with_tools(
        &fx,
        "---\ncast:\n  Ann: af_bella\n  Ben: af_bella\n  Cy: am_adam\n---\nAnn: One.\nBen: Two.\nCy: Three.\n",
    );
    step_until(&mut h, Duration::from_secs(5), "the cast check", |h| {
        !h.state().cast_warnings().is_empty()
    });
    h.run_steps(2);
    let warnings = h.state().cast_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(
        (
            warnings[0].speaker_a.as_str(),
            warnings[0].speaker_b.as_str()
        ),
        ("Ann", "Ben")
    );
    assert!(h
        .query_by_label_contains("Ann and Ben share the voice af_bella")
        .is_some());
    assert_eq!(h.query_all_by_label("(sounds alike)").count(), 2);
    // Give Ben another voice: the warning goes once the check has run again.
    let mut ben = h.state().document().speakers()[1].1.clone();
    ben.voice = "af_sky".into();
    h.state_mut().apply(ui::Command::SetCast {
        speaker: "Ben".into(),
        choice: ben,
    });
    step_until(&mut h, Duration::from_secs(5), "the re-check", |h| {
        h.query_by_label_contains("share the voice").is_none()
            && h.state().cast_warnings().is_empty()
    });
}

#[test]
fn preview_without_a_model_says_why() {
    let fx = Fixture::new();
    let mut h = with_tools(&fx, "Ann: Hello there.\nBen: Hi, Ann.\n");
    h.get_by_label("Preview Ann").click();
    h.run_steps(2);
    assert_eq!(h.state().previewing(), None);
    let message = h.state().message().unwrap_or_default().to_owned();
    assert!(message.contains("model is not loaded"), "{message}");
}

#[test]
fn undo_and_redo_cover_line_edits_and_cast_changes() {
    let fx = Fixture::new();
    let mut h = with_tools(&fx, "Ann: Hello there.\nBen: Hi, Ann.\n");
    let original = h.state().document().text.clone();
    // A line edit through the Edit button.
    h.get_all_by_label("Edit")
        .last()
        .expect("the last line's Edit button (the first is the Edit menu)")
        .click();
    h.run_steps(2);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run_steps(1);
    h.get_all_by_value("Ben: Hi, Ann.")
        .next()
        .expect("the line's source in an editor")
        .type_text("Ben: Good evening.");
    h.run_steps(1);
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    let edited = h.state().document().text.clone();
    assert!(edited.contains("Good evening"), "{edited}");
    // A cast change through the voice combo box.
    let before = h.state().document().speakers()[1].1.voice.clone();
    h.get_by_value(&before).click();
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "Search").focus();
    h.run_steps(1);
    h.get_by_role_and_label(Role::TextInput, "Search")
        .type_text("lewis");
    h.run_steps(2);
    h.get_by_label("bm_lewis (male)").click();
    h.run_steps(2);
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    let ben = |h: &Harness<'static, Studio>| h.state().document().speakers()[1].1.voice.clone();
    assert_eq!(ben(&h), "bm_lewis");

    // Ctrl+Z undoes the cast change, then the edit.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    h.run_steps(2);
    assert_eq!(ben(&h), before);
    assert_eq!(h.state().document().text, edited);
    // The Edit menu's Undo does the same.
    h.get_all_by_label("Edit")
        .next()
        .expect("the Edit menu")
        .click();
    h.run_steps(2);
    h.get_by_label("Undo  (Ctrl+Z)").click();
    h.run_steps(2);
    assert_eq!(h.state().document().text, original);
    // Ctrl+Shift+Z redoes the edit, Ctrl+Y the cast change.
    h.key_press_modifiers(
        egui::Modifiers::COMMAND | egui::Modifiers::SHIFT,
        egui::Key::Z,
    );
    h.run_steps(2);
    assert_eq!(h.state().document().text, edited);
    assert_eq!(ben(&h), before);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Y);
    h.run_steps(2);
    assert_eq!(ben(&h), "bm_lewis");
    // The shortcuts overlay lists them.
    h.key_press(egui::Key::F1);
    h.run_steps(2);
    assert!(h.query_by_label("Undo a script or cast change").is_some());
    assert!(h.query_by_label("Find in the script").is_some());
}

#[test]
fn find_highlights_matching_lines_and_jumps_between_them() {
    let fx = Fixture::new();
    let mut h = with_tools(
        &fx,
        "Ann: Hello.\nBen: I like apples.\nAnn: Pears, then.\nBen: Apple pie!\n",
    );
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::F);
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "Find")
        .type_text("apple");
    h.run_steps(2);
    assert_eq!(h.state().find_matches(), [1, 3]);
    assert!(h.query_by_label("1 of 2").is_some());
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert_eq!(h.state().selected_line(), 1);
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert_eq!(h.state().selected_line(), 3);
    assert!(h.query_by_label("2 of 2").is_some());
    h.get_by_label("Next").click();
    h.run_steps(2);
    assert_eq!(h.state().selected_line(), 1, "wraps around");
    h.get_by_label("Previous").click();
    h.run_steps(2);
    assert_eq!(h.state().selected_line(), 3);
    h.get_by_label("Close").click();
    h.run_steps(2);
    assert!(h.state().find_matches().is_empty());
    assert!(h.query_by_role_and_label(Role::TextInput, "Find").is_none());
}

#[test]
fn a_lines_context_menu_re_renders_it_with_another_speed_or_voice() {
    let fx = Fixture::new();
    let mut h = with_tools(&fx, "Ann: Hello there.\nBen: It is good to be here.\n");
    h.get_by_label("It is good to be here.").click_secondary();
    h.run_steps(2);
    h.get_by_label("Re-render with speed…").click();
    h.run_steps(2);
    h.get_by_label("1.25×").click();
    h.run_steps(2);
    let text = h.state().document().text.clone();
    assert!(
        text.contains("Ben: [rate:1.25] It is good to be here."),
        "{text}"
    );
    assert!(
        text.contains("Ann: Hello there."),
        "other lines untouched: {text}"
    );
    assert!(h.state().document().parsed.is_ok());
    // Again at another speed: the directive is replaced, not stacked.
    h.get_by_label("It is good to be here.").click_secondary();
    h.run_steps(2);
    h.get_by_label("Re-render with speed…").click();
    h.run_steps(2);
    h.get_by_label("0.90×").click();
    h.run_steps(2);
    let text = h.state().document().text.clone();
    assert!(text.contains("Ben: [rate:0.9] It is good"), "{text}");
    assert!(!text.contains("1.25"), "{text}");
    // With another voice: the speaker's voice in the cast.
    h.get_by_label("It is good to be here.").click_secondary();
    h.run_steps(2);
    h.get_by_label("Re-render with voice… (all of Ben's lines)")
        .click();
    h.run_steps(2);
    h.get_by_label("af_aoede (female)").click();
    h.run_steps(2);
    let ep = h.state().document().episode().expect("parses");
    assert_eq!(
        ep.cast.get("Ben").map(|m| m.voice.as_str()),
        Some("af_aoede")
    );
    // Undo takes the voice back, then the speed.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    h.run_steps(2);
    let ep = h.state().document().episode().expect("parses");
    assert_ne!(
        ep.cast.get("Ben").map(|m| m.voice.as_str()),
        Some("af_aoede")
    );
}

#[test]
fn the_output_picker_lists_devices_and_switches_playback_to_the_chosen_one() {
    let fx = Fixture::new();
    let mut h = with_tools(&fx, "Ann: Hello there.\n");
    h.state_mut()
        .set_output_catalog(Arc::new(ui::devices::MockCatalog(fx.mock.clone())));
    step_until(&mut h, Duration::from_secs(5), "the device list", |h| {
        !h.state().output_names().is_empty()
    });
    assert_eq!(h.state().output_names(), ui::devices::MOCK_OUTPUTS);
    h.run_steps(2);
    h.get_by_value("mock output (tests)").click();
    h.run_steps(2);
    h.get_by_label("Mock headphones").click();
    step_until(&mut h, Duration::from_secs(5), "the switch", |h| {
        h.state().output_device() == "Mock headphones"
    });
    h.run_steps(2);
    assert!(h.query_by_value("Mock headphones").is_some());
    let message = h.state().message().unwrap_or_default().to_owned();
    assert!(
        message.contains("playing through Mock headphones"),
        "{message}"
    );
}

#[test]
fn the_blend_editor_builds_a_recipe_and_gives_it_to_the_speaker() {
    let fx = Fixture::new();
    let mut h = with_tools(
        &fx,
        "---\ncast:\n  Ann: af_heart\n  Ben: am_adam\n---\nAnn: One.\nBen: Two.\n",
    );
    h.get_by_label("Blend voices for Ben").click();
    h.run_steps(2);
    // Ben's voice and a second one, 0.7 / 0.3 to start.
    let second = h.state().document().speakers()[1].1.voice.clone();
    assert_eq!(second, "am_adam");
    let start = h
        .query_all_by_label_contains("Recipe: am_adam:0.7+")
        .count();
    assert_eq!(start, 1, "the starting recipe is shown");
    // Even the weights through the sliders (Ann's speed, Ben's speed, then the blend's).
    let sliders: Vec<_> = h.query_all_by_role(Role::Slider).collect();
    assert_eq!(sliders.len(), 4);
    sliders[2].set_value_accesskit(0.5);
    sliders[3].set_value_accesskit(0.5);
    h.run_steps(2);
    let shown = h
        .query_all_by_label_contains("Recipe: am_adam:0.5+")
        .count();
    assert_eq!(shown, 1, "equal weights normalise to 0.5 each");
    // A third voice, then take it out again.
    h.get_by_label("Add voice").click();
    h.run_steps(2);
    assert_eq!(h.query_all_by_label("Remove").count(), 3);
    assert!(h.query_by_label_contains("+").is_some());
    h.get_all_by_label("Remove").last().expect("three").click();
    h.run_steps(2);
    assert_eq!(h.query_all_by_label("Remove").count(), 0);
    // Preview needs the model; Use gives Ben the blend.
    h.get_by_label("Preview blend").click();
    h.run_steps(2);
    let message = h.state().message().unwrap_or_default().to_owned();
    assert!(message.contains("model is not loaded"), "{message}");
    h.get_by_label("Use for Ben").click();
    h.run_steps(2);
    let voice = h.state().document().speakers()[1].1.voice.clone();
    assert!(
        voice.starts_with("am_adam:0.5+") && voice.ends_with(":0.5"),
        "{voice}"
    );
    let spec = engine::voice::VoiceSpec::parse(&voice).expect("the engine parses the recipe");
    assert_eq!(spec.terms.len(), 2);
}

#[test]
fn library_voices_are_offered_in_the_cast() {
    let fx = Fixture::new();
    {
        let lib = engine::library::Library::open(fx.path("library.sqlite")).expect("library");
        lib.add_voice(&engine::library::NewVoice {
            name: "narrator".into(),
            kind: engine::library::VoiceKind::Blend,
            language: None,
            gender: None,
            recipe: Some("af_bella:0.5+af_sky:0.5".into()),
            style: None,
            notes: String::new(),
        })
        .expect("add a blend");
    }
    let mut h = with_tools(&fx, "Ann: Hello there.\nBen: Hi, Ann.\n");
    let before = h.state().document().speakers()[1].1.voice.clone();
    h.get_by_value(&before).click();
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "Search").focus();
    h.run_steps(1);
    h.get_by_role_and_label(Role::TextInput, "Search")
        .type_text("narr");
    step_until(&mut h, Duration::from_secs(5), "the library voices", |h| {
        h.query_by_label("narrator (library)").is_some()
    });
    h.run_steps(2);
    h.get_by_label("narrator (library)").click();
    h.run_steps(2);
    assert_eq!(h.state().document().speakers()[1].1.voice, "narrator");
}

#[test]
fn ctrl_z_undoes_raw_typing_but_belongs_to_other_fields_while_they_have_focus() {
    let fx = Fixture::new();
    let original = "Ann: Hello there.\nBen: Hi, Ann.\n";
    let mut h = with_tools(&fx, original);
    h.get_by_label("Raw text").click();
    h.run_steps(2);
    h.get_by_value(original).focus();
    h.run_steps(1);
    h.get_by_value(original).type_text("Ann: First.\n");
    h.run_steps(2);
    let typed = h.state().document().text.clone();
    assert_ne!(typed, original);
    assert!(typed.contains("Ann: First."), "{typed}");
    // In the find field, Ctrl+Z is the field's: the script stays as typed.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::F);
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "Find")
        .type_text("zz");
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    h.run_steps(2);
    assert_eq!(h.state().document().text, typed);
    // Back in the script, Ctrl+Z undoes the typing.
    h.get_by_label("Close").click();
    h.run_steps(2);
    h.get_by_value(&typed).focus();
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    h.run_steps(2);
    assert_eq!(h.state().document().text, original);
}
