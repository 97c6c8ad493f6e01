//! Tests: every create/read/update/delete path of voices, embeddings, projects and autosaves;
//! duplicate and Unicode names.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::support::{table, temp_library, UNICODE_NAMES};
use crate::library::{
    EmbeddingKey, LibraryError, NewVoice, ProjectDraft, VoiceKind, EMBEDDING_DIM,
};
use crate::phonemes::Language;
use crate::voice::{Gender, StockVoice};

fn blend(name: &str) -> NewVoice {
    NewVoice {
        name: name.to_owned(),
        kind: VoiceKind::Blend,
        language: Some(Language::EnUs),
        gender: Some(Gender::Female),
        recipe: Some("af_bella:0.7+af_sky:0.3".to_owned()),
        style: Some(table(0.5)),
        notes: "warm".to_owned(),
    }
}

fn stock() -> Vec<StockVoice> {
    ["af_heart", "am_adam", "bf_emma"]
        .iter()
        .map(|n| StockVoice::from_name(n).unwrap())
        .collect()
}

#[test]
fn stock_seeding_is_idempotent_and_stock_voices_stay() {
    let (_dir, lib) = temp_library();
    assert_eq!(lib.seed_stock_voices(&stock()).unwrap(), 3);
    assert_eq!(lib.seed_stock_voices(&stock()).unwrap(), 0);
    let voices = lib.list_voices().unwrap();
    assert_eq!(voices.len(), 3);
    let emma = lib.get_voice("bf_emma").unwrap().unwrap();
    assert_eq!(emma.kind, VoiceKind::Stock);
    assert_eq!(emma.language, Some(Language::EnGb));
    assert_eq!(emma.gender, Some(Gender::Female));
    assert!(!emma.has_style);
    assert!(lib.voice_style("bf_emma").unwrap().is_none());
    assert!(matches!(
        lib.remove_voice("af_heart"),
        Err(LibraryError::StockVoice { name }) if name == "af_heart"
    ));
    assert!(matches!(
        lib.rename_voice("af_heart", "heart"),
        Err(LibraryError::StockVoice { .. })
    ));
    assert_eq!(lib.list_voices().unwrap().len(), 3);
}

#[test]
fn voice_crud_round_trips() {
    let (_dir, lib) = temp_library();
    lib.seed_stock_voices(&stock()).unwrap();
    let added = lib.add_voice(&blend("Warm Bella")).unwrap();
    assert_eq!(added.name, "Warm Bella");
    assert_eq!(added.kind, VoiceKind::Blend);
    assert_eq!(added.recipe.as_deref(), Some("af_bella:0.7+af_sky:0.3"));
    assert!(added.has_style);
    assert_eq!(added.notes, "warm");
    assert_eq!(added.created_at, added.updated_at);

    let style = lib.voice_style("Warm Bella").unwrap().unwrap();
    assert_eq!(style.to_bytes(), table(0.5).to_bytes());

    // stock first, then by name
    let names: Vec<_> = lib
        .list_voices()
        .unwrap()
        .into_iter()
        .map(|v| v.name)
        .collect();
    assert_eq!(names, ["af_heart", "am_adam", "bf_emma", "Warm Bella"]);

    lib.set_voice_notes("Warm Bella", "for the intro").unwrap();
    lib.rename_voice("Warm Bella", "Intro voice").unwrap();
    assert!(lib.get_voice("Warm Bella").unwrap().is_none());
    let renamed = lib.get_voice("Intro voice").unwrap().unwrap();
    assert_eq!(renamed.id, added.id);
    assert_eq!(renamed.notes, "for the intro");
    assert!(renamed.updated_at >= added.updated_at);
    assert!(lib.voice_style("Intro voice").unwrap().is_some());

    lib.remove_voice("Intro voice").unwrap();
    assert!(lib.get_voice("Intro voice").unwrap().is_none());
    assert!(matches!(
        lib.remove_voice("Intro voice"),
        Err(LibraryError::NotFound { what: "voice", .. })
    ));
    assert!(matches!(
        lib.set_voice_notes("nobody", "x"),
        Err(LibraryError::NotFound { .. })
    ));
    assert!(matches!(
        lib.rename_voice("nobody", "x"),
        Err(LibraryError::NotFound { .. })
    ));
}

#[test]
fn duplicate_voice_names_are_typed_errors_naming_the_name() {
    let (_dir, lib) = temp_library();
    lib.seed_stock_voices(&stock()).unwrap();
    lib.add_voice(&blend("Host")).unwrap();
    lib.add_voice(&blend("Guest")).unwrap();
    let err = lib.add_voice(&blend("  Host ")).unwrap_err();
    assert!(
        matches!(&err, LibraryError::DuplicateName { what: "voice", name, .. } if name == "Host"),
        "{err:?}"
    );
    assert!(err.to_string().contains("`Host`"), "{err}");
    assert!(matches!(
        lib.add_voice(&blend("af_heart")),
        Err(LibraryError::DuplicateName { .. })
    ));
    assert!(matches!(
        lib.rename_voice("Guest", "Host"),
        Err(LibraryError::DuplicateName { name, .. }) if name == "Host"
    ));
    // nothing changed
    assert!(lib.get_voice("Guest").unwrap().is_some());
    assert_eq!(lib.list_voices().unwrap().len(), 5);
}

#[test]
fn bad_names_are_refused() {
    let (_dir, lib) = temp_library();
    for bad in ["", "   ", "a\nb", "tab\there", &"x".repeat(201)] {
        assert!(
            matches!(
                lib.add_voice(&blend(bad)),
                Err(LibraryError::InvalidName { .. })
            ),
            "{bad:?}"
        );
    }
    assert!(lib.add_voice(&blend(&"é".repeat(200))).is_ok());
}

#[test]
fn unicode_names_round_trip_everywhere() {
    let (_dir, lib) = temp_library();
    for (i, name) in UNICODE_NAMES.iter().enumerate() {
        lib.add_voice(&blend(name)).unwrap();
        assert_eq!(lib.get_voice(name).unwrap().unwrap().name, *name);
        let project = draft(name, &format!("script {i} — «{name}»"));
        lib.save_project(&project).unwrap();
        assert_eq!(lib.load_project(name).unwrap().unwrap().draft, project);
        lib.autosave(name, name, &std::collections::BTreeMap::new())
            .unwrap();
        assert_eq!(lib.autosave_for(name).unwrap().unwrap().script, *name);
    }
    // composed and decomposed spellings are different names (no normalisation)
    lib.add_voice(&blend("Zo\u{eb}")).unwrap();
    lib.add_voice(&blend("Zoe\u{308}")).unwrap();
    let renamed = format!("{} (2)", UNICODE_NAMES[1]);
    lib.rename_voice(UNICODE_NAMES[1], &renamed).unwrap();
    assert!(lib.get_voice(&renamed).unwrap().is_some());
    assert!(matches!(
        lib.add_voice(&blend(UNICODE_NAMES[0])),
        Err(LibraryError::DuplicateName { name, .. }) if name == UNICODE_NAMES[0]
    ));
    assert_eq!(lib.list_voices().unwrap().len(), UNICODE_NAMES.len() + 2);
}

#[test]
fn embeddings_get_put_and_key_by_encoder_version() {
    let (_dir, lib) = temp_library();
    let clip = b"RIFF....WAVEfmt fake clip bytes";
    let key = EmbeddingKey::for_audio(clip, "ge2e", 1);
    assert_eq!(key.audio_hash.len(), 64);
    assert_eq!(key, EmbeddingKey::for_audio(clip, "ge2e", 1));
    assert_ne!(
        key.audio_hash,
        EmbeddingKey::for_audio(b"other", "ge2e", 1).audio_hash
    );
    assert!(lib.get_embedding(&key).unwrap().is_none());

    #[allow(clippy::cast_precision_loss)]
    let v: Vec<f32> = (0..EMBEDDING_DIM).map(|i| i as f32 / 256.0 - 0.5).collect();
    lib.put_embedding(&key, &v, 7.25, 16_000).unwrap();
    let got = lib.get_embedding(&key).unwrap().unwrap();
    assert_eq!(got.vector, v);
    assert!((got.clip_secs - 7.25).abs() < f64::EPSILON);
    assert_eq!(got.sample_rate, 16_000);

    // another encoder version misses; a put replaces
    assert!(lib
        .get_embedding(&EmbeddingKey::for_audio(clip, "ge2e", 2))
        .unwrap()
        .is_none());
    let w: Vec<f32> = v.iter().map(|x| -x).collect();
    lib.put_embedding(&key, &w, 7.25, 16_000).unwrap();
    assert_eq!(lib.get_embedding(&key).unwrap().unwrap().vector, w);

    assert!(matches!(
        lib.put_embedding(&key, &v[..255], 1.0, 16_000),
        Err(LibraryError::BadLength {
            len: 255,
            expected: 256,
            ..
        })
    ));
    let mut nan = v.clone();
    nan[3] = f32::NAN;
    assert!(matches!(
        lib.put_embedding(&key, &nan, 1.0, 16_000),
        Err(LibraryError::NonFinite { .. })
    ));
}

fn draft(name: &str, script: &str) -> ProjectDraft {
    ProjectDraft {
        name: name.to_owned(),
        script: script.to_owned(),
        script_format: "markdown".to_owned(),
        cast: BTreeMap::from([
            ("HOST".to_owned(), "af_heart".to_owned()),
            ("GUEST".to_owned(), "Warm Bella".to_owned()),
        ]),
        settings: serde_json::json!({ "speed": 1.1, "format": "flac" }),
        render_path: Some(PathBuf::from("/tmp/episode 1.flac")),
    }
}

#[test]
fn projects_save_load_list_delete() {
    let (_dir, lib) = temp_library();
    assert!(lib.list_projects().unwrap().is_empty());
    let a = draft("Episode 1", "HOST: hello");
    let id_a = lib.save_project(&a).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let id_b = lib
        .save_project(&draft("Episode 2", "HOST: again"))
        .unwrap();
    assert_ne!(id_a, id_b);

    let loaded = lib.load_project("Episode 1").unwrap().unwrap();
    assert_eq!(loaded.id, id_a);
    assert_eq!(loaded.draft, a);
    assert!(lib.load_project("Episode 3").unwrap().is_none());

    let names = |lib: &crate::library::Library| -> Vec<String> {
        lib.list_projects()
            .unwrap()
            .into_iter()
            .map(|p| p.draft.name)
            .collect()
    };
    assert_eq!(names(&lib), ["Episode 2", "Episode 1"]);

    // upsert: same id, new content, created_at kept, now the most recent
    std::thread::sleep(std::time::Duration::from_millis(5));
    let mut edited = a.clone();
    edited.script = "HOST: hello, edited".to_owned();
    edited.render_path = None;
    assert_eq!(lib.save_project(&edited).unwrap(), id_a);
    let reloaded = lib.load_project("Episode 1").unwrap().unwrap();
    assert_eq!(reloaded.draft, edited);
    assert_eq!(reloaded.created_at, loaded.created_at);
    assert!(reloaded.updated_at > loaded.updated_at);
    assert_eq!(names(&lib), ["Episode 1", "Episode 2"]);

    lib.delete_project("Episode 1").unwrap();
    assert_eq!(names(&lib), ["Episode 2"]);
    assert!(matches!(
        lib.delete_project("Episode 1"),
        Err(LibraryError::NotFound {
            what: "project",
            ..
        })
    ));
}

#[test]
fn autosaves_recover_and_clear() {
    let (_dir, lib) = temp_library();
    assert!(lib.autosave_for("Draft").unwrap().is_none());
    // a project never saved can be autosaved
    lib.autosave(
        "Draft",
        "HOST: first words",
        &std::collections::BTreeMap::new(),
    )
    .unwrap();
    lib.autosave(
        "Draft",
        "HOST: first words, more",
        &std::collections::BTreeMap::new(),
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    lib.autosave("Other", "x", &std::collections::BTreeMap::new())
        .unwrap();
    let all = lib.list_autosaves().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].project_name, "Other");
    assert_eq!(all[1].script, "HOST: first words, more");

    // saving the project clears its autosave
    lib.save_project(&draft("Draft", "HOST: first words, more"))
        .unwrap();
    assert!(lib.autosave_for("Draft").unwrap().is_none());
    // deleting a project drops its autosave
    lib.save_project(&draft("Third", "x")).unwrap();
    lib.autosave("Third", "unsaved", &std::collections::BTreeMap::new())
        .unwrap();
    lib.delete_project("Third").unwrap();
    assert!(lib.autosave_for("Third").unwrap().is_none());
    lib.clear_autosave("Other").unwrap();
    lib.clear_autosave("Other").unwrap();
    assert!(lib.list_autosaves().unwrap().is_empty());
}

#[test]
fn an_autosave_keeps_the_cast_choices_with_the_text() {
    let (_dir, lib) = temp_library();
    let cast: std::collections::BTreeMap<String, String> =
        [("Ben".to_owned(), "bm_george@1.25".to_owned())].into();
    lib.autosave("Draft", "Ann: One.\nBen: Two.", &cast)
        .unwrap();
    let saved = lib.autosave_for("Draft").unwrap().unwrap();
    assert_eq!(saved.cast, cast);
    assert_eq!(lib.list_autosaves().unwrap()[0].cast, cast);
    // A cast that no longer reads (a hand-edited file) loses the cast, never the text.
    lib.conn
        .execute("UPDATE autosaves SET cast_json = 'not json'", [])
        .unwrap();
    let saved = lib.autosave_for("Draft").unwrap().unwrap();
    assert_eq!(saved.script, "Ann: One.\nBen: Two.");
    assert!(saved.cast.is_empty());
}

#[test]
fn check_counts_and_vacuum() {
    let (_dir, lib) = temp_library();
    lib.seed_stock_voices(&stock()).unwrap();
    lib.add_voice(&blend("B")).unwrap();
    lib.save_project(&draft("P", "x")).unwrap();
    lib.autosave("Q", "y", &std::collections::BTreeMap::new())
        .unwrap();
    let key = EmbeddingKey::for_audio(b"a", "ge2e", 1);
    lib.put_embedding(&key, &[0.25; EMBEDDING_DIM], 1.0, 16_000)
        .unwrap();
    let report = lib.check().unwrap();
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(report.integrity, ["ok"]);
    assert_eq!(
        (report.voices, report.stock_voices, report.projects),
        (4, 3, 1)
    );
    assert_eq!((report.autosaves, report.embeddings), (1, 1));
    assert_eq!(report.schema_version, crate::library::SCHEMA_VERSION);
    assert!(report.file_bytes > 0);

    lib.remove_voice("B").unwrap();
    let v = lib.vacuum().unwrap();
    assert!(v.bytes_after < v.bytes_before, "{v:?}");
    assert!(lib.check().unwrap().is_ok());
}

#[test]
fn a_library_can_move_to_another_thread() {
    fn assert_send<T: Send>() {}
    assert_send::<crate::library::Library>();
}

#[test]
fn check_reports_damaged_pages() {
    let dir = tempfile::tempdir().unwrap();
    let path = super::support::db_path(&dir);
    {
        let lib = crate::library::Library::open(&path).unwrap();
        for i in 0..200 {
            lib.save_project(&draft(&format!("P{i}"), &"HOST: words ".repeat(50)))
                .unwrap();
        }
        lib.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
    }
    // damage the last pages (project rows), leaving the header and schema page intact
    let mut bytes = std::fs::read(&path).unwrap();
    let len = bytes.len();
    for b in &mut bytes[len - 8192..] {
        *b = 0x5A;
    }
    std::fs::write(&path, &bytes).unwrap();
    let lib = crate::library::Library::open(&path).unwrap();
    assert!(
        lib.set_aside().is_none(),
        "a readable header is not set aside"
    );
    let report = lib.check().unwrap();
    assert!(!report.is_ok(), "{report:?}");
    assert_ne!(report.integrity, ["ok"]);
}
