//! Playback's regression tests: what the old shared-`Vec` buffer got wrong (dropouts while the
//! studio appended, seeks lost between the callback's load and store, f32-only devices, devices
//! that never came back) and the transport's plain behaviour. Each pulls as a callback would.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::mock::pull_into;
use super::supervise::{is_fatal, Opener, Retry, Supervisor};
use super::*;

/// A buffer holding `0.0, 1.0, 2.0, …` (each sample names its own position).
fn ramp(len: usize) -> Arc<PlayBuffer> {
    let buf = PlayBuffer::new();
    let samples: Vec<f32> = (0..len).map(|i| i as f32).collect();
    buf.append(&samples);
    buf
}

fn is_ramp_from(start: usize, samples: &[f32]) -> bool {
    samples
        .iter()
        .enumerate()
        .all(|(i, &s)| s.to_bits() == ((start + i) as f32).to_bits())
}

#[test]
#[allow(clippy::float_cmp)] // the samples are copied, not computed: exact equality is right
fn reads_from_the_playhead_and_stops_at_the_end_when_complete() {
    let buf = PlayBuffer::new();
    let mut player = buf.connect();
    buf.append(&[1.0, 2.0, 3.0]);
    buf.feed();
    let mut out = [9.0; 2];
    assert_eq!(player.read(&mut out), 0, "not playing yet");
    assert_eq!(out, [0.0, 0.0]);
    buf.set_playing(true);
    assert_eq!(player.read(&mut out), 2);
    assert_eq!((out, buf.position()), ([1.0, 2.0], 2));
    assert_eq!(player.read(&mut out), 1);
    assert_eq!(out, [3.0, 0.0]);
    assert!(buf.is_playing(), "more audio may come");
    buf.set_complete(true);
    assert_eq!(player.read(&mut out), 0);
    assert!(!buf.is_playing());
    buf.seek(1);
    assert_eq!(buf.position(), 1);
    buf.seek(99);
    assert_eq!(buf.position(), 3, "seek is clamped to what exists");
    buf.clear();
    assert_eq!(
        (buf.len(), buf.position(), buf.is_complete()),
        (0, 0, false)
    );
}

#[test]
fn mock_records_what_it_pulled() {
    let buf = PlayBuffer::new();
    let mut mock = MockOut::new();
    mock.attach(Arc::clone(&buf)).expect("mock attaches");
    buf.append(&[0.5; 10]);
    buf.set_playing(true);
    assert_eq!(mock.pull(4), 4);
    assert_eq!(mock.pull(100), 6);
    assert_eq!(mock.received().len(), 10);
    // More than the ring holds at once still arrives whole.
    buf.append(&vec![0.25; 100_000]);
    assert_eq!(mock.pull(200_000), 100_000);
}

#[test]
fn appending_a_long_episode_while_the_callback_pulls_never_plays_silence() {
    const TOTAL: usize = 4_000_000; // almost three minutes: the old Vec reallocated 16 MB
    const CHUNK: usize = 5_000;
    let buf = PlayBuffer::new();
    let mut player = buf.connect();
    buf.set_playing(true);
    let appended = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for start in (0..TOTAL).step_by(CHUNK) {
                let chunk: Vec<f32> = (start..start + CHUNK).map(|i| i as f32).collect();
                buf.append(&chunk);
            }
            appended.store(true, Ordering::Release);
        });
        let mut out = [0.0; 512];
        let mut heard = 0;
        while heard < TOTAL {
            // Only this thread moves the playhead, so this much is certainly there to play.
            let available = buf.len() - buf.position();
            let n = pull_into(&buf, &mut player, &mut out);
            if available >= out.len() {
                assert_eq!(
                    n,
                    out.len(),
                    "silence at {heard} with {available} rendered ahead"
                );
            }
            assert!(is_ramp_from(heard, &out[..n]), "a gap or repeat at {heard}");
            heard += n;
            if n == 0 {
                assert!(
                    !appended.load(Ordering::Acquire) || heard < buf.len(),
                    "stuck"
                );
                std::thread::yield_now();
            }
        }
    });
    assert_eq!(buf.position(), TOTAL);
}

#[test]
fn a_seek_while_the_callback_pulls_is_never_lost() {
    const PULL: usize = 64;
    let buf = ramp(1_000_000);
    let player = buf.connect();
    buf.set_playing(true);
    let pulls = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // As with cpal, the callback only reads; here the studio's thread also feeds.
    let mut player = std::thread::scope(|s| {
        let (p, st) = (&pulls, &stop);
        let callback = s.spawn(move || {
            let mut player = player;
            let mut out = [0.0; PULL];
            while !st.load(Ordering::Acquire) {
                let n = player.read(&mut out);
                if n > 0 {
                    // What was played is what the playhead says was played.
                    assert_eq!(
                        out[n - 1] as usize + 1,
                        player.pos(),
                        "audio and playhead part"
                    );
                }
                p.fetch_add(1, Ordering::AcqRel);
            }
            player
        });
        // Seek, feed, check, for a fixed time, and count the seeks the callback was seen to play
        // on from; waits are bounded, since on a loaded machine the callback may not run for a
        // while. A failure stops the callback before it is reported (a panic here would wait
        // for it forever).
        let start = Instant::now();
        let (mut i, mut played_on, mut lost) = (0, 0, None);
        while lost.is_none() && (start.elapsed() < Duration::from_millis(100) || played_on < 5) {
            if callback.is_finished() || start.elapsed() > Duration::from_secs(10) {
                break;
            }
            // Far apart, so a lost seek cannot pass for one that took effect.
            let target = i % 1_000 + if i % 2 == 0 { 1_000 } else { 600_000 };
            let before = pulls.load(Ordering::Acquire);
            buf.seek(target);
            // Feed until the callback has pulled twice since (or briefly, if it is not running).
            let waited = Instant::now();
            while pulls.load(Ordering::Acquire) < before + 2
                && waited.elapsed() < Duration::from_millis(1)
            {
                buf.feed();
            }
            let at = buf.position();
            let since = pulls.load(Ordering::Acquire) - before + 1;
            if !(target..=target + PULL * since).contains(&at) {
                lost = Some(format!(
                    "seek {i} to {target} lost: the playhead is at {at}"
                ));
            }
            played_on += usize::from(at > target);
            i += 1;
        }
        stop.store(true, Ordering::Release);
        let player = callback.join().expect("the callback thread");
        assert_eq!(lost, None);
        assert!(
            played_on >= 5,
            "the callback played on from {played_on} seeks only"
        );
        player
    });
    // And what plays after a seek is the audio from there.
    buf.seek(777);
    let mut out = [0.0; 10];
    assert_eq!(pull_into(&buf, &mut player, &mut out), 10);
    assert!(is_ramp_from(777, &out), "{out:?}");
}

#[test]
fn clearing_mid_block_never_plays_the_old_audio() {
    let buf = ramp(10_000);
    let mut player = buf.connect();
    buf.set_playing(true);
    let mut out = [0.0; 100];
    assert_eq!(pull_into(&buf, &mut player, &mut out), 100);
    buf.clear();
    buf.append(&[-1.0; 50]);
    assert_eq!(pull_into(&buf, &mut player, &mut out), 50);
    assert!(out[..50]
        .iter()
        .all(|&s| s.to_bits() == (-1.0f32).to_bits()));
    assert_eq!(buf.position(), 50);
}

#[test]
fn a_new_device_takes_over_from_the_playhead_and_the_old_one_falls_silent() {
    let buf = ramp(10_000);
    let mut old = buf.connect();
    buf.set_playing(true);
    let mut out = [0.0; 300];
    assert_eq!(pull_into(&buf, &mut old, &mut out), 300);
    let mut new = buf.connect();
    assert_eq!(old.read(&mut out), 0, "the old stream is retired");
    assert_eq!(pull_into(&buf, &mut new, &mut out), 300);
    assert!(is_ramp_from(300, &out));
}

/// The open mock stream's player and error channel, as the test reaches them.
type Opened = Arc<Mutex<Option<(Player, SyncSender<cpal::Error>)>>>;

/// A device for the supervisor: opening fails on the calls listed in `fail`.
struct Flaky {
    fail: Vec<usize>,
    calls: usize,
    open: Opened,
}

impl Opener for Flaky {
    type Stream = ();

    fn open(
        &mut self,
        player: Player,
        faults: SyncSender<cpal::Error>,
    ) -> Result<((), String), AudioOutError> {
        let call = self.calls;
        self.calls += 1;
        if self.fail.contains(&call) {
            return Err(AudioOutError::Open {
                device: format!("mock device {call}"),
                reason: "not ready".into(),
            });
        }
        *self.open.lock().unwrap_or_else(PoisonError::into_inner) = Some((player, faults));
        Ok(((), format!("mock device {call}")))
    }
}

fn flaky(fail: Vec<usize>) -> (Flaky, Opened) {
    let open = Arc::default();
    let device = Flaky {
        fail,
        calls: 0,
        open: Arc::clone(&open),
    };
    (device, open)
}

fn wait_for_news(sup: &Supervisor) -> DeviceNews {
    let start = Instant::now();
    loop {
        if let Some(news) = sup.news() {
            return news;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "no news");
        std::thread::sleep(Duration::from_millis(1));
    }
}

const QUICK: Retry = Retry {
    attempts: 3,
    delay: Duration::from_millis(1),
};

#[test]
fn a_lost_device_is_reopened_even_when_the_first_try_fails() {
    let buf = ramp(10_000);
    buf.set_playing(true);
    let (device, open) = flaky(vec![1]);
    let sup = Supervisor::start(device, Arc::clone(&buf), QUICK).expect("opens");
    assert_eq!(sup.device(), "mock device 0");
    let mut out = [0.0; 100];
    let faults = {
        let mut guard = open.lock().unwrap_or_else(PoisonError::into_inner);
        let (player, faults) = guard.as_mut().expect("a stream");
        assert_eq!(pull_into(&buf, player, &mut out), 100);
        faults.clone()
    };
    // A glitch is played through; the device going away is not.
    assert!(!is_fatal(&cpal::Error::new(cpal::ErrorKind::Xrun)));
    faults
        .try_send(cpal::Error::new(cpal::ErrorKind::DeviceNotAvailable))
        .expect("the supervisor listens");
    match wait_for_news(&sup) {
        DeviceNews::Moved { from, to } => {
            assert_eq!(
                (from.as_str(), to.as_str()),
                ("mock device 0", "mock device 2")
            );
        }
        DeviceNews::Lost(e) => panic!("not reopened: {e}"),
    }
    assert_eq!(sup.device(), "mock device 2");
    let mut guard = open.lock().unwrap_or_else(PoisonError::into_inner);
    let (player, _) = guard.as_mut().expect("the new stream");
    assert_eq!(pull_into(&buf, player, &mut out), 100);
    assert!(is_ramp_from(100, &out), "playback goes on where it was");
}

#[test]
fn a_device_that_cannot_be_reopened_is_reported_lost() {
    let buf = ramp(100);
    let (device, open) = flaky(vec![1, 2, 3]);
    let sup = Supervisor::start(device, Arc::clone(&buf), QUICK).expect("opens");
    let faults = open
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .map(|(_, f)| f.clone())
        .expect("a stream");
    faults
        .try_send(cpal::Error::new(cpal::ErrorKind::StreamInvalidated))
        .expect("the supervisor listens");
    match wait_for_news(&sup) {
        DeviceNews::Lost(AudioOutError::Lost { device, reason }) => {
            assert_eq!(device, "mock device 0");
            assert!(reason.contains("mock device 3"), "the last try: {reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_device_that_cannot_be_opened_at_all_says_so() {
    let (device, _open) = flaky(vec![0]);
    let err = Supervisor::start(device, PlayBuffer::new(), QUICK)
        .err()
        .expect("fails");
    assert!(err.to_string().contains("not ready"), "{err}");
}
