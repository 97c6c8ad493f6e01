//! The style space the tuner searches: the principal axes along which Kokoro's stock packs
//! differ from one another.
//!
//! A pack has 510 × 256 numbers, far too many to search with a few hundred renders, and most
//! directions in that space lead nowhere Kokoro was trained to go (noise, then gibberish). The
//! stock packs show where voices live: their differences span a few dozen directions, each a
//! whole 510-row table, so a move along one changes every length's row the way real voices
//! differ. The tuner moves the best blend along these axes, in units of the stock voices'
//! own spread, and never further from the stock voices' centre than the furthest stock voice
//! (times [`RADIUS_MARGIN`]): the region where Kokoro is known to speak intelligibly.
//!
//! The axes come from a principal component analysis of the stock packs: the n × n Gram matrix
//! of the centred packs (n ≈ 54) is diagonalised by Jacobi rotations, which is exact, small
//! and dependency-free, and each eigenvector maps back to a full-width axis.

use crate::voice::{VoiceTable, STYLE_DIM, STYLE_ROWS};

/// How far beyond the furthest stock voice (in spread units from the centre) a pack may go.
pub const RADIUS_MARGIN: f32 = 1.1;
/// Axes carrying less than this share of the stock voices' variance are left out: they are
/// noise between a few voices, not a direction voices differ along.
const MIN_VARIANCE_SHARE: f64 = 0.002;

const WIDTH: usize = STYLE_ROWS * STYLE_DIM;

/// The stock voices' principal axes (see the module docs).
#[derive(Debug, Clone)]
pub struct StyleSpace {
    mean: Vec<f32>,
    /// Unit-length axes, each [`WIDTH`] long, largest variance first.
    axes: Vec<Vec<f32>>,
    /// The stock voices' standard deviation along each axis.
    spread: Vec<f32>,
    /// The largest distance of a stock voice from the centre, in spread units.
    stock_radius: f32,
}

impl StyleSpace {
    /// The axes of `tables` (at least three), at most `max_axes` of them; `None` when the
    /// tables do not differ.
    #[must_use]
    pub fn from_tables(tables: &[&VoiceTable], max_axes: usize) -> Option<Self> {
        let n = tables.len();
        if n < 3 || max_axes == 0 {
            return None;
        }
        let mut mean = vec![0.0f64; WIDTH];
        for t in tables {
            for (m, v) in mean.iter_mut().zip(t.values()) {
                *m += f64::from(*v);
            }
        }
        let inv = 1.0 / n as f64;
        for m in &mut mean {
            *m *= inv;
        }
        let centred: Vec<Vec<f32>> = tables
            .iter()
            .map(|t| {
                t.values()
                    .iter()
                    .zip(&mean)
                    .map(|(v, m)| (f64::from(*v) - m) as f32)
                    .collect()
            })
            .collect();
        let mut gram = vec![0.0f64; n * n];
        for i in 0..n {
            for j in i..n {
                let g = dot(&centred[i], &centred[j]);
                gram[i * n + j] = g;
                gram[j * n + i] = g;
            }
        }
        let (values, vectors) = jacobi_eigen(&mut gram, n);
        let total: f64 = values.iter().filter(|v| **v > 0.0).sum();
        if total <= 0.0 {
            return None;
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|a, b| values[*b].total_cmp(&values[*a]));
        let mut axes = Vec::new();
        let mut spread = Vec::new();
        for &k in order.iter().take(max_axes) {
            let lambda = values[k];
            if lambda / total < MIN_VARIANCE_SHARE {
                break;
            }
            // axis = Xᵀ v / √λ is unit length because ‖Xᵀ v‖² = vᵀ X Xᵀ v = λ.
            let scale = 1.0 / lambda.sqrt();
            let mut axis = vec![0.0f64; WIDTH];
            for (i, row) in centred.iter().enumerate() {
                let w = vectors[i * n + k] * scale;
                for (a, x) in axis.iter_mut().zip(row) {
                    *a += w * f64::from(*x);
                }
            }
            axes.push(axis.into_iter().map(|a| a as f32).collect());
            spread.push((lambda / (n - 1) as f64).sqrt() as f32);
        }
        let mut space = Self {
            mean: mean.into_iter().map(|m| m as f32).collect(),
            axes,
            spread,
            stock_radius: 0.0,
        };
        space.stock_radius = tables
            .iter()
            .map(|t| norm(&space.coords(t)))
            .fold(0.0, f32::max);
        Some(space)
    }

    /// How many axes the space has.
    #[must_use]
    pub fn dims(&self) -> usize {
        self.axes.len()
    }

    /// The furthest a pack may be from the stock centre, in spread units.
    #[must_use]
    pub fn radius(&self) -> f32 {
        self.stock_radius * RADIUS_MARGIN
    }

    /// Where `table` lies along each axis, in spread units from the stock centre.
    #[must_use]
    pub fn coords(&self, table: &VoiceTable) -> Vec<f32> {
        let centred: Vec<f32> = table
            .values()
            .iter()
            .zip(&self.mean)
            .map(|(v, m)| v - m)
            .collect();
        self.axes
            .iter()
            .zip(&self.spread)
            .map(|(axis, s)| (dot(axis, &centred) / f64::from(*s)) as f32)
            .collect()
    }

    /// `base` moved by `delta` (spread units along each axis); what lies outside the axes'
    /// span (the base's own detail) is kept.
    #[must_use]
    pub fn moved(&self, base: &VoiceTable, delta: &[f32]) -> VoiceTable {
        let mut values = base.values().to_vec();
        for ((axis, s), d) in self.axes.iter().zip(&self.spread).zip(delta) {
            let w = d * s;
            if w != 0.0 {
                for (v, a) in values.iter_mut().zip(axis) {
                    *v += w * a;
                }
            }
        }
        VoiceTable::from_values(values).unwrap_or_else(|_| base.clone())
    }
}

/// The Euclidean norm.
#[must_use]
pub fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    // Blocks of f32 products summed in f64: exact enough for 130 560 terms, and fast.
    a.chunks(256)
        .zip(b.chunks(256))
        .map(|(x, y)| f64::from(x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>()))
        .sum()
}

/// Eigenvalues and eigenvectors (column k of the returned n × n matrix, row-major) of the
/// symmetric matrix `a` by cyclic Jacobi rotations; `a` is destroyed.
fn jacobi_eigen(a: &mut [f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut v = vec![0.0f64; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |j| *j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j] * a[i * n + j])
            .sum();
        let diag: f64 = (0..n).map(|i| a[i * n + i] * a[i * n + i]).sum();
        if off <= 1e-22 * diag.max(f64::MIN_POSITIVE) {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let akp = a[k * n + p];
                    let akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let apk = a[p * n + k];
                    let aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for k in 0..n {
                    let vkp = v[k * n + p];
                    let vkq = v[k * n + q];
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..n).map(|i| a[i * n + i]).collect(), v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(f: impl Fn(usize) -> f32) -> VoiceTable {
        VoiceTable::from_values((0..WIDTH).map(f).collect()).expect("finite")
    }

    #[test]
    fn jacobi_recovers_a_known_spectrum() {
        // [[2,1],[1,2]] has eigenvalues 1 and 3.
        let mut a = vec![2.0, 1.0, 1.0, 2.0];
        let (mut values, _) = jacobi_eigen(&mut a, 2);
        values.sort_by(f64::total_cmp);
        assert!((values[0] - 1.0).abs() < 1e-9 && (values[1] - 3.0).abs() < 1e-9);
    }

    #[test]
    fn axes_span_how_the_tables_differ_and_moves_follow_them() {
        // Four tables differing along two whole-table patterns.
        let p1 = |i: usize| ((i % 7) as f32 - 3.0) * 0.01;
        let p2 = |i: usize| if i.is_multiple_of(2) { 0.02 } else { -0.02 };
        let weights = [(1.0, 0.0), (-1.0, 0.5), (0.5, -1.0), (-0.5, 0.5)];
        let tables: Vec<VoiceTable> = weights
            .iter()
            .map(|(a, b)| table(|i| 0.1 + a * p1(i) + b * p2(i)))
            .collect();
        let refs: Vec<&VoiceTable> = tables.iter().collect();
        let space = StyleSpace::from_tables(&refs, 8).expect("tables differ");
        assert_eq!(space.dims(), 2, "two patterns, two axes");
        // Moving a stock table to another's coordinates reproduces the other table.
        let from = space.coords(&tables[0]);
        let to = space.coords(&tables[1]);
        let delta: Vec<f32> = to.iter().zip(&from).map(|(t, f)| t - f).collect();
        let moved = space.moved(&tables[0], &delta);
        let err = moved
            .values()
            .iter()
            .zip(tables[1].values())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(err < 1e-4, "max error {err}");
        assert!(space.radius() >= norm(&from));
    }

    #[test]
    fn identical_tables_have_no_space() {
        let t = table(|_| 0.5);
        assert!(StyleSpace::from_tables(&[&t, &t, &t], 4).is_none());
    }
}
