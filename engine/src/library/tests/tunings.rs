//! Tests: tuned voices are saved whole or not at all, read back with how they were made,
//! checked, and removed with the cache entries made for them alone.

use super::support::{table, temp_library};
use crate::library::{EmbeddingKey, LibraryError, NewVoice, Tuning, VoiceKind, PACK_VERSION};
use crate::phonemes::Language;
use crate::voice::Gender;

fn tuning(clips: &[&str], keys: &[&str]) -> Tuning {
    Tuning {
        pack_version: PACK_VERSION,
        pack_sha256: String::new(),
        start_recipe: "af_bella:0.6+af_sky:0.4".into(),
        clip_hashes: clips.iter().map(|s| (*s).to_owned()).collect(),
        encoder: "ge2e".into(),
        encoder_version: 1,
        embedding_keys: keys.iter().map(|s| (*s).to_owned()).collect(),
        settings_json: r#"{"seed":1}"#.into(),
        history_json: "[[0,0.7],[5,0.8]]".into(),
        before_similarity: 0.71,
        heldout_similarity: 0.83,
        stability: 0.93,
        provenance: "tuned from clip.wav".into(),
        created_at: std::time::SystemTime::UNIX_EPOCH,
    }
}

fn voice(name: &str) -> NewVoice {
    NewVoice {
        name: name.into(),
        kind: VoiceKind::Tuned,
        language: Some(Language::EnUs),
        gender: Some(Gender::Female),
        recipe: Some("af_bella:0.6+af_sky:0.4".into()),
        style: None,
        notes: "a tuned voice".into(),
    }
}

fn embed(lib: &crate::library::Library, hash: &str) {
    let key = EmbeddingKey {
        audio_hash: hash.into(),
        encoder: "ge2e".into(),
        encoder_version: 1,
    };
    lib.put_embedding(&key, &[0.5; 256], 10.0, 24_000).unwrap();
}

fn embeddings(lib: &crate::library::Library) -> i64 {
    lib.conn
        .query_row("SELECT count(*) FROM speaker_embeddings", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_tuned_voice_is_saved_with_its_tuning_and_pack() {
    let (_dir, lib) = temp_library();
    let pack = table(0.25);
    let saved = lib
        .add_tuned_voice(&voice("Ada"), &pack, &tuning(&["clip1"], &["probe1"]))
        .unwrap();
    assert_eq!(saved.kind, VoiceKind::Tuned);
    assert!(saved.has_style);
    assert_eq!(
        lib.voice_style("Ada").unwrap().unwrap().values(),
        pack.values()
    );
    let t = lib.voice_tuning("Ada").unwrap().unwrap();
    assert_eq!(t.pack_version, PACK_VERSION);
    assert_eq!(t.pack_sha256.len(), 64);
    assert_eq!(t.clip_hashes, ["clip1"]);
    assert!((t.heldout_similarity - 0.83).abs() < 1e-6);
    assert_eq!(t.history_json, "[[0,0.7],[5,0.8]]");
    assert!(lib.voice_tuning("af_heart").unwrap().is_none());
    assert!(lib.check().unwrap().is_ok());
}

#[test]
fn a_taken_name_writes_nothing() {
    let (_dir, lib) = temp_library();
    lib.add_tuned_voice(&voice("Ada"), &table(0.1), &tuning(&[], &[]))
        .unwrap();
    let err = lib
        .add_tuned_voice(&voice("Ada"), &table(0.2), &tuning(&[], &[]))
        .unwrap_err();
    assert!(matches!(err, LibraryError::DuplicateName { .. }), "{err}");
    let rows: i64 = lib
        .conn
        .query_row("SELECT count(*) FROM voice_tunings", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1);
    assert!((lib.voice_style("Ada").unwrap().unwrap().values()[0] - 0.1).abs() < 1e-6);
}

#[test]
fn check_finds_a_pack_changed_behind_its_back() {
    let (_dir, lib) = temp_library();
    lib.add_tuned_voice(&voice("Ada"), &table(0.1), &tuning(&[], &[]))
        .unwrap();
    lib.conn
        .execute(
            "UPDATE voices SET style = ?1 WHERE name = 'Ada'",
            [table(0.3).to_bytes()],
        )
        .unwrap();
    let report = lib.check().unwrap();
    assert!(!report.is_ok());
    assert_eq!(report.pack_problems.len(), 1);
    assert!(report.pack_problems[0].starts_with("Ada: "), "{report:?}");
}

#[test]
fn removing_a_tuned_voice_removes_what_was_made_for_it_alone() {
    let (_dir, lib) = temp_library();
    for h in ["shared-clip", "own-clip", "probe-a", "probe-b", "unrelated"] {
        embed(&lib, h);
    }
    lib.add_tuned_voice(
        &voice("Ada"),
        &table(0.1),
        &tuning(&["shared-clip", "own-clip"], &["probe-a"]),
    )
    .unwrap();
    lib.add_tuned_voice(
        &voice("Bea"),
        &table(0.2),
        &tuning(&["shared-clip"], &["probe-b"]),
    )
    .unwrap();
    lib.remove_voice("Ada").unwrap();
    assert!(lib.get_voice("Ada").unwrap().is_none());
    assert!(lib.voice_tuning("Ada").unwrap().is_none());
    // own-clip and probe-a went; the clip Bea also uses, Bea's probe and the rest stayed.
    assert_eq!(embeddings(&lib), 3);
    assert!(lib.voice_tuning("Bea").unwrap().is_some());
    assert!(lib.check().unwrap().is_ok());
}
