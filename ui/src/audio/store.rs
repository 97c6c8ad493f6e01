//! The whole rendered episode, kept on the non-realtime side for the waveform, seeking back and
//! replay.
//!
//! A `Vec<f32>` that grows by doubling copies everything it holds each time it grows (hundreds
//! of MB for a long episode); [`Chunks`] keeps fixed-size blocks instead, so appending only ever
//! allocates one new block and copies the new samples. Nothing here runs on the audio callback:
//! the feeder copies from it into the ring ([`super::buffer`]).

/// Samples per block (about 2.7 s at 24 kHz, 256 KiB).
const BLOCK: usize = 1 << 16;

/// Append-only audio in fixed-size blocks.
#[derive(Debug, Default)]
pub(crate) struct Chunks {
    blocks: Vec<Box<[f32]>>,
    len: usize,
}

impl Chunks {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn append(&mut self, mut samples: &[f32]) {
        while !samples.is_empty() {
            let at = self.len % BLOCK;
            if at == 0 && self.blocks.len() * BLOCK == self.len {
                self.blocks.push(vec![0.0; BLOCK].into_boxed_slice());
            }
            let Some(block) = self.blocks.last_mut() else {
                return;
            };
            let n = samples.len().min(BLOCK - at);
            block[at..at + n].copy_from_slice(&samples[..n]);
            self.len += n;
            samples = &samples[n..];
        }
    }

    pub(crate) fn clear(&mut self) {
        self.blocks.clear();
        self.len = 0;
    }

    /// Copies samples from `from` into `out`; returns how many there were.
    pub(crate) fn copy_to(&self, mut from: usize, out: &mut [f32]) -> usize {
        let mut n = 0;
        while n < out.len() && from < self.len {
            let (b, at) = (from / BLOCK, from % BLOCK);
            let k = (out.len() - n).min(BLOCK - at).min(self.len - from);
            out[n..n + k].copy_from_slice(&self.blocks[b][at..at + k]);
            n += k;
            from += k;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::float_cmp)] // copied samples, not computed ones
    fn appends_across_blocks_and_copies_back_any_range() {
        let mut c = Chunks::default();
        let ramp: Vec<f32> = (0..BLOCK * 2 + 10).map(|i| i as f32).collect();
        c.append(&ramp[..BLOCK - 3]);
        c.append(&ramp[BLOCK - 3..]);
        assert_eq!(c.len(), ramp.len());
        assert_eq!(c.blocks.len(), 3);
        let mut out = vec![-1.0; 20];
        assert_eq!(c.copy_to(BLOCK - 5, &mut out), 20);
        assert_eq!(out, ramp[BLOCK - 5..BLOCK + 15]);
        assert_eq!(c.copy_to(ramp.len() - 4, &mut out), 4, "only what exists");
        assert_eq!(out[..4], ramp[ramp.len() - 4..]);
        c.clear();
        assert_eq!((c.len(), c.copy_to(0, &mut out)), (0, 0));
    }
}
