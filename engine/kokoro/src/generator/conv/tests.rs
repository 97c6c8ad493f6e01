//! The time-major convolutions against candle's own, and the row split's speed.

use super::*;
use candle_core::Device;
use std::time::Instant;

fn ramp(shape: (usize, usize, usize), scale: f32) -> Tensor {
    let n = shape.0 * shape.1 * shape.2;
    let v: Vec<f32> = (0..n)
        .map(|i| ((i as f32 * 0.377).sin() * scale) + (i % 5) as f32 * 0.05)
        .collect();
    Tensor::from_vec(v, shape, &Device::Cpu).expect("shape matches the data length")
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    (a - b)
        .and_then(|d| d.abs())
        .and_then(|d| d.flatten_all())
        .and_then(|d| d.max(0))
        .and_then(|d| d.to_scalar::<f32>())
        .expect("same shapes")
}

#[test]
fn conv_transpose_matches_candle() {
    for &(c_in, c_out, k, s, p, t) in &[
        (6, 4, 20, 10, 5, 7),
        (5, 3, 12, 6, 3, 9),
        (3, 2, 7, 3, 2, 5),
        (22, 1, 20, 5, 0, 11),
        (4, 3, 12, 6, 3, 2 * ROWS_PER_PRODUCT + 5),
    ] {
        let x = ramp((1, c_in, t), 1.0);
        let w = ramp((c_in, c_out, k), 0.5);
        let b = ramp((1, 1, c_out), 0.3).flatten_all().expect("b");
        let want = x
            .conv_transpose1d(&w, p, 0, s, 1, 1)
            .and_then(|y| y.broadcast_add(&b.reshape((1, c_out, 1))?))
            .expect("candle");
        let conv = ConvTranspose1d::from_tensors(&w, Some(&b), s, p).expect("conv");
        let got = conv.forward(&x).expect("ola");
        assert_eq!(got.dims(), want.dims());
        assert!(
            max_abs_diff(&got, &want) < 1e-5,
            "{c_in} {c_out} {k} {s} {p}"
        );
    }
}

thread_local! {
    /// Set by a test to run the GPU's one-product dilated convolution on the CPU.
    pub(crate) static ONE_PRODUCT_ON_CPU: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// How many dilated convolutions took that path on this thread.
    pub(in crate::generator) static ONE_PRODUCT_RUNS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The GPU's arrangement of a dilated convolution (all phases unfolded as one sequence, one
/// product) equals the CPU's phase by phase, and both equal candle's.
#[test]
fn dilated_phases_in_one_product_match_phase_by_phase() {
    for &(c_in, c_out, k, p, d, t) in &[
        (5, 5, 7, 9, 3, 20),
        (6, 2, 11, 25, 5, 40),
        (16, 16, 3, 5, 5, 777),
    ] {
        let x = ramp((1, c_in, t), 1.0);
        let w = ramp((c_out, c_in, k), 0.5);
        let b = ramp((1, 1, c_out), 0.3).flatten_all().expect("b");
        let conv = Conv1d::from_tensors(&w, Some(&b), p, d, 1).expect("conv");
        let phases = conv.forward(&x).expect("phase by phase");
        let runs = ONE_PRODUCT_RUNS.with(std::cell::Cell::get);
        ONE_PRODUCT_ON_CPU.with(|on| on.set(true));
        let one = conv.forward(&x);
        ONE_PRODUCT_ON_CPU.with(|on| on.set(false));
        let one = one.expect("one product");
        assert_eq!(
            ONE_PRODUCT_RUNS.with(std::cell::Cell::get),
            runs + 1,
            "the one-product path ran"
        );
        let want = x
            .conv1d(&w, p, 1, d, 1)
            .and_then(|y| y.broadcast_add(&b.reshape((1, c_out, 1))?))
            .expect("candle");
        assert_eq!(one.dims(), phases.dims());
        assert!(
            max_abs_diff(&one, &phases) < 1e-5,
            "{c_in} {c_out} {k} {p} {d}"
        );
        assert!(
            max_abs_diff(&one, &want) < 1e-4,
            "{c_in} {c_out} {k} {p} {d}"
        );
    }
}

#[test]
fn conv1d_matches_candle() {
    for &(c_in, c_out, k, p, d, s, t) in &[
        (4, 3, 3, 1, 1, 1, 9),
        (5, 5, 7, 9, 3, 1, 20),
        (6, 2, 11, 25, 5, 1, 40),
        (3, 4, 1, 0, 1, 1, 6),
        (2, 3, 5, 0, 2, 1, 12),
        (22, 8, 12, 3, 1, 6, 61),
        (3, 2, 3, 1, 1, 2, 10),
        (3, 2, 11, 25, 5, 1, ROWS_PER_PRODUCT * 5 + 7),
        // Many output channels (wide products).
        (8, 64, 7, 3, 1, 1, 200),
        (5, 64, 11, 25, 5, 1, 1301),
    ] {
        let x = ramp((1, c_in, t), 1.0);
        let w = ramp((c_out, c_in, k), 0.5);
        let b = ramp((1, 1, c_out), 0.3).flatten_all().expect("b");
        let want = x
            .conv1d(&w, p, s, d, 1)
            .and_then(|y| y.broadcast_add(&b.reshape((1, c_out, 1))?))
            .expect("candle");
        let conv = Conv1d::from_tensors(&w, Some(&b), p, d, s).expect("conv");
        let got = conv.forward(&x).expect("unfold");
        assert_eq!(got.dims(), want.dims(), "{c_in} {c_out} {k} {p} {d} {s}");
        let peak = want
            .abs()
            .and_then(|a| a.flatten_all()?.max(0)?.to_scalar::<f32>())
            .expect("peak");
        let err = max_abs_diff(&got, &want) / peak;
        assert!(err < 2e-6, "{c_in} {c_out} {k} {p} {d} {s}: rel {err}");
    }
}

/// Times candle's CPU `conv1d`/`conv_transpose1d` against these, at the generator's sizes.
#[test]
#[ignore = "timing report, run explicitly"]
fn conv_timing() {
    let time = |f: &dyn Fn() -> Tensor| {
        let _ = f();
        let (t0, c0) = (Instant::now(), process_cpu_seconds());
        for _ in 0..5 {
            let _ = f();
        }
        (
            t0.elapsed().as_secs_f64() / 5.0,
            (process_cpu_seconds() - c0) / 5.0,
        )
    };
    for &(c, k, d, t) in &[
        (128usize, 11usize, 5usize, 17_401usize),
        (128, 3, 1, 17_401),
        (256, 7, 3, 2900),
    ] {
        let x = ramp((1, c, t), 1.0);
        let w = ramp((c, c, k), 0.01);
        let p = d * (k - 1) / 2;
        let conv = Conv1d::from_tensors(&w, None, p, d, 1).expect("conv");
        let xt = x.squeeze(0).and_then(|x| x.t()?.contiguous()).expect("tm");
        let g = 2.0 * (c * c * k * t) as f64 / 1e9;
        let (w1, c1) = time(&|| x.conv1d(&w, p, 1, d, 1).expect("candle"));
        let (w2, c2) = time(&|| conv.forward_tm(&xt).expect("tm"));
        eprintln!(
            "conv C {c} K {k} d {d} T {t}: candle {:.1} ms wall / {:.1} ms cpu ({:.0} GFLOP/s per core); \
             time-major {:.1} ms wall / {:.1} ms cpu ({:.0} GFLOP/s per core)",
            w1 * 1e3, c1 * 1e3, g / c1, w2 * 1e3, c2 * 1e3, g / c2
        );
    }
    for &(c_in, c_out, k, s, p, t) in &[(512, 256, 20, 10, 5, 290), (256, 128, 12, 6, 3, 2900)] {
        let x = ramp((1, c_in, t), 1.0);
        let w = ramp((c_in, c_out, k), 0.01);
        let conv = ConvTranspose1d::from_tensors(&w, None, s, p).expect("conv");
        let xt = x.squeeze(0).and_then(|x| x.t()?.contiguous()).expect("tm");
        let (w1, c1) = time(&|| x.conv_transpose1d(&w, p, 0, s, 1, 1).expect("candle"));
        let (w2, c2) = time(&|| conv.forward_tm(&xt).expect("tm"));
        eprintln!(
            "conv_transpose {c_in}→{c_out} K {k} s {s} T {t}: candle {:.1} ms wall / {:.1} ms cpu; \
             time-major {:.1} ms wall / {:.1} ms cpu",
            w1 * 1e3, c1 * 1e3, w2 * 1e3, c2 * 1e3
        );
    }
}
