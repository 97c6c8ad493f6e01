//! Limiter tests: the ceiling holds by ebur128's own true-peak meter, quiet audio passes
//! untouched, lengths and alignment are kept, and the gain recovers after a peak.

use super::*;
use crate::audio::LoudnessMeter;

fn limit(rate: u32, ceiling: f64, input: &[f32], chunk: usize) -> Vec<f32> {
    let mut l = TruePeakLimiter::new(rate, ceiling);
    let mut out = Vec::new();
    for c in input.chunks(chunk) {
        l.process(c, &mut out);
    }
    l.flush(&mut out);
    out
}

fn true_peak(rate: u32, x: &[f32]) -> f64 {
    let mut m = LoudnessMeter::new(rate).unwrap();
    m.add(x).unwrap();
    m.true_peak_dbtp()
}

/// Deterministic noise in [-1, 1] (xorshift).
fn noise(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// Scales `x` so its true peak is `db` dBTP.
fn at_true_peak(rate: u32, x: &[f32], db: f64) -> Vec<f32> {
    let g = 10f64.powf((db - true_peak(rate, x)) / 20.0) as f32;
    x.iter().map(|v| v * g).collect()
}

fn hot_signals(rate: u32) -> Vec<(&'static str, Vec<f32>)> {
    let n = rate as usize; // one second
    let r = f64::from(rate);
    let sine = |f: f64, phase: f64| -> Vec<f32> {
        (0..n)
            .map(|i| (2.0 * std::f64::consts::PI * f * i as f64 / r + phase).sin() as f32)
            .collect()
    };
    // a quarter-rate sine sampled 45° off its peaks: true peak 3 dB over the sample peak
    let quarter = sine(r / 4.0, std::f64::consts::FRAC_PI_4);
    let low = sine(997.0, 0.0);
    let mut harmonics = vec![0.0f32; n];
    for k in 1..12 {
        let h = sine(180.0 * k as f64, 0.3 * k as f64);
        for (a, b) in harmonics.iter_mut().zip(h) {
            *a += b / k as f32;
        }
    }
    // bursts of noise with silence between, like speech
    let mut bursts = noise(n, 7);
    for (i, v) in bursts.iter_mut().enumerate() {
        if (i / (n / 10)) % 2 == 1 {
            *v *= 0.01;
        }
    }
    vec![
        ("quarter-rate sine", quarter),
        ("997 Hz sine", low),
        ("harmonic stack", harmonics),
        ("noise bursts", bursts),
    ]
}

#[test]
fn hot_signals_stay_under_the_ceiling() {
    for rate in [24_000, 48_000] {
        for ceiling in [-1.0, -2.0] {
            for (name, x) in hot_signals(rate) {
                let hot = at_true_peak(rate, &x, ceiling + 6.0);
                let out = limit(rate, ceiling, &hot, 1000);
                assert_eq!(out.len(), hot.len(), "{name}");
                let tp = true_peak(rate, &out);
                assert!(
                    tp <= ceiling,
                    "{name} at {rate} Hz: {tp:.3} dBTP over a {ceiling} ceiling"
                );
                // not crushed either: the loudest part ends near the ceiling
                assert!(tp > ceiling - 1.0, "{name}: {tp:.3} dBTP, limited too hard");
            }
        }
    }
}

#[test]
fn quiet_signal_is_bit_identical() {
    let rate = 24_000;
    for (name, x) in hot_signals(rate) {
        let quiet = at_true_peak(rate, &x, -1.5);
        let out = limit(rate, -1.0, &quiet, 777);
        assert_eq!(out, quiet, "{name} was altered");
    }
}

#[test]
fn length_and_alignment_are_kept() {
    let rate = 48_000;
    let l = TruePeakLimiter::new(rate, -1.0);
    assert!(l.latency() > 0);
    for n in [0usize, 1, 5, l.latency(), 10_000] {
        let x = at_true_peak(rate, &noise(n.max(1), 3), 3.0);
        let x = &x[..n];
        for chunk in [1, 64, 4096] {
            let out = limit(rate, -1.0, x, chunk);
            assert_eq!(out.len(), n, "n={n} chunk={chunk}");
            // output k is input k times a gain in (0, 1]
            for (k, (a, b)) in x.iter().zip(&out).enumerate() {
                if a.abs() > 1e-3 {
                    let g = b / a;
                    assert!(g > 0.0 && g <= 1.0, "n={n} chunk={chunk} k={k}: gain {g}");
                }
            }
        }
    }
}

#[test]
fn gain_recovers_after_a_click() {
    let rate = 24_000;
    let mut x: Vec<f32> = (0..rate as usize)
        .map(|i| 0.25 * (i as f32 * 0.05).sin())
        .collect();
    x[2400] = 1.0; // a full-scale click at 100 ms
    let out = limit(rate, -1.0, &x, 512);
    assert!(out[2400] < 0.9, "the click was not limited: {}", out[2400]);
    // ~1.5 ms before the click the gain is still 1; 5 release time constants later it is back
    assert!((out[2300] - x[2300]).abs() < 1e-6);
    let later = 2400 + 5 * 60 * rate as usize / 1000;
    for k in later..later + 100 {
        assert!((out[k] - x[k]).abs() <= 0.01 * x[k].abs() + 1e-6, "k={k}");
    }
}

/// The limiter's peak estimate is the meter's: same BS.1770 Annex 2 interpolator.
#[test]
fn peak_estimate_agrees_with_the_meter() {
    for rate in [24_000u32, 48_000] {
        for (name, x) in hot_signals(rate) {
            let mut lim = TruePeakLimiter::new(rate, 0.0);
            let mut est: f64 = 0.0;
            for &v in &x {
                lim.hist.pop_front();
                lim.hist.push_back(v);
                est = est.max(lim.interval_peak());
            }
            let (meter, ours) = (true_peak(rate, &x), 20.0 * est.log10());
            assert!(
                (meter - ours).abs() < 0.001,
                "{rate} {name}: meter {meter} ours {ours}"
            );
        }
    }
}
