//! Any bytes as an audio file, decoded whole (voice-match clips, measuring a cue).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    banter_fuzz_clips::check_decode(data);
});
