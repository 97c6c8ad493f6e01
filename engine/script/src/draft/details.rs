//! An episode's details written as labelled lines at the top of a script (`Title: Night
//! Market`, `Runtime: ~35 min`, `Guest: Dev Patel`) with no front matter around them: read as
//! the episode's details, not as turns, so no voice reads the title block aloud.
//!
//! Why a pass over the turns and not a rule in each layout: the same block opens scripts in
//! every labelled layout (`Title:`, `**Title:**`, a play's `Runtime:` under its heading), and
//! each layout reads it as turns of speakers called "Title" and "Runtime". Only the leading
//! turns are considered, and only while each one's label is a detail's (a title, a date, a
//! length, a credit) and that speaker never speaks again; a label that can also be a person's
//! role (`Guest:`, `Producer:`) is a detail only when what follows is a name, not a sentence.
//! A `Title:` gives the episode its title when the script has none. The author is told which
//! lines were taken, so a speaker who really opens the show that way can be seen at once.

use std::collections::BTreeMap;

use super::{Draft, Header};
use crate::cast::speaker_key;
use crate::model::{LineKind, Warning};

/// Labels that only ever introduce an episode's details.
const DETAILS: [&str; 54] = [
    "title",
    "subtitle",
    "episode",
    "episode title",
    "episode number",
    "episode no",
    "ep",
    "season",
    "series",
    "show",
    "podcast",
    "programme",
    "program",
    "runtime",
    "run time",
    "running time",
    "est runtime",
    "estimated runtime",
    "target runtime",
    "duration",
    "length",
    "target length",
    "recorded",
    "recording date",
    "recorded on",
    "recorded at",
    "record date",
    "date",
    "air date",
    "airdate",
    "airs",
    "release date",
    "publish date",
    "published",
    "draft",
    "version",
    "revision",
    "status",
    "location",
    "studio",
    "format",
    "genre",
    "tags",
    "keywords",
    "topic",
    "topics",
    "summary",
    "description",
    "synopsis",
    "logline",
    "notes",
    "word count",
    "language",
    "rating",
];

/// Labels that name a role a speaker may also be called by: a detail only before a name.
const ROLES: [&str; 30] = [
    "guest",
    "guests",
    "host",
    "hosts",
    "co-host",
    "co-hosts",
    "cohost",
    "featuring",
    "with",
    "cast",
    "starring",
    "panel",
    "panelists",
    "speakers",
    "interviewer",
    "interviewee",
    "moderator",
    "author",
    "authors",
    "writer",
    "writers",
    "written by",
    "script by",
    "producer",
    "producers",
    "produced by",
    "editor",
    "edited by",
    "director",
    "directed by",
];

/// Takes the leading turns that are the episode's details out of `draft`, classifies their
/// lines as metadata, sets the title from a `Title:` if `header` has none, and says so.
pub(super) fn take_leading_details(
    draft: &mut Draft<'_>,
    header: &mut Header,
    kinds: &mut BTreeMap<usize, LineKind>,
    warnings: &mut Vec<Warning>,
) {
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    for turn in &draft.turns {
        *uses.entry(speaker_key(&turn.speaker)).or_default() += 1;
    }
    let taken = draft
        .turns
        .iter()
        .take_while(|turn| {
            let text = turn_text(turn);
            uses.get(&speaker_key(&turn.speaker)) == Some(&1) && is_detail(&turn.speaker, &text)
        })
        .count();
    // A script of nothing but details keeps them: something must be said.
    if taken == 0 || taken == draft.turns.len() {
        return;
    }
    let details: Vec<_> = draft.turns.drain(..taken).collect();
    for mark in &mut draft.marks {
        mark.before = mark.before.saturating_sub(taken);
    }
    let mut labels = Vec::new();
    for turn in &details {
        for &line in &turn.lines {
            kinds.insert(line, LineKind::Metadata);
        }
        if label_key(&turn.speaker) == "title" && header.settings.title.is_none() {
            header.settings.title = Some(turn_text(turn));
        }
        labels.push(format!("`{}`", turn.speaker));
    }
    let first = details[0].position;
    let last = details[taken - 1]
        .lines
        .last()
        .copied()
        .unwrap_or(first.line);
    warnings.push(Warning {
        position: first,
        message: format!(
            "{} open{} the script as the episode's details (line{} {}), so {} not spoken; a \
             speaker really called that is read as one once they speak again",
            join(&labels),
            if taken == 1 { "s" } else { "" },
            if first.line == last { "" } else { "s" },
            if first.line == last {
                first.line.to_string()
            } else {
                format!("{}–{last}", first.line)
            },
            if taken == 1 { "it is" } else { "they are" },
        ),
    });
}

/// The turn's words, joined.
fn turn_text(turn: &super::Turn<'_>) -> String {
    turn.segments
        .iter()
        .map(|s| s.text.trim())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The label as the lists spell it: lower case, without a trailing stop or colon.
fn label_key(label: &str) -> String {
    label
        .trim()
        .trim_end_matches([':', '.'])
        .replace('.', "")
        .to_lowercase()
}

/// Whether a turn labelled `label` saying `text` is a detail of the episode.
fn is_detail(label: &str, text: &str) -> bool {
    let key = label_key(label);
    let words = text.split_whitespace().count();
    if DETAILS.contains(&key.as_str()) {
        return words <= 60;
    }
    // `Guest: Dev Patel`, not `Guest: Thanks for having me.`
    ROLES.contains(&key.as_str()) && words <= 12 && !text.trim_end().ends_with(['.', '!', '?', '…'])
}

fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
