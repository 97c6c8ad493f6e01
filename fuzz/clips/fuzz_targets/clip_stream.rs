//! Any bytes as an audio file, streamed block by block as the mix plays a bed or a sound.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    banter_fuzz_clips::check_stream(data);
});
