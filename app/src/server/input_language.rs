//! The language a request's text is written in, beside the voice that will read it.
//!
//! Why: OpenAI's voices and ElevenLabs' multilingual ones speak whatever language they are
//! sent, so clients send Spanish to `alloy` without a second thought. Kokoro reads text by its
//! voice's language: the Spanish came back as English sounds ("Tengo twenty-five años"), with
//! nothing in the answer to say why. Now a voice the client named by another service's name (an
//! OpenAI name, an ElevenLabs premade id) is answered in the text's language when that is one
//! of Kokoro's, a voice the client chose itself is kept, and either way the answer says what
//! was heard (`x-banter-voice`, `x-banter-language`).
//!
//! The guess is the script crate's (whatlang), strict on a short text: a few words in another
//! language stay with the voice's own, and a text too short to tell changes nothing.

use engine::assets::manifest::KOKORO_V1;
use engine::script::language::{self, Written};

/// Below this many words a request's text is not guessed at (whatlang is strict above it).
const MIN_WORDS: usize = 4;
/// At most this much of the text is looked at.
const SAMPLE_CHARS: usize = 4_000;

/// What the text's language asks of the voice `resolved` (the engine's spelling).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Heard {
    /// The voice was a stand-in and this stock voice, of its gender, speaks the text's language.
    Swap {
        stock: &'static str,
        language: &'static str,
    },
    /// The voice stays and does not speak the text's language: the `x-banter-language` note.
    Mismatch(String),
}

/// What `text`'s language asks of `resolved`; `stand_in` says whether the client named the
/// voice by another service's name (so another voice may be spoken in its place). `None` when
/// the text is English, too short to tell, or in the voice's own language, and for library and
/// Piper voices, whose language is their own.
#[must_use]
pub fn heard(text: &str, resolved: &str, stand_in: bool) -> Option<Heard> {
    let own = language::of_voice(resolved)?;
    // The language is settled long before a chapter's end.
    let sample = text
        .char_indices()
        .nth(SAMPLE_CHARS)
        .map_or(text, |(end, _)| &text[..end]);
    match language::of_short_text(sample, MIN_WORDS)? {
        Written::Kokoro(l) if l.name == own => None,
        Written::Kokoro(l) => {
            let (swap, examples) = stock_voice_like(|n| n.starts_with(l.voice_prefix), resolved);
            match swap {
                Some(stock) if stand_in => Some(Heard::Swap {
                    stock,
                    language: l.name,
                }),
                _ => Some(Heard::Mismatch(format!(
                    "{} read by {resolved}, a voice that speaks {own}, with its sounds; a {} \
                         voice ({}) speaks it",
                    l.name,
                    l.name,
                    examples.join(", ")
                ))),
            }
        }
        Written::Unspoken(name) => Some(Heard::Mismatch(format!(
            "{name} read by {resolved} with {own} sounds: no Kokoro voice speaks {name}; a \
                 Piper voice in the library may"
        ))),
    }
}

/// Among the stock voices `of_language` admits: the one of `like`'s gender (a stock name's
/// second letter), else the first; and the first two, to name as examples.
pub(crate) fn stock_voice_like(
    of_language: impl Fn(&str) -> bool,
    like: &str,
) -> (Option<&'static str>, Vec<&'static str>) {
    let voices: Vec<&'static str> = KOKORO_V1
        .voices
        .names
        .iter()
        .copied()
        .filter(|n| of_language(n))
        .collect();
    let gender = like.chars().nth(1);
    let swap = voices
        .iter()
        .copied()
        .find(|n| n.chars().nth(1) == gender)
        .or_else(|| voices.first().copied());
    (swap, voices.into_iter().take(2).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPANISH: &str = "Hola, ¿cómo estás? Me llamo Ana.";
    const GERMAN: &str = "Guten Morgen! Wie geht es dir heute? Mir geht es gut, danke. Ich habe \
                          gestern ein neues Buch gelesen.";

    #[test]
    fn a_stand_in_speaks_the_texts_language_and_a_chosen_voice_is_kept_and_told() {
        // alloy is af_alloy: a female Spanish voice reads the Spanish.
        assert_eq!(
            heard(SPANISH, "af_alloy", true),
            Some(Heard::Swap {
                stock: "ef_dora",
                language: "Spanish"
            })
        );
        // onyx is am_onyx: a male one, for a sentence whatlang alone is unsure of.
        assert!(matches!(
            heard("Hola a todos, bienvenidos al programa. Hoy hablamos de ciencia.", "am_onyx", true),
            Some(Heard::Swap { stock, .. }) if stock.starts_with("em_")
        ));
        // af_heart named by the client is kept; the answer says what it does to the Spanish.
        let Some(Heard::Mismatch(note)) = heard(SPANISH, "af_heart", false) else {
            panic!("no note");
        };
        assert!(
            note.contains("Spanish read by af_heart") && note.contains("ef_dora"),
            "{note}"
        );
        assert!(note.is_ascii(), "a header value: {note}");
        // A language Kokoro lacks keeps the voice, stand-in or not, and says so.
        let Some(Heard::Mismatch(note)) = heard(GERMAN, "af_alloy", true) else {
            panic!("no note");
        };
        assert!(note.starts_with("German read by af_alloy"), "{note}");
    }

    #[test]
    fn english_short_text_and_voices_of_their_own_language_change_nothing() {
        assert_eq!(
            heard(
                "Your order has shipped and will arrive on Tuesday.",
                "af_alloy",
                true
            ),
            None
        );
        assert_eq!(heard("Hola, Ana.", "af_alloy", true), None);
        assert_eq!(heard(SPANISH, "ef_dora", true), None);
        assert_eq!(
            heard(
                "Welcome to the Café de la Paix, monsieur.",
                "af_heart",
                true
            ),
            None
        );
        // A library or Piper voice's language is its own.
        assert_eq!(heard(GERMAN, "thorsten", false), None);
    }
}
