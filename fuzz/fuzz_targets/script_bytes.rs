//! Any bytes, as a script file: decoding (BOMs, UTF-16, invalid UTF-8) and format detection.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    banter_fuzz::check_bytes(data, None);
});
