//! Shared checks for the clip decoder's fuzz targets.
//!
//! What must hold for any bytes: no panic outside the decoder's own guard (a panic inside
//! symphonia or libopus is caught by `engine::panic_guard::catch` and becomes a "corrupt"
//! error, as in the app), every error names the file, every sample is finite, and the work is
//! bounded by `max_secs` (the length never exceeds it by more than a packet's worth).

use std::path::Path;
use std::sync::Once;

use engine::audio::decode::stream::ClipStream;
use engine::audio::decode::{decode_bytes, DecodeError, DecodeOptions};

/// The mix's rate, which every cue is resampled to.
pub const RATE: u32 = 24_000;
/// The most a target decodes of one input, in seconds.
pub const MAX_SECS: f64 = 20.0;

/// File names (their extension is a hint the decoder may use, never trust).
const NAMES: [&str; 5] = ["fuzz.wav", "fuzz.flac", "fuzz.mp3", "fuzz.ogg", "fuzz.bin"];

/// The app's rule for panics (`app/src/exit.rs`): inside the decoder's guard a panic is an
/// error the guard reports, anywhere else it is a bug. libFuzzer's own hook would abort on the
/// guarded ones too, so it is replaced once by one that defers to the guard.
pub fn panic_rule() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !engine::panic_guard::is_catching() {
                fuzzer_hook(info);
                std::process::abort();
            }
        }));
    });
}

/// Picks one of the names from the input's first byte and returns it with the rest.
pub fn named(data: &[u8]) -> (&'static str, &[u8]) {
    match data.split_first() {
        Some((&b, rest)) => (NAMES[usize::from(b) % NAMES.len()], rest),
        None => (NAMES[0], data),
    }
}

/// Every error names the file it is about.
pub fn check_error(name: &str, e: &DecodeError) {
    let text = e.to_string();
    assert!(text.contains(name), "an error that does not name the file: {text}");
}

/// Samples are finite and within the bound.
pub fn check_samples(samples: &[f32], rate: u32) {
    assert!(samples.iter().all(|s| s.is_finite()), "a sample that is not a number");
    // One second of slack: a last packet and the resampler's delay.
    let bound = ((MAX_SECS + 1.0) * f64::from(rate)) as usize;
    assert!(samples.len() <= bound, "{} samples past the {MAX_SECS} s bound", samples.len());
}

/// The whole-clip decoder (voice matching, measuring a sound cue).
pub fn check_decode(data: &[u8]) {
    panic_rule();
    let (name, bytes) = named(data);
    let options = DecodeOptions {
        target_rate: Some(RATE),
        max_secs: Some(MAX_SECS),
    };
    match decode_bytes(bytes.to_vec(), Path::new(name), &options) {
        Ok(clip) => {
            assert_eq!(clip.sample_rate, RATE);
            check_samples(&clip.samples, clip.sample_rate);
        }
        Err(e) => check_error(name, &e),
    }
}

/// The streaming decoder the mix plays beds and sounds through: from a file (it reopens the
/// file to loop), read in blocks, looping when the input's first byte is odd.
pub fn check_stream(data: &[u8]) {
    panic_rule();
    let (name, bytes) = named(data);
    let looping = data.first().is_some_and(|b| b & 0x80 != 0);
    let dir = std::env::temp_dir().join(format!("banter-fuzz-clips-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let path = dir.join(name);
    if std::fs::write(&path, bytes).is_err() {
        return;
    }
    match ClipStream::open(&path, RATE) {
        Ok(stream) => {
            let mut stream = stream.looping(looping);
            let mut samples = Vec::new();
            let limit = (MAX_SECS * f64::from(RATE)) as usize;
            while samples.len() < limit {
                match stream.read(&mut samples, 4_096) {
                    Ok(0) => break,
                    Ok(_) => assert!(stream.buffered() < 1 << 22, "the read-ahead grew without bound"),
                    Err(e) => {
                        check_error(name, &e);
                        break;
                    }
                }
            }
            check_samples(&samples, RATE);
        }
        Err(e) => check_error(name, &e),
    }
}
