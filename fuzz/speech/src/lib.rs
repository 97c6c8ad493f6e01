//! Checks for the text-to-phonemes fuzz target.
//!
//! A request's text goes through the normaliser, then espeak-ng (C, in the process: a crash
//! there takes the server or the studio down with it), then Kokoro's vocabulary and the word
//! map that times the words. For any text in any of Kokoro's languages: no panic and no crash,
//! an error or segments; every segment within Kokoro's phoneme limit, with ids, all inside the
//! model's embedding; the word track built over them.

use engine::phonemes::MAX_PHONEMES;
use engine::segments::segments_with_words;
use engine::SpeechRequest;

/// Kokoro-82M's phoneme embedding rows (`n_token` in its config): ids are `1..N_TOKEN`, 0 is the
/// pad. The vocabulary is sparse, so its length is no bound.
const N_TOKEN: u32 = 178;

/// One stock voice per language Kokoro speaks (the first byte of an input picks one).
const VOICES: [&str; 9] = [
    "af_heart", "bf_emma", "ef_dora", "ff_siwis", "hf_alpha", "if_sara", "jf_alpha", "pf_dora",
    "zf_xiaobei",
];

pub fn check(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let voice = VOICES[usize::from(pick) % VOICES.len()];
    let request = SpeechRequest::new(voice, 1.0).expect("a stock voice");
    let Ok((segments, _words)) = segments_with_words(&text, &request) else {
        return;
    };
    for segment in &segments {
        let len = segment.phonemes.chars().count();
        assert!(
            len > 0 && len <= MAX_PHONEMES,
            "a segment of {len} phonemes from {text:?} ({voice})"
        );
        assert!(
            !segment.ids.is_empty() && segment.ids.iter().all(|&id| (1..N_TOKEN).contains(&id)),
            "a segment with no ids or ids outside the model's, from {text:?} ({voice}): {:?}",
            segment.ids
        );
    }
}
