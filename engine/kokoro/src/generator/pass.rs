//! One generator pass over a window, run a piece at a time.
//!
//! Why: the scheduler serves many listeners with one model, one step at a time, and a step
//! cannot be interrupted. A 2 s window is ~0.4 s of generator on a 2-core CPU, so a new
//! request arriving just after such a step began waited that long before its own encoder could
//! run. A pass splits at its natural joints — each stage's input (upsampling and the noise
//! branch), each residual block, and the output (`conv_post` and the inverse STFT) — so a step
//! is about a fifth of a window, and the numbers are exactly those of [`Generator::body_tm`]
//! (the same functions, in the same order).
//!
//! [`Generator::piece_weights`] says what share of a pass each piece costs (from its
//! convolutions' multiply-adds per decoder frame), so the scheduler can estimate a step's cost
//! and the cost still ahead of a window's audio.

use candle_core::{Result, Tensor};

use super::{ConvTranspose1d, Generator};

/// Decoder frames to generator steps: stage `i` runs at `∏ upsample_rates[..=i]` steps per
/// frame. Applies to frame-rate costs only; the exact lengths come from the convolutions.
fn steps_per_frame(rates: &[usize], stage: usize) -> usize {
    rates[..=stage].iter().product()
}

/// Where a pass stands: the next piece to run and what the finished ones left.
#[derive(Debug)]
pub struct GeneratorPass {
    /// Time-major activation entering the current stage (`[T, C]`) until the stage's input
    /// is built from it, then the stage output.
    x: Option<Tensor>,
    /// Time-major source spectrum of the window (`[120F+1, 22]`).
    har: Tensor,
    /// The current stage's input after upsampling and the noise branch.
    input: Option<Tensor>,
    /// The running sum of the current stage's residual blocks.
    sum: Option<Tensor>,
    /// Index of the next piece ([`Generator::pieces`]).
    next: usize,
}

impl GeneratorPass {
    /// Index of the next piece to run (equal to [`Generator::pieces`] when finished).
    #[must_use]
    pub fn next_piece(&self) -> usize {
        self.next
    }

    /// What the pass holds after its last piece (the stage activation, the stage input and
    /// the running sum of its blocks, where present): for `kokoro::parity`'s trace.
    pub(crate) fn held(&self) -> Vec<&Tensor> {
        [self.x.as_ref(), self.input.as_ref(), self.sum.as_ref()]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// What piece `p` of a pass is.
pub(super) enum Piece {
    StageInput(usize),
    Block(usize, usize),
    Output,
}

impl Generator {
    /// Pieces in one pass: per stage its input and each residual block, then the output.
    #[must_use]
    pub fn pieces(&self) -> usize {
        self.stages() * (1 + self.blocks_per_stage()) + 1
    }

    pub(super) fn piece(&self, p: usize) -> Piece {
        let per_stage = 1 + self.blocks_per_stage();
        let (stage, k) = (p / per_stage, p % per_stage);
        if stage >= self.stages() {
            Piece::Output
        } else if k == 0 {
            Piece::StageInput(stage)
        } else {
            Piece::Block(stage, k - 1)
        }
    }

    /// Each piece's share of a pass's work (they sum to 1), from the multiply-adds per decoder
    /// frame of its convolutions. The element-wise work (norms, Snake, the inverse STFT) is a
    /// small fraction and left out, except that the output piece gets a floor.
    #[must_use]
    pub fn piece_weights(&self) -> &[f64] {
        &self.weights
    }

    /// [`Self::piece_weights`], from the layers (once, when the generator is built).
    pub(super) fn compute_piece_weights(&self) -> Vec<f64> {
        let rates: Vec<usize> = self.ups.iter().map(ConvTranspose1d::stride).collect();
        let spf = |i: usize| steps_per_frame(&rates, i) as f64;
        let mut w: Vec<f64> = (0..self.pieces())
            .map(|p| match self.piece(p) {
                Piece::StageInput(i) => {
                    let noise =
                        self.noise_convs[i].macs_per_step() + self.noise_res[i].macs_per_step();
                    (noise + self.ups[i].macs_per_step()) as f64 * spf(i)
                }
                Piece::Block(i, j) => self.resblocks[i][j].macs_per_step() as f64 * spf(i),
                Piece::Output => {
                    self.conv_post.macs_per_step() as f64 * spf(self.stages().saturating_sub(1))
                }
            })
            .collect();
        let total: f64 = w.iter().sum();
        let floor = total * 0.02;
        for x in &mut w {
            *x = x.max(floor);
        }
        let total: f64 = w.iter().sum();
        w.iter().map(|x| x / total).collect()
    }

    /// Starts a pass: time-major decoder output `[2F, 512]` and source spectrum `[120F+1, 22]`.
    #[must_use]
    pub fn begin_pass(&self, x: Tensor, har: Tensor) -> GeneratorPass {
        GeneratorPass {
            x: Some(x),
            har,
            input: None,
            sum: None,
            next: 0,
        }
    }

    /// Runs the next piece of `pass` with acoustic style `s` `[1, 128]`; returns the window's
    /// audio `[1, 600F]` after the last piece, `None` before it.
    pub fn advance(&self, pass: &mut GeneratorPass, s: &Tensor) -> Result<Option<Tensor>> {
        let p = pass.next;
        let out = match self.piece(p) {
            Piece::StageInput(i) => {
                // The previous stage's output is not needed past this point.
                let Some(x) = pass.x.take() else {
                    candle_core::bail!("generator pass: stage {i} without its input");
                };
                pass.input = Some(self.stage_input_tm(i, &x, &pass.har, s)?);
                None
            }
            Piece::Block(i, j) => {
                let Some(input) = &pass.input else {
                    candle_core::bail!("generator pass: block {j} of stage {i} before its input");
                };
                pass.sum = Some(self.stage_block_tm(i, j, input, pass.sum.take(), s)?);
                if j + 1 == self.blocks_per_stage() {
                    pass.input = None;
                    pass.x = Some(self.stage_output(pass.sum.take())?);
                }
                None
            }
            Piece::Output => {
                // The output piece takes the last stage's output, so a finished pass has none.
                let Some(x) = pass.x.take() else {
                    candle_core::bail!("generator pass: already finished");
                };
                Some(self.istft_tm(&self.post_tm(&x)?)?)
            }
        };
        pass.next = p + 1;
        Ok(out)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::{Generator, GeneratorConfig};
    use candle_core::{DType, Device, Tensor};
    use candle_nn::{VarBuilder, VarMap};

    /// A narrow generator with random weights (built once to create the variables, then again
    /// after filling them: construction copies weights into its own layouts).
    pub(in crate::generator) fn small_generator() -> Generator {
        let mut cfg = GeneratorConfig::default();
        cfg.istft.upsample_initial_channel = 32;
        let dev = Device::Cpu;
        let varmap = VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, &dev);
        Generator::new(&cfg, vb.clone()).expect("generator");
        crate::test_weights::fill_normal(&varmap, 0.2, 41);
        Generator::new(&cfg, vb).expect("generator")
    }

    #[test]
    fn weights_sum_to_one_and_follow_the_work() {
        let g = small_generator();
        let w = g.piece_weights();
        assert_eq!(w.len(), g.pieces());
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(w.iter().all(|&x| x > 0.0));
        // Stage 1 runs at six times stage 0's rate on half the channels: its blocks cost more;
        // within a stage the kernel-11 block costs more than the kernel-3 one.
        let per_stage = 1 + g.blocks_per_stage();
        assert!(w[per_stage + 3] > w[3], "{w:?}");
        assert!(w[3] > w[1], "{w:?}");
    }

    #[test]
    fn a_pass_piece_by_piece_is_the_one_shot_body() {
        let g = small_generator();
        let (frames, channels) = (6, 32);
        let v: Vec<f32> = (0..frames * channels)
            .map(|i| (i as f32 * 0.37).sin())
            .collect();
        let x = Tensor::from_vec(v, (frames, channels), &Device::Cpu).expect("x");
        let har_len = frames * 60 + 1;
        let h: Vec<f32> = (0..har_len * 22).map(|i| (i as f32 * 0.11).cos()).collect();
        let har = Tensor::from_vec(h, (har_len, 22), &Device::Cpu).expect("har");
        let s = Tensor::zeros((1, 128), DType::F32, &Device::Cpu).expect("s");
        let whole = g
            .istft_tm(&g.body_tm(&x, &har, &s).expect("body"))
            .expect("istft");
        let mut pass = g.begin_pass(x, har);
        let mut audio = None;
        for p in 0..g.pieces() {
            assert_eq!(pass.next_piece(), p);
            let out = g.advance(&mut pass, &s).expect("piece");
            assert_eq!(out.is_some(), p + 1 == g.pieces(), "audio only at the end");
            audio = out.or(audio);
        }
        let audio = audio.expect("audio");
        let diff = (audio - whole)
            .and_then(|d| d.abs())
            .and_then(|d| d.max_all())
            .and_then(|d| d.to_scalar::<f32>())
            .expect("diff");
        assert!(diff == 0.0, "same functions, same order: {diff}");
        assert!(g.advance(&mut pass, &s).is_err(), "a finished pass says so");
    }
}
