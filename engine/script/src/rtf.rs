//! Rich Text (`.rtf`: what macOS `TextEdit` saves by default, and what `WordPad`, Word and
//! Scrivener write): the text a reader sees, one line per paragraph, as [`super::docx`] reads a
//! Word document.
//!
//! Why here and not "save as plain text": an author who typed the script in `TextEdit` has an
//! `.rtf` without ever choosing one, and reading it as text would speak its font table. RTF is
//! a stream of groups (`{…}`), control words (`\par`) and text; this reader keeps the text of
//! the body and drops every destination that is not body text (font, colour and style tables,
//! document info, pictures, headers, footers, footnotes, comments, field instructions (a
//! link's shown text is kept), list numbers, bookmarks, and every `{\*\…}` group), hidden text
//! (`\v`) and deleted tracked changes (`\deleted`). `\par`, `\line` and a backslash before a line
//! end (`TextEdit`'s paragraph) end a line; a table row is one line with its cells apart by tabs.
//! Characters come from `\uN` (with its `\ucN` fallback skipped), from `\'hh` bytes in code page
//! 1252 (Windows' and `TextEdit`'s), or from the named ones (`\emdash`, `\rquote`, …). A byte in
//! another code page is refused, not guessed. Lines and columns in messages count the extracted
//! text (line N is paragraph N).
//!
//! The bytes are untrusted: groups nest at most [`MAX_DEPTH`] deep, `\binN` skips at most what
//! is left, and a file that ends inside a group is refused as cut short.

use super::docx::{end_cell, end_row};
use super::source::windows_1252;

/// Groups nested deeper than this are refused (real documents nest a few dozen).
const MAX_DEPTH: usize = 512;

/// Destinations whose whole group is not body text (`{\*\…}` groups are skipped as well).
const SKIPPED: [&str; 41] = [
    "fonttbl",
    "colortbl",
    "stylesheet",
    "info",
    "pict",
    "object",
    "header",
    "headerl",
    "headerr",
    "headerf",
    "footer",
    "footerl",
    "footerr",
    "footerf",
    "footnote",
    "annotation",
    "atnid",
    "atnauthor",
    "fldinst",
    "listtable",
    "listoverridetable",
    "listtext",
    "pntext",
    "pntxta",
    "pntxtb",
    "revtbl",
    "rsidtbl",
    "filetbl",
    "xe",
    "tc",
    "txe",
    "shp",
    "shpgrp",
    "nonshppict",
    "themedata",
    "colorschememapping",
    "datastore",
    "latentstyles",
    "pgdsctbl",
    "template",
    "docvar",
];

/// Whether `bytes` are a Rich Text document (after any byte-order mark).
pub(crate) fn is_rtf(bytes: &[u8]) -> bool {
    bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(bytes)
        .starts_with(b"{\\rtf")
}

/// A group's state; a nested group starts with its parent's.
#[derive(Clone, Copy)]
struct Group {
    /// Inside a destination that is not body text.
    skip: bool,
    /// Hidden (`\v`) or deleted (`\deleted`) text.
    unseen: bool,
    /// How many characters stand in for each `\uN` (`\ucN`).
    uc: usize,
}

/// The reader's state over the whole document.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    out: String,
    groups: Vec<Group>,
    /// The document's code page (`\ansicpg`), for `\'hh` bytes.
    code_page: u32,
    /// Fallback characters of the last `\uN` still to skip.
    fallback: usize,
    /// The high half of a surrogate pair from the last `\uN`.
    high: Option<u32>,
    /// Just after `{` (and any `\*`): the next control word may name a destination.
    group_start: bool,
    /// `\*` was seen at this group's start.
    starred: bool,
    /// The paragraph is in a table (`\intbl`): a paragraph end in a cell is a space.
    in_table: bool,
}

/// The text of a Rich Text document's body, one line per paragraph; the error says why it
/// cannot be read.
pub(crate) fn body_text(bytes: &[u8]) -> Result<String, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = Reader {
        bytes,
        at: 0,
        out: String::with_capacity(bytes.len() / 2),
        groups: Vec::new(),
        code_page: 1252,
        fallback: 0,
        high: None,
        group_start: false,
        starred: false,
        in_table: false,
    };
    reader.run()?;
    Ok(reader.out)
}

impl Reader<'_> {
    fn run(&mut self) -> Result<(), String> {
        while let Some(&b) = self.bytes.get(self.at) {
            self.at += 1;
            match b {
                b'{' => {
                    if self.groups.len() >= MAX_DEPTH {
                        return Err(format!(
                            "a Rich Text document with groups nested over {MAX_DEPTH} deep; \
                             save the script as text (.txt) or as a Word document (.docx)"
                        ));
                    }
                    let group = self.groups.last().copied().unwrap_or(Group {
                        skip: false,
                        unseen: false,
                        uc: 1,
                    });
                    self.groups.push(group);
                    (self.group_start, self.starred, self.fallback) = (true, false, 0);
                }
                b'}' => {
                    self.groups.pop();
                    (self.group_start, self.fallback) = (false, 0);
                    if self.groups.is_empty() {
                        // The document's group is closed; what follows (often a NUL) is not text.
                        return Ok(());
                    }
                }
                b'\\' => self.control()?,
                b'\r' | b'\n' => {}
                _ => {
                    self.group_start = false;
                    if self.groups.is_empty() {
                        continue;
                    }
                    if b >= 0x80 {
                        self.byte(b)?;
                    } else if b == b'\t' || b >= 0x20 {
                        self.text(char::from(b));
                    }
                }
            }
        }
        if self.groups.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "a Rich Text document that ends inside {} open group{} (`{{` without its `}}`), \
                 so it looks cut short; open it and save it again",
                self.groups.len(),
                if self.groups.len() == 1 { "" } else { "s" }
            ))
        }
    }

    /// The current group (the document's outermost when none is open).
    fn group(&mut self) -> Option<&mut Group> {
        self.groups.last_mut()
    }

    fn visible(&self) -> bool {
        self.groups.last().is_some_and(|g| !g.skip && !g.unseen)
    }

    /// A character of text: dropped while a `\uN`'s fallback is being skipped.
    fn text(&mut self, c: char) {
        if self.fallback > 0 {
            self.fallback -= 1;
            return;
        }
        self.high = None;
        if self.visible() {
            self.out.push(c);
        }
    }

    /// A byte of text in the document's code page (`\'hh`, or a raw byte ≥ 0x80).
    fn byte(&mut self, b: u8) -> Result<(), String> {
        if self.fallback > 0 {
            self.fallback -= 1;
            return Ok(());
        }
        if b < 0x80 {
            self.text(char::from(b));
            return Ok(());
        }
        if !self.visible() {
            return Ok(());
        }
        match self.code_page {
            1252 => {
                self.text(windows_1252(b));
                Ok(())
            }
            page => Err(format!(
                "a Rich Text document whose characters are in code page {page}, which Banter does \
                 not read; save the script as UTF-8 text (.txt) or as a Word document (.docx)"
            )),
        }
    }

    /// After a backslash: a control symbol or a control word with its parameter.
    fn control(&mut self) -> Result<(), String> {
        let Some(&first) = self.bytes.get(self.at) else {
            return Ok(());
        };
        if !first.is_ascii_alphabetic() {
            self.at += 1;
            return self.symbol(first);
        }
        let start = self.at;
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_alphabetic) {
            self.at += 1;
        }
        let word = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default();
        let negative = self.bytes.get(self.at) == Some(&b'-')
            && self.bytes.get(self.at + 1).is_some_and(u8::is_ascii_digit);
        if negative {
            self.at += 1;
        }
        let mut param: Option<i64> = None;
        while let Some(&d) = self.bytes.get(self.at).filter(|d| d.is_ascii_digit()) {
            self.at += 1;
            let value = param.unwrap_or(0);
            param = Some((value * 10 + i64::from(d - b'0')).min(i64::from(i32::MAX)));
        }
        let param = param.map(|p| if negative { -p } else { p });
        if self.bytes.get(self.at) == Some(&b' ') {
            self.at += 1;
        }
        self.word(word, param);
        Ok(())
    }

    /// A control symbol: `\'hh`, an escaped `\\`, `\{` or `\}`, or one of the special ones.
    fn symbol(&mut self, symbol: u8) -> Result<(), String> {
        if symbol == b'*' {
            self.starred = self.group_start;
            return Ok(());
        }
        self.group_start = false;
        match symbol {
            b'\'' => {
                let hex = self.bytes.get(self.at..self.at + 2);
                let value = hex
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                if let Some(value) = value {
                    self.at += 2;
                    self.byte(value)?;
                }
            }
            b'\\' | b'{' | b'}' => self.text(char::from(symbol)),
            b'~' => self.text(' '),
            b'_' => self.text('-'),
            // A backslash before a line end is a paragraph end (`TextEdit` writes one per line).
            b'\n' | b'\r' => self.paragraph(),
            // `\-` (an optional hyphen) and the rest say nothing.
            _ => {
                if self.fallback > 0 {
                    self.fallback -= 1;
                }
            }
        }
        Ok(())
    }

    /// A control word with its parameter.
    fn word(&mut self, word: &str, param: Option<i64>) {
        let at_start = std::mem::replace(&mut self.group_start, false);
        if at_start && (self.starred || SKIPPED.contains(&word)) {
            if let Some(group) = self.group() {
                group.skip = true;
            }
            return;
        }
        let on = param != Some(0);
        match word {
            "ansicpg" => {
                if let Some(page) = param.and_then(|p| u32::try_from(p).ok()) {
                    self.code_page = page;
                }
            }
            "mac" => self.code_page = 10000,
            "pc" => self.code_page = 437,
            "pca" => self.code_page = 850,
            "uc" => {
                let uc = param.and_then(|p| usize::try_from(p).ok()).unwrap_or(1);
                if let Some(group) = self.group() {
                    group.uc = uc.min(8);
                }
            }
            "u" => self.unicode(param.unwrap_or(0)),
            "bin" => {
                let skip = param.and_then(|p| usize::try_from(p).ok()).unwrap_or(0);
                self.at = self.at.saturating_add(skip).min(self.bytes.len());
            }
            "v" | "deleted" => {
                if let Some(group) = self.group() {
                    group.unseen = on;
                }
            }
            "plain" => {
                if let Some(group) = self.group() {
                    group.unseen = false;
                }
            }
            "pard" => self.in_table = false,
            "intbl" => self.in_table = on,
            _ => self.spoken_word(word),
        }
    }

    /// A control word that stands for text, or one that says nothing.
    fn spoken_word(&mut self, word: &str) {
        let c = match word {
            "par" | "line" | "sect" | "page" => return self.paragraph(),
            "cell" | "nestcell" => {
                self.fallback = 0;
                if self.visible() {
                    end_cell(&mut self.out);
                }
                return;
            }
            "row" | "nestrow" => {
                self.fallback = 0;
                if self.visible() {
                    end_row(&mut self.out);
                }
                self.in_table = false;
                return;
            }
            "tab" => '\t',
            "emdash" => '—',
            "endash" => '–',
            "lquote" => '‘',
            "rquote" => '’',
            "ldblquote" => '“',
            "rdblquote" => '”',
            "bullet" => '•',
            "enspace" | "emspace" | "qmspace" => ' ',
            _ => {
                // Formatting and everything else: no text, but a stand-in for a `\uN`.
                if self.fallback > 0 {
                    self.fallback -= 1;
                }
                return;
            }
        };
        self.text(c);
    }

    /// A paragraph end: a line end, or a space in a table's cell.
    fn paragraph(&mut self) {
        self.fallback = 0;
        if !self.visible() {
            return;
        }
        if self.in_table {
            if !self.out.ends_with([' ', '\t', '\n']) {
                self.out.push(' ');
            }
        } else {
            self.out.push('\n');
        }
    }

    /// `\uN`: a UTF-16 unit (negative above 32767), then its fallback characters to skip.
    fn unicode(&mut self, value: i64) {
        let unit = u32::try_from(if value < 0 { value + 65536 } else { value }).unwrap_or(0xFFFD);
        self.fallback = 0;
        let c = match unit {
            0xD800..=0xDBFF => {
                self.high = Some(unit);
                None
            }
            0xDC00..=0xDFFF => self.high.take().and_then(|high| {
                char::from_u32(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
            }),
            _ => char::from_u32(unit),
        };
        if let Some(c) = c {
            self.text(c);
        }
        self.fallback = self.groups.last().map_or(1, |g| g.uc);
    }
}

#[cfg(test)]
mod tests {
    use super::{body_text, is_rtf};
    use crate::decode_script_bytes;

    /// What `TextEdit` saves for a short two-speaker script (its header, tables and `\`-ended
    /// lines as written).
    const TEXTEDIT: &str = "{\\rtf1\\ansi\\ansicpg1252\\cocoartf2761\n\
        \\cocoatextscaling0\\cocoaplatform0{\\fonttbl\\f0\\fswiss\\fcharset0 Helvetica;}\n\
        {\\colortbl;\\red255\\green255\\blue255;}\n\
        {\\*\\expandedcolortbl;;}\n\
        \\paperw11900\\paperh16840\\margl1440\\margr1440\\vieww11520\\viewh8400\\viewkind0\n\
        \\pard\\tx566\\tx1133\\pardirnatural\\partightenfactor0\n\n\
        \\f0\\fs24 \\cf0 Alice: Welcome back. Caf\\'e9 talk today.\\\n\
        Bob: Thanks, it\\'92s great \\uc0\\u8212  really.\\\n\
        \\\n\
        {\\listtext\t\\uc0\\u8226 \t}Alice: Let\\'92s start with \\'93the basics\\'94.}";

    #[test]
    fn a_textedit_document_reads_as_its_lines() {
        assert!(is_rtf(TEXTEDIT.as_bytes()));
        assert_eq!(
            body_text(TEXTEDIT.as_bytes()).expect("rtf"),
            "Alice: Welcome back. Café talk today.\nBob: Thanks, it’s great — really.\n\n\
             Alice: Let’s start with “the basics”."
        );
        // Whatever the file is called: Rich Text is told by its first bytes.
        let decoded = decode_script_bytes("script.txt", TEXTEDIT.as_bytes())
            .expect("decoded")
            .text;
        assert!(decoded.starts_with("Alice: Welcome back."), "{decoded}");
        let err = decode_script_bytes("cut.rtf", b"{\\rtf1 {").expect_err("cut short");
        assert!(err.to_string().starts_with("cut.rtf:1:1:"), "{err}");
    }

    #[test]
    fn a_word_document_keeps_its_body_and_drops_the_rest() {
        let rtf = "{\\rtf1\\adeflang1025\\ansi\\ansicpg1252\\uc1\\deff0{\\fonttbl{\\f0\\froman \
            Times New Roman;}}{\\stylesheet{\\ql Normal;}}{\\info{\\title Draft}{\\author Ed}}\
            {\\header \\pard Page header\\par}\
            \\pard\\plain Ann:\\tab Hello {\\b there}\\u8230\\'85{\\*\\bkmkstart a}{\\*\\bkmkend a}\\par\
            {\\pard Ben: See {\\field{\\*\\fldinst HYPERLINK \"https://x.org\"}{\\fldrslt the site}}\
            {\\super\\chftn}{\\footnote\\pard A note.\\par}.\\par}\
            Cal: Kept{\\deleted  cut} words{\\v  hidden}{\\*\\atnid E}{\\annotation A comment}.\\par\
            {\\pict\\pngblip 89504e47}\\uc2\\u-10179\\u-8694??\\~and\\-more\\_x\\par}\0";
        assert_eq!(
            body_text(rtf.as_bytes()).expect("rtf"),
            "Ann:\tHello there…\nBen: See the site.\nCal: Kept words.\n😊 andmore-x\n"
        );
    }

    #[test]
    fn a_table_row_is_one_line_with_cells_apart_by_tabs() {
        let rtf = "{\\rtf1\\ansi\
            \\trowd\\cellx2000\\cellx8000\\pard\\intbl Speaker\\cell Line\\cell\\row\
            \\trowd\\cellx2000\\cellx8000\\pard\\intbl Ann\\cell Hi.\\par Two lines.\\cell\\row\
            \\pard After.\\par}";
        assert_eq!(
            body_text(rtf.as_bytes()).expect("rtf"),
            "Speaker\tLine\nAnn\tHi. Two lines.\nAfter.\n"
        );
    }

    #[test]
    fn damaged_or_foreign_documents_are_refused_with_a_reason() {
        let cut = body_text(b"{\\rtf1\\ansi {\\b Ann: Hi").expect_err("cut short");
        assert!(cut.contains("2 open groups"), "{cut}");
        let deep = format!("{{\\rtf1 {}", "{".repeat(1000));
        assert!(body_text(deep.as_bytes())
            .expect_err("deep")
            .contains("nested"));
        let cyrillic = body_text(b"{\\rtf1\\ansi\\ansicpg1251 \\'cf\\'f0\\par}").expect_err("1251");
        assert!(cyrillic.contains("code page 1251"), "{cyrillic}");
        // The same bytes as a `\uN`'s fallback are skipped, not refused.
        assert_eq!(
            body_text(b"{\\rtf1\\ansi\\ansicpg1251 \\u1055\\'cf\\par}").expect("fallback"),
            "П\n"
        );
        // A `\bin` count past the end stops at the end.
        assert!(body_text(b"{\\rtf1 \\bin99999999 abc}").is_err());
    }
}
