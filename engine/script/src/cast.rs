//! Who speaks with which voice: the cast, and automatic casting of everyone not listed.
//!
//! Writers should not have to cast anybody to hear a draft, so every unlisted speaker gets a
//! stock voice of their own, best-rated voices first. A title or role word in the name ("Mrs",
//! "Sir", "Mother") or a common given name ("Tom", "Mary"; `gender::given_names`) picks a
//! female or male voice; that is a guess about a person from a name, so the member carries it
//! ([`CastMember::guess`]) and the studio says it beside the speaker. Anyone else is cast by the
//! cast's balance: the gender fewer voices have so far, alternating on a tie, in order of
//! appearance. Two speakers never share a voice by accident: when the distinct voices run out the
//! parse fails and says which setting allows sharing, because a listener cannot follow a
//! dialogue of identical voices.
//!
//! This module checks only the spelling of a voice (`af_bella:0.7+af_sky:0.3 @1.1`); whether the
//! voice is installed is the caller's question, asked through [`super::Episode::validate_voices`].

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::gender::{guess_gender, Gender, GenderGuess};
use super::model::Position;
pub(crate) use super::names::speaker_key;
use super::pieces::parse_rate;

/// English stock voices, female, best-rated first (Kokoro's VOICES.md grades).
pub const ENGLISH_FEMALE: [&str; 15] = [
    "af_heart",
    "af_bella",
    "af_nicole",
    "bf_emma",
    "af_aoede",
    "af_kore",
    "af_sarah",
    "bf_isabella",
    "af_nova",
    "af_alloy",
    "af_sky",
    "bf_alice",
    "bf_lily",
    "af_jessica",
    "af_river",
];
/// English stock voices, male, best-rated first.
pub const ENGLISH_MALE: [&str; 13] = [
    "am_michael",
    "am_fenrir",
    "am_puck",
    "bm_george",
    "bm_fable",
    "bm_lewis",
    "am_echo",
    "am_eric",
    "am_liam",
    "am_onyx",
    "bm_daniel",
    "am_santa",
    "am_adam",
];
/// The other 26 stock voices, used for automatic casting only when allowed.
pub const OTHER_LANGUAGE_FEMALE: [&str; 14] = [
    "ff_siwis",
    "ef_dora",
    "if_sara",
    "pf_dora",
    "hf_alpha",
    "hf_beta",
    "jf_alpha",
    "jf_gongitsune",
    "jf_nezumi",
    "jf_tebukuro",
    "zf_xiaobei",
    "zf_xiaoni",
    "zf_xiaoxiao",
    "zf_xiaoyi",
];
pub const OTHER_LANGUAGE_MALE: [&str; 12] = [
    "em_alex",
    "em_santa",
    "im_nicola",
    "pm_alex",
    "pm_santa",
    "hm_omega",
    "hm_psi",
    "jm_kumo",
    "zm_yunjian",
    "zm_yunxi",
    "zm_yunxia",
    "zm_yunyang",
];

/// Where a speaker's voice came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum VoiceSource {
    /// Written in the cast header (or the JSON cast) at this position.
    Cast { position: Position },
    /// Chosen automatically.
    Automatic,
}

/// One speaker and their voice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CastMember {
    pub name: String,
    /// A stock voice name or a blend, as written (`af_bella:0.7+af_sky:0.3`).
    pub voice: String,
    /// This speaker's speed, if the cast gave one (`@1.1`).
    pub speed: Option<f32>,
    pub source: VoiceSource,
    /// For a speaker cast automatically, the gender their voice was chosen for when the name
    /// suggested one: a guess, to be shown as one. `None` when the cast named the voice or
    /// nothing in the name did (the cast's balance chose).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guess: Option<GenderGuess>,
}

/// Every speaker of an episode, in order of first appearance (then cast-only entries).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Cast {
    pub members: Vec<CastMember>,
}

impl Cast {
    /// The member called `name` (any case, trailing `.`/`:` and extra spaces ignored).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&CastMember> {
        let key = speaker_key(name);
        self.members.iter().find(|m| speaker_key(&m.name) == key)
    }
}

/// A cast entry as written in a header or a JSON cast, before anyone is cast automatically.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CastEntry {
    pub name: String,
    pub voice: String,
    pub speed: Option<f32>,
    pub position: Position,
}

/// Checks the spelling of a voice value `VOICE [@SPEED]`; returns `(voice, speed)`.
///
/// `Err(None)` means the voice is malformed (with the reason), `Err(Some)` a bad speed.
pub(crate) fn parse_voice_value(value: &str) -> Result<(String, Option<f32>), VoiceValueError> {
    let (voice, speed) = match value.split_once('@') {
        Some((v, s)) => {
            let speed = parse_rate(s).ok_or_else(|| VoiceValueError::Speed(s.trim().to_owned()))?;
            (v.trim(), Some(speed))
        }
        None => (value.trim(), None),
    };
    check_voice_spelling(voice).map_err(VoiceValueError::Voice)?;
    Ok((voice.to_owned(), speed))
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum VoiceValueError {
    Voice(String),
    Speed(String),
}

/// `af_heart`, `af_bella:0.7+af_sky:0.3` or `af_bella(2)+af_sky(1)`; the stock names of a blend.
pub(crate) fn check_voice_spelling(spec: &str) -> Result<Vec<&str>, String> {
    if spec.is_empty() {
        return Err("it is empty".to_owned());
    }
    let mut names = Vec::new();
    let mut total = 0.0f32;
    for term in spec.split('+') {
        let term = term.trim();
        let (name, weight) = if let Some((n, w)) = term.split_once(':') {
            (n.trim(), w.trim())
        } else if let Some((n, rest)) = term.split_once('(') {
            let w = rest.strip_suffix(')').ok_or("a `(` is not closed")?;
            (n.trim(), w.trim())
        } else {
            (term, "1")
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!("`{name}` is not a voice name"));
        }
        match weight.parse::<f32>() {
            Ok(w) if w.is_finite() && w >= 0.0 => total += w,
            _ => return Err(format!("`{weight}` is not a weight")),
        }
        names.push(name);
    }
    if total <= 0.0 {
        return Err("the weights add up to zero".to_owned());
    }
    Ok(names)
}

/// What automatic casting may do when the distinct English voices run out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CastingRules {
    pub reuse_voices: bool,
    pub any_language_voices: bool,
    /// The script is written in the language of the stock voices starting with this letter
    /// (not English): speakers get those voices, shared once they run out.
    pub language: Option<char>,
}

/// Automatic casting ran out of voices for the speaker at `index` (0-based) of `speakers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutOfVoices {
    pub index: usize,
    pub available: usize,
}

/// The language a speaker is cast in: the script's, or their own where their lines tell it
/// (the first letter of its stock voices; `None`: English).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Speaks {
    AsScript,
    Own(Option<char>),
}

/// One speaker's voice as [`assign_voices`] chose it.
#[derive(Debug, PartialEq)]
pub(crate) struct Assigned {
    pub voice: String,
    pub speed: Option<f32>,
    pub source: VoiceSource,
    pub guess: Option<GenderGuess>,
}

/// Gives each of `speakers` (in order of appearance) a voice: the listed one, else a free one of
/// the gender the name suggests, else of the gender the cast has fewer of. A speaker's entry in
/// `languages`, where their own lines tell it, overrides the script's language in `rules`.
///
/// Returns the chosen voice per speaker, in the same order.
pub(crate) fn assign_voices(
    speakers: &[String],
    described: &[Option<&str>],
    languages: &[Speaks],
    listed: &HashMap<String, &CastEntry>,
    reserved: &[&CastEntry],
    rules: CastingRules,
) -> Result<Vec<Assigned>, OutOfVoices> {
    let mut used: HashMap<&str, usize> = HashMap::new();
    for entry in reserved {
        for name in check_voice_spelling(&entry.voice).unwrap_or_default() {
            *used.entry(name).or_default() += 1;
        }
    }
    let language_pools = |language: Option<char>| {
        let of_language = |voices: &[&'static str]| -> Vec<&'static str> {
            let prefix = language.unwrap_or('a');
            voices
                .iter()
                .copied()
                .filter(|v| v.starts_with(prefix))
                .collect()
        };
        (
            of_language(&OTHER_LANGUAGE_FEMALE),
            of_language(&OTHER_LANGUAGE_MALE),
        )
    };
    let mut out = Vec::with_capacity(speakers.len());
    let mut balance = Balance::default();
    for (index, name) in speakers.iter().enumerate() {
        if let Some(entry) = listed.get(&speaker_key(name)) {
            balance.count(gender_of_voice(&entry.voice));
            out.push(Assigned {
                voice: entry.voice.clone(),
                speed: entry.speed,
                source: VoiceSource::Cast {
                    position: entry.position,
                },
                guess: None,
            });
            continue;
        }
        // The speaker's own language where their lines tell it, else the script's.
        let language = match languages.get(index) {
            Some(Speaks::Own(language)) => *language,
            _ => rules.language,
        };
        let (language_female, language_male) = language_pools(language);
        let in_language =
            language.is_some() && !(language_female.is_empty() && language_male.is_empty());
        let mut pools = if in_language {
            vec![(&language_female[..], &language_male[..])]
        } else {
            vec![(&ENGLISH_FEMALE[..], &ENGLISH_MALE[..])]
        };
        if rules.any_language_voices && !in_language {
            pools.push((&OTHER_LANGUAGE_FEMALE[..], &OTHER_LANGUAGE_MALE[..]));
        }
        let available: HashSet<&str> = pools
            .iter()
            .flat_map(|(f, m)| f.iter().chain(m.iter()).copied())
            .collect();
        let guess = guess_gender(name, described.get(index).copied().flatten());
        let female = guess
            .as_ref()
            .map_or_else(|| balance.wants_female(), |g| g.gender == Gender::Female);
        // A language with few voices shares them rather than reading its words with another
        // language's sounds (the caller says who shares).
        let voice = pick(&pools, &used, female, false)
            .or_else(|| {
                (rules.reuse_voices || in_language).then(|| pick(&pools, &used, female, true))?
            })
            .ok_or(OutOfVoices {
                index,
                available: available.len(),
            })?;
        *used.entry(voice).or_default() += 1;
        balance.count(gender_of_voice(voice));
        // When that gender's voices ran out, the voice given is not the one guessed: say nothing
        // of a guess the voice does not follow.
        let guess = guess.filter(|g| gender_of_voice(voice) == Some(g.gender == Gender::Female));
        out.push(Assigned {
            voice: voice.to_owned(),
            speed: None,
            source: VoiceSource::Automatic,
            guess,
        });
    }
    Ok(out)
}

/// How many female and male voices the cast has so far, and the last one given.
#[derive(Default)]
struct Balance {
    female: usize,
    male: usize,
    last_female: Option<bool>,
}

impl Balance {
    fn count(&mut self, female: Option<bool>) {
        match female {
            Some(true) => self.female += 1,
            Some(false) => self.male += 1,
            None => return,
        }
        self.last_female = female;
    }

    /// The gender fewer voices have; on a tie, the other one than the last (female first).
    fn wants_female(&self) -> bool {
        match self.female.cmp(&self.male) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => self.last_female.is_none_or(|f| !f),
        }
    }
}

/// The first free voice of the wanted gender (then of the other), pool by pool; with
/// `reuse`, the least used one instead.
fn pick(
    pools: &[(&[&'static str], &[&'static str])],
    used: &HashMap<&str, usize>,
    female: bool,
    reuse: bool,
) -> Option<&'static str> {
    let count = |v: &str| used.get(v).copied().unwrap_or(0);
    if reuse {
        let (f, m) = pools.first()?;
        let (want, other) = if female { (f, m) } else { (m, f) };
        let least = |list: &[&'static str]| list.iter().copied().min_by_key(|v| count(v));
        return least(want).or_else(|| least(other));
    }
    for (f, m) in pools {
        let (want, other) = if female { (f, m) } else { (m, f) };
        if let Some(v) = want
            .iter()
            .chain(other.iter())
            .copied()
            .find(|v| count(v) == 0)
        {
            return Some(v);
        }
    }
    None
}

fn gender_of_voice(spec: &str) -> Option<bool> {
    let first = check_voice_spelling(spec).ok()?.into_iter().next()?;
    match first.as_bytes().get(1) {
        Some(b'f') => Some(true),
        Some(b'm') => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, voice: &str) -> CastEntry {
        CastEntry {
            name: name.into(),
            voice: voice.into(),
            speed: None,
            position: Position::START,
        }
    }

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("Guest {i}")).collect()
    }

    #[test]
    fn voice_values_parse_with_speed_and_blends() {
        assert_eq!(parse_voice_value("af_heart"), Ok(("af_heart".into(), None)));
        assert_eq!(
            parse_voice_value(" af_bella:0.7+af_sky:0.3 @1.1 "),
            Ok(("af_bella:0.7+af_sky:0.3".into(), Some(1.1)))
        );
        assert_eq!(
            parse_voice_value("af_bella(2)+af_sky(1)@0.9x"),
            Ok(("af_bella(2)+af_sky(1)".into(), Some(0.9)))
        );
        assert!(matches!(
            parse_voice_value("af heart"),
            Err(VoiceValueError::Voice(_))
        ));
        assert!(matches!(
            parse_voice_value("af_a:0+af_b:0"),
            Err(VoiceValueError::Voice(_))
        ));
        assert!(matches!(
            parse_voice_value("af_a @fast"),
            Err(VoiceValueError::Speed(_))
        ));
        assert!(matches!(
            parse_voice_value("af_a @9"),
            Err(VoiceValueError::Speed(_))
        ));
    }

    #[test]
    fn automatic_voices_alternate_and_are_distinct() {
        let got = assign_voices(
            &names(28),
            &[],
            &[],
            &HashMap::new(),
            &[],
            CastingRules::default(),
        )
        .unwrap();
        let voices: Vec<&str> = got.iter().map(|a| a.voice.as_str()).collect();
        assert_eq!(
            &voices[..4],
            ["af_heart", "am_michael", "af_bella", "am_fenrir"]
        );
        let distinct: HashSet<_> = voices.iter().collect();
        assert_eq!(distinct.len(), 28);
    }

    #[test]
    fn listed_voices_are_reserved_and_steer_the_alternation() {
        let alice = entry("Alice", "am_michael");
        let listed = HashMap::from([(speaker_key("ALICE."), &alice)]);
        let speakers = [
            "Alice".to_owned(),
            "Sam".to_owned(),
            "Lady Bracknell".into(),
        ];
        let got = assign_voices(
            &speakers,
            &[],
            &[],
            &listed,
            &[&alice],
            CastingRules::default(),
        )
        .unwrap();
        assert_eq!(got[0].voice, "am_michael");
        assert_eq!(got[0].guess, None, "a listed voice is not a guess");
        assert_eq!(
            got[1].voice, "af_heart",
            "after a male voice comes a female one"
        );
        assert_eq!(got[1].guess, None, "Sam is anybody: the balance chose");
        assert_eq!(got[2].voice, "af_bella", "a Lady is cast female");
        assert_eq!(
            got[2].guess.as_ref().map(GenderGuess::describe).as_deref(),
            Some("a female voice, guessed from the title \"Lady\"")
        );
        assert!(matches!(got[0].source, VoiceSource::Cast { .. }));
    }

    #[test]
    fn men_s_names_get_men_s_voices_as_a_labelled_guess_and_others_balance() {
        // A play's three men and a woman, and two nobody can tell from the name.
        let speakers: Vec<String> = ["Tom", "Harold", "Mary", "Peter Walker", "Host", "Guest"]
            .map(String::from)
            .into();
        let got = assign_voices(
            &speakers,
            &[],
            &[],
            &HashMap::new(),
            &[],
            CastingRules::default(),
        )
        .unwrap();
        let voices: Vec<&str> = got.iter().map(|a| a.voice.as_str()).collect();
        assert_eq!(
            voices,
            [
                "am_michael",
                "am_fenrir",
                "af_heart",
                "am_puck",
                "af_bella",
                "af_nicole"
            ],
            "men from their names; Host and Guest balance three men and one woman"
        );
        let said: Vec<Option<String>> = got
            .iter()
            .map(|a| a.guess.as_ref().map(GenderGuess::describe))
            .collect();
        assert_eq!(
            said[0].as_deref(),
            Some("a male voice, guessed from the given name \"Tom\"")
        );
        assert_eq!(
            said[2].as_deref(),
            Some("a female voice, guessed from the given name \"Mary\"")
        );
        assert_eq!(
            said[3].as_deref(),
            Some("a male voice, guessed from the given name \"Peter\"")
        );
        assert_eq!(said[4], None, "an unknown name is not guessed");
        assert_eq!(said[5], None);
    }

    #[test]
    fn a_guess_the_voices_cannot_follow_is_not_claimed() {
        // Fourteen men: the thirteen male English voices run out, the fourteenth man gets a
        // female voice, and nothing says it was guessed male.
        let men: Vec<String> = [
            "Tom", "Harold", "Peter", "John", "Paul", "George", "Mark", "Luke", "James", "Simon",
            "Andrew", "Philip", "Thomas", "Henry",
        ]
        .map(String::from)
        .into();
        let got = assign_voices(
            &men,
            &[],
            &[],
            &HashMap::new(),
            &[],
            CastingRules::default(),
        )
        .unwrap();
        let last = got.last().unwrap();
        assert_eq!(last.voice, "af_heart");
        assert_eq!(last.guess, None);
    }

    #[test]
    fn the_29th_speaker_needs_a_rule() {
        let err = assign_voices(
            &names(29),
            &[],
            &[],
            &HashMap::new(),
            &[],
            CastingRules::default(),
        );
        assert_eq!(
            err,
            Err(OutOfVoices {
                index: 28,
                available: 28
            })
        );
        let reuse = CastingRules {
            reuse_voices: true,
            any_language_voices: false,
            language: None,
        };
        assert_eq!(
            assign_voices(&names(60), &[], &[], &HashMap::new(), &[], reuse)
                .unwrap()
                .len(),
            60
        );
        let any = CastingRules {
            reuse_voices: false,
            any_language_voices: true,
            language: None,
        };
        let got = assign_voices(&names(54), &[], &[], &HashMap::new(), &[], any).unwrap();
        assert_eq!(
            got.iter().map(|g| &g.voice).collect::<HashSet<_>>().len(),
            54
        );
        assert!(assign_voices(&names(55), &[], &[], &HashMap::new(), &[], any).is_err());
    }

    #[test]
    fn speaker_keys_ignore_case_dots_and_spacing() {
        assert_eq!(
            speaker_key("  LADY   BRACKNELL. "),
            speaker_key("Lady Bracknell")
        );
        assert_ne!(speaker_key("Ann"), speaker_key("Anne"));
    }
}
