//! The dispatcher with servers made of functions: order, failover, refusals, cancellation.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::scheduler::StreamEvent;
use crate::voice::{STYLE_DIM, STYLE_ROWS};

/// Speaks a segment as its phonemes' bytes, in three chunks, with a pause per chunk; fails
/// (as gone away) on its `fail_at`-th chunk overall when set, refuses phonemes starting `!`.
struct Fake {
    name: String,
    pause: Duration,
    fail_at: Option<usize>,
    chunks: AtomicUsize,
    up: AtomicBool,
}

impl Fake {
    fn new(name: &str, pause_ms: u64, fail_at: Option<usize>) -> Arc<Self> {
        Arc::new(Self {
            name: name.into(),
            pause: Duration::from_millis(pause_ms),
            fail_at,
            chunks: AtomicUsize::new(0),
            up: AtomicBool::new(true),
        })
    }
}

fn audio_of(phonemes: &str) -> Vec<f32> {
    phonemes.bytes().map(f32::from).collect()
}

impl SegmentServer for Fake {
    fn name(&self) -> &str {
        &self.name
    }

    fn speak(
        &self,
        job: &RemoteJob,
        sink: &mut dyn FnMut(RemoteChunk) -> bool,
    ) -> Result<(), RemoteError> {
        if !self.up.load(Ordering::Relaxed) {
            return Err(RemoteError::Unavailable("connection refused".into()));
        }
        if job.phonemes.starts_with('?') && self.name == "sick" {
            return Err(RemoteError::Refused(
                "model `banter` has no available versions".into(),
            ));
        }
        if job.phonemes.starts_with('!') {
            return Err(RemoteError::Refused("input `PHONEMES`: no".into()));
        }
        let audio = audio_of(&job.phonemes);
        let third = audio.len().div_ceil(3);
        for (k, piece) in audio.chunks(third).enumerate() {
            std::thread::sleep(self.pause);
            let n = self.chunks.fetch_add(1, Ordering::Relaxed);
            if Some(n) == self.fail_at {
                self.up.store(false, Ordering::Relaxed);
                return Err(RemoteError::Unavailable("stream reset".into()));
            }
            let chunk = RemoteChunk {
                samples: piece.to_vec(),
                durations: (k == 0).then(|| vec![job.phonemes.len() as u32]),
                end: (k + 1) * third >= audio.len(),
            };
            if !sink(chunk) {
                return Ok(());
            }
        }
        Ok(())
    }

    fn ready(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }
}

fn segments(n: usize) -> Vec<Segment> {
    (0..n)
        .map(|i| Segment {
            phonemes: format!("sˈɛɡmənt nˈʌmbɚ {i}"),
            ids: vec![1],
        })
        .collect()
}

fn table() -> VoiceTable {
    VoiceTable::from_values(vec![0.5; STYLE_ROWS * STYLE_DIM]).expect("table")
}

fn request() -> SpeechRequest {
    SpeechRequest::new("af_heart", 1.0).expect("request")
}

/// What a stream gave: samples, per-segment durations, and the error it ended with.
fn collect(mut handle: StreamHandle) -> (Vec<f32>, Vec<Vec<u32>>, Option<String>) {
    let (mut samples, mut durations) = (Vec::new(), Vec::new());
    while let Some(event) = handle.blocking_next() {
        match event {
            StreamEvent::Audio {
                samples: s,
                durations: d,
                ..
            } => {
                samples.extend(s);
                durations.extend(d.map(|d| d.to_vec()));
            }
            StreamEvent::Failed(e) => return (samples, durations, Some(e.to_string())),
        }
    }
    (samples, durations, None)
}

fn start(servers: &[&Arc<Fake>]) -> Dispatcher {
    let servers = servers
        .iter()
        .map(|s| Arc::clone(s) as Arc<dyn SegmentServer>)
        .collect();
    Dispatcher::start(servers, 2).expect("a server is ready")
}

#[test]
fn segments_spread_over_servers_and_arrive_in_order() {
    let (fast, slow) = (Fake::new("a", 1, None), Fake::new("b", 7, None));
    let d = start(&[&fast, &slow]);
    let segs = segments(12);
    let want: Vec<f32> = segs.iter().flat_map(|s| audio_of(&s.phonemes)).collect();
    let handle = d
        .submit(segs.clone(), &table(), &request(), Mode::Offline, true)
        .expect("queued");
    let (got, durations, error) = collect(handle);
    assert_eq!(error, None);
    assert_eq!(got, want);
    let lens: Vec<Vec<u32>> = segs.iter().map(|s| vec![s.phonemes.len() as u32]).collect();
    assert_eq!(durations, lens, "one durations per segment, in order");
    let spoken = d.spoken();
    assert!(
        spoken.iter().all(|(_, n)| *n > 0),
        "both servers spoke: {spoken:?}"
    );
    assert_eq!(spoken.iter().map(|(_, n)| n).sum::<usize>(), 12);
}

#[test]
fn a_server_that_goes_away_mid_segment_loses_nothing() {
    // b dies on its 5th chunk, in the middle of a segment whose first chunks may already have
    // reached the listener.
    let (a, b) = (Fake::new("a", 3, None), Fake::new("b", 1, Some(4)));
    let d = start(&[&a, &b]);
    let segs = segments(10);
    let want: Vec<f32> = segs.iter().flat_map(|s| audio_of(&s.phonemes)).collect();
    let handle = d
        .submit(segs, &table(), &request(), Mode::Interactive, false)
        .expect("queued");
    let (got, durations, error) = collect(handle);
    assert_eq!(error, None);
    assert_eq!(got, want, "every sample once, in order");
    assert_eq!(durations.len(), 10);
    assert!(!b.ready());
    let spoken = d.spoken();
    assert_eq!(spoken[0].1 + spoken[1].1, 10, "{spoken:?}");
}

#[test]
fn a_refusal_fails_its_stream_and_spares_the_others() {
    let a = Fake::new("a", 1, None);
    let d = start(&[&a]);
    let mut bad = segments(3);
    bad[1].phonemes = "!bad".into();
    let bad = d
        .submit(bad, &table(), &request(), Mode::Offline, true)
        .expect("queued");
    let good = d
        .submit(segments(3), &table(), &request(), Mode::Offline, true)
        .expect("queued");
    let (_, _, error) = collect(bad);
    let error = error.expect("refused");
    assert!(error.starts_with("a: input `PHONEMES`"), "{error}");
    assert_eq!(collect(good).2, None);
}

#[test]
fn with_every_server_down_a_stream_fails_naming_each() {
    let (a, b) = (Fake::new("a", 1, Some(0)), Fake::new("b", 1, Some(0)));
    let d = start(&[&a, &b]);
    let handle = d
        .submit(segments(4), &table(), &request(), Mode::Offline, true)
        .expect("queued");
    let error = collect(handle).2.expect("failed");
    assert!(
        error.contains("a (stream reset)") && error.contains("b (stream reset)"),
        "{error}"
    );
    let again = d
        .submit(segments(1), &table(), &request(), Mode::Offline, true)
        .err()
        .expect("refused at once");
    assert!(
        again.to_string().contains("every server is unreachable"),
        "{again}"
    );
}

#[test]
fn no_ready_server_is_an_error_at_start() {
    let a = Fake::new("a", 1, None);
    a.up.store(false, Ordering::Relaxed);
    let e = Dispatcher::start(vec![a as Arc<dyn SegmentServer>], 1)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("no server is ready"), "{e}");
}

#[test]
fn a_dropped_handle_stops_the_servers() {
    let a = Fake::new("a", 5, None);
    let d = start(&[&a]);
    let mut handle = d
        .submit(segments(40), &table(), &request(), Mode::Offline, true)
        .expect("queued");
    assert!(handle.blocking_next().is_some());
    drop(handle);
    std::thread::sleep(Duration::from_millis(100));
    let after = a.chunks.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        a.chunks.load(Ordering::Relaxed) <= after + 2,
        "work stopped"
    );
    assert!(a.chunks.load(Ordering::Relaxed) < 40 * 3);
}

#[test]
fn a_refusal_another_server_does_not_share_takes_the_refuser_out() {
    let (sick, well) = (Fake::new("sick", 1, None), Fake::new("well", 1, None));
    let d = start(&[&sick, &well]);
    let mut segs = segments(6);
    for s in &mut segs {
        s.phonemes.insert(0, '?');
    }
    let want: Vec<f32> = segs.iter().flat_map(|s| audio_of(&s.phonemes)).collect();
    let handle = d
        .submit(segs, &table(), &request(), Mode::Offline, true)
        .expect("queued");
    let (got, _, error) = collect(handle);
    assert_eq!(error, None);
    assert_eq!(got, want);
    assert_eq!(d.spoken(), vec![("sick".into(), 0), ("well".into(), 6)]);
    assert_eq!(
        d.servers_up()[0],
        ("sick".into(), false),
        "the refuser is out"
    );
}
