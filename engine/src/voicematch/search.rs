//! The blend search's bookkeeping: which blends of the nearest stock voices to try, in what
//! order, within a fixed number of renders. Pure (no model), so it is tested on its own.
//!
//! Each candidate costs one probe render and one embedding (seconds on a CPU), so the search
//! is small and bounded: a coarse pass over the three nearest stock voices (each pair at
//! 50/50, then the three together at a third each, then each pair at 70/30 and 30/70), then
//! refinement around the best so far with a step that halves (0.1, then 0.05), until the
//! budget ([`DEFAULT_RENDERS`] unless told otherwise) is spent or nothing new is left. The
//! answer is the best of everything scored, the stock voices themselves included (their
//! similarities come from their probe embeddings, which cost no render of the search).

use std::collections::{HashSet, VecDeque};

/// Probe renders a search may spend by default.
pub const DEFAULT_RENDERS: usize = 12;
/// How many of the nearest stock voices blends are made of.
pub const BLEND_OF: usize = 3;
/// Renders kept back from the coarse pass for refinement.
const REFINE_RESERVE: usize = 2;
/// Weights stay within `[MIN_WEIGHT, 1 − MIN_WEIGHT]`: a smaller share is inaudible.
const MIN_WEIGHT: f32 = 0.05;
/// Refinement stops once the step would be smaller than this.
const MIN_STEP: f32 = 0.025;

/// Stock voice names with weights summing to 1.
pub type Terms = Vec<(String, f32)>;

/// A blend recipe in the form `VoiceSpec::parse` reads: heaviest first, weights to 2 decimals;
/// a single voice is its bare name.
#[must_use]
pub fn recipe(terms: &[(String, f32)]) -> String {
    let mut terms: Vec<&(String, f32)> = terms.iter().filter(|(_, w)| *w > 0.0).collect();
    terms.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    if let [(name, _)] = terms.as_slice() {
        return name.clone();
    }
    terms
        .iter()
        .map(|(name, w)| format!("{name}:{}", round2(*w)))
        .collect::<Vec<_>>()
        .join("+")
}

fn round2(w: f32) -> f32 {
    (w * 100.0).round() / 100.0
}

/// Weights rounded to 2 decimals and renormalised, so equal blends compare equal.
fn normalise(terms: Terms) -> Terms {
    let total: f32 = terms.iter().map(|(_, w)| w).sum();
    terms
        .into_iter()
        .map(|(n, w)| (n, round2(w / total.max(f32::MIN_POSITIVE))))
        .collect()
}

/// The state of one search; drive it with [`BlendSearch::next_candidate`] and [`BlendSearch::record`].
#[derive(Debug, Clone)]
pub struct BlendSearch {
    nearest: Vec<(String, f32)>,
    budget: usize,
    queue: VecDeque<Terms>,
    proposed: usize,
    seen: HashSet<String>,
    scored: Vec<(Terms, f32)>,
    step: f32,
}

impl BlendSearch {
    /// A search over blends of the first [`BLEND_OF`] of `nearest` (stock voices with their
    /// similarity to the target, best first) spending at most `budget` renders.
    #[must_use]
    pub fn new(mut nearest: Vec<(String, f32)>, budget: usize) -> Self {
        nearest.sort_by(|a, b| b.1.total_cmp(&a.1));
        let top: Vec<String> = nearest
            .iter()
            .take(BLEND_OF)
            .map(|(n, _)| n.clone())
            .collect();
        let mut coarse: Vec<Terms> = Vec::new();
        let pairs: Vec<(usize, usize)> = (0..top.len())
            .flat_map(|i| (i + 1..top.len()).map(move |j| (i, j)))
            .collect();
        let pair =
            |i: usize, j: usize, w: f32| vec![(top[i].clone(), w), (top[j].clone(), 1.0 - w)];
        for &(i, j) in &pairs {
            coarse.push(pair(i, j, 0.5));
        }
        if top.len() == 3 {
            coarse.push(top.iter().map(|n| (n.clone(), 1.0 / 3.0)).collect());
        }
        for &(i, j) in &pairs {
            coarse.push(pair(i, j, 0.7));
            coarse.push(pair(i, j, 0.3));
        }
        let coarse_len = if budget > 2 * REFINE_RESERVE {
            budget - REFINE_RESERVE
        } else {
            budget
        };
        let mut search = Self {
            nearest,
            budget,
            queue: VecDeque::new(),
            proposed: 0,
            seen: HashSet::new(),
            scored: Vec::new(),
            step: 0.1,
        };
        for terms in coarse.into_iter().take(coarse_len) {
            search.enqueue(terms);
        }
        search
    }

    fn enqueue(&mut self, terms: Terms) -> bool {
        let terms = normalise(terms);
        if terms.iter().any(|(_, w)| *w < MIN_WEIGHT - 1e-6) {
            return false;
        }
        if self.seen.insert(recipe(&terms)) {
            self.queue.push_back(terms);
            true
        } else {
            false
        }
    }

    /// The next blend to render and score, or `None` when the budget is spent or nothing new
    /// is worth trying.
    pub fn next_candidate(&mut self) -> Option<Terms> {
        if self.proposed >= self.budget {
            return None;
        }
        while self.queue.is_empty() {
            if self.step < MIN_STEP {
                return None;
            }
            if !self.refine() {
                self.step /= 2.0;
            }
        }
        self.proposed += 1;
        self.queue.pop_front()
    }

    /// Queues the neighbours of the best candidate at the current step; false if none is new.
    fn refine(&mut self) -> bool {
        let Some((best, _)) = self.best() else {
            return false;
        };
        let step = self.step;
        let mut added = false;
        if let [(only, _)] = best.as_slice() {
            let others: Vec<String> = self
                .nearest
                .iter()
                .take(BLEND_OF)
                .filter(|(n, _)| n != only)
                .map(|(n, _)| n.clone())
                .collect();
            for other in others {
                added |= self.enqueue(vec![(only.clone(), 1.0 - step), (other, step)]);
            }
            return added;
        }
        // Move `step` of weight from one term to another, from the lightest to the heaviest
        // first.
        let mut order: Vec<usize> = (0..best.len()).collect();
        order.sort_by(|&a, &b| best[a].1.total_cmp(&best[b].1));
        for &from in &order {
            for &to in order.iter().rev() {
                if from == to || best[from].1 - step < MIN_WEIGHT - 1e-6 {
                    continue;
                }
                let mut terms = best.clone();
                terms[from].1 -= step;
                terms[to].1 += step;
                added |= self.enqueue(terms);
            }
        }
        added
    }

    /// Records the similarity a proposed blend's probe reached.
    pub fn record(&mut self, terms: &[(String, f32)], similarity: f32) {
        self.scored.push((terms.to_vec(), similarity));
    }

    /// Renders proposed so far.
    #[must_use]
    pub fn renders(&self) -> usize {
        self.proposed
    }

    /// Every blend scored, in the order tried.
    #[must_use]
    pub fn scored(&self) -> &[(Terms, f32)] {
        &self.scored
    }

    /// The best candidate so far, stock voices included.
    #[must_use]
    pub fn best(&self) -> Option<(Terms, f32)> {
        let stock = self
            .nearest
            .first()
            .map(|(n, s)| (vec![(n.clone(), 1.0)], *s));
        stock
            .into_iter()
            .chain(self.scored.iter().cloned())
            .filter(|(_, s)| s.is_finite())
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nearest() -> Vec<(String, f32)> {
        vec![
            ("af_sky".into(), 0.70),
            ("af_bella".into(), 0.74),
            ("am_adam".into(), 0.40),
            ("bf_emma".into(), 0.65),
        ]
    }

    /// Runs a search against a made-up similarity landscape.
    fn run(budget: usize, score: impl Fn(&Terms) -> f32) -> BlendSearch {
        let mut s = BlendSearch::new(nearest(), budget);
        while let Some(terms) = s.next_candidate() {
            let total: f32 = terms.iter().map(|(_, w)| w).sum();
            assert!((total - 1.0).abs() < 0.011, "{terms:?} sums to {total}");
            let sim = score(&terms);
            s.record(&terms, sim);
        }
        s
    }

    fn weight(terms: &Terms, name: &str) -> f32 {
        terms.iter().find(|(n, _)| n == name).map_or(0.0, |t| t.1)
    }

    #[test]
    fn stays_within_budget_and_never_repeats() {
        for budget in [0, 1, 3, 5, 12, 40] {
            let s = run(budget, |t| 0.5 + 0.1 * weight(t, "af_bella"));
            assert!(s.renders() <= budget, "{} > {budget}", s.renders());
            let recipes: HashSet<String> = s.scored().iter().map(|(t, _)| recipe(t)).collect();
            assert_eq!(recipes.len(), s.scored().len(), "a blend was tried twice");
        }
        assert_eq!(run(12, |_| 0.5).renders(), 12);
    }

    #[test]
    fn blends_use_only_the_three_nearest() {
        let s = run(12, |_| 0.6);
        for (terms, _) in s.scored() {
            for (n, _) in terms {
                assert!(
                    ["af_bella", "af_sky", "bf_emma"].contains(&n.as_str()),
                    "{n}"
                );
            }
        }
    }

    #[test]
    fn refinement_finds_an_optimum_between_grid_points() {
        // Peak at bella 0.62 / sky 0.38: the coarse grid has 0.5 and 0.7.
        let s = run(12, |t| {
            if weight(t, "bf_emma") > 0.0 {
                return 0.6;
            }
            0.9 - (weight(t, "af_bella") - 0.62).abs()
        });
        let (best, sim) = s.best().expect("a best");
        assert!((weight(&best, "af_bella") - 0.6).abs() < 0.011, "{best:?}");
        assert!(sim > 0.879, "{sim}");
    }

    #[test]
    fn the_best_stock_voice_wins_when_no_blend_beats_it() {
        let s = run(12, |_| 0.5);
        let (best, sim) = s.best().expect("a best");
        assert_eq!(recipe(&best), "af_bella");
        assert!((sim - 0.74).abs() < 1e-6);
    }

    #[test]
    fn one_voice_gives_no_blends() {
        let mut s = BlendSearch::new(vec![("af_bella".into(), 0.8)], 12);
        assert!(s.next_candidate().is_none());
        assert_eq!(recipe(&s.best().expect("stock").0), "af_bella");
    }

    #[test]
    fn recipes_parse_as_voice_specs() {
        let r = recipe(&[("af_sky".into(), 0.3), ("af_bella".into(), 0.7)]);
        assert_eq!(r, "af_bella:0.7+af_sky:0.3");
        let spec = crate::voice::VoiceSpec::parse(&r).expect("parses");
        assert_eq!(spec.terms.len(), 2);
        assert_eq!(recipe(&[("af_sky".into(), 1.0)]), "af_sky");
    }
}
