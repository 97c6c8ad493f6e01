//! Any bytes, read as prose (no detection): paragraphs, subtitles and transcripts read by one
//! speaker.
#![no_main]

use banter_fuzz::script::ScriptFormat;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    banter_fuzz::check_bytes(data, Some(ScriptFormat::Prose));
});
