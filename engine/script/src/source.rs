//! Turning raw bytes into clean lines of text with positions.
//!
//! Scripts come from editors on every platform: UTF-8 with or without a byte-order mark, UTF-16
//! from Windows tools, Word and `OpenDocument` documents from word processors, CRLF or lone-CR line ends, stray control characters pasted from PDFs.
//! This module settles all of that once, so the format parsers only ever see `&str` lines and
//! every position they report is a line and a character column in the file as the writer sees it.

use std::borrow::Cow;

use super::error::{ScriptError, ScriptErrorKind};
use super::model::{Position, Warning};

/// Scripts larger than this are refused rather than read: a podcast script is a few hundred KiB.
pub const MAX_SCRIPT_BYTES: usize = 16 * 1024 * 1024;

/// Decodes a script file's bytes: UTF-8 (an optional BOM is dropped), UTF-16 LE/BE with a BOM,
/// or a word processor's document (`.docx` or `.odt`: its body's paragraphs as lines, see
/// [`super::office`]; Rich Text, `.rtf`, see [`super::rtf`]); a Final Draft screenplay (`.fdx`) is
/// rewritten as the play it prints as ([`super::fdx`]); a web page is its shown text
/// ([`super::html`]); a file
/// named `.csv` is a spreadsheet's rows as tab-separated lines ([`super::csv`]).
///
/// `file` is the name used in error messages. A file that is not UTF-8 but reads as Windows
/// code page 1252 (what Excel's "CSV" and old Notepad's "ANSI" save on Western systems) is read
/// so, and [`Decoded::guessed`] says where; other invalid UTF-8 is an error naming the byte
/// offset and its line and column.
pub fn decode_script_bytes(file: &str, bytes: &[u8]) -> Result<Decoded, ScriptError> {
    let mut guessed = None;
    let text = decode_text(file, bytes, &mut guessed)?;
    Ok(Decoded { text, guessed })
}

/// A script file's text, and the guess made to read it, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub text: String,
    /// The file was not UTF-8 and was read as Windows-1252: where its first such byte is, to
    /// be said wherever the script is shown (a guess is never silent).
    pub guessed: Option<Warning>,
}

fn decode_text(
    file: &str,
    bytes: &[u8],
    guessed: &mut Option<Warning>,
) -> Result<String, ScriptError> {
    if bytes.len() > MAX_SCRIPT_BYTES {
        return Err(ScriptError::new(
            file,
            Position::START,
            ScriptErrorKind::TooLarge {
                size: bytes.len(),
                limit: MAX_SCRIPT_BYTES,
            },
        ));
    }
    if let Some(what) = super::foreign::refusal(bytes) {
        return Err(ScriptError::new(
            file,
            Position::START,
            ScriptErrorKind::Document { what },
        ));
    }
    if super::office::is_zip(bytes) {
        return super::office::document_text(bytes).map_err(|what| {
            ScriptError::new(file, Position::START, ScriptErrorKind::Document { what })
        });
    }
    if super::rtf::is_rtf(bytes) {
        return super::rtf::body_text(bytes).map_err(|what| {
            ScriptError::new(file, Position::START, ScriptErrorKind::Document { what })
        });
    }
    let text = if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        utf8(file, rest, 3)
    } else if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        utf16(file, rest, u16::from_le_bytes)
    } else if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        utf16(file, rest, u16::from_be_bytes)
    } else {
        utf8(file, bytes, 0).or_else(|e| {
            let text = windows_1252_text(bytes).ok_or(e)?;
            // The bytes before the first that is not UTF-8 are ASCII (a valid UTF-8 character
            // elsewhere rules the guess out), so they are the text's first bytes too.
            let at = std::str::from_utf8(bytes).map_or_else(|e| e.valid_up_to(), str::len);
            *guessed = Some(Warning {
                position: end_position(text.get(..at).unwrap_or_default()),
                message: "this file is not UTF-8; it was read as Windows-1252 (Western European, \
                          what Excel's CSV and Notepad's ANSI save), the first such character \
                          is here: check its accented letters and quotes, or save it as UTF-8"
                    .to_owned(),
            });
            Ok::<_, ScriptError>(text)
        })
    }?;
    if super::fdx::is_final_draft(&text) {
        return super::fdx::screenplay_text(&text).map_err(|what| {
            ScriptError::new(file, Position::START, ScriptErrorKind::Document { what })
        });
    }
    if super::html::is_html(&text) {
        return Ok(super::html::page_text(&text));
    }
    let csv = std::path::Path::new(file)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if csv {
        return super::csv::csv_text(&text).map_err(|what| {
            ScriptError::new(file, Position::START, ScriptErrorKind::Document { what })
        });
    }
    Ok(text)
}

fn utf8(file: &str, bytes: &[u8], skipped: usize) -> Result<String, ScriptError> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_owned()),
        Err(e) => {
            let good = e.valid_up_to();
            // The prefix up to `good` is valid UTF-8 by definition of `valid_up_to`.
            let prefix = std::str::from_utf8(&bytes[..good]).unwrap_or_default();
            Err(ScriptError::new(
                file,
                end_position(prefix),
                ScriptErrorKind::InvalidUtf8 {
                    offset: skipped + good,
                },
            ))
        }
    }
}

/// `bytes` read as Windows-1252, if that is a plausible reading: every byte is defined there,
/// and no run of four or more letters is made of bytes above 0x7F alone (Western text puts an
/// accented letter or a curly quote among ASCII letters; a Cyrillic or Greek code page's words
/// are whole runs of them, and are not guessed).
fn windows_1252_text(bytes: &[u8]) -> Option<String> {
    // A UTF-8 file with a stray byte is not guessed about: its other characters would turn
    // into mojibake.
    let utf8_elsewhere = String::from_utf8_lossy(bytes)
        .chars()
        .any(|c| !c.is_ascii() && c != char::REPLACEMENT_CHARACTER);
    if utf8_elsewhere {
        return None;
    }
    let mut run = 0usize;
    for &b in bytes {
        if matches!(b, 0x81 | 0x8D | 0x8F | 0x90 | 0x9D) {
            return None;
        }
        run = if b >= 0xC0 { run + 1 } else { 0 };
        if run >= 4 {
            return None;
        }
    }
    Some(bytes.iter().map(|&b| windows_1252(b)).collect())
}

/// A byte in Windows code page 1252 (Latin-1 but for 0x80–0x9F).
pub(crate) fn windows_1252(b: u8) -> char {
    const HIGH: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8D}', 'Ž',
        '\u{8F}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9D}',
        'ž', 'Ÿ',
    ];
    match b {
        0x80..=0x9F => HIGH[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

fn utf16(file: &str, bytes: &[u8], unit: fn([u8; 2]) -> u16) -> Result<String, ScriptError> {
    let units = bytes.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
    let mut out = String::with_capacity(bytes.len() / 2);
    let mut offset = 2;
    for decoded in char::decode_utf16(units) {
        match decoded {
            Ok(c) => {
                out.push(c);
                offset += 2 * c.len_utf16();
            }
            Err(_) => {
                return Err(ScriptError::new(
                    file,
                    end_position(&out),
                    ScriptErrorKind::InvalidUtf16 {
                        offset,
                        reason: "an unpaired surrogate".to_owned(),
                    },
                ));
            }
        }
    }
    if bytes.len() % 2 == 1 {
        return Err(ScriptError::new(
            file,
            end_position(&out),
            ScriptErrorKind::InvalidUtf16 {
                offset: bytes.len() + 1,
                reason: "the file ends in the middle of a character (odd number of bytes)"
                    .to_owned(),
            },
        ));
    }
    Ok(out)
}

/// The first `limit` bytes of `text` (fewer, to end on a character) after any byte-order mark
/// and leading white space: where a document's kind is told from its opening.
pub(crate) fn opening(text: &str, limit: usize) -> &str {
    let start = text.trim_start_matches(['\u{FEFF}', ' ', '\t', '\r', '\n']);
    let mut head = start.len().min(limit);
    while !start.is_char_boundary(head) {
        head -= 1;
    }
    &start[..head]
}

/// The position just after the end of `text`.
pub(crate) fn end_position(text: &str) -> Position {
    let mut pos = Position::START;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' || (c == '\r' && chars.peek() != Some(&'\n')) {
            pos.line += 1;
            pos.column = 1;
        } else if c != '\r' {
            pos.column += 1;
        }
    }
    pos
}

/// Refuses binary data and replaces other control characters (except tab) with spaces, which
/// keeps every column where it was. A leading UTF-8 BOM that survived decoding is blanked too.
pub(crate) fn sanitize<'a>(
    file: &str,
    text: &'a str,
    warnings: &mut Vec<Warning>,
) -> Result<Cow<'a, str>, ScriptError> {
    let is_bad = |c: char| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FEFF}' || c == '\u{FFFE}'
    };
    if !text.chars().any(is_bad) {
        return Ok(Cow::Borrowed(text));
    }
    let mut out = String::with_capacity(text.len());
    let mut pos = Position::START;
    let mut first: Option<Position> = None;
    let mut count = 0usize;
    let mut prev_cr = false;
    for c in text.chars() {
        if c == '\0' {
            return Err(ScriptError::new(
                file,
                pos,
                ScriptErrorKind::Binary {
                    evidence: "a NUL byte".to_owned(),
                },
            ));
        }
        if is_bad(c) {
            first.get_or_insert(pos);
            count += 1;
            out.push(' ');
        } else {
            out.push(c);
        }
        if c == '\n' {
            if !prev_cr {
                pos.line += 1;
            }
            pos.column = 1;
        } else if c == '\r' {
            pos.line += 1;
            pos.column = 1;
        } else {
            pos.column += 1;
        }
        prev_cr = c == '\r';
    }
    let total = text.chars().count();
    if let Some(first) = first {
        if count * 4 > total && count > 8 {
            return Err(ScriptError::new(
                file,
                first,
                ScriptErrorKind::Binary {
                    evidence: format!("{count} control characters in {total}"),
                },
            ));
        }
        warnings.push(Warning {
            position: first,
            message: format!(
                "{count} control character{} replaced by spaces (the first is here)",
                if count == 1 { "" } else { "s" }
            ),
        });
    }
    Ok(Cow::Owned(out))
}

/// One line of the file, without its line end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SourceLine<'a> {
    /// 1-based line number.
    pub number: usize,
    pub text: &'a str,
}

/// Splits on `\n`, `\r\n` and lone `\r`.
pub(crate) fn split_lines(text: &str) -> Vec<SourceLine<'_>> {
    let mut lines = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' | b'\r' => {
                lines.push(SourceLine {
                    number: lines.len() + 1,
                    text: &text[start..i],
                });
                if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < bytes.len() || lines.is_empty() {
        lines.push(SourceLine {
            number: lines.len() + 1,
            text: &text[start..],
        });
    }
    lines
}

/// The 1-based character column of byte offset `at` in `line` (`at` on a char boundary).
pub(crate) fn column_of(line: &str, at: usize) -> usize {
    line.get(..at).map_or(1, |p| p.chars().count() + 1)
}

/// Character columns of byte offsets in one line, for offsets visited left to right in linear
/// total time (a 50,000-character line with thousands of tags must not cost a square).
pub(crate) struct Columns<'a> {
    text: &'a str,
    byte: usize,
    column: usize,
}

impl<'a> Columns<'a> {
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            byte: 0,
            column: 1,
        }
    }

    /// The 1-based column of byte offset `at` (a char boundary).
    pub fn at(&mut self, at: usize) -> usize {
        if at < self.byte {
            self.byte = 0;
            self.column = 1;
        }
        self.column += self
            .text
            .get(self.byte..at)
            .map_or(0, |s| s.chars().count());
        self.byte = at;
        self.column
    }
}

/// A piece of a line's text with the position of its first character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextSpan<'a> {
    pub position: Position,
    pub text: Cow<'a, str>,
    /// The text is not a verbatim slice of the file (a decoded JSON string), so positions
    /// inside it are reported as the segment's own position.
    pub fixed: bool,
}

impl<'a> TextSpan<'a> {
    /// The bytes `from..to` of `line`, their column taken from `columns`.
    pub fn slice(line: SourceLine<'a>, columns: &mut Columns<'_>, from: usize, to: usize) -> Self {
        Self {
            position: Position::new(line.number, columns.at(from)),
            text: Cow::Borrowed(line.text.get(from..to).unwrap_or_default()),
            fixed: false,
        }
    }

    /// The part of `line` from byte `at` on.
    pub fn rest_of(line: SourceLine<'a>, at: usize) -> Self {
        Self {
            position: Position::new(line.number, column_of(line.text, at)),
            text: Cow::Borrowed(line.text.get(at..).unwrap_or_default()),
            fixed: false,
        }
    }

    /// Text decoded from elsewhere (a JSON string), reported at `position` as a whole.
    pub fn decoded(position: Position, text: String) -> Self {
        Self {
            position,
            text: Cow::Owned(text),
            fixed: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_bom_is_dropped() {
        assert_eq!(
            decode_script_bytes("f", b"\xEF\xBB\xBFA: hi").unwrap().text,
            "A: hi"
        );
    }

    #[test]
    fn utf16_both_orders_decode() {
        let text = "Zoë: 🎙 hi\r\n";
        let le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(decode_script_bytes("f", &le).unwrap().text, text);
        assert_eq!(decode_script_bytes("f", &be).unwrap().text, text);
    }

    #[test]
    fn utf16_odd_length_and_lone_surrogate_are_errors() {
        let e = decode_script_bytes("f", &[0xFF, 0xFE, b'A', 0, b'\n', 0, 7]).unwrap_err();
        assert!(
            matches!(e.kind, ScriptErrorKind::InvalidUtf16 { .. }),
            "{e}"
        );
        assert_eq!((e.line, e.column), (2, 1));
        let e = decode_script_bytes("f", &[0xFF, 0xFE, b'A', 0, 0x00, 0xD8, b'B', 0]).unwrap_err();
        assert!(e.to_string().contains("unpaired surrogate"), "{e}");
        assert_eq!((e.line, e.column, e.file.as_str()), (1, 2, "f"));
    }

    #[test]
    fn invalid_utf8_names_offset_line_and_column() {
        // 0x81 is no character in Windows-1252 either.
        let e = decode_script_bytes("ep.txt", b"A: hi\nB: h\x81llo").unwrap_err();
        assert_eq!(e.kind, ScriptErrorKind::InvalidUtf8 { offset: 10 });
        assert!(
            e.to_string()
                .starts_with("ep.txt:2:5: invalid UTF-8 at byte 10"),
            "{e}"
        );
        // A UTF-8 file with one stray byte is not read as Windows-1252 throughout.
        assert!(decode_script_bytes(
            "ep.txt",
            "Ann: café \u{2014} h"
                .as_bytes()
                .iter()
                .copied()
                .chain([0xE9])
                .collect::<Vec<u8>>()
                .as_slice()
        )
        .is_err());
        // A Cyrillic code page's words are whole runs of high bytes: not guessed.
        let cyrillic = b"A: \xcf\xf0\xe8\xe2\xe5\xf2";
        assert!(decode_script_bytes("ep.txt", cyrillic).is_err());
    }

    #[test]
    fn windows_1252_is_read_and_the_guess_said_where() {
        let csv = b"Alice,Caf\xe9 talk\nBob,\x93Na\xefve\x94 \x96 isn\x92t it?\n";
        let decoded = decode_script_bytes("ep.csv", csv).expect("read as 1252");
        assert_eq!(decoded.text, "Alice\tCafé talk\nBob\t“Naïve” – isn’t it?\n");
        let guess = decoded.guessed.expect("the guess is said");
        assert_eq!((guess.position.line, guess.position.column), (1, 10));
        assert!(guess.message.contains("Windows-1252"), "{}", guess.message);
        // UTF-8 is never guessed about.
        let utf8 = decode_script_bytes("ep.txt", "Ann: café".as_bytes()).expect("utf-8");
        assert_eq!(utf8.guessed, None);
    }

    #[test]
    fn too_large_is_refused_before_decoding() {
        let big = vec![b'a'; MAX_SCRIPT_BYTES + 1];
        let e = decode_script_bytes("big", &big).unwrap_err();
        assert!(matches!(e.kind, ScriptErrorKind::TooLarge { .. }));
    }

    #[test]
    fn lines_split_on_every_line_end() {
        let lines = split_lines("a\r\nb\rc\n\nd");
        let texts: Vec<_> = lines.iter().map(|l| (l.number, l.text)).collect();
        assert_eq!(texts, [(1, "a"), (2, "b"), (3, "c"), (4, ""), (5, "d")]);
        assert_eq!(split_lines("x\n").len(), 1);
        assert_eq!(split_lines("").len(), 1);
    }

    #[test]
    fn control_characters_become_spaces_with_one_warning() {
        let mut w = Vec::new();
        let out = sanitize("f", "A: a\u{7}b\r\nB: c\u{1b}d", &mut w).unwrap();
        assert_eq!(out, "A: a b\r\nB: c d");
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].position, Position::new(1, 5));
        let e = sanitize("f", "A: hi\nB: \0", &mut w).unwrap_err();
        assert_eq!((e.line, e.column), (2, 4));
        assert!(matches!(e.kind, ScriptErrorKind::Binary { .. }));
    }

    #[test]
    fn end_position_counts_characters_not_bytes() {
        assert_eq!(end_position("héllo"), Position::new(1, 6));
        assert_eq!(end_position("a\r\nbé"), Position::new(2, 3));
    }
}
