//! Web addresses and e-mail: "example.com" is "example dot com", "anna@mail.org" is "anna at
//! mail dot org".
//!
//! espeak reads dots as pauses or spells them out inconsistently. Addresses are recognised by a
//! scheme, a "www." prefix or a final label that is a common top-level domain, so "Node.js" or
//! "file.txt" stay as written. The scheme ("https://") is not read, as presenters do not.

use super::rules::{Ctx, Hit};
use super::{abbreviations, numbers, Dialect};

/// Top-level domains that make "word.tld" an address.
const TLDS: &[&str] = &[
    "ai", "app", "au", "be", "biz", "blog", "ca", "ch", "cn", "co", "com", "de", "dev", "edu",
    "es", "eu", "fm", "fr", "gg", "gov", "in", "info", "io", "it", "jp", "ly", "me", "mil", "net",
    "nl", "no", "org", "ru", "se", "tech", "tv", "uk", "us", "xyz", "social", "online", "site",
    "news", "live", "club", "studio", "art", "cloud", "email",
];

const SCHEMES: &[&str] = &["https://", "http://", "ftp://"];

fn label_ok(label: &str) -> bool {
    !label.is_empty()
        && label
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
}

/// Whether `host` is a domain name with a known top-level domain.
fn is_domain(host: &str) -> bool {
    let labels: Vec<&str> = host.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|l| label_ok(l))
        && labels[0].chars().any(char::is_alphabetic)
        && labels.last().is_some_and(|tld| {
            // "end.In" is a missing space, not an address: no mixed-case domains.
            let lower = tld.to_ascii_lowercase();
            (*tld == lower || *tld == tld.to_ascii_uppercase()) && TLDS.contains(&lower.as_str())
        })
}

/// A handle that names its server, as people read it: Mastodon's `sam@mastodon.social` is "sam
/// at mastodon dot social", Bluesky's `sam.bsky.social` "sam dot bsky dot social"; `None` for a
/// plain handle (`banter`).
pub(super) fn handle_address(handle: &str, d: Dialect) -> Option<String> {
    if let Some((user, domain)) = handle.split_once('@') {
        return (label_ok(user) && is_domain(domain))
            .then(|| format!("{} at {}", say(user, d), say(domain, d)));
    }
    is_domain(handle).then(|| say(handle, d))
}

/// Address or e-mail at token `i`.
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let core = ctx.toks[i].core;
    let d = ctx.dialect;
    if let Some((local, domain)) = core.split_once('@') {
        if !local.is_empty() && is_domain(domain) && !local.contains(['/', ':']) {
            return Some(Hit::new(
                1,
                format!("{} at {}", say(local, d), say(domain, d)),
            ));
        }
        return None;
    }
    let (scheme, rest) = SCHEMES
        .iter()
        .find_map(|s| core.strip_prefix(s).map(|r| (true, r)))
        .unwrap_or((false, core));
    let host = rest.split(['/', '?', '#', ':']).next().unwrap_or("");
    // "ASP.NET" is a platform written in capitals, not a host.
    let platform = !scheme && host.rsplit_once('.').is_some_and(|(_, tld)| tld == "NET");
    if !(scheme || host.starts_with("www.") || is_domain(host)) || host.is_empty() || platform {
        return None;
    }
    Some(Hit::new(1, say(spoken_part(rest), d)))
}

/// The part of an address a presenter reads: a short query (`?ref=pod`) is read, but not a
/// tracking query (`?utm_source=…&utm_medium=…`) or an opaque identifier (a video's
/// `?v=dQw4w9WgXcQ`, a hash in the path): the listener cannot type those from hearing them, and
/// spelled out they run for ten seconds. The address is cut before the first such part.
fn spoken_part(rest: &str) -> &str {
    let (path, query) = match rest.find(['?', '#']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    let mut end = 0;
    for segment in path.split_inclusive('/') {
        if segment.split(['-', '_', '.', '/']).any(is_opaque) {
            return rest[..end].trim_end_matches('/');
        }
        end += segment.len();
    }
    let readable = query.len() <= 16
        && !query.contains('&')
        && !query[usize::from(!query.is_empty())..]
            .split(['=', '-', '_'])
            .any(is_opaque);
    let keep = if readable { rest } else { path };
    keep.trim_end_matches('/')
}

/// `dQw4w9WgXcQ`, `3f9a2c7e1b`: an identifier nobody reads aloud (letters and digits mixed
/// past the length of a word, in mixed case or with several digits).
fn is_opaque(token: &str) -> bool {
    let digits = token.chars().filter(char::is_ascii_digit).count();
    let upper = token.chars().any(|c| c.is_ascii_uppercase());
    let lower = token.chars().any(|c| c.is_ascii_lowercase());
    token.len() >= 8
        && token.chars().all(|c| c.is_ascii_alphanumeric())
        && digits >= 1
        && (upper || lower)
        && ((upper && lower) || digits >= 3)
}

/// An address read piece by piece with its separators.
fn say(address: &str, d: Dialect) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut piece = String::new();
    let flush = |piece: &mut String, words: &mut Vec<String>| {
        if !piece.is_empty() {
            words.push(say_piece(piece, d));
            piece.clear();
        }
    };
    for c in address.chars() {
        let sep = match c {
            '.' => "dot",
            '/' => "slash",
            '-' => "dash",
            '_' => "underscore",
            '?' => "question mark",
            '=' => "equals",
            '&' => "and",
            '#' => "hash",
            ':' => "colon",
            '~' => "tilde",
            '%' => "percent",
            '+' => "plus",
            '@' => "at",
            _ => {
                piece.push(c);
                continue;
            }
        };
        flush(&mut piece, &mut words);
        words.push(sep.to_owned());
    }
    flush(&mut piece, &mut words);
    words.join(" ")
}

fn say_piece(piece: &str, d: Dialect) -> String {
    if piece.eq_ignore_ascii_case("www") {
        return "w-w-w".to_owned();
    }
    if piece.eq_ignore_ascii_case("io") {
        return "I-O".to_owned(); // espeak says "ee-oh"; ".io" is spelled
    }
    if numbers::all_digits(piece) {
        // "sam_2024", "/2025": a year in an address is said as one.
        if let Some(year) = piece
            .parse::<u64>()
            .ok()
            .filter(|y| piece.len() == 4 && (1900..=2099).contains(y))
        {
            return numbers::year(year, d);
        }
        return if piece.len() <= 4 {
            numbers::integer(piece, d)
        } else {
            numbers::digits(piece)
        };
    }
    if piece.chars().any(|c| c.is_ascii_digit()) {
        return super::numeric::mixed(piece, d).unwrap_or_else(|| piece.to_owned());
    }
    abbreviations::letters(piece)
}
