//! ElevenLabs' premade voices, each with the stock Kokoro voice Banter speaks in its place.
//!
//! Why: an ElevenLabs integration pointed at Banter keeps the voice id it was configured with
//! (its SDK examples and most apps default to one of these), and refusing it made the switch
//! cost a configuration change in every client. The id is answered with a voice of the same
//! gender and accent, the namesake where Kokoro has one (Sarah, Jessica, Adam, George...), and
//! the answer says so (`x-banter-voice`): a guess is never silent. Other ids are still refused.
//!
//! The ids, names, genders and accents are ElevenLabs' public premade list as `GET /v1/voices`
//! returned it in 2026 (21 voices), plus Rachel, the older default that much code still names.

use engine::phonemes::Language;
use engine::voice::VoiceSpec;

use crate::server::errors::ApiError;
use crate::server::input_language::stock_voice_like;

/// (ElevenLabs voice id, its name, the stock voice spoken for it).
const PREMADE: [(&str, &str, &str); 22] = [
    ("21m00Tcm4TlvDq8ikWAM", "Rachel", "af_heart"),
    ("EXAVITQu4vr4xnSDxMaL", "Sarah", "af_sarah"),
    ("CwhRBWXzGAHq8TQ4Fs17", "Roger", "am_michael"),
    ("FGY2WhTYpPnrIDTdsKH5", "Laura", "af_nicole"),
    ("IKne3meq5aSn9XLyUdCD", "Charlie", "am_echo"),
    ("JBFqnCBsd6RMkjVDRZzb", "George", "bm_george"),
    ("N2lVS1w4EtoT3dr4eOWO", "Callum", "am_onyx"),
    ("SAz9YHcvj6GT2YYXdXww", "River", "af_river"),
    ("SOYHLrjzK2X1ezoPC6cr", "Harry", "am_puck"),
    ("TX3LPaxmHKxFdv7VOQHJ", "Liam", "am_liam"),
    ("Xb7hH8MSUJpSbSDYk0k2", "Alice", "bf_alice"),
    ("XrExE9yKIg1WjnnlVkGX", "Matilda", "af_kore"),
    ("bIHbv24MWmeRgasZH58o", "Will", "am_fenrir"),
    ("cgSgspJ2msm6clMCkdW9", "Jessica", "af_jessica"),
    ("cjVigY5qzO86Huf0OWal", "Eric", "am_eric"),
    ("hpp4J3VqNfWAUOO0d1Us", "Bella", "af_bella"),
    ("iP95p4xoKVk53GoZ742B", "Chris", "am_michael"),
    ("nPczCjzI2devNBz1zQrb", "Brian", "am_onyx"),
    ("onwK4e9ZLuTAKqWW03F9", "Daniel", "bm_daniel"),
    ("pFZP5JQG7iQjIQuC4Bku", "Lily", "bf_lily"),
    ("pNInz6obpgDQGcFmaJgB", "Adam", "am_adam"),
    ("pqHfZKP75CvOlQylNhV4", "Bill", "am_fenrir"),
];

/// The stock voice spoken for an ElevenLabs premade voice id, and that voice's name.
#[must_use]
pub fn stand_in(voice_id: &str) -> Option<(&'static str, &'static str)> {
    PREMADE
        .iter()
        .find(|(id, _, _)| *id == voice_id)
        .map(|(_, name, stock)| (*stock, *name))
}

/// The `x-banter-voice` header's value for a stand-in: `af_sarah (for ElevenLabs' Sarah)`.
#[must_use]
pub fn note(stock: &str, name: &str) -> String {
    format!("{stock} (for ElevenLabs' {name})")
}

/// Kokoro's languages by the ISO 639-1 code ElevenLabs' `language_code` takes (a region after
/// `-` or `_` is allowed: `pt-BR`, `en_GB`); the first is the one a stand-in is chosen in.
fn languages_of(code: &str) -> Option<&'static [Language]> {
    let primary = code
        .split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    Some(match primary.as_str() {
        "en" | "eng" => &[Language::EnUs, Language::EnGb],
        "es" | "spa" => &[Language::Es],
        "fr" | "fra" => &[Language::Fr],
        "hi" | "hin" => &[Language::Hi],
        "it" | "ita" => &[Language::It],
        "pt" | "por" => &[Language::PtBr],
        "ja" | "jpn" => &[Language::Ja],
        "zh" | "cmn" | "zho" => &[Language::Cmn],
        _ => return None,
    })
}

/// What a request's `language_code` asks of its voice: `Ok(None)` when the voice speaks that
/// language (or is a library or Piper voice, whose language is its own), `Ok(Some(stock))`
/// when the voice was an ElevenLabs premade stand-in and another stock voice of the same gender
/// speaks the language, and an error saying what to choose when a voice the client named
/// cannot speak it (Kokoro reads text by its voice's language: French read by an English voice
/// is not French).
pub fn for_language(
    code: &str,
    resolved: &str,
    stand_in: Option<(&'static str, &'static str)>,
) -> Result<Option<&'static str>, String> {
    let Some(languages) = languages_of(code) else {
        return Err(format!(
            "language_code `{code}` is not a language Kokoro speaks; it speaks en, es, fr, hi, \
             it, pt, ja and zh"
        ));
    };
    let Ok(spec) = VoiceSpec::parse(resolved) else {
        return Ok(None);
    };
    if spec.piper_key().is_some() || languages.contains(&spec.language()) {
        return Ok(None);
    }
    let wanted = languages[0];
    let like = stand_in.map_or("", |(stock, _)| stock);
    let (swap, examples) =
        stock_voice_like(|name| Language::from_voice_name(name) == Some(wanted), like);
    if stand_in.is_some() && swap.is_some() {
        return Ok(swap);
    }
    Err(format!(
        "voice `{resolved}` speaks {}, and language_code asks for `{code}`; choose a voice of \
         that language ({}) or leave language_code out",
        spec.language(),
        examples.join(", ")
    ))
}

/// [`for_language`] as both of ElevenLabs' routes answer it: the stock voice to speak instead
/// with its `x-banter-voice` note (`ff_siwis (for ElevenLabs' Rachel) in fr`), or a 400.
pub fn swap_for_language(
    code: &str,
    resolved: &str,
    stand_in: Option<(&'static str, &'static str)>,
) -> Result<Option<(&'static str, String)>, ApiError> {
    let swap = for_language(code, resolved, stand_in)
        .map_err(|m| ApiError::invalid("language_code", "invalid_language_code", m))?;
    Ok(swap.map(|stock| {
        let name = stand_in.map_or("", |(_, name)| name);
        (stock, format!("{} in {code}", note(stock, name)))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_premade_voice_has_a_stock_voice_of_its_own_kind() {
        let stock = engine::assets::manifest::KOKORO_V1.voices.names;
        for (id, name, voice) in PREMADE {
            assert_eq!(id.len(), 20, "{name}'s id");
            assert!(
                stock.contains(&voice),
                "{name}: `{voice}` is no stock voice"
            );
        }
        assert_eq!(
            stand_in("EXAVITQu4vr4xnSDxMaL"),
            Some(("af_sarah", "Sarah"))
        );
        assert_eq!(stand_in("af_sarah"), None);
        let ids: std::collections::HashSet<&str> = PREMADE.iter().map(|p| p.0).collect();
        assert_eq!(ids.len(), PREMADE.len(), "an id listed twice");
    }

    #[test]
    fn a_language_code_keeps_swaps_or_refuses_the_voice() {
        // English for an English voice, whatever the accent or region.
        assert_eq!(for_language("en", "af_heart", None), Ok(None));
        assert_eq!(for_language("en-GB", "bf_emma", None), Ok(None));
        // Rachel asked to speak French, Adam Spanish: stock voices of that language and gender.
        let rachel = stand_in("21m00Tcm4TlvDq8ikWAM");
        assert_eq!(for_language("fr", "af_heart", rachel), Ok(Some("ff_siwis")));
        let adam = stand_in("pNInz6obpgDQGcFmaJgB");
        let spanish = for_language("es", "am_adam", adam).expect("a swap");
        assert!(spanish.is_some_and(|v| v.starts_with("em_")), "{spanish:?}");
        // A voice the client chose is not swapped behind its back.
        let e = for_language("fr", "af_heart", None).expect_err("refused");
        assert!(e.contains("af_heart") && e.contains("ff_siwis"), "{e}");
        // A language Kokoro does not speak.
        let e = for_language("de", "af_heart", None).expect_err("german");
        assert!(e.contains("`de`") && e.contains("en, es"), "{e}");
    }
}
