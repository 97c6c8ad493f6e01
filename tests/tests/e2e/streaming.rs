//! Streaming synthesis: chunks arrive early, and their concatenation is the whole render —
//! through the engine as every caller gets audio, and at the model's own level for the
//! decoder's windowing (through the `kokoro` crate's public sessions).

use std::sync::Arc;

use candle_core::{Device, Tensor};
use engine::device::DeviceChoice;
use engine::voice::{VoiceSpec, VoiceTable, STYLE_DIM};
use engine::Precision;
use engine::{Engine, Mode, SpeechRequest, StreamEvent};
use kokoro::model::Kokoro;
use kokoro::stream::{ChunkPlan, SegmentDecoder};

use crate::support::model_store;

const LONG_SENTENCE: &str = "In the spring of that year, a small radio station on the coast began \
broadcasting late-night interviews with fishermen, night nurses, bakers and lighthouse keepers, \
and nobody, not even the host, expected that it would run for twenty years.";

fn engine() -> Option<Engine> {
    let store = model_store()?;
    Some(Engine::load(&store, DeviceChoice::Cpu).expect("load model"))
}

/// `text` decoded by the model itself with `plan`, segment by segment (no scheduler).
fn decode(plan: ChunkPlan, text: &str, voice: &str) -> Option<Vec<f32>> {
    let store = model_store()?;
    let mut model = Kokoro::load(&store.kokoro_weights(), &Device::Cpu).expect("load");
    // The precision the engine runs at (bf16 products where the CPU has them, on AMX tiles
    // where it has those, unless `BANTER_PRECISION` says otherwise), so the two can be
    // compared sample for sample.
    if let Some(kernel) = Precision::from_env().bf16_kernel() {
        model.use_bf16(kernel).expect("bf16");
    }
    let model = Arc::new(model);
    let request = SpeechRequest::new(voice, 1.0).expect("request");
    let spec = VoiceSpec::parse(voice).expect("voice");
    let table = VoiceTable::read(&store.voice_table(&spec.terms[0].voice)).expect("table");
    let mut out = Vec::new();
    for segment in engine::segments::segments(text, &request).expect("segments") {
        let style = Tensor::from_slice(
            table.style_for(segment.ids.len()),
            (1, STYLE_DIM),
            &Device::Cpu,
        )
        .expect("style");
        let mut decoder = SegmentDecoder::new(Arc::clone(&model), &segment.ids, &style, 1.0, plan)
            .expect("encode");
        while let Some(chunk) = decoder.next_chunk().expect("chunk") {
            out.extend(chunk);
        }
    }
    Some(out)
}

/// Signal-to-difference ratio in dB of `b` against the reference `a`.
pub fn snr_db(a: &[f32], b: &[f32]) -> f64 {
    let signal: f64 = a.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
    let noise: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2))
        .sum();
    10.0 * (signal / noise.max(1e-30)).log10()
}

/// The chunks of an offline stream, with the segment each belongs to.
fn chunks(engine: &Engine, text: &str, request: &SpeechRequest) -> Vec<(usize, Vec<f32>)> {
    let mut stream = engine
        .submit_text(text, request.clone(), Mode::Offline)
        .expect("submit");
    let mut out = Vec::new();
    while let Some(event) = stream.blocking_next() {
        match event {
            StreamEvent::Audio {
                samples, segment, ..
            } => out.push((segment, samples)),
            StreamEvent::Failed(e) => panic!("stream failed: {e}"),
        }
    }
    out
}

#[test]
fn chunks_concatenate_to_the_whole_render_and_come_early() {
    let Some(engine) = engine() else {
        return;
    };
    let request = SpeechRequest::new("af_heart", 1.0).expect("request");
    let whole = engine
        .synthesize(LONG_SENTENCE, &request, Mode::Offline)
        .expect("whole");
    let chunks = chunks(&engine, LONG_SENTENCE, &request);
    assert!(
        chunks.len() >= 2,
        "a long sentence must stream in several chunks, got {}",
        chunks.len()
    );
    assert!(
        chunks[0].1.len() * 3 < whole.len(),
        "the first chunk must be a small part of the sentence"
    );
    let joined: Vec<f32> = chunks.into_iter().flat_map(|(_, c)| c).collect();
    assert_eq!(joined.len(), whole.len());
    assert!(
        joined == whole,
        "streamed samples must equal the whole render exactly"
    );
    // And the engine's audio is the model's own, unwindowed: the scheduler adds nothing.
    let direct = decode(ChunkPlan::whole(), LONG_SENTENCE, "af_heart").expect("model");
    assert!(
        direct == whole,
        "the engine must give the model's exact samples"
    );
}

#[test]
fn rendering_is_deterministic() {
    let Some(engine) = engine() else {
        return;
    };
    let request = SpeechRequest::new("bf_emma", 1.1).expect("request");
    let say = || {
        engine
            .synthesize(
                "Is it deterministic? It should be.",
                &request,
                Mode::Offline,
            )
            .expect("render")
    };
    assert!(say() == say(), "same input, same samples");
}

#[test]
fn windows_with_full_context_slice_the_segment_exactly() {
    let Some(whole) = decode(ChunkPlan::whole(), LONG_SENTENCE, "am_michael") else {
        return;
    };
    let windowed = decode(ChunkPlan::windowed(), LONG_SENTENCE, "am_michael").expect("model");
    assert_eq!(
        windowed.len(),
        whole.len(),
        "windows cover the segment exactly"
    );
    // With the whole segment as context, each window computes what one pass does: the
    // slicing and cross-fading themselves lose nothing.
    let full = ChunkPlan {
        context: 1_000_000,
        ..ChunkPlan::windowed()
    };
    let exact = decode(full, LONG_SENTENCE, "am_michael").expect("model");
    let snr = snr_db(&whole, &exact);
    assert!(snr > 60.0, "full-context windows {snr:.1} dB from one pass");
}

/// How far the approximate windowed plan is from the reference single pass (a report).
#[test]
#[ignore = "report: cargo test -p tests --test e2e windowed_vs_single -- --ignored --nocapture"]
fn windowed_vs_single_pass_report() {
    let Some(a) = decode(ChunkPlan::whole(), LONG_SENTENCE, "am_michael") else {
        return;
    };
    let b = decode(ChunkPlan::streaming(), LONG_SENTENCE, "am_michael").expect("windowed");
    assert_eq!(a.len(), b.len());
    let snr = snr_db(&a, &b);
    eprintln!(
        "windowed vs single pass: SNR {snr:.1} dB over {} samples",
        a.len()
    );
}

/// Prints how far windowed decoding is from one pass for several context sizes (a report).
#[test]
#[ignore = "report: cargo test -p tests --test e2e context_sweep -- --ignored --nocapture"]
fn context_sweep() {
    let Some(a) = decode(ChunkPlan::whole(), LONG_SENTENCE, "am_michael") else {
        return;
    };
    for context in [1_000_000, 0, 8, 24, 64, 128] {
        let plan = ChunkPlan {
            context,
            ..ChunkPlan::windowed()
        };
        let b = decode(plan, LONG_SENTENCE, "am_michael").expect("windowed");
        eprintln!("context {context:>7} frames: SNR {:.1} dB", snr_db(&a, &b));
    }
}

#[test]
fn a_hundred_thousand_characters_are_split_and_stream_without_rendering_ahead() {
    let Some(engine) = engine() else {
        return;
    };
    let paragraph = "Every good conversation has a rhythm. One person speaks, the other leans in, \
and somewhere in the pause between them an idea takes shape. ";
    let text = paragraph.repeat(100_000 / paragraph.len() + 1);
    assert!(text.len() >= 100_000);
    let request = SpeechRequest::new("af_heart", 1.0).expect("request");
    let segments = engine.segments(&text, &request).expect("segments");
    assert!(
        segments.len() > 300,
        "{} segments for 100k characters",
        segments.len()
    );
    assert!(segments
        .iter()
        .all(|s| !s.ids.is_empty() && s.ids.len() <= 510));
    let mut stream = engine
        .submit(segments, request, Mode::Offline)
        .expect("submit");
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match stream.blocking_next() {
            Some(StreamEvent::Audio { segment, .. }) => seen.push(segment),
            other => panic!("expected audio, got {other:?}"),
        }
    }
    assert_eq!(seen, [0, 1]);
    // A reader that stops reading holds the model back at the high watermark (20 s of unread
    // audio): memory stays bounded, whatever the length of the text.
    std::thread::sleep(std::time::Duration::from_secs(8));
    let rendered = engine
        .metrics()
        .segments
        .load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        rendered < 20,
        "{rendered} segments rendered ahead of a stalled reader"
    );
}
