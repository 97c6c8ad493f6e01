//! Which parentheses in a turn are stage directions (`(laughs)`, `(to Bob)`, a play's
//! `(To the PORTER, taking out her purse.)`) and which are speech (`(which I doubt)`): the
//! opening words, the length, whether the parenthesis is a sentence of its own, and what the
//! rest of the script does with its parentheses.

use super::{match_brackets, TurnText, NONE};
use crate::model::Position;
use crate::source::TextSpan;

/// Whether the inside of a parenthesis after a speaker's name is a direction for the line,
/// not part of the name (`HOST (laughing):`, `ANA (quietly):`, `BOB (whispers):`): lower case,
/// and it opens like a direction ([`opens_like_direction`]). `Ana (Annie)` is a name.
pub(crate) fn is_delivery_note(inner: &str) -> bool {
    inner.trim().starts_with(char::is_lowercase) && opens_like_direction(inner).1
}

/// A parenthesis's inside as its words (outer punctuation trimmed, lower case), and whether it
/// opens like a direction by itself: a stage word (`(laughs)`), a lone lower-case verb
/// (`(waves)`, `(pointing)`: an action, not words to say) or a lone adverb (`(quietly)`).
fn opens_like_direction(inner: &str) -> (Vec<String>, bool) {
    let words: Vec<String> = inner
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '.' && c != '\'')
                .to_lowercase()
        })
        .collect();
    let Some(first) = words.first() else {
        return (words, false);
    };
    let lone_verb = words.len() == 1
        && inner.trim().starts_with(char::is_lowercase)
        && first.chars().count() >= 4
        && (first.ends_with('s') || first.ends_with("ing"));
    let opens = STAGE_WORDS.contains(&first.as_str())
        || lone_verb
        || (words.len() <= 2 && first.len() > 4 && first.ends_with("ly"));
    (words, opens)
}

/// Words that open a stage direction in parentheses: `(laughs)`, `(quietly)`, `(to Bob)`.
const STAGE_WORDS: [&str; 58] = [
    "laughs",
    "laughing",
    "laugh",
    "laughter",
    "chuckles",
    "chuckling",
    "giggles",
    "sighs",
    "sighing",
    "sigh",
    "coughs",
    "clears",
    "pauses",
    "pause",
    "beat",
    "whispers",
    "whispering",
    "whisper",
    "shouts",
    "shouting",
    "yells",
    "cries",
    "crying",
    "sobs",
    "sniffs",
    "gasps",
    "groans",
    "yawns",
    "smiles",
    "smiling",
    "grins",
    "nods",
    "shrugs",
    "winks",
    "aside",
    "off",
    "offstage",
    "reading",
    "reads",
    "interrupting",
    "interrupts",
    "continuing",
    "music",
    "sfx",
    "sound",
    "applause",
    "silence",
    "inaudible",
    "crosstalk",
    "overlapping",
    "v.o.",
    "o.s.",
    "beat.",
    "unintelligible",
    "clapping",
    "scoffs",
    "snorts",
    "exhales",
];

/// Whether the parenthesis `chars[open..=close]` is a stage direction rather than words of the
/// sentence (FORMATS.md, "Parentheses"): it stands on its own line, opens with a stage word or
/// a lone adverb (`(laughs)`, `(quietly)`, `(to Bob)`), or is short (at most six words) at the
/// start or the end of the turn. A longer clause, or one inside a sentence, is speech.
pub(super) fn is_direction_parenthesis(
    chars: &[char],
    open: usize,
    close: usize,
    at_start: bool,
    play_rules: bool,
) -> bool {
    let before_on_line = chars[..open]
        .iter()
        .rev()
        .take_while(|&&c| c != '\n')
        .all(|c| c.is_whitespace());
    let after_on_line = chars[close + 1..]
        .iter()
        .take_while(|&&c| c != '\n')
        .all(|c| c.is_whitespace());
    if before_on_line && after_on_line {
        return true;
    }
    let inner: String = chars[open + 1..close].iter().collect();
    // "401(k)", "12(b)(6)", "501(c)(3)": a short mark glued to a word or number is part of it,
    // even at the end of a turn.
    let glued = open > 0 && (chars[open - 1].is_alphanumeric() || chars[open - 1] == ')');
    if glued && (1..=4).contains(&inner.chars().count()) && inner.chars().all(char::is_alphanumeric)
    {
        return false;
    }
    let (words, opens) = opens_like_direction(&inner);
    let Some(first) = words.first() else {
        return true; // `()` says nothing either way; drop it
    };
    let second_is_addressee = inner.split_whitespace().nth(1).is_some_and(|w| {
        w.starts_with(char::is_uppercase)
            || [
                "him",
                "her",
                "them",
                "himself",
                "herself",
                "themselves",
                "audience",
                "camera",
            ]
            .contains(
                &w.trim_matches(|c: char| !c.is_alphabetic())
                    .to_lowercase()
                    .as_str(),
            )
    });
    let stage_led = opens || (first == "to" && second_is_addressee);
    // In a play, `(throwing down the turf)` inside a sentence is business, not words.
    let participle = inner.trim().starts_with(char::is_lowercase) && first.ends_with("ing");
    if stage_led || (play_rules && (at_start || participle || own_sentence(chars, open, close))) {
        return true;
    }
    // At the end only if the sentence ended before it: `… the gold standard (about 1 in 3.5
    // million).` closes its sentence after the parenthesis, so the clause is part of it.
    let rest: Vec<char> = chars[close + 1..]
        .iter()
        .copied()
        .filter(|c| !c.is_whitespace())
        .collect();
    let closes_its_sentence = rest.first().is_some_and(|c| ".!?…".contains(*c));
    let at_end = rest
        .iter()
        .all(|c| !c.is_alphanumeric() && !matches!(c, '[' | '('))
        && (!closes_its_sentence || sentence_ended_before(chars, open));
    words.len() <= SHORT_PARENTHESIS && (at_start || at_end)
}

/// A parenthesis of at most this many words at the start or end of a turn is a direction in
/// any layout; a longer one read aloud gets a notice.
pub(crate) const SHORT_PARENTHESIS: usize = 6;

/// Pronouns that open a direction written about a character (`(She grabs her coat.)`).
const THIRD_PERSON: [&str; 7] = ["he", "she", "they", "his", "her", "their", "both"];

/// Whether a file's parentheses are written as stage directions, decided once for the whole
/// file from its clearest cases: a parenthesis opening a turn with a lower-case participle
/// (`HOST: (leaning back, glancing at the clock) So…`), or one standing as a sentence of its
/// own about a character in the present tense (`… back. (She grabs her coat.) Sorry.`). Returns
/// where the first such parenthesis is, for the notice that says the file was read this way.
pub(crate) fn parentheses_look_like_directions<'s, 'a: 's>(
    turns: impl IntoIterator<Item = &'s [TextSpan<'a>]>,
) -> Option<(Position, String)> {
    for segments in turns {
        let turn = TurnText::new(segments);
        let chars = &turn.chars;
        let close = match_brackets(chars);
        for (open, &c) in chars.iter().enumerate() {
            let end = close[open];
            if c != '(' || end == NONE {
                continue;
            }
            let inner: String = chars[open + 1..end].iter().collect();
            let words: Vec<&str> = inner.split_whitespace().collect();
            let Some(first) = words.first() else {
                continue;
            };
            let first_lower = first
                .trim_matches(|c: char| !c.is_alphabetic())
                .to_lowercase();
            let opens_turn = chars[..open].iter().all(|c| c.is_whitespace());
            let participle_led = inner.trim_start().starts_with(char::is_lowercase)
                && first_lower.ends_with("ing")
                && words.len() >= 2;
            let about_a_character = own_sentence(chars, open, end)
                && words.len() >= 3
                && (THIRD_PERSON.contains(&first_lower.as_str())
                    || words.get(1).is_some_and(|w| {
                        let w = w.trim_matches(|c: char| !c.is_alphabetic());
                        w.starts_with(char::is_lowercase) && w.len() > 2 && w.ends_with('s')
                    }) && first.starts_with(char::is_uppercase));
            if (opens_turn && participle_led) || about_a_character {
                return Some((turn.position(open), excerpt(chars, open, end)));
            }
        }
    }
    None
}

/// Whether the text before `open` ends a sentence (or there is none).
fn sentence_ended_before(chars: &[char], open: usize) -> bool {
    chars[..open]
        .iter()
        .rev()
        .find(|c| !c.is_whitespace())
        .is_none_or(|c| ".!?…:;—".contains(*c) || matches!(c, ')' | ']'))
}

/// `… dressed. (To the PORTER, taking out her purse.) How much?`: a parenthesis that starts
/// with a capital after a finished sentence and ends its own with a full stop or is followed
/// by a new sentence, as plays write their directions.
fn own_sentence(chars: &[char], open: usize, close: usize) -> bool {
    let inner: String = chars[open + 1..close].iter().collect();
    let inner = inner.trim();
    let next_sentence = chars[close + 1..]
        .iter()
        .find(|c| !c.is_whitespace())
        .is_none_or(|c| c.is_uppercase());
    inner.starts_with(char::is_uppercase)
        && (inner.ends_with(['.', '!', '?']) || next_sentence)
        && sentence_ended_before(chars, open)
}

/// The parenthesis `chars[open..=close]` as a notice quotes it: its first 48 characters, and
/// `…` when there is more.
pub(super) fn excerpt(chars: &[char], open: usize, close: usize) -> String {
    const SHOWN: usize = 48;
    let mut out: String = chars[open..=close].iter().take(SHOWN).collect();
    if close + 1 - open > SHOWN {
        out.push('…');
    }
    out
}

/// An action written in emphasis marks, as chat and roleplay scripts write them: `*laughs*`,
/// `_sighs_`, `**clears throat**`, `*takes a sip*`. `open` is a `*` or `_` that opens a run of
/// one or two marks closed by the same run on the same line, around at most
/// [`SHORT_PARENTHESIS`] words that open like an action: a stage word, or a lower-case verb
/// (`*nods*`, `*leans in*`). Returns the inside's range and the index just past the closing run.
///
/// Emphasis of a word in speech (`I *never* said that`, `*Seriously*, no`) has the same marks,
/// so adverbs do not count here (unlike in parentheses), and the caller still decides by place:
/// [`EmphasisedAction::place`].
pub(super) fn emphasised_action(chars: &[char], open: usize) -> Option<EmphasisedAction> {
    let mark = chars[open];
    if !matches!(mark, '*' | '_') || open > 0 && chars[open - 1] == mark {
        return None;
    }
    if open > 0 && chars[open - 1].is_alphanumeric() {
        return None; // snake_case, 2*3
    }
    let run = chars[open..].iter().take_while(|&&c| c == mark).count();
    if run > 2 {
        return None;
    }
    let start = open + run;
    let line_end = chars[start..]
        .iter()
        .position(|&c| c == '\n')
        .map_or(chars.len(), |k| start + k);
    let close = (start..line_end).find(|&k| {
        chars[k] == mark
            && chars[k..line_end]
                .iter()
                .take_while(|&&c| c == mark)
                .count()
                == run
            && (k == 0 || chars[k - 1] != mark)
    })?;
    let end = close + run;
    if close == start
        || chars[start].is_whitespace()
        || chars[close - 1].is_whitespace()
        || chars.get(end).is_some_and(|c| c.is_alphanumeric())
    {
        return None;
    }
    let inner: String = chars[start..close].iter().collect();
    let (words, opens) = opens_like_direction(&inner);
    let first = words.first()?;
    let lower = inner.trim().starts_with(char::is_lowercase);
    // `*takes a sip*`: a verb in the third person opening a short lower-case clause.
    let action_clause = lower && words.len() > 1 && first.len() >= 3 && first.ends_with('s');
    let adverb = first.ends_with("ly") && !STAGE_WORDS.contains(&first.as_str());
    if words.len() > SHORT_PARENTHESIS || adverb || !(opens || action_clause) {
        return None;
    }
    Some(EmphasisedAction {
        inner: start..close,
        end,
        stage_word: STAGE_WORDS.contains(&first.as_str()),
    })
}

/// An emphasised span that reads like an action ([`emphasised_action`]).
pub(super) struct EmphasisedAction {
    /// The words inside the marks.
    pub inner: std::ops::Range<usize>,
    /// Just past the closing marks.
    pub end: usize,
    /// It opens with a stage word (`*laughs*`), not just a verb (`*says*`).
    stage_word: bool,
}

impl EmphasisedAction {
    /// Whether it stands where a direction stands rather than where a stressed word does: it
    /// opens the turn (`at_start`), follows a finished sentence, or ends the turn with a stage
    /// word (`so funny *laughs*`, but `that's what he *says*` is speech). Inside a sentence it
    /// is speech (`That *sounds* right`).
    pub(super) fn is_direction(&self, chars: &[char], open: usize, at_start: bool) -> bool {
        let ends_turn = chars[self.end..]
            .iter()
            .all(|c| !c.is_alphanumeric() && !matches!(c, '[' | '(' | '*' | '_'));
        at_start || sentence_ended_before(chars, open) || (ends_turn && self.stage_word)
    }

    /// It opens with a stage word (`*laughs*`), which is worth a notice wherever it is read.
    pub(super) fn opens_with_stage_word(&self) -> bool {
        self.stage_word
    }
}
