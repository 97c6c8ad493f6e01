//! Property tests: no string or byte sequence makes a parser panic or point outside the input.
//!
//! The fuzz targets in `fuzz/` explore the same properties for longer with coverage guidance;
//! these run with every `cargo test`. Set `PROPTEST_CASES` for a longer run.

use proptest::prelude::*;

use super::source::split_lines;
use super::*;

fn parse(text: &str, options: ParseOptions) -> Result<Episode, ScriptError> {
    Episode::parse("ep.txt", text, &options)
}

/// Whether every position the parse reported lies within `text`.
fn positions_within(text: &str, result: &Result<Episode, ScriptError>) -> Result<(), String> {
    let lines = split_lines(text);
    let check = |p: Position, what: &str| {
        let ok = p.line >= 1
            && p.line <= lines.len()
            && p.column >= 1
            && p.column <= lines[p.line - 1].text.chars().count() + 1;
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{what} at {p} is outside the input ({} lines)",
                lines.len()
            ))
        }
    };
    match result {
        Ok(e) => {
            for l in &e.lines {
                check(l.position, "line")?;
            }
            for c in &e.chapters {
                check(c.position, "chapter")?;
            }
            for d in &e.directions {
                check(d.position, "direction")?;
            }
            for w in &e.warnings {
                check(w.position, &w.message)?;
            }
            for m in &e.cast.members {
                if let VoiceSource::Cast { position } = m.source {
                    check(position, "cast entry")?;
                }
            }
            Ok(())
        }
        Err(e) => check(Position::new(e.line, e.column), &e.to_string()),
    }
}

/// Whether every non-blank source line is part of a turn or skipped with a kind, never both,
/// and skipped at most once: nothing the author wrote disappears.
fn every_line_accounted(text: &str, e: &Episode) -> Result<(), String> {
    let mut spoken = std::collections::HashSet::new();
    for l in &e.lines {
        if l.source_lines.is_empty() || !l.source_lines.windows(2).all(|w| w[0] < w[1]) {
            return Err(format!(
                "turn at {} has lines {:?}",
                l.position, l.source_lines
            ));
        }
        spoken.extend(l.source_lines.iter().copied());
    }
    let mut skipped = std::collections::HashMap::new();
    for s in &e.skipped {
        if skipped.insert(s.position.line, s.kind).is_some() {
            return Err(format!("line {} skipped twice", s.position.line));
        }
        if spoken.contains(&s.position.line) {
            return Err(format!("line {} both spoken and skipped", s.position.line));
        }
    }
    for line in split_lines(text) {
        // Control characters and stray BOMs are blanked before parsing.
        let blank = line
            .text
            .chars()
            .all(|c| c.is_whitespace() || c.is_control() || matches!(c, '\u{feff}' | '\u{fffe}'));
        let counted = spoken.contains(&line.number) || skipped.contains_key(&line.number);
        if blank == counted && !(blank && spoken.contains(&line.number)) {
            return Err(format!(
                "line {} ({:?}) is {}",
                line.number,
                line.text,
                if blank {
                    "blank but skipped"
                } else {
                    "not accounted for"
                }
            ));
        }
    }
    Ok(())
}

/// Script-shaped text: fragments of every format, mixed.
fn scriptish() -> impl Strategy<Value = String> {
    let parts = prop::sample::select(vec![
        "Alice:",
        "Bob: ",
        "Speaker 1: ",
        "[S1] ",
        "[S2]",
        "<Person1>",
        "</Person1>",
        "<Person2>",
        "**Ann:** ",
        "# Part",
        "---",
        "# cast",
        "title: x",
        "cast:",
        "  Al: af_heart",
        "Al: am_adam @1.1",
        "ALGERNON.",
        "LANE. Yes.",
        "INT. ROOM",
        "ACT I",
        "(laughs)",
        "[Enter Lane.]",
        "[pause:1s]",
        "[pause:x]",
        "[rate:2]",
        "[w](/ipa/)",
        "[",
        "]",
        "(",
        ")",
        "{",
        "}",
        "\"speaker\"",
        "\"text\"",
        ":",
        ",",
        "\n",
        "\r\n",
        "\r",
        " ",
        "\t",
        "text",
        "é",
        "🎙️",
        "שלום",
        "\u{0}",
        "\u{7}",
        "\u{feff}",
        "&amp;",
        "<",
        ">",
        "*",
        "_",
        "THE AUNT [at the window] ",
        "HENRIETTA MARLOWE. I ",
        "- BOB: ",
        "> BOB: ",
        "bob: ",
        "KAI — ",
        "{\"speaker\": \"Zoe\", \"text\": \"Hi.\"}",
        "Ana (Annie) 🌍: ",
        "\u{200f}",
        "：",
        "\u{a0}",
        "Jose\u{301}: ",
        "_was_ ",
        "(which, as anyone knows, means summer)",
        "(V.O.)",
        "مرحبا ",
    ]);
    prop::collection::vec(parts, 0..80).prop_map(|v| v.concat())
}

/// A turn's worth of text with parentheses of every length, at its start, between sentences
/// and inside them, capitalised or not.
fn parenthesised_turns() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "she", "grabs", "the", "coat", "and", "which", "means", "summer", "leaning", "back",
        "Maya", "walks", "out", "slowly", "laughs", "to", "Bob", "about", "three", "million",
    ]);
    let paren = (
        prop::collection::vec(word.clone(), 1..14),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(words, capital, stop)| {
            let mut inner = words.join(" ");
            if capital {
                let mut c = inner.chars();
                inner = c
                    .next()
                    .map_or(String::new(), |f| f.to_uppercase().chain(c).collect());
            }
            if stop {
                inner.push('.');
            }
            format!("({inner})")
        });
    let part = prop_oneof![
        3 => prop::collection::vec(word, 1..6).prop_map(|w| w.join(" ")),
        2 => paren,
        1 => Just(". ".to_owned()),
        1 => Just("? ".to_owned()),
    ];
    let turn = (
        prop::sample::select(vec!["HOST", "GUEST", "Ann"]),
        prop::collection::vec(part, 1..8),
    )
        .prop_map(|(name, parts)| format!("{name}: {}.", parts.join(" ")));
    prop::collection::vec(turn, 1..6).prop_map(|turns| turns.join("\n"))
}

/// Every parenthesis of more than six words that is spoken has a notice on a line of its turn:
/// a guess that a long parenthesis is speech is never silent.
fn long_spoken_parentheses_are_noticed(e: &Episode) -> Result<(), String> {
    for line in &e.lines {
        let spoken = e.spoken_text(line);
        let mut depth = 0usize;
        let mut start = 0;
        for (i, c) in spoken.char_indices() {
            match c {
                '(' => {
                    if depth == 0 {
                        start = i;
                    }
                    depth += 1;
                }
                ')' if depth > 0 => {
                    depth -= 1;
                    let words = spoken[start + 1..i].split_whitespace().count();
                    let noticed = e.warnings.iter().any(|w| {
                        line.source_lines.contains(&w.position.line)
                            && w.message.contains("is read aloud")
                    });
                    if depth == 0 && words > 6 && !noticed {
                        return Err(format!(
                            "`{}` at line {} is spoken with no notice",
                            &spoken[start..=i],
                            line.position.line
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

proptest! {
    // PROPTEST_CASES=100000 for a long run.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(512)
    ))]

    #[test]
    fn any_string_parses_or_errs_within_the_input(text in any::<String>()) {
        let r = parse(&text, ParseOptions::default());
        prop_assert!(positions_within(&text, &r).is_ok(), "{:?}", positions_within(&text, &r));
        if let Ok(e) = &r {
            let accounted = every_line_accounted(&text, e);
            prop_assert!(accounted.is_ok(), "{:?}", accounted);
        }
    }

    #[test]
    fn scriptish_text_in_every_format(text in scriptish(), format in prop::sample::select(ScriptFormat::ALL.to_vec())) {
        for options in [ParseOptions::default(), ParseOptions { format: Some(format), keep_stage_directions: true, ..ParseOptions::default() }] {
            let r = parse(&text, options);
            prop_assert!(positions_within(&text, &r).is_ok(), "{:?}", positions_within(&text, &r));
            if let Ok(e) = &r {
                let _ = e.check_report();
                prop_assert!(!e.lines.is_empty());
                let accounted = every_line_accounted(&text, e);
                prop_assert!(accounted.is_ok(), "{:?}", accounted);
            } else if let Err(e) = &r {
                let prefix = format!("ep.txt:{}:{}: ", e.line, e.column);
                prop_assert!(e.to_string().starts_with(&prefix));
            }
        }
    }

    #[test]
    fn no_long_parenthesis_is_spoken_silently(text in parenthesised_turns()) {
        if let Ok(e) = parse(&text, ParseOptions::default()) {
            let noticed = long_spoken_parentheses_are_noticed(&e);
            prop_assert!(noticed.is_ok(), "{:?}\n{text}", noticed);
        }
    }

    #[test]
    fn any_bytes_decode_or_err(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        match Episode::parse_bytes("b", &bytes, &ParseOptions::default()) {
            Ok(_) => {}
            Err(e) => {
                let newlines = bytes.iter().filter(|&&b| b == b'\n' || b == b'\r').count();
                prop_assert!(e.line >= 1 && e.line <= newlines + 1 && e.column >= 1);
            }
        }
    }
}
