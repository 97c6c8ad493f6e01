//! Timestamps transcripts and chat exports put before or after a name (`[00:01:02] Priya:`,
//! `Priya (0:09):`, WhatsApp's `[12/03/2024, 10:32:05] Priya:`, Discord's `Priya — Today at
//! 10:32 AM`), which are neither the name nor speech.

/// Byte length of a timestamp and the spaces after it at the start of `s` (`[00:01:02] `,
/// `(1:02) `, `00:01:02.5 `, `0:07 `, a chat's date and time), or 0. Transcripts put one before
/// or after each name.
pub(crate) fn timestamp_len(s: &str) -> usize {
    clock_len(s).max(chat_stamp_len(s))
}

/// `[00:01:02] `, `(1:02) `, `00:01:02.5 `, `0:07 `: a recording's clock.
fn clock_len(s: &str) -> usize {
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

/// A chat export's date and time before a name, with what separates them from it: WhatsApp's
/// `[12/03/2024, 10:32:05] ` (iPhone) and `12/03/2024, 10:32 - ` (Android), `[3/12/24, 9:05 PM] `,
/// `[10:32, 12/03/2024] `, and a log's `2024-03-12 10:32:05 `; 0 when `s` does not start so.
pub(crate) fn chat_stamp_len(s: &str) -> usize {
    let bracketed = s.starts_with('[');
    let inner = &s[usize::from(bracketed)..];
    let Some(at) = date_then_clock(inner).or_else(|| clock_then_date(inner)) else {
        return 0;
    };
    let mut len = usize::from(bracketed) + at;
    if bracketed {
        if !s[len..].starts_with(']') {
            return 0;
        }
        len += 1;
    }
    let rest = &s[len..];
    let mut after = rest.trim_start();
    // Android's ` - ` between the time and the name.
    if let Some(dashed) = after
        .strip_prefix(['-', '–'])
        .filter(|r| r.starts_with(' '))
    {
        after = dashed.trim_start();
    } else if after.len() == rest.len() && !after.is_empty() {
        return 0;
    }
    s.len() - after.len()
}

/// `12/03/2024, 10:32:05 PM` or `2024-03-12 10:32`: its byte length.
fn date_then_clock(s: &str) -> Option<usize> {
    let date = date_len(s)?;
    let rest = &s[date..];
    let rest = rest.strip_prefix(',').unwrap_or(rest);
    let gap = rest.len() - rest.trim_start().len();
    (gap > 0).then_some(())?;
    let clock = chat_clock_len(&rest[gap..])?;
    Some(s.len() - rest.len() + gap + clock)
}

/// `10:32, 12/03/2024`: its byte length.
fn clock_then_date(s: &str) -> Option<usize> {
    let clock = chat_clock_len(s)?;
    let rest = s[clock..].strip_prefix(',')?.trim_start();
    let date = date_len(rest)?;
    Some(s.len() - rest.len() + date)
}

/// A numeric date: `12/03/2024`, `3/12/24`, `12.03.24`, `2024-03-12`.
fn date_len(s: &str) -> Option<usize> {
    let digits = |t: &str| t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let first = digits(s);
    let sep = s[first..]
        .chars()
        .next()
        .filter(|c| matches!(c, '/' | '.' | '-'))?;
    let second = digits(&s[first + 1..]);
    let third_at = first + 1 + second;
    s[third_at..].strip_prefix(sep)?;
    let third = digits(&s[third_at + 1..]);
    let ok = if first == 4 {
        sep == '-' && second == 2 && third == 2
    } else {
        (1..=2).contains(&first) && (1..=2).contains(&second) && matches!(third, 2 | 4)
    };
    ok.then_some(third_at + 1 + third)
}

/// `10:32`, `9:05:17`, `9:05 PM`, `9:05\u{202f}pm` (WhatsApp's narrow space): its byte length.
fn chat_clock_len(s: &str) -> Option<usize> {
    let digits = |t: &str| t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let hours = digits(s);
    if !(1..=2).contains(&hours) || !s[hours..].starts_with(':') || digits(&s[hours + 1..]) != 2 {
        return None;
    }
    let mut at = hours + 3;
    if s[at..].starts_with(':') && digits(&s[at + 1..]) == 2 {
        at += 3;
    }
    let rest = &s[at..];
    let spaced = rest.trim_start_matches([' ', '\u{a0}', '\u{202f}']);
    let word = spaced
        .split(|c: char| c.is_whitespace() || c == ']' || c == ',')
        .next()
        .unwrap_or("");
    if is_meridiem(word) {
        at += rest.len() - spaced.len() + word.len();
    }
    Some(at)
}

/// What a chat export writes in place of a message it could not export (`<Media omitted>`,
/// `image omitted`, `<attached: 0012-PHOTO….jpg>`, a deleted message, a missed call): never
/// speech.
pub(crate) fn is_chat_placeholder(said: &str) -> bool {
    let said = said.trim().trim_start_matches('\u{200e}').trim();
    let lower = said.to_lowercase();
    let bare = lower.trim_start_matches('<').trim_end_matches('>');
    let omitted = bare.strip_suffix(" omitted").is_some_and(|what| {
        matches!(
            what,
            "media" | "image" | "video" | "audio" | "sticker" | "gif" | "document" | "contact card"
        )
    });
    omitted
        || (lower.starts_with("<attached: ") && lower.ends_with('>'))
        || matches!(
            lower.as_str(),
            "this message was deleted"
                | "you deleted this message"
                | "missed voice call"
                | "missed video call"
                | "null"
                | "waiting for this message. this may take a while."
        )
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

/// Discord's speaker line: `Alice — Today at 10:32 AM`, `Alice — Yesterday at 9:05 PM`,
/// `Alice — 12/03/2024 10:32 AM`; the name before the dash.
fn without_chat_time(name: &str) -> Option<&str> {
    let (who, when) = name
        .rsplit_once(" — ")
        .or_else(|| name.rsplit_once(" - "))?;
    let when = when.trim();
    let whole = match ["Today at ", "Yesterday at "]
        .iter()
        .find_map(|day| when.strip_prefix(day))
    {
        Some(clock) => chat_clock_len(clock) == Some(clock.len()),
        None => date_then_clock(when) == Some(when.len()),
    };
    let who = who.trim_end();
    (whole && !who.is_empty()).then_some(who)
}

fn without_time(name: &str) -> &str {
    if let Some(who) = without_chat_time(name) {
        return who;
    }
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
