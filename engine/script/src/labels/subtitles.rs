//! Subtitle files (SRT, VTT) used as scripts: a transcript exported from an editor or a
//! captioning service, with speakers as `HOST:` labels or as VTT voice tags (`<v Host>`).
//!
//! Why: their cue numbers and timings are not speech, and nothing else explains them, so they
//! used to join the previous turn and be read aloud ("two zero zero-zero zero-zero four…").
//! The timings are the old recording's, not this episode's, so they are dropped, and the cue
//! text is read like any other line.

use super::timestamps::timestamp_len;

/// `00:00:04,500 --> 00:00:07,000` (SRT) or `00:04.500 --> 00:07.000 align:start` (VTT): a
/// cue's timing line.
pub(crate) fn is_cue_timing(trimmed: &str) -> bool {
    let Some((start, end)) = trimmed.split_once("-->") else {
        return false;
    };
    let start = start.trim();
    let end = end.trim_start();
    let end_stamp = end.split_whitespace().next().unwrap_or_default();
    let whole = |s: &str| !s.is_empty() && timestamp_len(s) == s.len();
    whole(start) && whole(end_stamp)
}

/// A cue's number: a line of digits alone (SRT numbers every cue), when the next line is its
/// timing.
pub(crate) fn is_cue_number(trimmed: &str, next: Option<&str>) -> bool {
    !trimmed.is_empty()
        && trimmed.len() <= 9
        && trimmed.bytes().all(|b| b.is_ascii_digit())
        && next.is_some_and(|n| is_cue_timing(n.trim()))
}

/// VTT's own lines that are not cues: the `WEBVTT` header, and the first line of a `NOTE`,
/// `STYLE` or `REGION` block (the caller skips the rest of the block).
pub(crate) fn is_webvtt_block(trimmed: &str) -> bool {
    ["WEBVTT", "NOTE", "STYLE", "REGION"].iter().any(|kw| {
        trimmed
            .strip_prefix(kw)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    })
}

/// A VTT voice tag opening a cue's text: `<v Host>`, `<v.loud Dr. Okafor>`. Returns the
/// name's byte range in `rest` and where the speech starts.
pub(crate) fn voice_tag(rest: &str) -> Option<(usize, usize, usize)> {
    let after = rest.strip_prefix("<v")?;
    if !after.starts_with([' ', '.']) {
        return None;
    }
    let close = after.find('>')?;
    let inside = &after[..close];
    // Classes (`.loud`) come before the name.
    let name_start = inside.find(' ')? + 1;
    let name = inside[name_start..].trim();
    if name.is_empty() || name.contains('<') {
        return None;
    }
    let name_at =
        2 + name_start + (inside[name_start..].len() - inside[name_start..].trim_start().len());
    let speech_at = 2 + close + 1;
    let speech_at = speech_at + (rest[speech_at..].len() - rest[speech_at..].trim_start().len());
    Some((name_at, name_at + name.len(), speech_at))
}

/// `text` without VTT's inline tags (`</v>`, `<i>…</i>`, `<c.yellow>`, `<00:00:05.000>`),
/// which are markup, not words.
pub(crate) fn strip_cue_tags(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('<') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        if let Some(close) = tail.find('>').filter(|&close| is_cue_tag(&tail[1..close])) {
            rest = &tail[close + 1..];
        } else {
            out.push('<');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// The inside of `<…>` as a VTT cue tag: `v …`, `i`, `/b`, `c.class`, a timestamp.
fn is_cue_tag(inside: &str) -> bool {
    let inside = inside.strip_prefix('/').unwrap_or(inside);
    if !inside.is_empty() && timestamp_len(inside) == inside.len() {
        return true;
    }
    let tag = inside.split(['.', ' ']).next().unwrap_or_default();
    matches!(tag, "v" | "i" | "b" | "u" | "c" | "lang" | "ruby" | "rt")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_numbers_and_voices() {
        assert!(is_cue_timing("00:00:04,500 --> 00:00:07,000"));
        assert!(is_cue_timing("00:04.500 --> 00:07.000 align:start line:0"));
        assert!(!is_cue_timing("Host: it went from 3:00 --> 4:00, see?"));
        assert!(!is_cue_timing("A --> B"));
        assert!(is_cue_number("12", Some("00:01:00,000 --> 00:01:02,000")));
        assert!(!is_cue_number("12", Some("Host: hi")));
        assert!(is_webvtt_block("WEBVTT"));
        assert!(is_webvtt_block("NOTE recorded live"));
        assert!(!is_webvtt_block("Notes: bring coffee"));
        let line = "<v.loud Dr. Okafor> Hello there.</v>";
        let (a, b, s) = voice_tag(line).unwrap();
        assert_eq!(
            (&line[a..b], &line[s..]),
            ("Dr. Okafor", "Hello there.</v>")
        );
        assert_eq!(voice_tag("<voice>hi"), None);
        assert_eq!(
            strip_cue_tags("Hello <i>there</i>.</v> 2 < 3 <00:00:05.000>ok"),
            "Hello there. 2 < 3 ok"
        );
    }
}
