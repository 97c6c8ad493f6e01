//! `transforms.py`: the inverse of the monotonic rational-quadratic spline with linear tails,
//! which the duration predictor's flows undo when they sample durations.
//!
//! Why scalar code: the spline runs on one value per phoneme (a few hundred per sentence), with
//! a bin search per value; a plain loop over `f32`s is both clearer and faster than tensor ops.
//! Constants and formulas are the reference's (`min_bin_width = min_bin_height =
//! min_derivative = 1e-3`, the search's `eps = 1e-6`).

const MIN_BIN_WIDTH: f32 = 1e-3;
const MIN_BIN_HEIGHT: f32 = 1e-3;
const MIN_DERIVATIVE: f32 = 1e-3;

/// The inverse spline of one value: `x` on the output axis back to the input axis.
///
/// `widths` and `heights` are the unnormalised bin sizes (`bins` each), `derivatives` the
/// unnormalised inner knot slopes (`bins - 1`); the outer knots get the slope that makes the
/// spline join its linear tails. Outside `[-tail_bound, tail_bound]` the value passes unchanged.
#[must_use]
pub fn inverse(
    x: f32,
    widths: &[f32],
    heights: &[f32],
    derivatives: &[f32],
    tail_bound: f32,
) -> f32 {
    if !(-tail_bound..=tail_bound).contains(&x) {
        return x;
    }
    let bins = widths.len();
    debug_assert_eq!(heights.len(), bins);
    debug_assert_eq!(derivatives.len() + 1, bins);
    let cumwidths = knots(widths, MIN_BIN_WIDTH, tail_bound);
    let cumheights = knots(heights, MIN_BIN_HEIGHT, tail_bound);
    // ln(e^(1 - min) - 1): softplus of it plus `min` is exactly 1, the tails' slope.
    let edge = ((1.0 - MIN_DERIVATIVE).exp() - 1.0).ln();
    let slope = |u: f32| MIN_DERIVATIVE + softplus(u);
    let derivative = |k: usize| -> f32 {
        if k == 0 || k == bins {
            slope(edge)
        } else {
            slope(derivatives[k - 1])
        }
    };
    // searchsorted over the heights with the last knot nudged up by eps
    let mut bin = 0usize;
    for (k, &h) in cumheights.iter().enumerate() {
        let h = if k == bins { h + 1e-6 } else { h };
        if x >= h {
            bin = k;
        }
    }
    let bin = bin.min(bins - 1);
    let in_cumw = cumwidths[bin];
    let in_w = cumwidths[bin + 1] - cumwidths[bin];
    let in_cumh = cumheights[bin];
    let in_h = cumheights[bin + 1] - cumheights[bin];
    let delta = in_h / in_w;
    let d0 = derivative(bin);
    let d1 = derivative(bin + 1);
    let dy = x - in_cumh;
    let a = dy * (d0 + d1 - 2.0 * delta) + in_h * (delta - d0);
    let b = in_h * d0 - dy * (d0 + d1 - 2.0 * delta);
    let c = -delta * dy;
    let discriminant = (b * b - 4.0 * a * c).max(0.0);
    let root = (2.0 * c) / (-b - discriminant.sqrt());
    root * in_w + in_cumw
}

/// The `bins + 1` knot positions on `[-bound, bound]` from unnormalised sizes.
fn knots(sizes: &[f32], min: f32, bound: f32) -> Vec<f32> {
    let bins = sizes.len();
    let max = sizes.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exps: Vec<f32> = sizes.iter().map(|&s| (s - max).exp()).collect();
    let sum: f32 = exps.iter().sum();
    let mut out = Vec::with_capacity(bins + 1);
    out.push(0.0f32);
    let mut acc = 0.0f32;
    for e in &exps {
        acc += min + (1.0 - min * bins as f32) * (e / sum);
        out.push(acc);
    }
    for v in &mut out {
        *v = 2.0 * bound * *v - bound;
    }
    out[0] = -bound;
    out[bins] = bound;
    out
}

/// `softplus` as torch computes it (linear above 20).
fn softplus(x: f32) -> f32 {
    if x > 20.0 {
        x
    } else {
        x.exp().ln_1p()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forward spline, written from the same formulas, to check the inverse undoes it.
    fn forward(x: f32, w: &[f32], h: &[f32], d: &[f32], bound: f32) -> f32 {
        let cw = knots(w, MIN_BIN_WIDTH, bound);
        let ch = knots(h, MIN_BIN_HEIGHT, bound);
        let bins = w.len();
        let edge = ((1.0 - MIN_DERIVATIVE).exp() - 1.0).ln();
        let der =
            |k: usize| MIN_DERIVATIVE + softplus(if k == 0 || k == bins { edge } else { d[k - 1] });
        let bin = (0..bins).rev().find(|&k| x >= cw[k]).unwrap_or(0);
        let (wk, hk) = (cw[bin + 1] - cw[bin], ch[bin + 1] - ch[bin]);
        let s = hk / wk;
        let theta = (x - cw[bin]) / wk;
        let t1 = theta * (1.0 - theta);
        let num = hk * (s * theta * theta + der(bin) * t1);
        let den = s + (der(bin) + der(bin + 1) - 2.0 * s) * t1;
        ch[bin] + num / den
    }

    #[test]
    fn the_inverse_undoes_the_forward_spline_and_tails_pass_through() {
        let w = [0.3, -1.0, 2.0, 0.0, 0.5, 1.5, -0.2, 0.1, 0.9, -2.0];
        let h = [1.0, 0.2, -0.5, 0.7, 0.0, -1.2, 2.2, 0.3, -0.1, 0.4];
        let d = [0.5, -0.3, 1.0, 0.0, 2.0, -1.0, 0.2, 0.8, -0.6];
        for i in 0..=100 {
            let x = -4.99 + 9.98 * i as f32 / 100.0;
            let y = forward(x, &w, &h, &d, 5.0);
            let back = inverse(y, &w, &h, &d, 5.0);
            assert!((back - x).abs() < 1e-3, "x {x} -> {y} -> {back}");
        }
        assert!((inverse(7.5, &w, &h, &d, 5.0) - 7.5).abs() < f32::EPSILON);
        assert!((inverse(-5.5, &w, &h, &d, 5.0) + 5.5).abs() < f32::EPSILON);
    }
}
