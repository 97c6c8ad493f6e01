//! Who speaks with which voice: the cast, and automatic casting of everyone not listed.
//!
//! Writers should not have to cast anybody to hear a draft, so every unlisted speaker gets a
//! stock voice of their own, best-rated voices first, alternating female and male in order of
//! appearance (a title such as "Mrs" or "Sir" in the name picks the gender instead). Two speakers
//! never share a voice by accident: when the distinct voices run out the parse fails and says
//! which setting allows sharing, because a listener cannot follow a dialogue of identical voices.
//!
//! This module checks only the spelling of a voice (`af_bella:0.7+af_sky:0.3 @1.1`); whether the
//! voice is installed is the caller's question, asked through [`super::Episode::validate_voices`].

use std::collections::{HashMap, HashSet};

use serde::Serialize;

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
}

/// Automatic casting ran out of voices for the speaker at `index` (0-based) of `speakers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutOfVoices {
    pub index: usize,
    pub available: usize,
}

/// Gives each of `speakers` (in order of appearance) a voice: the listed one, else a free one.
///
/// Returns the chosen voice per speaker, in the same order.
pub(crate) fn assign_voices(
    speakers: &[String],
    listed: &HashMap<String, &CastEntry>,
    reserved: &[&CastEntry],
    rules: CastingRules,
) -> Result<Vec<(String, Option<f32>, VoiceSource)>, OutOfVoices> {
    let mut used: HashMap<&str, usize> = HashMap::new();
    for entry in reserved {
        for name in check_voice_spelling(&entry.voice).unwrap_or_default() {
            *used.entry(name).or_default() += 1;
        }
    }
    let mut pools = vec![(&ENGLISH_FEMALE[..], &ENGLISH_MALE[..])];
    if rules.any_language_voices {
        pools.push((&OTHER_LANGUAGE_FEMALE[..], &OTHER_LANGUAGE_MALE[..]));
    }
    let available: HashSet<&str> = pools
        .iter()
        .flat_map(|(f, m)| f.iter().chain(m.iter()).copied())
        .collect();
    let mut out = Vec::with_capacity(speakers.len());
    let mut previous_female: Option<bool> = None;
    for (index, name) in speakers.iter().enumerate() {
        if let Some(entry) = listed.get(&speaker_key(name)) {
            previous_female = gender_of_voice(&entry.voice).or(previous_female);
            out.push((
                entry.voice.clone(),
                entry.speed,
                VoiceSource::Cast {
                    position: entry.position,
                },
            ));
            continue;
        }
        let female = gender_hint(name).unwrap_or(previous_female.is_none_or(|f| !f));
        let voice = pick(&pools, &used, female, false)
            .or_else(|| {
                rules
                    .reuse_voices
                    .then(|| pick(&pools, &used, female, true))?
            })
            .ok_or(OutOfVoices {
                index,
                available: available.len(),
            })?;
        *used.entry(voice).or_default() += 1;
        previous_female = Some(voice.as_bytes().get(1) == Some(&b'f'));
        out.push((voice.to_owned(), None, VoiceSource::Automatic));
    }
    Ok(out)
}

/// The first free voice of the wanted gender (then of the other), pool by pool; with
/// `reuse`, the least used one instead.
fn pick<'a>(
    pools: &[(&'a [&'a str], &'a [&'a str])],
    used: &HashMap<&str, usize>,
    female: bool,
    reuse: bool,
) -> Option<&'a str> {
    let count = |v: &str| used.get(v).copied().unwrap_or(0);
    if reuse {
        let (f, m) = pools.first()?;
        let (want, other) = if female { (f, m) } else { (m, f) };
        let least = |list: &[&'a str]| list.iter().copied().min_by_key(|v| count(v));
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

/// `Some(true)` for names with a female title or role word, `Some(false)` for male ones.
fn gender_hint(name: &str) -> Option<bool> {
    const FEMALE: [&str; 20] = [
        "mrs", "miss", "ms", "lady", "queen", "princess", "duchess", "mother", "sister", "aunt",
        "woman", "girl", "madam", "madame", "wife", "daughter", "dame", "mme", "señora", "frau",
    ];
    const MALE: [&str; 18] = [
        "mr",
        "sir",
        "lord",
        "king",
        "prince",
        "duke",
        "father",
        "brother",
        "uncle",
        "man",
        "boy",
        "gentleman",
        "husband",
        "son",
        "monsieur",
        "señor",
        "herr",
        "mister",
    ];
    for word in name.split(|c: char| !c.is_alphanumeric()) {
        let w = word.to_lowercase();
        if FEMALE.contains(&w.as_str()) {
            return Some(true);
        }
        if MALE.contains(&w.as_str()) {
            return Some(false);
        }
    }
    None
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
        let got = assign_voices(&names(28), &HashMap::new(), &[], CastingRules::default()).unwrap();
        let voices: Vec<&str> = got.iter().map(|(v, _, _)| v.as_str()).collect();
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
            "Bob".to_owned(),
            "Lady Bracknell".into(),
        ];
        let got = assign_voices(&speakers, &listed, &[&alice], CastingRules::default()).unwrap();
        assert_eq!(got[0].0, "am_michael");
        assert_eq!(
            got[1].0, "af_heart",
            "after a male voice comes a female one"
        );
        assert_eq!(got[2].0, "af_bella", "a Lady is cast female");
        assert!(matches!(got[0].2, VoiceSource::Cast { .. }));
    }

    #[test]
    fn the_29th_speaker_needs_a_rule() {
        let err = assign_voices(&names(29), &HashMap::new(), &[], CastingRules::default());
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
        };
        assert_eq!(
            assign_voices(&names(60), &HashMap::new(), &[], reuse)
                .unwrap()
                .len(),
            60
        );
        let any = CastingRules {
            reuse_voices: false,
            any_language_voices: true,
        };
        let got = assign_voices(&names(54), &HashMap::new(), &[], any).unwrap();
        assert_eq!(got.iter().map(|g| &g.0).collect::<HashSet<_>>().len(), 54);
        assert!(assign_voices(&names(55), &HashMap::new(), &[], any).is_err());
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
