//! Names in a play's layouts: a name alone on its line (`ALGERNON.`, `JOHN (V.O.)`), or
//! before the speech on the same line and ended by a full stop, a bracket or a dash; telling
//! an abbreviation's full stop (`MR. WORTHING`) from a sentence's.

use super::{is_label_shape, timestamp_len, without_timestamp, KnownNames, PARTICLES};

/// A name on its own line in a play: `ALGERNON.`, `LADY BRACKNELL`, `JOHN (V.O.)`, Fountain's
/// `MARCUS ^` and `@McCLANE`, or, with
/// `allow_title_case`, `Lady Bracknell.` (the period is then required); a title-case name with a
/// timestamp after it (`Speaker 1  0:07`, a transcript's) anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlayName<'a> {
    pub name: &'a str,
    /// Ended with `.`/`:` or had a screenplay extension such as `(V.O.)` or a timestamp.
    pub marked: bool,
    /// Followed by a transcript's timestamp (`Sarah Chen  0:07`): a speaker line wherever it
    /// stands, never a title.
    pub stamped: bool,
}

pub(crate) fn play_name(trimmed: &str, allow_title_case: bool) -> Option<PlayName<'_>> {
    // Fountain: `MARCUS ^` speaks beside the speech before (dual dialogue), and `@McCLANE`
    // forces a name that is not all capitals.
    let trimmed = trimmed
        .trim_end()
        .strip_suffix('^')
        .map_or(trimmed, str::trim_end);
    if let Some(forced) = trimmed.strip_prefix('@').map(str::trim) {
        return (is_play_name_shape(forced) && !has_sentence_break(forced)).then_some(PlayName {
            name: forced,
            marked: true,
            stamped: false,
        });
    }
    // `Sarah Chen  0:07` (a transcript's speaker line): the timestamp marks it as a name
    let untimed = without_timestamp(trimmed);
    let stamped = untimed.len() < trimmed.trim_end().len();
    let trimmed = untimed;
    let (core, extension) = match trimmed
        .strip_suffix(')')
        .and_then(|t| t.rfind('(').map(|i| &t[..i]))
    {
        Some(before) if !before.trim().is_empty() => (before.trim(), true),
        _ => (trimmed, false),
    };
    let stripped = core.strip_suffix(['.', ':']).unwrap_or(core).trim_end();
    let marked = extension || stamped || stripped.len() < core.len();
    if !is_play_name_shape(stripped) || has_sentence_break(stripped) {
        return None;
    }
    let upper = !stripped.chars().any(char::is_lowercase);
    // Words start with a capital or a digit (`Speaker 2`, Otter's name for a voice it
    // could not name).
    let title = (allow_title_case || stamped)
        && marked
        && stripped.split_whitespace().all(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
                || PARTICLES.contains(&w.to_lowercase().as_str())
        });
    (upper || title).then_some(PlayName {
        name: stripped,
        marked,
        stamped,
    })
}

/// Abbreviations a name may contain before a full stop and a space (`MR. WORTHING`).
pub(super) const ABBREVIATIONS: [&str; 22] = [
    "mr", "mrs", "ms", "mx", "dr", "st", "sr", "jr", "prof", "rev", "capt", "col", "gen", "lt",
    "sgt", "hon", "mme", "mlle", "messrs", "fr", "sen", "gov",
];

/// Whether the full stop (or colon) ending `before` is an abbreviation's or an initial's.
pub(super) fn ends_in_abbreviation(before: &str) -> bool {
    let word = before.rsplit(char::is_whitespace).next().unwrap_or("");
    word.chars().count() <= 1 || ABBREVIATIONS.contains(&word.to_lowercase().as_str())
}

/// Whether `name` has a full stop inside it that is not an abbreviation's (`Lane.  Mr. Ernest
/// Worthing` is a speech after a name, `MR. WORTHING` and `J. P. MORGAN` are names).
pub(super) fn has_sentence_break(name: &str) -> bool {
    name.match_indices(['.', ':']).any(|(at, _)| {
        name[at + 1..].starts_with(char::is_whitespace) && !ends_in_abbreviation(&name[..at])
    })
}

/// `Algernon.  Did you hear…` (Gutenberg's Wilde): a title-case name of up to three words
/// ended by `.` at the start of a paragraph, then the speech. Returns the name and the byte
/// offset of the speech. Callers accept it only for a name the script uses this way often.
pub(crate) fn title_period_candidate(trimmed: &str) -> Option<(&str, usize)> {
    let limit = trimmed
        .char_indices()
        .nth(40)
        .map_or(trimmed.len(), |(i, _)| i);
    let (at, _) = trimmed[..limit]
        .match_indices(". ")
        .find(|&(at, _)| !ends_in_abbreviation(&trimmed[..at]))?;
    let name = &trimmed[..at];
    let after = &trimmed[at + 1..];
    let title = name.split_whitespace().count() <= 3
        && name.chars().any(char::is_lowercase)
        && name.split_whitespace().all(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                || PARTICLES.contains(&w.to_lowercase().as_str())
        });
    (title && is_play_name_shape(name) && !after.trim().is_empty())
        .then(|| (name, at + 1 + (after.len() - after.trim_start().len())))
}

/// Every way to read the start of `trimmed` as an upper-case name ended by `.` or `:` with
/// speech after it (`LANE. Yes, sir.`; `MR. WORTHING. Quite.` offers `MR` and `MR. WORTHING`):
/// `(name, byte offset of the speech)`, shortest first.
pub(crate) fn period_candidates(trimmed: &str) -> impl Iterator<Item = (&str, usize)> {
    let limit = trimmed
        .char_indices()
        .nth(48)
        .map_or(trimmed.len(), |(i, _)| i);
    trimmed[..limit].char_indices().filter_map(move |(i, c)| {
        if c != '.' && c != ':' {
            return None;
        }
        let after = &trimmed[i + 1..];
        if !after.starts_with(char::is_whitespace) || after.trim().is_empty() {
            return None;
        }
        let name = trimmed[..i].trim_end();
        ((is_play_name_shape(name) || is_interview_letter(name))
            && !name.chars().any(char::is_lowercase))
        .then(|| (name, i + 1 + (after.len() - after.trim_start().len())))
    })
}

/// `LANE. Yes, sir.` / `LANE: Yes, sir.`: an upper-case name, then speech on the same line.
/// Returns the name and the byte offset of the speech. Where several readings exist, the name
/// the script uses most as a label wins, then one whose last part is more than one letter (so
/// `HENRIETTA MARLOWE. I … I suppose so.` is Henrietta saying "I"), then the longest.
pub(crate) fn play_same_line_name<'a>(
    trimmed: &'a str,
    known: &KnownNames,
) -> Option<(&'a str, usize)> {
    let interview = known.count("Q") >= 1 && known.count("A") >= 1;
    period_candidates(trimmed)
        .filter(|(name, _)| interview || !is_interview_letter(name))
        .max_by_key(|(name, _)| {
            let last_part = name
                .rsplit(['.', ' '])
                .find(|p| !p.is_empty())
                .unwrap_or(name);
            (known.count(name), last_part.chars().count() > 1, name.len())
        })
}

/// `Q.` and `A.`: an interview's question and answer, labels only in a script that opens lines
/// with both (`A. Lincoln wrote…` alone is no speaker).
pub(crate) fn is_interview_letter(name: &str) -> bool {
    matches!(name, "Q" | "A")
}

/// `THE AUNT [at the window] It has been raining.` (Shaw's e-texts): an upper-case name, then a
/// bracketed direction (square or round) where a play puts `.`. Returns the name and the byte
/// offset of the bracket, which starts the speech (the direction is a piece of the turn).
pub(crate) fn bracket_candidate(trimmed: &str) -> Option<(&str, usize)> {
    let open = trimmed.find(['[', '('])?;
    let name = trimmed[..open].trim_end();
    let name = name.strip_suffix(['.', ':']).unwrap_or(name).trim_end();
    let upper = !name.chars().any(char::is_lowercase);
    (open > 0
        && upper
        && is_play_name_shape(name)
        && trimmed[..open].ends_with(char::is_whitespace)
        && !speech_starts_lower_case(&trimmed[open..]))
    .then_some((name, open))
}

/// `[Alice] Welcome back.`, `[Dr. Lee] Thanks.`: a name in square brackets before the speech.
/// Returns where the name starts and ends and where the speech starts. A bracket is far more
/// often a direction (`[laughs]`, `[Music]`, `[INTRO MUSIC]`), so the caller also needs the
/// name on other lines; here the inside must be a capitalised name of at most four words, and
/// none of them a word of the sounds and cues transcripts bracket.
pub(crate) fn bracketed_name(trimmed: &str) -> Option<(usize, usize, usize)> {
    const NOT_NAMES: [&str; 48] = [
        "ad",
        "angry",
        "applause",
        "aside",
        "audio",
        "background",
        "beat",
        "break",
        "cheering",
        "commercial",
        "cont'd",
        "continued",
        "coughs",
        "crosstalk",
        "excited",
        "fade",
        "foreign",
        "inaudible",
        "indistinct",
        "interrupts",
        "intro",
        "jingle",
        "laughs",
        "laughter",
        "loud",
        "music",
        "nervous",
        "noise",
        "o.s",
        "off",
        "outro",
        "overlap",
        "pause",
        "quiet",
        "sad",
        "sarcastic",
        "segment",
        "sfx",
        "sighs",
        "silence",
        "sound",
        "static",
        "theme",
        "to",
        "v.o",
        "vo",
        "voiceover",
        "sings",
    ];
    // How a line is said (`[Whispering]`, `[Softly]`), not who says it.
    let delivery = |w: &str| w.len() > 4 && (w.ends_with("ing") || w.ends_with("ly"));
    let inner_end = trimmed.strip_prefix('[')?.find(']')? + 1;
    let inner = &trimmed[1..inner_end];
    let name = inner.trim();
    let speech_at = inner_end + 1;
    let speech = trimmed.get(speech_at..)?;
    let words: Vec<&str> = name.split_whitespace().collect();
    let plain = (1..=4).contains(&words.len())
        && name.chars().count() <= 40
        && name.starts_with(char::is_uppercase)
        && !name.contains(['[', '(', ':', ',', '!', '?'])
        && words.iter().all(|w| {
            let lower = w.to_lowercase();
            !NOT_NAMES.contains(&lower.trim_end_matches('.')) && !delivery(&lower)
        })
        // Dia's `[S1]` is its own layout.
        && !(name.starts_with('S') && name[1..].chars().all(|c| c.is_ascii_digit()));
    // Zoom's `[Alex Chen] 10:32:05` is a speaker line with a time, the speech below it.
    let said = speech.trim();
    let spoken = speech.starts_with(char::is_whitespace)
        && !said.is_empty()
        && timestamp_len(said) < said.len();
    (plain && spoken).then(|| {
        let name_at = 1 + (inner.len() - inner.trim_start().len());
        let speech_at = speech_at + (speech.len() - speech.trim_start().len());
        (name_at, name_at + name.len(), speech_at)
    })
}

/// `(20s, intern) hurries in with a printout.`: what follows the bracket that opens `s` starts
/// in lower case, so the line is action introducing a character, not a speech.
pub(super) fn speech_starts_lower_case(s: &str) -> bool {
    let (opener, closer) = if s.starts_with('[') {
        ('[', ']')
    } else {
        ('(', ')')
    };
    let mut depth = 0usize;
    let Some(end) = s.char_indices().find_map(|(i, c)| {
        if c == opener {
            depth += 1;
        } else if c == closer {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(i + c.len_utf8());
            }
        }
        None
    }) else {
        return false; // a direction running on to the next lines
    };
    s[end..]
        .chars()
        .find(|c| c.is_alphanumeric())
        .is_some_and(char::is_lowercase)
}

/// `NAME — text` (em or en dash, or a spaced hyphen): returns the name and the byte offset of
/// the speech. The name must look like a label; callers decide whether it is one.
pub(crate) fn dash_candidate(trimmed: &str) -> Option<(&str, usize)> {
    let limit = trimmed
        .char_indices()
        .nth(48)
        .map_or(trimmed.len(), |(i, _)| i);
    let (at, dash) = trimmed[..limit]
        .char_indices()
        .find(|&(_, c)| c == '—' || c == '–' || c == '-')?;
    // `NAME -- text`, and Synge's `NAME.--text`: a doubled hyphen needs no spaces.
    let doubled = trimmed[at..].starts_with("--");
    if dash == '-'
        && !doubled
        && !(trimmed[..at].ends_with(' ') && trimmed[at + 1..].starts_with(' '))
    {
        return None;
    }
    let name = trimmed[..at].trim_end();
    let name = name.strip_suffix('.').unwrap_or(name).trim_end();
    let len = if doubled { 2 } else { dash.len_utf8() };
    let after = &trimmed[at + len..];
    let speech = at + len + (after.len() - after.trim_start().len());
    (!after.trim().is_empty() && is_label_shape(name) && name.split_whitespace().count() <= 4)
        .then_some((name, speech))
}

/// `Alice<TAB>Hello.`: a name, a tab, then the speech (a two-column table: a spreadsheet saved
/// as TSV, a Word table). Returns the name and the byte offset of the speech.
pub(crate) fn tab_candidate(trimmed: &str) -> Option<(&str, usize)> {
    let (name, after) = trimmed.split_once('\t')?;
    let name = name.trim();
    let speech = trimmed.len() - after.trim_start().len();
    (!after.trim().is_empty()
        && !after.contains('\t')
        && is_label_shape(name)
        && name.split_whitespace().count() <= 4)
        .then_some((name, speech))
}

/// Whether a name in a weaker label layout (`NAME.`, `NAME —`, `NAME [...]`) may start a turn
/// in a `Name:` script: the script vouches for it, or it is all upper case.
pub(crate) fn is_weak_label_name(name: &str, known: &KnownNames) -> bool {
    known.contains(name)
        || (name.chars().filter(|c| c.is_alphabetic()).count() >= 2
            && !name.chars().any(char::is_lowercase)
            && name.chars().any(char::is_uppercase))
}

pub(super) fn is_play_name_shape(name: &str) -> bool {
    const NOT_NAMES: [&str; 22] = [
        "the end",
        "end",
        "curtain",
        "dramatis personae",
        "characters",
        "cast",
        "fade in",
        "fade out",
        "fade to black",
        "cut to",
        "fin",
        "exit",
        "exeunt",
        "blackout",
        "intermission",
        "interval",
        "persons of the play",
        "the persons of the play",
        "scene",
        "act",
        "end of act",
        "continued",
    ];
    let words: Vec<&str> = name.split_whitespace().collect();
    let letters = name.chars().filter(|c| c.is_alphabetic()).count();
    let lower = name.to_lowercase();
    (1..=4).contains(&words.len())
        && letters >= 2
        && name.chars().count() <= 40
        && name.chars().next().is_some_and(char::is_alphabetic)
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c.is_whitespace() || "'’-.&".contains(c))
        && !NOT_NAMES.contains(&lower.as_str())
        && !matches!(
            words[0].to_lowercase().as_str(),
            "enter" | "exit" | "exeunt" | "re-enter"
        )
}
