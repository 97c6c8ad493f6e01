//! Lines that structure a script and are never spoken by a speaker: Markdown headings, scene
//! headings, numbered parts (`Episode 3`), the title block, transitions (`CUT TO:`) and the
//! heading of a play's list of characters.

use super::{play_name, KnownNames};

/// The title of a Markdown ATX heading (`## Part two ##`).
pub(crate) fn markdown_heading(trimmed: &str) -> Option<&str> {
    let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let rest = &trimmed[hashes..];
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    Some(rest.trim().trim_end_matches('#').trim())
}

/// A scene heading: `INT. KITCHEN - DAY`, `EXT.`, `ACT I`, `SCENE 2`, `Scene: A garden`,
/// `FIRST ACT`.
pub(crate) fn scene_heading(trimmed: &str) -> bool {
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    let Some(first) = words.first() else {
        return false;
    };
    let bare = first.trim_end_matches(['.', ':', ',', '—', '-']);
    if matches!(
        bare,
        "INT" | "EXT" | "INT./EXT" | "INT/EXT" | "I/E" | "EST" | "INTERIOR" | "EXTERIOR"
    ) && (first.ends_with('.') || words.len() > 1)
    {
        return true;
    }
    let lower = bare.to_lowercase();
    // Ibsen's and Synge's `SCENE.—A room…`, `SCENE.--An Island…`
    let head: String = trimmed.chars().take(9).collect::<String>().to_lowercase();
    if [
        "scene.—",
        "scene.--",
        "scene.–",
        "scene—",
        "scene--",
        "scene: ",
    ]
    .iter()
    .any(|p| head.starts_with(p))
    {
        return true;
    }
    let numbered = words.get(1).is_some_and(|second| {
        let ends_there = words.len() == 2
            || second.ends_with(['.', ':'])
            || words
                .get(2)
                .is_some_and(|w| ["—", "–", "-", "--"].contains(w));
        ends_there && is_numbered_heading(&format!("{bare} {second}"))
    });
    if numbered {
        return true; // `SCENE I. Elsinore. A platform before the castle.`, `Episode 3: Fog`
    }
    if matches!(lower.as_str(), "act" | "scene" | "prologue" | "epilogue") {
        let punctuated = first.len() > bare.len();
        return words.len() <= 4 || punctuated;
    }
    words.len() <= 3
        && words.last().is_some_and(|w| {
            matches!(
                w.trim_end_matches('.').to_lowercase().as_str(),
                "act" | "scene"
            )
        })
}

/// `Episode 3`, `Chapter 2`, `Part One`, `Scene I`: the name of a part of the show, so `Episode
/// 3: Fog` is a heading, not a speaker called "Episode 3".
pub(crate) fn is_numbered_heading(name: &str) -> bool {
    let words: Vec<&str> = name.split_whitespace().collect();
    let [first, number] = words.as_slice() else {
        return false;
    };
    let number = number.trim_end_matches(['.', ':']);
    let numeral = number.chars().all(|c| c.is_ascii_digit())
        || (number.len() <= 6 && number.chars().all(|c| "IVXLCivxlc".contains(c)))
        || [
            "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "first",
            "second", "third", "fourth", "fifth", "last", "final",
        ]
        .contains(&number.to_lowercase().as_str());
    numeral
        && matches!(
            first.to_lowercase().as_str(),
            "episode" | "chapter" | "part" | "act" | "scene" | "season" | "segment" | "round"
        )
}

/// A line of the title block before a script starts: `A DOLL'S HOUSE`, `by Henrik Ibsen`, `A
/// Comedy in Two Acts`, `Recorded 12 March 2026`. Short, not a sentence, capitalised or a
/// credit, and not a name `known` counts as a speaker's.
pub(crate) fn is_title_line(trimmed: &str, known: &KnownNames) -> bool {
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    let lower = trimmed.to_lowercase();
    let credit = [
        "by ",
        "written by ",
        "translated by ",
        "adapted by ",
        "from ",
        "recorded ",
        "transcribed by ",
        "interview with ",
    ]
    .iter()
    .any(|p| lower.starts_with(p));
    let sentence = trimmed.ends_with(['.', '!', '?', '…']) && !credit;
    let capitalised = words
        .iter()
        .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() > 3)
        .all(|w| w.starts_with(char::is_uppercase));
    let speaker = play_name(trimmed, true).is_some_and(|n| known.count(n.name) >= 2);
    words.len() <= 10
        && !sentence
        && !speaker
        && (capitalised || credit)
        && !trimmed.starts_with(['[', '('])
}

/// A screenplay transition or a play's last word: `CUT TO:`, `SMASH CUT TO:`, `FADE OUT.`,
/// `CURTAIN`, `THE END`. They are directions, never names.
pub(crate) fn transition(trimmed: &str) -> bool {
    const WORDS: [&str; 14] = [
        "fade in",
        "fade out",
        "fade to black",
        "fade up",
        "curtain",
        "the curtain falls",
        "curtain falls",
        "the end",
        "end",
        "blackout",
        "black out",
        "end of play",
        "end of scene",
        "lights out",
    ];
    if trimmed.chars().any(char::is_lowercase) || trimmed.chars().count() > 40 {
        return false;
    }
    let bare = trimmed
        .trim_end_matches(['.', ':', '!', ' '])
        .trim_start_matches(['.', ' ']);
    let lower = bare.to_lowercase();
    WORDS.contains(&lower.as_str())
        || lower.starts_with("end of act")
        || [
            "end of episode",
            "end of show",
            "end of part",
            "end of chapter",
            "end of program",
        ]
        .iter()
        .any(|e| lower.starts_with(e))
        || (trimmed.trim_end().ends_with(':') && lower.ends_with(" to"))
        || show_cue(lower.trim_matches(['-', '*', '=', '~', '_', ' ']))
}

/// A production cue of two words or more in capitals that ends the speech above it, as a blank
/// line would (`OUTRO MUSIC` under the last words): a speaker who shouts ends with `!`.
pub(crate) fn cue_after_speech(trimmed: &str) -> bool {
    !trimmed.chars().any(char::is_lowercase)
        && trimmed.chars().count() <= 40
        && !trimmed.ends_with(['!', '?', '.', ','])
        && trimmed.split_whitespace().count() >= 2
        && show_cue(
            trimmed
                .to_lowercase()
                .trim_matches(['-', '*', '=', '~', '_', ' ']),
        )
}

/// A podcast script's production cue in capitals, alone on its line: `OUTRO MUSIC`, `THEME UP`,
/// `AD BREAK`, `END OF EPISODE`. Every word is a cue's word, and one of them names the cue.
fn show_cue(lower: &str) -> bool {
    const CUES: [&str; 19] = [
        "music",
        "sfx",
        "sound",
        "outro",
        "intro",
        "theme",
        "sting",
        "stinger",
        "jingle",
        "bed",
        "break",
        "ad",
        "ads",
        "commercial",
        "midroll",
        "mid-roll",
        "preroll",
        "credits",
        "episode",
    ];
    const WITH: [&str; 16] = [
        "in", "out", "up", "down", "under", "end", "ends", "of", "the", "and", "cold", "open",
        "opening", "closing", "show", "segment",
    ];
    let words: Vec<&str> = lower.split_whitespace().collect();
    let cue = |w: &&str| CUES.contains(w);
    words.iter().any(cue)
        && words.iter().all(|w| cue(w) || WITH.contains(w))
        && !words.iter().all(|w| *w == "episode" || WITH.contains(w))
        || matches!(lower, "end of episode" | "end of show" | "end of segment")
}

/// `PERSONS OF THE PLAY`, `CHARACTERS`, `DRAMATIS PERSONAE`, `CAST OF CHARACTERS`: the
/// heading of a play's list of characters, which is metadata and never spoken.
pub(crate) fn persons_heading(trimmed: &str) -> bool {
    const HEADINGS: [&str; 12] = [
        "persons in the play",
        "persons of the play",
        "the persons of the play",
        "persons represented",
        "people in the play",
        "characters",
        "the characters",
        "characters in the play",
        "cast of characters",
        "dramatis personae",
        "cast",
        "the cast",
    ];
    let lower = trimmed.trim_end_matches(['.', ':']).trim().to_lowercase();
    HEADINGS.contains(&lower.as_str())
}
