//! Any bytes as a Piper `.onnx`: the shared ONNX reader, then the VITS weight mapping (names by
//! consumer, conv settings, tensor payloads). Must return a model or an error, never panic, and
//! every tensor it accepts holds exactly the values its shape says, all finite.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(ck) = vits::checkpoint::Checkpoint::parse(data) {
        for (name, p) in &ck.params {
            let count: usize = p.dims.iter().product();
            assert_eq!(count, p.data.len(), "{name}");
            assert!(p.data.iter().all(|v| v.is_finite()), "{name}");
        }
    }
});
