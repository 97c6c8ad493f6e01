//! The language a script is written in, among the ones Kokoro's stock voices speak.
//!
//! Why: a voice reads text by its own language. A Spanish script cast with English voices was
//! read with English sounds and English numbers ("Tengo twenty-five años"): every word there,
//! none of it intelligible. So automatic casting gives the speakers of a script written in
//! another of Kokoro's languages that language's voices, and says so.
//!
//! The guess is whatlang's (character trigrams, or the writing system for Japanese, Chinese and
//! Hindi), taken only when it is reliable over enough words: a short or mixed script stays
//! English, which is what it was before. A script in a language none of Kokoro's voices speak
//! (German, Dutch, Polish...) is named as such: guessing among Kokoro's eight alone once cast a
//! German script with the French voice, and nothing said it was German.

use std::collections::HashMap;

use whatlang::{Detector, Lang};

use super::cast::Cast;
use super::model::{Line, Position, Warning};
use super::writing_systems::{foreign_script, line_list, SHOWN_ONE_BY_ONE};

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

/// What a script is written in, when it is not English.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// One of Kokoro's languages other than English: its voices read it.
    Kokoro(ScriptLanguage),
    /// A language no Kokoro voice speaks (its English name): an English voice reads its words
    /// with English sounds, or spells out letters it has no sounds for; a Piper voice may
    /// speak it.
    Unspoken(&'static str),
}

/// The language of the script's spoken lines when it is not English and the guess is reliable;
/// `None` for English, too little text, or no clear answer.
#[must_use]
pub fn detect(lines: &[Line]) -> Option<Written> {
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
pub fn of_text(text: &str) -> Option<Written> {
    of_text_of_words(text, MIN_WORDS)
}

/// [`of_text`] for a text that may be short (an API request's sentence): whatlang's own
/// reliability, which is strict on a few words, decides above `min_words`.
#[must_use]
pub fn of_text_of_words(text: &str, min_words: usize) -> Option<Written> {
    let cjk = text
        .chars()
        .any(|c| matches!(u32::from(c), 0x3040..=0x30FF | 0x3400..=0x9FFF));
    if !cjk && text.split_whitespace().count() < min_words {
        return None;
    }
    // First among every language whatlang knows, so that German is not taken for the nearest
    // of Kokoro's.
    if let Some(info) = Detector::new().detect(text) {
        let kokoro = KOKORO_LANGUAGES
            .iter()
            .any(|(lang, _, _)| *lang == info.lang());
        if info.is_reliable() && !kokoro {
            return Some(Written::Unspoken(info.lang().eng_name()));
        }
    }
    of_kokoro_text(text).map(Written::Kokoro)
}

/// What one speaker's lines tell of the language they speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Told {
    English,
    Other(Written),
    /// Too few words, or no clear answer: the script's language is theirs.
    Unsure,
}

/// What a script's lines tell of its languages: the script's as a whole ([`detect`]) and each
/// speaker's, by name. Read once, where the cast is made; the stray-line check reads it again.
pub(crate) struct Languages {
    pub script: Option<Written>,
    pub by_speaker: HashMap<String, Told>,
}

impl Languages {
    /// One pass over the lines, at most [`SPEAKER_SAMPLE_BYTES`] of each speaker's words looked
    /// at.
    pub(crate) fn of(lines: &[Line]) -> Self {
        let mut samples: HashMap<&str, String> = HashMap::new();
        for line in lines {
            let sample = samples.entry(line.speaker.as_str()).or_default();
            if sample.len() < SPEAKER_SAMPLE_BYTES {
                sample.push_str(&line.spoken_text(false));
                sample.push('\n');
            }
        }
        let by_speaker = samples
            .into_iter()
            .map(|(name, sample)| (name.to_owned(), tell(&sample)))
            .collect();
        Self {
            script: detect(lines),
            by_speaker,
        }
    }
}

/// Enough of one speaker's lines to tell their language.
const SPEAKER_SAMPLE_BYTES: usize = 4_000;

/// [`Told`] of `text` (one speaker's lines).
fn tell(text: &str) -> Told {
    if let Some(written) = of_text(text) {
        return Told::Other(written);
    }
    let english = text.split_whitespace().count() >= MIN_WORDS
        && Detector::new()
            .detect(text)
            .is_some_and(|info| info.is_reliable() && info.lang() == Lang::Eng);
    if english {
        Told::English
    } else {
        Told::Unsure
    }
}

/// [`of_text_of_words`] for one request's sentence or two, where whatlang, reliable about
/// English, is often unsure between neighbours ("Hola a todos, bienvenidos al programa" is
/// Spanish, or Galician, or Portuguese). Such a text is taken as the Kokoro language that both
/// the whole guess and the guess among Kokoro's put first, when English clearly loses to it and
/// no word in it is one only English has ("Welcome to the Café de la Paix" stays English).
#[must_use]
pub fn of_short_text(text: &str, min_words: usize) -> Option<Written> {
    if let Some(written) = of_text_of_words(text, min_words) {
        return Some(written);
    }
    if text.split_whitespace().count() < min_words || has_english_word(text) {
        return None;
    }
    let full = Detector::new().detect(text)?;
    let allowed = KOKORO_LANGUAGES.iter().map(|(lang, _, _)| *lang).collect();
    let kokoro = Detector::with_allowlist(allowed).detect(text)?;
    if full.lang() != kokoro.lang() || kokoro.lang() == Lang::Eng {
        return None;
    }
    let against_english = Detector::with_allowlist(vec![Lang::Eng, kokoro.lang()]).detect(text)?;
    if !against_english.is_reliable() || against_english.lang() != kokoro.lang() {
        return None;
    }
    KOKORO_LANGUAGES
        .iter()
        .find(|(lang, _, _)| *lang == kokoro.lang())
        .map(|&(_, voice_prefix, name)| Written::Kokoro(ScriptLanguage { voice_prefix, name }))
}

/// Whether `text` has a word English has and Kokoro's other Latin-alphabet languages do not
/// ("the", "with", "your"; not "he", "has", "do" or "an", which Spanish, Portuguese and French
/// have too).
fn has_english_word(text: &str) -> bool {
    const ONLY_ENGLISH: [&str; 30] = [
        "the", "and", "is", "are", "was", "were", "of", "to", "with", "you", "your", "our", "this",
        "that", "what", "which", "it", "for", "from", "we", "they", "she", "his", "have", "will",
        "would", "can", "not", "be", "been",
    ];
    text.split(|c: char| !c.is_alphabetic() && c != '\'')
        .any(|w| ONLY_ENGLISH.iter().any(|e| e.eq_ignore_ascii_case(w)))
}

/// The guess among Kokoro's languages alone, for a text no other language claims.
fn of_kokoro_text(text: &str) -> Option<ScriptLanguage> {
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

/// Warns of lines written in a language their voice does not speak where their speaker on the
/// whole does not (a language lesson's Spanish phrase in an English episode: "¿Dónde está la
/// biblioteca?" read with English sounds). The first few lines are told one by one, the rest
/// at once. Lines in another alphabet are `writing_systems`' to tell.
pub(crate) fn warn_foreign_lines(
    lines: &[Line],
    cast: &Cast,
    languages: &Languages,
    warnings: &mut Vec<Warning>,
) {
    let name_of = |w: Written| match w {
        Written::Kokoro(l) => l.name,
        Written::Unspoken(name) => name,
    };
    let script = languages.script.map(name_of);
    // What each speaker speaks on the whole: a line in that language is the cast's business
    // (said where the speaker was cast), not a stray line.
    let spoken: HashMap<&str, Option<&'static str>> = languages
        .by_speaker
        .iter()
        .map(|(name, &told)| {
            let own = match told {
                Told::Other(w) => Some(name_of(w)),
                Told::English => Some("English"),
                Told::Unsure => script,
            };
            (name.as_str(), own)
        })
        .collect();
    let mut foreign: Vec<(Position, &'static str)> = Vec::new();
    for line in lines {
        let Some(member) = cast.get(&line.speaker) else {
            continue;
        };
        let Some(own) = of_voice(&member.voice) else {
            continue;
        };
        let text = line.spoken_text(false);
        if text.chars().any(|c| foreign_script(c).is_some()) {
            continue;
        }
        let heard = match of_short_text(&text, LINE_MIN_WORDS) {
            Some(Written::Kokoro(l)) => l.name,
            Some(Written::Unspoken(name)) => name,
            None => continue,
        };
        if heard == own || spoken.get(line.speaker.as_str()).copied().flatten() == Some(heard) {
            continue;
        }
        if foreign.len() < SHOWN_ONE_BY_ONE {
            warnings.push(Warning {
                position: line.position,
                message: format!(
                    "this line looks written in {heard}, which `{}` ({}'s voice) reads with {own} \
                     sounds; give it to a speaker cast with a voice that speaks {heard}",
                    member.voice, member.name
                ),
            });
        }
        foreign.push((line.position, heard));
    }
    if let Some((first, heard)) = foreign.get(SHOWN_ONE_BY_ONE) {
        let rest = &foreign[SHOWN_ONE_BY_ONE..];
        warnings.push(Warning {
            position: *first,
            message: format!(
                "{} more line(s) ({}) look written, like this one in {heard}, in a language \
                 their voices do not speak",
                rest.len(),
                line_list(rest.iter().map(|(p, _)| *p)),
            ),
        });
    }
}

/// A line shorter than this is not guessed at (a greeting in passing, "Gracias, amigo").
const LINE_MIN_WORDS: usize = 5;

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

    fn kokoro(text: &str) -> Option<ScriptLanguage> {
        match of_text(text)? {
            Written::Kokoro(l) => Some(l),
            Written::Unspoken(name) => panic!("{text:?} taken as {name}"),
        }
    }

    #[test]
    fn kokoro_languages_are_told_apart_and_english_is_none() {
        let spanish = "Hola a todos, bienvenidos al podcast. Gracias, Ana. Hoy hablamos de \
                       ciencia y de por qué el cielo es azul. ¿Cuántos años tienes?";
        assert_eq!(kokoro(spanish).map(|l| l.voice_prefix), Some('e'));
        let french = "Bonjour à tous et bienvenue dans le podcast. Merci beaucoup, c'est un \
                      plaisir d'être ici avec vous pour parler de la science.";
        assert_eq!(kokoro(french).map(|l| l.name), Some("French"));
        let english = "Welcome back to the show. Today we are talking about why the sky is \
                       blue, and what that has to do with sunsets.";
        assert_eq!(of_text(english), None);
        assert_eq!(
            kokoro("今日はいい天気ですね。散歩に行きましょう。").map(|l| l.voice_prefix),
            Some('j')
        );
        // Too few words to say.
        assert_eq!(of_text("Hola, Ana."), None);
        assert_eq!(of_voice("ef_dora"), Some("Spanish"));
        assert_eq!(of_voice("bm_george:0.5+am_adam:0.5"), Some("English"));
        assert_eq!(of_voice("narrator"), None);
    }

    #[test]
    fn a_language_no_kokoro_voice_speaks_is_named_not_the_nearest_of_kokoros() {
        for (text, name) in [
            ("Guten Morgen! Wie geht es dir heute? Mir geht es gut, danke. Ich habe gestern ein \
              neues Buch gelesen.", "German"),
            ("Goedemorgen allemaal en welkom bij de podcast. Vandaag praten we over de \
              geschiedenis van Amsterdam en de grachten.", "Dutch"),
            ("Dzień dobry wszystkim i witamy w podcaście. Dzisiaj rozmawiamy o historii Krakowa \
              i o tym, co warto zobaczyć.", "Polish"),
            ("Доброе утро всем и добро пожаловать в наш подкаст. Сегодня мы говорим об истории \
              Москвы.", "Russian"),
        ] {
            assert_eq!(of_text(text), Some(Written::Unspoken(name)), "{text}");
        }
        let italian = "Ciao a tutti e benvenuti al podcast. Oggi parliamo della storia di Roma e \
                       di cosa vale la pena vedere.";
        assert_eq!(kokoro(italian).map(|l| l.name), Some("Italian"));
        // A request's sentence: whatlang is unsure between Spanish and its neighbours, and sure
        // it is not English; an English sentence with a foreign name stays English.
        let spanish = "Hola a todos, bienvenidos al programa. Hoy hablamos de ciencia.";
        assert_eq!(of_text_of_words(spanish, 4), None);
        let short = |t: &str| match of_short_text(t, 4) {
            Some(Written::Kokoro(l)) => Some(l.name),
            _ => None,
        };
        assert_eq!(short(spanish), Some("Spanish"));
        assert_eq!(
            short("Buenos días a todos, bienvenidos al programa de hoy."),
            Some("Spanish")
        );
        for english in [
            "Welcome to the Café de la Paix, monsieur.",
            "Our guest today is Gabriel García Márquez's biographer.",
            "Meet me at the Plaza del Sol at noon.",
            "Turn left on Main Street in two hundred meters.",
            "Hello world, this is a test.",
        ] {
            assert_eq!(short(english), None, "{english}");
        }
        let portuguese = "Olá a todos e bem-vindos ao podcast. Hoje vamos falar sobre a história \
                          de Lisboa e o que vale a pena ver.";
        assert_eq!(kokoro(portuguese).map(|l| l.name), Some("Portuguese"));
    }
}
