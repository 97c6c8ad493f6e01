//! The blend editor's terms and rules. A blend being edited is UI-only (nothing reads it until
//! "Use" gives its recipe to a speaker through [`crate::command::Command::SetCast`]), so
//! [`crate::view::blend`] keeps the open editors in egui's memory; this module has their type,
//! the recipe they make, and where editing starts.

use engine::voice::{VoiceError, VoiceSpec};

/// Why a blend being edited has no recipe yet.
#[derive(Debug, thiserror::Error)]
pub enum BlendError {
    #[error("give at least one voice a weight above zero")]
    NoWeight,
    /// The engine refused the recipe.
    #[error(transparent)]
    Recipe(#[from] VoiceError),
}

/// A blend being edited: `(stock voice, weight)` terms.
pub type Terms = Vec<(String, f32)>;

/// The recipe for `terms` in canonical form (zero weights dropped), or why there is none.
pub fn recipe(terms: &[(String, f32)]) -> Result<String, BlendError> {
    let text = terms
        .iter()
        .filter(|(_, w)| *w > 0.0)
        .map(|(v, w)| format!("{v}:{w}"))
        .collect::<Vec<_>>()
        .join("+");
    if text.is_empty() {
        return Err(BlendError::NoWeight);
    }
    Ok(VoiceSpec::parse(&text)?.canonical())
}

/// The terms to start editing from: the speaker's blend, or its voice plus a second one.
#[must_use]
pub fn start_terms(voice: &str, voices: &[String]) -> Terms {
    match VoiceSpec::parse(voice) {
        Ok(spec) if spec.terms.len() > 1 => spec
            .terms
            .into_iter()
            .map(|t| (t.voice, t.weight))
            .collect(),
        _ => {
            // A library voice (a matched one, say) is not a blend term: start from stock voices.
            let voice = if voices.iter().any(|v| v == voice) || voices.is_empty() {
                voice
            } else {
                voices[0].as_str()
            };
            let other = voices
                .iter()
                .find(|v| v.as_str() != voice)
                .cloned()
                .unwrap_or_else(|| voice.to_owned());
            vec![(voice.to_owned(), 0.7), (other, 0.3)]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipes_are_normalised_and_need_a_weight() {
        let terms = vec![("af_bella".to_owned(), 1.4), ("af_sky".to_owned(), 0.6)];
        assert_eq!(
            recipe(&terms).ok().as_deref(),
            Some("af_bella:0.7+af_sky:0.3")
        );
        let one = vec![("af_bella".to_owned(), 0.5), ("af_sky".to_owned(), 0.0)];
        assert_eq!(recipe(&one).ok().as_deref(), Some("af_bella"));
        assert!(recipe(&[("af_sky".to_owned(), 0.0)]).is_err());
        let start = start_terms("af_bella:0.7+af_sky:0.3", &[]);
        assert_eq!(start.len(), 2);
    }
}
