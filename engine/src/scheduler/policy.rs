//! Which stream gets the model next: the decision alone, as a pure function of what each
//! stream has sent and when, so it can be tested without a model.
//!
//! Following `shared/docs/streaming.md`: a stream is *pressing* when it has sent no audio yet or
//! when its listener, playing in real time from the first chunk, will reach the end of the
//! audio already sent within a margin.
//!
//! New streams (nothing sent) are admitted in arrival order, as soon as admitting one does not
//! starve a started one: the policy knows, for each stream, the estimated cost of its next
//! step and of everything before its next audio, and runs the new stream's next step only if
//! every started stream, served earliest deadline first *after* that step, still gets its next
//! audio a margin before its listener runs dry. Otherwise the started stream due first runs.
//! The check is per step (an encoder, or a piece of a generator pass), and the policy decides
//! again after each, so a new stream advances in the gaps a playing one leaves instead of
//! waiting for a gap as long as its whole first audio. Without the check a burst of arrivals
//! makes every playing stream stutter (each first segment overtaking them), which the load
//! benchmark showed: better viability for FIFO than for "new first". Once nothing new is
//! waiting, started interactive streams go earliest deadline first, then background work
//! (voice-matching probes, cast checks: short, and someone is waiting for the answer), then
//! offline work (exports), each oldest first.
//! Streams whose listener has not taken what was sent (above the high watermark) are skipped
//! until they drain below the low watermark: backpressure.

use std::time::{Duration, Instant};

/// The priority class of a stream. Interactive streams are listened to as they arrive;
/// background and offline work only wants throughput, and runs only when no interactive stream
/// is runnable (so it never delays a playing one by more than the one step under way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Someone is listening as it arrives: playback, previews, the HTTP API.
    Interactive,
    /// Exports and CLI renders: the whole file matters, not the first audio.
    Offline,
    /// Work nobody listens to, whose answer a user waits for: voice-matching probes and cast
    /// checks. Before exports, after anything interactive.
    Background,
}

/// How the scheduler orders work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Pressing first, as described above (the default).
    Pressing,
    /// First come, first served, one stream at a time to the end: the naive baseline the
    /// benchmark compares against.
    Fifo,
}

/// What the policy needs to know about one stream.
#[derive(Debug, Clone, Copy)]
pub struct StreamView {
    pub mode: Mode,
    pub arrived: Instant,
    /// When its first audio was ready, if it was.
    pub first_audio: Option<Instant>,
    /// Seconds of audio produced so far.
    pub produced: f64,
    /// Audio produced but not yet taken by the listener, in seconds.
    pub unread: f64,
    /// Set once unread audio passed the high watermark; cleared below the low one.
    pub throttled: bool,
    /// Whether it has work left.
    pub runnable: bool,
    /// Estimated compute time until its next audio, in seconds.
    pub next_cost: f64,
    /// Estimated compute time of its next scheduling step alone (an encoder, or a piece of a
    /// generator pass), in seconds.
    pub step_cost: f64,
    /// Its next step encodes a segment (and so could share a batched encoder pass).
    pub encoding: bool,
    /// Its next step starts a window that could share a batched generator pass: the length
    /// that window is padded to (see `SegmentJob::window_bucket`).
    pub window: Option<usize>,
}

impl StreamView {
    /// When the listener runs out of audio (playback from the first chunk in real time).
    #[must_use]
    pub fn runs_dry(&self) -> Option<Instant> {
        self.first_audio
            .map(|t| t + Duration::from_secs_f64(self.produced.max(0.0)))
    }

    /// Pressing: nothing sent yet, or the audio sent runs out within `margin`.
    #[must_use]
    pub fn is_pressing(&self, now: Instant, margin: Duration) -> bool {
        self.mode == Mode::Interactive
            && match self.runs_dry() {
                None => true,
                Some(dry) => dry <= now + margin,
            }
    }
}

/// Index of the stream to run next, or `None` when nothing may run; each step serves one
/// stream (see [`pick_batched`]).
#[must_use]
pub fn pick(
    streams: &[StreamView],
    now: Instant,
    margin: Duration,
    policy: Policy,
) -> Option<usize> {
    pick_batched(streams, now, margin, policy, 1)
}

/// [`pick`] on a model whose steps decode the next windows of up to `batch` streams in one
/// pass at about the cost of its longest member ([`window_mates`]). Admitting a new stream
/// then weighs the started streams served `batch` at a time, not one by one: with hundreds
/// of listeners on a GPU, summing them one by one would hold every newcomer back for
/// seconds that batching does not actually take.
#[must_use]
pub fn pick_batched(
    streams: &[StreamView],
    now: Instant,
    margin: Duration,
    policy: Policy,
    batch: usize,
) -> Option<usize> {
    let eligible = |s: &&StreamView| s.runnable && !s.throttled;
    let candidates = streams.iter().enumerate().filter(|(_, s)| eligible(s));
    if policy == Policy::Fifo {
        return candidates.min_by_key(|(_, s)| s.arrived).map(|(i, _)| i);
    }
    let candidates: Vec<(usize, &StreamView)> = candidates.collect();
    let started = started_by_deadline(&candidates);
    // 1. The oldest new stream, if admitting it now starves no started one.
    let newest = candidates
        .iter()
        .filter(|(_, s)| s.mode == Mode::Interactive && s.first_audio.is_none())
        .min_by_key(|(_, s)| s.arrived);
    if let Some(&(i, new)) = newest {
        // Step by step: after this step the policy decides again, so a started stream that
        // comes due meanwhile is served before the new stream's next piece.
        if admits(new.step_cost, &started, now, margin, batch) {
            return Some(i);
        }
    }
    // 2. Started interactive streams: a pressing one, or one still within reach of its
    //    listener, earliest deadline first.
    if let Some(&(i, _, _)) = started.first() {
        return Some(i);
    }
    // 3. Background, then offline, each oldest first (no interactive stream is runnable, or
    //    the new ones may not be admitted yet and no started one is due: either way the
    //    policy decides again after this one step).
    let rank = |s: &StreamView| match s.mode {
        Mode::Interactive => 0,
        Mode::Background => 1,
        Mode::Offline => 2,
    };
    candidates
        .iter()
        .min_by_key(|(_, s)| (rank(s), s.arrived))
        .map(|(i, _)| *i)
}

/// Started interactive streams, earliest deadline (listener runs dry) first.
fn started_by_deadline<'a>(
    candidates: &[(usize, &'a StreamView)],
) -> Vec<(usize, &'a StreamView, Instant)> {
    let mut started: Vec<(usize, &StreamView, Instant)> = candidates
        .iter()
        .filter(|(_, s)| s.mode == Mode::Interactive)
        .filter_map(|&(i, s)| s.runs_dry().map(|dry| (i, s, dry)))
        .collect();
    started.sort_by_key(|&(_, _, dry)| dry);
    started
}

/// Streams whose encoder may run in one batched pass with `chosen`'s (which [`pick`] chose
/// and which is about to encode), at most `max` of them, oldest first.
///
/// A mate is as urgent as `chosen` — like it, interactive and pressing (waiting for first
/// audio or about to run dry), or like it, offline — so batching never moves work ahead of
/// something more pressing. And the whole batch's cost must still pass the same check as
/// `chosen`'s step alone did: every started stream not in the batch still gets its next
/// audio a margin before its listener runs dry. Costs are summed, as on a CPU, where a batch
/// costs about what its members cost one by one; on a GPU that overestimates, which only
/// makes batches smaller than they could be.
#[must_use]
pub fn encoder_mates(
    streams: &[StreamView],
    chosen: usize,
    now: Instant,
    margin: Duration,
    max: usize,
) -> Vec<usize> {
    let Some(first) = streams.get(chosen).filter(|s| s.encoding) else {
        return Vec::new();
    };
    let urgent = |s: &StreamView| match first.mode {
        Mode::Interactive => s.mode == Mode::Interactive && s.is_pressing(now, margin),
        other => s.mode == other,
    };
    if first.mode == Mode::Interactive && !first.is_pressing(now, margin) {
        return Vec::new();
    }
    let mut others: Vec<(usize, &StreamView)> = streams
        .iter()
        .enumerate()
        .filter(|&(i, s)| i != chosen && s.runnable && !s.throttled && s.encoding && urgent(s))
        .collect();
    others.sort_by_key(|(_, s)| s.arrived);
    let mut batch = vec![chosen];
    let mut cost = first.step_cost;
    for (i, s) in others {
        if batch.len() > max {
            break;
        }
        batch.push(i);
        let eligible: Vec<(usize, &StreamView)> = streams
            .iter()
            .enumerate()
            .filter(|(j, s)| s.runnable && !s.throttled && !batch.contains(j))
            .collect();
        if admits(
            cost + s.step_cost,
            &started_by_deadline(&eligible),
            now,
            margin,
            1,
        ) {
            cost += s.step_cost;
        } else {
            batch.pop();
        }
    }
    batch.remove(0);
    batch
}

/// Streams whose next window may be decoded in one batched pass with `chosen`'s (which
/// [`pick`] chose and whose next step starts a window), at most `max` of them.
///
/// On the device where this runs (the model's `window_batch_limit` above 1), a batch costs
/// about what its longest member costs alone, so mates ride along rather than wait their
/// turn, in this order: newcomers waiting for their first audio (oldest first), then started
/// interactive streams by deadline (closest to running dry first), then background, then
/// offline work (oldest first). Only windows padded to no more than `chosen`'s join: a mate
/// never lengthens the step `chosen` was picked for.
#[must_use]
pub fn window_mates(streams: &[StreamView], chosen: usize, max: usize) -> Vec<usize> {
    let Some(bucket) = streams.get(chosen).and_then(|s| s.window) else {
        return Vec::new();
    };
    let mut mates: Vec<(usize, &StreamView)> = streams
        .iter()
        .enumerate()
        .filter(|&(i, s)| {
            i != chosen && s.runnable && !s.throttled && s.window.is_some_and(|w| w <= bucket)
        })
        .collect();
    // (class, deadline or arrival): newcomers, started interactive, background, offline.
    let key = |s: &StreamView| match (s.mode, s.runs_dry()) {
        (Mode::Interactive, None) => (0, s.arrived),
        (Mode::Interactive, Some(dry)) => (1, dry),
        (Mode::Background, _) => (2, s.arrived),
        (Mode::Offline, _) => (3, s.arrived),
    };
    mates.sort_by_key(|(_, s)| key(s));
    mates.into_iter().take(max).map(|(i, _)| i).collect()
}

/// Whether spending `cost` seconds on something else first still leaves every started stream
/// (in deadline order, each up to its next audio) served at least `margin` before its listener
/// runs dry (the margin absorbs the error of an average cost). In overload this holds new
/// streams back until the started ones finish or get ahead; the queue cap then refuses
/// newcomers. Started streams are served `batch` at a time in deadline order, a group costing
/// what its dearest member does (one by one for `batch` 1: a group's cost is the sum).
fn admits(
    cost: f64,
    started: &[(usize, &StreamView, Instant)],
    now: Instant,
    margin: Duration,
    batch: usize,
) -> bool {
    let mut t = now + Duration::from_secs_f64(cost.max(0.0));
    started.chunks(batch.max(1)).all(|group| {
        let dearest = group
            .iter()
            .map(|(_, s, _)| s.next_cost.max(0.0))
            .fold(0.0, f64::max);
        t += Duration::from_secs_f64(dearest);
        group.iter().all(|&(_, _, dry)| t + margin <= dry)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(mode: Mode, arrived: Instant) -> StreamView {
        StreamView {
            mode,
            arrived,
            first_audio: None,
            produced: 0.0,
            unread: 0.0,
            throttled: false,
            runnable: true,
            next_cost: 0.5,
            step_cost: 0.5,
            encoding: false,
            window: None,
        }
    }

    #[test]
    fn window_mates_are_newcomers_then_the_closest_to_running_dry_then_the_rest() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let window = |mode, arrived, bucket| StreamView {
            window: Some(bucket),
            ..view(mode, arrived)
        };
        let started = |arrived, produced: f64, bucket| StreamView {
            first_audio: Some(t0),
            produced,
            ..window(Mode::Interactive, arrived, bucket)
        };
        let streams = [
            window(Mode::Offline, at(0), 52),      // 0: an export
            started(at(1), 9.0, 160),              // 1: started, 9 s sent
            window(Mode::Interactive, at(30), 52), // 2: a newcomer
            started(at(2), 3.0, 96),               // 3: started, runs dry first
            window(Mode::Interactive, at(20), 52), // 4: an older newcomer
            window(Mode::Background, at(3), 52),   // 5: a probe
            view(Mode::Interactive, at(4)),        // 6: mid-window: cannot join
            started(at(5), 1.0, 200),              // 7: padded past the chosen's
        ];
        assert_eq!(window_mates(&streams, 1, 8), vec![4, 2, 3, 5, 0]);
        assert_eq!(window_mates(&streams, 1, 2), vec![4, 2], "up to the limit");
        assert_eq!(window_mates(&streams, 1, 0), Vec::<usize>::new());
        // A short first window takes only windows as short: none padded longer.
        assert_eq!(window_mates(&streams, 2, 8), vec![4, 5, 0]);
        // Throttled or finished streams wait; a chosen stream mid-window takes no mates.
        let mut held = streams;
        held[4].throttled = true;
        held[2].runnable = false;
        assert_eq!(window_mates(&held, 1, 8), vec![3, 5, 0]);
        assert!(window_mates(&streams, 6, 8).is_empty());
    }

    #[test]
    fn pressing_streams_overtake_comfortable_ones() {
        let t0 = Instant::now();
        let now = t0 + Duration::from_secs(10);
        let margin = Duration::from_secs(1);
        // An old stream 20 s ahead of its listener, and a new one with nothing sent.
        let mut old = view(Mode::Interactive, t0);
        old.first_audio = Some(t0);
        old.produced = 30.0;
        let new = view(Mode::Interactive, now);
        assert_eq!(pick(&[old, new], now, margin, Policy::Pressing), Some(1));
        // FIFO would keep serving the old one.
        assert_eq!(pick(&[old, new], now, margin, Policy::Fifo), Some(0));
        // A stream whose listener runs dry before the new one arrived goes first (EDF).
        let mut dry = view(Mode::Interactive, t0);
        dry.first_audio = Some(t0);
        dry.produced = 9.95;
        assert!(dry.is_pressing(now, margin));
        assert_eq!(pick(&[new, dry], now, margin, Policy::Pressing), Some(1));
    }

    #[test]
    fn with_window_batches_many_playing_streams_still_admit_a_new_one() {
        let t0 = Instant::now();
        let now = t0 + Duration::from_secs(4);
        let margin = Duration::from_millis(100);
        let mut new = view(Mode::Interactive, now);
        new.step_cost = 0.05;
        // 64 listeners, each 1 s from running dry, each 50 ms of work from its next audio.
        let mut playing = view(Mode::Interactive, t0);
        playing.first_audio = Some(t0);
        playing.produced = 5.0;
        playing.next_cost = 0.05;
        let mut streams = vec![playing; 64];
        streams.push(new);
        // One by one they need 3.2 s: the newcomer waits, the first due is served.
        assert_eq!(
            pick_batched(&streams, now, margin, Policy::Pressing, 1),
            Some(0)
        );
        assert_eq!(pick(&streams, now, margin, Policy::Pressing), Some(0));
        // 32 at a time, two passes of 50 ms after the newcomer's 50 ms: 0.25 s with the margin.
        assert_eq!(
            pick_batched(&streams, now, margin, Policy::Pressing, 32),
            Some(64)
        );
        // Batches do not make room that is not there: with 120 ms left, even one pass of
        // the started ones after the newcomer's step misses the margin.
        for s in &mut streams[..64] {
            s.produced = 4.12;
        }
        assert_eq!(
            pick_batched(&streams, now, margin, Policy::Pressing, 32),
            Some(0)
        );
        // And a group costs its dearest member: one slow stream among them counts.
        for s in &mut streams[..64] {
            s.produced = 5.0;
        }
        streams[40].next_cost = 0.9;
        assert_eq!(
            pick_batched(&streams, now, margin, Policy::Pressing, 32),
            Some(0)
        );
    }

    #[test]
    fn a_new_stream_waits_while_admitting_it_would_starve_a_playing_one() {
        let t0 = Instant::now();
        let now = t0 + Duration::from_secs(4);
        let margin = Duration::from_millis(300);
        let new = view(Mode::Interactive, now); // next_cost 0.5 s
        let mut playing = view(Mode::Interactive, t0);
        playing.first_audio = Some(t0);
        // 1.2 s of audio left: 0.5 (new) + 0.5 (its next) + 0.3 margin = 1.3 s > 1.2 s.
        playing.produced = 5.2;
        assert_eq!(
            pick(&[new, playing], now, margin, Policy::Pressing),
            Some(1)
        );
        // 2 s left: room for the new stream's first segment first.
        playing.produced = 6.0;
        assert_eq!(
            pick(&[new, playing], now, margin, Policy::Pressing),
            Some(0)
        );
        // A cheaper first segment fits where a dearer one did not.
        playing.produced = 5.2;
        let mut cheap = new;
        cheap.step_cost = 0.3;
        assert_eq!(
            pick(&[cheap, playing], now, margin, Policy::Pressing),
            Some(0)
        );
        // Every started stream counts: a second one due soon after tips the balance.
        let mut second = playing;
        second.produced = 5.4;
        assert_eq!(
            pick(&[cheap, playing, second], now, margin, Policy::Pressing),
            Some(1)
        );
    }

    #[test]
    fn background_work_comes_after_listeners_and_before_exports() {
        let t0 = Instant::now();
        let now = t0 + Duration::from_secs(5);
        let margin = Duration::from_secs(1);
        let export = view(Mode::Offline, t0);
        let probe = view(Mode::Background, t0 + Duration::from_secs(1));
        let listening = view(Mode::Interactive, now);
        assert_eq!(
            pick(&[export, probe, listening], now, margin, Policy::Pressing),
            Some(2),
            "a listener first"
        );
        assert_eq!(
            pick(&[export, probe], now, margin, Policy::Pressing),
            Some(1),
            "a probe someone waits for before an older export"
        );
        // Background encoders batch with background ones only.
        let mut a = probe;
        a.encoding = true;
        let mut e = export;
        e.encoding = true;
        assert!(encoder_mates(&[a, e], 0, now, margin, 4).is_empty());
        assert_eq!(encoder_mates(&[a, e, a], 0, now, margin, 4), vec![2]);
    }

    #[test]
    fn offline_yields_and_throttled_streams_wait() {
        let t0 = Instant::now();
        let now = t0 + Duration::from_secs(5);
        let margin = Duration::from_secs(1);
        let export = view(Mode::Offline, t0);
        let mut listening = view(Mode::Interactive, now);
        assert_eq!(
            pick(&[export, listening], now, margin, Policy::Pressing),
            Some(1)
        );
        listening.throttled = true;
        assert_eq!(
            pick(&[export, listening], now, margin, Policy::Pressing),
            Some(0)
        );
        let mut done = export;
        done.runnable = false;
        assert_eq!(
            pick(&[done, listening], now, margin, Policy::Pressing),
            None
        );
    }

    #[test]
    fn encoders_batch_with_equally_urgent_ones_while_the_playing_stay_safe() {
        let t0 = Instant::now();
        let now = t0 + Duration::from_secs(4);
        let margin = Duration::from_millis(500);
        let new = |ms: u64| StreamView {
            encoding: true,
            step_cost: 0.1,
            ..view(Mode::Interactive, t0 + Duration::from_millis(ms))
        };
        let (a, b, c, d) = (new(0), new(10), new(20), new(30));
        // Three newcomers join the oldest, up to the limit, oldest first.
        let all = [d, a, c, b];
        assert_eq!(pick(&all, now, margin, Policy::Pressing), Some(1));
        assert_eq!(encoder_mates(&all, 1, now, margin, 2), vec![3, 2]);
        assert_eq!(encoder_mates(&all, 1, now, margin, 8), vec![3, 2, 0]);
        assert!(encoder_mates(&all, 1, now, margin, 0).is_empty());
        // Not encoding: nothing to batch with.
        let mut busy = a;
        busy.encoding = false;
        assert!(encoder_mates(&[busy, b], 0, now, margin, 8).is_empty());
        // An offline encoder never joins an interactive one, nor the reverse.
        let export = StreamView {
            encoding: true,
            ..view(Mode::Offline, t0)
        };
        assert!(encoder_mates(&[a, export], 0, now, margin, 8).is_empty());
        assert!(encoder_mates(&[export, a], 0, now, margin, 8).is_empty());
        // A playing stream with 0.95 s left: 0.1 + 0.2 (its next) + 0.5 margin fits, one more
        // newcomer's 0.1 still fits, a third does not.
        let mut playing = view(Mode::Interactive, t0);
        playing.first_audio = Some(t0);
        playing.produced = 4.95;
        playing.next_cost = 0.2;
        let with_playing = [a, b, c, playing];
        assert_eq!(encoder_mates(&with_playing, 0, now, margin, 8), vec![1]);
        // A playing stream comfortably ahead is not pressing and does not join.
        let mut ahead = playing;
        ahead.produced = 30.0;
        ahead.encoding = true;
        assert_eq!(encoder_mates(&[a, ahead, b], 0, now, margin, 8), vec![2]);
    }

    #[test]
    fn earlier_arrivals_are_admitted_first() {
        let t0 = Instant::now();
        let a = view(Mode::Interactive, t0);
        let b = view(Mode::Interactive, t0 + Duration::from_millis(5));
        let now = t0 + Duration::from_secs(1);
        assert_eq!(
            pick(&[b, a], now, Duration::from_secs(1), Policy::Pressing),
            Some(1)
        );
    }

    #[test]
    fn a_new_stream_advances_a_step_at_a_time_between_a_playing_ones_deadlines() {
        let t0 = Instant::now();
        let now = t0 + Duration::from_secs(4);
        let margin = Duration::from_millis(500);
        let mut playing = view(Mode::Interactive, t0);
        playing.first_audio = Some(t0);
        playing.produced = 4.9; // 0.9 s left
        playing.next_cost = 0.2;
        // The newcomer's first audio is 0.5 s away, but its next step (the encoder) is 0.1 s:
        // 0.1 + 0.2 + 0.5 margin fits in 0.9 s, so it runs; the playing stream is still safe.
        let mut new = view(Mode::Interactive, now);
        new.next_cost = 0.5;
        new.step_cost = 0.1;
        assert_eq!(
            pick(&[new, playing], now, margin, Policy::Pressing),
            Some(0)
        );
        // A step that would not leave the playing stream its margin waits.
        new.step_cost = 0.3;
        assert_eq!(
            pick(&[new, playing], now, margin, Policy::Pressing),
            Some(1)
        );
    }
}
