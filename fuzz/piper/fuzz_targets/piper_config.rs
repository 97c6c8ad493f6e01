//! Any text as a Piper `.onnx.json`: parsed and validated, or refused with a reason; never a
//! panic, and whatever is accepted keeps the promises the model relies on.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match vits::config::PiperConfig::parse(text) {
        Ok(c) => {
            assert!((8_000..=48_000).contains(&c.sample_rate));
            assert!(c.inference.length_scale > 0.0);
            assert!(c.phoneme_id_map.values().flatten().all(|&id| (id as usize) < c.num_symbols));
            for (_, id) in c.speaker_list() {
                assert!((id as usize) < c.num_speakers);
            }
        }
        Err(reason) => assert!(!reason.is_empty()),
    }
});
