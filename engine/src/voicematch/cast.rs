//! Cast check: warn when two speakers of one episode have voices a listener may not tell
//! apart, judged by the cosine similarity of their voices' probe embeddings.
//!
//! The threshold comes from measurements with this encoder and probe (see
//! [`CAST_WARN_SIMILARITY`]). The check is advice: it never fails a script.

use std::collections::HashMap;

use super::embed::VoiceEmbedder;
use super::resolve::resolve_voice;
use super::VoiceMatchError;
use crate::library::Library;
use crate::speaker::Embedding;
use crate::Engine;

/// Two voices at or above this similarity are flagged as hard to tell apart.
///
/// Measured with this encoder and probe passage (all 28 English stock voices): the same
/// voice reading a different text scores 0.977 against its probe (`af_bella`); two different
/// stock voices score 0.46–0.89 (median 0.65; female pairs median 0.71, male 0.68, mixed
/// 0.60; the closest pair `am_fenrir`/`am_puck` 0.89); blends sit near their heavier parent
/// (`af_bella` 0.9/0.7/0.5 with `af_heart`: 0.978/0.967/0.949 against an `af_bella` clip). So 0.90
/// flags voices closer than any two distinct stock voices are: shared voices and
/// near-copies, not merely similar timbres.
pub const CAST_WARN_SIMILARITY: f32 = 0.90;

/// Two speakers whose voices are close.
#[derive(Debug, Clone, PartialEq)]
pub struct CastPair {
    pub speaker_a: String,
    pub voice_a: String,
    pub speaker_b: String,
    pub voice_b: String,
    pub similarity: f32,
}

impl CastPair {
    /// A one-line warning for a person.
    #[must_use]
    pub fn message(&self) -> String {
        if self.voice_a == self.voice_b {
            format!(
                "{} and {} share the voice {}: listeners cannot tell them apart",
                self.speaker_a, self.speaker_b, self.voice_a
            )
        } else {
            format!(
                "{} ({}) and {} ({}) sound alike (voice similarity {:.2} ≥ {:.2}); \
                 consider a more distinct voice for one of them",
                self.speaker_a,
                self.voice_a,
                self.speaker_b,
                self.voice_b,
                self.similarity,
                CAST_WARN_SIMILARITY
            )
        }
    }
}

/// Every pair of `(speaker, voice, embedding)` at or above `threshold`, closest first.
#[must_use]
pub fn close_voices(cast: &[(String, String, Embedding)], threshold: f32) -> Vec<CastPair> {
    let mut out = Vec::new();
    for (i, (sa, va, ea)) in cast.iter().enumerate() {
        for (sb, vb, eb) in &cast[i + 1..] {
            let similarity = if va == vb { 1.0 } else { ea.cosine(eb) };
            if similarity >= threshold {
                out.push(CastPair {
                    speaker_a: sa.clone(),
                    voice_a: va.clone(),
                    speaker_b: sb.clone(),
                    voice_b: vb.clone(),
                    similarity,
                });
            }
        }
    }
    out.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    out
}

/// Checks a cast of `(speaker, voice name or recipe)`: embeds each distinct voice (rendering
/// its probe once, then from the library) and returns the pairs at or above `threshold`.
pub fn check_cast(
    embedder: &VoiceEmbedder,
    engine: &Engine,
    library: &Library,
    cast: &[(String, String)],
    threshold: f32,
) -> Result<Vec<CastPair>, VoiceMatchError> {
    let mut by_voice: HashMap<&str, Embedding> = HashMap::new();
    let mut rows = Vec::with_capacity(cast.len());
    for (speaker, voice) in cast {
        let embedding = if let Some(e) = by_voice.get(voice.as_str()) {
            *e
        } else {
            let spec = resolve_voice(Some(library), engine, voice)?;
            let (e, _) = embedder.voice_embedding(library, engine, &spec)?;
            by_voice.insert(voice, e);
            e
        };
        rows.push((speaker.clone(), voice.clone(), embedding));
    }
    Ok(close_voices(&rows, threshold))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speaker::EMBEDDING_DIM;

    fn emb(angle: f32) -> Embedding {
        let mut v = [0.0; EMBEDDING_DIM];
        v[0] = angle.cos();
        v[1] = angle.sin();
        Embedding::from_unnormalised(v).expect("non-zero")
    }

    #[test]
    fn flags_close_and_shared_voices_only() {
        let cast = vec![
            ("Ann".to_owned(), "af_bella".to_owned(), emb(0.0)),
            ("Bob".to_owned(), "am_adam".to_owned(), emb(1.0)), // cos 0.54
            (
                "Cy".to_owned(),
                "af_bella:0.7+af_sky:0.3".to_owned(),
                emb(0.3),
            ), // cos 0.955
            ("Di".to_owned(), "am_adam".to_owned(), emb(1.0)),
        ];
        let pairs = close_voices(&cast, CAST_WARN_SIMILARITY);
        let names: Vec<(&str, &str)> = pairs
            .iter()
            .map(|p| (p.speaker_a.as_str(), p.speaker_b.as_str()))
            .collect();
        assert_eq!(names, [("Bob", "Di"), ("Ann", "Cy")]);
        assert!((pairs[0].similarity - 1.0).abs() < 1e-6);
        assert!(pairs[0].message().contains("share the voice am_adam"));
        assert!(pairs[1].message().contains("sound alike"));
    }

    #[test]
    fn a_cast_of_one_has_nothing_to_compare() {
        let cast = vec![("Ann".to_owned(), "af_bella".to_owned(), emb(0.0))];
        assert!(close_voices(&cast, 0.0).is_empty());
    }
}
