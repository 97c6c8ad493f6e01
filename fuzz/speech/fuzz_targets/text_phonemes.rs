//! Any bytes as text for a voice: the first byte picks the voice (and so the language), the
//! rest is the text, taken through the normaliser, espeak-ng and the word map to segments.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    banter_fuzz_speech::check(data);
});
