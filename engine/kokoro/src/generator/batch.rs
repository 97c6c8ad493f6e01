//! One generator pass over the windows of several segments at once, stacked on a batch axis.
//!
//! Why: on a GPU a window's pass is a few hundred small launches whatever its length, so the
//! device waits on the launches, not the arithmetic; windows of many streams in one pass share
//! them. On the CPU it changes nothing that matters (the products are as large either way), so
//! the scheduler keeps one window a step there.
//!
//! Items differ in length (a stream's first window is shorter than its steady ones, a
//! segment's last one is whatever is left) and are padded to one length, a bucket
//! ([`crate::stream::ChunkPlan::bucket`]) so the shapes a device sees are few. A padded item
//! computes what it computes alone:
//! - every convolution runs over all items as one sequence of rows
//!   ([`Conv1d::forward_batch_framed`]): each item is framed by zero rows, its rows past its own
//!   length are zero where a convolution would read them (as alone, where they are the
//!   convolution's padding), and the outputs that straddle two items are dropped;
//! - every instance norm and its activation run per item over that item's valid rows only,
//!   with its own style, and write zeros past them (`AdaIN1d::forward_act_batch_tm`: on a GPU
//!   one launch sequence for all items, so a norm costs the same launches at any batch size);
//! - a convolution's input is framed by a mask over every item at once ([`frame_valid`]);
//! - an upsampler's product runs over all rows at once, and each item's taps are unrolled on
//!   their own (on a GPU, one masked slab sum for all: `ConvTranspose1d::forward_batch_tm`);
//! - the inverse STFT gives each item its own length of audio (item by item on the CPU, the
//!   whole batch at once on a GPU: `InverseStft::forward_batch_tm`).
//!
//! Everything between (sums, scales, leaky `ReLU`) is element-wise over the whole batch. The
//! rows of a padded item past its length hold values that no valid output reads.
//!
//! The pass runs a piece at a time like [`super::pass::GeneratorPass`], with the same pieces.

use candle_core::{Result, Tensor};

use super::{epilogue, leaky_relu, AdaINResBlock1, Generator};
use super::{POST_LEAKY_SLOPE, STAGE_LEAKY_SLOPE};
use crate::rows::{PassRows, ValidRows};

/// What a batched pass starts from, on the device: every item padded into one tensor, their
/// styles, and each item's valid rows at every resolution ([`PassRows`], one upload). The pass
/// itself ([`Generator::run_batch`]) reads nothing else from the host, so a captured CUDA graph
/// can replay it over these buffers with new contents (`generator::graphs`).
#[derive(Debug, Clone)]
pub struct BatchInputs {
    /// `[B, bucket, C]`: the items' decoder outputs, zero past each one's frames.
    x: Tensor,
    /// `[B, 60·bucket + 1, 22]`: the source spectra, each zero past its own length.
    har: Tensor,
    /// The items' acoustic styles, `[B, 128]`.
    styles: Tensor,
    /// Resolution `i <= stages`: the rows entering stage `i` (`stages`: the last stage's
    /// output); then the spectrum's rows; then each stage's noise branch.
    rows: PassRows,
    /// Each item's decoder frames.
    frames: Vec<usize>,
    /// Decoder frames every item is padded to.
    bucket: usize,
}

impl BatchInputs {
    /// Items.
    #[must_use]
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// True for no items (never, for inputs [`Generator::prepare_batch`] made).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Decoder frames every item is padded to.
    #[must_use]
    pub fn bucket(&self) -> usize {
        self.bucket
    }

    /// The device the inputs are on.
    #[must_use]
    pub fn device(&self) -> &candle_core::Device {
        self.x.device()
    }

    /// True when `other` has the shapes of `self` (items, bucket, channels): the inputs of a
    /// graph captured over `self` may be replaced by `other`'s ([`Self::load`]).
    #[must_use]
    pub fn same_shape(&self, other: &Self) -> bool {
        self.bucket == other.bucket
            && self.x.dims() == other.x.dims()
            && self.har.dims() == other.har.dims()
            && self.styles.dims() == other.styles.dims()
            && self.rows.same_shape(&other.rows)
    }

    /// Copies `other`'s contents into `self`'s device buffers, whose addresses stay (what a
    /// captured graph reads), and takes its lengths.
    pub fn load(&mut self, other: &Self) -> Result<()> {
        if !self.same_shape(other) {
            candle_core::bail!("generator batch: loading inputs of another shape");
        }
        self.x.slice_set(&other.x, 0, 0)?;
        self.har.slice_set(&other.har, 0, 0)?;
        self.styles.slice_set(&other.styles, 0, 0)?;
        self.rows.load(&other.rows)?;
        self.frames.clone_from(&other.frames);
        Ok(())
    }
}

/// A batched pass: what [`super::pass::GeneratorPass`] holds, for the items of its inputs.
#[derive(Debug)]
pub struct BatchPass {
    /// The spectra, styles and valid rows the pieces read (sharing the prepared buffers).
    inputs: BatchInputs,
    /// `[B, T, C]`: the stage activation, until the stage input is built from it.
    x: Option<Tensor>,
    input: Option<Tensor>,
    sum: Option<Tensor>,
    next: usize,
}

impl BatchPass {
    /// Index of the next piece to run (equal to [`Generator::pieces`] when finished).
    #[must_use]
    pub fn next_piece(&self) -> usize {
        self.next
    }

    /// What the pass runs over: its items, their bucket and lengths.
    #[must_use]
    pub fn inputs(&self) -> &BatchInputs {
        &self.inputs
    }
}

/// One item of a batched pass: a window's time-major decoder output `[F, 512]`, its source
/// spectrum `[60·F + 1, 22]`, and its acoustic style `[1, 128]`.
#[derive(Debug, Clone)]
pub struct BatchItem {
    pub x: Tensor,
    pub har: Tensor,
    pub style: Tensor,
}

/// `x` `[B, T, C]` with item `b` cut to its first `valid` rows and framed by zero rows:
/// `before`, then its rows, then zeros to `before + T + after` rows.
pub fn frame_valid(
    x: &Tensor,
    valid: &ValidRows,
    (before, after): (usize, usize),
) -> Result<Tensor> {
    mask_valid(x, valid)?.pad_with_zeros(1, before, after)
}

/// `x` `[B, T, C]` with the rows past item `b`'s valid ones zeroed: one mask over all items,
/// built on the device (a product, whatever `B` is). The rows past an item's length are finite
/// values no valid output reads, so zeroing them by a product is exact.
pub(crate) fn mask_valid(x: &Tensor, valid: &ValidRows) -> Result<Tensor> {
    let (b, t, _) = x.dims3()?;
    if valid.len() != b {
        candle_core::bail!("mask_valid: {b} items, {} lengths", valid.len());
    }
    x.broadcast_mul(&valid.mask(t, x.dtype())?)
}

/// `[B, rows, C]` from `[r_b, C]` items (each `r_b <= rows`), zero past each item's rows.
fn padded_stack<'a>(
    items: impl ExactSizeIterator<Item = &'a Tensor>,
    rows: usize,
) -> Result<Tensor> {
    let b = items.len();
    let mut out: Option<Tensor> = None;
    for (k, item) in items.enumerate() {
        let (r, c) = item.dims2()?;
        if r > rows {
            candle_core::bail!("generator batch: an item of {r} rows in a bucket of {rows}");
        }
        let all = match &out {
            Some(all) => all,
            None => out.insert(Tensor::zeros((b * rows, c), item.dtype(), item.device())?),
        };
        all.slice_set(&item.contiguous()?, 0, k * rows)?;
    }
    let Some(all) = out else {
        candle_core::bail!("generator batch: no items");
    };
    let c = all.dim(1)?;
    all.reshape((b, rows, c))
}

/// `y + r` for `[B, T, C]` tensors, into `y` (fresh, held by nothing else) on the CPU: the
/// epilogue of the single-item pass, over all items' rows.
fn add_into(y: &Tensor, r: &Tensor) -> Result<Tensor> {
    let (b, t, c) = y.dims3()?;
    let flat = epilogue::finish(&y.reshape((b * t, c))?, None, Some(&r.reshape((b * t, c))?))?;
    flat.reshape((b, t, c))
}

/// Each item's first `samples[b]` values of the padded audio `[B, N]`, on the host: one copy
/// from a device for the whole batch.
pub fn cut(audio: &Tensor, samples: &[usize]) -> Result<Vec<Vec<f32>>> {
    let rows = audio.to_vec2::<f32>()?;
    if rows.len() != samples.len() {
        candle_core::bail!(
            "generator batch: {} rows of audio for {} items",
            rows.len(),
            samples.len()
        );
    }
    rows.into_iter()
        .zip(samples)
        .map(|(mut row, &n)| {
            if n > row.len() {
                candle_core::bail!("generator batch: {n} samples from a row of {}", row.len());
            }
            row.truncate(n);
            Ok(row)
        })
        .collect()
}

impl AdaINResBlock1 {
    /// [`Self::forward_tm`] for a batch `x` `[B, T, C]` whose items have `valid` rows.
    fn forward_batch(&self, x: &Tensor, styles: &Tensor, valid: &ValidRows) -> Result<Tensor> {
        let mut x = x.clone();
        let t = x.dim(1)?;
        for l in &self.layers {
            let a1 =
                l.adain1
                    .forward_act_batch_tm(&x, styles, &l.snake1, valid, l.conv1.frame())?;
            let c1 = l.conv1.forward_batch_framed(&a1, t, false, None)?;
            drop(a1);
            let a2 =
                l.adain2
                    .forward_act_batch_tm(&c1, styles, &l.snake2, valid, l.conv2.frame())?;
            drop(c1);
            x = l.conv2.forward_batch_framed(&a2, t, true, Some(&x))?;
        }
        Ok(x)
    }
}

impl Generator {
    /// The device inputs of a batched pass over `items`, each padded to `bucket` decoder
    /// frames (at least the longest item's): each item copied once into a zeroed batch, and
    /// every length the pass needs uploaded in one copy.
    pub fn prepare_batch(&self, items: &[BatchItem], bucket: usize) -> Result<BatchInputs> {
        let frames = items
            .iter()
            .map(|i| i.x.dim(0))
            .collect::<Result<Vec<_>>>()?;
        let longest = frames.iter().copied().max().unwrap_or(0);
        if items.is_empty() || bucket < longest {
            candle_core::bail!(
                "generator batch: {} items, the longest {longest} frames, bucket {bucket}",
                items.len()
            );
        }
        for i in items {
            let rows = i.har.dim(0)?;
            if rows != har_rows(i.x.dim(0)?) {
                candle_core::bail!("generator batch: {rows} spectrum rows for {:?}", i.x.dims());
            }
        }
        let x = padded_stack(items.iter().map(|i| &i.x), bucket)?;
        let har = padded_stack(items.iter().map(|i| &i.har), har_rows(bucket))?;
        let per_item = |f: &dyn Fn(usize) -> Result<usize>| -> Result<(Vec<usize>, usize)> {
            Ok((
                frames.iter().map(|&n| f(n)).collect::<Result<_>>()?,
                f(bucket)?,
            ))
        };
        let mut sets = Vec::with_capacity(2 * self.stages() + 2);
        for i in 0..=self.stages() {
            sets.push(per_item(&|n| self.batch_rows(i, n))?);
        }
        sets.push(per_item(&|n| Ok(har_rows(n)))?);
        for i in 0..self.stages() {
            sets.push(per_item(&|n| Ok(self.batch_noise_rows(i, n)))?);
        }
        Ok(BatchInputs {
            rows: PassRows::upload(&sets, x.device())?,
            x,
            har,
            styles: Tensor::cat(&items.iter().map(|i| &i.style).collect::<Vec<_>>(), 0)?,
            frames,
            bucket,
        })
    }

    /// Starts a batched pass over `items`, each padded to `bucket` decoder frames (at least
    /// the longest item's).
    pub fn begin_batch(&self, items: &[BatchItem], bucket: usize) -> Result<BatchPass> {
        Ok(Self::start_batch(&self.prepare_batch(items, bucket)?))
    }

    /// A pass over prepared inputs (sharing their buffers).
    #[must_use]
    pub fn start_batch(inputs: &BatchInputs) -> BatchPass {
        BatchPass {
            inputs: inputs.clone(),
            x: Some(inputs.x.clone()),
            input: None,
            sum: None,
            next: 0,
        }
    }

    /// Each item's samples of audio in a pass over `inputs` (the rest of its row of
    /// [`Self::run_batch`]'s output is padding).
    pub fn batch_samples(&self, inputs: &BatchInputs) -> Result<Vec<usize>> {
        // The last stage's rows, as uploaded (every length at least 1).
        let rows = inputs.rows.set(self.stages())?;
        Ok(rows
            .host()
            .iter()
            .map(|&v| crate::stft::HOP * (v - 1))
            .collect())
    }

    /// A whole batched pass over prepared inputs: the items' audio padded to one row each,
    /// `[B, N]`, on the device. Reads nothing from the host but shapes, so on a GPU it is
    /// launches only, which a CUDA graph can capture.
    pub fn run_batch(&self, inputs: &BatchInputs) -> Result<Tensor> {
        let mut pass = Self::start_batch(inputs);
        loop {
            if let Some(audio) = self.advance_batch(&mut pass)? {
                return Ok(audio);
            }
        }
    }

    /// A whole batched pass with each item's audio on the host: one copy back for the batch.
    /// On a GPU with `BANTER_CUDA_GRAPHS=1`, a replay of a captured graph where one is ready
    /// for these shapes (`generator::graphs`).
    pub fn forward_batch_host(&self, items: &[BatchItem], bucket: usize) -> Result<Vec<Vec<f32>>> {
        let inputs = self.prepare_batch(items, bucket)?;
        #[cfg(feature = "cuda")]
        if let Some(audio) = self.graphs.run(self, &inputs)? {
            return Ok(audio);
        }
        cut(&self.run_batch(&inputs)?, &self.batch_samples(&inputs)?)
    }

    /// Batched shapes with a CUDA graph ready to replay (0 without `BANTER_CUDA_GRAPHS=1`, off
    /// a GPU, or without the `cuda` feature).
    #[must_use]
    pub fn graphs_ready(&self) -> usize {
        #[cfg(feature = "cuda")]
        return self.graphs.ready();
        #[cfg(not(feature = "cuda"))]
        0
    }

    /// Each item's rows entering stage `i` (`i == stages()`: the last stage's output).
    fn batch_rows(&self, i: usize, frames: usize) -> Result<usize> {
        let mut t = frames;
        for (k, up) in self.ups.iter().enumerate().take(i) {
            t = up.checked_len(t)? + usize::from(k + 1 == self.stages());
        }
        Ok(t)
    }

    /// Each item's rows of the noise branch of stage `i` (from its spectrum's rows).
    fn batch_noise_rows(&self, i: usize, frames: usize) -> usize {
        self.noise_convs[i].output_len(har_rows(frames))
    }

    /// [`PassRows`] index of the spectrum's rows.
    fn har_set(&self) -> usize {
        self.stages() + 1
    }

    /// [`PassRows`] index of stage `i`'s noise branch.
    fn noise_set(&self, i: usize) -> usize {
        self.stages() + 2 + i
    }

    /// [`Self::stage_input_tm`] for a batch.
    fn stage_input_batch(&self, i: usize, pass: &BatchPass, x: &Tensor) -> Result<Tensor> {
        let conv = &self.noise_convs[i];
        let rows = pass.inputs.har.dim(1)?;
        let framed = frame_valid(
            &pass.inputs.har,
            pass.inputs.rows.set(self.har_set())?,
            conv.frame(),
        )?;
        let noise = conv.forward_batch_framed(&framed, rows, true, None)?;
        drop(framed);
        let noise_valid = pass.inputs.rows.set(self.noise_set(i))?;
        let x_source = self.noise_res[i].forward_batch(&noise, &pass.inputs.styles, noise_valid)?;
        drop(noise);
        let x = leaky_relu(x, STAGE_LEAKY_SLOPE)?;
        let up =
            self.ups[i].forward_batch_tm(&x, pass.inputs.rows.set(i)?, i + 1 == self.stages())?;
        drop(x);
        let out_rows = x_source.dim(1)?;
        let up = up.pad_with_zeros(1, 0, out_rows.saturating_sub(up.dim(1)?))?;
        if up.dims() != x_source.dims() {
            candle_core::bail!(
                "generator batch: upsampled {:?}, noise branch {:?}",
                up.dims(),
                x_source.dims()
            );
        }
        add_into(&up, &x_source)
    }

    /// Runs the next piece of a batched pass; returns the items' audio padded to one row
    /// each, `[B, N]`, after the last piece (item `b`'s own is the first
    /// [`Self::batch_samples`] of its row), `None` before it.
    pub fn advance_batch(&self, pass: &mut BatchPass) -> Result<Option<Tensor>> {
        let p = pass.next;
        let out = match self.piece(p) {
            super::pass::Piece::StageInput(i) => {
                let Some(x) = pass.x.take() else {
                    candle_core::bail!("generator batch: stage {i} without its input");
                };
                pass.input = Some(self.stage_input_batch(i, pass, &x)?);
                None
            }
            super::pass::Piece::Block(i, j) => {
                let Some(input) = &pass.input else {
                    candle_core::bail!("generator batch: block {j} of stage {i} before its input");
                };
                let valid = pass.inputs.rows.set(i + 1)?;
                let y = self.resblocks[i][j].forward_batch(input, &pass.inputs.styles, valid)?;
                pass.sum = Some(match pass.sum.take() {
                    None => y,
                    Some(sum) => add_into(&y, &sum)?,
                });
                if j + 1 == self.blocks_per_stage() {
                    pass.input = None;
                    pass.x = Some(self.stage_output(pass.sum.take())?);
                }
                None
            }
            super::pass::Piece::Output => {
                let Some(x) = pass.x.take() else {
                    candle_core::bail!("generator batch: already finished");
                };
                let valid = pass.inputs.rows.set(self.stages())?;
                let x = leaky_relu(&x, POST_LEAKY_SLOPE)?;
                let framed = frame_valid(&x, valid, self.conv_post.frame())?;
                drop(x);
                let t = framed.dim(1)? - self.conv_post.frame().0 - self.conv_post.frame().1;
                let post = self
                    .conv_post
                    .forward_batch_framed(&framed, t, true, None)?;
                Some(self.istft.forward_batch_tm(&post, valid)?)
            }
        };
        pass.next = p + 1;
        Ok(out)
    }
}

/// A window's spectrum rows for `frames` decoder frames.
fn har_rows(frames: usize) -> usize {
    frames * crate::stream::SPEC_PER_FRAME + 1
}

#[cfg(test)]
mod tests {
    use super::super::pass::tests::small_generator;
    use super::*;
    use crate::parity::snr_db;
    use candle_core::Device;

    /// A window's inputs of `frames` decoder frames (the small generator's 32 channels),
    /// different for every `seed`, and a style of its own.
    fn item(frames: usize, seed: f32) -> BatchItem {
        let dev = Device::Cpu;
        let v: Vec<f32> = (0..frames * 32)
            .map(|i| (i as f32 * 0.37 + seed).sin() * (1.0 + seed * 0.1))
            .collect();
        let x = Tensor::from_vec(v, (frames, 32), &dev).expect("x");
        let rows = frames * 60 + 1;
        let h: Vec<f32> = (0..rows * 22)
            .map(|i| (i as f32 * 0.11 + seed * 1.7).cos())
            .collect();
        let har = Tensor::from_vec(h, (rows, 22), &dev).expect("har");
        let s: Vec<f32> = (0..128).map(|i| (i as f32 * 0.05 + seed).sin()).collect();
        let style = Tensor::from_vec(s, (1, 128), &dev).expect("style");
        BatchItem { x, har, style }
    }

    fn alone(g: &Generator, item: &BatchItem) -> Vec<f32> {
        let mut pass = g.begin_pass(item.x.clone(), item.har.clone());
        loop {
            if let Some(audio) = g.advance(&mut pass, &item.style).expect("piece") {
                return audio
                    .flatten_all()
                    .and_then(|a| a.to_vec1())
                    .expect("audio");
            }
        }
    }

    #[test]
    fn batched_windows_equal_each_alone() {
        let g = small_generator();
        // Different lengths (one fills the bucket, one is a single frame past the shortest
        // a convolution needs) and different styles.
        let items: Vec<BatchItem> = [(9, 0.0), (4, 1.3), (12, 2.9), (9, 4.1)]
            .iter()
            .map(|&(f, seed)| item(f, seed))
            .collect();
        let inputs = g.prepare_batch(&items, 12).expect("batch");
        let mut pass = Generator::start_batch(&inputs);
        let mut audio = None;
        for p in 0..g.pieces() {
            assert_eq!(pass.next_piece(), p);
            let out = g.advance_batch(&mut pass).expect("piece");
            assert_eq!(out.is_some(), p + 1 == g.pieces(), "audio only at the end");
            audio = out.or(audio);
        }
        let samples = g.batch_samples(&inputs).expect("samples");
        let audio = cut(&audio.expect("audio"), &samples).expect("cut");
        assert_eq!(audio.len(), items.len());
        for (k, (it, got)) in items.iter().zip(audio).enumerate() {
            let want = alone(&g, it);
            assert_eq!(got.len(), want.len(), "item {k}: its own length");
            let snr = snr_db(&want, &got);
            assert!(snr >= 100.0, "item {k}: {snr:.1} dB");
        }
        assert!(
            g.advance_batch(&mut pass).is_err(),
            "a finished pass says so"
        );
    }

    /// The GPU's arrangement, run here on the CPU: every phase of a dilated convolution of
    /// the flattened batch in one product (`conv::Conv1d::phases_in_one_product`; the kernel
    /// windows that straddle two items or two phases are dropped), and the upsamplers and the
    /// inverse STFT unrolled for the whole batch at once over masked rows. Each item is still
    /// what it is alone.
    #[test]
    fn batched_windows_equal_each_alone_on_the_gpus_path() {
        use super::super::conv::tests::{ONE_PRODUCT_ON_CPU, ONE_PRODUCT_RUNS};
        let g = small_generator();
        let items: Vec<BatchItem> = [(7, 0.4), (3, 2.2), (10, 5.0)]
            .iter()
            .map(|&(f, seed)| item(f, seed))
            .collect();
        ONE_PRODUCT_ON_CPU.with(|on| on.set(true));
        let runs = ONE_PRODUCT_RUNS.with(std::cell::Cell::get);
        let want: Vec<Vec<f32>> = items.iter().map(|it| alone(&g, it)).collect();
        let alone_runs = ONE_PRODUCT_RUNS.with(std::cell::Cell::get) - runs;
        let got = g.forward_batch_host(&items, 10);
        let batch_runs = ONE_PRODUCT_RUNS.with(std::cell::Cell::get) - runs - alone_runs;
        ONE_PRODUCT_ON_CPU.with(|on| on.set(false));
        let got = got.expect("batch");
        // One product per dilated convolution for the whole batch, as for each item alone.
        assert!(alone_runs > 0);
        assert_eq!(batch_runs * items.len(), alone_runs);
        for (k, (want, got)) in want.iter().zip(&got).enumerate() {
            let snr = snr_db(want, got);
            assert!(snr >= 100.0, "item {k}: {snr:.1} dB");
        }
    }

    /// What a replayed CUDA graph relies on (`generator::graphs`): a pass computes from its
    /// device buffers only. Inputs prepared for one batch, with another batch of the same
    /// shape copied into their buffers but their own host lengths left stale, give the other
    /// batch's audio exactly; in both arrangements (the GPU's run here on the CPU).
    #[test]
    fn a_pass_follows_its_device_buffers_not_the_host_lengths() {
        use super::super::conv::tests::ONE_PRODUCT_ON_CPU;
        let g = small_generator();
        let a: Vec<BatchItem> = [(9, 0.2), (4, 1.1), (6, 2.0)]
            .iter()
            .map(|&(f, seed)| item(f, seed))
            .collect();
        let b: Vec<BatchItem> = [(3, 3.3), (10, 4.4), (7, 5.5)]
            .iter()
            .map(|&(f, seed)| item(f, seed))
            .collect();
        for gpu in [false, true] {
            ONE_PRODUCT_ON_CPU.with(|on| on.set(gpu));
            let want = g
                .prepare_batch(&b, 10)
                .and_then(|inputs| g.run_batch(&inputs))
                .and_then(|audio| audio.to_vec2::<f32>());
            let stale = g.prepare_batch(&a, 10).expect("a");
            let fresh = g.prepare_batch(&b, 10).expect("b");
            assert!(stale.same_shape(&fresh));
            for (to, from) in [
                (&stale.x, &fresh.x),
                (&stale.har, &fresh.har),
                (&stale.styles, &fresh.styles),
                (stale.rows.device_data(), fresh.rows.device_data()),
            ] {
                to.slice_set(from, 0, 0).expect("copy");
            }
            let got = g.run_batch(&stale).and_then(|audio| audio.to_vec2::<f32>());
            ONE_PRODUCT_ON_CPU.with(|on| on.set(false));
            let (want, got) = (want.expect("b alone"), got.expect("a's buffers"));
            assert_eq!(want.len(), got.len());
            for (k, (w, g)) in want.iter().zip(&got).enumerate() {
                assert!(
                    w.len() == g.len() && w.iter().zip(g).all(|(w, g)| w.to_bits() == g.to_bits()),
                    "gpu arrangement {gpu}: item {k} differs"
                );
            }
        }
    }

    #[test]
    fn a_padded_item_is_its_own_and_the_bucket_must_hold_it() {
        let g = small_generator();
        let short = item(5, 0.7);
        let want = alone(&g, &short);
        // The same item in a much longer bucket, next to a long neighbour with another style.
        let got = g
            .forward_batch_host(&[item(16, 3.3), short.clone()], 16)
            .expect("batch");
        let snr = snr_db(&want, &got[1]);
        assert!(snr >= 100.0, "{snr:.1} dB");
        assert!(
            g.begin_batch(&[item(6, 0.0)], 5).is_err(),
            "bucket too small"
        );
        assert!(g.begin_batch(&[], 5).is_err(), "no items");
    }
}
