//! Rendering one sentence: tokens go through the rule modules in priority order and come out as
//! words, with the punctuation around them kept for Kokoro's pauses.
//!
//! A rule sees the whole sentence through [`Ctx`] and claims one or more tokens with a [`Hit`].
//! Order matters where patterns overlap: addresses first (they contain digits and dots), then
//! written dates, numbers, Roman numerals, abbreviations and symbols.

use std::ops::RangeInclusive;

use super::tokens::{tokenize, Token};
use super::{
    abbreviations, dates, heteronyms, interjections, notes, numeric, phrases, roman, scripture,
    symbols, web, Dialect,
};

/// What a rule sees: the sentence's tokens and the reading settings.
pub(super) struct Ctx<'a> {
    pub toks: &'a [Token<'a>],
    pub dialect: Dialect,
    /// Most words are in capitals: capitals are emphasis, not acronyms.
    pub shouting: bool,
}

impl Ctx<'_> {
    /// The next token's core when only whitespace separates it from token `i`.
    pub fn next_core(&self, i: usize) -> Option<&str> {
        let next = self.toks.get(i + 1)?;
        (self.toks[i].bare_end() && next.lead.is_empty()).then_some(next.core)
    }

    /// Like [`Self::next_core`], but a full stop after token `i` may come between.
    pub fn next_core_after_period(&self, i: usize) -> Option<&str> {
        let next = self.toks.get(i + 1)?;
        (matches!(self.toks[i].trail, "" | ".") && next.lead.is_empty()).then_some(next.core)
    }

    /// The previous token's core when only whitespace or a full stop separates it from token `i`
    /// (the stop may belong to an abbreviation that disappears when read: "U.S. Jr").
    pub fn prev_core_after_period(&self, i: usize) -> Option<&str> {
        let prev = self.toks.get(i.checked_sub(1)?)?;
        (matches!(prev.trail, "" | ".") && self.toks[i].lead.is_empty()).then_some(prev.core)
    }

    /// Whether one of the `back` tokens before token `i` (1 is the one just before) is one of
    /// `words`, in any case: the context that decides a reading a few words on ("text STOP
    /// to 55555", "the score was 12/20").
    pub fn word_before(&self, i: usize, back: RangeInclusive<usize>, words: &[&str]) -> bool {
        back.into_iter().any(|k| {
            i.checked_sub(k)
                .and_then(|k| self.toks.get(k))
                .is_some_and(|t| words.contains(&t.core.to_lowercase().as_str()))
        })
    }

    /// The previous token's core when only whitespace separates it from token `i`.
    pub fn prev_core(&self, i: usize) -> Option<&str> {
        let prev = self.toks.get(i.checked_sub(1)?)?;
        (prev.bare_end() && self.toks[i].lead.is_empty()).then_some(prev.core)
    }
}

/// A rule's claim: `span` tokens from the current one are read as `text`.
#[derive(Debug)]
pub(super) struct Hit {
    pub span: usize,
    pub text: String,
    /// The abbreviation's full stop is part of it, not the sentence's (kept at sentence end).
    pub eat_period: bool,
    /// The first token's leading punctuation was part of the pattern ("(555) 123-4567").
    pub drop_lead: bool,
    /// A mark at the start of the last token's trailing punctuation that belongs to the
    /// pattern: the inch mark of `5'7"`, the foot mark of `6'`.
    pub eat_mark: Option<char>,
}

impl Hit {
    pub fn new(span: usize, text: String) -> Self {
        Hit {
            span,
            text,
            eat_period: false,
            drop_lead: false,
            eat_mark: None,
        }
    }
}

fn apply(ctx: &Ctx<'_>, i: usize) -> Hit {
    symbols::math(ctx, i)
        .or_else(|| scripture::rule(ctx, i))
        .or_else(|| notes::rule(ctx, i))
        .or_else(|| web::rule(ctx, i))
        .or_else(|| dates::rule(ctx, i))
        .or_else(|| phrases::rule(ctx, i))
        .or_else(|| roman::rule(ctx, i))
        .or_else(|| heteronyms::rule(ctx, i))
        .or_else(|| interjections::rule(ctx, i))
        .or_else(|| abbreviations::rule(ctx, i))
        .or_else(|| symbols::rule(ctx, i))
        .unwrap_or_else(|| Hit::new(1, plain(ctx.toks[i].core, ctx.dialect)))
}

/// A respelling with the capital of the word it replaces, if that had one ("Used" is "Yoost").
pub(super) fn keep_case(word: &str, said: &str) -> String {
    let mut chars = said.chars();
    match chars.next() {
        Some(first) if word.starts_with(char::is_uppercase) => {
            first.to_uppercase().chain(chars).collect()
        }
        _ => said.to_owned(),
    }
}

/// A word no rule claimed: silent symbols dropped, a hyphen cut-off made a dash ("think-"),
/// and any digits still there read as numbers, so none reaches espeak.
fn plain(core: &str, dialect: Dialect) -> String {
    let core = symbols::strip_silent(core);
    if core.contains(|c: char| c.is_ascii_digit()) {
        if let Some(words) = numeric::mixed(&core, dialect) {
            return words;
        }
    }
    if core.len() > 1 {
        if let Some(word) = core.strip_suffix('-') {
            return format!("{word}—");
        }
        if let Some(word) = core.strip_prefix('-') {
            return format!("—{word}");
        }
    }
    core
}

/// Punctuation around words, in the forms Kokoro's vocabulary has.
fn push_punctuation(out: &mut String, marks: &str) {
    for c in marks.chars() {
        match c {
            '[' | '{' => out.push('('),
            ']' | '}' => out.push(')'),
            '*' | '_' | '¡' | '¿' => {}
            c => out.push(c),
        }
    }
}

/// One claimed stretch of the sentence: where its words are in the rendered sentence, and the
/// tokens they read (without the punctuation around them), both as byte ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Claim {
    pub spoken: std::ops::Range<usize>,
    pub source: std::ops::Range<usize>,
}

/// One sentence of cleaned text in words, with the claim behind every stretch of words.
pub(super) fn render(sentence: &str, dialect: Dialect) -> (String, Vec<Claim>) {
    let toks = tokenize(sentence);
    let cores: Vec<&str> = toks.iter().map(|t| t.core).collect();
    let ctx = Ctx {
        toks: &toks,
        dialect,
        shouting: abbreviations::is_shouted(&cores),
    };
    let offset = |core: &str| core.as_ptr() as usize - sentence.as_ptr() as usize;
    let mut out = String::with_capacity(sentence.len() + sentence.len() / 2);
    let mut claims = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let hit = apply(&ctx, i);
        let span = hit.span.clamp(1, toks.len() - i);
        let (first, last) = (&toks[i], &toks[i + span - 1]);
        let sentence_end = i + span == toks.len();
        let trail = if hit.eat_period && !sentence_end {
            last.trail.strip_prefix('.').unwrap_or(last.trail)
        } else {
            last.trail
        };
        let trail = hit
            .eat_mark
            .and_then(|m| trail.strip_prefix(m))
            .unwrap_or(trail);
        let mut lead = String::new();
        if !hit.drop_lead {
            push_punctuation(&mut lead, first.lead);
        }
        let mut trailing = String::new();
        push_punctuation(&mut trailing, trail);
        if !(lead.is_empty() && hit.text.is_empty() && trailing.is_empty()) {
            if !out.is_empty() && first.space_before {
                out.push(' ');
            }
            out.push_str(&lead);
            let start = out.len();
            out.push_str(&hit.text);
            if hit.text.contains(char::is_alphanumeric) {
                // An abbreviation's own full stop is part of what the author wrote ("Dr.").
                let period = usize::from(hit.eat_period && last.trail.starts_with('.'));
                claims.push(Claim {
                    spoken: start..out.len(),
                    source: offset(first.core)..offset(last.core) + last.core.len() + period,
                });
            }
            out.push_str(&trailing);
        }
        i += span;
    }
    (out, claims)
}
