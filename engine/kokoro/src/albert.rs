//! ALBERT, the phoneme-level language model ("PL-BERT") at the front of Kokoro's prosody path.
//!
//! Reference: `transformers.AlbertModel` as configured by kokoro 0.9.4 (`CustomAlbert`, which
//! returns `last_hidden_state`). Factorised embeddings (128 wide) are mapped to the hidden size
//! (768), then one shared transformer layer is applied `num_hidden_layers` (12) times: ALBERT's
//! cross-layer parameter sharing, which is why the checkpoint has a single
//! `albert_layer_groups.0.albert_layers.0`. Activation is `gelu_new` (tanh approximation), every
//! `LayerNorm` uses eps 1e-12. The pooler is not loaded: Kokoro never uses it.

// candle's convention is `new(cfg, vb: VarBuilder)`; the builder is cheap to clone and the
// by-value signature keeps call sites as `Block::new(.., vb.pp("name"))`.
#![allow(clippy::needless_pass_by_value)]

use candle_core::{DType, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, VarBuilder};

use super::dense::Dense;

use super::config::PlbertConfig;
use crate::cpu_kernels::CpuKernel;

/// `bert.embeddings`: word + position + token-type embeddings, then `LayerNorm`.
#[derive(Debug, Clone)]
struct AlbertEmbeddings {
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    layer_norm: LayerNorm,
}

impl AlbertEmbeddings {
    fn new(cfg: &PlbertConfig, vocab_size: usize, vb: VarBuilder) -> Result<Self> {
        let e = cfg.embedding_size;
        Ok(Self {
            word: candle_nn::embedding(vocab_size, e, vb.pp("word_embeddings"))?,
            position: candle_nn::embedding(
                cfg.max_position_embeddings,
                e,
                vb.pp("position_embeddings"),
            )?,
            token_type: candle_nn::embedding(
                cfg.type_vocab_size,
                e,
                vb.pp("token_type_embeddings"),
            )?,
            layer_norm: candle_nn::layer_norm(e, cfg.layer_norm_eps, vb.pp("LayerNorm"))?,
        })
    }

    /// `ids` `[B, T]` (u32) → `[B, T, embedding_size]`; positions `0..T`, token type 0.
    fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        let (_b, t) = ids.dims2()?;
        let positions = Tensor::arange(0u32, t as u32, ids.device())?.unsqueeze(0)?;
        let types = positions.zeros_like()?;
        let x = self
            .word
            .forward(ids)?
            .broadcast_add(&self.position.forward(&positions)?)?
            .broadcast_add(&self.token_type.forward(&types)?)?;
        self.layer_norm.forward(&x)
    }

    /// Packed items: `ids` `[N]` (u32, the items' ids one after another), item `b` of
    /// `lengths[b]` ids → `[N, embedding_size]`, each item's positions counted from 0.
    fn forward_packed(&self, ids: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        let positions: Vec<u32> = lengths
            .iter()
            .flat_map(|&len| 0..u32::try_from(len).unwrap_or(u32::MAX))
            .collect();
        let positions = Tensor::from_vec(positions, ids.dims1()?, ids.device())?;
        let types = positions.zeros_like()?;
        let x = ((self.word.forward(ids)? + self.position.forward(&positions)?)?
            + self.token_type.forward(&types)?)?;
        self.layer_norm.forward(&x)
    }
}

/// The shared layer `albert_layer_groups.0.albert_layers.0`: self-attention then feed-forward,
/// each with a residual connection and a post-`LayerNorm`.
#[derive(Debug, Clone)]
struct AlbertLayer {
    query: Dense,
    key: Dense,
    value: Dense,
    dense: Dense,
    attention_norm: LayerNorm,
    ffn: Dense,
    ffn_output: Dense,
    full_layer_norm: LayerNorm,
    num_heads: usize,
    head_dim: usize,
}

impl AlbertLayer {
    fn new(cfg: &PlbertConfig, vb: VarBuilder) -> Result<Self> {
        let h = cfg.hidden_size;
        if cfg.num_attention_heads == 0 || !h.is_multiple_of(cfg.num_attention_heads) {
            candle_core::bail!(
                "ALBERT hidden size {h} is not a multiple of {} heads",
                cfg.num_attention_heads
            );
        }
        let att = vb.pp("attention");
        Ok(Self {
            query: Dense::new(h, h, att.pp("query"))?,
            key: Dense::new(h, h, att.pp("key"))?,
            value: Dense::new(h, h, att.pp("value"))?,
            dense: Dense::new(h, h, att.pp("dense"))?,
            attention_norm: candle_nn::layer_norm(h, cfg.layer_norm_eps, att.pp("LayerNorm"))?,
            ffn: Dense::new(h, cfg.intermediate_size, vb.pp("ffn"))?,
            ffn_output: Dense::new(cfg.intermediate_size, h, vb.pp("ffn_output"))?,
            full_layer_norm: candle_nn::layer_norm(
                h,
                cfg.layer_norm_eps,
                vb.pp("full_layer_layer_norm"),
            )?,
            num_heads: cfg.num_attention_heads,
            head_dim: h / cfg.num_attention_heads,
        })
    }

    /// Switches the layer's products to bfloat16 where possible; returns how many switched.
    fn use_bf16(&mut self, kernel: CpuKernel) -> Result<usize> {
        let mut n = 0;
        for d in [
            &mut self.query,
            &mut self.key,
            &mut self.value,
            &mut self.dense,
            &mut self.ffn,
            &mut self.ffn_output,
        ] {
            n += usize::from(d.use_bf16(kernel)?);
        }
        Ok(n)
    }

    /// Packed items: `x` `[N, H]`, item `b` the `spans[b] = (start, len)` rows → `[N, H]`.
    /// Every product but the attention itself runs on all `N` rows at once; each item attends
    /// only within its own rows, so nothing is padded and nothing needs masking.
    fn forward_packed(&self, x: &Tensor, spans: &[(usize, usize)]) -> Result<Tensor> {
        let (q, k, v) = (
            self.query.forward(x)?,
            self.key.forward(x)?,
            self.value.forward(x)?,
        );
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let contexts = spans
            .iter()
            .map(|&(start, len)| {
                let heads = |t: &Tensor| -> Result<Tensor> {
                    t.narrow(0, start, len)?
                        .reshape((len, self.num_heads, self.head_dim))?
                        .transpose(0, 1)?
                        .contiguous()
                };
                let (q, k, v) = (heads(&q)?, heads(&k)?, heads(&v)?);
                let probs = candle_nn::ops::softmax_last_dim(&(q.matmul(&k.t()?)? * scale)?)?;
                probs
                    .matmul(&v)?
                    .transpose(0, 1)?
                    .reshape((len, self.num_heads * self.head_dim))
            })
            .collect::<Result<Vec<_>>>()?;
        let context = Tensor::cat(&contexts, 0)?;
        self.finish(x, &context)
    }

    /// After attention, shared by both layouts: the output projection, residual and norm,
    /// then the feed-forward block with its residual and norm (`x`, `context` same shape).
    fn finish(&self, x: &Tensor, context: &Tensor) -> Result<Tensor> {
        let attended = self
            .attention_norm
            .forward(&(x + self.dense.forward(context)?)?)?;
        let ff = self
            .ffn_output
            .forward(&gelu_new(&self.ffn.forward(&attended)?)?)?;
        self.full_layer_norm.forward(&(ff + attended)?)
    }

    /// `[B, T, H]` → `[B, T, H]`; `mask_bias` is `[B, 1, 1, T]` (0 keep, very negative drop).
    fn forward(&self, x: &Tensor, mask_bias: Option<&Tensor>) -> Result<Tensor> {
        let (b, t, _) = x.dims3()?;
        let heads = |lin: &Dense| -> Result<Tensor> {
            lin.forward(x)?
                .reshape((b, t, self.num_heads, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = heads(&self.query)?;
        let k = heads(&self.key)?;
        let v = heads(&self.value)?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let mut scores = (q.matmul(&k.t()?)? * scale)?;
        if let Some(mask) = mask_bias {
            scores = scores.broadcast_add(mask)?;
        }
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context =
            probs
                .matmul(&v)?
                .transpose(1, 2)?
                .reshape((b, t, self.num_heads * self.head_dim))?;
        self.finish(x, &context)
    }
}

/// The ALBERT encoder as Kokoro uses it (`bert.*`): ids → last hidden state.
#[derive(Debug, Clone)]
pub struct Albert {
    embeddings: AlbertEmbeddings,
    mapping_in: Dense,
    layer: AlbertLayer,
    num_hidden_layers: usize,
    max_positions: usize,
}

impl Albert {
    /// Switches the shared layer's and the input mapping's products to bfloat16 where the
    /// CPU can (see [`crate::cpu_kernels`]); returns how many layers switched.
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> Result<usize> {
        Ok(self.layer.use_bf16(kernel)? + usize::from(self.mapping_in.use_bf16(kernel)?))
    }

    /// `vb` points at `bert`.
    pub fn new(cfg: &PlbertConfig, vocab_size: usize, vb: VarBuilder) -> Result<Self> {
        let enc = vb.pp("encoder");
        Ok(Self {
            embeddings: AlbertEmbeddings::new(cfg, vocab_size, vb.pp("embeddings"))?,
            mapping_in: Dense::new(
                cfg.embedding_size,
                cfg.hidden_size,
                enc.pp("embedding_hidden_mapping_in"),
            )?,
            layer: AlbertLayer::new(cfg, enc.pp("albert_layer_groups.0").pp("albert_layers.0"))?,
            num_hidden_layers: cfg.num_hidden_layers,
            max_positions: cfg.max_position_embeddings,
        })
    }

    /// `ids` `[B, T]` (u32) → `[B, T, hidden]`.
    ///
    /// `attention_mask` is `[B, T]` with 1 for real tokens and 0 for padding (any dtype), as in
    /// `transformers`; `None` means every position is real (Kokoro's batch-1 case).
    pub fn forward(&self, ids: &Tensor, attention_mask: Option<&Tensor>) -> Result<Tensor> {
        let (_b, t) = ids.dims2()?;
        if t > self.max_positions {
            candle_core::bail!(
                "ALBERT got {t} tokens, more than its {} positions",
                self.max_positions
            );
        }
        let mask_bias = attention_mask.map(mask_to_bias).transpose()?;
        let mut x = self.mapping_in.forward(&self.embeddings.forward(ids)?)?;
        for _ in 0..self.num_hidden_layers {
            x = self.layer.forward(&x, mask_bias.as_ref())?;
        }
        Ok(x)
    }

    /// Several items without padding: `ids` `[N]` (u32), item `b` the next `lengths[b]` ids →
    /// `[N, hidden]`, each item's rows as [`Self::forward`] computes them alone. On the CPU
    /// this beats a padded batch: the products cost per row, and padding rows are waste.
    pub fn forward_packed(&self, ids: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        let n = ids.dims1()?;
        if lengths.iter().sum::<usize>() != n {
            candle_core::bail!("ALBERT got {n} packed ids for lengths {lengths:?}");
        }
        if let Some(&long) = lengths.iter().find(|&&t| t > self.max_positions) {
            candle_core::bail!(
                "ALBERT got {long} tokens, more than its {} positions",
                self.max_positions
            );
        }
        let spans: Vec<(usize, usize)> = lengths
            .iter()
            .scan(0, |start, &len| {
                let span = (*start, len);
                *start += len;
                Some(span)
            })
            .collect();
        let mut x = self
            .mapping_in
            .forward(&self.embeddings.forward_packed(ids, lengths)?)?;
        for _ in 0..self.num_hidden_layers {
            x = self.layer.forward_packed(&x, &spans)?;
        }
        Ok(x)
    }
}

/// transformers' `gelu_new`: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
///
/// On the CPU this is computed as the identical `x·σ(2z)` on the pool
/// ([`super::elementwise::map`]): candle's `gelu` (same formula) calls `tanhf` per element and
/// costs ~12× more, which made it a sixth of ALBERT's time. Elsewhere candle's own
/// (tanh-approximation) `gelu` runs.
fn gelu_new(x: &Tensor) -> Result<Tensor> {
    // 2·√(2/π), because σ(2z) = (1 + tanh z) / 2.
    const TWO_SQRT_2_OVER_PI: f32 = 1.595_769_2;
    let gelu = |e: f32| {
        let z2 = TWO_SQRT_2_OVER_PI * e * (1.0 + 0.044_715 * e * e);
        e / (1.0 + (-z2).exp())
    };
    // `map` declines only what is not an f32 CPU tensor once contiguous.
    match super::elementwise::map(&x.contiguous()?, gelu)? {
        Some(y) => Ok(y),
        None => x.gelu(),
    }
}

/// `[B, T]` keep-mask → additive `[B, 1, 1, T]` bias: 0 where kept, `f32::MIN` where masked
/// (transformers uses the dtype's minimum too).
fn mask_to_bias(mask: &Tensor) -> Result<Tensor> {
    let (b, t) = mask.dims2()?;
    let min = f64::from(f32::MIN);
    // (1 - keep) * MIN, written as one affine map: keep * (-MIN) + MIN.
    mask.to_dtype(DType::F32)?
        .affine(-min, min)?
        .reshape((b, 1, 1, t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    fn tiny() -> PlbertConfig {
        PlbertConfig {
            hidden_size: 8,
            num_attention_heads: 2,
            intermediate_size: 16,
            max_position_embeddings: 10,
            num_hidden_layers: 3,
            embedding_size: 4,
            ..PlbertConfig::default()
        }
    }

    /// A tiny ALBERT with random weights (a `VarMap` initialises variables on first use).
    fn random_model(dev: &Device) -> Result<Albert> {
        let map = candle_nn::VarMap::new();
        Albert::new(&tiny(), 7, VarBuilder::from_varmap(&map, DType::F32, dev))
    }

    /// Masking the padded tail must leave the real positions exactly as an unpadded run.
    #[test]
    fn mask_hides_padding() -> Result<()> {
        let dev = Device::Cpu;
        let model = random_model(&dev)?;
        let short = Tensor::new(&[[0u32, 3, 5, 0]], &dev)?;
        let padded = Tensor::new(&[[0u32, 3, 5, 0, 0, 0]], &dev)?;
        let mask = Tensor::new(&[[1u32, 1, 1, 1, 0, 0]], &dev)?;
        let a = model.forward(&short, None)?;
        let b = model.forward(&padded, Some(&mask))?.narrow(1, 0, 4)?;
        let d = (a - b)?.abs()?.flatten_all()?.max(0)?.to_scalar::<f32>()?;
        assert!(d < 1e-5, "max diff {d}");
        // Without the mask the padding does leak into the real positions.
        let c = model.forward(&padded, None)?.narrow(1, 0, 4)?;
        let leak = (model.forward(&short, None)? - c)?
            .abs()?
            .flatten_all()?
            .max(0)?;
        assert!(leak.to_scalar::<f32>()? > 1e-4);
        Ok(())
    }

    /// Packed items come out as each does alone.
    #[test]
    fn packed_equals_each_alone() -> Result<()> {
        let dev = Device::Cpu;
        let model = random_model(&dev)?;
        let items: [&[u32]; 3] = [&[0, 3, 5, 0], &[0, 6, 0], &[0, 1, 2, 3, 4, 5, 6, 0]];
        let lengths: Vec<usize> = items.iter().map(|i| i.len()).collect();
        let flat: Vec<u32> = items.concat();
        // Too long an item for the positions is refused, like the padded path.
        assert!(model
            .forward_packed(&Tensor::zeros(11, DType::U32, &dev)?, &[11])
            .is_err());
        let packed = model.forward_packed(&Tensor::new(flat.as_slice(), &dev)?, &lengths)?;
        let mut start = 0;
        for item in items {
            let alone = model.forward(&Tensor::new(item, &dev)?.unsqueeze(0)?, None)?;
            let got = packed.narrow(0, start, item.len())?;
            let d = (alone.squeeze(0)? - got)?
                .abs()?
                .flatten_all()?
                .max(0)?
                .to_scalar::<f32>()?;
            assert!(d < 1e-5, "max diff {d}");
            start += item.len();
        }
        Ok(())
    }

    #[test]
    fn host_gelu_equals_candle_gelu() -> Result<()> {
        let dev = Device::Cpu;
        let edges = Tensor::new(&[[-30f32, -10.0, 0.0, 1e-8, 10.0, 30.0]], &dev)?;
        let x = Tensor::cat(&[Tensor::randn(0f32, 3.0, (1, 4000), &dev)?, edges], 1)?;
        let d = (gelu_new(&x)? - x.gelu()?)?
            .abs()?
            .flatten_all()?
            .max(0)?
            .to_scalar::<f32>()?;
        assert!(d < 1e-5, "max diff {d}");
        Ok(())
    }

    #[test]
    fn too_many_tokens_is_an_error() -> Result<()> {
        let dev = Device::Cpu;
        let model = random_model(&dev)?;
        let ids = Tensor::zeros((1, 11), DType::U32, &dev)?;
        assert!(model.forward(&ids, None).is_err());
        Ok(())
    }
}
