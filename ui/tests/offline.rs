//! Studio UI tests that need no model: import by drop, inline parse errors, cast choices,
//! shortcuts, projects in the library (save, autosave, crash recovery), layout at the two
//! window sizes, and a lost audio device in the status bar. They drive the real widgets through
//! `egui_kittest`'s `AccessKit` tree.

mod support;

use std::time::Duration;

use eframe::egui;
use eframe::egui::Role;
use egui_kittest::kittest::Queryable;
use support::{step_until, Fixture, SIZE};
use ui::audio::{AudioOutError, DeviceNews};
use ui::doc::CastChoice;
use ui::Command;

#[test]
fn dropping_a_script_opens_it_and_unsupported_files_are_explained() {
    let fx = Fixture::new();
    let script = fx.write("chat.txt", "Ann: Good morning.\nBen: Morning, Ann!\n");
    let mut h = fx.harness(None, SIZE);
    step_until(
        &mut h,
        Duration::from_secs(10),
        "the model to be missing",
        |h| h.state().engine_error().is_some(),
    );
    // First run without a model says so and offers a retry.
    assert!(h
        .query_all_by_label("Retry (fetch the model)")
        .next()
        .is_some());
    ui::input::drop_file(h.input_mut(), &script);
    step_until(&mut h, Duration::from_secs(10), "the import", |h| {
        h.state().document().name == "chat"
    });
    let doc = h.state().document();
    let speakers: Vec<String> = doc.speakers().into_iter().map(|(s, _)| s).collect();
    assert_eq!(speakers, ["Ann", "Ben"]);
    // The lines view shows each turn with its speaker.
    assert!(h.query_by_label("Morning, Ann!").is_some());
    // Ben appears in the cast and as the speaker of his line.
    assert!(h.query_all_by_label("Ben").count() >= 2);

    let picture = fx.write("photo.png", "not a script");
    ui::input::drop_file(h.input_mut(), &picture);
    h.step();
    h.step();
    let message = h.state().message().unwrap_or_default().to_owned();
    assert!(
        message.contains("photo.png") && message.contains("not a script"),
        "{message}"
    );
    // A clip dropped away from the cast is explained too.
    let clip = fx.write("voice.wav", "RIFF");
    ui::input::drop_file(h.input_mut(), &clip);
    h.step();
    let message = h.state().message().unwrap_or_default().to_owned();
    assert!(
        message.contains("drop a voice clip on a speaker"),
        "{message}"
    );
}

#[test]
fn a_parse_error_is_shown_at_its_line_in_the_raw_view() {
    let fx = Fixture::new();
    let mut h = fx.harness(None, SIZE);
    h.get_by_label("Raw text").click();
    h.run_steps(2);
    // Break the script: front matter that never closes is an error at a known line.
    h.state_mut()
        .apply(Command::EditText("---\ntitle: x\nAlice: hi\n".into()));
    h.run_steps(2);
    let err = h
        .state()
        .document()
        .parsed
        .clone()
        .expect_err("the script is broken");
    let label = format!("line {}, column {}", err.line, err.column);
    h.get_by_label_contains(&format!("{label}: {}", err.kind));
    // Typing a fix into the raw editor re-parses.
    h.state_mut()
        .apply(Command::EditText("Alice: hi\nBob: hello\n".into()));
    h.run_steps(2);
    assert!(h.query_by_label_contains(&label).is_none());
}

#[test]
fn choosing_a_voice_in_the_cast_panel_changes_the_episode() {
    let fx = Fixture::new();
    let mut h = fx.harness(None, SIZE);
    h.run_steps(2);
    let (speaker, before) = h.state().document().speakers()[1].clone();
    assert_ne!(before.voice, "bm_lewis");
    h.get_by_value(&before.voice).click();
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "Search").focus();
    h.run_steps(1);
    h.get_by_role_and_label(Role::TextInput, "Search")
        .type_text("lewis");
    h.run_steps(2);
    h.get_by_label("bm_lewis (male)").click();
    h.run_steps(2);
    let ep = h.state().document().episode().expect("parses");
    assert_eq!(
        ep.cast.get(&speaker).map(|m| m.voice.as_str()),
        Some("bm_lewis")
    );
}

#[test]
fn clicking_the_voice_search_keeps_the_list_open() {
    let fx = Fixture::new();
    let mut h = fx.harness(None, SIZE);
    h.run_steps(2);
    let (_, before) = h.state().document().speakers()[1].clone();
    h.get_by_value(&before.voice).click();
    h.run_steps(2);
    assert!(
        h.query_by_label("bm_lewis (male)").is_some(),
        "the list is open"
    );
    // A click (not only keyboard focus) in the search field, as a user does.
    h.get_by_role_and_label(Role::TextInput, "Search").click();
    h.run_steps(2);
    assert!(
        h.query_by_label("bm_lewis (male)").is_some(),
        "the list stays open for the search"
    );
    h.get_by_role_and_label(Role::TextInput, "Search")
        .type_text("lewis");
    h.run_steps(2);
    h.get_by_label("bm_lewis (male)").click();
    h.run_steps(2);
    assert!(
        h.query_by_label("bm_george (male)").is_none(),
        "choosing a voice closes the list"
    );
}

#[test]
fn automatic_casting_guesses_from_names_and_says_so_per_speaker() {
    let fx = Fixture::new();
    let mut h = fx.harness(None, SIZE);
    h.run_steps(2);
    // Three men and a host nobody can place from the name.
    h.state_mut().apply(Command::EditText(
        "TOM: Where were we?\nHAROLD: The station.\nPETER: And the train?\nHOST: Gone.\n".into(),
    ));
    h.run_steps(2);
    let ep = h.state().document().episode().expect("parses");
    for man in ["TOM", "HAROLD", "PETER"] {
        let voice = ep
            .cast
            .get(man)
            .map(|m| m.voice.clone())
            .unwrap_or_default();
        assert!(
            voice.starts_with("am_") || voice.starts_with("bm_"),
            "{man}: {voice}"
        );
    }
    assert!(
        ep.cast
            .get("HOST")
            .is_some_and(|m| m.voice.starts_with("af_")),
        "the balance gives the unknown name a woman's voice after three men"
    );
    assert_eq!(
        h.query_all_by_label_contains("guessed from the given name")
            .count(),
        3,
        "one notice per guessed speaker"
    );
    assert!(h
        .query_by_label_contains("A male voice, guessed from the given name \"HAROLD\"")
        .is_some());
    // Choosing a voice is the author's decision, no longer a guess.
    h.state_mut().apply(Command::SetCast {
        speaker: "TOM".into(),
        choice: CastChoice {
            voice: "bm_lewis".into(),
            speed: 1.0,
        },
    });
    h.run_steps(2);
    assert_eq!(
        h.query_all_by_label_contains("guessed from the given name")
            .count(),
        2
    );
}

#[test]
fn shortcuts_open_help_export_and_toggle_the_editor() {
    let fx = Fixture::new();
    let mut h = fx.harness(None, SIZE);
    h.key_press(egui::Key::F1);
    h.run_steps(2);
    assert!(h.query_by_label("Keyboard shortcuts").is_some());
    assert!(h
        .query_by_label("Play / pause from the selected line")
        .is_some());
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(h
        .query_by_label("Play / pause from the selected line")
        .is_none());
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::E);
    h.run_steps(2);
    assert!(h.state().export_dialog().open);
    assert!(h.query_by_label("Chapters JSON").is_some());
}

#[test]
fn projects_save_load_and_recover_after_a_crash() {
    let fx = Fixture::new();
    {
        let mut h = fx.harness(None, SIZE);
        // Name the project (Save as), then change it and save again with the shortcut.
        h.state_mut().apply(Command::SaveAs("pilot".into()));
        h.state_mut()
            .apply(Command::EditText("Ann: One.\nBen: Two.\n".into()));
        h.state_mut().apply(Command::SetCast {
            speaker: "Ben".into(),
            choice: CastChoice {
                voice: "bm_george".into(),
                speed: 1.25,
            },
        });
        h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::S);
        step_until(&mut h, Duration::from_secs(10), "the save", |h| {
            h.state().projects().iter().any(|p| p == "pilot")
        });
        // Unsaved edits after the save, then a "crash": the studio is dropped without shutdown,
        // but the periodic autosave has already run.
        h.state_mut().apply(Command::EditText(
            "Ann: One.\nBen: Two, and three.\n".into(),
        ));
        h.state_mut().autosave_now();
        assert!(
            h.state_mut().flush_library(),
            "the library wrote the autosave"
        );
    }
    let mut h = fx.harness(None, SIZE);
    step_until(&mut h, Duration::from_secs(10), "the recovery offer", |h| {
        !h.state().recovery_offers().is_empty()
    });
    h.run_steps(2);
    assert!(h
        .query_all_by_label_contains("closed without saving \"pilot\"")
        .next()
        .is_some());
    h.get_by_label("Recover").click();
    h.run_steps(2);
    assert!(
        h.state().document().text.contains("two, and three")
            || h.state().document().text.contains("Two, and three")
    );
    // Open the saved project: the cast choices come back.
    h.state_mut().apply(Command::LoadProject("pilot".into()));
    step_until(&mut h, Duration::from_secs(10), "the load", |h| {
        h.state().document().text == "Ann: One.\nBen: Two.\n"
    });
    let ben = h
        .state()
        .document()
        .cast
        .get("Ben")
        .cloned()
        .expect("cast restored");
    assert_eq!(ben.voice, "bm_george");
    assert!((ben.speed - 1.25).abs() < 1e-6);
}

/// The library's autosave of project `name`, read through a connection of its own (as the next
/// start would), polled until `done` holds or `timeout` passes.
fn autosave_when(
    fx: &Fixture,
    name: &str,
    timeout: Duration,
    done: impl Fn(&engine::library::Autosave) -> bool,
) -> Option<engine::library::Autosave> {
    let lib = engine::library::Library::open(fx.path("library.sqlite")).expect("library");
    let start = std::time::Instant::now();
    loop {
        let found = lib.autosave_for(name).expect("read the autosave");
        if found.as_ref().is_some_and(&done) || start.elapsed() > timeout {
            return found;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn edits_and_voice_choices_are_autosaved_without_another_frame_and_recovered() {
    let fx = Fixture::new();
    let script = "Ann: One.\nBen: Two, and three.\n";
    let choice = CastChoice {
        voice: "bm_george".into(),
        speed: 1.25,
    };
    {
        let mut h = fx.harness(None, SIZE);
        h.run_steps(2);
        h.state_mut().apply(Command::EditText(script.into()));
        h.state_mut().apply(Command::SetCast {
            speaker: "Ben".into(),
            choice: choice.clone(),
        });
        // No frame is drawn from here on (the pointer left the window), yet the work is
        // written: the autosave keeps its own time.
        let saved = autosave_when(&fx, "untitled", Duration::from_secs(8), |a| {
            a.script == script && !a.cast.is_empty()
        })
        .expect("an autosave was written without another frame");
        assert_eq!(saved.script, script);
        assert_eq!(
            saved.cast.get("Ben").map(String::as_str),
            Some("bm_george@1.25")
        );
        // A crash: the studio never shuts down.
        std::mem::forget(h);
    }
    let mut h = fx.harness(None, SIZE);
    step_until(&mut h, Duration::from_secs(10), "the recovery offer", |h| {
        !h.state().recovery_offers().is_empty()
    });
    h.run_steps(2);
    h.get_by_label("Recover").click();
    h.run_steps(2);
    assert_eq!(h.state().document().text, script);
    assert_eq!(h.state().document().cast.get("Ben"), Some(&choice));
    assert!(
        h.state().document().needs_saving(),
        "recovered work is unsaved"
    );
}

#[test]
fn quitting_with_unsaved_work_asks_to_save_discard_or_cancel() {
    let fx = Fixture::new();
    let mut h = fx.harness(None, SIZE);
    h.run_steps(2);
    // Nothing changed yet: Quit closes at once.
    h.state_mut().apply(Command::Quit);
    assert!(h.state().is_quitting());

    let mut h = fx.harness(None, SIZE);
    h.run_steps(2);
    h.state_mut()
        .apply(Command::EditText("Ann: Kept or not?\n".into()));
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Q);
    h.run_steps(2);
    assert!(!h.state().is_quitting(), "asks before closing");
    assert!(h
        .query_by_label_contains("has changes that are not saved")
        .is_some());
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(!h.state().is_quitting());
    assert!(h
        .query_by_label_contains("has changes that are not saved")
        .is_none());
    assert_eq!(h.state().document().text, "Ann: Kept or not?\n");

    // The window manager's close button asks too, and Discard forgets the work.
    h.input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
    h.run_steps(2);
    assert!(!h.state().is_quitting(), "the close was cancelled to ask");
    h.get_by_label("Discard").click();
    h.run_steps(2);
    assert!(h.state().is_quitting());
    assert!(h.state_mut().flush_library());
    assert!(
        autosave_when(&fx, "untitled", Duration::ZERO, |_| true).is_none(),
        "discarded work is not offered again"
    );

    // Save keeps it as a project, with no recovery offer left behind.
    let mut h = fx.harness(None, SIZE);
    h.run_steps(2);
    h.state_mut()
        .apply(Command::EditText("Ann: Keep this.\n".into()));
    h.state_mut().apply(Command::Quit);
    h.run_steps(2);
    h.get_by_label("Save").click();
    h.run_steps(2);
    assert!(h.state().is_quitting());
    assert!(h.state_mut().flush_library());
    let lib = engine::library::Library::open(fx.path("library.sqlite")).expect("library");
    let project = lib
        .load_project("untitled")
        .expect("read")
        .expect("saved on quit");
    assert_eq!(project.draft.script, "Ann: Keep this.\n");
    assert!(lib.autosave_for("untitled").expect("read").is_none());
}

#[test]
fn the_layout_fits_at_1280x800_and_1920x1080() {
    for size in [SIZE, egui::Vec2::new(1920.0, 1080.0)] {
        let fx = Fixture::new();
        let mut h = fx.harness(None, size);
        h.run_steps(3);
        let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, size);
        for label in [
            "Play", "Stop", "Cast", "Script", "File", "Lines", "Raw text",
        ] {
            let r = h.get_by_label(label).rect();
            assert!(
                screen.contains_rect(r),
                "{label} at {r:?} is outside {size:?}"
            );
        }
        // The script (central panel) gets most of the width.
        let script = h.get_by_label("Script").rect();
        let cast = h.get_by_label("Cast").rect();
        assert!(script.left() > cast.right(), "script right of the cast");
        assert!(script.left() < size.x * 0.4, "cast panel is not too wide");
    }
}

#[test]
fn a_device_that_goes_away_is_shown_in_the_status_bar() {
    let fx = Fixture::new();
    let mut h = fx.harness(None, SIZE);
    h.run_steps(2);
    assert!(h.query_by_label("audio: cannot play").is_none());
    fx.mock.report(DeviceNews::Moved {
        from: "USB headset".into(),
        to: "Speakers".into(),
    });
    h.run_steps(2);
    let message = h.state().message().unwrap_or_default().to_owned();
    assert!(
        message.contains("USB headset went away: playing through Speakers"),
        "{message}"
    );
    fx.mock.report(DeviceNews::Lost(AudioOutError::Lost {
        device: "Speakers".into(),
        reason: "no output device was found".into(),
    }));
    h.run_steps(2);
    assert!(h.query_by_label("audio: cannot play").is_some());
    assert!(!h.state().is_playing());
}

#[test]
fn without_sound_the_transport_says_so_and_keeps_saying_it() {
    let fx = Fixture::new();
    let mut h = fx.harness_without_sound(None, SIZE);
    h.run_steps(3);
    let play = h.get_by_label("Play").rect();
    let notice = h
        .get_by_label_contains("No sound: no audio output device")
        .rect();
    // Beside the transport: just under the Play button, not in a tooltip or the status bar.
    assert!(
        notice.top() >= play.bottom() - 1.0 && notice.top() < play.bottom() + 40.0,
        "{notice:?} under {play:?}"
    );
    assert!(h.query_by_label_contains("export works").is_some());
    h.state_mut().apply(Command::TogglePlay);
    h.run_steps(2);
    assert!(
        h.query_by_label("Pause").is_none(),
        "nothing moves, so no Pause"
    );
    // Not a message that expires: it does not depend on the status bar's message at all.
    h.state_mut()
        .apply(Command::Say("something else happened".into()));
    h.run_steps(2);
    assert!(h
        .query_by_label_contains("No sound: no audio output device")
        .is_some());
}

/// A turn long enough to wrap in the script panel at any window size.
const LONG: &str = "We took the night train north through the mountains, past the lakes and \
    the sleeping towns, and nobody on board could say when we would arrive, or whether the \
    dining car would open again before the border, or where the conductor had gone with the \
    timetable we had all been promised at the station.";

/// Clicks at `pos` (press and release, then moves the pointer away).
fn click_at(h: &mut egui_kittest::Harness<'_, ui::Studio>, pos: egui::Pos2) {
    h.hover_at(pos);
    h.run_steps(1);
    h.drag_at(pos);
    h.run_steps(1);
    h.drop_at(pos);
    h.run_steps(2);
}

#[test]
fn long_lines_wrap_before_their_edit_button_and_the_line_editor_stays_on_the_panel() {
    for size in [SIZE, egui::Vec2::new(900.0, 600.0)] {
        let fx = Fixture::new();
        let mut h = fx.harness(None, size);
        h.run_steps(2);
        h.state_mut()
            .apply(Command::EditText(format!("Ann: {LONG}\nBen: Short.\n")));
        h.run_steps(3);
        let words = h.get_by_label(LONG).rect();
        let edit = h
            .get_all_by_label("Edit")
            .map(|n| n.rect())
            .find(|r| r.center().y > words.top() && r.center().y < words.bottom())
            .expect("the long line's Edit button");
        assert!(
            !words.intersects(edit),
            "at {size:?} the Edit button {edit:?} covers the words {words:?}"
        );
        // The line's editor: its buttons stay inside the window.
        click_at(&mut h, edit.center());
        let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, size);
        for button in ["Apply", "Cancel"] {
            let r = h.get_by_label(button).rect();
            assert!(
                screen.contains_rect(r),
                "at {size:?}, {button} at {r:?} is off the panel"
            );
        }
        h.get_by_label("Cancel").click();
        h.run_steps(2);
        assert!(
            h.query_by_label("Apply").is_none(),
            "Cancel closes the editor"
        );
    }
}

#[test]
fn a_click_anywhere_on_a_row_selects_its_line() {
    let fx = Fixture::new();
    let mut h = fx.harness(None, SIZE);
    h.run_steps(2);
    h.state_mut().apply(Command::EditText(
        "Ann: One.\nBen: Two.\nAnn: Three.\n".into(),
    ));
    h.run_steps(2);
    assert!(h.query_by_label("from line 1").is_some());
    // Right of the short words "Two." and left of the row's Edit button: the row, not its text.
    let words = h.get_by_label("Two.").rect();
    let spot = egui::pos2(words.right() + 80.0, words.center().y);
    click_at(&mut h, spot);
    assert!(
        h.query_by_label("from line 2").is_some(),
        "a click beside the words selects the line"
    );
}

#[test]
fn at_900x600_the_status_bar_is_on_screen() {
    let size = egui::Vec2::new(900.0, 600.0);
    let fx = Fixture::new();
    let mut h = fx.harness(None, size);
    h.run_steps(2);
    let said = "not opened: /home/author/Downloads/a-rather-long-folder-name/episode-cover.png: \
                not a script or a voice clip (scripts: txt, md, markdown, json, xml, text, \
                script, fountain, docx; clips: wav, flac, mp3, ogg, oga, opus, m4a, aac, mp4, aif, aiff)";
    h.state_mut().apply(Command::Say(said.into()));
    h.run_steps(3);
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, size);
    let message = h.get_by_label(said).rect();
    assert!(screen.contains_rect(message), "the message at {message:?}");
    let audio = h.get_by_label_contains("audio:").rect();
    assert!(screen.contains_rect(audio), "the audio output at {audio:?}");
    for label in ["Play", "Stop", "Cast", "Script"] {
        let r = h.get_by_label(label).rect();
        assert!(screen.contains_rect(r), "{label} at {r:?}");
    }
}

/// A file dialog that answers `chosen` after `delay`, counting how often it was shown.
struct FakeChooser {
    chosen: Option<std::path::PathBuf>,
    delay: Duration,
    shown: std::sync::atomic::AtomicUsize,
}

impl ui::files::ScriptChooser for FakeChooser {
    fn available(&self) -> Result<(), ui::files::NoDialog> {
        Ok(())
    }

    fn choose(&self, _start: Option<&std::path::Path>) -> Option<std::path::PathBuf> {
        self.shown
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::thread::sleep(self.delay);
        self.chosen.clone()
    }
}

fn chooser(chosen: Option<std::path::PathBuf>, delay: Duration) -> std::sync::Arc<FakeChooser> {
    std::sync::Arc::new(FakeChooser {
        chosen,
        delay,
        shown: std::sync::atomic::AtomicUsize::new(0),
    })
}

#[test]
fn file_open_uses_the_desktop_dialog_and_the_typed_path_without_one() {
    let fx = Fixture::new();
    let script = fx.write("pilot.txt", "Ann: Chosen in the dialog.\n");
    // The desktop's dialog: the file chosen opens, and no typed-path window appears.
    let mut h = fx.harness(None, SIZE);
    h.run_steps(2);
    let dialog = chooser(Some(script.clone()), Duration::ZERO);
    h.state_mut().set_script_chooser(dialog.clone());
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    step_until(&mut h, Duration::from_secs(10), "the chosen script", |h| {
        h.state().document().name == "pilot"
    });
    assert_eq!(dialog.shown.load(std::sync::atomic::Ordering::Relaxed), 1);
    assert!(h.state().dialogs().open.is_none(), "no typed path");
    // Cancelled (after a human's while): nothing happens.
    let cancelled = chooser(None, Duration::from_millis(500));
    h.state_mut().set_script_chooser(cancelled);
    h.state_mut().apply(Command::ShowOpen);
    std::thread::sleep(Duration::from_millis(700));
    h.run_steps(3);
    assert!(h.state().dialogs().open.is_none());
    // A dialog that gives nothing back at once never showed: the typed path appears.
    let broken = chooser(None, Duration::ZERO);
    h.state_mut().set_script_chooser(broken);
    h.state_mut().apply(Command::ShowOpen);
    step_until(&mut h, Duration::from_secs(5), "the typed path", |h| {
        h.state().dialogs().open.is_some()
    });
    h.run_steps(2);
    assert!(h
        .query_by_label_contains("No file dialog: the file dialog did not open")
        .is_some());

    // A desktop with no dialog at all (this headless machine, unless it has a portal or zenity):
    // File → Open is the typed path, saying why.
    let mut h = fx.harness(None, SIZE);
    h.run_steps(2);
    let env = |name: &str| std::env::var_os(name);
    let exists = |p: &std::path::Path| p.exists();
    if ui::files::desktop_has_dialog(&env, &exists).is_ok() {
        eprintln!("this machine has a file dialog: the headless fallback is not tried here");
        return;
    }
    h.state_mut()
        .set_script_chooser(std::sync::Arc::new(ui::files::DesktopChooser));
    h.state_mut().apply(Command::ShowOpen);
    h.run_steps(2);
    assert!(h.state().dialogs().open.is_some());
    assert!(h
        .query_by_label_contains("No file dialog: this desktop has no file dialog")
        .is_some());
    let other = fx.write("typed.txt", "Ben: Typed by hand.\n");
    h.state_mut()
        .apply(Command::SetOpenPath(other.display().to_string()));
    h.run_steps(1);
    h.get_by_label("Import").click();
    step_until(&mut h, Duration::from_secs(10), "the typed script", |h| {
        h.state().document().name == "typed"
    });
}

#[test]
fn opening_a_non_script_says_what_is_accepted_until_dismissed() {
    let fx = Fixture::new();
    let mut h = fx.harness(None, SIZE);
    h.run_steps(2);
    let mp3 = fx.path("interview.mp3");
    std::fs::write(&mp3, b"ID3\x04\0\0\0\0\0\x21\xff\xfb\x90\x64").expect("write");
    h.state_mut().apply(Command::Import(mp3));
    step_until(&mut h, Duration::from_secs(10), "the refusal", |h| {
        h.state().dialogs().open_error.is_some()
    });
    h.run_steps(2);
    assert!(h.query_by_label("Cannot open this file").is_some());
    assert!(h
        .query_by_label_contains("interview.mp3 is audio, not a script")
        .is_some());
    assert!(
        h.query_by_label_contains(".txt, .md").is_some(),
        "says what is accepted"
    );
    // It stays: other news does not push it away.
    h.state_mut().apply(Command::Say("something else".into()));
    h.run_steps(3);
    assert!(h.query_by_label("Cannot open this file").is_some());
    h.get_by_label("OK").click();
    h.run_steps(2);
    assert!(h.query_by_label("Cannot open this file").is_none());
    assert_eq!(h.state().document().name, "untitled", "nothing was opened");

    let binary = fx.path("notes.txt");
    std::fs::write(&binary, [0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0xff, 0xfe, 0]).expect("write");
    h.state_mut().apply(Command::Import(binary));
    step_until(&mut h, Duration::from_secs(10), "the refusal", |h| {
        h.state().dialogs().open_error.is_some()
    });
    h.run_steps(2);
    assert!(h
        .query_by_label_contains("notes.txt is not a script")
        .is_some());
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(h.query_by_label("Cannot open this file").is_none());
}

#[test]
fn plain_banter_reopens_the_project_saved_last() {
    let fx = Fixture::new();
    {
        let mut h = fx.harness(None, SIZE);
        h.run_steps(2);
        h.state_mut()
            .apply(Command::EditText("Ann: Older.\n".into()));
        h.state_mut().apply(Command::SaveAs("older".into()));
        assert!(h.state_mut().flush_library());
        h.state_mut()
            .apply(Command::EditText("Ann: Where we left off.\n".into()));
        h.state_mut().apply(Command::SaveAs("pilot".into()));
        assert!(h.state_mut().flush_library());
        h.state_mut().shutdown();
    }
    let mut h = fx.harness_reopening(SIZE);
    step_until(&mut h, Duration::from_secs(10), "the last project", |h| {
        h.state().document().name == "pilot"
    });
    assert_eq!(h.state().document().text, "Ann: Where we left off.\n");
    assert!(!h.state().document().needs_saving());
    // A studio started with a script (or by a test) does not.
    let mut h = fx.harness(None, SIZE);
    h.run_steps(5);
    assert!(h.state_mut().flush_library());
    h.run_steps(2);
    assert_eq!(h.state().document().name, "untitled");
}
