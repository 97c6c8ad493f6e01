//! SSML tags inside a turn: `<break time="1.5s"/>`, `<phoneme ph="…">word</phoneme>`,
//! `<sub alias="…">…</sub>` and the markup around words (`<speak>`, `<emphasis>`, `<prosody>`,
//! `<say-as>`...).
//!
//! Why: scripts written for other engines carry them (ElevenLabs' own guide writes pauses as
//! `<break time="1.5s" />`), and they were spoken: "break time equals one-fives". A break is a
//! pause, a phoneme tag Banter's own `[word](/ipa/)`, a substitution its alias; the other tags
//! are not spoken, and the writer is told which ones Banter does not follow.

use super::seconds_up_to;

/// The longest pause a `<break>` gives (SSML engines cap theirs at a few seconds; ours at ten).
const MAX_BREAK_SECS: f32 = 10.0;

/// What an SSML tag at the start of a turn's text means.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tag {
    /// `<break/>`: this many seconds of silence.
    Break(f32),
    /// `<phoneme ph="…">` (IPA): the words up to `</phoneme>` said so.
    Phoneme { ipa: String, text: String },
    /// `<sub alias="…">`: the alias said instead of the words up to `</sub>`.
    Sub(String),
    /// A tag around words, not spoken; `Some(name)` when its meaning is not followed.
    Markup(Option<&'static str>),
}

/// Tags whose words are read as written: the tag itself is dropped silently.
const SILENT: [&str; 5] = ["speak", "s", "p", "mark", "lang"];
/// Tags that ask for something Banter does not do; dropped with a notice.
const IGNORED: [&str; 8] = [
    "emphasis",
    "prosody",
    "say-as",
    "voice",
    "w",
    "audio",
    "amazon:effect",
    "amazon:domain",
];

/// The SSML tag `chars[at..]` starts with: what it means and the index just past it (past the
/// closing tag too for `<phoneme>` and `<sub>`). `None` when it is no SSML tag (`a < b`, `<3`).
pub(crate) fn tag_at(chars: &[char], at: usize) -> Option<(Tag, usize)> {
    let (name, attributes, closing, end) = read_tag(chars, at)?;
    // A bare `<voice>` opening nothing is a placeholder (`say <voice> <text>`): text.
    let bare = attributes.trim().is_empty();
    if bare && !closing && name != "break" && until_closing(chars, end, &name).is_none() {
        return None;
    }
    let attr = |key: &str| attribute(&attributes, key);
    let tag = match name.as_str() {
        "break" if !closing => {
            let secs = match (attr("time"), attr("strength")) {
                (Some(time), _) => seconds_up_to(&time, MAX_BREAK_SECS)?,
                (None, Some(strength)) => match strength.as_str() {
                    "none" => 0.0,
                    "x-weak" => 0.1,
                    "weak" => 0.25,
                    "strong" => 0.75,
                    "x-strong" => 1.0,
                    _ => 0.5,
                },
                (None, None) => 0.5,
            };
            return Some((Tag::Break(secs), end));
        }
        "phoneme" | "sub" if !closing && !attributes.trim_end().ends_with('/') => {
            let (inner, after) = until_closing(chars, end, &name)?;
            if name == "sub" {
                return Some((Tag::Sub(attr("alias").unwrap_or(inner)), after));
            }
            let ipa = attr("ph")
                .filter(|_| attr("alphabet").is_none_or(|a| a.eq_ignore_ascii_case("ipa")));
            return Some(match ipa {
                Some(ipa) if !ipa.trim().is_empty() => (Tag::Phoneme { ipa, text: inner }, after),
                // Another alphabet (x-sampa): the words as written, and said so.
                _ => (Tag::Markup(Some("phoneme")), end),
            });
        }
        "phoneme" | "sub" => Tag::Markup(None),
        n if SILENT.contains(&n) => Tag::Markup(None),
        n => Tag::Markup(Some(IGNORED.iter().copied().find(|i| *i == n)?)),
    };
    Some((tag, end))
}

/// A tag's lower-cased name, its attributes' text, whether it closes (`</…>`), and the index
/// past its `>`. Attributes must look like attributes (`name="value"`), so prose is prose.
fn read_tag(chars: &[char], at: usize) -> Option<(String, String, bool, usize)> {
    if chars.get(at) != Some(&'<') {
        return None;
    }
    let closing = chars.get(at + 1) == Some(&'/');
    let name_at = at + 1 + usize::from(closing);
    let name_len = chars[name_at..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | ':'))
        .count();
    let name: String = chars[name_at..name_at + name_len]
        .iter()
        .collect::<String>()
        .to_ascii_lowercase();
    if name.is_empty()
        || !(SILENT.contains(&name.as_str())
            || IGNORED.contains(&name.as_str())
            || matches!(name.as_str(), "break" | "phoneme" | "sub"))
    {
        return None;
    }
    let mut quote = None;
    let mut close = None;
    for (k, &c) in chars.iter().enumerate().skip(name_at + name_len).take(400) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => {
                close = Some(k);
                break;
            }
            (None, '<' | '\n') => return None,
            _ => {}
        }
    }
    let close = close?;
    let attributes: String = chars[name_at + name_len..close].iter().collect();
    let bare = attributes.trim_end_matches('/').trim().is_empty();
    let attribute_like = attributes.starts_with(char::is_whitespace) && attributes.contains('=');
    (bare || attribute_like).then_some((name, attributes, closing, close + 1))
}

/// The value of attribute `key` in `attributes` (`time="1.5s"` or `time='1.5s'`).
fn attribute(attributes: &str, key: &str) -> Option<String> {
    let mut rest = attributes;
    while let Some(eq) = rest.find('=') {
        let name = rest[..eq].split_whitespace().last().unwrap_or_default();
        let value = rest[eq + 1..].trim_start();
        let quote = value.chars().next().filter(|c| matches!(c, '"' | '\''))?;
        let inner = &value[1..];
        let end = inner.find(quote)?;
        if name.eq_ignore_ascii_case(key) {
            return Some(inner[..end].to_owned());
        }
        rest = &inner[end + 1..];
    }
    None
}

/// The words from `from` up to `</name>`, and the index past that closing tag.
fn until_closing(chars: &[char], from: usize, name: &str) -> Option<(String, usize)> {
    let closing: Vec<char> = format!("</{name}>").chars().collect();
    let k = (from..chars.len().saturating_sub(closing.len() - 1)).find(|&k| {
        chars[k..k + closing.len()]
            .iter()
            .zip(&closing)
            .all(|(a, b)| a.eq_ignore_ascii_case(b))
    })?;
    Some((chars[from..k].iter().collect(), k + closing.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(s: &str) -> Option<(Tag, String)> {
        let chars: Vec<char> = s.chars().collect();
        tag_at(&chars, 0).map(|(t, end)| (t, chars[end..].iter().collect()))
    }

    #[test]
    fn breaks_phonemes_substitutions_and_markup() {
        assert_eq!(
            tag(r#"<break time="1.5s" /> Go"#),
            Some((Tag::Break(1.5), " Go".into()))
        );
        assert_eq!(
            tag("<break time='500ms'/>"),
            Some((Tag::Break(0.5), String::new()))
        );
        assert_eq!(
            tag(r#"<break strength="strong"/>"#).map(|t| t.0),
            Some(Tag::Break(0.75))
        );
        assert_eq!(tag("<break/>").map(|t| t.0), Some(Tag::Break(0.5)));
        assert_eq!(
            tag(r#"<phoneme alphabet="ipa" ph="təˈmɑːtoʊ">tomato</phoneme>."#),
            Some((
                Tag::Phoneme {
                    ipa: "təˈmɑːtoʊ".into(),
                    text: "tomato".into()
                },
                ".".into()
            ))
        );
        assert_eq!(
            tag(r#"<sub alias="World Wide Web">WWW</sub> rocks"#),
            Some((Tag::Sub("World Wide Web".into()), " rocks".into()))
        );
        assert_eq!(
            tag("<speak>Hi</speak>").map(|t| t.0),
            Some(Tag::Markup(None))
        );
        assert_eq!(
            tag(r#"<say-as interpret-as="characters">NASA"#).map(|t| t.0),
            Some(Tag::Markup(Some("say-as")))
        );
        assert_eq!(
            tag("</emphasis> x").map(|t| t.0),
            Some(Tag::Markup(Some("emphasis")))
        );
        // Not SSML: comparisons, hearts, unknown tags, a break too long to be one.
        for text in [
            "< 5",
            "<3 you",
            "<bogus>",
            "<break me>",
            r#"<break time="1h"/>"#,
            "<s",
        ] {
            assert_eq!(tag(text), None, "{text}");
        }
    }
}
