//! The search itself, pure: an evolution strategy over the style space's coordinates that
//! estimates the uphill direction from mirrored pairs of candidates, each pair speaking a
//! different probe sentence.
//!
//! Why this method, from what was tried on real clips (Piper's `joe`, 120 candidates each):
//! - Every candidate costs a Kokoro render and an embedding (about a second on two cores), so
//!   a tuning gets a couple of hundred of them; and the score is rugged at small scales (a
//!   slightly different pack speaks with slightly different timing and pitch, and the
//!   encoder's answer jitters by about a hundredth).
//! - A walk keeping whichever single step scored higher ((1+1)-ES) kept a lucky point within
//!   a few dozen candidates and never beat it (3 improvements in 81 candidates).
//! - Mirrored pairs on a fixed two-sentence probe climbed (0.734 → 0.783 on the probe) but
//!   learnt the probe: on held-out sentences it gained only 0.006.
//!
//! - Longer, slower-shrinking moves (first 1.5, `1/√(1 + moves/10)`) did worse than these
//!   (held-out 0.782 against 0.801 for `joe`, 200 candidates each); probing at σ = 0.5
//!   instead of 0.3 changed nothing (270 s each: `joe` 0.806 against 0.801, `kal` 0.824
//!   against 0.823).
//!
//! - Four pairs see only four directions of 32, so one generation's estimate is mostly
//!   noise (its expected cosine with the true slope is about √(4/32) ≈ 0.35 before any
//!   jitter), and a walk of normalised moves along it wanders. Keeping a running sum of the
//!   estimates ([`MOMENTUM`] 0.75, about four generations) took `joe` from 0.805 to 0.838
//!   held-out in the same 270 s on the same build (386 and 359 candidates).
//!
//! - A pair says more than `f₊ − f₋`: the two embeddings' difference `E₊ − E₋` is the
//!   encoder's response to `2σ·ε`, all 256 dimensions of it, and that response changes slowly
//!   as the centre moves, while the score's slope (which direction in embedding space gets
//!   closer to the clips) changes with every move. So the walk fits a linear model of the
//!   embedding to recent pairs and takes the slope of the mean cosine through it, with the
//!   cosine's gradient taken where the centre is now. Same build, seed and 270 s: `kal` 0.839
//!   → 0.860 held-out, `joe` 0.834 → 0.869 (431 and 452, 390 and 403 candidates). The momentum
//!   sum stays for a walk given scores alone.
//!
//! So each pair `centre ± σ·ε` speaks one sentence of a pool, the next pair the next sentence,
//! and after [`PAIRS`] pairs the centre moves uphill. Given the embeddings
//! ([`Walk::with_target`], [`Walk::record_embedded`]), uphill is
//! `d = (Σ w·εεᵀ + λI)⁻¹ Σ w·ε·((E₊ − E₋)·g)`: a ridge regression of each pair's directional
//! derivative on its ε over the last [`FIT_PAIRS`] pairs, each generation of age weighing
//! [`FIT_DECAY`] times as much, `g` being the gradient of the cosine to the clips averaged over
//! this generation's midpoints `(E₊ + E₋)/2`. Given scores alone, it is the running sum of
//! the generations' `Σ (f₊ − f₋)·ε`. Either way the estimate averages over sentences, over the
//! encoder's jitter and over recent generations, and climbs what the sentences share, the
//! voice. Nothing scores
//! the centre itself (that would be one sentence again); the answer is the last centre, and
//! the held-out sentences judge it: averaging the last eighth, quarter or half of the centres
//! instead did no better (`kal` 0.839 last against 0.839, 0.835, 0.832; `joe` 0.834 against
//! 0.835, 0.832, 0.821). The progress estimate is the start's similarity plus the mean gain
//! of recent pairs over the start on their own sentences.
//!
//! Candidates never leave the ball of [`super::space::StyleSpace::radius`] around the stock
//! centre: a point that would is pulled back onto its surface.

use std::collections::VecDeque;

use super::space::norm;

/// Mirrored pairs per move of the centre.
pub const PAIRS: usize = 4;
/// The probing distance per axis, in spread units.
pub const SIGMA: f32 = 0.3;
/// The first move's length (spread units); later moves shrink as `1/√(1 + moves/4)`.
pub const FIRST_STEP: f32 = 1.0;
/// How much of the previous moves' direction each move keeps: the direction is a running
/// sum of every generation's estimate, each older one weighed `MOMENTUM` times less.
pub const MOMENTUM: f32 = 0.75;
/// Pairs the fitted direction uses, and each older generation's weight.
pub const FIT_PAIRS: usize = 48;
pub const FIT_DECAY: f32 = 0.85;
/// The ridge added to the fit's normal equations (in units of one pair's `εεᵀ`).
pub const FIT_RIDGE: f32 = 2.0;
/// Pairs the progress estimate averages.
const RECENT: usize = 8;

/// A point to score: where, and with which probe sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// A move from the origin (spread units along each axis).
    pub point: Vec<f32>,
    pub sentence: usize,
}

/// A search's state (see the module docs).
#[derive(Debug, Clone)]
pub struct Walk {
    /// Coordinates of the starting pack (spread units from the stock centre).
    origin: Vec<f32>,
    radius: f32,
    rng: SplitMix,
    /// The start's score on each probe sentence.
    base: Vec<f32>,
    centre: Vec<f32>,
    /// The running direction (see [`MOMENTUM`]).
    heading: Vec<f32>,
    moves: usize,
    /// This generation's directions and their sentences, and the scores of `centre ± σε`.
    directions: Vec<(Vec<f32>, usize)>,
    plus: Vec<Option<f32>>,
    minus: Vec<Option<f32>>,
    next_sentence: usize,
    /// Recent pairs' mean gain over the start.
    gains: VecDeque<f32>,
    tried: usize,
    /// The speaker embedding the scores are cosines to, when the walk is given embeddings.
    target: Option<Vec<f32>>,
    /// This generation's embeddings of `centre ± σε` (see [`Self::record_embedded`]).
    plus_e: Vec<Option<Vec<f32>>>,
    minus_e: Vec<Option<Vec<f32>>>,
    /// Recent pairs: `(ε, E₊ − E₋, generation)`.
    pairs_seen: VecDeque<(Vec<f32>, Vec<f32>, usize)>,
}

impl Walk {
    /// A search from `origin` within `radius` of the stock centre; `base` holds the start's
    /// score on each probe sentence (at least one).
    #[must_use]
    pub fn new(origin: Vec<f32>, base: Vec<f32>, radius: f32, seed: u64) -> Self {
        let dims = origin.len();
        Self {
            origin,
            radius,
            rng: SplitMix(seed),
            base,
            centre: vec![0.0; dims],
            heading: vec![0.0; dims],
            moves: 0,
            directions: Vec::new(),
            plus: Vec::new(),
            minus: Vec::new(),
            next_sentence: 0,
            gains: VecDeque::new(),
            tried: 0,
            target: None,
            plus_e: Vec::new(),
            minus_e: Vec::new(),
            pairs_seen: VecDeque::new(),
        }
    }

    /// Estimates the direction from the candidates' embeddings (see [`Self::record_embedded`]):
    /// a local linear model of the embedding over the coordinates, fitted to recent pairs.
    #[must_use]
    pub fn with_target(mut self, target: &[f32]) -> Self {
        let n = norm(target).max(f32::MIN_POSITIVE);
        self.target = Some(target.iter().map(|v| v / n).collect());
        self
    }

    /// [`Self::record`], with the embedding whose cosine to the target is `score`.
    pub fn record_embedded(&mut self, score: f32, embedding: &[f32]) {
        if let Some(i) = self.open_pair() {
            if self.plus[i].is_none() {
                self.plus_e[i] = Some(embedding.to_vec());
            } else {
                self.minus_e[i] = Some(embedding.to_vec());
            }
        }
        self.record(score);
    }

    /// The next point to score.
    pub fn propose(&mut self) -> Probe {
        let i = if let Some(i) = self.open_pair() {
            i
        } else {
            let dims = self.origin.len();
            let e: Vec<f32> = (0..dims).map(|_| self.rng.gaussian()).collect();
            let sentence = self.next_sentence % self.base.len().max(1);
            self.next_sentence += 1;
            self.directions.push((e, sentence));
            self.plus.push(None);
            self.minus.push(None);
            self.plus_e.push(None);
            self.minus_e.push(None);
            self.directions.len() - 1
        };
        let sign = if self.plus[i].is_none() { 1.0 } else { -1.0 };
        let (e, sentence) = &self.directions[i];
        let point: Vec<f32> = self
            .centre
            .iter()
            .zip(e)
            .map(|(c, e)| c + sign * SIGMA * e)
            .collect();
        Probe {
            point: self.inside(point),
            sentence: *sentence,
        }
    }

    /// Records the score of the point [`Self::propose`] gave last.
    pub fn record(&mut self, score: f32) {
        self.tried += 1;
        let Some(i) = self.open_pair() else {
            return;
        };
        if self.plus[i].is_none() {
            self.plus[i] = Some(score);
            return;
        }
        self.minus[i] = Some(score);
        let plus = self.plus[i].unwrap_or(score);
        let base = self.base.get(self.directions[i].1).copied().unwrap_or(0.0);
        self.gains.push_back(f32::midpoint(plus, score) - base);
        if self.gains.len() > RECENT {
            self.gains.pop_front();
        }
        if self.directions.len() == PAIRS && self.open_pair().is_none() {
            self.move_centre();
        }
    }

    /// The pair still waiting for a score, if any.
    fn open_pair(&self) -> Option<usize> {
        self.plus
            .iter()
            .zip(&self.minus)
            .position(|(p, m)| p.is_none() || m.is_none())
    }

    /// Moves the centre uphill by the generation's estimate.
    fn move_centre(&mut self) {
        if let Some(d) = self.fitted_direction() {
            self.heading = d;
        } else {
            let mut g = vec![0.0f32; self.heading.len()];
            for (((e, _), p), m) in self.directions.iter().zip(&self.plus).zip(&self.minus) {
                let d = p.unwrap_or(0.0) - m.unwrap_or(0.0);
                for (gi, ei) in g.iter_mut().zip(e) {
                    *gi += d * ei;
                }
            }
            for (h, gi) in self.heading.iter_mut().zip(&g) {
                *h = MOMENTUM * *h + gi;
            }
        }
        self.directions.clear();
        self.plus.clear();
        self.minus.clear();
        self.plus_e.clear();
        self.minus_e.clear();
        let n = norm(&self.heading);
        if n <= 0.0 {
            return;
        }
        let step = self.step();
        let moved: Vec<f32> = self
            .centre
            .iter()
            .zip(&self.heading)
            .map(|(c, h)| c + step * h / n)
            .collect();
        self.centre = self.inside(moved);
        self.moves += 1;
    }

    /// The uphill direction of the mean cosine under a linear model of the embedding, fitted
    /// (ridge least squares) to recent pairs' embedding differences; `None` without a target
    /// or embeddings.
    fn fitted_direction(&mut self) -> Option<Vec<f32>> {
        let target = self.target.as_ref()?;
        let dims = self.origin.len();
        let generation = self.moves;
        // Every pair of this generation embedded, or no fit (a walk fed scores alone).
        let embedded: Vec<(&Vec<f32>, &Vec<f32>)> = self
            .plus_e
            .iter()
            .zip(&self.minus_e)
            .map(|(p, m)| p.as_ref().zip(m.as_ref()))
            .collect::<Option<_>>()?;
        let mut mids = Vec::with_capacity(embedded.len());
        for ((e, _), (p, m)) in self.directions.iter().zip(embedded) {
            let diff: Vec<f32> = p.iter().zip(m).map(|(a, b)| a - b).collect();
            mids.push(
                p.iter()
                    .zip(m)
                    .map(|(a, b)| 0.5 * (a + b))
                    .collect::<Vec<f32>>(),
            );
            self.pairs_seen.push_back((e.clone(), diff, generation));
        }
        while self.pairs_seen.len() > FIT_PAIRS {
            self.pairs_seen.pop_front();
        }
        let g = cosine_gradient(&mids, target);
        // Each pair's directional derivative of the mean cosine along its ε, as of now, and
        // their ridge regression on ε: d = (Σ w·εεᵀ + λI)⁻¹ Σ w·ε·(Δ·g).
        let mut a = vec![0.0f64; dims * dims];
        let mut b = vec![0.0f64; dims];
        for (e, diff, age) in &self.pairs_seen {
            let w = f64::from(FIT_DECAY).powf((generation - age) as f64);
            let y: f64 = diff.iter().zip(&g).map(|(d, gi)| f64::from(*d) * gi).sum();
            for (r, er) in e.iter().enumerate() {
                b[r] += w * f64::from(*er) * y;
                for (c, ec) in e.iter().enumerate() {
                    a[r * dims + c] += w * f64::from(*er) * f64::from(*ec);
                }
            }
        }
        for r in 0..dims {
            a[r * dims + r] += f64::from(FIT_RIDGE);
        }
        let d = solve_spd(&mut a, &b, dims)?;
        Some(d.into_iter().map(|v| v as f32).collect())
    }

    /// `point` pulled back into the ball if it left it.
    fn inside(&self, mut point: Vec<f32>) -> Vec<f32> {
        let absolute: Vec<f32> = point.iter().zip(&self.origin).map(|(c, o)| c + o).collect();
        let r = norm(&absolute);
        if r > self.radius && r > 0.0 {
            let scale = self.radius / r;
            for ((c, a), o) in point.iter_mut().zip(&absolute).zip(&self.origin) {
                *c = a * scale - o;
            }
        }
        point
    }

    /// The answer so far: the current centre (a move from the origin).
    #[must_use]
    pub fn centre(&self) -> &[f32] {
        &self.centre
    }

    /// The estimated similarity near the centre: the start's mean score plus recent pairs'
    /// mean gain over the start on their own sentences.
    #[must_use]
    pub fn estimate(&self) -> f32 {
        let base = self.base.iter().sum::<f32>() / self.base.len().max(1) as f32;
        if self.gains.is_empty() {
            return base;
        }
        base + self.gains.iter().sum::<f32>() / self.gains.len() as f32
    }

    /// The next move's length (spread units).
    #[must_use]
    pub fn step(&self) -> f32 {
        FIRST_STEP / (1.0 + self.moves as f32 / 4.0).sqrt()
    }

    /// Points scored, and moves of the centre made.
    #[must_use]
    pub fn counts(&self) -> (usize, usize) {
        (self.tried, self.moves)
    }
}

/// The gradient of `cos(u, target)` in embedding space (`target` unit length), averaged over
/// the points `us`.
fn cosine_gradient(us: &[Vec<f32>], target: &[f32]) -> Vec<f64> {
    let mut g = vec![0.0f64; target.len()];
    for u in us {
        let n = norm(u).max(f32::MIN_POSITIVE);
        let cos = u.iter().zip(target).map(|(a, b)| a * b).sum::<f32>() / n;
        // ∂cos/∂u = (target − cos·û) / ‖u‖.
        for ((gi, ui), ri) in g.iter_mut().zip(u).zip(target) {
            *gi += f64::from((ri - cos * ui / n) / n);
        }
    }
    g
}

/// Solves `a x = b` for a symmetric positive definite `n × n` matrix `a` (Cholesky, in place).
fn solve_spd(a: &mut [f64], b: &[f64], n: usize) -> Option<Vec<f64>> {
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= a[j * n + k] * a[j * n + k];
        }
        if d <= 0.0 {
            return None;
        }
        let d = d.sqrt();
        a[j * n + j] = d;
        for i in j + 1..n {
            let mut v = a[i * n + j];
            for k in 0..j {
                v -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = v / d;
        }
    }
    let mut y = b.to_vec();
    for i in 0..n {
        for k in 0..i {
            y[i] -= a[i * n + k] * y[k];
        }
        y[i] /= a[i * n + i];
    }
    for i in (0..n).rev() {
        for k in i + 1..n {
            y[i] -= a[k * n + i] * y[k];
        }
        y[i] /= a[i * n + i];
    }
    Some(y)
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

    /// A smooth objective peaking at `peak` (at most 1, sloping everywhere like a cosine),
    /// shifted per sentence as real sentences score differently.
    fn score(x: &[f32], peak: &[f32], sentence: usize) -> f32 {
        let d2: f32 = x.iter().zip(peak).map(|(a, b)| (a - b) * (a - b)).sum();
        (-d2 / 50.0).exp() - 0.03 * sentence as f32
    }

    /// Runs `n` scores of `f`, returns the walk.
    fn run(walk: &mut Walk, n: usize, f: &dyn Fn(&[f32], usize) -> f32) {
        for _ in 0..n {
            let p = walk.propose();
            walk.record(f(&p.point, p.sentence));
        }
    }

    fn peak(dims: usize) -> Vec<f32> {
        (0..dims)
            .map(|i| if i % 3 == 0 { 1.5 } else { -1.0 })
            .collect()
    }

    #[test]
    fn climbs_more_than_half_way_within_two_hundred_scores() {
        let dims = 24;
        let p = peak(dims);
        let origin = vec![0.0; dims];
        let base: Vec<f32> = (0..4).map(|s| score(&origin, &p, s)).collect();
        let start = score(&origin, &p, 0);
        let mut walk = Walk::new(origin, base, 100.0, 7);
        run(&mut walk, 200, &|x, s| score(x, &p, s));
        let end = score(walk.centre(), &p, 0);
        assert!(
            end - start > 0.5 * (1.0 - start),
            "from {start} only to {end}"
        );
        assert!(walk.estimate() > start + 0.1, "the estimate follows");
        assert_eq!(walk.counts(), (200, 200 / (2 * PAIRS)));
    }

    #[test]
    fn climbs_through_jitter() {
        // The same peak with a deterministic jitter of ±0.02, like the encoder's.
        let dims = 24;
        let p = peak(dims);
        let jittery = |x: &[f32], s: usize| {
            let h = x.iter().fold(0u64, |h, v| {
                (h ^ u64::from(v.to_bits())).wrapping_mul(0x100_0000_01B3)
            });
            score(x, &p, s) + ((h % 1000) as f32 / 1000.0 - 0.5) * 0.04
        };
        let origin = vec![0.0; dims];
        let start = score(&origin, &p, 0);
        let base: Vec<f32> = (0..4).map(|s| jittery(&origin, s)).collect();
        let mut walk = Walk::new(origin, base, 100.0, 11);
        run(&mut walk, 200, &jittery);
        let end = score(walk.centre(), &p, 0);
        assert!(end > start + 0.1, "true score {end} from {start}");
    }

    /// A unit embedding `b_s + M·x` (16 wide, per-sentence offsets `b_s`, a fixed `M`), and a
    /// target that the point `peak` would speak.
    struct Embedder {
        m: Vec<Vec<f32>>,
        offsets: Vec<Vec<f32>>,
    }

    impl Embedder {
        fn new(dims: usize) -> Self {
            let mut rng = SplitMix(5);
            let m = (0..16)
                .map(|_| (0..dims).map(|_| 0.15 * rng.gaussian()).collect())
                .collect();
            let offsets = (0..4)
                .map(|s| {
                    (0..16)
                        .map(|k| {
                            if k == 0 {
                                1.0
                            } else {
                                0.05 * (s * k % 3) as f32
                            }
                        })
                        .collect()
                })
                .collect();
            Self { m, offsets }
        }

        fn embed(&self, x: &[f32], s: usize) -> Vec<f32> {
            let u: Vec<f32> = self
                .m
                .iter()
                .zip(&self.offsets[s % 4])
                .map(|(row, b)| b + row.iter().zip(x).map(|(a, v)| a * v).sum::<f32>())
                .collect();
            let n = norm(&u);
            u.iter().map(|v| v / n).collect()
        }
    }

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(p, q)| p * q).sum::<f32>() / (norm(a) * norm(b))
    }

    #[test]
    fn the_fitted_direction_climbs_an_embedding_model() {
        let dims = 24;
        let model = Embedder::new(dims);
        let target = model.embed(&peak(dims), 0);
        let score = |x: &[f32]| {
            (0..4)
                .map(|s| cos(&model.embed(x, s), &target))
                .sum::<f32>()
                / 4.0
        };
        let origin = vec![0.0; dims];
        let start = score(&origin);
        let base: Vec<f32> = (0..4)
            .map(|s| cos(&model.embed(&origin, s), &target))
            .collect();
        let mut walk = Walk::new(origin, base, 100.0, 9).with_target(&target);
        for _ in 0..200 {
            let p = walk.propose();
            let e = model.embed(&p.point, p.sentence);
            walk.record_embedded(cos(&e, &target), &e);
        }
        let end = score(walk.centre());
        let best = score(&peak(dims));
        assert!(
            end - start > 0.5 * (best - start),
            "from {start} only to {end} (peak {best})"
        );
    }

    #[test]
    fn pairs_share_a_sentence_and_sentences_rotate() {
        let mut walk = Walk::new(vec![0.0; 4], vec![0.5; 3], 10.0, 1);
        let mut sentences = Vec::new();
        for _ in 0..8 {
            let p = walk.propose();
            sentences.push(p.sentence);
            walk.record(0.5);
        }
        assert_eq!(sentences, [0, 0, 1, 1, 2, 2, 0, 0]);
    }

    #[test]
    fn never_leaves_the_ball() {
        let dims = 8;
        let origin = vec![0.9; dims];
        let radius = norm(&origin) * 1.05;
        let mut walk = Walk::new(origin.clone(), vec![0.0], radius, 3);
        for i in 0..200 {
            let p = walk.propose();
            let abs: Vec<f32> = p.point.iter().zip(&origin).map(|(a, o)| a + o).collect();
            assert!(norm(&abs) <= radius * 1.0001, "step {i} left the ball");
            // Reward going outwards, so the walk presses against the surface.
            walk.record(norm(&abs));
        }
    }

    #[test]
    fn the_same_seed_walks_the_same_way() {
        let mut a = Walk::new(vec![0.0; 4], vec![0.0], 10.0, 42);
        let mut b = Walk::new(vec![0.0; 4], vec![0.0], 10.0, 42);
        assert_eq!(a.propose(), b.propose());
        let mut c = Walk::new(vec![0.0; 4], vec![0.0], 10.0, 43);
        assert_ne!(a.propose(), c.propose());
    }
}
