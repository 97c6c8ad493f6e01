//! Voices: Kokoro's stock style tables and weighted blends of them.
//!
//! A Kokoro voice is a table of 510 style vectors of 256 floats; row *n − 1* is the style for an
//! input of *n* phoneme ids (models.md, "Voices"). A blend is the weighted sum of several tables
//! with weights normalised to 1. Two spellings of a blend are accepted, because both are in use:
//! `af_bella:0.7+af_sky:0.3` (weights) and `af_bella(2)+af_sky(1)` (Kokoro-FastAPI's ratios).

use std::fmt;
use std::path::{Path, PathBuf};

use crate::phonemes::Language;

mod book;
mod piper;

pub use book::{stock_voices, VoiceBook};
pub use piper::{
    file_sha256, inspect_piper_model, is_piper_key, piper_key, PiperModelInfo, PiperVoice,
    PIPER_PREFIX,
};
/// A Piper voice's `.onnx.json`, validated.
pub use vits::config::PiperConfig;

/// Rows in a voice table: one per possible phoneme count (1..=510).
pub const STYLE_ROWS: usize = 510;
/// Width of one style vector: `[..128]` acoustic (decoder), `[128..]` prosodic (predictor).
pub const STYLE_DIM: usize = 256;
const TABLE_BYTES: usize = STYLE_ROWS * STYLE_DIM * 4;

/// What can go wrong when naming or loading a voice.
#[derive(Debug, thiserror::Error)]
pub enum VoiceError {
    #[error("unknown voice `{name}`; available voices: {available}")]
    Unknown { name: String, available: String },
    #[error("malformed voice blend `{spec}`: {reason}. Write it as `af_bella:0.7+af_sky:0.3` or `af_bella(2)+af_sky(1)`")]
    MalformedBlend { spec: String, reason: String },
    #[error("voice table {path} has {len} bytes, expected {TABLE_BYTES} (510 x 256 f32); delete the models folder and run `banter models fetch`")]
    BadTable { path: PathBuf, len: usize },
    #[error("voice table {path} contains non-finite values")]
    NonFinite { path: PathBuf },
    #[error("Piper voice {name} ({path}): {reason}")]
    PiperFile {
        name: String,
        path: PathBuf,
        reason: String,
    },
    #[error("the Piper voice `{key}` is not known to this engine (add it with `banter voices add NAME FILE.onnx`)")]
    UnknownPiper { key: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Gender of a stock voice, from the second letter of its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Gender {
    Female,
    Male,
}

impl fmt::Display for Gender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Gender::Female => "female",
            Gender::Male => "male",
        })
    }
}

/// A stock voice's name and what its name says about it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StockVoice {
    pub name: String,
    #[serde(serialize_with = "language_code")]
    pub language: Language,
    pub gender: Gender,
}

impl StockVoice {
    /// Parses a stock name such as `af_heart`: language letter, gender letter, `_`, name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        let mut chars = name.chars();
        let lang = chars.next()?;
        let gender = match chars.next()? {
            'f' => Gender::Female,
            'm' => Gender::Male,
            _ => return None,
        };
        if chars.next()? != '_' || name.len() < 4 {
            return None;
        }
        if !name[3..]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        {
            return None;
        }
        Some(Self {
            name: name.to_owned(),
            language: Language::from_voice_prefix(lang)?,
            gender,
        })
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's serialize_with passes a reference
fn language_code<S: serde::Serializer>(language: &Language, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(language.espeak_code())
}

/// One term of a blend: a stock voice and its (not yet normalised) weight.
#[derive(Debug, Clone, PartialEq)]
pub struct BlendTerm {
    pub voice: String,
    pub weight: f32,
}

/// A voice as the user names it: one stock voice, or a weighted blend of several.
#[derive(Debug, Clone, PartialEq)]
pub struct VoiceSpec {
    pub terms: Vec<BlendTerm>,
}

impl VoiceSpec {
    /// One voice at full weight: a stock voice's name, or a key a table or Piper voice is
    /// registered under.
    #[must_use]
    pub fn one(voice: String) -> Self {
        Self {
            terms: vec![BlendTerm { voice, weight: 1.0 }],
        }
    }

    /// Parses `af_heart`, `af_bella:0.7+af_sky:0.3` or `af_bella(2)+af_sky(1)`.
    pub fn parse(spec: &str) -> Result<Self, VoiceError> {
        let bad = |reason: &str| VoiceError::MalformedBlend {
            spec: spec.to_owned(),
            reason: reason.to_owned(),
        };
        let trimmed = spec.trim();
        if trimmed.is_empty() {
            return Err(bad("it is empty"));
        }
        let parts = trimmed.split('+').count();
        if parts > MAX_BLEND_TERMS {
            return Err(bad(&format!(
                "it mixes {parts} voices; a blend mixes at most {MAX_BLEND_TERMS}"
            )));
        }
        let mut terms = Vec::new();
        for part in trimmed.split('+') {
            let part = part.trim();
            if part.is_empty() {
                return Err(bad("a `+` has no voice on one side"));
            }
            let (name, weight) = if let Some((name, w)) = part.split_once(':') {
                (
                    name.trim(),
                    parse_weight(w.trim()).ok_or_else(|| bad(&format!("`{w}` is not a weight")))?,
                )
            } else if let Some((name, rest)) = part.split_once('(') {
                let w = rest
                    .strip_suffix(')')
                    .ok_or_else(|| bad("a `(` is not closed"))?;
                (
                    name.trim(),
                    parse_weight(w.trim()).ok_or_else(|| bad(&format!("`{w}` is not a weight")))?,
                )
            } else {
                (part, 1.0)
            };
            if name.is_empty()
                || !(is_piper_key(name)
                    || name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            {
                return Err(bad(&format!("`{name}` is not a voice name")));
            }
            terms.push(BlendTerm {
                voice: name.to_owned(),
                weight,
            });
        }
        if terms.iter().map(|t| t.weight).sum::<f32>() <= 0.0 {
            return Err(bad("the weights add up to zero"));
        }
        if terms.len() > 1 && terms.iter().any(|t| is_piper_key(&t.voice)) {
            return Err(bad(
                "a Piper voice cannot be blended (blends mix Kokoro voices' style tables)",
            ));
        }
        Ok(Self { terms })
    }

    /// The Piper voice's key when this spec names one (see [`PiperVoice::key`]).
    #[must_use]
    pub fn piper_key(&self) -> Option<&str> {
        match self.terms.as_slice() {
            [one] if is_piper_key(&one.voice) => Some(&one.voice),
            _ => None,
        }
    }

    /// The language to phonemize in: that of the heaviest term (American English if unknown).
    #[must_use]
    pub fn language(&self) -> Language {
        self.terms
            .iter()
            .max_by(|a, b| a.weight.total_cmp(&b.weight))
            .and_then(|t| StockVoice::from_name(&t.voice))
            .map_or(Language::EnUs, |v| v.language)
    }

    /// Canonical text form, weights normalised: `af_bella:0.7+af_sky:0.3`, or the bare name.
    #[must_use]
    pub fn canonical(&self) -> String {
        if let [one] = self.terms.as_slice() {
            return one.voice.clone();
        }
        let total: f32 = self.terms.iter().map(|t| t.weight).sum();
        self.terms
            .iter()
            .map(|t| format!("{}:{}", t.voice, round_weight(t.weight / total)))
            .collect::<Vec<_>>()
            .join("+")
    }
}

fn round_weight(w: f32) -> f32 {
    (w * 1000.0).round() / 1000.0
}

/// The most voices one blend may mix (there are 54 stock voices; a longer recipe is a mistake
/// or an attack on the parser, and gets a reason that says so).
pub const MAX_BLEND_TERMS: usize = 64;

fn parse_weight(s: &str) -> Option<f32> {
    let w: f32 = s.parse().ok()?;
    (w.is_finite() && w >= 0.0).then_some(w)
}

/// A loaded voice: 510 style rows of 256 floats.
#[derive(Clone)]
pub struct VoiceTable {
    rows: Vec<f32>,
}

impl fmt::Debug for VoiceTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VoiceTable")
            .field("rows", &STYLE_ROWS)
            .finish()
    }
}

impl VoiceTable {
    /// Reads a raw little-endian f32 table of shape (510, 1, 256).
    pub fn read(path: &Path) -> Result<Self, VoiceError> {
        let bytes = fs_err::read(path)?;
        Self::from_bytes(&bytes).map_err(|e| match e {
            VoiceError::BadTable { len, .. } => VoiceError::BadTable {
                path: path.to_owned(),
                len,
            },
            VoiceError::NonFinite { .. } => VoiceError::NonFinite {
                path: path.to_owned(),
            },
            other => other,
        })
    }

    /// Builds a table from raw little-endian f32 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, VoiceError> {
        if bytes.len() != TABLE_BYTES {
            return Err(VoiceError::BadTable {
                path: PathBuf::new(),
                len: bytes.len(),
            });
        }
        let rows: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if rows.iter().any(|v| !v.is_finite()) {
            return Err(VoiceError::NonFinite {
                path: PathBuf::new(),
            });
        }
        Ok(Self { rows })
    }

    /// The weighted, normalised sum of several tables.
    #[must_use]
    pub fn blend(parts: &[(VoiceTable, f32)]) -> Self {
        let total: f32 = parts.iter().map(|(_, w)| *w).sum();
        let mut rows = vec![0.0f32; STYLE_ROWS * STYLE_DIM];
        for (table, w) in parts {
            let w = if total > 0.0 { w / total } else { 0.0 };
            for (acc, v) in rows.iter_mut().zip(&table.rows) {
                *acc += w * v;
            }
        }
        Self { rows }
    }

    /// The style vector for an input of `phoneme_count` ids (without the two pads).
    #[must_use]
    pub fn style_for(&self, phoneme_count: usize) -> &[f32] {
        let row = phoneme_count.clamp(1, STYLE_ROWS) - 1;
        &self.rows[row * STYLE_DIM..(row + 1) * STYLE_DIM]
    }

    /// Every value, row after row (510 × 256).
    #[must_use]
    pub fn values(&self) -> &[f32] {
        &self.rows
    }

    /// A table from 510 × 256 finite values, row after row (a tuned voice's pack).
    pub fn from_values(rows: Vec<f32>) -> Result<Self, VoiceError> {
        if rows.len() != STYLE_ROWS * STYLE_DIM {
            return Err(VoiceError::BadTable {
                path: PathBuf::new(),
                len: rows.len() * 4,
            });
        }
        if rows.iter().any(|v| !v.is_finite()) {
            return Err(VoiceError::NonFinite {
                path: PathBuf::new(),
            });
        }
        Ok(Self { rows })
    }

    /// Raw little-endian bytes, as stored.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        self.rows.iter().flat_map(|v| v.to_le_bytes()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blend_of_too_many_voices_says_so() {
        let many = vec!["af_bella:0.5"; 2000].join("+");
        let e = VoiceSpec::parse(&many).expect_err("2000 parts");
        assert!(e.to_string().contains("mixes 2000 voices"), "{e}");
        let most = vec!["af_bella"; MAX_BLEND_TERMS].join("+");
        assert!(VoiceSpec::parse(&most).is_ok());
    }

    #[test]
    fn parses_plain_and_both_blend_spellings() {
        assert_eq!(
            VoiceSpec::parse("af_heart").unwrap().canonical(),
            "af_heart"
        );
        let a = VoiceSpec::parse("af_bella:0.7+af_sky:0.3").unwrap();
        assert_eq!(a.canonical(), "af_bella:0.7+af_sky:0.3");
        let b = VoiceSpec::parse("af_bella(2) + af_sky(1)").unwrap();
        assert_eq!(b.canonical(), "af_bella:0.667+af_sky:0.333");
        assert_eq!(b.language(), Language::EnUs);
        assert_eq!(
            VoiceSpec::parse("bf_emma:3+af_sky:1").unwrap().language(),
            Language::EnGb
        );
    }

    #[test]
    fn rejects_malformed_blends() {
        for bad in [
            "",
            "  ",
            "af_bella+",
            "+af_sky",
            "af_bella:x",
            "af_bella(2",
            "af_bella:-1",
            "a b",
            "af_bella:0+af_sky:0",
            "af_bella:nan",
        ] {
            assert!(
                matches!(
                    VoiceSpec::parse(bad),
                    Err(VoiceError::MalformedBlend { .. })
                ),
                "{bad:?} should be rejected"
            );
        }
    }

    #[test]
    fn stock_names_give_language_and_gender() {
        let v = StockVoice::from_name("bm_george").unwrap();
        assert_eq!((v.language, v.gender), (Language::EnGb, Gender::Male));
        assert!(StockVoice::from_name("xx_foo").is_none());
        assert!(StockVoice::from_name("af").is_none());
        assert!(StockVoice::from_name("afheart").is_none());
    }

    fn table(value: f32) -> VoiceTable {
        VoiceTable {
            rows: vec![value; STYLE_ROWS * STYLE_DIM],
        }
    }

    #[test]
    fn blend_normalises_weights_and_rows_are_indexed_by_length() {
        let t = VoiceTable::blend(&[(table(1.0), 3.0), (table(5.0), 1.0)]);
        assert!((t.style_for(10)[0] - 2.0).abs() < 1e-6);
        let mut rows = vec![0.0; STYLE_ROWS * STYLE_DIM];
        rows[4 * STYLE_DIM] = 7.0;
        let t = VoiceTable { rows };
        assert!((t.style_for(5)[0] - 7.0).abs() < f32::EPSILON);
        assert_eq!(t.style_for(0).len(), STYLE_DIM);
        assert_eq!(t.style_for(100_000).len(), STYLE_DIM);
    }

    #[test]
    fn bytes_round_trip_and_bad_sizes_are_errors() {
        let t = table(0.5);
        let back = VoiceTable::from_bytes(&t.to_bytes()).unwrap();
        assert_eq!(back.style_for(3), t.style_for(3));
        assert!(matches!(
            VoiceTable::from_bytes(&[0u8; 12]),
            Err(VoiceError::BadTable { .. })
        ));
        let mut bytes = t.to_bytes();
        bytes[0..4].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(matches!(
            VoiceTable::from_bytes(&bytes),
            Err(VoiceError::NonFinite { .. })
        ));
    }
}
