//! Streaming sample-rate conversion (Kokoro's 24 kHz to the 44.1/48 kHz an episode is delivered
//! at, or any other pair) on rubato's synchronous FFT resampler.
//!
//! The FFT resampler applies a windowed-sinc (Blackman-Harris²) anti-aliasing filter in the
//! frequency domain, exact for rational ratios. The FFT block is chosen near 1024 input frames,
//! which puts the cutoff at ~0.987 of the lower Nyquist and the passband flat (±0.01 dB) to well
//! past 0.9 of it. The resampler's delay (half an output block) is dropped from the front and
//! made up at the end by [`Resampler::flush`], so output sample k is at time `k / rate_out` and the
//! output is exactly `round(n_in × out / in)` samples long, whatever the chunking of the input.

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Fft, FixedSync, Resampler as _, WindowFunction};

use super::AudioError;

/// Desired input frames per FFT block; rubato rounds it to a multiple of `in / gcd(in, out)`.
const BLOCK: usize = 1024;

/// Converts a mono stream from one rate to another, with no delay and an exact length.
pub struct Resampler {
    inner: Fft<f32>,
    from: u32,
    to: u32,
    /// Input not yet handed to rubato (less than one block).
    pending: Vec<f32>,
    /// Rubato's output for one block.
    block_out: Vec<f32>,
    /// Output frames still to drop from the front (rubato's delay).
    to_skip: usize,
    n_in: u64,
    n_out: u64,
}

impl Resampler {
    pub fn new(from: u32, to: u32) -> Result<Self, AudioError> {
        let err = |detail: String| AudioError::Resample { from, to, detail };
        if from == 0 || to == 0 {
            return Err(err("sample rates must be positive".into()));
        }
        // Rubato's FFT blocks are m × (rate / gcd) frames on each side and its delay is half an
        // output block; an even m makes that delay a whole number of output samples (an odd one
        // would leave the output half a sample late).
        let g = gcd(from, to);
        let min_in = (from / g) as usize;
        let m = BLOCK.div_ceil(min_in).next_multiple_of(2);
        let inner = Fft::<f32>::new_custom(
            from as usize,
            to as usize,
            m * min_in,
            1,
            1,
            WindowFunction::BlackmanHarris2,
            FixedSync::Input,
        )
        .map_err(|e| err(e.to_string()))?;
        let to_skip = inner.output_delay();
        let block_out = vec![0.0; inner.output_frames_max()];
        Ok(Self {
            pending: Vec::with_capacity(inner.input_frames_max()),
            inner,
            from,
            to,
            block_out,
            to_skip,
            n_in: 0,
            n_out: 0,
        })
    }

    /// The output length `n_in` input samples make once flushed: `round(n_in × to / from)`.
    #[must_use]
    pub fn output_len(&self, n_in: u64) -> u64 {
        let (from, to) = (u128::from(self.from), u128::from(self.to));
        ((u128::from(n_in) * to + from / 2) / from) as u64
    }

    /// Resamples `input`, appending what is ready to `out` (the tail comes from `flush`).
    pub fn process(&mut self, input: &[f32], out: &mut Vec<f32>) -> Result<(), AudioError> {
        self.n_in += input.len() as u64;
        let mut rest = input;
        while !rest.is_empty() {
            let need = self.inner.input_frames_next() - self.pending.len();
            let take = need.min(rest.len());
            self.pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.pending.len() == self.inner.input_frames_next() {
                self.run_block(out, u64::MAX)?;
            }
        }
        Ok(())
    }

    /// Pushes zeros through until the output reaches `round(n_in × to / from)`, then resets the
    /// stream so the resampler can be reused from time zero.
    pub fn flush(&mut self, out: &mut Vec<f32>) -> Result<(), AudioError> {
        let total = self.output_len(self.n_in);
        while self.n_out < total {
            let need = self.inner.input_frames_next();
            self.pending.resize(need, 0.0);
            self.run_block(out, total)?;
        }
        self.inner.reset();
        self.pending.clear();
        self.to_skip = self.inner.output_delay();
        self.n_in = 0;
        self.n_out = 0;
        Ok(())
    }

    /// Runs one full block from `pending`, appending at most `limit - n_out` frames after the
    /// delay has been skipped.
    fn run_block(&mut self, out: &mut Vec<f32>, limit: u64) -> Result<(), AudioError> {
        let (from, to) = (self.from, self.to);
        let err = |detail: String| AudioError::Resample { from, to, detail };
        let n = self.pending.len();
        let input =
            InterleavedSlice::new(&self.pending[..], 1, n).map_err(|e| err(e.to_string()))?;
        let cap = self.block_out.len();
        let mut output = InterleavedSlice::new_mut(&mut self.block_out[..], 1, cap)
            .map_err(|e| err(e.to_string()))?;
        let (_, produced) = self
            .inner
            .process_into_buffer(&input, &mut output, None)
            .map_err(|e| err(e.to_string()))?;
        self.pending.clear();
        let skip = self.to_skip.min(produced);
        self.to_skip -= skip;
        let room = usize::try_from(limit - self.n_out).unwrap_or(usize::MAX);
        let keep = (produced - skip).min(room);
        out.extend_from_slice(&self.block_out[skip..skip + keep]);
        self.n_out += keep as u64;
        Ok(())
    }
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests;
