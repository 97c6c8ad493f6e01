//! The language a script is written in, among the ones Kokoro's stock voices speak.
//!
//! Why: a voice reads text by its own language. A Spanish script cast with English voices was
//! read with English sounds and English numbers ("Tengo twenty-five años"): every word there,
//! none of it intelligible. So automatic casting gives the speakers of a script written in
//! another of Kokoro's languages that language's voices, and says so.
//!
//! The guess is whatlang's (character trigrams, or the writing system for Japanese, Chinese and
//! Hindi), limited to Kokoro's eight languages and taken only when it is reliable over enough
//! words: a short or mixed script stays English, which is what it was before.

use whatlang::{Detector, Lang};

use super::model::Line;

/// The first letter of the stock voices of a language (`e` for `ef_dora`), and its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptLanguage {
    pub voice_prefix: char,
    pub name: &'static str,
}

const KOKORO_LANGUAGES: [(Lang, char, &str); 8] = [
    (Lang::Eng, 'a', "English"),
    (Lang::Spa, 'e', "Spanish"),
    (Lang::Fra, 'f', "French"),
    (Lang::Ita, 'i', "Italian"),
    (Lang::Por, 'p', "Portuguese"),
    (Lang::Hin, 'h', "Hindi"),
    (Lang::Jpn, 'j', "Japanese"),
    (Lang::Cmn, 'z', "Chinese"),
];

/// Below this many words the guess is not taken (a two-line sketch says too little).
const MIN_WORDS: usize = 12;
/// At most this much text is looked at: the language is settled long before.
const SAMPLE_BYTES: usize = 20_000;

/// The language of the script's spoken lines when it is one of Kokoro's other than English and
/// the guess is reliable; `None` for English, too little text, or no clear answer.
#[must_use]
pub fn detect(lines: &[Line]) -> Option<ScriptLanguage> {
    let mut sample = String::new();
    for line in lines {
        if sample.len() >= SAMPLE_BYTES {
            break;
        }
        sample.push_str(&line.spoken_text(false));
        sample.push('\n');
    }
    of_text(&sample)
}

/// [`detect`] on plain text.
#[must_use]
pub fn of_text(text: &str) -> Option<ScriptLanguage> {
    let cjk = text
        .chars()
        .any(|c| matches!(u32::from(c), 0x3040..=0x30FF | 0x3400..=0x9FFF));
    if !cjk && text.split_whitespace().count() < MIN_WORDS {
        return None;
    }
    let allowed = KOKORO_LANGUAGES.iter().map(|(lang, _, _)| *lang).collect();
    let info = Detector::with_allowlist(allowed).detect(text)?;
    if !info.is_reliable() {
        return None;
    }
    KOKORO_LANGUAGES
        .iter()
        .find(|(lang, _, _)| *lang == info.lang())
        .filter(|(lang, _, _)| *lang != Lang::Eng)
        .map(|&(_, voice_prefix, name)| ScriptLanguage { voice_prefix, name })
}

/// The name of the language a stock voice (or a blend's first voice) speaks, by its first letter.
#[must_use]
pub fn of_voice(voice: &str) -> Option<&'static str> {
    match super::writing_systems::language_of(voice)? {
        'a' | 'b' => Some("English"),
        p => KOKORO_LANGUAGES
            .iter()
            .find(|(_, q, _)| *q == p)
            .map(|(_, _, name)| *name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kokoro_languages_are_told_apart_and_english_is_none() {
        let spanish = "Hola a todos, bienvenidos al podcast. Gracias, Ana. Hoy hablamos de \
                       ciencia y de por qué el cielo es azul. ¿Cuántos años tienes?";
        assert_eq!(of_text(spanish).map(|l| l.voice_prefix), Some('e'));
        let french = "Bonjour à tous et bienvenue dans le podcast. Merci beaucoup, c'est un \
                      plaisir d'être ici avec vous pour parler de la science.";
        assert_eq!(of_text(french).map(|l| l.name), Some("French"));
        let english = "Welcome back to the show. Today we are talking about why the sky is \
                       blue, and what that has to do with sunsets.";
        assert_eq!(of_text(english), None);
        assert_eq!(
            of_text("今日はいい天気ですね。散歩に行きましょう。").map(|l| l.voice_prefix),
            Some('j')
        );
        // Too few words to say.
        assert_eq!(of_text("Hola, Ana."), None);
        assert_eq!(of_voice("ef_dora"), Some("Spanish"));
        assert_eq!(of_voice("bm_george:0.5+am_adam:0.5"), Some("English"));
        assert_eq!(of_voice("narrator"), None);
    }
}
