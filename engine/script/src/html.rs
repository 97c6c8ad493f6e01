//! Web pages (`.html`: Google Docs' "Web page" download, Word's "Save as Web Page", a notes
//! app's export): the text a browser shows, one line per paragraph, as [`super::docx`] reads a
//! Word document.
//!
//! Why: HTML read as text had its markup spoken or stopped the parser at `<html>`. A browser's
//! rules, cut down to what a script needs: the head, scripts and styles are not shown; white
//! space runs collapse to one space (but inside `<pre>`); paragraphs, headings, list items,
//! `<br>` and other blocks end lines, and a paragraph with nothing in it is a blank line; a table
//! row is one line, its cells apart by tabs; entities are decoded (an unknown one is kept as
//! written, as a browser does). Footnotes and comments, as Google Docs and Word export them (a
//! reference mark linking to a note, the notes at the end linking back), are left out: the marks
//! and each note's paragraph. Lines and columns in messages count the extracted text.
//!
//! Markup is untrusted and often not well formed; nothing here fails on it (a tag left open
//! at the end is read as text up to there).

use super::docx::{end_cell, end_row};

/// How far into a file to look for the signs of a web page.
const SNIFF: usize = 1024;

/// Elements whose content a browser does not show.
const HIDDEN: [&str; 8] = [
    "head", "script", "style", "noscript", "template", "title", "svg", "object",
];

/// Elements that start and end a line of their own.
const BLOCKS: [&str; 24] = [
    "p",
    "div",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "blockquote",
    "pre",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "table",
    "hr",
    "figure",
];

/// Links that mark a footnote or a comment (Google Docs' `#ftnt1`, `#cmnt1`, Word's `#_ftn1`,
/// `#_edn1`, `#_msocom_1`, pandoc's `#fn1`), and those that lead back from one (`#ftnt_ref1`,
/// `#_ftnref1`, `#fnref1`, Word's `#_msoanchor_1`).
const NOTE_LINKS: [&str; 8] = [
    "#ftnt",
    "#cmnt",
    "#_ftn",
    "#_edn",
    "#_msocom",
    "#_com",
    "#_msoanchor",
    "#fn",
];

/// What a link to or from a note is.
enum NoteLink {
    /// The mark in the text (`[1]`, `¹`): not read.
    Mark,
    /// The way back from the note: the note's paragraph is not read.
    Back,
}

/// Whether the `<a>` tag with this body links to or from a note (by its target, or by the
/// ARIA role or class a generator gives it).
fn note_link(body: &str) -> Option<NoteLink> {
    let href = super::office::attribute(body, "href").unwrap_or("");
    let role = super::office::attribute(body, "role").unwrap_or("");
    let class = super::office::attribute(body, "class").unwrap_or("");
    let noted = NOTE_LINKS.iter().any(|p| {
        href.strip_prefix(p).is_some_and(|rest| {
            *p != "#fn" || rest.starts_with(|c: char| c.is_ascii_digit() || c == 'r')
        })
    });
    if role == "doc-backlink"
        || class.contains("footnote-back")
        || (noted && (href.contains("ref") || href.starts_with("#_msoanchor")))
    {
        Some(NoteLink::Back)
    } else if noted || role == "doc-noteref" || class.contains("footnote-ref") {
        Some(NoteLink::Mark)
    } else {
        None
    }
}

/// Whether `text` is a web page: it opens with a doctype, `<html>`, or a `<head>`/`<meta>`
/// within its first bytes.
pub(crate) fn is_html(text: &str) -> bool {
    let head = super::source::opening(text, SNIFF).to_ascii_lowercase();
    head.starts_with("<!doctype html")
        || head.starts_with("<html")
        || (head.starts_with('<') && (head.contains("<head>") || head.contains("<meta ")))
}

/// The state of one pass over the markup.
#[derive(Default)]
struct Reader {
    out: String,
    /// Inside hidden elements (how deep), inside `<pre>` (how deep).
    hidden: usize,
    pre: usize,
    /// The last thing written was collapsible white space (or a line start).
    after_space: bool,
    /// Where each open `<p>`/`<div>`/`<li>` began in `out`, and whether a note mark was met in
    /// it (the whole paragraph is then a footnote or a comment).
    paragraphs: Vec<(String, usize, bool)>,
    /// Inside a link to a note: its mark is not read.
    in_note_link: usize,
    /// Table cells open around here: a paragraph's end in one is a space, not a line end.
    cells: usize,
}

/// The text of a web page, one line per paragraph.
pub(crate) fn page_text(html: &str) -> String {
    let mut r = Reader {
        after_space: true,
        ..Reader::default()
    };
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        r.text(&rest[..open]);
        let after = &rest[open..];
        if let Some(comment) = after.strip_prefix("<!--") {
            rest = comment.find("-->").map_or("", |end| &comment[end + 3..]);
            continue;
        }
        let Some(close) = tag_end(after) else {
            // A `<` that opens no tag is text (`a < b`).
            r.text("<");
            rest = &after[1..];
            continue;
        };
        let body = &after[1..close];
        rest = &after[close + 1..];
        if body.starts_with(['!', '?']) {
            continue;
        }
        let closing = body.starts_with('/');
        let name = body
            .trim_start_matches('/')
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if !closing && matches!(name.as_str(), "script" | "style") {
            // Raw text: everything up to the closing tag is code, not markup.
            let end = find_end_tag(rest, &name);
            rest = end.map_or("", |at| &rest[at..]);
            continue;
        }
        r.tag(&name, body, closing);
    }
    r.text(rest);
    r.out
}

impl Reader {
    /// Character data: entities decoded, white space collapsed (but in `<pre>`).
    fn text(&mut self, raw: &str) {
        if raw.is_empty() || self.hidden > 0 || self.in_note_link > 0 {
            return;
        }
        for c in decode_entities(raw).chars() {
            if self.pre > 0 && c == '\n' {
                self.line_end();
            } else if c.is_whitespace() && c != '\u{A0}' && self.pre == 0 {
                if !self.after_space {
                    self.out.push(' ');
                    self.after_space = true;
                }
            } else {
                self.out.push(if c == '\u{A0}' { ' ' } else { c });
                self.after_space = false;
            }
        }
    }

    fn tag(&mut self, name: &str, body: &str, closing: bool) {
        if name == "body" && !closing {
            // A head left open (its end tag may be left out) ends where the body starts.
            self.hidden = 0;
            return;
        }
        if HIDDEN.contains(&name) {
            if closing {
                self.hidden = self.hidden.saturating_sub(1);
            } else if !body.ends_with('/') {
                self.hidden += 1;
            }
            return;
        }
        if self.hidden > 0 {
            return;
        }
        match (name, closing) {
            ("br", _) => self.line_end(),
            ("td" | "th", false) => self.cells += 1,
            ("td" | "th", true) => {
                self.cells = self.cells.saturating_sub(1);
                end_cell(&mut self.out);
                self.after_space = true;
            }
            ("tr", true) => {
                end_row(&mut self.out);
                self.after_space = true;
            }
            ("a", false) => match note_link(body) {
                Some(NoteLink::Back) => {
                    // A link back from a note: the paragraph around it is the note.
                    if let Some(p) = self.paragraphs.last_mut() {
                        p.2 = true;
                    }
                    self.in_note_link += 1;
                }
                Some(NoteLink::Mark) => self.in_note_link += 1,
                None if self.in_note_link > 0 => self.in_note_link += 1,
                None => {}
            },
            ("a", true) => self.in_note_link = self.in_note_link.saturating_sub(1),
            _ if BLOCKS.contains(&name) => self.block(name, closing),
            _ => {}
        }
    }

    /// A block element's start or end: a line of its own; a paragraph left empty is a blank
    /// line; a note's paragraph is taken back out.
    fn block(&mut self, name: &str, closing: bool) {
        if name == "pre" {
            self.pre = if closing {
                self.pre.saturating_sub(1)
            } else {
                self.pre + 1
            };
        }
        let paragraph = matches!(
            name,
            "p" | "div" | "li" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6"
        );
        if !closing {
            self.line_end_if_started();
            if paragraph {
                self.paragraphs
                    .push((name.to_owned(), self.out.len(), false));
            }
            return;
        }
        let opened = paragraph
            .then(|| self.paragraphs.iter().rposition(|(n, _, _)| n == name))
            .flatten();
        let Some(at) = opened else {
            self.line_end_if_started();
            return;
        };
        let (_, start, note) = self.paragraphs[at].clone();
        let note = note || self.paragraphs[at..].iter().any(|p| p.2);
        self.paragraphs.truncate(at);
        if note {
            self.out.truncate(start.min(self.out.len()));
            self.after_space = true;
        } else if self.out.len() == start && name == "p" && self.cells == 0 {
            // An empty paragraph: the blank line the writer left.
            self.line_end();
        } else {
            self.line_end_if_started();
        }
    }

    fn line_end(&mut self) {
        if self.cells > 0 && self.pre == 0 {
            // Inside a table's cell: the row is one line.
            if !self.after_space {
                self.out.push(' ');
                self.after_space = true;
            }
            return;
        }
        let kept = self.out.trim_end_matches(' ').len();
        self.out.truncate(kept);
        self.out.push('\n');
        self.after_space = true;
    }

    fn line_end_if_started(&mut self) {
        if !(self.out.is_empty() || self.out.ends_with('\n')) {
            self.line_end();
        }
    }
}

/// The index of the `>` that ends the tag `s` starts with (skipping `>` inside quoted
/// attribute values); `None` when `s` does not start a tag.
fn tag_end(s: &str) -> Option<usize> {
    let next = s[1..].chars().next()?;
    if !(next.is_ascii_alphabetic() || matches!(next, '/' | '!' | '?')) {
        return None;
    }
    super::office::quoted_tag_end(s, false)
}

/// Where the closing tag `</name` starts in `hay`, in any case, without copying `hay` (a page
/// of many `<style>` blocks must not cost the rest of the page for each).
fn find_end_tag(hay: &str, name: &str) -> Option<usize> {
    hay.match_indices("</").map(|(at, _)| at).find(|&at| {
        hay.as_bytes()
            .get(at + 2..at + 2 + name.len())
            .is_some_and(|tag| tag.eq_ignore_ascii_case(name.as_bytes()))
    })
}

/// `s` with its character references decoded; one that names nothing is kept as written.
fn decode_entities(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('&') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let end = after.find(';').filter(|&end| end <= 32);
        let name = end.map_or("", |end| &after[..end]);
        let decoded = if matches!(name, "shy" | "zwj" | "zwnj" | "lrm" | "rlm") {
            // Marks that say nothing.
            Some(None)
        } else {
            entity(name).map(Some)
        };
        if let (Some(c), Some(end)) = (decoded, end) {
            out.extend(c);
            rest = &after[end + 1..];
        } else {
            out.push('&');
            rest = after;
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// The character an entity (between `&` and `;`) names.
fn entity(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return char::from_u32(code).filter(|c| *c != '\0');
    }
    let c = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{A0}',
        "ensp" | "emsp" | "thinsp" => ' ',
        "lsquo" => '‘',
        "rsquo" => '’',
        "sbquo" => '‚',
        "ldquo" => '“',
        "rdquo" => '”',
        "bdquo" => '„',
        "laquo" => '«',
        "raquo" => '»',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "bull" => '•',
        "middot" => '·',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "deg" => '°',
        "euro" => '€',
        "pound" => '£',
        "yen" => '¥',
        "cent" => '¢',
        "sect" => '§',
        "para" => '¶',
        "times" => '×',
        "divide" => '÷',
        "plusmn" => '±',
        "frac12" => '½',
        "frac14" => '¼',
        "frac34" => '¾',
        "iexcl" => '¡',
        "iquest" => '¿',
        "szlig" => 'ß',
        _ => return latin_letter(name),
    };
    Some(c)
}

/// `eacute`, `Ntilde`, `ouml`, `ccedil`, …: a Latin letter with its mark.
fn latin_letter(name: &str) -> Option<char> {
    const MARKS: [(&str, char); 7] = [
        ("acute", '\u{301}'),
        ("grave", '\u{300}'),
        ("circ", '\u{302}'),
        ("tilde", '\u{303}'),
        ("uml", '\u{308}'),
        ("cedil", '\u{327}'),
        ("ring", '\u{30A}'),
    ];
    let mut chars = name.chars();
    let letter = chars.next().filter(char::is_ascii_alphabetic)?;
    let mark = chars.as_str();
    let (_, combining) = MARKS.iter().find(|(m, _)| *m == mark)?;
    unicode_normalization::char::compose(letter, *combining)
}

#[cfg(test)]
mod tests {
    use super::{is_html, page_text};

    #[test]
    fn a_google_docs_page_reads_as_its_paragraphs_without_notes() {
        let page = "<html><head><meta content=\"text/html; charset=UTF-8\" \
            http-equiv=\"content-type\"><style type=\"text/css\">p{margin:0} .c1>b{x:1}</style>\
            <title>Episode 4</title></head><body class=\"c5 doc-content\">\
            <h1 class=\"c2\" id=\"h.1\"><span>Cold open</span></h1>\
            <p class=\"c1\"><span class=\"c3\">Alice:</span><span>&nbsp;Welcome   back\n to the\
            &nbsp;show&hellip; It&rsquo;s caf&eacute; time.</span><sup><a href=\"#ftnt1\" \
            id=\"ftnt_ref1\">[1]</a></sup></p>\
            <p class=\"c1 c4\"><span class=\"c0\"></span></p>\
            <p class=\"c1\"><span>Bob: Tom &amp; I<br>agree &lt;3 &bogus; a < b.</span>\
            <a href=\"#cmnt1\" id=\"cmnt_ref1\">[a]</a></p>\
            <table><tr><td><p>Ann</p></td><td><p>Hi.</p></td></tr><tr><td>Ben</td><td></td></tr></table>\
            <script>document.write('<p>not this</p>')</script>\
            <hr class=\"c6\"><div><p class=\"c4\"><a href=\"#ftnt_ref1\" id=\"ftnt1\">[1]</a>\
            <span class=\"c3\">&nbsp;A footnote.</span></p></div>\
            <div class=\"c9\"><p class=\"c2\"><a href=\"#cmnt_ref1\" id=\"cmnt1\">[a]</a>\
            <span>A comment.</span></p></div>\
            <p>Cal: Hey.<a href=\"#fn1\" class=\"footnote-ref\" id=\"fnref1\" role=\"doc-noteref\">\
            <sup>1</sup></a></p><section class=\"footnotes\"><hr /><ol><li id=\"fn1\"><p>Note.\
            <a href=\"#fnref1\" class=\"footnote-back\" role=\"doc-backlink\">↩︎</a></p></li></ol>\
            </section></body></html>";
        assert!(is_html(page));
        assert_eq!(
            page_text(page),
            "Cold open\nAlice: Welcome back to the show… It’s café time.\n\n\
             Bob: Tom & I\nagree <3 &bogus; a < b.\nAnn\tHi.\nBen\nCal: Hey.\n"
        );
    }

    #[test]
    fn only_pages_are_taken_for_html() {
        assert!(is_html("\u{FEFF}<!DOCTYPE html>\n<html lang=en>"));
        assert!(is_html("<meta charset=\"utf-8\"><p>Ann: hi</p>"));
        assert!(!is_html("<Person1>Hi there.</Person1>"));
        assert!(!is_html("Ann: <b>bold</b> words"));
        // Preformatted text keeps its lines; an unclosed tag at the end is not lost text.
        assert_eq!(
            page_text("<pre>Ann: a\n  Ben: b</pre><p>Cal: c <b"),
            "Ann: a\n  Ben: b\nCal: c <b"
        );
    }
}
