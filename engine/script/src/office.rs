//! Word-processor documents: a Word document (`.docx`, also what Google Docs and Pages
//! export) or an `OpenDocument` text (`.odt`, `LibreOffice`'s and Google Docs' other export) is a
//! ZIP archive whose body is one XML part (Google Docs' zipped web page, one `.html` page and
//! its images, is read by [`super::html`]; a Pages document is refused by name). This module opens the archive, picks the part, and
//! holds the XML scanning both readers share ([`super::docx`], [`super::odt`]); each turns its
//! body into one line per paragraph, so a script written in a word processor reads like the
//! same script saved as text.
//!
//! The archive and the XML are untrusted: a part is read with a size cap, the XML is scanned,
//! not built into a tree, and anything malformed is an error that says what to do.

use std::io::Read;

/// A document is refused beyond this many bytes of body XML (a long episode's document is a
/// few MiB of XML).
const MAX_DOCUMENT_XML: u64 = 64 * 1024 * 1024;

/// Whether `bytes` start like a ZIP archive (a `.docx` or an `.odt` is one).
pub(crate) fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

/// The body text of a `.docx` or an `.odt`, one line per paragraph; the error says why it is
/// neither.
pub(crate) fn document_text(bytes: &[u8]) -> Result<String, String> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| format!("a ZIP archive that cannot be read ({e})"))?;
    if archive.index_for_name("word/document.xml").is_some() {
        let xml = read_part(&mut archive, "word/document.xml", "a Word document")?;
        super::docx::body_text(&xml)
    } else if archive.index_for_name("content.xml").is_some() {
        let xml = read_part(&mut archive, "content.xml", "an OpenDocument text")?;
        super::odt::body_text(&xml)
    } else if let Some(page) = single_web_page(&archive) {
        // Google Docs' "Web page (.html, zipped)": the page and its images.
        let html = read_part(&mut archive, &page, "a zipped web page")?;
        Ok(super::html::page_text(&html))
    } else if archive.index_for_name("Index/Document.iwa").is_some() {
        Err(
            "a Pages document, which Banter does not read; in Pages choose File > Export To > \
             Word (.docx) or Plain Text (.txt)"
                .to_owned(),
        )
    } else {
        Err(
            "a ZIP archive without `word/document.xml` or `content.xml`, so neither a Word \
             document nor an OpenDocument text; save the script as text (.txt), as a Word \
             document (.docx) or as an OpenDocument text (.odt)"
                .to_owned(),
        )
    }
}

/// The one `.html` page of an archive, if it has exactly one (images beside it are fine).
fn single_web_page(archive: &zip::ZipArchive<std::io::Cursor<&[u8]>>) -> Option<String> {
    let mut pages = archive.file_names().filter_map(Result::ok).filter(|name| {
        std::path::Path::new(name.as_ref())
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"))
    });
    let page = pages.next()?;
    pages.next().is_none().then(|| page.into_owned())
}

/// The part `name` as UTF-8, at most [`MAX_DOCUMENT_XML`] bytes; `kind` names the document in
/// errors.
fn read_part(
    archive: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
    name: &str,
    kind: &str,
) -> Result<String, String> {
    let mut part = archive
        .by_name(name)
        .map_err(|e| format!("{kind} whose `{name}` cannot be read ({e})"))?;
    let mut xml = Vec::new();
    (&mut part)
        .take(MAX_DOCUMENT_XML + 1)
        .read_to_end(&mut xml)
        .map_err(|e| format!("{kind} whose text cannot be unpacked ({e})"))?;
    if xml.len() as u64 > MAX_DOCUMENT_XML {
        return Err(format!(
            "{kind} whose text is over {} MiB; split it into several episodes",
            MAX_DOCUMENT_XML / (1024 * 1024)
        ));
    }
    String::from_utf8(xml).map_err(|_| format!("{kind} whose text is not UTF-8 XML"))
}

/// One XML tag as the scanners see it.
pub(crate) struct Tag<'a> {
    /// The qualified name (`w:p`, `text:span`).
    pub name: &'a str,
    /// The tag's text between `<` and `>`, for its attributes.
    pub body: &'a str,
    /// `</name>`.
    pub closing: bool,
    /// `<name/>`.
    pub empty: bool,
}

/// What [`scan`] meets, in document order.
pub(crate) enum Item<'a> {
    /// Character data, entities decoded.
    Text(&'a str),
    Tag(Tag<'a>),
}

/// Walks `xml`, handing each piece of character data and each tag to `each` in order.
/// `kind` names the document in errors.
pub(crate) fn scan(xml: &str, kind: &str, mut each: impl FnMut(Item<'_>)) -> Result<(), String> {
    let mut rest = xml;
    while let Some(open) = rest.find('<') {
        if open > 0 {
            each(Item::Text(&unescape(&rest[..open], kind)?));
        }
        let after = &rest[open..];
        let close = tag_end(after).ok_or_else(|| format!("{kind} with a broken XML tag"))?;
        let body = &after[1..close];
        rest = &after[close + 1..];
        // Declarations, processing instructions and comments are not elements.
        if body.starts_with(['?', '!']) {
            continue;
        }
        let name = body
            .trim_start_matches('/')
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap_or("");
        each(Item::Tag(Tag {
            name,
            body,
            closing: body.starts_with('/'),
            empty: body.ends_with('/'),
        }));
    }
    if !rest.is_empty() {
        each(Item::Text(&unescape(rest, kind)?));
    }
    Ok(())
}

/// The value of attribute `name` in a tag's `body` (`text:c="3"`), undecoded.
pub(crate) fn attribute<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = body;
    while let Some(at) = rest.find(name) {
        let before_ok = rest[..at].ends_with(char::is_whitespace);
        let after = rest[at + name.len()..].trim_start();
        if before_ok {
            if let Some(value) = after.strip_prefix('=') {
                let value = value.trim_start();
                let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'')?;
                let inner = &value[1..];
                return inner.find(quote).map(|end| &inner[..end]);
            }
        }
        rest = &rest[at + name.len()..];
    }
    None
}

/// The index of the `>` that ends the tag `s` starts with (skipping `>` inside quoted
/// attribute values and comments); `None` when another tag opens first or none ends.
fn tag_end(s: &str) -> Option<usize> {
    if let Some(body) = s.strip_prefix("<!--") {
        return body.find("-->").map(|i| i + 4 + 2);
    }
    quoted_tag_end(s, true)
}

/// The index of the first `>` after `s`'s opening `<` that is not inside a quoted attribute
/// value; with `strict`, `None` when another `<` opens first (XML's rule; HTML has none).
pub(crate) fn quoted_tag_end(s: &str, strict: bool) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s.char_indices().skip(1) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            (None, '<') if strict => return None,
            _ => {}
        }
    }
    None
}

/// XML character data with its entities decoded.
fn unescape(s: &str, kind: &str) -> Result<String, String> {
    if !s.contains('&') {
        return Ok(s.to_owned());
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let semi = after
            .find(';')
            .filter(|&i| i <= 10)
            .ok_or_else(|| format!("{kind} with a broken XML entity"))?;
        let entity = &after[..semi];
        let c = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = if let Some(hex) = entity.strip_prefix("#x") {
                    u32::from_str_radix(hex, 16).ok()
                } else {
                    entity.strip_prefix('#').and_then(|d| d.parse().ok())
                };
                code.and_then(char::from_u32)
                    .ok_or_else(|| format!("{kind} with an unknown XML entity `&{entity};`"))?
            }
        };
        out.push(c);
        rest = &after[semi + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// A ZIP archive of `(name, contents)` entries, in order.
    pub(crate) fn archive(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, contents) in entries {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .expect("entry");
            zip.write_all(contents.as_bytes()).expect("write");
        }
        zip.finish().expect("finish").into_inner()
    }

    #[test]
    fn a_zipped_web_page_is_read_and_a_pages_document_refused_by_name() {
        let page = archive(&[
            (
                "Episode4.html",
                "<html><body><p>Ann: Hi.</p><p>Ben: Yo.</p></body></html>",
            ),
            ("images/image1.png", "\u{89}PNG"),
        ]);
        assert_eq!(
            document_text(&page).expect("a page"),
            "Ann: Hi.\nBen: Yo.\n"
        );
        let two = archive(&[("a.html", "<p>a</p>"), ("b.html", "<p>b</p>")]);
        assert!(document_text(&two).is_err());
        let pages = archive(&[
            ("Index/Document.iwa", "\u{0}"),
            ("Metadata/Properties.plist", ""),
        ]);
        let e = document_text(&pages).expect_err("pages");
        assert!(
            e.contains("a Pages document") && e.contains("Export To"),
            "{e}"
        );
    }

    #[test]
    fn what_is_neither_document_says_so() {
        let other = archive(&[("notes.txt", "Ann: hi")]);
        let e = document_text(&other).unwrap_err();
        assert!(
            e.contains("neither a Word document nor an OpenDocument text"),
            "{e}"
        );
        assert!(document_text(b"PK\x03\x04garbage")
            .unwrap_err()
            .contains("cannot be read"));
    }

    #[test]
    fn attributes_are_found_by_whole_name() {
        let body = r#"text:s xtext:c="9" text:c = '3'"#;
        assert_eq!(attribute(body, "text:c"), Some("3"));
        assert_eq!(attribute("text:s", "text:c"), None);
    }
}
