//! The tensors a Kokoro-82M v1.0 port loads, by torch name and shape, enumerated from the
//! model's published configuration the way `kokoro` 0.9.4 builds its modules.
//!
//! The converter checks its output against this list: every name the graph walk produces
//! must be here with the same shape, and nothing here may be left unfound. Two kinds of
//! reference parameters are deliberately absent (`kokoro-port.md` §3): the `InstanceNorm`
//! affine pairs of every `AdaIN` (the checkpoint keeps them at ones/zeros and the graph has a
//! plain instance norm) and `bert.pooler` (its output is discarded). Weight-norm modules
//! appear once, as the folded `<module>.weight` with the `weight_v` shape, because the
//! export folded `g·v/‖v‖` into a single tensor.

/// Hyper-parameters from hexgrad Kokoro-82M `config.json` (plus `AlbertConfig` defaults).
const N_TOKEN: usize = 178;
const HIDDEN: usize = 512;
const STYLE: usize = 128;
const N_LAYER: usize = 3;
const MAX_DUR: usize = 50;
const TEXT_KERNEL: usize = 5;
const ALBERT_HIDDEN: usize = 768;
const ALBERT_INTERMEDIATE: usize = 2048;
const ALBERT_EMBEDDING: usize = 128;
const ALBERT_MAX_POSITIONS: usize = 512;
const ALBERT_TOKEN_TYPES: usize = 2;
const UPSAMPLE_INITIAL: usize = 512;
const UPSAMPLE_KERNELS: [usize; 2] = [20, 12];
const RESBLOCK_KERNELS: [usize; 3] = [3, 7, 11];
const NOISE_RES_KERNELS: [usize; 2] = [7, 11];
const NOISE_CONV_KERNELS: [usize; 2] = [12, 1];
const ISTFT_CHANNELS: usize = 22; // n_fft 20 → 11 bins, magnitude and phase
const HARMONICS: usize = 9;

/// The expected tensors, in the order the reference model declares them.
pub(crate) fn kokoro_v1_parameters() -> Vec<(String, Vec<usize>)> {
    let mut p = Params::default();
    p.bert();
    p.linear("bert_encoder", ALBERT_HIDDEN, HIDDEN);
    p.predictor();
    p.text_encoder();
    p.decoder();
    p.0
}

#[derive(Default)]
struct Params(Vec<(String, Vec<usize>)>);

impl Params {
    fn add(&mut self, name: impl Into<String>, shape: &[usize]) {
        self.0.push((name.into(), shape.to_vec()));
    }

    fn linear(&mut self, m: &str, input: usize, output: usize) {
        self.add(format!("{m}.weight"), &[output, input]);
        self.add(format!("{m}.bias"), &[output]);
    }

    fn conv(&mut self, m: &str, input: usize, output: usize, kernel: usize, bias: bool) {
        self.add(format!("{m}.weight"), &[output, input, kernel]);
        if bias {
            self.add(format!("{m}.bias"), &[output]);
        }
    }

    /// `ConvTranspose1d`: the weight is `[in, out/groups, k]`.
    fn conv_transpose(
        &mut self,
        m: &str,
        input: usize,
        output_per_group: usize,
        kernel: usize,
        bias_len: usize,
    ) {
        self.add(format!("{m}.weight"), &[input, output_per_group, kernel]);
        self.add(format!("{m}.bias"), &[bias_len]);
    }

    fn layer_norm(&mut self, m: &str, dim: usize) {
        self.add(format!("{m}.weight"), &[dim]);
        self.add(format!("{m}.bias"), &[dim]);
    }

    fn lstm(&mut self, m: &str, input: usize, hidden: usize) {
        for sfx in ["", "_reverse"] {
            self.add(format!("{m}.weight_ih_l0{sfx}"), &[4 * hidden, input]);
            self.add(format!("{m}.weight_hh_l0{sfx}"), &[4 * hidden, hidden]);
            self.add(format!("{m}.bias_ih_l0{sfx}"), &[4 * hidden]);
            self.add(format!("{m}.bias_hh_l0{sfx}"), &[4 * hidden]);
        }
    }

    /// `AdaIN1d`: only the style projection (the `InstanceNorm` affine is identity, see above).
    fn adain(&mut self, m: &str, channels: usize) {
        self.linear(&format!("{m}.fc"), STYLE, 2 * channels);
    }

    /// AdainResBlk1d(in, out), optionally with the depthwise transposed-conv upsampler.
    fn adain_res_blk(&mut self, m: &str, input: usize, output: usize, upsample: bool) {
        self.conv(&format!("{m}.conv1"), input, output, 3, true);
        self.conv(&format!("{m}.conv2"), output, output, 3, true);
        self.adain(&format!("{m}.norm1"), input);
        self.adain(&format!("{m}.norm2"), output);
        if input != output {
            self.conv(&format!("{m}.conv1x1"), input, output, 1, false);
        }
        if upsample {
            self.conv_transpose(&format!("{m}.pool"), input, 1, 3, input);
        }
    }

    /// `AdaINResBlock1` of the generator: three dilated conv pairs with `AdaIN` and Snake alphas.
    fn adain_res_block1(&mut self, m: &str, channels: usize, kernel: usize) {
        for convs in ["convs1", "convs2"] {
            for j in 0..3 {
                self.conv(
                    &format!("{m}.{convs}.{j}"),
                    channels,
                    channels,
                    kernel,
                    true,
                );
            }
        }
        for adain in ["adain1", "adain2"] {
            for j in 0..3 {
                self.adain(&format!("{m}.{adain}.{j}"), channels);
            }
        }
        for alpha in ["alpha1", "alpha2"] {
            for j in 0..3 {
                self.add(format!("{m}.{alpha}.{j}"), &[1, channels, 1]);
            }
        }
    }

    fn bert(&mut self) {
        let e = "bert.embeddings";
        self.add(
            format!("{e}.word_embeddings.weight"),
            &[N_TOKEN, ALBERT_EMBEDDING],
        );
        self.add(
            format!("{e}.position_embeddings.weight"),
            &[ALBERT_MAX_POSITIONS, ALBERT_EMBEDDING],
        );
        self.add(
            format!("{e}.token_type_embeddings.weight"),
            &[ALBERT_TOKEN_TYPES, ALBERT_EMBEDDING],
        );
        self.layer_norm(&format!("{e}.LayerNorm"), ALBERT_EMBEDDING);
        self.linear(
            "bert.encoder.embedding_hidden_mapping_in",
            ALBERT_EMBEDDING,
            ALBERT_HIDDEN,
        );
        let l = "bert.encoder.albert_layer_groups.0.albert_layers.0";
        self.layer_norm(&format!("{l}.full_layer_layer_norm"), ALBERT_HIDDEN);
        for proj in ["query", "key", "value", "dense"] {
            self.linear(
                &format!("{l}.attention.{proj}"),
                ALBERT_HIDDEN,
                ALBERT_HIDDEN,
            );
        }
        self.layer_norm(&format!("{l}.attention.LayerNorm"), ALBERT_HIDDEN);
        self.linear(&format!("{l}.ffn"), ALBERT_HIDDEN, ALBERT_INTERMEDIATE);
        self.linear(
            &format!("{l}.ffn_output"),
            ALBERT_INTERMEDIATE,
            ALBERT_HIDDEN,
        );
    }

    fn predictor(&mut self) {
        let d = HIDDEN + STYLE;
        for k in 0..N_LAYER {
            self.lstm(
                &format!("predictor.text_encoder.lstms.{}", 2 * k),
                d,
                HIDDEN / 2,
            );
            self.adain(
                &format!("predictor.text_encoder.lstms.{}", 2 * k + 1),
                HIDDEN,
            );
        }
        self.lstm("predictor.lstm", d, HIDDEN / 2);
        self.linear("predictor.duration_proj.linear_layer", HIDDEN, MAX_DUR);
        self.lstm("predictor.shared", d, HIDDEN / 2);
        for branch in ["F0", "N"] {
            self.adain_res_blk(&format!("predictor.{branch}.0"), HIDDEN, HIDDEN, false);
            self.adain_res_blk(&format!("predictor.{branch}.1"), HIDDEN, HIDDEN / 2, true);
            self.adain_res_blk(
                &format!("predictor.{branch}.2"),
                HIDDEN / 2,
                HIDDEN / 2,
                false,
            );
        }
        for proj in ["F0_proj", "N_proj"] {
            self.conv(&format!("predictor.{proj}"), HIDDEN / 2, 1, 1, true);
        }
    }

    fn text_encoder(&mut self) {
        self.add("text_encoder.embedding.weight", &[N_TOKEN, HIDDEN]);
        for k in 0..N_LAYER {
            self.conv(
                &format!("text_encoder.cnn.{k}.0"),
                HIDDEN,
                HIDDEN,
                TEXT_KERNEL,
                true,
            );
            self.add(format!("text_encoder.cnn.{k}.1.gamma"), &[HIDDEN]);
            self.add(format!("text_encoder.cnn.{k}.1.beta"), &[HIDDEN]);
        }
        self.lstm("text_encoder.lstm", HIDDEN, HIDDEN / 2);
    }

    fn decoder(&mut self) {
        let asr_res = 64;
        let cat = 1024 + 2 + asr_res;
        self.adain_res_blk("decoder.encode", HIDDEN + 2, 1024, false);
        for k in 0..3 {
            self.adain_res_blk(&format!("decoder.decode.{k}"), cat, 1024, false);
        }
        self.adain_res_blk("decoder.decode.3", cat, HIDDEN, true);
        self.conv("decoder.F0_conv", 1, 1, 3, true);
        self.conv("decoder.N_conv", 1, 1, 3, true);
        self.conv("decoder.asr_res.0", HIDDEN, asr_res, 1, true);

        let g = "decoder.generator";
        self.linear(&format!("{g}.m_source.l_linear"), HARMONICS, 1);
        let stage_channels = |i: usize| UPSAMPLE_INITIAL >> (i + 1);
        for (i, k) in NOISE_CONV_KERNELS.into_iter().enumerate() {
            self.conv(
                &format!("{g}.noise_convs.{i}"),
                ISTFT_CHANNELS,
                stage_channels(i),
                k,
                true,
            );
        }
        for (i, k) in NOISE_RES_KERNELS.into_iter().enumerate() {
            self.adain_res_block1(&format!("{g}.noise_res.{i}"), stage_channels(i), k);
        }
        for (i, k) in UPSAMPLE_KERNELS.into_iter().enumerate() {
            let (input, output) = (UPSAMPLE_INITIAL >> i, stage_channels(i));
            self.conv_transpose(&format!("{g}.ups.{i}"), input, output, k, output);
        }
        for i in 0..UPSAMPLE_KERNELS.len() {
            for (j, k) in RESBLOCK_KERNELS.into_iter().enumerate() {
                self.adain_res_block1(
                    &format!("{g}.resblocks.{}", i * 3 + j),
                    stage_channels(i),
                    k,
                );
            }
        }
        let last = stage_channels(UPSAMPLE_KERNELS.len() - 1);
        self.conv(&format!("{g}.conv_post"), last, ISTFT_CHANNELS, 7, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_port_tensor_count() {
        let p = kokoro_v1_parameters();
        // kokoro-port.md §2b: 457 tensors, 81.14 M values (688 reference parameters minus
        // 142 absent ones, with each of the 89 g/v pairs folded into one weight).
        assert_eq!(p.len(), 457);
        let values: usize = p.iter().map(|(_, s)| s.iter().product::<usize>()).sum();
        assert_eq!(values, 81_140_664);
        let mut names: Vec<&str> = p.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 457, "names are unique");
    }

    #[test]
    fn spot_check_shapes() {
        let p: std::collections::HashMap<_, _> = kokoro_v1_parameters().into_iter().collect();
        let shape = |n: &str| p.get(n).cloned();
        assert_eq!(
            shape("decoder.decode.3.pool.weight"),
            Some(vec![1090, 1, 3])
        );
        assert_eq!(shape("decoder.decode.3.pool.bias"), Some(vec![1090]));
        assert_eq!(
            shape("decoder.generator.ups.0.weight"),
            Some(vec![512, 256, 20])
        );
        assert_eq!(
            shape("decoder.generator.noise_convs.0.weight"),
            Some(vec![256, 22, 12])
        );
        assert_eq!(
            shape("decoder.encode.conv1x1.weight"),
            Some(vec![1024, 514, 1])
        );
        assert_eq!(shape("decoder.encode.conv1x1.bias"), None);
        assert_eq!(
            shape("predictor.text_encoder.lstms.1.fc.weight"),
            Some(vec![1024, 128])
        );
        assert_eq!(
            shape("predictor.shared.weight_ih_l0_reverse"),
            Some(vec![1024, 640])
        );
        assert_eq!(
            shape("decoder.generator.resblocks.5.alpha2.2"),
            Some(vec![1, 128, 1])
        );
        assert_eq!(shape("bert.pooler.weight"), None);
        assert_eq!(shape("decoder.encode.norm1.norm.weight"), None);
    }
}
