//! Words in a writing system the speaker's voice cannot read.
//!
//! An English voice handed Arabic or Hebrew words (a name in its own script, a quoted phrase)
//! makes espeak spell out letter names or mumble. The rest of the line is fine, so the line is
//! spoken without those words and the writer is told which words and where; a line with nothing
//! else in it is kept as written, with the same warning, rather than dropped.

use super::cast::Cast;
use super::model::{Line, Piece, Position, Warning};

/// Kokoro's languages written in the Latin alphabet, by the first letter of a stock voice's name
/// (`af_heart` → `a`): American and British English, Spanish, French, Italian, Portuguese.
const LATIN_LANGUAGES: [char; 6] = ['a', 'b', 'e', 'f', 'i', 'p'];

/// The writing system of a letter a Latin-alphabet voice cannot read, if it is one.
pub(crate) fn foreign_script(c: char) -> Option<&'static str> {
    if !c.is_alphabetic() {
        return None;
    }
    Some(match u32::from(c) {
        0..=0x02AF | 0x1E00..=0x1EFF | 0xFF21..=0xFF5A | 0x2C60..=0x2C7F | 0xA720..=0xA7FF => {
            return None
        }
        // Greek letters in English text are symbols (α, μs, Ω) the normaliser reads.
        0x0370..=0x03FF | 0x1F00..=0x1FFF => return None,
        0x0400..=0x052F => "Cyrillic",
        0x0590..=0x05FF | 0xFB1D..=0xFB4F => "Hebrew",
        0x0600..=0x06FF | 0x0750..=0x077F | 0x08A0..=0x08FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF => {
            "Arabic"
        }
        0x0900..=0x0DFF => "Indic",
        0x0E00..=0x0E7F => "Thai",
        0x3040..=0x30FF => "Japanese",
        0x3400..=0x9FFF | 0xF900..=0xFAFF => "Chinese",
        0xAC00..=0xD7AF | 0x1100..=0x11FF => "Korean",
        _ => "non-Latin",
    })
}

/// Warns, once for the file, of lines that say nothing but symbols or emoji (`Sam: 👍`, a
/// chat's reaction): no voice reads them, so they are silent, and the writer should know.
pub(crate) fn warn_wordless(lines: &[Line], warnings: &mut Vec<Warning>) {
    let mut silent = Vec::new();
    for line in lines {
        let mut written = String::new();
        for piece in &line.pieces {
            match piece {
                Piece::Text { text } => written.push_str(text),
                Piece::Phonemes { .. } | Piece::Respelled { .. } => written.push('a'),
                _ => {}
            }
        }
        let written = written.trim();
        if !written.is_empty() && !written.chars().any(char::is_alphanumeric) {
            silent.push((line.position, written.to_owned()));
        }
    }
    let Some((first, _)) = silent.first() else {
        return;
    };

    let shown: Vec<String> = silent
        .iter()
        .take(3)
        .map(|(_, t)| format!("`{t}`"))
        .collect();
    warnings.push(Warning {
        position: *first,
        message: format!(
            "line(s) {} say only symbols or emoji ({}), which no voice reads, so they are silent; write the words (`thumbs up`) to hear them",
            line_list(silent.iter().map(|(p, _)| *p)),
            shown.join(", ")
        ),
    });
}

/// The first letter of the voice's language (`af_bella:0.7+…` → `a`).
pub(crate) fn language_of(voice: &str) -> Option<char> {
    let first = voice.split(['+', ':', ' ', '@']).next()?;
    let (prefix, _) = first.split_once('_')?;
    (prefix.len() == 2).then(|| prefix.chars().next()).flatten()
}

/// Removes words a line's voice cannot read from its text pieces, warning once per line.
pub(crate) fn drop_unsayable(lines: &mut [Line], cast: &Cast, warnings: &mut Vec<Warning>) {
    let mut unreadable: Vec<(Position, &str)> = Vec::new();
    for line in lines {
        let Some(language) = cast.get(&line.speaker).and_then(|m| language_of(&m.voice)) else {
            continue;
        };
        let foreign = |p: &Piece| matches!(p, Piece::Text { text } if text.chars().any(|c| foreign_script(c).is_some()));
        if !LATIN_LANGUAGES.contains(&language) || !line.pieces.iter().any(foreign) {
            continue;
        }
        let mut dropped: Vec<String> = Vec::new();
        let mut script = "";
        let mut kept = line.pieces.clone();
        for piece in &mut kept {
            if let Piece::Text { text } = piece {
                let mut out = String::with_capacity(text.len());
                for word in text.split_inclusive(char::is_whitespace) {
                    if let Some(s) = word.chars().find_map(foreign_script) {
                        script = s;
                        dropped.push(word.trim().to_owned());
                        // `it's שלום. It means…`: the sentence still ends where it did
                        let tail: String = word
                            .trim_end()
                            .chars()
                            .rev()
                            .take_while(|c| ".!?…;:".contains(*c))
                            .collect();
                        let ended = out
                            .trim_end()
                            .ends_with(['.', '!', '?', '…', ';', ':', ',']);
                        if !tail.is_empty() && !ended && !out.trim().is_empty() {
                            out.truncate(out.trim_end().len());
                            out.extend(tail.chars().rev());
                        }
                        if word.ends_with(char::is_whitespace) && !out.ends_with(' ') {
                            out.push(' ');
                        }
                    } else {
                        out.push_str(word);
                    }
                }
                *text = out;
            }
        }
        if dropped.is_empty() {
            continue;
        }
        let speaks_anything = kept.iter().any(|p| match p {
            Piece::Text { text } => text.chars().any(char::is_alphanumeric),
            Piece::Phonemes { .. } => true,
            _ => false,
        });
        let voice = cast.get(&line.speaker).map_or("", |m| m.voice.as_str());
        let words = dropped.join(" ");
        if speaks_anything {
            line.pieces = kept;
            warnings.push(Warning {
                position: line.position,
                message: format!("`{words}` is {script} text the voice `{voice}` cannot read; the rest of the line is spoken without it"),
            });
        } else {
            unreadable.push((line.position, script));
            if unreadable.len() <= SHOWN_ONE_BY_ONE {
                warnings.push(Warning {
                    position: line.position,
                    message: format!("this line is {script} text the voice `{voice}` cannot read; cast a voice that speaks it, or it will not sound right"),
                });
            }
        }
    }
    // A whole script in another alphabet: the first lines are told one by one, the rest at once.
    if let Some((first, script)) = unreadable.get(SHOWN_ONE_BY_ONE) {
        let rest = &unreadable[SHOWN_ONE_BY_ONE..];
        warnings.push(Warning {
            position: *first,
            message: format!(
                "{} more line(s) ({}) are, like this one, {script} text or other writing their voices cannot read; cast voices that speak it, or they will not sound right",
                rest.len(),
                line_list(rest.iter().map(|(p, _)| *p)),
            ),
        });
    }
}

/// Lines that get a warning each (wholly in an alphabet the voice cannot read, or in another
/// language); past these, one warning lists the rest.
pub(crate) const SHOWN_ONE_BY_ONE: usize = 3;

/// The line numbers of `positions` for a warning that lists them: the first twelve, then `…`.
pub(crate) fn line_list(positions: impl ExactSizeIterator<Item = Position>) -> String {
    const SHOWN: usize = 12;
    let more = positions.len() > SHOWN;
    let mut list: Vec<String> = positions.take(SHOWN).map(|p| p.line.to_string()).collect();
    if more {
        list.push("…".to_owned());
    }
    list.join(", ")
}

#[cfg(test)]
mod tests {
    use super::super::{Episode, ParseOptions};

    #[test]
    fn foreign_words_are_left_out_with_a_warning() {
        let e = Episode::parse(
            "t.txt",
            "Ana: We said مرحبا and שלום to everyone. For me it's שלום. Then…\nBob: Café crème, naïve, α-particles.\nAna: مرحبا",
            &ParseOptions::default(),
        )
        .unwrap();
        assert_eq!(
            e.spoken_text(&e.lines[0]),
            "We said and to everyone. For me it's. Then…"
        );
        assert_eq!(
            e.spoken_text(&e.lines[1]),
            "Café crème, naïve, α-particles."
        );
        assert_eq!(e.spoken_text(&e.lines[2]), "مرحبا");
        let lines: Vec<usize> = e.warnings.iter().map(|w| w.position.line).collect();
        assert_eq!(lines, [1, 3], "{:?}", e.warnings);
        assert!(
            e.warnings[0].message.contains("مرحبا שלום"),
            "{:?}",
            e.warnings
        );
    }

    #[test]
    fn a_script_wholly_in_another_alphabet_is_told_three_lines_then_once() {
        let text = "Ana: Доброе утро!\nBob: Как дела?\n".repeat(4);
        let e = Episode::parse("t.txt", &text, &ParseOptions::default()).unwrap();
        let told: Vec<(usize, bool)> = e
            .warnings
            .iter()
            .filter(|w| w.message.contains("Cyrillic"))
            .map(|w| {
                (
                    w.position.line,
                    w.message.starts_with("5 more line(s) (4, 5, 6, 7, 8)"),
                )
            })
            .collect();
        assert_eq!(
            told,
            [(1, false), (2, false), (3, false), (4, true)],
            "{:?}",
            e.warnings
        );
        // Nothing is dropped: the lines are kept as written.
        assert_eq!(e.spoken_text(&e.lines[7]), "Как дела?");
    }
}
