//! Matching the words a text says with the words espeak phonemized it as.
//!
//! espeak reads the normalised text in one go (as the audio needs: stress and reductions depend
//! on the neighbours) and gives its phonemes word by word, but not always one phoneme word per
//! written word: it joins a few pairs, splits some compounds and hyphenated words, and now and
//! then says nothing for a stray symbol. When the counts agree, word *k* is phoneme word *k*.
//! When they do not, a dynamic programme finds the cheapest monotone matching, where a said word
//! may take one to three phoneme words, two or three said words may share one (split in
//! proportion to their expected lengths), and a word on either side may go unmatched; the cost
//! of a step is how far the lengths disagree, plus a fixed price for anything but one-to-one.
//! Expected lengths come from phonemizing the word alone, so the comparison is phonemes to
//! phonemes.

/// What one said word got.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Matched {
    /// Phoneme words (indices); empty (at the place it would be) when it got none.
    pub phones: std::ops::Range<usize>,
    /// The part of those phoneme words' letters that is this word's, as fractions: `0.0..1.0`
    /// unless several said words share one phoneme word.
    pub part: (f64, f64),
}

/// The price of a step that is not one-to-one, per extra word.
const REGROUP: f64 = 0.35;
/// The price of leaving a word unmatched.
const UNMATCHED: f64 = 0.8;
/// The most words one side of a step may take.
const MAX_RUN: usize = 3;

/// Matches said words (expected phoneme lengths) to phoneme words (actual lengths).
pub(super) fn align(said: &[usize], phones: &[usize]) -> Vec<Matched> {
    if said.len() == phones.len() {
        return (0..said.len())
            .map(|i| Matched {
                phones: i..i + 1,
                part: (0.0, 1.0),
            })
            .collect();
    }
    let (n, m) = (said.len(), phones.len());
    let mut cost = vec![vec![f64::INFINITY; m + 1]; n + 1];
    let mut from = vec![vec![(0usize, 0usize); m + 1]; n + 1];
    cost[0][0] = 0.0;
    for i in 0..=n {
        for j in 0..=m {
            let here = cost[i][j];
            if !here.is_finite() {
                continue;
            }
            let mut relax = |a: usize, b: usize, step: f64| {
                let (ni, nj) = (i + a, j + b);
                if ni <= n && nj <= m && here + step < cost[ni][nj] {
                    cost[ni][nj] = here + step;
                    from[ni][nj] = (a, b);
                }
            };
            for b in 1..=MAX_RUN {
                for a in 1..=MAX_RUN {
                    if a > 1 && b > 1 {
                        continue;
                    }
                    if i + a <= n && j + b <= m {
                        let e: usize = said[i..i + a].iter().sum();
                        let l: usize = phones[j..j + b].iter().sum();
                        relax(a, b, mismatch(e, l) + REGROUP * (a + b - 2) as f64);
                    }
                }
            }
            relax(1, 0, UNMATCHED);
            relax(0, 1, UNMATCHED);
        }
    }
    let mut steps = Vec::new();
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        let (a, b) = from[i][j];
        steps.push((i - a, j - b, a, b));
        i -= a;
        j -= b;
    }
    steps.reverse();
    let mut out = Vec::with_capacity(n);
    for (i, j, a, b) in steps {
        match (a, b) {
            (0, _) => {}
            (1, b) => out.push(Matched {
                phones: j..j + b,
                part: (0.0, 1.0),
            }),
            (a, _) => {
                let total: usize = said[i..i + a].iter().sum::<usize>().max(1);
                let mut done = 0;
                for &e in &said[i..i + a] {
                    let start = done as f64 / total as f64;
                    done += e;
                    out.push(Matched {
                        phones: j..j + 1,
                        part: (start, done as f64 / total as f64),
                    });
                }
            }
        }
    }
    out
}

/// How far two lengths disagree, 0 (equal) to 1.
fn mismatch(expected: usize, actual: usize) -> f64 {
    let (e, a) = (expected as f64, actual as f64);
    (e - a).abs() / e.max(a).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phones_of(m: &[Matched]) -> Vec<std::ops::Range<usize>> {
        m.iter().map(|x| x.phones.clone()).collect()
    }

    #[test]
    fn equal_counts_match_one_to_one() {
        let m = align(&[3, 4, 5], &[9, 1, 2]);
        assert_eq!(phones_of(&m), [0..1, 1..2, 2..3]);
    }

    #[test]
    fn a_joined_pair_shares_one_phoneme_word() {
        // "in" "the" "morning" said as "ɪnðə" "mˈɔːɹnɪŋ".
        let m = align(&[2, 2, 7], &[4, 7]);
        assert_eq!(phones_of(&m), [0..1, 0..1, 1..2]);
        assert_eq!(m[0].part, (0.0, 0.5));
        assert_eq!(m[1].part, (0.5, 1.0));
    }

    #[test]
    fn a_split_word_takes_both_phoneme_words() {
        // "twenty-five" "cats" said as "twˈɛnti" "fˈaɪv" "kˈæts".
        let m = align(&[11, 4], &[6, 4, 4]);
        assert_eq!(phones_of(&m), [0..2, 2..3]);
    }

    #[test]
    fn a_silent_word_gets_nothing_and_the_rest_still_match() {
        let m = align(&[5, 8, 6], &[5, 6]);
        assert_eq!(phones_of(&m), [0..1, 1..1, 1..2]);
        // A short word is more likely joined to its neighbour than dropped.
        let m = align(&[5, 1, 6], &[5, 6]);
        assert_eq!(phones_of(&m), [0..1, 1..2, 1..2]);
    }

    #[test]
    fn every_said_word_is_matched_once_in_order() {
        let said = [3, 1, 4, 1, 5, 9, 2, 6];
        for phones in [
            &[3usize, 5, 1, 5, 9, 8][..],
            &[4, 4, 1, 1, 5, 9, 2, 3, 3],
            &[40],
        ] {
            let m = align(&said, phones);
            assert_eq!(m.len(), said.len());
            assert!(m.windows(2).all(|w| w[0].phones.start <= w[1].phones.start));
            assert!(m.iter().all(|x| x.phones.end <= phones.len()));
        }
        assert!(align(&[], &[]).is_empty());
        assert_eq!(align(&[2, 2], &[]).len(), 2);
    }
}
