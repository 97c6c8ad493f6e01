//! Shared checks for the fuzz targets: the script parsers here, the normaliser in [`text`].
//!
//! The parsers are the `script` crate (`engine/script`), which depends only on serde,
//! serde_json, thiserror and unicode-normalization, so a fuzz build does not compile candle,
//! gemm and espeak-ng with sanitizers. Each target feeds bytes to a parser and checks what must always hold: no
//! panic, every reported position inside the input, errors printed as `FILE:LINE:COLUMN: ...`,
//! and a check report that serialises.

pub use script;

pub mod text;

use script::{Episode, ParseOptions, Position, ScriptError, ScriptFormat, VoiceSource};

/// Parses `data` (decoded as a script file) with `format`, or auto-detection if `None`, with
/// stage directions dropped and then kept, and checks the invariants.
pub fn check_bytes(data: &[u8], format: Option<ScriptFormat>) {
    let text = match script::decode_script_bytes("fuzz", data) {
        Ok(decoded) => decoded.text,
        Err(e) => {
            check_error_prefix(&e);
            return;
        }
    };
    for keep in [false, true] {
        let options = ParseOptions {
            format,
            keep_stage_directions: keep,
            ..ParseOptions::default()
        };
        let result = Episode::parse("fuzz", &text, &options);
        check_result(&text, &result);
    }
}

fn check_error_prefix(e: &ScriptError) {
    let prefix = format!("fuzz:{}:{}: ", e.line, e.column);
    assert!(e.to_string().starts_with(&prefix), "{e}");
    assert!(e.line >= 1 && e.column >= 1, "{e}");
}

fn check_result(text: &str, result: &Result<Episode, ScriptError>) {
    let lines = split_lines(text);
    let within = |p: Position, what: &str| {
        assert!(
            p.line >= 1
                && p.line <= lines.len()
                && p.column >= 1
                && p.column <= lines[p.line - 1].chars().count() + 1,
            "{what} at {p} is outside the input ({} lines)",
            lines.len()
        );
    };
    match result {
        Ok(e) => {
            assert!(!e.lines.is_empty());
            for l in &e.lines {
                within(l.position, "line");
                assert!(e.cast.get(&l.speaker).is_some(), "{} has no voice", l.speaker);
            }
            for c in &e.chapters {
                within(c.position, "chapter");
                assert!(c.first_line <= e.lines.len());
            }
            for d in &e.directions {
                within(d.position, "direction");
            }
            for w in &e.warnings {
                within(w.position, &w.message);
            }
            for m in &e.cast.members {
                if let VoiceSource::Cast { position } = m.source {
                    within(position, "cast entry");
                }
            }
            // Every non-blank line is part of a turn or skipped with a kind, never both.
            let spoken: std::collections::HashSet<usize> = e
                .lines
                .iter()
                .flat_map(|l| l.source_lines.iter().copied())
                .collect();
            let mut skipped = std::collections::HashSet::new();
            for s in &e.skipped {
                within(s.position, "skipped line");
                assert!(skipped.insert(s.position.line), "line {} skipped twice", s.position.line);
                assert!(!spoken.contains(&s.position.line), "line {} spoken and skipped", s.position.line);
            }
            for (i, line) in lines.iter().enumerate() {
                let blank = line.chars().all(|c| {
                    c.is_whitespace() || c.is_control() || matches!(c, '\u{feff}' | '\u{fffe}')
                });
                let counted = spoken.contains(&(i + 1)) || skipped.contains(&(i + 1));
                assert!(blank || counted, "line {} is not accounted for", i + 1);
            }
            let report = e.check_report();
            assert_eq!(report["lines"].as_array().map(Vec::len), Some(e.lines.len()));
            let _ = serde_json::to_string(e);
        }
        Err(e) => {
            check_error_prefix(e);
            within(Position::new(e.line, e.column), &e.to_string());
        }
    }
}

/// Lines as the parsers count them: split on `\n`, `\r\n` and lone `\r`.
fn split_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        match rest.find(['\n', '\r']) {
            Some(i) => {
                out.push(&rest[..i]);
                let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[i + skip..];
                if rest.is_empty() {
                    break;
                }
            }
            None => {
                out.push(rest);
                break;
            }
        }
    }
    out
}
