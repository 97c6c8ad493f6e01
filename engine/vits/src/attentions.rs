//! `attentions.py`: the text encoder's transformer, with VITS's windowed relative positions.
//!
//! Each layer is multi-head self-attention whose logits and values get learned embeddings of
//! the relative position `j - i` for `|j - i| <= window` (4 in every Piper voice), then a
//! convolutional feed-forward block; each is followed by a residual add and a channel layer
//! norm. The reference turns relative logits into absolute ones by padding and reshaping; here
//! the band of `2·window + 1` diagonals is added directly, which is the same sum.
//!
//! One sentence at a time (batch 1, no padding), as Piper runs it: no attention mask is needed.

use candle_core::{Device, Tensor, D};

use crate::checkpoint::Checkpoint;
use crate::layers::{tensor, ChannelNorm, Conv};
use crate::VitsError;

/// One attention layer (`attn_layers.N`).
#[derive(Debug, Clone)]
pub struct RelativeAttention {
    q: Conv,
    k: Conv,
    v: Conv,
    o: Conv,
    /// `[2·window + 1, head_dim]`, shared by the heads.
    rel_k: Tensor,
    rel_v: Tensor,
    heads: usize,
    window: usize,
}

impl RelativeAttention {
    /// Every convolution of the module, for choosing their CPU kernel.
    pub fn convs_mut(&mut self) -> Vec<&mut Conv> {
        vec![&mut self.q, &mut self.k, &mut self.v, &mut self.o]
    }

    pub fn load(ck: &Checkpoint, name: &str, device: &Device) -> Result<Self, VitsError> {
        let q = Conv::load(ck, &format!("{name}.conv_q"), device)?;
        let k = Conv::load(ck, &format!("{name}.conv_k"), device)?;
        let v = Conv::load(ck, &format!("{name}.conv_v"), device)?;
        let o = Conv::load(ck, &format!("{name}.conv_o"), device)?;
        let rel_k = tensor(ck, &format!("{name}.emb_rel_k"), device, None)?;
        let (shared, span, head_dim) = rel_k.dims3()?;
        let rel_v = tensor(
            ck,
            &format!("{name}.emb_rel_v"),
            device,
            Some(&[shared, span, head_dim]),
        )?;
        let channels = q.out_channels();
        if shared != 1 || span % 2 == 0 || head_dim == 0 || channels % head_dim != 0 {
            return Err(VitsError::Weight {
                name: format!("{name}.emb_rel_k"),
                reason: format!(
                    "shape [{shared}, {span}, {head_dim}] does not fit {channels} channels with heads sharing one table"
                ),
            });
        }
        Ok(Self {
            q,
            k,
            v,
            o,
            rel_k: rel_k.squeeze(0)?,
            rel_v: rel_v.squeeze(0)?,
            heads: channels / head_dim,
            window: span / 2,
        })
    }

    /// Self-attention over `x` (`[1, channels, t]`).
    pub fn forward(&self, x: &Tensor) -> Result<Tensor, VitsError> {
        let (_, channels, t) = x.dims3()?;
        let head_dim = channels / self.heads;
        let heads = |y: Tensor| -> candle_core::Result<Tensor> {
            // [1, c, t] -> [h, t, d]
            y.reshape((self.heads, head_dim, t))?
                .transpose(1, 2)?
                .contiguous()
        };
        let scale = (head_dim as f64).powf(-0.5);
        let q = heads(self.q.forward(x)?)?.affine(scale, 0.0)?;
        let k = heads(self.k.forward(x)?)?;
        let v = heads(self.v.forward(x)?)?;
        let scores = q.matmul(&k.transpose(1, 2)?.contiguous()?)?; // [h, t, t]
                                                                   // q · rel_k for every offset: [h, t, span], added on its diagonal.
        let rel_logits = q.broadcast_matmul(&self.rel_k.t()?.contiguous()?)?;
        let band = Band {
            t,
            window: self.window,
        };
        let mut scores = scores.flatten_all()?.to_vec1::<f32>()?;
        band.spread_add(&mut scores, &rel_logits.flatten_all()?.to_vec1::<f32>()?);
        // candle's softmax, whose vectorised sums the goldens were matched with
        let p = candle_nn::ops::softmax_last_dim(&Tensor::from_vec(
            scores,
            (self.heads, t, t),
            x.device(),
        )?)?;
        let rel_weights = band.gather(&p.flatten_all()?.to_vec1::<f32>()?); // [h, t, span]
        let rel_weights = Tensor::from_vec(rel_weights, (self.heads, t, band.span()), x.device())?;
        let mut out = p.matmul(&v)?; // [h, t, d]
        out = (out + rel_weights.broadcast_matmul(&self.rel_v)?)?;
        let out = out.transpose(1, 2)?.reshape((1, channels, t))?;
        self.o.forward(&out)
    }
}

/// The `2·window + 1` diagonals around the main one of each `t × t` matrix of a row-major
/// `[h, t, t]` host array: offset `r` is column `i + r - window` of row `i`.
///
/// Why host loops: written with candle's ops the band needed `span` dense `t × t` masks and a
/// multiply-add over all of `[h, t, t]` per diagonal, O(span·t²) work and memory per layer
/// where the band holds O(span·t) values (at 400 phonemes, 14 passes over 1.3 MB arrays per
/// layer for 7 200 useful values).
struct Band {
    t: usize,
    window: usize,
}

impl Band {
    fn span(&self) -> usize {
        2 * self.window + 1
    }

    /// `(row, r, column)` for each in-range band entry of row `i`.
    fn entries(&self, i: usize) -> impl Iterator<Item = (usize, usize)> {
        let (t, w) = (self.t, self.window);
        (0..=2 * w).filter_map(move |r| {
            let j = (i + r).checked_sub(w)?;
            (j < t).then_some((r, j))
        })
    }

    /// `scores[h, i, i + r - window] += rel[h, i, r]` (`rel` `[h, t, span]`).
    fn spread_add(&self, scores: &mut [f32], rel: &[f32]) {
        let (t, span) = (self.t, self.span());
        for (hi, row) in scores.chunks_exact_mut(t).enumerate() {
            let i = hi % t;
            for (r, j) in self.entries(i) {
                row[j] += rel[hi * span + r];
            }
        }
    }

    /// `[h, t, t]` → `[h, t, span]`: the band's entries of each row (0 outside the matrix).
    fn gather(&self, p: &[f32]) -> Vec<f32> {
        let (t, span) = (self.t, self.span());
        let mut out = vec![0f32; p.len() / t * span];
        for (hi, row) in p.chunks_exact(t).enumerate() {
            let i = hi % t;
            for (r, j) in self.entries(i) {
                out[hi * span + r] = row[j];
            }
        }
        out
    }
}

/// One feed-forward block (`ffn_layers.N`): conv, `ReLU`, conv, both "same" padded.
#[derive(Debug, Clone)]
pub struct FeedForward {
    conv_1: Conv,
    conv_2: Conv,
    kernel: usize,
}

impl FeedForward {
    /// Every convolution of the module, for choosing their CPU kernel.
    pub fn convs_mut(&mut self) -> Vec<&mut Conv> {
        vec![&mut self.conv_1, &mut self.conv_2]
    }

    pub fn load(ck: &Checkpoint, name: &str, device: &Device) -> Result<Self, VitsError> {
        let conv_1 = Conv::load(ck, &format!("{name}.conv_1"), device)?;
        let conv_2 = Conv::load(ck, &format!("{name}.conv_2"), device)?;
        let kernel = ck.get(&format!("{name}.conv_1.weight"))?.dims[2];
        Ok(Self {
            conv_1,
            conv_2,
            kernel,
        })
    }

    pub fn forward(&self, x: &Tensor) -> Result<Tensor, VitsError> {
        // The reference pads explicitly ((k-1)/2 left, k/2 right); the graph's convs pad nothing.
        let same = |y: &Tensor| y.pad_with_zeros(D::Minus1, (self.kernel - 1) / 2, self.kernel / 2);
        let h = self.conv_1.forward(&same(x)?)?.relu()?;
        self.conv_2.forward(&same(&h)?)
    }
}

/// `attentions.Encoder`: the layers in order.
#[derive(Debug, Clone)]
pub struct Encoder {
    layers: Vec<(RelativeAttention, ChannelNorm, FeedForward, ChannelNorm)>,
}

impl Encoder {
    /// Every convolution of the module, for choosing their CPU kernel.
    pub fn convs_mut(&mut self) -> Vec<&mut Conv> {
        self.layers
            .iter_mut()
            .flat_map(|(a, _, f, _)| {
                let mut v = a.convs_mut();
                v.extend(f.convs_mut());
                v
            })
            .collect()
    }

    pub fn load(ck: &Checkpoint, name: &str, device: &Device) -> Result<Self, VitsError> {
        let n = ck.count(&format!("{name}.attn_layers"));
        if n == 0 {
            return Err(VitsError::Weight {
                name: format!("{name}.attn_layers"),
                reason: "no layers".to_owned(),
            });
        }
        let layers = (0..n)
            .map(|i| {
                Ok((
                    RelativeAttention::load(ck, &format!("{name}.attn_layers.{i}"), device)?,
                    ChannelNorm::load(ck, &format!("{name}.norm_layers_1.{i}"), device)?,
                    FeedForward::load(ck, &format!("{name}.ffn_layers.{i}"), device)?,
                    ChannelNorm::load(ck, &format!("{name}.norm_layers_2.{i}"), device)?,
                ))
            })
            .collect::<Result<_, VitsError>>()?;
        Ok(Self { layers })
    }

    pub fn forward(&self, x: &Tensor) -> Result<Tensor, VitsError> {
        let mut x = x.clone();
        for (attn, norm_1, ffn, norm_2) in &self.layers {
            let y = attn.forward(&x)?;
            x = norm_1.forward(&(x + y)?)?;
            let y = ffn.forward(&x)?;
            x = norm_2.forward(&(x + y)?)?;
        }
        Ok(x)
    }
}
