//! Any bytes, read as a script in the `podcastfy` format (no detection).
#![no_main]

use banter_fuzz::script::ScriptFormat;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    banter_fuzz::check_bytes(data, Some(ScriptFormat::Podcastfy));
});
