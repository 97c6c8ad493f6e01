//! Spreadsheets saved as CSV (`.csv`): each row becomes one line with its cells apart by tabs, so
//! a two-column script (speaker, line) reads as `Name<TAB>text` rows, as the same sheet saved as
//! tab-separated text does.
//!
//! Why a file-level step: a CSV cell may be quoted, hold commas and quotes (`""`), and run over
//! several lines, none of which a line-by-line parser can tell from speech. RFC 4180's quoting is
//! read here; a line break inside a cell becomes a space, so row N of the sheet is line N of
//! the script only until a cell spans lines (messages then count rows as lines).

/// The rows of `text` (CSV) as lines of tab-separated cells; the error says where a quote is
/// left open.
pub(crate) fn csv_text(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    // The current cell has started with a quote (so text after its closing quote is odd).
    let mut at_cell_start = true;
    let mut row = 1usize;
    let mut opened_on = 0usize;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    out.push('"');
                }
                '"' => quoted = false,
                '\r' | '\n' => {
                    if c == '\r' && chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    out.push(' ');
                }
                '\t' => out.push(' '),
                c => out.push(c),
            }
            continue;
        }
        match c {
            '"' if at_cell_start => {
                quoted = true;
                opened_on = row;
                at_cell_start = false;
            }
            ',' => {
                out.push('\t');
                at_cell_start = true;
            }
            '\r' | '\n' => {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push('\n');
                row += 1;
                at_cell_start = true;
            }
            '\t' => {
                out.push(' ');
                at_cell_start = false;
            }
            c => {
                out.push(c);
                at_cell_start = false;
            }
        }
    }
    if quoted {
        return Err(format!(
            "a CSV file whose quoted cell opened on row {opened_on} never closes; close it with \
             `\"` (a quote inside a cell is written `\"\"`)"
        ));
    }
    // Empty trailing cells (`Ann,Hi,,`) are columns the sheet had, not text.
    let lines: Vec<&str> = out.lines().map(|l| l.trim_end_matches('\t')).collect();
    let mut joined = lines.join("\n");
    joined.push('\n');
    Ok(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_tab_separated_lines_with_quotes_read() {
        let sheet = "Speaker,Line\r\nAnn,\"Hello, Ben.\"\r\nBen,\"She said \"\"hi\"\",\nthen left.\",,\r\nAnn,Bye.";
        assert_eq!(
            csv_text(sheet).expect("a sheet"),
            "Speaker\tLine\nAnn\tHello, Ben.\nBen\tShe said \"hi\", then left.\nAnn\tBye.\n"
        );
    }

    #[test]
    fn an_open_quote_is_an_error_naming_its_row() {
        let e = csv_text("Ann,Hi\nBen,\"Oops\nAnn,Bye\n").unwrap_err();
        assert!(e.contains("row 2"), "{e}");
    }
}
