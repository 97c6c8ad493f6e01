//! Streaming synthesis: chunks arrive early, and their concatenation is the whole render.

use engine::device::DeviceChoice;
use engine::kokoro::stream::ChunkPlan;
use engine::synth::{SpeechRequest, Synthesizer};

use crate::support::model_store;

const LONG_SENTENCE: &str = "In the spring of that year, a small radio station on the coast began \
broadcasting late-night interviews with fishermen, night nurses, bakers and lighthouse keepers, \
and nobody, not even the host, expected that it would run for twenty years.";

fn synth(plan: ChunkPlan) -> Option<Synthesizer> {
    let store = model_store()?;
    let mut s = Synthesizer::load(&store, DeviceChoice::Cpu).expect("load model");
    s.set_chunk_plan(plan);
    Some(s)
}

/// Signal-to-difference ratio in dB of `b` against the reference `a`.
pub fn snr_db(a: &[f32], b: &[f32]) -> f64 {
    let signal: f64 = a.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
    let noise: f64 = a.iter().zip(b).map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2)).sum();
    10.0 * (signal / noise.max(1e-30)).log10()
}

#[test]
fn chunks_concatenate_to_the_whole_render_and_come_early() {
    let Some(synth) = synth(ChunkPlan::default()) else { return };
    let request = SpeechRequest::new("af_heart", 1.0).expect("request");
    let whole = synth.synthesize(LONG_SENTENCE, &request).expect("whole");
    let chunks: Vec<_> = synth.stream(LONG_SENTENCE, &request).expect("stream").collect::<Result<_, _>>().expect("chunks");
    assert!(chunks.len() >= 3, "a long sentence must stream in several chunks, got {}", chunks.len());
    let first = &chunks[0];
    assert!(first.samples.len() * 4 < whole.len(), "the first chunk must be a small part of the sentence");
    let mut joined = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        assert_eq!(c.offset, joined.len(), "chunk {i} offset");
        joined.extend_from_slice(&c.samples);
    }
    assert_eq!(joined.len(), whole.len());
    assert!(joined == whole, "streamed samples must equal the whole render exactly");
}

#[test]
fn rendering_is_deterministic() {
    let Some(synth) = synth(ChunkPlan::default()) else { return };
    let request = SpeechRequest::new("bf_emma", 1.1).expect("request");
    let a = synth.synthesize("Is it deterministic? It should be.", &request).expect("a");
    let b = synth.synthesize("Is it deterministic? It should be.", &request).expect("b");
    assert!(a == b, "same input, same samples");
}

#[test]
fn windowed_decoding_stays_close_to_a_single_pass() {
    let Some(exact) = synth(ChunkPlan::whole()) else { return };
    let Some(windowed) = synth(ChunkPlan::default()) else { return };
    let request = SpeechRequest::new("am_michael", 1.0).expect("request");
    let a = exact.synthesize(LONG_SENTENCE, &request).expect("exact");
    let b = windowed.synthesize(LONG_SENTENCE, &request).expect("windowed");
    assert_eq!(a.len(), b.len());
    let snr = snr_db(&a, &b);
    eprintln!("windowed vs single pass: SNR {snr:.1} dB over {} samples", a.len());
    assert!(snr > 20.0, "windowed decoding drifted from the single pass: SNR {snr:.1} dB");
}

/// Prints how far windowed decoding is from one pass for several context sizes (a report).
#[test]
#[ignore = "report: cargo test -p tests --test e2e context_sweep -- --ignored --nocapture"]
fn context_sweep() {
    let Some(exact) = synth(ChunkPlan::whole()) else { return };
    let request = SpeechRequest::new("am_michael", 1.0).expect("request");
    let a = exact.synthesize(LONG_SENTENCE, &request).expect("exact");
    for context in [1_000_000, 0, 8, 24, 64, 128] {
        let Some(windowed) = synth(ChunkPlan { context, ..ChunkPlan::default() }) else { return };
        let b = windowed.synthesize(LONG_SENTENCE, &request).expect("windowed");
        eprintln!("context {context:>7} frames: SNR {:.1} dB", snr_db(&a, &b));
    }
}
