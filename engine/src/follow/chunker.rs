//! Where text arriving a little at a time may be cut into pieces to speak (module docs in
//! [`super`]).

/// How eagerly the chunker cuts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkConfig {
    /// Characters after which a piece is cut at its last boundary (or, without one, at its
    /// last space), piece by piece; the last entry repeats. ElevenLabs'
    /// `chunk_length_schedule`. Empty: [`Self::max_chars`] alone.
    pub schedule: Vec<usize>,
    /// A later piece (not the first) is cut at a clause boundary only once it is this long;
    /// shorter clauses wait for the sentence's end, for prosody.
    pub min_clause_chars: usize,
    /// A piece with no boundary is cut at its last space once it is this long.
    pub max_chars: usize,
    /// Every message is said as it comes, whole (the client sends whole phrases: ElevenLabs'
    /// `auto_mode`); messages that would touch are joined by a space.
    pub auto: bool,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        Self {
            schedule: Vec::new(),
            min_clause_chars: 40,
            max_chars: 250,
            auto: false,
        }
    }
}

/// A run of text without whitespace this long is cut wherever it is (it is not speech).
const HARD_MAX_CHARS: usize = 2000;

/// Text waiting to be cut into pieces (see the module docs of [`super`]).
#[derive(Debug, Clone, Default)]
pub struct Chunker {
    config: ChunkConfig,
    buf: String,
    /// Pieces given out so far.
    pieces: usize,
    /// The last piece given out ended in whitespace (or none was).
    last_ends_in_space: bool,
}

/// What kind of boundary a cut is at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Space,
    Clause,
    Sentence,
}

const SENTENCE_END: &[char] = &['.', '!', '?', '…'];
const CLAUSE_END: &[char] = &[',', ';', ':', '—', '–'];
const CLOSERS: &[char] = &['"', '”', '\'', '’', ')', ']', '}', '»', '*', '_'];

impl Chunker {
    #[must_use]
    pub fn new(config: ChunkConfig) -> Self {
        Self {
            config,
            buf: String::new(),
            pieces: 0,
            last_ends_in_space: true,
        }
    }

    fn last_glued(&self) -> bool {
        self.pieces > 0 && !self.last_ends_in_space
    }

    /// Adds `text`; returns the pieces now ready to speak, in order (often none).
    pub fn push(&mut self, text: &str) -> Vec<String> {
        if self.config.auto
            && self.last_glued()
            && self.buf.is_empty()
            && text.starts_with(|c: char| !c.is_whitespace())
        {
            // Whole phrases come as messages: two that would touch ("…that." then "The…") are
            // read with a space between them.
            self.buf.push(' ');
            self.last_ends_in_space = true;
        }
        self.buf.push_str(text);
        let mut out = Vec::new();
        while let Some(cut) = self.next_cut() {
            out.push(self.take(cut));
        }
        if self.config.auto && has_speech(&self.buf) {
            // Whole phrases come as messages: each is said as it comes.
            let all = self.buf.len();
            out.push(self.take(all));
        }
        if let Some(last) = out.last() {
            self.last_ends_in_space = last.ends_with(char::is_whitespace);
        }
        out
    }

    /// Everything buffered, as one piece, cut or not (`flush`, or the end of the text);
    /// `None` when nothing but whitespace is waiting (it stays, to lead the next piece).
    pub fn flush(&mut self) -> Option<String> {
        if !has_speech(&self.buf) {
            return None;
        }
        let all = self.buf.len();
        Some(self.take(all))
    }

    /// Characters waiting.
    #[must_use]
    pub fn buffered_chars(&self) -> usize {
        self.buf.chars().count()
    }

    /// Bytes waiting (cheap).
    #[must_use]
    pub fn buffered_bytes(&self) -> usize {
        self.buf.len()
    }

    fn take(&mut self, cut: usize) -> String {
        self.pieces += 1;
        let rest = self.buf.split_off(cut);
        std::mem::replace(&mut self.buf, rest)
    }

    /// The byte offset to cut the buffer at, if a piece is ready.
    fn next_cut(&self) -> Option<usize> {
        let buf = &self.buf;
        if !has_speech(buf) {
            return None;
        }
        let cuts = boundaries(buf);
        let first = self.pieces == 0 || self.config.auto;
        // The first piece: the first boundary of any kind; with `auto`, the same each time.
        if first {
            if let Some(&(at, _)) = cuts.iter().find(|(_, k)| *k >= Kind::Clause) {
                return Some(at);
            }
        } else {
            // Later: up to the last sentence end; or a clause, once the piece is long enough.
            let last_sentence = cuts.iter().rev().find(|(_, k)| *k == Kind::Sentence);
            if let Some(&(at, _)) = last_sentence {
                return Some(at);
            }
            let long_clause = cuts.iter().rev().find(|(at, k)| {
                *k == Kind::Clause && buf[..*at].chars().count() >= self.config.min_clause_chars
            });
            if let Some(&(at, _)) = long_clause {
                return Some(at);
            }
        }
        // Long enough for the schedule (or the maximum): the last boundary, else the last space.
        let limit = self
            .config
            .schedule
            .get(
                self.pieces
                    .min(self.config.schedule.len().saturating_sub(1)),
            )
            .copied()
            .filter(|&n| n > 0)
            .unwrap_or(self.config.max_chars)
            .min(self.config.max_chars.max(1));
        let chars = buf.chars().count();
        if chars >= limit {
            // Within the limit: the last clause or sentence end, else the last space; past it
            // (one long word), the first cut there is.
            let within: Vec<(usize, Kind)> = cuts
                .iter()
                .copied()
                .filter(|(at, _)| buf[..*at].chars().count() <= limit)
                .collect();
            let best = within
                .iter()
                .rev()
                .find(|(_, k)| *k >= Kind::Clause)
                .or_else(|| within.last())
                .or_else(|| cuts.first());
            if let Some(&(at, _)) = best {
                return Some(at);
            }
        }
        if chars >= HARD_MAX_CHARS {
            return buf.char_indices().nth(HARD_MAX_CHARS).map(|(i, _)| i);
        }
        None
    }
}

/// Whether `text` has anything to say (a letter, digit or symbol; not only spaces).
fn has_speech(text: &str) -> bool {
    text.chars().any(|c| !c.is_whitespace())
}

/// Every place the buffer may be cut (byte offset after the whitespace that follows a word),
/// with the kind of boundary, in order. A cut always has whitespace before it and the text
/// after it starts a new token, so no token is ever split. Cuts at the very end are included
/// only when the whitespace has arrived; a full stop that may be an abbreviation's counts only
/// once the next word has arrived whole.
fn boundaries(buf: &str) -> Vec<(usize, Kind)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < buf.len() {
        let c = buf[i..].chars().next().unwrap_or(' ');
        if !c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        // A whitespace run [i, end): the token before it ends at i.
        let end = i + buf[i..]
            .find(|ch: char| !ch.is_whitespace())
            .unwrap_or(buf.len() - i);
        let token_start = buf[..i]
            .rfind(char::is_whitespace)
            .map_or(0, |k| k + buf[k..].chars().next().map_or(1, char::len_utf8));
        let token = &buf[token_start..i];
        let newline = buf[i..end].contains('\n');
        let kind = if token.is_empty() {
            None
        } else {
            token_kind(token, &buf[end..])
        };
        let kind = match (kind, newline) {
            (_, true) if !token.is_empty() => Some(Kind::Sentence),
            (k, _) => k,
        };
        if !has_speech(&buf[..i]) {
            // Whitespace before any word: it leads the next piece.
            i = end;
            continue;
        }
        match kind {
            // The whole run of whitespace goes with the piece before.
            Some(k) if end < buf.len() || k != Kind::Sentence || !needs_next(token) => {
                out.push((end, k));
            }
            Some(_) => {} // an abbreviation-like full stop at the very end: wait
            None => out.push((end, Kind::Space)),
        }
        i = end;
    }
    out
}

/// The boundary a token ending in punctuation makes (`None`: an ordinary word), given the
/// text after the whitespace that follows it.
fn token_kind(token: &str, after: &str) -> Option<Kind> {
    let core = token.trim_end_matches(CLOSERS);
    let last = core.chars().last()?;
    if SENTENCE_END.contains(&last) {
        let word = core.trim_end_matches(SENTENCE_END);
        let run = &core[word.len()..];
        if run == "." && crate::text::full_stop_is_ambiguous(word) {
            // "Dr. Smith", "e.g. this": only the next whole word tells.
            let next: &str = after.split(char::is_whitespace).next().unwrap_or("");
            let next_complete = after.contains(char::is_whitespace);
            if after.is_empty() || !next_complete {
                return None;
            }
            return crate::text::full_stop_ends_sentence(word, next).then_some(Kind::Sentence);
        }
        return Some(Kind::Sentence);
    }
    if CLAUSE_END.contains(&last) || core == "--" || core.ends_with("--") {
        return Some(Kind::Clause);
    }
    None
}

/// A full stop that may close an abbreviation: the cut after it waits for the next word.
fn needs_next(token: &str) -> bool {
    let core = token.trim_end_matches(CLOSERS);
    let word = core.trim_end_matches(SENTENCE_END);
    &core[word.len()..] == "." && crate::text::full_stop_is_ambiguous(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `tokens` one by one; returns the pieces in the order they were cut and what the
    /// end of the text flushed.
    fn run(config: ChunkConfig, tokens: &[&str]) -> (Vec<String>, Option<String>) {
        let mut c = Chunker::new(config);
        let mut pieces = Vec::new();
        for t in tokens {
            pieces.extend(c.push(t));
        }
        (pieces, c.flush())
    }

    fn tokens(text: &str) -> Vec<String> {
        // LLM-like: a word with its leading space, punctuation glued on, numbers in pieces.
        let mut out = Vec::new();
        let mut cur = String::new();
        for ch in text.chars() {
            if (ch == ' ' || ch == '.' || ch == ',') && !cur.trim().is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            cur.push(ch);
        }
        out.push(cur);
        out
    }

    #[test]
    fn the_first_piece_ends_at_the_first_clause_later_ones_at_sentences() {
        let text = "Well, I think so. It is a fine day, and we should go out now. Bye";
        let toks = tokens(text);
        let toks: Vec<&str> = toks.iter().map(String::as_str).collect();
        let (pieces, rest) = run(ChunkConfig::default(), &toks);
        assert_eq!(
            pieces,
            [
                "Well, ",
                "I think so. ",
                "It is a fine day, and we should go out now. "
            ]
        );
        assert_eq!(rest.as_deref(), Some("Bye"));
    }

    #[test]
    fn the_first_clause_is_cut_as_soon_as_its_space_arrives() {
        let mut c = Chunker::new(ChunkConfig::default());
        assert!(c.push("Hello").is_empty());
        assert!(c.push(" there,").is_empty(), "no space after the comma yet");
        assert_eq!(c.push(" "), ["Hello there, "]);
    }

    #[test]
    fn tokens_are_never_split() {
        for text in [
            "It costs $29.99 today. Really.",
            "Meet at 3:30 p.m. with Dr. Smith, please.",
            "See example.com/a.b?c=1,2 for more, friend.",
            "The U.S. Army, e.g. the 1st division, moved. Then it stopped.",
            "Count 1,000,000 sheep, then sleep.",
        ] {
            // Character by character, the hardest case.
            let chars: Vec<String> = text.chars().map(String::from).collect();
            let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
            let (pieces, rest) = run(ChunkConfig::default(), &chars);
            let joined: String = pieces
                .iter()
                .map(String::as_str)
                .chain(rest.as_deref())
                .collect();
            assert_eq!(joined, text);
            for p in &pieces {
                assert!(p.ends_with(char::is_whitespace), "{p:?} in {text:?}");
                for bad in ["$29.", "3:", "Dr. ", "U.S. ", "e.g. ", "1,", "example."] {
                    assert!(
                        !p.trim_end().ends_with(bad.trim_end())
                            || bad.ends_with(' ') && !p.ends_with(bad),
                        "{p:?} cut after {bad:?}"
                    );
                }
            }
            assert!(
                !pieces
                    .iter()
                    .any(|p| p.ends_with("Dr. ") || p.ends_with("U.S. ") || p.ends_with("e.g. ")),
                "{pieces:?}"
            );
        }
    }

    #[test]
    fn an_abbreviation_waits_for_the_next_word() {
        let mut c = Chunker::new(ChunkConfig::default());
        assert_eq!(c.push("Yes, "), ["Yes, "]);
        // A later piece: the sentence end after "U.S." depends on the next word.
        assert!(c.push("It moved to the U.S. ").is_empty());
        assert!(c.push("Then").is_empty(), "the word is not complete yet");
        assert_eq!(c.push(" it"), ["It moved to the U.S. "]);
        let mut c = Chunker::new(ChunkConfig::default());
        c.push("Yes, ");
        assert!(c.push("Ask Dr. ").is_empty());
        assert!(c.push("Smith now").is_empty(), "Dr. never ends a sentence");
    }

    #[test]
    fn schedule_and_maximum_cut_long_runs_at_spaces() {
        let config = ChunkConfig {
            schedule: vec![20, 30],
            ..ChunkConfig::default()
        };
        let words = "one two three four five six seven eight nine ten eleven twelve ";
        let (pieces, _) = run(config, &[words]);
        assert!(pieces.len() >= 2, "{pieces:?}");
        assert_eq!(pieces[0], "one two three four ");
        assert_eq!(pieces[1], "five six seven eight nine ten ");
        let (pieces, rest) = run(ChunkConfig::default(), &[&"word ".repeat(80)]);
        assert_eq!(pieces.len(), 1, "{pieces:?}");
        assert_eq!(pieces[0].chars().count(), 250);
        assert_eq!(rest.map(|r| r.chars().count()), Some(150));
        // No whitespace at all: cut anyway, far beyond any word.
        let blob = "x".repeat(HARD_MAX_CHARS + 5);
        let (pieces, rest) = run(ChunkConfig::default(), &[&blob]);
        assert_eq!(pieces[0].chars().count(), HARD_MAX_CHARS);
        assert_eq!(rest.as_deref(), Some("xxxxx"));
    }

    #[test]
    fn auto_mode_cuts_each_phrase_as_sent() {
        let config = ChunkConfig {
            auto: true,
            ..ChunkConfig::default()
        };
        let (pieces, rest) = run(config, &["Hello there ", "my friend.", "How are you?"]);
        assert_eq!(pieces, ["Hello there ", "my friend.", " How are you?"]);
        assert_eq!(rest, None);
    }

    #[test]
    fn whitespace_alone_is_not_a_piece_and_newlines_end_sentences() {
        let mut c = Chunker::new(ChunkConfig::default());
        assert!(c.push(" ").is_empty());
        assert_eq!(c.flush(), None);
        assert_eq!(c.push("Item one\n"), [" Item one\n"]);
        assert_eq!(c.push("Item two\nItem"), ["Item two\n"]);
    }

    proptest::proptest! {
        /// Whatever arrives, in whatever pieces: the pieces and the rest are exactly the text,
        /// every piece but a flushed one ends in whitespace (no token cut), and nothing panics.
        #[test]
        fn pieces_are_the_text_cut_only_at_whitespace(
            text in "[a-zA-Z0-9 ,.;:!?$%'\"\\-—\n]{0,300}",
            cuts in proptest::collection::vec(0usize..300, 0..40),
            schedule in proptest::collection::vec(0usize..80, 0..4),
            auto in proptest::bool::ANY,
        ) {
            let mut at: Vec<usize> = cuts.into_iter().filter(|&c| c <= text.len() && text.is_char_boundary(c)).collect();
            at.sort_unstable();
            at.dedup();
            let mut c = Chunker::new(ChunkConfig { schedule, auto, ..ChunkConfig::default() });
            let mut pieces = Vec::new();
            let mut from = 0;
            for &to in at.iter().chain(std::iter::once(&text.len())) {
                pieces.extend(c.push(&text[from..to]));
                from = to;
            }
            for p in &pieces {
                proptest::prop_assert!(auto || p.ends_with(char::is_whitespace) || p.chars().count() == HARD_MAX_CHARS, "{:?}", p);
                proptest::prop_assert!(p.chars().any(|ch| !ch.is_whitespace()));
            }
            let rest = c.flush().unwrap_or_default();
            let leftover = c.buf.clone();
            let joined: String = pieces.concat() + &rest + &leftover;
            if auto {
                // Auto mode may join touching messages with a space, nothing else.
                let bare = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
                proptest::prop_assert_eq!(bare(&joined), bare(&text));
            } else {
                proptest::prop_assert_eq!(joined, text);
            }
        }
    }
}
