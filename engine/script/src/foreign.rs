//! Files that are documents Banter does not read, told by their first bytes.
//!
//! Why: an author drops whatever the script is saved as. A PDF read as text was "invalid UTF-8
//! at byte 55" or "cannot tell which script format this is", neither of which says what to do.
//! A file that starts like a PDF, a Word 97–2003 document or an image is refused by name, with
//! the way to a format Banter reads.

/// What to do instead, said after every refusal here.
const INSTEAD: &str = "open it in the program that wrote it and save or export the script as \
    text (.txt), a Word document (.docx), an OpenDocument text (.odt) or Rich Text (.rtf)";

/// The refusal for a file whose first bytes name a document Banter cannot read, if they do.
pub(crate) fn refusal(bytes: &[u8]) -> Option<String> {
    let what = if bytes.starts_with(b"%PDF-") {
        "a PDF, whose text is laid out for printing (pages, columns, headers) and cannot be \
         read back as a script reliably"
    } else if bytes.starts_with(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1") {
        "an Office 97–2003 document (.doc, or another file of that era), which Banter does not read"
    } else if bytes.starts_with(b"\x89PNG\r\n\x1A\n")
        || bytes.starts_with(b"\xFF\xD8\xFF")
        || bytes.starts_with(b"GIF87a")
        || bytes.starts_with(b"GIF89a")
    {
        "an image, not a script"
    } else {
        return None;
    };
    Some(format!("{what}; {INSTEAD}"))
}

#[cfg(test)]
mod tests {
    use super::refusal;
    use crate::decode_script_bytes;

    #[test]
    fn a_pdf_a_doc_and_an_image_are_refused_by_name() {
        let pdf = b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\nstream\n\x00\xff\nendstream";
        let err = decode_script_bytes("episode.pdf", pdf).expect_err("a pdf");
        let message = err.to_string();
        assert!(
            message.starts_with("episode.pdf:1:1: this file is a PDF"),
            "{message}"
        );
        assert!(message.contains("(.docx)"), "{message}");
        let doc = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1\0\0\0\0";
        assert!(refusal(doc).is_some_and(|m| m.contains(".doc")));
        assert!(refusal(b"\x89PNG\r\n\x1A\n\0\0").is_some_and(|m| m.contains("image")));
        // A script that merely mentions a PDF is a script.
        assert!(refusal(b"Ann: See the %PDF- header.").is_none());
    }
}
