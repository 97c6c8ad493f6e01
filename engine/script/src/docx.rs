//! Word documents (`.docx`, also what Google Docs and Pages export): the text of the body, one
//! line per paragraph, so a script written in a word processor reads like the same script saved
//! as text.
//!
//! Why not ask authors to export text: most write in a word processor, and "save as plain
//! text" loses nothing Banter reads but costs them a step every revision. Only
//! `word/document.xml` is read, and only what a reader sees in the body: runs of text
//! (`<w:t>`), tabs, line breaks, paragraph ends; a table's row is one line, its cells apart by
//! tabs (a two-column script, speaker and line, reads as `Name<TAB>text` rows). Deleted text of tracked changes
//! (`<w:delText>`), field codes (`<w:instrText>`), comments, headers, footers and footnotes are
//! other elements or other parts and are left out; inserted text of tracked changes reads as
//! if accepted. Lines and columns in messages count the extracted text (line N is paragraph N).
//!
//! The archive and the XML are untrusted: the document part is read with a size cap, the XML
//! is scanned, not built into a tree, and anything malformed is an error that says what to do.

use std::io::Read;

/// The text of the body is refused beyond this many bytes of `word/document.xml` (a long
/// episode's document is a few MiB of XML).
const MAX_DOCUMENT_XML: u64 = 64 * 1024 * 1024;

/// Whether `bytes` start like a ZIP archive (a `.docx` is one).
pub(crate) fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

/// The body text of a `.docx`, one line per paragraph; the error says why it is not one.
pub(crate) fn docx_text(bytes: &[u8]) -> Result<String, String> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| format!("a ZIP archive that cannot be read ({e})"))?;
    let mut part = archive.by_name("word/document.xml").map_err(|_| {
        "a ZIP archive without `word/document.xml`, so not a Word document; save the script as \
         text (.txt) or as a Word document (.docx)"
            .to_owned()
    })?;
    let mut xml = Vec::new();
    (&mut part)
        .take(MAX_DOCUMENT_XML + 1)
        .read_to_end(&mut xml)
        .map_err(|e| format!("a Word document whose text cannot be unpacked ({e})"))?;
    if xml.len() as u64 > MAX_DOCUMENT_XML {
        return Err(format!(
            "a Word document whose text is over {} MiB; split it into several episodes",
            MAX_DOCUMENT_XML / (1024 * 1024)
        ));
    }
    let xml = String::from_utf8(xml)
        .map_err(|_| "a Word document whose text is not UTF-8 XML".to_owned())?;
    body_text(&xml)
}

/// The paragraphs of a Word document's body as lines.
fn body_text(xml: &str) -> Result<String, String> {
    let mut out = String::with_capacity(xml.len() / 4);
    let mut rest = xml;
    // Inside `<w:t>`: character data is text.
    let mut in_text = false;
    // Table cells open around here (nested tables count each level).
    let mut cells = 0usize;
    while let Some(open) = rest.find('<') {
        if in_text {
            out.push_str(&unescape(&rest[..open])?);
        }
        let after = &rest[open..];
        let close = tag_end(after).ok_or("a Word document with a broken XML tag")?;
        let tag = &after[1..close];
        rest = &after[close + 1..];
        let name = tag
            .trim_start_matches('/')
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap_or("");
        let closing = tag.starts_with('/');
        let empty = tag.ends_with('/');
        match name {
            "w:t" => in_text = !closing && !empty,
            "w:tab" if !closing => out.push('\t'),
            "w:br" | "w:cr" if !closing => out.push(if cells > 0 { ' ' } else { '\n' }),
            // In a table a cell's paragraphs are one text, its cells a row's columns.
            "w:p" if (closing || empty) && cells > 0 => out.push(' '),
            "w:p" if closing || empty => out.push('\n'),
            "w:tc" if !closing && !empty => cells += 1,
            "w:tc" if closing => {
                cells = cells.saturating_sub(1);
                let kept = out.trim_end_matches(' ').len();
                out.truncate(kept);
                out.push('\t');
            }
            "w:tr" if closing => {
                let kept = out.trim_end_matches(['\t', ' ']).len();
                out.truncate(kept);
                out.push('\n');
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The index of the `>` that ends the tag `s` starts with (skipping `>` inside quoted
/// attribute values and comments); `None` when another tag opens first or none ends.
fn tag_end(s: &str) -> Option<usize> {
    if let Some(body) = s.strip_prefix("<!--") {
        return body.find("-->").map(|i| i + 4 + 2);
    }
    let mut quote = None;
    for (i, c) in s.char_indices().skip(1) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            (None, '<') => return None,
            _ => {}
        }
    }
    None
}

/// XML character data with its entities decoded.
fn unescape(s: &str) -> Result<String, String> {
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
            .ok_or("a Word document with a broken XML entity")?;
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
                code.and_then(char::from_u32).ok_or_else(|| {
                    format!("a Word document with an unknown XML entity `&{entity};`")
                })?
            }
        };
        out.push(c);
        rest = &after[semi + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A minimal `.docx` around `body` (the children of `<w:body>`).
    fn docx(body: &str) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default();
        zip.start_file("[Content_Types].xml", options)
            .expect("entry");
        zip.write_all(b"<?xml version=\"1.0\"?><Types/>")
            .expect("write");
        zip.start_file("word/document.xml", options).expect("entry");
        let xml = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document \
             xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>\
             {body}<w:sectPr/></w:body></w:document>"
        );
        zip.write_all(xml.as_bytes()).expect("write");
        zip.finish().expect("finish").into_inner()
    }

    #[test]
    fn paragraphs_runs_tabs_and_breaks_become_lines() {
        let body = "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr><w:r><w:t>Episode 1</w:t></w:r></w:p>\
            <w:p><w:r><w:rPr><w:b/></w:rPr><w:t>Ann:</w:t></w:r><w:r><w:t xml:space=\"preserve\"> Tom &amp; I \
            said &quot;hi&quot; &#8212; twice.</w:t></w:r></w:p>\
            <w:p/>\
            <w:p><w:r><w:t>Ben:</w:t><w:tab/><w:t>One</w:t><w:br/><w:t>two.</w:t></w:r>\
            <w:del><w:r><w:delText>cut words</w:delText></w:r></w:del>\
            <w:ins><w:r><w:t> Added.</w:t></w:r></w:ins>\
            <w:r><w:instrText> PAGE </w:instrText></w:r></w:p>";
        assert_eq!(
            docx_text(&docx(body)).expect("a docx"),
            "Episode 1\nAnn: Tom & I said \"hi\" — twice.\n\nBen:\tOne\ntwo. Added.\n"
        );
    }

    #[test]
    fn a_table_row_is_a_line_of_tab_separated_cells() {
        let cell = |text: &str| format!("<w:tc><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:tc>");
        let two_paragraphs = "<w:tc><w:p><w:r><w:t>Hi.</w:t></w:r></w:p><w:p><w:r><w:t>Bye.</w:t></w:r></w:p></w:tc>";
        let body = format!(
            "<w:tbl><w:tr>{}{}</w:tr><w:tr>{}{two_paragraphs}</w:tr></w:tbl><w:p><w:r><w:t>End</w:t></w:r></w:p>",
            cell("Ann"),
            cell("Welcome."),
            cell("Ben"),
        );
        assert_eq!(
            docx_text(&docx(&body)).expect("a docx"),
            "Ann\tWelcome.\nBen\tHi. Bye.\nEnd\n"
        );
    }

    #[test]
    fn what_is_not_a_word_document_says_so() {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        zip.start_file("notes.txt", zip::write::SimpleFileOptions::default())
            .expect("entry");
        zip.write_all(b"Ann: hi").expect("write");
        let other = zip.finish().expect("finish").into_inner();
        assert!(docx_text(&other)
            .unwrap_err()
            .contains("not a Word document"));
        assert!(docx_text(b"PK\x03\x04garbage")
            .unwrap_err()
            .contains("cannot be read"));
        let broken = docx("<w:p><w:r><w:t>Ann: a &bogus; b</w:t></w:r></w:p>");
        assert!(docx_text(&broken).unwrap_err().contains("`&bogus;`"));
        let unclosed = docx("<w:p><w:r><w:t>Ann: hi</w:t></w:r></w:p><w:p");
        assert!(docx_text(&unclosed).unwrap_err().contains("broken XML tag"));
    }
}
