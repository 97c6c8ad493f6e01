//! Sounds written as letters and words stretched for effect: "Shh", "Mm-hmm", "Pfft", "Brrr",
//! "Eww", "Sooo", "Nooo".
//!
//! espeak spells what it cannot say as a word: "Shhh" was "S-H-H-H", "Mm-hmm" "M-M hmm",
//! "Pfft" "P-F-F-T", "Mmm" "M-M-M"; and it reads a stretched word's extra letters ("nooo" was
//! /nuːoʊ/, "sooo" /suːoʊ/). A sound is respelled as the nearest word espeak says ("shush",
//! "um-hum", "burr"); a stretched word is read as the word, when squeezing its long runs of one
//! letter gives one of the words people stretch. Anything else is left as written.

use super::rules::{keep_case, Ctx, Hit};

/// Words people stretch in writing ("sooo good", "nooo", "yesss", "pleeease").
const STRETCHED: &[&str] = &[
    "so", "no", "yes", "oh", "ah", "uh", "um", "er", "hmm", "wow", "yay", "ugh", "please", "what",
    "really", "god", "okay", "hey", "hi", "whoa", "nice", "cool", "good", "yeah", "wait", "hello",
    "sure", "right", "well", "why", "now", "go", "boo", "too", "yum", "huge", "love", "long",
    "damn", "omg", "ooh", "whee", "sorry", "stop", "help", "me", "you", "bye",
];

/// Token `i` as a sound or a word espeak can say.
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let core = ctx.toks[i].core;
    if core.len() > 24 || !core.chars().all(|c| c.is_alphabetic() || c == '-') {
        return None;
    }
    if plainly_a_word(core) {
        return None;
    }
    // Two capitals are an initialism ("HM Treasury", "SH 71"), and "ssh" is the protocol.
    let initials = core.len() <= 2 && core.chars().all(char::is_uppercase);
    if initials || core.eq_ignore_ascii_case("ssh") {
        return None;
    }
    let lower = core.to_lowercase();
    let said = sound(&lower).or_else(|| stretched(&lower))?;
    if said == lower {
        return None;
    }
    Some(Hit::new(1, keep_case(core, &said)))
}

/// An ASCII word with a vowel, no hyphen and no letter twice in a row: no sound's squeezed
/// form and no stretch, told without squeezing it (the rule sees nearly every word).
fn plainly_a_word(word: &str) -> bool {
    let bytes = word.as_bytes();
    word.is_ascii()
        && !word.contains('-')
        && bytes
            .iter()
            .any(|b| matches!(b.to_ascii_lowercase(), b'a' | b'e' | b'i' | b'o' | b'u'))
        && !bytes.windows(2).any(|w| w[0].eq_ignore_ascii_case(&w[1]))
}

/// A sound made of letters espeak spells, by its squeezed form ("shhh" is "sh").
fn sound(word: &str) -> Option<String> {
    let squeezed = squeeze(word, 1);
    // Unstretched, these are symbols and abbreviations: "8x200 m", "3 BR", "gr" for grains;
    // a growl or a shiver stretches its r ("Brrr"), not its b ("BBR" is an algorithm).
    let unstretched = matches!(squeezed.as_str(), "m" | "pf") && squeezed == word
        || matches!(squeezed.as_str(), "br" | "gr") && !word.ends_with("rr");
    if unstretched {
        return None;
    }
    let said = match squeezed.as_str() {
        "sh" | "ssh" => "shush",
        "hm" | "m" => "hmm",
        "mhm" | "m-hm" | "mh-m" | "mhmh" | "uhm-hm" => "um-hum",
        "pf" | "pft" | "pfh" => "puh",
        "br" => "burr",
        "gr" => "gurr",
        "hmph" | "hmf" => "humph",
        "ew" => "ew",
        "aw" => "aw",
        "uh" => "uh",
        "um" => "um",
        _ => return None,
    };
    Some(said.to_owned())
}

/// A word with a run of three or more of one letter, read as the word it stretches.
fn stretched(word: &str) -> Option<String> {
    let has_run = word
        .as_bytes()
        .windows(3)
        .any(|w| w[0] == w[1] && w[1] == w[2]);
    if !has_run {
        return None;
    }
    [1, 2]
        .into_iter()
        .map(|keep| squeeze_runs_of_three(word, keep))
        .find(|w| STRETCHED.contains(&w.as_str()))
}

/// `word` with every run of one letter cut to `keep` letters.
fn squeeze(word: &str, keep: usize) -> String {
    squeeze_longer_than(word, 1, keep)
}

/// `word` with every run of three or more of one letter cut to `keep` letters ("pleeease" to
/// "please" with 1, "oooh" to "ooh" with 2).
fn squeeze_runs_of_three(word: &str, keep: usize) -> String {
    squeeze_longer_than(word, 2, keep)
}

/// `word` with each run longer than `longer` letters cut to `keep`.
fn squeeze_longer_than(word: &str, longer: usize, keep: usize) -> String {
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::with_capacity(word.len());
    let mut k = 0;
    while k < chars.len() {
        let run = chars[k..].iter().take_while(|&&c| c == chars[k]).count();
        let n = if run > longer { keep } else { run };
        out.extend(std::iter::repeat_n(chars[k], n));
        k += run;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeezing_keeps_short_runs_and_cuts_long_ones() {
        assert_eq!(squeeze("shhh", 1), "sh");
        assert_eq!(squeeze("mm-hmm", 1), "m-hm");
        assert_eq!(squeeze_runs_of_three("pleeease", 1), "please");
        assert_eq!(squeeze_runs_of_three("oooh", 2), "ooh");
        assert_eq!(squeeze_runs_of_three("good", 1), "good");
        assert_eq!(stretched("sooo").as_deref(), Some("so"));
        assert_eq!(stretched("soooo"), Some("so".to_owned()));
        assert_eq!(stretched("zzz"), None);
        assert_eq!(stretched("good"), None);
        assert_eq!(sound("pfft").as_deref(), Some("puh"));
        assert_eq!(sound("ooh"), None);
    }
}
