//! The studio with the real engine (model tests: skipped without the model outside CI): import a
//! script by a simulated file drop, assign a voice, press play and watch the waveform grow while
//! the mock audio backend receives the samples, edit a line, and export.

mod support;

use std::time::Duration;

use eframe::egui;
use eframe::egui::Role;
use egui_kittest::kittest::Queryable;
use support::{model_store, step_until, wait_for_model, Fixture, SIZE};

/// Two speakers, one line each.
const DUO: &str = "Ann: Good morning, and welcome.\nBen: It is good to be here.\n";

/// A studio with the model loaded and `text` as its script.
fn studio_with(
    fx: &Fixture,
    store: &engine::assets::ModelStore,
    text: &str,
) -> egui_kittest::Harness<'static, ui::Studio> {
    let mut h = fx.harness(Some(store.root()), SIZE);
    h.state_mut().apply(ui::Command::EditText(text.into()));
    wait_for_model(&mut h);
    h
}

#[test]
fn import_cast_play_edit_and_export() {
    let Some(store) = model_store() else {
        return;
    };
    let fx = Fixture::new();
    let script = fx.write(
        "duo.txt",
        "Ann: Good morning, and welcome.\nBen: Thanks. It is good to be here.\n",
    );
    let mut h = fx.harness(Some(store.root()), SIZE);
    wait_for_model(&mut h);

    // Import by dropping the file on the window.
    ui::input::drop_file(h.input_mut(), &script);
    step_until(&mut h, Duration::from_secs(10), "the import", |h| {
        h.state().document().name == "duo"
    });

    // Give Ben another voice through the cast panel's combo box.
    let ben = h.state().document().speakers()[1].1.voice.clone();
    let new_voice = if ben == "am_adam" {
        "am_michael"
    } else {
        "am_adam"
    };
    h.get_by_value(&ben).click();
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "Search").focus();
    h.run_steps(1);
    h.get_by_role_and_label(Role::TextInput, "Search")
        .type_text(new_voice);
    h.run_steps(2);
    h.get_by_label(&format!("{new_voice} (male)")).click();
    h.run_steps(2);
    let ep = h.state().document().episode().expect("parses");
    assert_eq!(
        ep.cast.get("Ben").map(|m| m.voice.as_str()),
        Some(new_voice)
    );

    // Play: the waveform grows as chunks arrive, and the mock device receives them.
    h.get_by_label("Play").click();
    let mut sizes = Vec::new();
    step_until(&mut h, Duration::from_mins(2), "the whole render", |h| {
        let n = h.state().waveform().samples;
        if sizes.last() != Some(&n) {
            sizes.push(n);
        }
        fx.mock.pull(2400);
        h.state().waveform().complete
    });
    assert!(sizes.len() >= 3, "the waveform grew in steps: {sizes:?}");
    let tl = h.state().waveform();
    assert_eq!(tl.regions.len(), 2, "one region per line");
    assert_eq!(tl.regions[1].speaker, "Ben");
    assert!(tl.secs() > 2.0, "{} s", tl.secs());
    assert!(tl.peak() > 0.05, "audible audio");
    // Drain the device and compare what it received with what was rendered.
    while fx.mock.pull(24_000) > 0 {}
    let received = fx.mock.received();
    assert_eq!(
        received.len(),
        tl.samples,
        "the device got every rendered sample"
    );
    let energy: f32 = received.iter().map(|s| s * s).sum::<f32>() / received.len() as f32;
    assert!(energy > 1e-5, "not silence: {energy}");

    // Edit Ben's line through its Edit button.
    h.get_all_by_label("Edit")
        .last()
        .expect("the last line's Edit button (the first is the Edit menu)")
        .click();
    h.run_steps(2);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run_steps(1);
    h.get_all_by_value("Ben: Thanks. It is good to be here.")
        .next()
        .expect("the line's source in an editor")
        .type_text("Ben: Thanks! Glad to be here.");
    h.run_steps(1);
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    let doc = h.state().document();
    assert!(
        doc.text.contains("Ben: Thanks! Glad to be here."),
        "{}",
        doc.text
    );
    assert!(!doc.text.contains("It is good"), "{}", doc.text);
    assert!(h.query_by_label("Thanks! Glad to be here.").is_some());

    // Export through the dialog.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::E);
    h.run_steps(2);
    let dest = fx.path("duo-episode.wav");
    set_export_path(&mut h, &dest.display().to_string());
    h.get_by_label("Export").click();
    step_until(&mut h, Duration::from_mins(3), "the export", |h| {
        h.state().export_dialog().finished.is_some()
    });
    let report = match h.state().export_dialog().finished.as_ref() {
        Some(Ok(r)) => r.clone(),
        other => panic!("export failed: {:?}", other.map(|r| r.as_ref().err())),
    };
    assert!(report.duration_secs > 2.0);
    let bytes = std::fs::read(&dest).expect("the episode was written");
    assert_eq!(&bytes[..4], b"RIFF");
    assert!(dest.with_extension("srt").is_file(), "captions beside it");
    h.run_steps(2);
    assert!(h.query_by_label("Show in folder").is_some());
}

#[test]
fn a_dropped_clip_matches_a_voice_the_cast_check_warns_and_preview_speaks() {
    let Some(store) = model_store() else {
        return;
    };
    let fx = Fixture::new();
    let mut h = fx.harness(Some(store.root()), SIZE);
    // A narrow search keeps the test quick: three candidates, one blend render.
    h.state_mut()
        .set_match_options(engine::voicematch::MatchOptions {
            candidates: Some(vec![
                "af_heart".into(),
                "am_michael".into(),
                "bf_emma".into(),
            ]),
            max_renders: 1,
            listed: 3,
        });
    h.state_mut().apply(ui::Command::EditText(
        "---\ncast:\n  Ann: af_heart\n  Ben: af_heart\n---\nAnn: Hello.\nBen: Hi.\n".into(),
    ));
    wait_for_model(&mut h);

    // Both speakers share a voice: the cast check (off the UI thread) says so.
    step_until(&mut h, Duration::from_mins(2), "the cast check", |h| {
        !h.state().cast_warnings().is_empty()
    });
    h.run_steps(2);
    assert!(h
        .query_by_label_contains("Ann and Ben share the voice af_heart")
        .is_some());

    // Preview Ann: a sample sentence reaches the audio device.
    h.get_by_label("Preview Ann").click();
    h.run_steps(1);
    assert_eq!(h.state().previewing(), Some("Ann"));
    step_until(&mut h, Duration::from_mins(1), "the preview", |h| {
        fx.mock.pull(2400);
        h.state().previewing().is_none()
    });
    while fx.mock.pull(24_000) > 0 {}
    let heard = fx.mock.received();
    assert!(heard.len() > 24_000, "about two seconds: {}", heard.len());
    let energy: f32 = heard.iter().map(|s| s * s).sum::<f32>() / heard.len() as f32;
    assert!(energy > 1e-5, "not silence: {energy}");

    // Drop a recording of Michael on Ben: the match is saved in the library and given to Ben.
    let clip = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/goldens/ge2e/michael.flac");
    let row = h
        .query_all_by_label("Ben")
        .map(|n| n.rect())
        .min_by(|a, b| a.left().total_cmp(&b.left()))
        .expect("Ben in the cast panel");
    h.hover_at(row.center());
    h.run_steps(1);
    ui::input::drop_file(h.input_mut(), &clip);
    step_until(
        &mut h,
        Duration::from_mins(3),
        "the voice match",
        |h| match h.state().match_state("Ben") {
            Some(ui::work::voicematch::MatchState::Failed(e)) => panic!("match failed: {e}"),
            Some(ui::work::voicematch::MatchState::Done(_)) => true,
            _ => false,
        },
    );
    let Some(ui::work::voicematch::MatchState::Done(found)) = h.state().match_state("Ben").cloned()
    else {
        unreachable!("checked above")
    };
    assert!(found.recipe.contains("am_michael"), "{}", found.recipe);
    assert!(found.similarity > 0.7, "{}", found.similarity);
    let ben = h.state().document().speakers()[1].1.clone();
    assert_eq!(
        ben.voice, found.name,
        "Ben speaks in the saved library voice"
    );
    let library = engine::library::Library::open(fx.path("library.sqlite")).expect("library");
    let saved = library
        .get_voice(&found.name)
        .expect("library read")
        .expect("the matched voice is saved");
    assert!(saved.notes.contains("not a clone"), "{}", saved.notes);
    h.run_steps(2);
    assert!(h.query_by_label_contains("it does not clone").is_some());
    // Ann and Ben now differ: the warning goes once the check has run again.
    step_until(&mut h, Duration::from_mins(1), "the re-check", |h| {
        h.query_by_label_contains("share the voice").is_none()
    });

    // Ben's library voice renders (resolved to its recipe off the UI thread).
    let before = fx.mock.received().len();
    h.get_by_label("Preview Ben").click();
    h.run_steps(1);
    step_until(&mut h, Duration::from_mins(1), "Ben's preview", |h| {
        fx.mock.pull(2400);
        h.state().previewing().is_none()
    });
    while fx.mock.pull(24_000) > 0 {}
    let message = h.state().message().unwrap_or_default().to_owned();
    assert!(!message.contains("failed"), "{message}");
    let spoke = fx.mock.received().len() - before;
    assert!(spoke > 24_000, "Ben's matched voice spoke: {spoke} samples");

    // A blend for Ann, previewed: it speaks.
    h.get_by_label("Blend voices for Ann").click();
    h.run_steps(2);
    let before = fx.mock.received().len();
    h.get_by_label("Preview blend").click();
    h.run_steps(1);
    assert_eq!(h.state().previewing(), Some("Ann"));
    step_until(&mut h, Duration::from_mins(1), "the blend preview", |h| {
        fx.mock.pull(2400);
        h.state().previewing().is_none()
    });
    while fx.mock.pull(24_000) > 0 {}
    let blend = fx.mock.received().len() - before;
    assert!(blend > 24_000, "the blend spoke: {blend} samples");
}

#[test]
fn editing_a_line_while_playing_re_renders_only_that_line() {
    let Some(store) = model_store() else {
        return;
    };
    let fx = Fixture::new();
    let mut h = studio_with(&fx, &store, DUO);
    h.get_by_label("Play").click();
    // Wait until Ann's line is rendered and Ben's has started (the device is not pulling, so
    // the playhead stays in Ann's line).
    step_until(&mut h, Duration::from_mins(2), "Ben's line to start", |h| {
        h.state().waveform().regions.len() == 2 && h.state().sentence_stats().1 == 2
    });
    let (hits, misses) = h.state().sentence_stats();
    assert!(h.state().is_playing());
    h.state_mut().apply(ui::Command::EditLine {
        line: 1,
        text: "Ben: It is great to be here.".into(),
    });
    let revision = h.state().document().revision;
    step_until(&mut h, Duration::from_mins(2), "the re-render", |h| {
        let tl = h.state().waveform();
        tl.revision == revision && tl.complete
    });
    let (hits2, misses2) = h.state().sentence_stats();
    assert_eq!(hits2 - hits, 1, "Ann's unchanged line came from the cache");
    assert_eq!(misses2 - misses, 1, "only Ben's edited line was rendered");
    assert!(h.state().is_playing(), "playback went on by itself");
    let tl = h.state().waveform();
    assert_eq!(tl.start_line, 0, "from the line being heard");
    assert_eq!(tl.regions.len(), 2);
    let words: Vec<&str> = tl.regions[0]
        .words
        .iter()
        .map(|w| w.text.as_str())
        .collect();
    assert_eq!(
        words,
        ["Good", "morning", "and", "welcome"],
        "a cached sentence is timed too"
    );
}

#[test]
fn play_from_a_word_then_click_another() {
    let Some(store) = model_store() else {
        return;
    };
    let fx = Fixture::new();
    let mut h = studio_with(&fx, &store, DUO);
    // "Play from here" on Ben's "good" (byte 6 of "It is good to be here."), nothing rendered
    // yet: playback renders from Ben's line and starts at the word once it is timed.
    h.state_mut()
        .apply(ui::Command::PlayFromWord { line: 1, at: 6 });
    assert!(!h.state().is_playing(), "waiting for the word");
    step_until(
        &mut h,
        Duration::from_mins(2),
        "playing from the word",
        |h| h.state().is_playing(),
    );
    let tl = h.state().waveform();
    assert_eq!((tl.start_line, tl.regions[0].line), (1, 1));
    let words = &tl.regions[0].words;
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    assert_eq!(texts, ["It", "is", "good", "to", "be", "here"]);
    assert!(words
        .windows(2)
        .all(|w| w[0].start <= w[1].start && w[0].end <= w[1].start + 1));
    assert_eq!(h.state().waveform().word_at(words[2].start), Some((1, 2)));
    let good = words[2].start;
    assert!(good > 0);
    assert_eq!(h.state().playhead(), good);
    // A click on "here" moves the playhead to it.
    let here = words[5].start;
    h.state_mut()
        .apply(ui::Command::SeekWord { line: 1, at: 18 });
    assert_eq!(h.state().playhead(), here);
}

/// A stand-in server that records what the studio asked of it.
#[derive(Clone, Default)]
struct FakeApi(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl ui::api::LoopbackApi for FakeApi {
    fn start(&mut self, engine: engine::Engine) -> Result<ui::api::ApiInfo, ui::api::ApiError> {
        // It is handed the studio's own engine: the scheduler it gets is the one playing.
        self.0.lock().expect("log").push(format!(
            "start segments={}",
            engine
                .metrics()
                .segments
                .load(std::sync::atomic::Ordering::Relaxed)
        ));
        Ok(ui::api::ApiInfo {
            url: "http://127.0.0.1:8717".into(),
            token: "secret-token".into(),
        })
    }

    fn stop(&mut self) {
        self.0.lock().expect("log").push("stop".into());
    }
}

#[test]
fn the_api_switch_serves_the_studio_engine_and_copies_the_token() {
    let Some(store) = model_store() else {
        return;
    };
    let fx = Fixture::new();
    let mut h = fx.harness(Some(store.root()), SIZE);
    let api = FakeApi::default();
    h.state_mut().set_api(Box::new(api.clone()));
    step_until(&mut h, Duration::from_mins(2), "the model to load", |h| {
        h.state().is_ready()
    });
    h.run_steps(2);
    assert!(h.state().api_running().is_none());
    h.get_by_label("API").click();
    h.run_steps(2);
    assert_eq!(
        h.state().api_running().map(|i| i.url.as_str()),
        Some("http://127.0.0.1:8717")
    );
    h.get_by_label("http://127.0.0.1:8717");
    assert!(
        h.query_by_label("secret-token").is_none(),
        "hidden until asked"
    );
    h.get_by_label("Show token").click();
    h.run_steps(2);
    h.get_by_label("secret-token");
    h.get_by_label("Hide token").click();
    h.run_steps(2);
    assert!(h.query_by_label("secret-token").is_none());
    h.get_by_label("Copy token").click();
    h.step();
    assert!(
        h.output()
            .platform_output
            .commands
            .iter()
            .any(|c| matches!(c, egui::OutputCommand::CopyText(t) if t == "secret-token")),
        "the token goes to the clipboard (eframe's `clipboard` feature carries it out)"
    );
    h.run_steps(1);
    assert_eq!(h.state().message(), Some("API token copied"));
    h.get_by_label("API").click();
    h.run_steps(2);
    assert!(h.state().api_running().is_none());
    let log = api.0.lock().expect("log").clone();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log[0].starts_with("start") && log[1] == "stop", "{log:?}");
}

#[test]
fn without_sound_play_renders_export_works_and_a_preview_keeps_the_timeline() {
    let Some(store) = model_store() else {
        return;
    };
    let fx = Fixture::new();
    let mut h = fx.harness_without_sound(Some(store.root()), SIZE);
    h.state_mut().apply(ui::Command::EditText(DUO.into()));
    wait_for_model(&mut h);
    h.get_by_label("Play").click();
    step_until(&mut h, Duration::from_mins(2), "the whole render", |h| {
        assert!(
            h.query_by_label("Pause").is_none() && !h.state().is_playing(),
            "Pause shown while nothing can move"
        );
        h.state().waveform().complete
    });
    let samples = h.state().waveform().samples;
    assert!(samples > 0);
    assert_eq!(h.state().playhead(), 0, "nothing moved");
    // A preview cannot be heard: it says so, and the rendered timeline stays.
    h.get_by_label("Preview Ann").click();
    h.run_steps(3);
    assert!(h.state().previewing().is_none());
    assert_eq!(h.state().waveform().samples, samples);
    assert!(h.state().waveform().complete);
    let said = h.state().message().unwrap_or_default().to_owned();
    assert!(said.contains("cannot preview Ann"), "{said}");
    // Export still works.
    h.state_mut().apply(ui::Command::ShowExport);
    let dest = fx.path("no-sound.wav");
    set_export_path(&mut h, &dest.display().to_string());
    h.state_mut().apply(ui::Command::StartExport);
    step_until(&mut h, Duration::from_mins(3), "the export", |h| {
        h.state().export_dialog().finished.is_some()
    });
    let Some(Ok(report)) = &h.state().export_dialog().finished else {
        panic!(
            "the export failed: {:?}",
            h.state().export_dialog().finished
        );
    };
    // Every sentence was just played: the export takes them all from the render cache.
    let all = format!(
        "{n} of {n} sentences came from the render cache",
        n = report.sentences
    );
    assert!(
        report.sentences > 0 && report.notices.iter().any(|n| n.starts_with(&all)),
        "{:?}",
        report.notices
    );
    // Exported files get the author's usual permissions (0666 less the umask), like any
    // program's, not 0600.
    let umask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
        })
        .expect("the umask");
    for file in [dest.clone(), dest.with_extension("srt")] {
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&file).expect("exported").permissions(),
        ) & 0o777;
        assert_eq!(mode, 0o666 & !umask, "{} is {mode:o}", file.display());
    }
}

/// Sets the export dialog's destination as the author would type it.
fn set_export_path(h: &mut egui_kittest::Harness<'static, ui::Studio>, path: &str) {
    let mut settings = h.state().export_dialog().settings.clone();
    path.clone_into(&mut settings.path);
    h.state_mut()
        .apply(ui::Command::SetExportSettings(settings));
}

/// A server made of a function: every segment is half a second of a 220 Hz tone, in two
/// chunks, with one frame per phoneme; it counts what it spoke.
struct Tone(std::sync::atomic::AtomicUsize);

impl engine::remote::SegmentServer for Tone {
    fn name(&self) -> &'static str {
        "tone://studio-test"
    }

    fn speak(
        &self,
        job: &engine::remote::RemoteJob,
        sink: &mut dyn FnMut(engine::remote::RemoteChunk) -> bool,
    ) -> Result<(), engine::remote::RemoteError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tone: Vec<f32> = (0..12_000)
            .map(|i| 0.3 * (i as f32 * 220.0 * std::f32::consts::TAU / 24_000.0).sin())
            .collect();
        let tokens = job.phonemes.chars().count() + 2;
        let mut frames = vec![0u32; tokens];
        frames[1] = 20;
        for (k, half) in tone.chunks(6_000).enumerate() {
            let chunk = engine::remote::RemoteChunk {
                samples: half.to_vec(),
                durations: (k == 0).then(|| frames.clone()),
                end: k == 1,
            };
            if !sink(chunk) {
                break;
            }
        }
        Ok(())
    }

    fn ready(&self) -> bool {
        true
    }
}

/// `banter --engine …`: the studio plays through servers instead of its own model thread, and
/// says where it renders.
#[test]
fn a_remote_engine_plays_the_studio_s_script() {
    let Some(store) = model_store() else {
        return;
    };
    let fx = Fixture::new();
    let tone = std::sync::Arc::new(Tone(std::sync::atomic::AtomicUsize::new(0)));
    let server = std::sync::Arc::clone(&tone);
    let remote = ui::work::load::RemoteEngine {
        endpoints: "tone://studio-test".into(),
        connect: std::sync::Arc::new(move |store: &engine::assets::ModelStore| {
            let servers: Vec<std::sync::Arc<dyn engine::remote::SegmentServer>> =
                vec![std::sync::Arc::clone(&server) as _];
            engine::Engine::remote(store, servers, 2).map_err(|e| e.to_string())
        }),
    };
    let mut h = fx.harness_remote(store.root(), remote);
    h.state_mut().apply(ui::Command::EditText(DUO.into()));
    wait_for_model(&mut h);
    assert!(h
        .query_by_label_contains("remote: tone://studio-test")
        .is_some());
    h.get_by_label("Play").click();
    step_until(&mut h, Duration::from_mins(1), "the whole render", |h| {
        h.state().waveform().complete
    });
    let spoken = tone.0.load(std::sync::atomic::Ordering::Relaxed);
    assert!(spoken >= 2, "every sentence went to the server ({spoken})");
    let samples = h.state().waveform().samples;
    assert!(
        samples >= spoken * 6_000,
        "{samples} samples from {spoken} tones"
    );
}

/// A remote engine that cannot be reached is said, naming it, instead of a silent studio.
#[test]
fn an_unreachable_remote_engine_is_named() {
    let Some(store) = model_store() else {
        return;
    };
    let fx = Fixture::new();
    let remote = ui::work::load::RemoteEngine {
        endpoints: "triton://gpu-a:8001".into(),
        connect: std::sync::Arc::new(|_: &engine::assets::ModelStore| {
            Err("no server is ready".to_owned())
        }),
    };
    let mut h = fx.harness_remote(store.root(), remote);
    step_until(&mut h, Duration::from_mins(1), "the failure", |h| {
        h.state().engine_error().is_some()
    });
    let said = h
        .state()
        .engine_error()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        said.contains("triton://gpu-a:8001") && said.contains("no server is ready"),
        "{said}"
    );
}
