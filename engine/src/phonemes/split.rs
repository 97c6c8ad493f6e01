//! Cutting long phoneme strings into batches the model can take in one pass.
//!
//! Kokoro's position table holds 512 tokens, 510 phonemes plus the two pads. Longer input is cut
//! at the least disruptive place, as kokoro-onnx 0.6.1's `chunker.split_phonemes` does (and
//! Banter reproduces its batches exactly): after sentence marks `.!?…`, else after clause marks
//! `,;:`, else at spaces, else mid-word. The batches are then balanced: each is at most the
//! smallest limit that still needs no more batches than filling them greedily would, so a short
//! remainder is not spoken at a different pace from its neighbours.

use super::pytext::{is_space, strip};

/// kokoro-onnx's batch limit in phonemes (characters): the model's own limit.
pub use kokoro::config::MAX_PHONEMES;

const SENTENCE_MARKS: &[char] = &['.', '!', '?', '…'];
const CLAUSE_MARKS: &[char] = &[',', ';', ':'];

/// Boundaries from least to most disruptive: whitespace runs after a sentence mark, after a
/// clause mark, anywhere.
#[derive(Clone, Copy)]
enum Boundary {
    Sentence,
    Clause,
    Space,
}

const BOUNDARIES: [Boundary; 3] = [Boundary::Sentence, Boundary::Clause, Boundary::Space];

/// `re.split` on `(?<=[marks])\s+` (or `\s+`): pieces between the matching whitespace runs.
fn split_at(chars: &[char], boundary: Boundary) -> Vec<&[char]> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        let after_mark = match boundary {
            Boundary::Sentence => i > 0 && SENTENCE_MARKS.contains(&chars[i - 1]),
            Boundary::Clause => i > 0 && CLAUSE_MARKS.contains(&chars[i - 1]),
            Boundary::Space => true,
        };
        if is_space(chars[i]) && after_mark {
            let mut end = i;
            while end < chars.len() && is_space(chars[end]) {
                end += 1;
            }
            pieces.push(&chars[start..i]);
            start = end;
            i = end;
        } else {
            i += 1;
        }
    }
    pieces.push(&chars[start..]);
    pieces
}

/// kokoro-onnx's `_atoms`: pieces no longer than `max_len`, cut at the gentlest boundary.
fn atoms(phonemes: &[char], max_len: usize, level: usize, out: &mut Vec<String>) {
    if phonemes.len() <= max_len {
        if !phonemes.is_empty() {
            out.push(phonemes.iter().collect());
        }
        return;
    }
    for (index, &boundary) in BOUNDARIES.iter().enumerate().skip(level) {
        let pieces = split_at(phonemes, boundary);
        if pieces.len() > 1 {
            for piece in pieces {
                let piece: String = piece.iter().collect();
                let piece: Vec<char> = strip(&piece).chars().collect();
                atoms(&piece, max_len, index + 1, out);
            }
            return;
        }
    }
    // One unbroken run longer than the limit: slice it rather than drop the tail.
    out.extend(
        phonemes
            .chunks(max_len)
            .map(|c| c.iter().collect::<String>()),
    );
}

/// kokoro-onnx's `_pack`: consecutive atoms grouped into batches within `limit` (joined by one
/// space), as half-open index ranges.
fn pack(lengths: &[usize], limit: usize) -> Vec<(usize, usize)> {
    let mut batches = Vec::new();
    let (mut start, mut size) = (0, 0);
    for (index, &length) in lengths.iter().enumerate() {
        let candidate = if index == start {
            length
        } else {
            size + 1 + length
        };
        if candidate > limit && index > start {
            batches.push((start, index));
            start = index;
            size = length;
        } else {
            size = candidate;
        }
    }
    if !lengths.is_empty() {
        batches.push((start, lengths.len()));
    }
    batches
}

/// Splits `phonemes` into balanced batches of at most `max_len` characters, exactly like
/// kokoro-onnx's `split_phonemes`. Empty or all-whitespace input gives no batches. A `max_len`
/// of 0 is treated as 1.
#[must_use]
pub fn split_phonemes(phonemes: &str, max_len: usize) -> Vec<String> {
    let max_len = max_len.max(1);
    let chars: Vec<char> = strip(phonemes).chars().collect();
    let mut parts = Vec::new();
    atoms(&chars, max_len, 0, &mut parts);
    if parts.is_empty() {
        return Vec::new();
    }
    let lengths: Vec<usize> = parts.iter().map(|a| a.chars().count()).collect();
    let fewest = pack(&lengths, max_len).len();
    let (mut low, mut high) = (lengths.iter().copied().max().unwrap_or(1), max_len);
    while low < high {
        let middle = usize::midpoint(low, high);
        if pack(&lengths, middle).len() <= fewest {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    pack(&lengths, low)
        .into_iter()
        .map(|(start, end)| parts[start..end].join(" "))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_one_batch() {
        assert_eq!(split_phonemes("  həlˈoʊ.  ", 510), ["həlˈoʊ."]);
        assert!(split_phonemes("", 510).is_empty());
        assert!(split_phonemes(" \n ", 510).is_empty());
    }

    #[test]
    fn prefers_sentence_then_clause_then_space() {
        assert_eq!(
            split_phonemes("aa bb. cc, dd ee.", 10),
            ["aa bb.", "cc, dd ee."]
        );
        assert_eq!(
            split_phonemes("aa bb. cc, dd ee.", 9),
            ["aa bb.", "cc,", "dd ee."]
        );
        assert_eq!(split_phonemes("aaaa, bbbb cc", 6), ["aaaa,", "bbbb", "cc"]);
    }

    #[test]
    fn hard_cut_and_balance() {
        let batches = split_phonemes(&"a".repeat(25), 10);
        assert_eq!(batches, ["a".repeat(10), "a".repeat(10), "a".repeat(5)]);
        // Greedy filling would give "aa bb cc dd" + "ee"; balancing evens the two batches out.
        assert_eq!(split_phonemes("aa bb cc dd ee", 11), ["aa bb cc", "dd ee"]);
        for b in split_phonemes(&"ab cd. ".repeat(300), 510) {
            assert!(b.chars().count() <= 510);
        }
    }

    #[test]
    fn zero_limit_does_not_panic() {
        assert_eq!(split_phonemes("ab", 0), ["a", "b"]);
    }
}
