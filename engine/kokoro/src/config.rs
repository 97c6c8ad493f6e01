//! Hyper-parameters of Kokoro-82M, mirroring the published `config.json`.
//!
//! The field names are the JSON keys, so a `config.json` from the model repository (or the copy
//! kokoro-onnx ships) deserialises directly; unknown keys such as `vocab` are ignored because the
//! phoneme vocabulary belongs to the engine's `phonemes`. [`Default`] gives the Kokoro-82M v1.0 values,
//! so the engine needs no JSON at run time. ALBERT settings the JSON leaves out take the
//! `transformers.AlbertConfig` defaults the reference relies on.

use serde::Deserialize;

/// Output sample rate of the iSTFTNet decoder (hard-coded in the reference `istftnet.py`).
pub const SAMPLE_RATE: u32 = 24_000;

/// Largest number of phoneme ids per call, without the two boundary pads
/// (`max_position_embeddings` 512 minus the pads).
pub const MAX_PHONEMES: usize = 510;

/// Slowest and fastest speed factor the model accepts (kokoro-onnx's limits): durations are
/// divided by it. Scripts may write a wider range (the `script` crate's `WRITTEN_SPEED_RANGE`),
/// which rendering clamps into this one.
pub const SPEED_RANGE: std::ops::RangeInclusive<f32> = 0.5..=2.0;

/// Id of the pad/boundary token added before and after every phoneme sequence.
pub const PAD_ID: u32 = 0;

/// The whole model configuration (`config.json`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct KokoroConfig {
    /// Size of the phoneme-id vocabulary (ids `0..n_token`; 0 is the pad).
    pub n_token: usize,
    /// Width of the text encoder and prosody predictor.
    pub hidden_dim: usize,
    /// Width of each half of a voice style vector (the full vector is `2 * style_dim`).
    pub style_dim: usize,
    /// Text-encoder CNN depth and number of duration-encoder LSTMs.
    pub n_layer: usize,
    pub text_encoder_kernel_size: usize,
    /// Number of duration bins the duration projection outputs.
    pub max_dur: usize,
    /// Passed to the decoder as `dim_out`; no parameter depends on it.
    pub n_mels: usize,
    /// Training-time dropout; inference ignores it.
    pub dropout: f64,
    pub dim_in: usize,
    pub max_conv_dim: usize,
    pub multispeaker: bool,
    pub plbert: PlbertConfig,
    pub istftnet: IstftNetConfig,
}

/// The ALBERT phoneme encoder ("PL-BERT"): the `plbert` section plus the `AlbertConfig` defaults.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct PlbertConfig {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    /// How many times the single shared layer is applied.
    pub num_hidden_layers: usize,
    pub dropout: f64,
    /// Width of the factorised embeddings before `embedding_hidden_mapping_in`.
    pub embedding_size: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
}

/// The iSTFTNet decoder settings (`istftnet` section).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct IstftNetConfig {
    pub upsample_rates: Vec<usize>,
    pub upsample_kernel_sizes: Vec<usize>,
    pub upsample_initial_channel: usize,
    pub resblock_kernel_sizes: Vec<usize>,
    pub resblock_dilation_sizes: Vec<Vec<usize>>,
    pub gen_istft_n_fft: usize,
    pub gen_istft_hop_size: usize,
}

impl Default for KokoroConfig {
    fn default() -> Self {
        Self {
            n_token: 178,
            hidden_dim: 512,
            style_dim: 128,
            n_layer: 3,
            text_encoder_kernel_size: 5,
            max_dur: 50,
            n_mels: 80,
            dropout: 0.2,
            dim_in: 64,
            max_conv_dim: 512,
            multispeaker: true,
            plbert: PlbertConfig::default(),
            istftnet: IstftNetConfig::default(),
        }
    }
}

impl Default for PlbertConfig {
    fn default() -> Self {
        Self {
            hidden_size: 768,
            num_attention_heads: 12,
            intermediate_size: 2048,
            max_position_embeddings: 512,
            num_hidden_layers: 12,
            dropout: 0.1,
            embedding_size: 128,
            type_vocab_size: 2,
            layer_norm_eps: 1e-12,
        }
    }
}

impl Default for IstftNetConfig {
    fn default() -> Self {
        Self {
            upsample_rates: vec![10, 6],
            upsample_kernel_sizes: vec![20, 12],
            upsample_initial_channel: 512,
            resblock_kernel_sizes: vec![3, 7, 11],
            resblock_dilation_sizes: vec![vec![1, 3, 5], vec![1, 3, 5], vec![1, 3, 5]],
            gen_istft_n_fft: 20,
            gen_istft_hop_size: 5,
        }
    }
}

impl KokoroConfig {
    /// Width of a full voice style vector: decoder half then predictor half.
    #[must_use]
    pub fn style_width(&self) -> usize {
        2 * self.style_dim
    }

    /// Largest token sequence ALBERT accepts, pads included.
    #[must_use]
    pub fn max_tokens(&self) -> usize {
        self.plbert.max_position_embeddings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published config.json (vocab left out) must deserialise to exactly the defaults.
    #[test]
    fn published_json_equals_default() {
        let json = r#"{
            "istftnet": {"upsample_kernel_sizes": [20, 12], "upsample_rates": [10, 6],
                "gen_istft_hop_size": 5, "gen_istft_n_fft": 20,
                "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
                "resblock_kernel_sizes": [3, 7, 11], "upsample_initial_channel": 512},
            "dim_in": 64, "dropout": 0.2, "hidden_dim": 512, "max_conv_dim": 512, "max_dur": 50,
            "multispeaker": true, "n_layer": 3, "n_mels": 80, "n_token": 178, "style_dim": 128,
            "text_encoder_kernel_size": 5,
            "plbert": {"hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 2048,
                "max_position_embeddings": 512, "num_hidden_layers": 12, "dropout": 0.1},
            "vocab": {";": 1, ":": 2}
        }"#;
        let cfg: KokoroConfig = serde_json::from_str(json).expect("valid json");
        assert_eq!(cfg, KokoroConfig::default());
        assert_eq!(cfg.style_width(), 256);
        assert_eq!(cfg.max_tokens(), MAX_PHONEMES + 2);
    }

    #[test]
    fn hop_matches_sample_rate_frame() {
        // One predicted frame is 25 ms: 2 (F0 upsample) * prod(upsample_rates) * hop = 600 samples.
        let cfg = IstftNetConfig::default();
        let up: usize = cfg.upsample_rates.iter().product();
        assert_eq!(2 * up * cfg.gen_istft_hop_size * 40, SAMPLE_RATE as usize);
    }
}
