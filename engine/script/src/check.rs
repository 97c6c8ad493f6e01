//! The report `banter script check` prints: what will be said, by whom, in which voice.
//!
//! Writers run the check before a long render, so the report shows exactly the text that will be
//! spoken (stage directions removed unless kept, directives gone, before number and abbreviation
//! normalisation) with the line it came from, and every warning. Shape:
//!
//! ```json
//! {"format": "name", "cast": {"Alice": "af_heart"},
//!  "lines": [{"speaker": "Alice", "text": "Hi.", "source_line": 3}],
//!  "warnings": [{"line": 1, "message": "..."}],
//!  "skipped": [{"source_line": 1, "kind": "narration", "text": "..."}],
//!  "sounds": [{"source_line": 2, "column": 1, "kind": "bed", "file": "theme.mp3", "alone": true,
//!              "volume_db": -15.0, "fade_secs": 2.0, "duck_db": 12.0}]}
//! ```
//!
//! `sounds` lists every cue with the options it will play with (defaults filled in); a
//! `[bed: off]` has `kind` `bed_off` and no file.

use serde_json::{json, Map, Value};

use super::Episode;

pub(crate) fn report(episode: &Episode) -> Value {
    let cast: Map<String, Value> = episode
        .cast
        .members
        .iter()
        .map(|m| (m.name.clone(), Value::String(m.voice.clone())))
        .collect();
    let lines: Vec<Value> = episode
        .lines
        .iter()
        .map(|l| {
            json!({
                "speaker": l.speaker,
                "text": episode.spoken_text(l),
                "source_line": l.position.line,
            })
        })
        .collect();
    let warnings: Vec<Value> = episode
        .warnings
        .iter()
        .map(|w| json!({"line": w.position.line, "message": w.message}))
        .collect();
    let skipped: Vec<Value> = episode
        .skipped
        .iter()
        .map(|s| json!({"source_line": s.position.line, "kind": s.kind.as_str(), "text": s.text}))
        .collect();
    let sounds: Vec<Value> = episode
        .sounds()
        .map(|(_, cue)| {
            let mut v = serde_json::to_value(&cue.action).unwrap_or(Value::Null);
            if let Value::Object(o) = &mut v {
                o.insert("source_line".into(), cue.position.line.into());
                o.insert("column".into(), cue.position.column.into());
                o.insert("alone".into(), cue.alone.into());
            }
            v
        })
        .collect();
    json!({
        "format": episode.format.as_str(),
        "cast": cast,
        "lines": lines,
        "warnings": warnings,
        "skipped": skipped,
        "sounds": sounds,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{Episode, ParseOptions};

    #[test]
    fn report_has_exactly_the_documented_shape() {
        let e = Episode::parse(
            "ep.txt",
            "# cast\nAlice: af_bella:0.7+af_sky:0.3 @1.1\n\nnotes\nAlice: Hello (waves) there [pause:1s] friend.\nBob: [rate:1.2] Hi [Kokoro](/kˈOkəɹO/)!",
            &ParseOptions::default(),
        )
        .unwrap();
        assert_eq!(
            e.check_report(),
            json!({
                "format": "name",
                "cast": {"Alice": "af_bella:0.7+af_sky:0.3", "Bob": "am_michael"},
                "lines": [
                    {"speaker": "Alice", "text": "Hello there friend.", "source_line": 5},
                    {"speaker": "Bob", "text": "Hi Kokoro!", "source_line": 6},
                ],
                "warnings": [{"line": 4, "message": "this text has no speaker, so it is not spoken; start the line with a name and a colon, such as `Alice: ...`"}],
                "skipped": [
                    {"source_line": 1, "kind": "metadata", "text": "# cast"},
                    {"source_line": 2, "kind": "metadata", "text": "Alice: af_bella:0.7+af_sky:0.3 @1.1"},
                    {"source_line": 4, "kind": "narration", "text": "notes"},
                ],
                "sounds": [],
            })
        );
    }
}
