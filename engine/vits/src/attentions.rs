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
        let mut scores = q.matmul(&k.transpose(1, 2)?.contiguous()?)?; // [h, t, t]
        let band = Band::new(t, self.window, x.device())?;
        // q · rel_k for every offset: [h, t, span], added on its diagonal.
        let rel_logits = q.broadcast_matmul(&self.rel_k.t()?.contiguous()?)?;
        scores = (scores + band.spread(&rel_logits)?)?;
        let p = candle_nn::ops::softmax_last_dim(&scores)?;
        let mut out = p.matmul(&v)?; // [h, t, d]
        let rel_weights = band.gather(&p)?; // [h, t, span]
        out = (out + rel_weights.broadcast_matmul(&self.rel_v)?)?;
        let out = out.transpose(1, 2)?.reshape((1, channels, t))?;
        self.o.forward(&out)
    }
}

/// The `2·window + 1` diagonals around the main one of a `t × t` matrix, as 0/1 masks
/// `[span, t, t]`: entry `(r, i, j)` is 1 where `j - i = r - window`.
struct Band {
    masks: Tensor,
    span: usize,
}

impl Band {
    fn new(t: usize, window: usize, device: &Device) -> Result<Self, VitsError> {
        let span = 2 * window + 1;
        let mut m = vec![0f32; span * t * t];
        for r in 0..span {
            for i in 0..t {
                let j = i as isize + r as isize - window as isize;
                if (0..t as isize).contains(&j) {
                    m[(r * t + i) * t + j as usize] = 1.0;
                }
            }
        }
        Ok(Self {
            masks: Tensor::from_vec(m, (span, t, t), device)?,
            span,
        })
    }

    /// `[h, t, span]` → `[h, t, t]`, value `(h, i, r)` placed at column `i + r - window`.
    fn spread(&self, rel: &Tensor) -> Result<Tensor, VitsError> {
        let mut acc: Option<Tensor> = None;
        for r in 0..self.span {
            let col = rel.narrow(D::Minus1, r, 1)?; // [h, t, 1]
            let term = col.broadcast_mul(&self.masks.get(r)?.unsqueeze(0)?)?;
            acc = Some(match acc {
                Some(a) => (a + term)?,
                None => term,
            });
        }
        acc.ok_or_else(|| VitsError::Input("empty band".to_owned()))
    }

    /// `[h, t, t]` → `[h, t, span]`: the band's entries of each row.
    fn gather(&self, p: &Tensor) -> Result<Tensor, VitsError> {
        let cols = (0..self.span)
            .map(|r| {
                p.broadcast_mul(&self.masks.get(r)?.unsqueeze(0)?)?
                    .sum_keepdim(D::Minus1)
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Tensor::cat(&cols, D::Minus1)?)
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
