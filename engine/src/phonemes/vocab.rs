//! Kokoro's phoneme vocabulary: one id per phoneme symbol.
//!
//! The table is Kokoro-82M's published `vocab` (the same in kokoro-onnx's `config.json` and in
//! the model store's `vocab.json`): 114 symbols with ids 1..=177; id 0 is the pad that frames
//! every token sequence. It is embedded as data so phonemes can be tokenized without the model.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::PhonemeError;

/// Kokoro-82M's vocabulary, `(symbol, id)`, in id order.
const KOKORO_VOCAB: &[(char, u32)] = &[
    (';', 1),
    (':', 2),
    (',', 3),
    ('.', 4),
    ('!', 5),
    ('?', 6),
    ('—', 9),
    ('…', 10),
    ('"', 11),
    ('(', 12),
    (')', 13),
    ('“', 14),
    ('”', 15),
    (' ', 16),
    ('\u{303}', 17),
    ('ʣ', 18),
    ('ʥ', 19),
    ('ʦ', 20),
    ('ʨ', 21),
    ('ᵝ', 22),
    ('ꭧ', 23),
    ('A', 24),
    ('I', 25),
    ('O', 31),
    ('Q', 33),
    ('S', 35),
    ('T', 36),
    ('W', 39),
    ('Y', 41),
    ('ᵊ', 42),
    ('a', 43),
    ('b', 44),
    ('c', 45),
    ('d', 46),
    ('e', 47),
    ('f', 48),
    ('h', 50),
    ('i', 51),
    ('j', 52),
    ('k', 53),
    ('l', 54),
    ('m', 55),
    ('n', 56),
    ('o', 57),
    ('p', 58),
    ('q', 59),
    ('r', 60),
    ('s', 61),
    ('t', 62),
    ('u', 63),
    ('v', 64),
    ('w', 65),
    ('x', 66),
    ('y', 67),
    ('z', 68),
    ('ɑ', 69),
    ('ɐ', 70),
    ('ɒ', 71),
    ('æ', 72),
    ('β', 75),
    ('ɔ', 76),
    ('ɕ', 77),
    ('ç', 78),
    ('ɖ', 80),
    ('ð', 81),
    ('ʤ', 82),
    ('ə', 83),
    ('ɚ', 85),
    ('ɛ', 86),
    ('ɜ', 87),
    ('ɟ', 90),
    ('ɡ', 92),
    ('ɥ', 99),
    ('ɨ', 101),
    ('ɪ', 102),
    ('ʝ', 103),
    ('ɯ', 110),
    ('ɰ', 111),
    ('ŋ', 112),
    ('ɳ', 113),
    ('ɲ', 114),
    ('ɴ', 115),
    ('ø', 116),
    ('ɸ', 118),
    ('θ', 119),
    ('œ', 120),
    ('ɹ', 123),
    ('ɾ', 125),
    ('ɻ', 126),
    ('ʁ', 128),
    ('ɽ', 129),
    ('ʂ', 130),
    ('ʃ', 131),
    ('ʈ', 132),
    ('ʧ', 133),
    ('ʊ', 135),
    ('ʋ', 136),
    ('ʌ', 138),
    ('ɣ', 139),
    ('ɤ', 140),
    ('χ', 142),
    ('ʎ', 143),
    ('ʒ', 147),
    ('ʔ', 148),
    ('ˈ', 156),
    ('ˌ', 157),
    ('ː', 158),
    ('ʰ', 162),
    ('ʲ', 164),
    ('↓', 169),
    ('→', 171),
    ('↗', 172),
    ('↘', 173),
    ('ᵻ', 177),
];

/// Maps phoneme symbols (single `char`s) to Kokoro token ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vocab {
    ids: HashMap<char, u32>,
}

impl Vocab {
    /// Kokoro-82M's vocabulary (114 symbols, ids 1..=177).
    pub fn kokoro() -> &'static Vocab {
        static KOKORO: OnceLock<Vocab> = OnceLock::new();
        KOKORO.get_or_init(|| Vocab {
            ids: KOKORO_VOCAB.iter().copied().collect(),
        })
    }

    /// Reads a vocabulary in the model store's `vocab.json` layout, `{"vocab": {symbol: id}}`
    /// (a bare `{symbol: id}` map is accepted too). Every symbol must be a single character.
    pub fn from_json(json: &str) -> Result<Vocab, PhonemeError> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| PhonemeError::Vocab {
                reason: e.to_string(),
            })?;
        let map = value
            .get("vocab")
            .unwrap_or(&value)
            .as_object()
            .ok_or_else(|| PhonemeError::Vocab {
                reason: "expected an object of symbol -> id".into(),
            })?;
        let mut ids = HashMap::with_capacity(map.len());
        for (symbol, id) in map {
            let mut chars = symbol.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return Err(PhonemeError::Vocab {
                    reason: format!("symbol {symbol:?} is not a single character"),
                });
            };
            let id = id
                .as_u64()
                .and_then(|i| u32::try_from(i).ok())
                .ok_or_else(|| PhonemeError::Vocab {
                    reason: format!("id of {symbol:?} is not a small non-negative integer"),
                })?;
            ids.insert(c, id);
        }
        Ok(Vocab { ids })
    }

    /// Number of symbols.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the vocabulary has no symbols.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The id of one symbol.
    #[must_use]
    pub fn id(&self, symbol: char) -> Option<u32> {
        self.ids.get(&symbol).copied()
    }

    /// Whether `symbol` has an id.
    #[must_use]
    pub fn contains(&self, symbol: char) -> bool {
        self.ids.contains_key(&symbol)
    }

    /// Token ids of a phoneme string, without the pads; symbols outside the vocabulary are
    /// dropped (as kokoro-onnx does) and logged at debug level.
    #[must_use]
    pub fn encode(&self, phonemes: &str) -> Vec<u32> {
        phonemes
            .chars()
            .filter_map(|c| {
                let id = self.id(c);
                if id.is_none() {
                    tracing::debug!(symbol = %c.escape_unicode(), "phoneme not in vocabulary, dropped");
                }
                id
            })
            .collect()
    }

    /// `phonemes` without the symbols [`Vocab::encode`] would drop.
    #[must_use]
    pub fn filter(&self, phonemes: &str) -> String {
        phonemes.chars().filter(|&c| self.contains(c)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kokoro_table_shape() {
        let v = Vocab::kokoro();
        assert_eq!(v.len(), 114);
        let ids: Vec<u32> = KOKORO_VOCAB.iter().map(|&(_, i)| i).collect();
        assert_eq!(ids.first(), Some(&1));
        assert_eq!(ids.last(), Some(&177));
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids unique and sorted");
        assert_eq!(v.id(' '), Some(16));
        assert_eq!(v.id('ˈ'), Some(156));
        assert_eq!(v.id('ˌ'), Some(157));
        assert_eq!(v.id('ː'), Some(158));
    }

    #[test]
    fn encode_drops_unknown_symbols() {
        let v = Vocab::kokoro();
        assert_eq!(v.encode("wˈɛl¿-\n😀."), vec![65, 156, 86, 54, 4]);
        assert_eq!(v.filter("a¿b"), "ab");
        assert!(v.encode("").is_empty());
    }

    #[test]
    fn from_json_round_trip() -> Result<(), PhonemeError> {
        let json = serde_json::json!({
            "vocab": KOKORO_VOCAB.iter().map(|&(c, i)| (c.to_string(), i)).collect::<HashMap<_, _>>()
        });
        let v = Vocab::from_json(&json.to_string())?;
        assert_eq!(&v, Vocab::kokoro());
        assert!(Vocab::from_json(r#"{"ab": 1}"#).is_err());
        assert!(Vocab::from_json(r#"{"a": -1}"#).is_err());
        assert!(Vocab::from_json("[]").is_err());
        Ok(())
    }
}
