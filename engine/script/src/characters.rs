//! A character list near the top of a script (`CHARACTERS:`, `Cast of characters`, `Dramatis
//! Personae`), each entry a name and who they are: `MARGARET — the keeper's widow, 60s`.
//!
//! Why: radio plays and audio dramas open with one, and every layout read its entries as turns
//! (Margaret saying "the keeper's widow, sixties") or refused the heading as a label with
//! nothing to say. The list is found before the layouts read the body, its lines are kept out of
//! them and reported as metadata, and its descriptions are kept: they are the best evidence a
//! script has of who a character is, so automatic casting reads a gender from them ("widow",
//! "a young fisherman") where the name says nothing.
//!
//! Only a list that is plainly one is taken: a heading of its own among the first lines, then
//! lines up to a blank one that are each a short name, a separator and a short description.
//! Anything else leaves the lines to the layouts, as before.

use super::cast::speaker_key;
use super::model::{Position, Warning};
use super::source::SourceLine;

/// How far into the body (in lines) a character list may start.
const SEARCH_LINES: usize = 40;
/// At most this many words describe a character.
const DESCRIPTION_WORDS: usize = 30;

/// A character list found in a script's body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CharacterList {
    /// Every line of the list, its heading included (1-based line numbers).
    pub lines: Vec<usize>,
    /// Each character's name and description, as written.
    pub described: Vec<(String, String)>,
    pub position: Position,
}

impl CharacterList {
    /// The description of the speaker `name`, if the list has one.
    pub fn description(&self, name: &str) -> Option<&str> {
        let key = speaker_key(name);
        self.described
            .iter()
            .find(|(n, _)| speaker_key(n) == key)
            .map(|(_, d)| d.as_str())
    }

    /// The notice that the list was read as one.
    pub fn warning(&self) -> Warning {
        let first = self.lines.first().copied().unwrap_or(self.position.line);
        let last = self.lines.last().copied().unwrap_or(first);
        Warning {
            position: self.position,
            message: format!(
                "lines {first}–{last} are a character list ({}), not speech, so they are not spoken; automatic casting reads each description for a gender",
                self.described.len()
            ),
        }
    }
}

/// The character list in `body`, if it has one, and the body with the list's lines blanked
/// (so no layout reads them).
pub(crate) fn take<'a>(body: &[SourceLine<'a>]) -> Option<(CharacterList, Vec<SourceLine<'a>>)> {
    let heading = body
        .iter()
        .take(SEARCH_LINES)
        .position(|l| is_list_heading(l.text))?;
    let mut at = heading + 1;
    // One blank line may separate the heading from its entries.
    if body.get(at).is_some_and(|l| l.text.trim().is_empty()) {
        at += 1;
    }
    let mut list = CharacterList {
        lines: vec![body[heading].number],
        position: Position::new(body[heading].number, 1 + indent(body[heading].text)),
        described: Vec::new(),
    };
    while let Some(line) = body.get(at).filter(|l| !l.text.trim().is_empty()) {
        let (name, description) = entry(line.text)?;
        list.lines.push(line.number);
        list.described
            .push((name.to_owned(), description.to_owned()));
        at += 1;
    }
    let mut names: Vec<String> = list.described.iter().map(|(n, _)| speaker_key(n)).collect();
    names.sort();
    names.dedup();
    // A list names each character once; a name twice is a dialogue.
    if list.described.is_empty() || names.len() < list.described.len() {
        return None;
    }
    let blanked = body
        .iter()
        .map(|l| SourceLine {
            number: l.number,
            text: if list.lines.contains(&l.number) {
                ""
            } else {
                l.text
            },
        })
        .collect();
    Some((list, blanked))
}

fn indent(text: &str) -> usize {
    text.chars().take_while(|c| c.is_whitespace()).count()
}

/// `CHARACTERS:`, `## Cast of Characters`, `**Dramatis Personae**`, `THE CAST`.
fn is_list_heading(text: &str) -> bool {
    let t = text
        .trim()
        .trim_start_matches('#')
        .trim()
        .trim_matches(|c| c == '*' || c == '_')
        .trim()
        .trim_end_matches([':', '.'])
        .trim()
        .to_lowercase();
    matches!(
        t.as_str(),
        "characters"
            | "the characters"
            | "cast"
            | "the cast"
            | "cast of characters"
            | "cast list"
            | "character list"
            | "characters in order of appearance"
            | "in order of appearance"
            | "dramatis personae"
            | "persons of the play"
            | "persons represented"
            | "roles"
    )
}

/// `MARGARET — the keeper's widow, 60s`, `Tom: a young fisherman`, `DR. LEE (40s), a surgeon`,
/// `- Ana, his sister`: the name and the description.
fn entry(text: &str) -> Option<(&str, &str)> {
    let t = text.trim();
    let t = t
        .strip_prefix(['-', '*', '•'])
        .map_or(t, str::trim_start)
        .trim_start_matches("**");
    let (name, description) = [" — ", " – ", " - ", "—", ": ", ", ", "\t", " ("]
        .iter()
        .filter_map(|sep| t.find(sep).map(|i| (i, *sep)))
        .min_by_key(|(i, _)| *i)
        .map(|(i, sep)| {
            let rest = &t[i + sep.len()..];
            // `DR. LEE (40s)`: the parenthesis is part of what is said about them.
            let rest = if sep == " (" { &t[i + 1..] } else { rest };
            (&t[..i], rest)
        })?;
    let name = name
        .trim()
        .trim_end_matches("**")
        .trim_end_matches(':')
        .trim();
    let description = description.trim().trim_start_matches("**").trim();
    let words = name.split_whitespace().count();
    let named = (1..=4).contains(&words)
        && name.chars().count() <= 40
        && name.starts_with(|c: char| c.is_uppercase())
        && !name.ends_with(['!', '?']);
    // `Alice: af_heart`: a cast block's voice, not a description.
    let voice = !description.contains(' ') && description.contains(['_', '+', '@']);
    let described = !voice
        && !description.is_empty()
        && description.split_whitespace().count() <= DESCRIPTION_WORDS
        && is_description(description);
    (named && described).then_some((name, description))
}

/// Whether `text` reads as who someone is (`the keeper's widow`, `A surgeon.`, `Retired
/// teacher, 60s`, `(40s)`) rather than what they say (`Hi there.`, `Is it you?`): it starts with
/// a small letter, a digit, a bracket, an article or a possessive, or it is no sentence.
fn is_description(text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or_default();
    let opener = matches!(
        first.to_lowercase().as_str(),
        "a" | "an" | "the" | "his" | "her" | "their" | "our" | "your" | "my"
    ) || first.ends_with("'s")
        || first.ends_with("’s");
    let small = text.starts_with(|c: char| !c.is_uppercase());
    !text.ends_with(['?', '!']) && (small || opener || !text.ends_with(['.', '…']))
}

#[cfg(test)]
mod tests {
    use super::super::source::split_lines;
    use super::*;

    #[test]
    fn a_list_under_its_heading_is_taken_and_its_lines_blanked() {
        let text = "THE LIGHTHOUSE\n\nCHARACTERS:\nMARGARET — the keeper's widow, 60s\n\
                    TOM - a young fisherman\nDR. LEE (40s), a surgeon\n\nMARGARET: You came back.\n";
        let lines = split_lines(text);
        let (list, body) = take(&lines).expect("a list");
        assert_eq!(list.lines, [3, 4, 5, 6]);
        assert_eq!(
            list.description("Margaret"),
            Some("the keeper's widow, 60s")
        );
        assert_eq!(list.description("TOM"), Some("a young fisherman"));
        assert_eq!(list.description("DR. LEE"), Some("(40s), a surgeon"));
        assert!(body[2..6].iter().all(|l| l.text.is_empty()));
        assert_eq!(body[7].text, "MARGARET: You came back.");
    }

    #[test]
    fn only_a_plain_list_is_taken() {
        let none = |text: &str| take(&split_lines(text)).is_none();
        // A speaker called Cast, a heading with no entries, an entry that is a sentence.
        assert!(none("Cast: Welcome back.\nBob: Hi.\n"));
        assert!(none("## Cast\nAlice: af_heart\nBob: am_adam@1.1\n"));
        assert!(none("CHARACTERS\n\nALICE: Hi there.\n"));
        assert!(none(
            "Cast\nALICE — a poet\nBOB — a baker\nALICE — a poet\n"
        ));
        assert!(none(
            "Characters:\nwhy would anyone write this — nobody knows\nBOB — a man\n"
        ));
        assert!(!none("## Cast of Characters\n- **Ana**: his sister\n"));
    }
}
