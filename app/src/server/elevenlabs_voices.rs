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
}
