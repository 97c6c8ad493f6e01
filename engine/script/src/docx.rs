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
//! The archive is opened and the XML scanned by [`super::office`].

use super::office::{scan, Item};

/// The paragraphs of a Word document's body (`word/document.xml`) as lines.
pub(crate) fn body_text(xml: &str) -> Result<String, String> {
    let mut out = String::with_capacity(xml.len() / 4);
    // Inside `<w:t>`: character data is text.
    let mut in_text = false;
    // Table cells open around here (nested tables count each level).
    let mut cells = 0usize;
    scan(xml, "a Word document", |item| {
        let tag = match item {
            Item::Text(text) if in_text => return out.push_str(text),
            Item::Text(_) => return,
            Item::Tag(tag) => tag,
        };
        let (closing, empty) = (tag.closing, tag.empty);
        match tag.name {
            "w:t" => in_text = !closing && !empty,
            "w:tab" if !closing => out.push('\t'),
            "w:br" | "w:cr" if !closing => out.push(if cells > 0 { ' ' } else { '\n' }),
            // In a table a cell's paragraphs are one text, its cells a row's columns.
            "w:p" if (closing || empty) && cells > 0 => out.push(' '),
            "w:p" if closing || empty => out.push('\n'),
            "w:tc" if !closing && !empty => cells += 1,
            "w:tc" if closing => {
                cells = cells.saturating_sub(1);
                end_cell(&mut out);
            }
            "w:tr" if closing => end_row(&mut out),
            _ => {}
        }
    })?;
    Ok(out)
}

/// Ends a table cell: its trailing spaces go, a tab parts it from the next.
pub(crate) fn end_cell(out: &mut String) {
    let kept = out.trim_end_matches(' ').len();
    out.truncate(kept);
    out.push('\t');
}

/// Ends a table row: one line, without the tabs and spaces of empty cells at its end.
pub(crate) fn end_row(out: &mut String) {
    let kept = out.trim_end_matches(['\t', ' ']).len();
    out.truncate(kept);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::super::office::{document_text as docx_text, tests::archive};

    /// A minimal `.docx` around `body` (the children of `<w:body>`).
    fn docx(body: &str) -> Vec<u8> {
        let xml = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document \
             xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>\
             {body}<w:sectPr/></w:body></w:document>"
        );
        archive(&[
            ("[Content_Types].xml", "<?xml version=\"1.0\"?><Types/>"),
            ("word/document.xml", &xml),
        ])
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
    fn broken_xml_says_so() {
        let broken = docx("<w:p><w:r><w:t>Ann: a &bogus; b</w:t></w:r></w:p>");
        assert!(docx_text(&broken).unwrap_err().contains("`&bogus;`"));
        let unclosed = docx("<w:p><w:r><w:t>Ann: hi</w:t></w:r></w:p><w:p");
        let e = docx_text(&unclosed).unwrap_err();
        assert!(e.contains("a Word document with a broken XML tag"), "{e}");
    }
}
