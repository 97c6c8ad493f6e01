//! Any bytes, as text a client sends to the speech API or a script line: the English
//! normaliser in both dialects.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    banter_fuzz::text::check(&String::from_utf8_lossy(data));
});
