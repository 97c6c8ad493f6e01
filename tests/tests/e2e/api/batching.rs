//! Batched encoders through the real server: with `BANTER_ENCODER_BATCH` (the CPU default is
//! 1, see `Synthesizer::encoder_batch`) requests that wait together are encoded in one pass,
//! and each still gets the audio it would get alone.

use super::http::{pcm_samples, Server};
use super::speech;

#[test]
fn api_batches_waiting_encoders_and_each_gets_its_own_audio() {
    let Some(server) = Server::start_with_env(&[], &[("BANTER_ENCODER_BATCH", "4")]) else {
        return;
    };
    let texts: Vec<String> = (0..6)
        .map(|i| format!("Listener {i} hears a sentence of its own, number {i}."))
        .collect();
    // Alone first: the reference for each text.
    let alone: Vec<Vec<i16>> = texts
        .iter()
        .map(|t| {
            let r = server.post_json("/v1/audio/speech", &speech(t, "pcm"));
            assert_eq!(r.status, 200);
            pcm_samples(&r.body)
        })
        .collect();
    // Then all at once, while a long request keeps the model busy: the six queue behind its
    // current step and are admitted together at the next one (with an idle model the first
    // starts alone at once, and on a loaded machine the rest can trickle in one step at a
    // time). Up to three rounds, since arrival is still up to the OS.
    let blocker = speech(
        &"A long paragraph keeps the model busy for a while. ".repeat(12),
        "pcm",
    );
    let mut together = Vec::new();
    let mut batched = false;
    for _ in 0..3 {
        let before =
            server.metric("banter_batch_size_sum") - server.metric("banter_batch_size_count");
        together = std::thread::scope(|scope| {
            let server = &server;
            let busy = scope.spawn(|| server.post_json("/v1/audio/speech", &blocker).status);
            std::thread::sleep(std::time::Duration::from_millis(300));
            let handles: Vec<_> = texts
                .iter()
                .map(|t| {
                    scope.spawn(move || {
                        let r = server.post_json("/v1/audio/speech", &speech(t, "pcm"));
                        assert_eq!(r.status, 200, "{t}");
                        pcm_samples(&r.body)
                    })
                })
                .collect();
            let out: Vec<Vec<i16>> = handles
                .into_iter()
                .map(|h| h.join().expect("client"))
                .collect();
            assert_eq!(busy.join().expect("blocker"), 200);
            out
        });
        // Segments beyond one per step: some encoders shared a pass.
        let extra =
            server.metric("banter_batch_size_sum") - server.metric("banter_batch_size_count");
        if extra > before {
            batched = true;
            break;
        }
    }
    assert!(
        batched,
        "no step encoded more than one segment in three rounds; stderr:\n{}",
        server.stderr()
    );
    for (i, (a, b)) in alone.iter().zip(&together).enumerate() {
        // Same durations, so the same length; the same audio up to float rounding (bf16
        // products can round a last bit differently in a taller batch).
        assert_eq!(a.len(), b.len(), "text {i}: length alone vs batched");
        let dot: f64 = a
            .iter()
            .zip(b)
            .map(|(&x, &y)| f64::from(x) * f64::from(y))
            .sum();
        let norm = |v: &[i16]| v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
        let corr = dot / (norm(a) * norm(b)).max(1.0);
        assert!(
            corr > 0.99,
            "text {i}: correlation {corr:.4} alone vs batched"
        );
    }
}
