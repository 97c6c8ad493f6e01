//! Timestamps transcripts put before or after a name (`[00:01:02] Priya:`, `Priya (0:09):`),
//! which are neither the name nor speech.

/// Byte length of a timestamp and the spaces after it at the start of `s` (`[00:01:02] `,
/// `(1:02) `, `00:01:02.5 `, `0:07 `), or 0. Transcripts put one before or after each name.
pub(crate) fn timestamp_len(s: &str) -> usize {
    let (open, inner) = match s.chars().next() {
        Some(c @ ('[' | '(')) => (Some(c), &s[1..]),
        _ => (None, s),
    };
    let digits = |t: &str| t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let mut at = 0;
    let mut groups = 0;
    loop {
        let n = digits(&inner[at..]);
        if n == 0 || n > 2 && groups > 0 || n > 3 {
            return 0;
        }
        at += n;
        groups += 1;
        if groups < 3 && inner[at..].starts_with(':') && digits(&inner[at + 1..]) == 2 {
            at += 1;
        } else {
            break;
        }
    }
    if groups < 2 {
        return 0;
    }
    if inner[at..].starts_with(['.', ',']) && digits(&inner[at + 1..]) > 0 {
        at += 1 + digits(&inner[at + 1..]);
    }
    let mut len = at + usize::from(open.is_some());
    if let Some(open) = open {
        let close = if open == '[' { ']' } else { ')' };
        if !inner[at..].starts_with(close) {
            return 0;
        }
        len += 1;
    }
    let rest = &s[len..];
    let spaces = rest.len() - rest.trim_start().len();
    if rest.is_empty() || spaces > 0 || rest.starts_with(':') {
        len + spaces
    } else {
        0
    }
}

/// `name` without a timestamp after it (`Sarah Chen  0:07`, `Ana (00:01:02)`, `Bo [1:02]`, Slack's
/// `Alex Chen  10:32 AM`) or before it (`[00:00:04] Bob`, a speaker line of Descript's); a name
/// in brackets before a timestamp is the name (`[Alex Chen] 10:32:05`, Zoom's transcripts).
pub(crate) fn without_timestamp(name: &str) -> &str {
    let untimed = without_time(name);
    if untimed.len() < name.trim_end().len() {
        if let Some(inner) = untimed
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .filter(|n| !n.contains(['[', ']']) && !n.trim().is_empty())
        {
            return inner.trim();
        }
    }
    untimed
}

/// A clock's half of the day after a time: `AM`, `pm`, `a.m.`.
fn is_meridiem(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "am" | "pm" | "a.m." | "p.m."
    )
}

fn without_time(name: &str) -> &str {
    let mut trimmed = name.trim_end();
    // `10:32 AM`, `10:32am`: the half of the day goes with the clock time before it.
    let ends_in_clock = |s: &str| {
        let time = s
            .trim_end()
            .rsplit(char::is_whitespace)
            .next()
            .unwrap_or("");
        !time.is_empty() && timestamp_len(time) == time.len() && time.contains(':')
    };
    if let Some((before, last)) = trimmed.rsplit_once(char::is_whitespace) {
        if is_meridiem(last) && ends_in_clock(before) {
            trimmed = before.trim_end();
        }
    }
    let cut = trimmed.len().saturating_sub(2);
    if trimmed.get(cut..).is_some_and(is_meridiem) && ends_in_clock(&trimmed[..cut]) {
        trimmed = &trimmed[..cut];
    }
    let lead = timestamp_len(trimmed);
    let trimmed = if lead > 0 && lead < trimmed.len() {
        &trimmed[lead..]
    } else {
        trimmed
    };
    let words: Vec<(usize, &str)> = trimmed
        .split_whitespace()
        .map(|w| (w.as_ptr() as usize - trimmed.as_ptr() as usize, w))
        .collect();
    match words.as_slice() {
        [.., (at, last)] if words.len() > 1 && timestamp_len(last) == last.len() => {
            trimmed[..*at].trim_end()
        }
        _ => trimmed,
    }
}
