//! The search itself, pure: a (1+1) evolution strategy over the style space's coordinates.
//!
//! Why this method: every candidate costs a Kokoro render and an embedding (about a second
//! on two cores), so a tuning gets a few hundred of them. With so few, population methods
//! spend most of their budget on candidates that are never built on; the (1+1) strategy keeps
//! one parent, tries one Gaussian step from it, keeps the step if it scores higher, and adapts
//! the step's size by the one-fifth rule (grow after a success, shrink slowly after a failure),
//! which is what lets it climb fast early and settle late. The objective is deterministic (the
//! same pack renders the same probes), so a higher score is a real improvement on the probes,
//! and the held-out sentences decide afterwards whether it generalises.
//!
//! Candidates never leave the ball of [`super::space::StyleSpace::radius`] around the stock
//! centre: a step that would is pulled back onto its surface.

use super::space::norm;

/// The first step's standard deviation per axis, in spread units.
pub const FIRST_STEP: f32 = 0.35;
const MIN_STEP: f32 = 0.03;
const MAX_STEP: f32 = 1.2;
/// One-fifth rule: ×GROW after a success, ×GROW^(−1/4) after a failure, so the step holds
/// still when one step in five succeeds.
const GROW: f32 = 1.5;

/// A walk's state: the best point so far, its score, the step size.
#[derive(Debug, Clone)]
pub struct Walk {
    /// Coordinates of the starting pack (spread units from the stock centre).
    origin: Vec<f32>,
    /// The best point so far, as a move from `origin`.
    best: Vec<f32>,
    best_score: f32,
    step: f32,
    radius: f32,
    rng: SplitMix,
    tried: usize,
    improved: usize,
}

impl Walk {
    /// A walk from `origin` (whose score is `origin_score`) within `radius` of the centre.
    #[must_use]
    pub fn new(origin: Vec<f32>, origin_score: f32, radius: f32, seed: u64) -> Self {
        let dims = origin.len();
        Self {
            origin,
            best: vec![0.0; dims],
            best_score: origin_score,
            step: FIRST_STEP,
            radius,
            rng: SplitMix(seed),
            tried: 0,
            improved: 0,
        }
    }

    /// The next move (from the origin) to score.
    pub fn propose(&mut self) -> Vec<f32> {
        let mut candidate: Vec<f32> = self
            .best
            .iter()
            .map(|b| b + self.step * self.rng.gaussian())
            .collect();
        // Pull back onto the ball's surface if the step left it.
        let absolute: Vec<f32> = candidate
            .iter()
            .zip(&self.origin)
            .map(|(c, o)| c + o)
            .collect();
        let r = norm(&absolute);
        if r > self.radius && r > 0.0 {
            let scale = self.radius / r;
            for ((c, a), o) in candidate.iter_mut().zip(&absolute).zip(&self.origin) {
                *c = a * scale - o;
            }
        }
        candidate
    }

    /// Records `candidate`'s score; true if it is the new best.
    pub fn record(&mut self, candidate: &[f32], score: f32) -> bool {
        self.tried += 1;
        if score > self.best_score {
            self.best = candidate.to_vec();
            self.best_score = score;
            self.improved += 1;
            self.step = (self.step * GROW).min(MAX_STEP);
            true
        } else {
            self.step = (self.step * GROW.powf(-0.25)).max(MIN_STEP);
            false
        }
    }

    /// The best move so far (from the origin) and its score.
    #[must_use]
    pub fn best(&self) -> (&[f32], f32) {
        (&self.best, self.best_score)
    }

    /// The current step size (spread units per axis).
    #[must_use]
    pub fn step(&self) -> f32 {
        self.step
    }

    /// Candidates scored, and how many of them improved on the best.
    #[must_use]
    pub fn counts(&self) -> (usize, usize) {
        (self.tried, self.improved)
    }
}

/// splitmix64 with Box–Muller on top: seeded, so a tuning can be repeated exactly.
#[derive(Debug, Clone)]
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    fn gaussian(&mut self) -> f32 {
        let (u, v) = (self.uniform(), self.uniform());
        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth objective peaking at `peak` (cosine-like, at most 1).
    fn score(x: &[f32], peak: &[f32]) -> f32 {
        let d2: f32 = x.iter().zip(peak).map(|(a, b)| (a - b) * (a - b)).sum();
        1.0 - d2 / (1.0 + d2)
    }

    #[test]
    fn climbs_towards_the_peak_within_a_few_hundred_scores() {
        let dims = 24;
        let origin = vec![0.0; dims];
        let peak: Vec<f32> = (0..dims).map(|i| if i % 3 == 0 { 1.0 } else { -0.5 }).collect();
        let start = score(&origin, &peak);
        let mut walk = Walk::new(origin, start, 100.0, 7);
        for _ in 0..250 {
            let c = walk.propose();
            let s = score(&c, &peak);
            walk.record(&c, s);
        }
        let (_, best) = walk.best();
        assert!(best > start + 0.3, "from {start} only to {best}");
        let (tried, improved) = walk.counts();
        assert_eq!(tried, 250);
        assert!(improved > 10 && improved < tried);
    }

    #[test]
    fn never_leaves_the_ball() {
        let dims = 8;
        let origin = vec![0.9; dims];
        let radius = norm(&origin) * 1.05;
        let mut walk = Walk::new(origin.clone(), 0.0, radius, 3);
        for i in 0..200 {
            let c = walk.propose();
            let abs: Vec<f32> = c.iter().zip(&origin).map(|(a, o)| a + o).collect();
            assert!(norm(&abs) <= radius * 1.0001, "step {i} left the ball");
            // Reward going outwards, so the walk presses against the surface.
            walk.record(&c, norm(&abs));
        }
    }

    #[test]
    fn the_same_seed_walks_the_same_way() {
        let mut a = Walk::new(vec![0.0; 4], 0.0, 10.0, 42);
        let mut b = Walk::new(vec![0.0; 4], 0.0, 10.0, 42);
        assert_eq!(a.propose(), b.propose());
        let mut c = Walk::new(vec![0.0; 4], 0.0, 10.0, 43);
        assert_ne!(a.propose(), c.propose());
    }
}
