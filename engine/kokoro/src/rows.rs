//! Each item's valid rows at every resolution of a padded batch, uploaded to the device once
//! per pass.
//!
//! Why: a batched pass (the generator's windows, `generator::batch`; a batch of segments'
//! F0/N branches and decoder bodies, `model::batch` and `stream::decoder_inputs_batch`) needs
//! each item's length at every resolution it reaches (decoder frames, each upsampled stage's
//! rows, the source spectrum's rows, each noise branch's rows) for its masks and its instance
//! norms. Built from host vectors at each layer, that is one small host-to-device copy per norm
//! and per mask (about a hundred a generator pass), each of which waits for the host; and a
//! pass with host copies inside cannot be replayed as a CUDA graph (`generator::graphs`), whose
//! inputs must sit at fixed device addresses. Here every length of a pass, and the row
//! positions the masks compare them with, travel in one `u32` tensor; masks are built on the
//! device from it, the `AdaIN` kernel reads its lengths there, and the host copies stay beside
//! them for the checks and the CPU's item-by-item paths.

use candle_core::{DType, Device, Result, Tensor};

/// One resolution: each item's valid rows of a padded `[B, rows, C]` batch.
#[derive(Debug, Clone)]
pub struct ValidRows {
    host: Vec<usize>,
    /// `[B]` `u32`, on the pass's device.
    lengths: Tensor,
    /// `[P]` `u32` `0..P` (shared by every resolution of a pass), `P >= rows`.
    positions: Tensor,
    /// The padded rows every item's `host[b]` lies within.
    rows: usize,
}

impl ValidRows {
    /// Each item's valid rows.
    #[must_use]
    pub fn host(&self) -> &[usize] {
        &self.host
    }

    /// The lengths a pass computes with where it goes item by item: the device's copy where
    /// reading it costs nothing (the CPU), so the tests show a pass follows its device
    /// buffers, which is all a replayed CUDA graph sees (`generator::graphs`); elsewhere the
    /// host's, the same values without waiting for the device.
    pub fn computed(&self) -> Result<Vec<usize>> {
        if !self.lengths.device().is_cpu() {
            return Ok(self.host.clone());
        }
        Ok(self
            .lengths
            .to_vec1::<u32>()?
            .into_iter()
            .map(|v| v as usize)
            .collect())
    }

    /// The same on the device: `[B]` `u32`.
    #[must_use]
    pub fn lengths(&self) -> &Tensor {
        &self.lengths
    }

    /// Items.
    #[must_use]
    pub fn len(&self) -> usize {
        self.host.len()
    }

    /// True for no items (a `PassRows` never holds such a set).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.host.is_empty()
    }

    /// The padded rows of this resolution.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// `[B, t, 1]` in `dtype`: 1 on item `b`'s first `host[b]` rows, 0 past them, computed on
    /// the device from [`Self::lengths`] (no host copy). `t` may be at most [`Self::rows`].
    pub fn mask(&self, t: usize, dtype: DType) -> Result<Tensor> {
        if t > self.positions.dim(0)? {
            candle_core::bail!(
                "valid rows: a mask of {t} rows past the pass's {}",
                self.rows
            );
        }
        let b = self.host.len();
        let positions = self.positions.narrow(0, 0, t)?.reshape((1, t, 1))?;
        positions
            .broadcast_lt(&self.lengths.reshape((b, 1, 1))?)?
            .to_dtype(dtype)
    }

    /// A set on its own (for a single layer's tests and checks): one upload.
    pub fn upload(host: &[usize], rows: usize, device: &Device) -> Result<Self> {
        let pass = PassRows::upload(&[(host.to_vec(), rows)], device)?;
        pass.sets
            .into_iter()
            .next()
            .ok_or_else(|| candle_core::Error::Msg("valid rows: no set uploaded".into()))
    }
}

/// Every resolution of one pass, checked and uploaded in one copy.
#[derive(Debug, Clone)]
pub struct PassRows {
    sets: Vec<ValidRows>,
    /// The one `u32` tensor all sets are views of: `S·B` lengths, then `0..P`.
    all: Tensor,
}

impl PassRows {
    /// `sets`: each resolution's item lengths and padded rows. Every set has the same number
    /// of items (at least one), and every length lies in `1..=rows`: what the kernels and
    /// masks rely on, checked here on the host once rather than on the device.
    pub fn upload(sets: &[(Vec<usize>, usize)], device: &Device) -> Result<Self> {
        let b = sets.first().map_or(0, |(h, _)| h.len());
        let p = sets.iter().map(|&(_, rows)| rows).max().unwrap_or(0);
        let mut data = Vec::with_capacity(sets.len() * b + p);
        for (host, rows) in sets {
            if b == 0 || host.len() != b || host.iter().any(|&v| v == 0 || v > *rows) {
                candle_core::bail!("valid rows: lengths {host:?} of a batch of {b} in {rows} rows");
            }
            for &v in host {
                data.push(u32_of(v)?);
            }
        }
        data.extend(0..u32_of(p)?);
        let all = Tensor::from_vec(data, sets.len() * b + p, device)?;
        let positions = all.narrow(0, sets.len() * b, p)?;
        let sets = sets
            .iter()
            .enumerate()
            .map(|(k, (host, rows))| {
                Ok(ValidRows {
                    host: host.clone(),
                    lengths: all.narrow(0, k * b, b)?,
                    positions: positions.clone(),
                    rows: *rows,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { sets, all })
    }

    /// Resolution `k`, in the order given to [`Self::upload`].
    pub fn set(&self, k: usize) -> Result<&ValidRows> {
        self.sets
            .get(k)
            .ok_or_else(|| candle_core::Error::Msg(format!("valid rows: no resolution {k}")))
    }

    /// The one device tensor every set is a view of.
    #[must_use]
    pub fn device_data(&self) -> &Tensor {
        &self.all
    }

    /// True when `other` has the same resolutions, items and padded rows (its lengths may
    /// differ): the shapes a captured graph was recorded for.
    #[must_use]
    pub fn same_shape(&self, other: &Self) -> bool {
        self.all.dims() == other.all.dims()
            && self.sets.len() == other.sets.len()
            && self
                .sets
                .iter()
                .zip(&other.sets)
                .all(|(a, b)| a.rows == b.rows && a.host.len() == b.host.len())
    }

    /// `self` with `other`'s lengths: `other`'s device data copied into `self`'s (whose
    /// address stays), its host lengths taken. The shapes must match ([`Self::same_shape`]).
    pub fn load(&mut self, other: &Self) -> Result<()> {
        if !self.same_shape(other) {
            candle_core::bail!("valid rows: loading lengths of another shape");
        }
        self.all.slice_set(&other.all, 0, 0)?;
        for (mine, theirs) in self.sets.iter_mut().zip(&other.sets) {
            mine.host.clone_from(&theirs.host);
        }
        Ok(())
    }
}

fn u32_of(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| candle_core::Error::Msg(format!("{n} rows exceed u32")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_are_each_items_own_rows_and_bad_lengths_are_refused() {
        let dev = Device::Cpu;
        let pass = PassRows::upload(&[(vec![3, 1, 5], 5), (vec![7, 2, 9], 9)], &dev).expect("up");
        let m = pass
            .set(1)
            .and_then(|s| s.mask(9, DType::F32))
            .and_then(|m| m.squeeze(2))
            .and_then(|m| m.to_vec2::<f32>())
            .expect("mask");
        for (row, &v) in m.iter().zip(&[7usize, 2, 9]) {
            let ones = row
                .iter()
                .take_while(|&&x| x.to_bits() == 1f32.to_bits())
                .count();
            assert_eq!(ones, v);
            assert!(row[v..].iter().all(|&x| x.to_bits() == 0f32.to_bits()));
        }
        let lengths = pass
            .set(0)
            .and_then(|s| s.lengths().to_vec1::<u32>())
            .expect("l");
        assert_eq!(lengths, [3, 1, 5]);
        assert!(pass.set(0).and_then(|s| s.mask(10, DType::F32)).is_err());
        assert!(pass.set(2).is_err());
        for bad in [
            vec![(vec![0, 1], 4)],
            vec![(vec![5, 1], 4)],
            vec![(vec![1, 1], 4), (vec![1], 4)],
            vec![(vec![], 4)],
        ] {
            assert!(PassRows::upload(&bad, &dev).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn loading_keeps_the_address_and_takes_the_lengths() {
        let dev = Device::Cpu;
        let mut a = PassRows::upload(&[(vec![3, 1], 5), (vec![7, 2], 9)], &dev).expect("a");
        let b = PassRows::upload(&[(vec![5, 4], 5), (vec![1, 9], 9)], &dev).expect("b");
        let c = PassRows::upload(&[(vec![5, 4], 6), (vec![1, 9], 9)], &dev).expect("c");
        let lengths = a.set(1).expect("set").lengths().clone();
        a.load(&b).expect("same shape");
        assert_eq!(a.set(1).expect("set").host(), [1, 9]);
        // The old view of the device data sees the new lengths: the same storage.
        assert_eq!(lengths.to_vec1::<u32>().expect("v"), [1, 9]);
        assert!(!a.same_shape(&c));
        assert!(a.load(&c).is_err());
    }
}
