//! A Piper voice's `.onnx.json`: what the graph cannot say about itself (the phoneme ids, the
//! espeak voice, the sample rate, the inference defaults, the speakers) and the licence facts
//! Banter shows beside the voice.
//!
//! Why checked here: the file comes from wherever the user got the voice. Every field the model
//! relies on is validated once, with the file named in the error, so a broken voice is refused
//! when it is added, never halfway through an episode.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Deserialize;

use crate::VitsError;

/// The ids every Piper phoneme map has: sentence start, the pad between phonemes, sentence end.
pub const BOS: &str = "^";
pub const PAD: &str = "_";
pub const EOS: &str = "$";

/// How the voice turns text into phonemes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhonemeType {
    /// espeak-ng IPA, clause by clause (almost every Piper voice).
    Espeak,
    /// The text's own Unicode code points after NFD.
    Text,
}

/// Inference defaults the voice was published with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inference {
    /// Scale of the prior's noise (expressiveness).
    pub noise_scale: f32,
    /// Duration multiplier: 1 is the voice's pace, larger is slower.
    pub length_scale: f32,
    /// Scale of the duration predictor's noise (rhythm variation).
    pub noise_w: f32,
}

/// A validated `.onnx.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct PiperConfig {
    pub sample_rate: u32,
    pub quality: Option<String>,
    pub espeak_voice: String,
    pub phoneme_type: PhonemeType,
    pub inference: Inference,
    /// Phoneme (one or a few code points) to its ids.
    pub phoneme_id_map: HashMap<String, Vec<i64>>,
    /// The file's `phoneme_map` (piper-tts 1.8.0 reads but never applies it; neither does
    /// Banter, so the ids stay piper's).
    pub phoneme_map: HashMap<String, Vec<String>>,
    /// Runs of phonemes the voice was trained on as one (`vowel_clusters`), merged before the
    /// ids are looked up.
    pub vowel_clusters: Vec<Vec<String>>,
    pub num_symbols: usize,
    pub num_speakers: usize,
    /// Speaker name to id, sorted by name (empty for a one-speaker voice).
    pub speakers: BTreeMap<String, i64>,
    /// The language code, e.g. `en_US`.
    pub language: Option<String>,
    /// The dataset the voice was trained on, as the file names it.
    pub dataset: Option<String>,
    /// The licence, where the file states one.
    pub license: Option<String>,
    pub piper_version: Option<String>,
}

#[derive(Deserialize)]
struct Raw {
    audio: RawAudio,
    #[serde(default)]
    espeak: Option<RawEspeak>,
    #[serde(default)]
    inference: Option<RawInference>,
    #[serde(default)]
    phoneme_type: Option<String>,
    #[serde(default)]
    phoneme_map: HashMap<String, Vec<String>>,
    #[serde(default)]
    vowel_clusters: Vec<Vec<String>>,
    phoneme_id_map: HashMap<String, Vec<i64>>,
    #[serde(default)]
    num_symbols: Option<usize>,
    #[serde(default)]
    num_speakers: Option<usize>,
    #[serde(default)]
    speaker_id_map: HashMap<String, i64>,
    #[serde(default)]
    language: Option<RawLanguage>,
    #[serde(default)]
    dataset: Option<String>,
    #[serde(default, alias = "licence")]
    license: Option<String>,
    #[serde(default)]
    piper_version: Option<String>,
}

#[derive(Deserialize)]
struct RawAudio {
    sample_rate: u32,
    #[serde(default)]
    quality: Option<String>,
}

#[derive(Deserialize)]
struct RawEspeak {
    voice: String,
}

#[derive(Deserialize)]
struct RawInference {
    #[serde(default)]
    noise_scale: Option<f32>,
    #[serde(default)]
    length_scale: Option<f32>,
    #[serde(default)]
    noise_w: Option<f32>,
}

#[derive(Deserialize)]
struct RawLanguage {
    #[serde(default)]
    code: Option<String>,
}

/// Piper's own defaults, used where the file gives none.
const DEFAULTS: Inference = Inference {
    noise_scale: 0.667,
    length_scale: 1.0,
    noise_w: 0.8,
};

impl PiperConfig {
    /// Reads and validates `path`.
    pub fn read(path: &Path) -> Result<Self, VitsError> {
        let text = std::fs::read_to_string(path).map_err(|source| VitsError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text).map_err(|reason| VitsError::Config {
            path: path.to_path_buf(),
            reason,
        })
    }

    /// Parses and validates the JSON text of a `.onnx.json`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let raw: Raw = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let phoneme_type = match raw.phoneme_type.as_deref().unwrap_or("espeak") {
            "espeak" => PhonemeType::Espeak,
            "text" => PhonemeType::Text,
            other => {
                return Err(format!(
                    "phoneme_type {other:?} is not supported (Banter reads \"espeak\" and \"text\" voices)"
                ))
            }
        };
        let espeak_voice = match (&raw.espeak, phoneme_type) {
            (Some(e), _) if !e.voice.trim().is_empty() => e.voice.trim().to_owned(),
            (_, PhonemeType::Text) => String::new(),
            _ => return Err("espeak.voice is missing".to_owned()),
        };
        if !(8_000..=48_000).contains(&raw.audio.sample_rate) {
            return Err(format!(
                "audio.sample_rate {} is outside 8000..=48000",
                raw.audio.sample_rate
            ));
        }
        let inference = raw.inference.as_ref().map_or(DEFAULTS, |i| Inference {
            noise_scale: i.noise_scale.unwrap_or(DEFAULTS.noise_scale),
            length_scale: i.length_scale.unwrap_or(DEFAULTS.length_scale),
            noise_w: i.noise_w.unwrap_or(DEFAULTS.noise_w),
        });
        for (name, v) in [
            ("noise_scale", inference.noise_scale),
            ("length_scale", inference.length_scale),
            ("noise_w", inference.noise_w),
        ] {
            if !v.is_finite() || !(0.0..=10.0).contains(&v) {
                return Err(format!("inference.{name} {v} is outside 0..=10"));
            }
        }
        if inference.length_scale <= 0.0 {
            return Err("inference.length_scale must be above 0".to_owned());
        }
        for key in [BOS, PAD, EOS] {
            match raw.phoneme_id_map.get(key) {
                Some(ids) if !ids.is_empty() => {}
                _ => return Err(format!("phoneme_id_map has no id for {key:?}")),
            }
        }
        let max_id = raw
            .phoneme_id_map
            .values()
            .flatten()
            .copied()
            .max()
            .unwrap_or(0);
        if let Some(bad) = raw.phoneme_id_map.values().flatten().find(|&&id| id < 0) {
            return Err(format!("phoneme_id_map holds a negative id {bad}"));
        }
        let num_symbols = raw.num_symbols.unwrap_or(max_id as usize + 1);
        if max_id as usize >= num_symbols {
            return Err(format!(
                "phoneme_id_map uses id {max_id} but num_symbols is {num_symbols}"
            ));
        }
        let num_speakers = raw.num_speakers.unwrap_or(1).max(1);
        if let Some((name, id)) = raw
            .speaker_id_map
            .iter()
            .find(|(_, &id)| id < 0 || id as usize >= num_speakers)
        {
            return Err(format!(
                "speaker {name:?} has id {id}, outside the model's {num_speakers} speakers"
            ));
        }
        Ok(Self {
            sample_rate: raw.audio.sample_rate,
            quality: raw.audio.quality,
            espeak_voice,
            phoneme_type,
            inference,
            phoneme_id_map: raw.phoneme_id_map,
            phoneme_map: raw.phoneme_map,
            vowel_clusters: raw.vowel_clusters,
            num_symbols,
            num_speakers,
            speakers: raw.speaker_id_map.into_iter().collect(),
            language: raw.language.and_then(|l| l.code),
            dataset: raw.dataset,
            license: raw.license,
            piper_version: raw.piper_version,
        })
    }

    /// The speakers a multi-speaker voice offers, by name and id; for a voice whose file names
    /// none, `speaker 0`, `speaker 1`... so every speaker can still be chosen.
    #[must_use]
    pub fn speaker_list(&self) -> Vec<(String, i64)> {
        if self.num_speakers <= 1 {
            return Vec::new();
        }
        if self.speakers.is_empty() {
            return (0..self.num_speakers as i64)
                .map(|id| (format!("speaker {id}"), id))
                .collect();
        }
        let mut list: Vec<(String, i64)> = self.speakers.clone().into_iter().collect();
        list.sort_by_key(|(_, id)| *id);
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal() -> serde_json::Value {
        serde_json::json!({
            "audio": {"sample_rate": 22050, "quality": "medium"},
            "espeak": {"voice": "en-us"},
            "inference": {"noise_scale": 0.667, "length_scale": 1, "noise_w": 0.8},
            "phoneme_type": "espeak",
            "phoneme_id_map": {"^": [1], "_": [0], "$": [2], "a": [14]},
            "num_symbols": 256,
            "num_speakers": 1,
            "speaker_id_map": {},
            "dataset": "joe",
        })
    }

    #[test]
    fn reads_a_voice() {
        let c = PiperConfig::parse(&minimal().to_string()).expect("valid");
        assert_eq!(c.sample_rate, 22_050);
        assert_eq!(c.espeak_voice, "en-us");
        assert!((c.inference.noise_w - 0.8).abs() < 1e-6);
        assert_eq!(c.dataset.as_deref(), Some("joe"));
        assert!(c.speaker_list().is_empty());
    }

    #[test]
    fn refuses_what_the_model_cannot_use_and_says_which_field() {
        let cases: [(&str, serde_json::Value); 5] = [
            ("espeak.voice", serde_json::json!({"espeak": null})),
            (
                "sample_rate",
                serde_json::json!({"audio": {"sample_rate": 100}}),
            ),
            (
                "\"$\"",
                serde_json::json!({"phoneme_id_map": {"^": [1], "_": [0]}}),
            ),
            ("num_symbols", serde_json::json!({"num_symbols": 10})),
            (
                "phoneme_type",
                serde_json::json!({"phoneme_type": "pinyin"}),
            ),
        ];
        for (needle, patch) in cases {
            let mut v = minimal();
            for (k, val) in patch.as_object().expect("object") {
                v[k] = val.clone();
            }
            let err = PiperConfig::parse(&v.to_string()).expect_err(needle);
            assert!(err.contains(needle), "{needle}: {err}");
        }
    }

    #[test]
    fn a_multi_speaker_voice_offers_each_speaker_in_id_order() {
        let mut v = minimal();
        v["num_speakers"] = 3.into();
        v["speaker_id_map"] = serde_json::json!({"zoe": 0, "adam": 2, "mia": 1});
        let c = PiperConfig::parse(&v.to_string()).expect("valid");
        let names: Vec<String> = c.speaker_list().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["zoe", "mia", "adam"]);
        v["speaker_id_map"] = serde_json::json!({"x": 3});
        assert!(PiperConfig::parse(&v.to_string()).is_err());
    }
}
