//! phonemizer's punctuation preservation, reproduced exactly (quirks included).
//!
//! espeak drops punctuation, so phonemizer (`preserve_punctuation=True`, as kokoro-onnx calls it)
//! cuts the text at runs of marks `;:,.!?¡¿—…"«»“”(){}[]` (with the whitespace around them),
//! phonemizes the pieces and glues the marks back after them. Kokoro was trained on the result,
//! so Banter must produce the same strings, including two quirks of phonemizer 3.4:
//!
//! - `,` and `.` between two ASCII digits are not marks ("3.5"), but the text is cut at the
//!   *first occurrence* of each mark's text, so "costs 3.5 dollars." is cut at the decimal point
//!   and the final "." is spoken to espeak instead of being restored;
//! - restoration pairs marks with pieces by a counter that mixes line numbers and piece numbers.
//!
//! [`preserve`] and [`restore`] mirror `Punctuation.preserve` / `Punctuation.restore` with the
//! default separator (word `' '`, no phone separator) and `strip=False`.

use super::pytext::is_space;

/// Where a mark run sat in its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Position {
    /// At the beginning of the line.
    Begin,
    /// Inside the line.
    Inside,
    /// At the end of the line.
    End,
    /// The whole line.
    Alone,
}

/// One run of marks with its surrounding whitespace, as phonemizer's `_MarkIndex`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Mark {
    /// Line number (among the non-empty lines).
    pub line: usize,
    /// The matched text, whitespace included.
    pub text: String,
    pub position: Position,
}

/// Marks other than the decimal separators.
pub(crate) fn is_plain_mark(c: char) -> bool {
    matches!(
        c,
        ';' | ':'
            | '!'
            | '?'
            | '¡'
            | '¿'
            | '—'
            | '…'
            | '"'
            | '«'
            | '»'
            | '“'
            | '”'
            | '('
            | ')'
            | '{'
            | '}'
            | '['
            | ']'
    )
}

/// Whether `chars[i]` is a mark: `,` and `.` count unless both neighbours are ASCII digits
/// (phonemizer's `(?<![0-9])[,.]|[,.](?![0-9])`).
fn is_mark_at(chars: &[char], i: usize) -> bool {
    let c = chars[i];
    if is_plain_mark(c) {
        return true;
    }
    if c != ',' && c != '.' {
        return false;
    }
    let digit_before = i > 0 && chars[i - 1].is_ascii_digit();
    let digit_after = chars.get(i + 1).is_some_and(char::is_ascii_digit);
    !(digit_before && digit_after)
}

/// Character ranges `[start, end)` of phonemizer's `(\s*(?:marks)+\s*)+` matches, as
/// `re.finditer` finds them: a match starts where optional whitespace leads to a mark and takes
/// the whole run of whitespace and marks from there.
fn mark_runs(chars: &[char]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let mut j = i;
        while j < chars.len() && is_space(chars[j]) {
            j += 1;
        }
        if j < chars.len() && is_mark_at(chars, j) {
            let mut end = j;
            while end < chars.len() && (is_space(chars[end]) || is_mark_at(chars, end)) {
                end += 1;
            }
            runs.push((i, end));
            i = end;
        } else {
            i += 1;
        }
    }
    runs
}

/// phonemizer's `_preserve_line`: the pieces of one line (empty ones included) and its marks.
fn preserve_line(line: &str, num: usize) -> (Vec<String>, Vec<Mark>) {
    let chars: Vec<char> = line.chars().collect();
    let runs = mark_runs(&chars);
    if runs.is_empty() {
        return (vec![line.to_owned()], Vec::new());
    }
    let texts: Vec<String> = runs
        .iter()
        .map(|&(s, e)| chars[s..e].iter().collect())
        .collect();
    if texts.len() == 1 && texts[0] == line {
        return (
            Vec::new(),
            vec![Mark {
                line: num,
                text: line.to_owned(),
                position: Position::Alone,
            }],
        );
    }
    let last = texts.len() - 1;
    let marks: Vec<Mark> = texts
        .into_iter()
        .enumerate()
        .map(|(k, text)| {
            // As phonemizer: decided on the text, not on the match position.
            let position = if k == 0 && line.starts_with(&text) {
                Position::Begin
            } else if k == last && line.ends_with(&text) {
                Position::End
            } else {
                Position::Inside
            };
            Mark {
                line: num,
                text,
                position,
            }
        })
        .collect();
    let mut pieces = Vec::with_capacity(marks.len() + 1);
    let mut rest = line;
    for mark in &marks {
        // `line.split(mark)`: cut at the first occurrence of the mark's text.
        if let Some(at) = rest.find(&mark.text) {
            pieces.push(rest[..at].to_owned());
            rest = &rest[at + mark.text.len()..];
        } else {
            pieces.push(rest.to_owned());
            rest = "";
        }
    }
    pieces.push(rest.to_owned());
    (pieces, marks)
}

/// phonemizer's `Punctuation.preserve` over lines: the non-empty pieces to phonemize, in order,
/// and the marks to put back.
pub(super) fn preserve(lines: &[&str]) -> (Vec<String>, Vec<Mark>) {
    let mut pieces = Vec::new();
    let mut marks = Vec::new();
    for (num, line) in lines.iter().enumerate() {
        let (p, m) = preserve_line(line, num);
        pieces.extend(p);
        marks.extend(m);
    }
    pieces.retain(|p| !p.is_empty());
    (pieces, marks)
}

/// phonemizer's `Punctuation.restore` with word separator `' '` and `strip=False`: puts the
/// marks back into the phonemized pieces. Returns the output lines.
pub(super) fn restore(pieces: Vec<String>, marks: Vec<Mark>) -> Vec<String> {
    let mut text: std::collections::VecDeque<String> = pieces.into();
    let mut marks: std::collections::VecDeque<Mark> = marks.into();
    let mut out = Vec::new();
    let mut pos = 0;
    let with_sep = |s: &str| if s.ends_with(' ') { "" } else { " " };
    loop {
        let Some(current) = marks.front() else {
            for mut line in text.drain(..) {
                if !line.ends_with(' ') {
                    line.push(' ');
                }
                out.push(line);
            }
            break;
        };
        if text.is_empty() {
            out.push(marks.drain(..).map(|m| m.text).collect());
            break;
        }
        if current.line != pos {
            out.extend(text.pop_front());
            pos += 1;
            continue;
        }
        let Some(mark) = marks.pop_front() else { break };
        let Some(first) = text.front_mut() else { break };
        if first.ends_with(' ') {
            first.pop();
        }
        match mark.position {
            Position::Begin => first.insert_str(0, &mark.text),
            Position::End => {
                let sep = with_sep(&mark.text);
                let line = format!("{first}{}{sep}", mark.text);
                text.pop_front();
                out.push(line);
                pos += 1;
            }
            Position::Alone => {
                out.push(format!("{}{}", mark.text, with_sep(&mark.text)));
                pos += 1;
            }
            Position::Inside => {
                if text.len() == 1 {
                    if let Some(only) = text.front_mut() {
                        only.push_str(&mark.text);
                    }
                } else if let Some(head) = text.pop_front() {
                    if let Some(next) = text.front_mut() {
                        next.insert_str(0, &mark.text);
                        next.insert_str(0, &head);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(marks: &[Mark]) -> Vec<(&str, Position)> {
        marks
            .iter()
            .map(|m| (m.text.as_str(), m.position))
            .collect()
    }

    #[test]
    fn preserve_splits_at_mark_runs() {
        let (pieces, marks) = preserve(&["hello, my world!"]);
        assert_eq!(pieces, ["hello", "my world"]);
        assert_eq!(
            texts(&marks),
            [(", ", Position::Inside), ("!", Position::End)]
        );
    }

    #[test]
    fn decimal_points_are_not_marks_but_still_cut() {
        let chars: Vec<char> = "costs 3.5 dollars.".chars().collect();
        assert_eq!(mark_runs(&chars), [(17, 18)]);
        // The cut happens at the first "." anyway, exactly like phonemizer.
        let (pieces, marks) = preserve(&["costs 3.5 dollars."]);
        assert_eq!(pieces, ["costs 3", "5 dollars."]);
        assert_eq!(texts(&marks), [(".", Position::End)]);
    }

    #[test]
    fn whole_line_of_marks() {
        let (pieces, marks) = preserve(&["...", "ok"]);
        assert_eq!(pieces, ["ok"]);
        assert_eq!(texts(&marks), [("...", Position::Alone)]);
        assert_eq!(restore(Vec::new(), marks), ["..."]);
    }

    #[test]
    fn restore_reattaches_marks() {
        let (_, marks) = preserve(&["¿hello, my world!"]);
        assert_eq!(texts(&marks)[0], ("¿", Position::Begin));
        let out = restore(vec!["hɛloʊ ".into(), "maɪ wɜːld ".into()], marks);
        assert_eq!(out, ["¿hɛloʊ, maɪ wɜːld! "]);
    }

    #[test]
    fn restore_without_marks_appends_separator() {
        assert_eq!(
            restore(vec!["a".into(), "b ".into()], Vec::new()),
            ["a ", "b "]
        );
    }
}
