//! Offline tests of the whole fetch pipeline against the fake registry in
//! `fake_registry.rs` and a fake converter. The real clients and the real catalog are
//! exercised by the end-to-end test `tests/tests/e2e/assets.rs` (opt-in, it downloads
//! ~120 MB).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::fake_registry::{setup, sha, Offline, PARTS, VOCAB};
use super::fetch::{self, Converter};
use super::manifest::Catalog;
use super::status::inspect;
use super::*;
/// Fake conversion: the "weights" are the ONNX bytes reversed.
fn fake_convert(onnx: &Path, out: &Path) -> Result<(), AssetError> {
    let mut bytes = std::fs::read(onnx).map_err(|e| AssetError::io(onnx, e))?;
    bytes.reverse();
    std::fs::write(out, bytes).map_err(|e| AssetError::io(out, e))
}

fn fetch_into(
    root: &Path,
    catalog: &Catalog,
    runner: &dyn CommandRunner,
    force: bool,
    convert: Converter<'_>,
) -> (Result<FetchSummary, AssetError>, Vec<FetchEvent>) {
    let mut events = Vec::new();
    let result = fetch::run(
        root,
        catalog,
        FetchOptions { force },
        runner,
        convert,
        &mut |e: &FetchEvent| events.push(e.clone()),
    );
    (result, events)
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn fetch_builds_a_complete_verified_store() {
    let (catalog, registry) = setup(false);
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("models");
    assert!(!inspect(&root, &catalog).is_ready());

    let (result, events) = fetch_into(&root, &catalog, &registry, false, &fake_convert);
    let summary = result.expect("fetch");
    assert_eq!(
        summary.downloaded,
        [
            "fake-model-0==0.1.0",
            "fake-model-1==0.1.0",
            "fake-vocab==0.1.1",
            "fake-voices@1.2.1"
        ]
    );
    assert!(summary.converted && !summary.already_present);
    assert!(events.iter().any(|e| matches!(
        e,
        FetchEvent::Step {
            index: 5,
            total: 5,
            ..
        }
    )));
    assert!(matches!(events.last(), Some(FetchEvent::Done { .. })));

    let store = ModelStore::at(&root);
    assert_eq!(
        std::fs::read(store.kokoro_onnx()).expect("onnx"),
        PARTS.concat()
    );
    assert_eq!(std::fs::read(store.vocab_json()).expect("vocab"), VOCAB);
    assert_eq!(
        std::fs::read(store.voice_table("am_adam")).expect("voice"),
        b"ADAMADAM"
    );
    let mut reversed = PARTS.concat();
    reversed.reverse();
    assert_eq!(
        std::fs::read(store.kokoro_weights()).expect("weights"),
        reversed
    );
    // No scratch folder, no partial files, nothing extracted beyond the catalog.
    assert_eq!(
        names_in(&root),
        [
            SAFETENSORS_FILE,
            ONNX_FILE,
            MANIFEST_FILE,
            VOCAB_FILE,
            VOICES_DIR
        ]
    );
    assert_eq!(
        names_in(&store.voices_dir()),
        ["af_heart.bin", "am_adam.bin"]
    );

    let record = StoreRecord::read(&root.join(MANIFEST_FILE))
        .expect("readable")
        .expect("present");
    assert_eq!(record.converter_version, manifest::CONVERTER_VERSION);
    assert_eq!(record.files.len(), 5);
    assert_eq!(record.files[SAFETENSORS_FILE].sha256, sha(&reversed));
    assert_eq!(record.files["voices/am_adam.bin"].sha256, sha(b"ADAMADAM"));
    assert_eq!(record.files[ONNX_FILE].size, PARTS.concat().len() as u64);

    let status = inspect(&root, &catalog);
    assert_eq!(status.manifest, ManifestState::Current);
    assert!(status.is_ready(), "{status}");
}

#[test]
fn second_fetch_does_nothing() {
    let (catalog, registry) = setup(false);
    let dir = tempfile::tempdir().expect("tempdir");
    fetch_into(dir.path(), &catalog, &registry, false, &fake_convert)
        .0
        .expect("first fetch");
    let calls = registry.calls().len();
    let never = |_: &Path, _: &Path| -> Result<(), AssetError> { panic!("must not convert") };
    let (result, events) = fetch_into(dir.path(), &catalog, &registry, false, &never);
    let summary = result.expect("second fetch");
    assert!(summary.already_present);
    assert!(summary.downloaded.is_empty() && !summary.converted);
    assert_eq!(
        events,
        [FetchEvent::AlreadyPresent {
            root: dir.path().to_owned()
        }]
    );
    assert_eq!(registry.calls().len(), calls, "no client was run");
}

#[test]
fn corrupt_part_is_detected_and_leaves_no_model() {
    let (catalog, registry) = setup(true);
    let dir = tempfile::tempdir().expect("tempdir");
    let (result, _) = fetch_into(dir.path(), &catalog, &registry, false, &fake_convert);
    let err = result.expect_err("checksum must fail");
    let AssetError::ChecksumMismatch {
        file,
        expected,
        actual,
        ..
    } = &err
    else {
        panic!("wrong error: {err:?}");
    };
    assert!(file.contains("fake_model_1/part.bin"), "{file}");
    assert_eq!(expected, catalog.model_parts[1].sha256);
    assert_ne!(expected, actual);
    assert!(err.to_string().contains("--force"));
    // Nothing that looks complete, and no scratch left behind.
    assert!(!dir.path().join(ONNX_FILE).exists());
    assert!(!dir.path().join(MANIFEST_FILE).exists());
    assert_eq!(names_in(dir.path()), [VOICES_DIR]);
}

#[test]
fn failed_forced_refetch_keeps_the_working_store() {
    let (catalog, registry) = setup(false);
    let dir = tempfile::tempdir().expect("tempdir");
    fetch_into(dir.path(), &catalog, &registry, false, &fake_convert)
        .0
        .expect("fetch");
    let (result, _) = fetch_into(dir.path(), &catalog, &Offline, true, &fake_convert);
    let err = result.expect_err("offline");
    assert!(matches!(err, AssetError::ClientFailed { .. }), "{err:?}");
    assert!(err.to_string().contains("Network is unreachable"));
    assert!(inspect(dir.path(), &catalog).is_ready());
    assert_eq!(
        inspect(dir.path(), &catalog).manifest,
        ManifestState::Current
    );
}

#[test]
fn stale_converter_reconverts_without_downloading() {
    let (catalog, registry) = setup(false);
    let dir = tempfile::tempdir().expect("tempdir");
    fetch_into(dir.path(), &catalog, &registry, false, &fake_convert)
        .0
        .expect("fetch");
    let path = dir.path().join(MANIFEST_FILE);
    let mut record = StoreRecord::read(&path).expect("ok").expect("present");
    record.converter_version += 1;
    record.write(&path).expect("write");
    let status = inspect(dir.path(), &catalog);
    assert!(
        matches!(status.manifest, ManifestState::Stale { .. }),
        "{status}"
    );
    assert!(!status.is_ready());

    let (result, _) = fetch_into(dir.path(), &catalog, &Offline, false, &fake_convert);
    let summary = result.expect("reconvert offline");
    assert!(summary.downloaded.is_empty());
    assert!(summary.converted);
    assert_eq!(
        summary.reused,
        [ONNX_FILE, VOCAB_FILE, "voices/af_heart.bin"]
    );
    assert!(inspect(dir.path(), &catalog).is_ready());
}

#[test]
fn damaged_files_are_found_and_replaced() {
    let (catalog, registry) = setup(false);
    let dir = tempfile::tempdir().expect("tempdir");
    fetch_into(dir.path(), &catalog, &registry, false, &fake_convert)
        .0
        .expect("fetch");
    let store = ModelStore::at(dir.path());
    // A truncated voice is seen by the cheap status check.
    std::fs::write(store.voice_table("am_adam"), b"ADAM").expect("truncate");
    let status = inspect(dir.path(), &catalog);
    let bad: Vec<_> = status.problems().map(|f| f.relative.clone()).collect();
    assert_eq!(bad, ["voices/am_adam.bin"]);
    assert!(!status.is_ready());
    // A same-size corruption of the model is caught by the checksum before reuse.
    let mut onnx = std::fs::read(store.kokoro_onnx()).expect("onnx");
    onnx[0] ^= 0xff;
    std::fs::write(store.kokoro_onnx(), &onnx).expect("corrupt");

    let before = registry.calls().len();
    let (result, _) = fetch_into(dir.path(), &catalog, &registry, false, &fake_convert);
    let summary = result.expect("repair");
    assert_eq!(
        summary.downloaded,
        [
            "fake-model-0==0.1.0",
            "fake-model-1==0.1.0",
            "fake-voices@1.2.1"
        ]
    );
    assert_eq!(summary.reused, [VOCAB_FILE]);
    assert_eq!(registry.calls().len(), before + 3);
    assert_eq!(
        std::fs::read(store.kokoro_onnx()).expect("onnx"),
        PARTS.concat()
    );
    assert_eq!(
        std::fs::read(store.voice_table("am_adam")).expect("v"),
        b"ADAMADAM"
    );
    assert!(inspect(dir.path(), &catalog).is_ready());
}

#[test]
fn failed_conversion_leaves_a_store_that_is_not_ready() {
    let (catalog, registry) = setup(false);
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = |onnx: &Path, _: &Path| -> Result<(), AssetError> {
        Err(AssetError::Convert {
            onnx: onnx.to_owned(),
            source: "unsupported op".into(),
        })
    };
    let (result, _) = fetch_into(dir.path(), &catalog, &registry, false, &broken);
    assert!(matches!(result, Err(AssetError::Convert { .. })));
    let status = inspect(dir.path(), &catalog);
    assert!(!status.is_ready());
    assert_eq!(status.manifest, ManifestState::Missing);
    assert_eq!(
        status
            .problems()
            .map(|f| f.relative.as_str())
            .collect::<Vec<_>>(),
        [SAFETENSORS_FILE]
    );
    assert_eq!(names_in(dir.path()), [ONNX_FILE, VOCAB_FILE, VOICES_DIR]);
}

#[test]
fn real_store_without_pip_reports_the_missing_client() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ModelStore::at(dir.path().join("models"));
    let runner = SystemRunner {
        path_env: Some(OsString::new()),
    };
    let err = store
        .fetch_using(FetchOptions::default(), &runner, &mut |_| {})
        .expect_err("no clients on an empty PATH");
    assert!(
        matches!(
            err,
            AssetError::ClientMissing {
                client: Client::Pip,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!store.is_ready());
    assert!(!store.root().join(MANIFEST_FILE).exists());
}

#[test]
fn empty_store_status_lists_every_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ModelStore::at(dir.path());
    let status = store.status();
    assert_eq!(status.files.len(), 3 + 54);
    assert_eq!(status.problems().count(), 57);
    assert_eq!(status.manifest, ManifestState::Missing);
    assert!(!store.is_ready());
    let text = status.to_string();
    assert!(text.contains("missing: voices/af_heart.bin"), "{text}");
    assert!(
        text.ends_with("not ready: run `banter models fetch`"),
        "{text}"
    );
}

#[test]
fn store_paths_follow_the_shared_layout() {
    let store = ModelStore::at("/m");
    assert_eq!(store.kokoro_onnx(), Path::new("/m/kokoro-v1.0.int8.onnx"));
    assert_eq!(
        store.kokoro_weights(),
        Path::new("/m/kokoro-v1.0.f32.safetensors")
    );
    assert_eq!(store.vocab_json(), Path::new("/m/vocab.json"));
    assert_eq!(
        store.voice_table("af_heart"),
        Path::new("/m/voices/af_heart.bin")
    );
    assert_eq!(
        default_root(Some(OsString::from("/x/models")), Some(PathBuf::from("/d"))),
        Some(PathBuf::from("/x/models"))
    );
    assert_eq!(
        default_root(Some(OsString::new()), Some(PathBuf::from("/d"))),
        Some(PathBuf::from("/d/banter/models"))
    );
    assert_eq!(default_root(None, None), None);
}
