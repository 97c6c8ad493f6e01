//! Script fidelity (issue 17): how faithfully the parser reads real scripts.
//!
//! `tests/fidelity/` holds scripts in every layout writers bring (plays and screenplays adapted
//! from public-domain e-texts, our own podcast scripts in each supported format, files that mix
//! layouts), each beside a hand-written `NAME.expected.json`:
//!
//! ```json
//! {"turns": [{"speaker": "THE AUNT", "text": "It has been raining since noon."}],
//!  "skipped": {"3": "heading", "5": "direction"}}
//! ```
//!
//! `turns` is what a human reader would say, in order; `skipped` (optional) gives the kind of
//! non-blank lines that are not spoken. For every script this measures:
//!
//! - turns exact: parsed turns equal to expected ones (speaker ignoring case, spoken text
//!   exactly), counted on a longest common subsequence so one error costs one turn;
//! - lines accounted for: every non-blank line is in some turn's `source_lines` or in exactly one
//!   `skipped` entry, never both; and how many expected skipped kinds the parse got right;
//! - phantom speakers: parsed speakers that the script does not have;
//! - silent merges: two expected turns read as one with no warning on the lines involved.
//!
//! Run with `cargo test -p script --test script_fidelity -- --nocapture` to see the table and,
//! for each script, what went wrong where.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use script::{Episode, ParseOptions};

/// The issue's targets, held: every turn exact, no phantom speaker, every file parsed (and, in
/// the checks below, every line accounted for and no silent merge). Scripts 41–45 were written
/// after the parsers reached these figures on 01–40, as a held-out check (issue 17's note).
const MIN_TURNS_EXACT: f64 = 1.0;
/// Phantom speakers allowed.
const MAX_PHANTOMS: usize = 0;
/// Scripts allowed to fail to parse.
const MAX_PARSE_ERRORS: usize = 0;

/// The issue asks for at least 30 scripts; the corpus has more, and must not quietly shrink.
const MIN_SCRIPTS: usize = 53;

/// How many problems of each kind the report lists per script.
const SHOW: usize = 8;

/// How many parsed turns ahead an expected turn is looked for when finding merges.
const LOOKAHEAD: usize = 6;

/// How many normalised characters of an expected turn identify it inside a parsed turn.
const HEAD_CHARS: usize = 24;

#[derive(Debug)]
struct Turn {
    speaker: String,
    text: String,
}

#[derive(Debug)]
struct Expected {
    turns: Vec<Turn>,
    /// Line number → kind, where the file gives them.
    skipped: Option<BTreeMap<usize, String>>,
}

/// What one script scored.
#[derive(Debug, Default)]
struct Score {
    name: String,
    format: String,
    expected_turns: usize,
    exact_turns: usize,
    non_blank: usize,
    accounted: usize,
    kinds_given: usize,
    kinds_right: usize,
    phantoms: Vec<String>,
    silent_merges: usize,
    /// Expected turns whose words the parse reported as skipped lines (not asserted: they cost
    /// turns exact already, but they are the worst way to lose one).
    dropped: usize,
    error: Option<String>,
    /// What went wrong, one line each, for the report.
    notes: Vec<String>,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fidelity")
}

fn expected_path(script: &Path) -> PathBuf {
    let name = script
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    script.with_file_name(format!("{stem}.expected.json"))
}

fn load_expected(path: &Path) -> Expected {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: cannot read: {e}", path.display()));
    let value: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
    let turns = value["turns"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no \"turns\" array", path.display()))
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let field = |key: &str| {
                t[key].as_str().map_or_else(
                    || panic!("{}: turn {} has no string {key:?}", path.display(), i + 1),
                    str::to_owned,
                )
            };
            Turn {
                speaker: field("speaker"),
                text: field("text"),
            }
        })
        .collect();
    let skipped = value.get("skipped").map(|s| {
        s.as_object()
            .unwrap_or_else(|| panic!("{}: \"skipped\" is not an object", path.display()))
            .iter()
            .map(|(line, kind)| {
                let line = line.parse::<usize>().unwrap_or_else(|_| {
                    panic!("{}: skipped line {line:?} is not a number", path.display())
                });
                let kind = kind.as_str().unwrap_or_else(|| {
                    panic!("{}: skipped line {line} has no kind", path.display())
                });
                assert!(
                    matches!(
                        kind,
                        "direction" | "heading" | "narration" | "metadata" | "comment"
                    ),
                    "{}: skipped line {line} has unknown kind {kind:?}",
                    path.display()
                );
                (line, kind.to_owned())
            })
            .collect()
    });
    Expected { turns, skipped }
}

fn same_speaker(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase()
}

/// Shortens text for the report.
fn clip(s: &str) -> String {
    clip_from(s, 0)
}

/// Shortens text for the report, starting (after an ellipsis) at character `from`.
fn clip_from(s: &str, from: usize) -> String {
    const MAX: usize = 70;
    let total = s.chars().count();
    let shown: String = s.chars().skip(from).take(MAX).collect();
    let lead = if from > 0 { "…" } else { "" };
    let tail = if from + MAX < total { "…" } else { "" };
    format!("{lead}{shown:?}{tail}")
}

/// Where two texts first differ, backed off a little so the report shows some context; 0 when
/// they differ early enough to show from the start.
fn show_from(a: &str, b: &str) -> usize {
    const CONTEXT: usize = 25;
    let same = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    if same > 50 {
        same - CONTEXT
    } else {
        0
    }
}

/// One step of the alignment of expected turns against parsed ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Match(usize, usize),
    Missing(usize),
    Extra(usize),
}

/// Longest common subsequence of equal turns, as a list of steps in file order.
fn align(expected: &[Turn], parsed: &[Turn]) -> Vec<Step> {
    let (n, m) = (expected.len(), parsed.len());
    let equal = |i: usize, j: usize| {
        same_speaker(&expected[i].speaker, &parsed[j].speaker) && expected[i].text == parsed[j].text
    };
    // lcs[i][j]: length of the LCS of expected[i..] and parsed[j..].
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if equal(i, j) {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut steps = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && equal(i, j) {
            steps.push(Step::Match(i, j));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            steps.push(Step::Extra(j));
            j += 1;
        } else {
            steps.push(Step::Missing(i));
            i += 1;
        }
    }
    steps
}

/// Lower-case letters and digits only: what is left of a text whatever the markup around it.
fn normalise(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Where `needle` first occurs in `hay` at or after `from`.
fn find_chars(hay: &[char], needle: &[char], from: usize) -> Option<usize> {
    let last = hay.len().checked_sub(needle.len())?;
    if needle.is_empty() {
        return None;
    }
    (from..=last).find(|&k| hay[k..k + needle.len()] == *needle)
}

/// For each expected turn, the parsed turn its opening words were found in, searching forward in
/// file order; `None` where they were not found near where they should be.
///
/// The search for the next turn starts where this one's words end: after its closing words if
/// the parsed turn has them, otherwise where they would end had nothing been dropped, so a turn
/// that lost a few words is not mistaken for one that swallowed its neighbour.
fn locate(expected: &[Turn], parsed: &[Turn]) -> Vec<Option<usize>> {
    let parsed_norm: Vec<Vec<char>> = parsed
        .iter()
        .map(|t| normalise(&t.text).chars().collect())
        .collect();
    let mut cursor = (0usize, 0usize);
    expected
        .iter()
        .map(|turn| {
            let full: Vec<char> = normalise(&turn.text).chars().collect();
            let head = &full[..full.len().min(HEAD_CHARS)];
            let tail = &full[full.len().saturating_sub(HEAD_CHARS)..];
            if head.is_empty() {
                return None;
            }
            let (start, offset) = cursor;
            let end = (start + LOOKAHEAD).min(parsed_norm.len());
            (start..end).find_map(|q| {
                let hay = &parsed_norm[q];
                let at = find_chars(hay, head, if q == start { offset } else { 0 })?;
                let stop = find_chars(hay, tail, at).map_or(at + full.len(), |t| t + tail.len());
                cursor = (q, stop);
                Some(q)
            })
        })
        .collect()
}

/// Where a missing turn's words went.
enum Whereabouts {
    /// Inside this parsed turn (merged into it, or read with other words).
    InTurn(usize),
    /// Reported as this skipped line: the words are not spoken at all.
    Skipped(usize),
    NotFound,
}

/// Finds where each expected turn that the parse missed ended up. Skipped lines are searched
/// from `hint` on (the line of the last turn placed), so a repeated "Yes, sir." is looked for
/// where it belongs.
fn whereabouts(
    steps: &[Step],
    expected: &[Turn],
    located: &[Option<usize>],
    episode: &Episode,
) -> HashMap<usize, Whereabouts> {
    let mut found = HashMap::new();
    let mut hint = 0;
    for step in steps {
        match *step {
            Step::Match(_, j) => hint = episode.lines[j].position.line,
            Step::Extra(_) => {}
            Step::Missing(i) => {
                if let Some(q) = located[i] {
                    found.insert(i, Whereabouts::InTurn(q));
                    continue;
                }
                let head: String = normalise(&expected[i].text)
                    .chars()
                    .take(HEAD_CHARS)
                    .collect();
                let contains =
                    |s: &&script::Skipped| !head.is_empty() && normalise(&s.text).contains(&head);
                let skipped = episode
                    .skipped
                    .iter()
                    .filter(|s| s.position.line >= hint)
                    .find(contains)
                    .or_else(|| episode.skipped.iter().find(contains));
                match skipped {
                    Some(s) => {
                        hint = s.position.line + 1;
                        found.insert(i, Whereabouts::Skipped(hint - 1));
                    }
                    None => {
                        found.insert(i, Whereabouts::NotFound);
                    }
                }
            }
        }
    }
    found
}

/// The note for a missing turn: where its words went.
fn describe(place: Option<&Whereabouts>, episode: &Episode) -> String {
    match place {
        Some(Whereabouts::InTurn(q)) => {
            let line = &episode.lines[*q];
            format!(
                "its words are in the {} turn at line {}",
                line.speaker, line.position.line
            )
        }
        Some(Whereabouts::Skipped(n)) => {
            let kind = episode
                .skipped
                .iter()
                .find(|s| s.position.line == *n)
                .map_or("?", |s| s.kind.as_str());
            format!("skipped as {kind} at line {n}")
        }
        Some(Whereabouts::NotFound) | None => "not found".to_owned(),
    }
}

fn measure(path: &Path) -> Score {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: cannot read: {e}", path.display()));
    let expected = load_expected(&expected_path(path));
    let non_blank: Vec<usize> = text
        .split('\n')
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, _)| i + 1)
        .collect();
    let mut score = Score {
        name: name.clone(),
        expected_turns: expected.turns.len(),
        non_blank: non_blank.len(),
        kinds_given: expected.skipped.as_ref().map_or(0, BTreeMap::len),
        ..Score::default()
    };
    let episode = match Episode::parse(&name, &text, &ParseOptions::default()) {
        Ok(e) => e,
        Err(e) => {
            score.format = String::from("error");
            score.error = Some(e.to_string());
            return score;
        }
    };
    score.format = episode.format.to_string();
    let parsed: Vec<Turn> = episode
        .lines
        .iter()
        .map(|l| Turn {
            speaker: l.speaker.clone(),
            text: episode.spoken_text(l),
        })
        .collect();
    let line_of = |j: usize| episode.lines[j].position.line;

    // Turns exact, and what differs.
    let located = locate(&expected.turns, &parsed);
    let steps = align(&expected.turns, &parsed);
    score.exact_turns = steps
        .iter()
        .filter(|s| matches!(s, Step::Match(..)))
        .count();
    let places = whereabouts(&steps, &expected.turns, &located, &episode);
    score.dropped = places
        .values()
        .filter(|p| matches!(p, Whereabouts::Skipped(_)))
        .count();
    let mut turn_notes = Vec::new();
    let mut k = 0;
    while k < steps.len() {
        // A run of unmatched steps between two matches: pair them up for the report.
        let run_end = steps[k..]
            .iter()
            .position(|s| matches!(s, Step::Match(..)))
            .map_or(steps.len(), |p| k + p);
        if run_end == k {
            k += 1;
            continue;
        }
        let missing: Vec<usize> = steps[k..run_end]
            .iter()
            .filter_map(|s| match s {
                Step::Missing(i) => Some(*i),
                _ => None,
            })
            .collect();
        let extra: Vec<usize> = steps[k..run_end]
            .iter()
            .filter_map(|s| match s {
                Step::Extra(j) => Some(*j),
                _ => None,
            })
            .collect();
        for n in 0..missing.len().max(extra.len()) {
            let note = match (missing.get(n), extra.get(n)) {
                (Some(&i), Some(&j)) => {
                    let from = show_from(&expected.turns[i].text, &parsed[j].text);
                    format!(
                        "turn {}: line {}: expected {:?}: {}\n{:>14}got {:?}: {}",
                        i + 1,
                        line_of(j),
                        expected.turns[i].speaker,
                        clip_from(&expected.turns[i].text, from),
                        "",
                        parsed[j].speaker,
                        clip_from(&parsed[j].text, from)
                    )
                }
                (Some(&i), None) => format!(
                    "turn {}: missing {}: {} ({})",
                    i + 1,
                    expected.turns[i].speaker,
                    clip(&expected.turns[i].text),
                    describe(places.get(&i), &episode)
                ),
                (None, Some(&j)) => format!(
                    "line {}: extra turn {}: {}",
                    line_of(j),
                    parsed[j].speaker,
                    clip(&parsed[j].text)
                ),
                (None, None) => continue,
            };
            turn_notes.push(note);
        }
        k = run_end;
    }

    // Lines accounted for.
    let in_turn: HashSet<usize> = episode
        .lines
        .iter()
        .flat_map(|l| l.source_lines.iter().copied())
        .collect();
    let mut skipped_at: HashMap<usize, Vec<&str>> = HashMap::new();
    for s in &episode.skipped {
        skipped_at
            .entry(s.position.line)
            .or_default()
            .push(s.kind.as_str());
    }
    let mut line_notes = Vec::new();
    let source_lines: Vec<&str> = text.split('\n').collect();
    for &n in &non_blank {
        let turn = in_turn.contains(&n);
        let skips = skipped_at.get(&n).map_or(0, Vec::len);
        let problem = match (turn, skips) {
            (true, 0) | (false, 1) => None,
            (false, 0) => Some("in no turn and not skipped"),
            (true, _) => Some("both in a turn and skipped"),
            (false, _) => Some("skipped more than once"),
        };
        match problem {
            None => score.accounted += 1,
            Some(p) => line_notes.push(format!(
                "line {n}: {p}: {}",
                clip(source_lines[n - 1].trim())
            )),
        }
    }

    // Skipped kinds.
    let mut kind_notes = Vec::new();
    for (&n, kind) in expected.skipped.iter().flatten() {
        let got = match skipped_at.get(&n).map(Vec::as_slice) {
            Some([one]) => (*one).to_owned(),
            Some(many) => many.join("+"),
            None if in_turn.contains(&n) => "spoken".to_owned(),
            None => "nothing".to_owned(),
        };
        if got == *kind {
            score.kinds_right += 1;
        } else {
            kind_notes.push(format!(
                "line {n}: expected {kind}, got {got}: {}",
                clip(source_lines.get(n - 1).map_or("", |l| l.trim()))
            ));
        }
    }

    // Phantom speakers.
    let known: HashSet<String> = expected
        .turns
        .iter()
        .map(|t| t.speaker.to_lowercase())
        .collect();
    let mut phantom_notes = Vec::new();
    for (j, turn) in parsed.iter().enumerate() {
        let key = turn.speaker.to_lowercase();
        if !known.contains(&key) && !score.phantoms.iter().any(|p| p.to_lowercase() == key) {
            score.phantoms.push(turn.speaker.clone());
            phantom_notes.push(format!(
                "line {}: phantom speaker {:?}: {}",
                line_of(j),
                turn.speaker,
                clip(&turn.text)
            ));
        }
    }

    // Silent merges.
    let mut merge_notes = Vec::new();
    for i in 1..located.len() {
        let (Some(a), Some(b)) = (located[i - 1], located[i]) else {
            continue;
        };
        if a != b {
            continue;
        }
        let line = &episode.lines[a];
        let involved: HashSet<usize> = line
            .source_lines
            .iter()
            .copied()
            .chain([line.position.line])
            .collect();
        let warned = episode
            .warnings
            .iter()
            .any(|w| involved.contains(&w.position.line));
        if !warned {
            score.silent_merges += 1;
            merge_notes.push(format!(
                "line {}: turns {} and {} merged into one {} turn, no warning: {} + {}",
                line.position.line,
                i,
                i + 1,
                line.speaker,
                clip(&expected.turns[i - 1].text),
                clip(&expected.turns[i].text)
            ));
        }
    }

    for (label, notes) in [
        ("turns", turn_notes),
        ("lines", line_notes),
        ("kinds", kind_notes),
        ("phantom", phantom_notes),
        ("merge", merge_notes),
    ] {
        let total = notes.len();
        for note in notes.into_iter().take(SHOW) {
            score.notes.push(format!("{label:>8}: {note}"));
        }
        if total > SHOW {
            score
                .notes
                .push(format!("{label:>8}: … and {} more", total - SHOW));
        }
    }
    score
}

fn percent(k: usize, n: usize) -> f64 {
    if n == 0 {
        100.0
    } else {
        100.0 * k as f64 / n as f64
    }
}

fn report(scores: &[Score]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{:<34} {:<10} {:>9} {:>9} {:>9} {:>8} {:>7} {:>8}",
        "script", "format", "turns", "lines", "kinds", "phantom", "merges", "dropped"
    );
    for s in scores {
        let _ = writeln!(
            out,
            "{:<34} {:<10} {:>9} {:>9} {:>9} {:>8} {:>7} {:>8}",
            s.name,
            s.format,
            format!("{}/{}", s.exact_turns, s.expected_turns),
            format!("{}/{}", s.accounted, s.non_blank),
            if s.kinds_given == 0 {
                "-".to_owned()
            } else {
                format!("{}/{}", s.kinds_right, s.kinds_given)
            },
            s.phantoms.len(),
            s.silent_merges,
            s.dropped
        );
    }
    for s in scores {
        if s.error.is_none() && s.notes.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{}:", s.name);
        if let Some(e) = &s.error {
            let _ = writeln!(out, "{:>8}: {e}", "error");
        }
        for note in &s.notes {
            let _ = writeln!(out, "{note}");
        }
    }
    out
}

#[test]
fn script_fidelity() {
    let dir = corpus_dir();
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    scripts.retain(|p| {
        p.is_file()
            && !p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".expected.json"))
    });
    scripts.sort();
    assert!(
        scripts.len() >= MIN_SCRIPTS,
        "the corpus has {} scripts, fewer than {MIN_SCRIPTS}",
        scripts.len()
    );
    for script in &scripts {
        assert!(
            expected_path(script).is_file(),
            "{} has no {}",
            script.display(),
            expected_path(script).display()
        );
    }

    let scores: Vec<Score> = scripts.iter().map(|p| measure(p)).collect();
    let sum = |f: fn(&Score) -> usize| scores.iter().map(f).sum::<usize>();
    let (exact, expected) = (sum(|s| s.exact_turns), sum(|s| s.expected_turns));
    let (accounted, non_blank) = (sum(|s| s.accounted), sum(|s| s.non_blank));
    let (kinds_right, kinds_given) = (sum(|s| s.kinds_right), sum(|s| s.kinds_given));
    let phantoms = sum(|s| s.phantoms.len());
    let merges = sum(|s| s.silent_merges);
    let dropped = sum(|s| s.dropped);
    let errors = scores.iter().filter(|s| s.error.is_some()).count();
    let turns_exact = if expected == 0 {
        1.0
    } else {
        exact as f64 / expected as f64
    };

    let mut out = report(&scores);
    let _ = writeln!(
        out,
        "\nTOTAL {} scripts: turns exact {exact}/{expected} ({:.1} %), lines accounted for \
         {accounted}/{non_blank} ({:.1} %), skipped kinds right {kinds_right}/{kinds_given} \
         ({:.1} %), phantom speakers {phantoms}, silent merges {merges}, turns dropped as skipped lines \
         {dropped}, parse errors {errors}",
        scores.len(),
        100.0 * turns_exact,
        percent(accounted, non_blank),
        percent(kinds_right, kinds_given),
    );
    println!("{out}");

    let mut failures = Vec::new();
    let parsed = |f: fn(&Score) -> usize| {
        scores
            .iter()
            .filter(|s| s.error.is_none())
            .map(f)
            .sum::<usize>()
    };
    let (parsed_accounted, parsed_non_blank) = (parsed(|s| s.accounted), parsed(|s| s.non_blank));
    if parsed_accounted != parsed_non_blank {
        failures.push(format!(
            "lines accounted for in the scripts that parse {:.1} % (must be 100 %)",
            percent(parsed_accounted, parsed_non_blank)
        ));
    }
    if errors > MAX_PARSE_ERRORS {
        failures.push(format!(
            "{errors} scripts fail to parse (at most {MAX_PARSE_ERRORS})"
        ));
    }
    if phantoms > MAX_PHANTOMS {
        failures.push(format!(
            "{phantoms} phantom speakers (at most {MAX_PHANTOMS})"
        ));
    }
    if merges != 0 {
        failures.push(format!("{merges} silent merges (must be 0)"));
    }
    if turns_exact < MIN_TURNS_EXACT {
        failures.push(format!(
            "turns exact {:.1} % (must be at least {:.1} %)",
            100.0 * turns_exact,
            100.0 * MIN_TURNS_EXACT
        ));
    }
    assert!(
        failures.is_empty(),
        "script fidelity: {} (run with --nocapture for the table)",
        failures.join("; ")
    );
}

/// The measuring itself, on hand-made turns: a wrong turn costs one turn, not the rest of the
/// file; a turn that lost words is not a merge; a turn that swallowed its neighbour is.
#[test]
fn measures_count_what_they_say() {
    let turns = |list: &[(&str, &str)]| -> Vec<Turn> {
        list.iter()
            .map(|(speaker, text)| Turn {
                speaker: (*speaker).to_owned(),
                text: (*text).to_owned(),
            })
            .collect()
    };
    let expected = turns(&[
        ("A", "One."),
        ("B", "Two, and two again, as I said before (really) two."),
        ("A", "Three."),
        ("B", "Four."),
    ]);

    // One wrong turn in the middle: three of four still exact.
    let parsed = turns(&[
        ("a", "One."),
        ("B", "Two, and two again, as I said before, two."),
        ("A", "Three."),
        ("B", "Four."),
    ]);
    let exact = align(&expected, &parsed)
        .iter()
        .filter(|s| matches!(s, Step::Match(..)))
        .count();
    assert_eq!(exact, 3);
    // Lost words are not a merge.
    assert_eq!(
        locate(&expected, &parsed),
        [Some(0), Some(1), Some(2), Some(3)]
    );

    // Three and four read as one turn: they land in the same parsed turn.
    let merged = turns(&[
        ("A", "One."),
        ("B", "Two, and two again, as I said before (really) two."),
        ("A", "Three. B: Four."),
    ]);
    assert_eq!(
        locate(&expected, &merged),
        [Some(0), Some(1), Some(2), Some(2)]
    );
    let steps = align(&expected, &merged);
    assert_eq!(
        steps,
        [
            Step::Match(0, 0),
            Step::Match(1, 1),
            Step::Extra(2),
            Step::Missing(2),
            Step::Missing(3)
        ]
    );
}
