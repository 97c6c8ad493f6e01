//! Random weights for the unit tests' small models, the same on every run.
//!
//! Why not `Tensor::randn`: candle's CPU generator cannot be seeded, so every run drew other
//! weights, and now and then a draw made the generator's magnitudes overflow the inverse
//! STFT's exponential: NaN in the window decoded alone and in the batch alike, and a test that
//! failed about once in thirty runs for no fault of the code under test.

use candle_core::Tensor;
use candle_nn::VarMap;

/// Sets every variable of `varmap` to normal values of deviation `std`, drawn in the order
/// of the variables' names from a generator started at `seed`.
pub(crate) fn fill_normal(varmap: &VarMap, std: f32, seed: u64) {
    let data = varmap.data().lock().expect("the test's own varmap");
    let mut names: Vec<&String> = data.keys().collect();
    names.sort();
    let mut state = seed | 1;
    // xorshift64*: uniform in (0, 1].
    let mut uniform = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        ((state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    };
    for name in names {
        let var = &data[name];
        let n = var.elem_count();
        let values: Vec<f32> = (0..n)
            .map(|_| {
                // Box–Muller.
                let (u, v) = (uniform(), uniform());
                let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
                (z * f64::from(std)) as f32
            })
            .collect();
        let t = Tensor::from_vec(values, var.shape(), var.device()).expect("values");
        var.set(&t).expect("set");
    }
}
