//! A checked [`Request`] mapped onto the engine: which segments, which voice, which mode.
//!
//! Phonemes a client already cut are spoken exactly as cut (one element, one segment:
//! [`engine::segments::exact_segment`]), so a remote render equals a local one; text is cut by
//! the engine as `banter` cuts it, on the stream's thread (espeak takes time on long text).
//! A voice table the client resolved (`STYLE`) is registered once under a name of its own made
//! from its bytes, the way a tuned library voice is, so the same table always renders under the
//! same spec and the engine's voice book holds it once.

use engine::voice::{VoiceSpec, VoiceTable};
use engine::{Engine, Mode, Segment, SpeechRequest};
use sha2::{Digest, Sha256};
use triton_wire::protocol::{self, input, Request, Voice, Words};

use crate::Failure;

/// What to speak, in the engine's terms.
#[derive(Debug)]
pub enum Speech {
    /// The client's segments, each exactly as cut.
    Segments(Vec<Segment>),
    /// Text the engine cuts (on the stream's thread).
    Text(String),
}

/// A request ready for the engine.
#[derive(Debug)]
pub struct Plan {
    pub speech: Speech,
    pub request: SpeechRequest,
    /// Decode each segment whole and exact (`Mode::Offline`), else in windows
    /// (`Mode::Interactive`).
    pub whole: bool,
    pub sample_rate: u32,
}

impl Plan {
    /// Checks the voice against `engine` (an unknown voice fails here, before the stream).
    pub fn new(engine: &Engine, request: Request) -> Result<Self, Failure> {
        if !engine::SPEED_RANGE.contains(&request.speed) {
            return Err(Failure::invalid(format!(
                "input `{}`: {}",
                input::SPEED,
                engine::SynthError::Speed {
                    value: request.speed
                }
            )));
        }
        let speech = match request.words {
            Words::Phonemes(segments) => Speech::Segments(exact_segments(&segments)?),
            Words::Text(text) => Speech::Text(text),
        };
        let request_for = |spec: VoiceSpec| SpeechRequest {
            voice: spec,
            speed: request.speed,
            language: None,
        };
        let speech_request = match request.voice {
            Voice::Named(name) => {
                let spec = VoiceSpec::parse(&name)
                    .map_err(|e| Failure::invalid(format!("input `{}`: {e}", input::VOICE)))?;
                engine
                    .voice(&spec)
                    .map_err(|e| Failure::invalid(format!("input `{}`: {e}", input::VOICE)))?;
                request_for(spec)
            }
            Voice::Style(rows) => {
                let table = VoiceTable::from_values(rows)
                    .map_err(|e| Failure::invalid(format!("input `{}`: {e}", input::STYLE)))?;
                let spec = style_spec(&table);
                // A table already registered under its hash is the same table.
                if engine.voice(&spec).is_err() {
                    engine.register_voice(&spec, table);
                }
                request_for(spec)
            }
        };
        Ok(Self {
            speech,
            request: speech_request,
            whole: request.whole,
            sample_rate: request.sample_rate,
        })
    }

    /// The scheduler's class for this stream.
    #[must_use]
    pub fn mode(&self) -> Mode {
        if self.whole {
            Mode::Offline
        } else {
            Mode::Interactive
        }
    }
}

/// One segment per `PHONEMES` element, exactly as the client cut it.
pub fn exact_segments(phonemes: &[String]) -> Result<Vec<Segment>, Failure> {
    phonemes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            engine::segments::exact_segment(p).ok_or_else(|| {
                Failure::invalid(format!(
                    "input `{}`: element {i} has no phoneme Kokoro speaks",
                    input::PHONEMES
                ))
            })
        })
        .collect()
}

/// The spec a client's voice table renders under: `af_style<first 12 hex of its sha256>`, one
/// American-English term of weight 1 (the prefix gives the language text is read in).
#[must_use]
pub fn style_spec(table: &VoiceTable) -> VoiceSpec {
    let hash = hex::encode(Sha256::digest(table.to_bytes()));
    VoiceSpec::one(format!("af_style{}", &hash[..12]))
}

/// The protocol's native rate is the engine's: samples at it pass through untouched.
const _: () = assert!(protocol::NATIVE_RATE == engine::SAMPLE_RATE);

#[cfg(test)]
mod tests {
    use super::*;

    fn table(fill: f32) -> VoiceTable {
        VoiceTable::from_values(vec![fill; protocol::STYLE_ROWS * protocol::STYLE_DIM]).unwrap()
    }

    #[test]
    fn a_style_table_has_one_spec_of_its_own() {
        let a = style_spec(&table(0.25));
        assert_eq!(a, style_spec(&table(0.25)), "the same table, the same spec");
        assert_ne!(a, style_spec(&table(0.5)));
        assert_eq!(a.terms.len(), 1);
        let name = &a.terms[0].voice;
        assert!(
            name.starts_with("af_style") && name.len() == "af_style".len() + 12,
            "{name}"
        );
        assert!((a.terms[0].weight - 1.0).abs() < f32::EPSILON);
        // The name must read back as a voice spec (it travels as one).
        assert_eq!(VoiceSpec::parse(name).unwrap().terms[0].voice, *name);
    }

    #[test]
    fn phonemes_become_exact_segments_and_an_empty_one_is_named() {
        let segs = exact_segments(&["hˈɛlO".to_owned(), "wˈɜɹld.".to_owned()]).unwrap();
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[0].phonemes, "hˈɛlO");
        assert_eq!(segs[1].phonemes, "wˈɜɹld.");
        let e = exact_segments(&["hˈɛlO".to_owned(), "\u{1F600}".to_owned()]).unwrap_err();
        assert!(
            e.message.contains("`PHONEMES`") && e.message.contains("element 1"),
            "{e}"
        );
        assert_eq!(e.code, crate::Code::InvalidArg);
    }
}
