//! Which batched shapes get a CUDA graph, and when a graph may replace the eager pass: the
//! bookkeeping of `generator::graphs`, apart from the driver calls so the CPU tests it.
//!
//! A shape is (bucket, items). Its first pass runs eagerly (a shape seen once is not worth a
//! capture); its second is captured; from then on it replays, unless the capture failed or its
//! replay was not the eager audio ([`replay_agrees`]), after which it stays eager. At most
//! `max` shapes are tracked; beyond that, new shapes run eagerly.

use std::collections::HashMap;

use crate::parity::snr_db;

/// How close a replay must be to the eager pass, per item. The same bar as batched against
/// alone; the replay runs the same kernels on the same data, so only the order of the `AdaIN`
/// statistics' atomic sums may differ.
pub const MIN_SNR_DB: f64 = 100.0;

/// A shape of batched pass: (bucket, items).
pub type ShapeKey = (usize, usize);

enum State<G> {
    Seen,
    Eager,
    Ready(G),
}

/// What to do with a pass of some shape.
pub enum Decision<'a, G> {
    /// Run it eagerly.
    Eager,
    /// Run it eagerly, then capture it (and report with [`ShapeCache::captured`]).
    Capture,
    /// Replay this graph.
    Replay(&'a mut G),
}

/// The state of every shape seen, with its graph `G` once captured.
pub struct ShapeCache<G> {
    shapes: HashMap<ShapeKey, State<G>>,
    max: usize,
}

impl<G> ShapeCache<G> {
    /// Tracks at most `max` shapes.
    #[must_use]
    pub fn new(max: usize) -> Self {
        Self {
            shapes: HashMap::new(),
            max,
        }
    }

    /// What to do with a pass of shape `key` (and notes that it was seen).
    pub fn decide(&mut self, key: ShapeKey) -> Decision<'_, G> {
        if !self.shapes.contains_key(&key) {
            if self.shapes.len() < self.max {
                self.shapes.insert(key, State::Seen);
            }
            return Decision::Eager;
        }
        match self.shapes.get_mut(&key) {
            Some(State::Seen) => Decision::Capture,
            Some(State::Ready(g)) => Decision::Replay(g),
            Some(State::Eager) | None => Decision::Eager,
        }
    }

    /// The capture of `key` gave `graph` (kept, replayed from now on) or failed (`None`: the
    /// shape runs eagerly from now on).
    pub fn captured(&mut self, key: ShapeKey, graph: Option<G>) {
        self.shapes
            .insert(key, graph.map_or(State::Eager, State::Ready));
    }

    /// `key`'s graph failed to replay: eager from now on (its graph dropped).
    pub fn failed(&mut self, key: ShapeKey) {
        self.shapes.insert(key, State::Eager);
    }

    /// Shapes with a graph.
    #[must_use]
    pub fn ready(&self) -> usize {
        self.shapes
            .values()
            .filter(|s| matches!(s, State::Ready(_)))
            .count()
    }

    /// Shapes tracked.
    #[must_use]
    pub fn len(&self) -> usize {
        self.shapes.len()
    }

    /// True before any shape was seen.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }
}

/// Whether a graph's replay gave the eager pass's audio: every item of the same length and at
/// least [`MIN_SNR_DB`] from it. Also returns the worst item's SNR (∞ for no items; −∞ where
/// the lengths or item counts differ).
#[must_use]
pub fn replay_agrees(eager: &[Vec<f32>], replayed: &[Vec<f32>]) -> (bool, f64) {
    if eager.len() != replayed.len() {
        return (false, f64::NEG_INFINITY);
    }
    let worst = eager
        .iter()
        .zip(replayed)
        .map(|(e, r)| snr_db(e, r))
        .fold(f64::INFINITY, f64::min);
    (worst >= MIN_SNR_DB, worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_is_captured_on_its_second_pass_and_replayed_after() {
        let mut cache: ShapeCache<u32> = ShapeCache::new(2);
        let a = (32, 8);
        assert!(matches!(cache.decide(a), Decision::Eager));
        assert!(matches!(cache.decide(a), Decision::Capture));
        cache.captured(a, Some(7));
        assert_eq!(cache.ready(), 1);
        match cache.decide(a) {
            Decision::Replay(g) => assert_eq!(*g, 7),
            _ => panic!("a captured shape replays"),
        }
        // A failed replay, or a failed capture, leaves the shape eager for good.
        cache.failed(a);
        assert!(matches!(cache.decide(a), Decision::Eager));
        assert!(matches!(cache.decide(a), Decision::Eager));
        let b = (64, 8);
        assert!(matches!(cache.decide(b), Decision::Eager));
        assert!(matches!(cache.decide(b), Decision::Capture));
        cache.captured(b, None);
        assert!(matches!(cache.decide(b), Decision::Eager));
        assert_eq!(cache.ready(), 0);
        // Full: a third shape is never tracked, so never captured.
        let c = (64, 16);
        for _ in 0..3 {
            assert!(matches!(cache.decide(c), Decision::Eager));
        }
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn a_replay_must_be_the_eager_audio() {
        let eager = vec![vec![0.5f32, -0.25, 0.125], vec![0.1, 0.2]];
        let (ok, worst) = replay_agrees(&eager, &eager);
        assert!(ok && worst > 250.0, "{worst}");
        let mut close = eager.clone();
        close[1][0] += 1e-9;
        assert!(replay_agrees(&eager, &close).0);
        let mut off = eager.clone();
        off[1][0] += 1e-3;
        let (ok, worst) = replay_agrees(&eager, &off);
        assert!(!ok && worst < MIN_SNR_DB, "{worst}");
        assert!(!replay_agrees(&eager, &eager[..1]).0, "an item missing");
        let mut short = eager.clone();
        short[0].pop();
        assert!(!replay_agrees(&eager, &short).0, "an item cut short");
    }
}
