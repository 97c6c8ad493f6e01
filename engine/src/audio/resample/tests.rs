//! Resampler tests: exact length, no delay, flat passband, no images or aliases.

use super::*;
use std::f64::consts::PI;

fn run(from: u32, to: u32, input: &[f32], chunk: usize) -> Vec<f32> {
    let mut r = Resampler::new(from, to).unwrap();
    let mut out = Vec::new();
    for c in input.chunks(chunk.max(1)) {
        r.process(c, &mut out).unwrap();
    }
    r.flush(&mut out).unwrap();
    out
}

fn tone(freq: f64, amp: f64, rate: u32, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (amp * (2.0 * PI * freq * i as f64 / f64::from(rate)).sin()) as f32)
        .collect()
}

/// Amplitude of `freq` in `x` (Hann-windowed single-bin DFT, scaled so a sine of amplitude A
/// reads A).
fn amplitude_at(x: &[f32], freq: f64, rate: u32) -> f64 {
    let n = x.len() as f64;
    let (mut re, mut im, mut wsum) = (0.0, 0.0, 0.0);
    for (i, &v) in x.iter().enumerate() {
        let w = 0.5 - 0.5 * (2.0 * PI * i as f64 / n).cos();
        let ph = 2.0 * PI * freq * i as f64 / f64::from(rate);
        re += w * f64::from(v) * ph.cos();
        im += w * f64::from(v) * ph.sin();
        wsum += w;
    }
    2.0 * (re * re + im * im).sqrt() / wsum
}

fn db(x: f64) -> f64 {
    20.0 * x.log10()
}

#[test]
fn length_is_exact_for_any_chunking() {
    let pairs = [
        (24_000, 44_100),
        (24_000, 48_000),
        (24_000, 16_000),
        (16_000, 24_000),
        (44_100, 24_000),
        (48_000, 44_100),
    ];
    for (from, to) in pairs {
        for n in [0usize, 1, 7, 1000, 12_345, 48_001] {
            let input = tone(440.0, 0.5, from, n);
            let expect =
                ((n as u64 * u64::from(to) * 2 + u64::from(from)) / (2 * u64::from(from))) as usize;
            let a = run(from, to, &input, 4096);
            let b = run(from, to, &input, 333);
            assert_eq!(a.len(), expect, "{from}->{to}, n={n}");
            assert_eq!(b.len(), expect, "{from}->{to}, n={n}, small chunks");
            let diff = a
                .iter()
                .zip(&b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f32::max);
            assert!(diff < 1e-5, "chunking changed the output by {diff}");
        }
    }
}

#[test]
fn reusable_after_flush() {
    let input = tone(1000.0, 0.5, 24_000, 5000);
    let mut r = Resampler::new(24_000, 48_000).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    r.process(&input, &mut a).unwrap();
    r.flush(&mut a).unwrap();
    r.process(&input, &mut b).unwrap();
    r.flush(&mut b).unwrap();
    assert_eq!(a, b);
}

/// A Hann-windowed chirp from 200 Hz to `f1`, evaluated exactly at `rate`, so the ideal
/// resampled signal is known.
fn chirp(rate: u32, secs: f64, f1: f64) -> Vec<f32> {
    let n = (secs * f64::from(rate)).round() as usize;
    let f0 = 200.0;
    (0..n)
        .map(|i| {
            let t = i as f64 / f64::from(rate);
            let env = if t < 0.05 || t > secs - 0.05 {
                0.0
            } else {
                let u = (t - 0.05) / (secs - 0.1);
                0.5 - 0.5 * (2.0 * PI * u).cos()
            };
            let phase = 2.0 * PI * (f0 * t + (f1 - f0) * t * t / (2.0 * secs));
            (0.8 * env * phase.sin()) as f32
        })
        .collect()
}

#[test]
fn no_delay_chirp_matches_the_ideal_signal() {
    for (from, to) in [
        (24_000, 48_000),
        (24_000, 44_100),
        (44_100, 24_000),
        (24_000, 16_000),
    ] {
        let secs = 0.5;
        // up to 0.9 of the lower Nyquist: all of it in the passband
        let f1 = 0.45 * f64::from(from.min(to));
        let input = chirp(from, secs, f1);
        let out = run(from, to, &input, 1000);
        let ideal = chirp(to, secs, f1);
        // cross-correlation over lags -5..=5: the peak must be at 0
        let xc = |lag: i64| -> f64 {
            (0..out.len() as i64)
                .filter_map(|i| {
                    let j = i + lag;
                    (j >= 0 && (j as usize) < ideal.len())
                        .then(|| f64::from(out[i as usize]) * f64::from(ideal[j as usize]))
                })
                .sum()
        };
        let best = (-5..=5).max_by(|&a, &b| xc(a).total_cmp(&xc(b))).unwrap();
        assert_eq!(best, 0, "{from}->{to}: correlation peak at lag {best}");
        {
            // the whole chirp is in the passband: the output is the ideal signal
            let err = out
                .iter()
                .zip(&ideal)
                .map(|(a, b)| f64::from((a - b).abs()))
                .fold(0.0, f64::max);
            assert!(err < 2e-3, "{from}->{to}: max error {err}");
        }
    }
}

#[test]
fn sine_amplitude_is_preserved() {
    for (from, to, freq) in [
        (24_000, 44_100, 1000.0),
        (24_000, 48_000, 1000.0),
        (24_000, 48_000, 10_800.0), // 0.9 of the input Nyquist
        (24_000, 16_000, 1000.0),
        (48_000, 24_000, 10_800.0),
    ] {
        let input = tone(freq, 0.5, from, from as usize);
        let out = run(from, to, &input, 2048);
        let mid = &out[out.len() / 4..out.len() * 3 / 4];
        let a = amplitude_at(mid, freq, to);
        assert!(
            db(a / 0.5).abs() < 0.1,
            "{from}->{to} {freq} Hz: {:.3} dB",
            db(a / 0.5)
        );
    }
}

#[test]
fn upsampling_11_khz_leaves_no_image() {
    let input = tone(11_000.0, 0.5, 24_000, 24_000);
    let out = run(24_000, 48_000, &input, 1024);
    let mid = &out[out.len() / 4..out.len() * 3 / 4];
    let tone_amp = amplitude_at(mid, 11_000.0, 48_000);
    let image = amplitude_at(mid, 13_000.0, 48_000);
    assert!(
        db(tone_amp / 0.5).abs() < 0.1,
        "11 kHz at {:.3} dB",
        db(tone_amp / 0.5)
    );
    assert!(
        db(image / tone_amp) < -90.0,
        "13 kHz image at {:.1} dB",
        db(image / tone_amp)
    );
}

#[test]
fn downsampling_removes_what_would_alias() {
    // 14 kHz at 48 kHz would fold to 10 kHz at 24 kHz
    let input = tone(14_000.0, 0.5, 48_000, 48_000);
    let out = run(48_000, 24_000, &input, 1024);
    let mid = &out[out.len() / 4..out.len() * 3 / 4];
    let alias = amplitude_at(mid, 10_000.0, 24_000);
    assert!(
        db(alias / 0.5) < -90.0,
        "alias at {:.1} dB",
        db(alias / 0.5)
    );
}

#[test]
fn rejects_zero_rates() {
    assert!(Resampler::new(0, 48_000).is_err());
    assert!(Resampler::new(24_000, 0).is_err());
}
