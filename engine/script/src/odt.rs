//! `OpenDocument` texts (`.odt`: `LibreOffice`'s own format, and one of Google Docs' exports): the
//! text of the body, one line per paragraph, as [`super::docx`] reads a Word document.
//!
//! Only `content.xml`'s `<office:text>` is read, and only what a reader sees in the body:
//! paragraphs and headings (`<text:p>`, `<text:h>`, in lists too), with ODF's white space
//! rules (a run of spaces, tabs and line ends in the XML is one space, none at a paragraph's
//! start; `<text:s text:c="N"/>` is N spaces, `<text:tab/>` a tab, `<text:line-break/>` a line
//! end); a table's row is one line, its cells apart by tabs, merged-over cells left out.
//! Deleted text of tracked changes (kept in `<text:tracked-changes>`), comments
//! (`<office:annotation>`), footnotes and endnotes (`<text:note>`), frames (images, text
//! boxes) and generated tables of contents are left out; inserted text of tracked changes
//! reads as if accepted. Headers and footers live in another part and are not read.
//!
//! The archive is opened and the XML scanned by [`super::office`].

use super::docx::{end_cell, end_row};
use super::office::{attribute, scan, Item};

/// Elements whose whole content is not body text.
const SKIPPED: [&str; 7] = [
    "text:tracked-changes",
    "office:annotation",
    "text:note",
    "draw:frame",
    "text:table-of-content",
    "text:sequence-decls",
    "svg:desc",
];

/// `<text:s text:c="N"/>` beyond this many spaces is read as this many (a hostile count
/// must not allocate gigabytes).
const MAX_SPACES: usize = 1024;

/// The paragraphs of an `OpenDocument` text's body (`content.xml`) as lines.
pub(crate) fn body_text(xml: &str) -> Result<String, String> {
    let mut out = String::with_capacity(xml.len() / 4);
    // Inside `<office:text>`, and how deep inside skipped elements.
    let mut in_body = false;
    let mut skipping = 0usize;
    // Inside a paragraph or heading; nothing but white space said in it yet.
    let mut in_paragraph = false;
    let mut at_start = false;
    // The last thing written was white space from the XML (the next run of it adds nothing).
    let mut after_space = false;
    // Table cells open around here (nested tables count each level).
    let mut cells = 0usize;
    scan(xml, "an OpenDocument text", |item| {
        let tag = match item {
            Item::Text(text) => {
                if in_body && skipping == 0 && in_paragraph {
                    for c in text.chars() {
                        if matches!(c, ' ' | '\t' | '\n' | '\r') {
                            if !at_start && !after_space {
                                out.push(' ');
                                after_space = true;
                            }
                        } else {
                            out.push(c);
                            (at_start, after_space) = (false, false);
                        }
                    }
                }
                return;
            }
            Item::Tag(tag) => tag,
        };
        let (closing, empty) = (tag.closing, tag.empty);
        if tag.name == "office:text" {
            in_body = !closing && !empty;
            return;
        }
        if !in_body {
            return;
        }
        if SKIPPED.contains(&tag.name) {
            if !closing && !empty {
                skipping += 1;
            } else if closing {
                skipping = skipping.saturating_sub(1);
            }
            return;
        }
        if skipping > 0 {
            return;
        }
        match tag.name {
            "text:p" | "text:h" if !closing && !empty => {
                (in_paragraph, at_start, after_space) = (true, true, false);
            }
            "text:p" | "text:h" => {
                in_paragraph = false;
                let kept = out.trim_end_matches(' ').len();
                out.truncate(kept);
                out.push(if cells > 0 { ' ' } else { '\n' });
            }
            "text:s" if !closing => {
                let n = attribute(tag.body, "text:c")
                    .and_then(|c| c.trim().parse::<usize>().ok())
                    .unwrap_or(1)
                    .min(MAX_SPACES);
                out.extend(std::iter::repeat_n(' ', n));
                (at_start, after_space) = (false, false);
            }
            "text:tab" if !closing => {
                out.push('\t');
                (at_start, after_space) = (false, false);
            }
            "text:line-break" if !closing => {
                out.push(if cells > 0 { ' ' } else { '\n' });
                (at_start, after_space) = (false, false);
            }
            "table:table-cell" if !closing && !empty => cells += 1,
            "table:table-cell" => {
                if closing {
                    cells = cells.saturating_sub(1);
                }
                // An empty cell still holds its column, repeated as often as it says.
                let repeated = if empty {
                    attribute(tag.body, "table:number-columns-repeated")
                        .and_then(|n| n.trim().parse::<usize>().ok())
                        .unwrap_or(1)
                        .clamp(1, 64)
                } else {
                    1
                };
                for _ in 0..repeated {
                    end_cell(&mut out);
                }
            }
            "table:table-row" if closing => end_row(&mut out),
            _ => {}
        }
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::office::{document_text, tests::archive};

    /// A minimal `.odt` around `body` (the children of `<office:text>`).
    fn odt(body: &str) -> Vec<u8> {
        let xml = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<office:document-content \
             xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" \
             xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" \
             xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\" office:version=\"1.3\">\
             <office:automatic-styles><style:style style:name=\"P1\"/></office:automatic-styles>\
             <office:body><office:text>{body}</office:text></office:body></office:document-content>"
        );
        archive(&[
            ("mimetype", "application/vnd.oasis.opendocument.text"),
            ("content.xml", &xml),
            (
                "styles.xml",
                "<office:document-styles><text:p>Footer text</text:p></office:document-styles>",
            ),
        ])
    }

    #[test]
    fn paragraphs_spaces_tabs_and_breaks_become_lines() {
        let body = "<text:sequence-decls><text:sequence-decl text:name=\"Table\"/></text:sequence-decls>\
            <text:h text:outline-level=\"1\">Episode 1</text:h>\n  \
            <text:p text:style-name=\"P1\"><text:span text:style-name=\"T1\">Ann:</text:span> Tom &amp; I\n   said \
            &quot;hi&quot;<text:s text:c=\"2\"/>&#8212; twice.<text:note text:note-class=\"footnote\">\
            <text:note-citation>1</text:note-citation><text:note-body><text:p>A footnote.</text:p>\
            </text:note-body></text:note></text:p>\
            <text:p/>\
            <text:p>  Ben:<text:tab/>One<text:line-break/>two.<office:annotation><dc:creator>Ed</dc:creator>\
            <text:p>A comment.</text:p></office:annotation><text:change-start text:change-id=\"c1\"/> Added.\
            <text:change-end text:change-id=\"c1\"/></text:p>\
            <text:list><text:list-item><text:p>Cal: In a list.</text:p></text:list-item></text:list>";
        let tracked = "<text:tracked-changes><text:changed-region text:id=\"c2\"><text:deletion>\
            <text:p>cut words</text:p></text:deletion></text:changed-region></text:tracked-changes>";
        assert_eq!(
            document_text(&odt(&format!("{tracked}{body}"))).expect("an odt"),
            "Episode 1\nAnn: Tom & I said \"hi\"  — twice.\n\nBen:\tOne\ntwo. Added.\nCal: In a list.\n"
        );
    }

    #[test]
    fn a_table_row_is_a_line_of_tab_separated_cells() {
        let cell = |text: &str| {
            format!("<table:table-cell office:value-type=\"string\"><text:p>{text}</text:p></table:table-cell>")
        };
        let body = format!(
            "<table:table table:name=\"Script\"><table:table-column table:number-columns-repeated=\"3\"/>\
             <table:table-row>{}{}<table:table-cell table:number-columns-repeated=\"1\"/></table:table-row>\
             <table:table-row><table:table-cell/>{}<table:covered-table-cell/></table:table-row>\
             <table:table-row>{}<table:table-cell><text:p>Hi.</text:p><text:p>Bye.</text:p></table:table-cell></table:table-row>\
             </table:table><text:p>End</text:p>",
            cell("Ann"),
            cell("Welcome."),
            cell("and more."),
            cell("Ben"),
        );
        assert_eq!(
            document_text(&odt(&body)).expect("an odt"),
            "Ann\tWelcome.\n\tand more.\nBen\tHi. Bye.\nEnd\n"
        );
    }

    #[test]
    fn hostile_counts_and_broken_xml_are_bounded() {
        let many = odt("<text:p>a<text:s text:c=\"999999999999\"/>b</text:p>");
        assert_eq!(document_text(&many).expect("an odt").len(), 1024 + 3);
        let broken = odt("<text:p>Ann: a &bogus; b</text:p>");
        let e = document_text(&broken).unwrap_err();
        assert!(
            e.contains("an OpenDocument text with an unknown XML entity `&bogus;`"),
            "{e}"
        );
    }
}
