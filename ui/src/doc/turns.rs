//! Editing one turn of the script: its source lines (from its first line to the next turn's),
//! replacing them, and the `[rate:…]` directive it may start with. The lines view's editor and
//! a line's context menu change the script only through these, so an edited turn keeps the
//! blank lines after it and the file keeps its final newline.

use super::Document;

/// Why a turn's speed could not be set from its menu.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RateError {
    /// `line` counts from 0; the message counts from 1, as the author does.
    #[error("line {} is not in the script", line + 1)]
    NoSuchLine { line: usize },
    #[error(
        "per-line speed can be set from this menu only in `Speaker: text` scripts; \
         add a [rate:1.2] directive to the line by hand"
    )]
    NotSpeakerText,
}

impl Document {
    /// The first source line (1-based) of every turn, or `None` when the script does not parse.
    fn turn_starts(&self) -> Option<Vec<usize>> {
        let ep = self.parsed.as_ref().ok()?;
        Some(ep.lines.iter().map(|l| l.position.line).collect())
    }

    /// The source text of turn `i`, if the script parses and has it.
    #[must_use]
    pub fn turn_source(&self, i: usize) -> Option<String> {
        let starts = self.turn_starts()?;
        if i >= starts.len() {
            return None;
        }
        let source: Vec<&str> = self.text.lines().collect();
        Some(source_of(&source, &starts, i))
    }

    /// Replaces turn `i`'s source lines by `text` and reparses (nothing when the script does not
    /// parse: there are no turns then).
    pub fn replace_turn(&mut self, i: usize, text: &str) {
        let Some(starts) = self.turn_starts() else {
            return;
        };
        let source: Vec<&str> = self.text.lines().collect();
        let range = source_range(source.len(), &starts, i);
        let kept_blank = source[range.clone()]
            .iter()
            .rev()
            .take_while(|l| l.trim().is_empty())
            .count();
        let mut out: Vec<String> = source[..range.start]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        out.push(text.to_owned());
        out.extend(std::iter::repeat_n(String::new(), kept_blank));
        out.extend(source[range.end..].iter().map(|s| (*s).to_owned()));
        let mut joined = out.join("\n");
        if self.text.ends_with('\n') {
            joined.push('\n');
        }
        self.text = joined;
        self.edited();
    }

    /// The `[rate:…]` turn `i` starts with, if any.
    #[must_use]
    pub fn turn_rate(&self, i: usize) -> Option<f32> {
        let source = self.turn_source(i)?;
        let (_, rest) = split_label(&source)?;
        leading_rate(rest).map(|(rate, _)| rate)
    }

    /// Rewrites turn `i` to start with `[rate:speed]` (none for 1.0), replacing any already
    /// there.
    ///
    /// # Errors
    /// For the status bar: the turn is not in the script, or it is not a
    /// `Speaker: text` turn this can rewrite.
    pub fn set_turn_rate(&mut self, i: usize, speed: f32) -> Result<(), RateError> {
        let source = self
            .turn_source(i)
            .ok_or(RateError::NoSuchLine { line: i })?;
        let Some((label, rest)) = split_label(&source) else {
            return Err(RateError::NotSpeakerText);
        };
        let text = leading_rate(rest)
            .map_or(rest, |(_, after)| after)
            .trim_start();
        let new = if (speed - 1.0).abs() < f32::EPSILON {
            format!("{label} {text}")
        } else {
            format!("{label} [rate:{speed}] {text}")
        };
        self.replace_turn(i, &new);
        Ok(())
    }
}

/// The source lines of turn `i`: from its first line to the next turn's, blank lines trimmed.
fn source_range(source_len: usize, starts: &[usize], i: usize) -> std::ops::Range<usize> {
    let from = starts.get(i).copied().unwrap_or(1).saturating_sub(1);
    let to = starts
        .get(i + 1)
        .map_or(source_len, |n| n.saturating_sub(1))
        .max(from + 1)
        .min(source_len);
    from..to.max(from)
}

fn source_of<S: AsRef<str>>(source: &[S], starts: &[usize], i: usize) -> String {
    let range = source_range(source.len(), starts, i);
    source[range]
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<&str>>()
        .join("\n")
        .trim_end()
        .to_owned()
}

/// `("Speaker:", rest)` for a `Speaker: text` turn.
fn split_label(source: &str) -> Option<(&str, &str)> {
    let colon = source.find(':')?;
    let (label, rest) = source.split_at(colon + 1);
    (!label.contains('[') && !label.trim_start().starts_with('{')).then_some((label, rest))
}

/// A `[rate:X]` or `[speed:X]` directive at the start of `rest`: its rate and what follows it.
fn leading_rate(rest: &str) -> Option<(f32, &str)> {
    let t = rest.trim_start();
    let inner_end = t.find(']')?;
    let inner = t.strip_prefix('[')?.get(..inner_end - 1)?;
    let (key, value) = inner.split_once(':')?;
    if !matches!(key.trim(), "rate" | "speed") {
        return None;
    }
    let rate = value.trim().trim_end_matches(['x', '×']).parse().ok()?;
    Some((rate, &t[inner_end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_strips_a_leading_rate() {
        assert_eq!(leading_rate(" [rate:1.2] Hello"), Some((1.2, " Hello")));
        assert_eq!(leading_rate("[speed:0.8x] Hi"), Some((0.8, " Hi")));
        assert_eq!(leading_rate(" Hello [rate:1.2]"), None);
        assert_eq!(leading_rate(" [pause:1s] Hello"), None);
        assert_eq!(split_label("Ann: Hi"), Some(("Ann:", " Hi")));
    }

    #[test]
    fn a_turn_is_replaced_keeping_blank_lines_and_the_final_newline() {
        let mut doc = Document::new("t", "Ann: One.\n\nBen: Two.\n".into(), None);
        assert_eq!(doc.turn_source(0).as_deref(), Some("Ann: One."));
        doc.replace_turn(0, "Ann: Uno.");
        assert_eq!(doc.text, "Ann: Uno.\n\nBen: Two.\n");
        assert_eq!(doc.revision, 1);
        doc.set_turn_rate(1, 1.25).expect("a Speaker: text turn");
        assert_eq!(doc.text, "Ann: Uno.\n\nBen: [rate:1.25] Two.\n");
        assert_eq!(doc.turn_rate(1), Some(1.25));
        doc.set_turn_rate(1, 1.0).expect("a Speaker: text turn");
        assert_eq!(doc.text, "Ann: Uno.\n\nBen: Two.\n");
        assert!(doc.set_turn_rate(5, 1.1).is_err());
    }
}
