//! A tiny VITS with random weights, in the shape of a Piper export (every module, both residual
//! block kinds' layout rules, the duration flows, a speaker table when asked), for tests of the
//! structure, the windowed decode and the multi-speaker path that need no model file. The real
//! voice is checked against onnxruntime in the e2e tests; this checks what no public voice can:
//! a multi-speaker model, and streaming on a model of another shape.

use candle_core::Device;

use crate::checkpoint::{Checkpoint, ConvAttrs, Param, DP_EXP_NEG_LOGS};
use crate::config::Inference;
use crate::model::{Noise, Vits, DECODE_CONTEXT};

const HIDDEN: usize = 16;
const INTER: usize = 8;
const FILTER: usize = 24;
const HEADS: usize = 2;
const WINDOW: usize = 4;
const SYMBOLS: usize = 40;
const UPSAMPLE: usize = 16;
const GIN: usize = 6;

/// Builds the checkpoint of a tiny random model (`speakers` > 1 adds the speaker table and the
/// conditioning layers).
struct Builder {
    ck: Checkpoint,
    state: u64,
}

impl Builder {
    fn new(seed: u64) -> Self {
        Self {
            ck: Checkpoint::default(),
            state: seed,
        }
    }

    fn random(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n)
            .map(|_| {
                self.state = self
                    .state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((self.state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 2.0 * scale
            })
            .collect()
    }

    fn param(&mut self, name: &str, dims: &[usize], scale: f32) {
        let n = dims.iter().product();
        let data = self.random(n, scale);
        self.ck.params.insert(
            name.to_owned(),
            Param {
                dims: dims.to_vec(),
                data,
            },
        );
    }

    fn ones(&mut self, name: &str, n: usize, v: f32) {
        self.ck.params.insert(
            name.to_owned(),
            Param {
                dims: vec![n],
                data: vec![v; n],
            },
        );
    }

    /// A conv `[out, in/groups, k]` with "same" padding at `dilation`.
    fn conv(
        &mut self,
        name: &str,
        out: usize,
        inp: usize,
        k: usize,
        dilation: usize,
        groups: usize,
    ) {
        let scale = 1.0 / ((inp / groups * k) as f32).sqrt();
        self.param(&format!("{name}.weight"), &[out, inp / groups, k], scale);
        self.param(&format!("{name}.bias"), &[out], 0.1);
        let pad = (k - 1) * dilation / 2;
        self.ck.convs.insert(
            name.to_owned(),
            ConvAttrs {
                pad_left: pad,
                pad_right: pad,
                dilation,
                stride: 1,
                groups,
                transposed: false,
            },
        );
    }

    fn norm(&mut self, name: &str, n: usize) {
        self.ones(&format!("{name}.gamma"), n, 1.0);
        self.ones(&format!("{name}.beta"), n, 0.0);
    }

    fn dds(&mut self, name: &str, layers: usize) {
        for j in 0..layers {
            let d = 3usize.pow(j as u32);
            self.conv(
                &format!("{name}.convs_sep.{j}"),
                HIDDEN,
                HIDDEN,
                3,
                d,
                HIDDEN,
            );
            self.conv(&format!("{name}.convs_1x1.{j}"), HIDDEN, HIDDEN, 1, 1, 1);
            self.norm(&format!("{name}.norms_1.{j}"), HIDDEN);
            self.norm(&format!("{name}.norms_2.{j}"), HIDDEN);
        }
    }

    fn build(mut self, speakers: usize) -> Checkpoint {
        let g = speakers > 1;
        self.param("enc_p.emb.weight", &[SYMBOLS, HIDDEN], 0.3);
        for i in 0..2 {
            let a = format!("enc_p.encoder.attn_layers.{i}");
            for c in ["conv_q", "conv_k", "conv_v", "conv_o"] {
                self.conv(&format!("{a}.{c}"), HIDDEN, HIDDEN, 1, 1, 1);
            }
            let span = 2 * WINDOW + 1;
            self.param(&format!("{a}.emb_rel_k"), &[1, span, HIDDEN / HEADS], 0.3);
            self.param(&format!("{a}.emb_rel_v"), &[1, span, HIDDEN / HEADS], 0.3);
            self.norm(&format!("enc_p.encoder.norm_layers_1.{i}"), HIDDEN);
            self.norm(&format!("enc_p.encoder.norm_layers_2.{i}"), HIDDEN);
            let f = format!("enc_p.encoder.ffn_layers.{i}");
            // the reference pads the feed-forward convs itself: the graph's pad nothing
            self.conv(&format!("{f}.conv_1"), FILTER, HIDDEN, 3, 1, 1);
            self.conv(&format!("{f}.conv_2"), HIDDEN, FILTER, 3, 1, 1);
            for c in ["conv_1", "conv_2"] {
                if let Some(a) = self.ck.convs.get_mut(&format!("{f}.{c}")) {
                    a.pad_left = 0;
                    a.pad_right = 0;
                }
            }
        }
        self.conv("enc_p.proj", 2 * INTER, HIDDEN, 1, 1, 1);
        // Stochastic durations: pre, DDSConv, proj, and flows 0 (affine), 1 and 3 (ConvFlow;
        // the reverse pass uses 3 only).
        self.conv("dp.pre", HIDDEN, HIDDEN, 1, 1, 1);
        self.dds("dp.convs", 3);
        self.conv("dp.proj", HIDDEN, HIDDEN, 1, 1, 1);
        self.param("dp.flows.0.m", &[2, 1], 0.1);
        self.ck.params.insert(
            DP_EXP_NEG_LOGS.to_owned(),
            Param {
                dims: vec![2, 1],
                data: vec![1.0, 1.0],
            },
        );
        self.conv("dp.flows.3.pre", HIDDEN, 1, 1, 1, 1);
        self.dds("dp.flows.3.convs", 3);
        self.conv("dp.flows.3.proj", 29, HIDDEN, 1, 1, 1);
        // Two couplings with WN stacks of two layers.
        for n in [0, 2] {
            let f = format!("flow.flows.{n}");
            self.conv(&format!("{f}.pre"), HIDDEN, INTER / 2, 1, 1, 1);
            for k in 0..2 {
                self.conv(
                    &format!("{f}.enc.in_layers.{k}"),
                    2 * HIDDEN,
                    HIDDEN,
                    5,
                    1,
                    1,
                );
                let out = if k == 1 { HIDDEN } else { 2 * HIDDEN };
                self.conv(
                    &format!("{f}.enc.res_skip_layers.{k}"),
                    out,
                    HIDDEN,
                    1,
                    1,
                    1,
                );
            }
            self.conv(&format!("{f}.post"), INTER / 2, HIDDEN, 1, 1, 1);
            if g {
                self.conv(&format!("{f}.enc.cond_layer"), 2 * HIDDEN * 2, GIN, 1, 1, 1);
            }
        }
        // HiFi-GAN: 16 → 8 (×4) → 4 (×2), two ResBlock2 per stage.
        self.conv("dec.conv_pre", UPSAMPLE, INTER, 7, 1, 1);
        for (i, (cin, cout, k, s)) in [(16, 8, 8, 4), (8, 4, 4, 2)].into_iter().enumerate() {
            let name = format!("dec.ups.{i}");
            self.param(&format!("{name}.weight"), &[cin, cout, k], 0.3);
            self.param(&format!("{name}.bias"), &[cout], 0.1);
            self.ck.convs.insert(
                name,
                ConvAttrs {
                    pad_left: (k - s) / 2,
                    pad_right: (k - s) / 2,
                    dilation: 1,
                    stride: s,
                    groups: 1,
                    transposed: true,
                },
            );
            for (j, (k, d)) in [(3, [1, 2]), (5, [2, 6])].into_iter().enumerate() {
                let block = format!("dec.resblocks.{}", i * 2 + j);
                for (c, d) in d.into_iter().enumerate() {
                    self.conv(&format!("{block}.convs.{c}"), cout, cout, k, d, 1);
                }
            }
        }
        self.param("dec.conv_post.weight", &[1, 4, 7], 0.3);
        self.ck.convs.insert(
            "dec.conv_post".to_owned(),
            ConvAttrs {
                pad_left: 3,
                pad_right: 3,
                dilation: 1,
                stride: 1,
                groups: 1,
                transposed: false,
            },
        );
        if g {
            self.param("emb_g.weight", &[speakers, GIN], 1.0);
            self.conv("dp.cond", HIDDEN, GIN, 1, 1, 1);
            self.conv("dec.cond", UPSAMPLE, GIN, 1, 1, 1);
        }
        self.ck
    }
}

fn tiny(speakers: usize) -> Vits {
    tiny_on(speakers, None)
}

/// The tiny model on `kernel` (`None`: candle's f32 ops, which the structure tests compare
/// against themselves).
fn tiny_on(speakers: usize, kernel: Option<crate::CpuKernel>) -> Vits {
    let ck = Builder::new(7).build(speakers);
    let mut model = Vits::load(&ck, &Device::Cpu).expect("a tiny VITS loads");
    model.use_cpu_kernel(kernel).expect("kernel");
    model
}

fn ids(n: usize) -> Vec<i64> {
    (0..n).map(|i| ((i * 7 + 3) % SYMBOLS) as i64).collect()
}

const SCALES: Inference = Inference {
    noise_scale: 0.667,
    length_scale: 1.0,
    noise_w: 0.8,
};

fn snr_db(a: &[f32], b: &[f32]) -> f64 {
    let s: f64 = a.iter().map(|&x| f64::from(x).powi(2)).sum();
    let e: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2))
        .sum();
    10.0 * (s / e.max(1e-30)).log10()
}

#[test]
fn a_tiny_vits_speaks_a_frame_of_samples_per_hop_and_repeats_itself() {
    let model = tiny(1);
    assert_eq!(model.hop(), 8, "the upsampling strides' product");
    let st = model
        .infer(&ids(30), SCALES, None, &Noise::Seeded(1))
        .expect("infer");
    let frames: usize = st.durations.iter().map(|&d| d as usize).sum();
    assert_eq!(st.audio.len(), frames.max(1) * 8);
    assert!(st.audio.iter().all(|x| x.is_finite() && x.abs() <= 1.0));
    let again = model
        .infer(&ids(30), SCALES, None, &Noise::Seeded(1))
        .expect("infer");
    assert!(again.audio == st.audio, "the seeded noise repeats");
    let other = model
        .infer(&ids(30), SCALES, None, &Noise::Seeded(2))
        .expect("infer");
    assert!(other.audio != st.audio, "another seed, other audio");
}

#[test]
fn windows_with_the_decode_context_are_the_whole_decode_on_another_shape() {
    let model = tiny(1);
    let prior = model
        .encode(&ids(60), SCALES, None, &Noise::Seeded(3))
        .expect("encode");
    let whole = model.decode(&prior).expect("whole");
    let frames = prior.frames();
    assert!(frames > 40, "{frames} frames");
    // Equal within f32 rounding (sums in another order over another length).
    for (context, floor) in [(DECODE_CONTEXT, 120.0), (0, f64::NEG_INFINITY)] {
        let mut joined = Vec::new();
        let (mut at, mut window) = (0, 7);
        while at < frames {
            let end = (at + window).min(frames);
            joined.extend(
                model
                    .decode_window(&prior, at..end, context)
                    .expect("window"),
            );
            at = end;
            window *= 2;
        }
        assert_eq!(joined.len(), whole.len());
        let snr = snr_db(&whole, &joined);
        if context == 0 {
            assert!(
                snr < 60.0,
                "without context the windows differ: {snr:.1} dB"
            );
        } else {
            assert!(snr > floor, "context {context}: {snr:.1} dB");
        }
    }
}

#[test]
fn a_multi_speaker_model_needs_a_speaker_and_each_sounds_different() {
    for kernel in [
        None,
        Some(crate::CpuKernel::F32),
        Some(crate::CpuKernel::Tiles),
    ] {
        multi_speaker(&tiny_on(3, kernel));
    }
    let one = tiny(1);
    assert!(one
        .infer(&ids(20), SCALES, Some(1), &Noise::Seeded(1))
        .is_err());
}

fn multi_speaker(model: &Vits) {
    assert_eq!(model.speakers(), 3);
    assert!(model
        .infer(&ids(20), SCALES, None, &Noise::Seeded(1))
        .is_err());
    assert!(model
        .infer(&ids(20), SCALES, Some(3), &Noise::Seeded(1))
        .is_err());
    let a = model
        .infer(&ids(20), SCALES, Some(0), &Noise::Seeded(1))
        .expect("speaker 0");
    let b = model
        .infer(&ids(20), SCALES, Some(2), &Noise::Seeded(1))
        .expect("speaker 2");
    assert!(
        a.durations != b.durations || a.audio != b.audio,
        "the speaker conditions the model"
    );
    assert!(a.audio.iter().all(|x| x.is_finite()));
}
