//! Stage-by-stage parity of the encoder half (ALBERT, predictor, text encoder) with the f32 oracle.
//!
//! Each stage gets the oracle's *upstream* tensors as input (see `shared/docs/kokoro-port.md` §5),
//! so an error shows up at the stage that causes it instead of accumulating. Goldens come from
//! `tools/goldens/stages.py` (`tests/fixtures/goldens/stages/*.safetensors` + `index.json`).
//! Tolerance: max |port − oracle| ≤ 1e-4 × max |oracle| per stage; integer durations identical.
//!
//! `encoder_stage_timings` (ignored by default) prints per-stage wall time for a ~50 and a ~250
//! token input: `cargo test -p tests --test e2e stage_timings -- --ignored --nocapture`.

// A panic is how a test reports failure; `unwrap` on test plumbing reads better than `expect`.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use candle_core::{DType, Device, Tensor};
use kokoro::config::KokoroConfig;
use kokoro::cpu_kernels::CpuKernel;
use kokoro::model::{BatchLayout, EncodeInput, KokoroEncoder};
use kokoro::predictor;

/// Relative tolerance of every float stage.
const REL_TOL: f32 = 1e-4;

fn goldens_dir() -> PathBuf {
    crate::support::goldens_dir().join("stages")
}

/// A committed golden file: it must exist.
fn required(path: PathBuf) -> PathBuf {
    assert!(path.exists(), "{} is missing", path.display());
    path
}

/// The encoder, loaded once for all tests of this module.
fn encoder() -> Option<&'static KokoroEncoder> {
    static ENCODER: OnceLock<KokoroEncoder> = OnceLock::new();
    let vb = crate::support::weights()?;
    Some(
        ENCODER.get_or_init(|| {
            KokoroEncoder::new(&KokoroConfig::default(), vb).expect("build encoder")
        }),
    )
}

/// One golden case: its name and every stage tensor.
struct Case {
    name: String,
    t: HashMap<String, Tensor>,
}

impl Case {
    /// Present only in some goldens (`en`, `shared_out`, `asr` are written for the first
    /// sentence of each voice only, to keep the fixtures small).
    fn opt(&self, key: &str) -> Option<&Tensor> {
        self.t.get(key)
    }

    fn get(&self, key: &str) -> &Tensor {
        self.t
            .get(key)
            .unwrap_or_else(|| panic!("{}: golden has no `{key}`", self.name))
    }

    /// Golden ids `[1, T]` as u32 (pads included).
    fn ids(&self) -> Vec<u32> {
        self.get("tokens")
            .flatten_all()
            .and_then(|t| t.to_dtype(DType::U32))
            .and_then(|t| t.to_vec1())
            .expect("tokens")
    }

    fn pred_dur(&self) -> Vec<u32> {
        self.get("pred_dur")
            .flatten_all()
            .and_then(|t| t.to_dtype(DType::U32))
            .and_then(|t| t.to_vec1())
            .expect("pred_dur")
    }

    fn speed(&self) -> f32 {
        self.get("speed")
            .flatten_all()
            .and_then(|t| t.to_vec1::<f32>())
            .expect("speed")[0]
    }

    /// Predictor half of the style, `[1, 128]`.
    fn style_s(&self) -> Tensor {
        self.get("style").narrow(1, 128, 128).expect("style half")
    }
}

fn cases() -> Vec<Case> {
    let index_path = required(goldens_dir().join("index.json"));
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&index_path).expect("read index.json"))
            .expect("index.json is JSON");
    let entries = index.as_array().expect("index.json is a list");
    let mut out = Vec::new();
    for entry in entries {
        let file = entry["file"].as_str().expect("file name");
        let path = required(goldens_dir().join(file));
        let t = candle_core::safetensors::load(&path, &Device::Cpu).expect("read golden");
        out.push(Case {
            name: file.trim_end_matches(".safetensors").to_string(),
            t,
        });
    }
    assert!(!out.is_empty(), "index.json lists no goldens");
    out
}

/// max |a − b| / max |b|, after checking the shapes agree.
fn rel_err(case: &str, stage: &str, got: &Tensor, want: &Tensor) -> f32 {
    assert_eq!(got.dims(), want.dims(), "{case} {stage}: shape");
    let max_abs = |t: &Tensor| {
        t.abs()
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.max(0))
            .and_then(|t| t.to_scalar::<f32>())
            .expect("max")
    };
    let diff = (got - want).expect("same shape");
    max_abs(&diff) / max_abs(want).max(f32::MIN_POSITIVE)
}

/// Runs every stage of every case and records the worst relative error per stage.
#[test]
fn encoder_stages_match_oracle() {
    let Some(enc) = encoder() else {
        return;
    };
    let cases = cases();
    let mut worst: Vec<(&str, f32)> = Vec::new();
    let mut record = |stage: &'static str, err: f32, case: &str| {
        assert!(
            err <= REL_TOL,
            "{case} {stage}: relative error {err:e} > {REL_TOL:e}"
        );
        match worst.iter_mut().find(|(s, _)| *s == stage) {
            Some((_, w)) => *w = w.max(err),
            None => worst.push((stage, err)),
        }
    };
    for case in &cases {
        let name = case.name.as_str();
        let ids_vec = case.ids();
        let ids = enc.padded_ids(&ids_vec[1..ids_vec.len() - 1]).expect("ids");
        assert_eq!(
            ids.flatten_all().unwrap().to_vec1::<u32>().unwrap(),
            ids_vec
        );
        let s = case.style_s();
        let frames = case.pred_dur();

        let bert = enc.bert(&ids).expect("bert");
        record(
            "bert_out",
            rel_err(name, "bert_out", &bert, case.get("bert_out")),
            name,
        );

        let d_en = enc
            .bert_encoder(case.get("bert_out"))
            .expect("bert_encoder");
        let want = case.get("d_en").squeeze(0).unwrap();
        record("d_en", rel_err(name, "d_en", &d_en, &want), name);

        let d = enc.duration_features(&want, &s).expect("duration encoder");
        let want_d = case.get("dur_enc_d").squeeze(0).unwrap();
        record("dur_enc_d", rel_err(name, "dur_enc_d", &d, &want_d), name);

        let logits = enc.duration_logits(&want_d).expect("logits");
        let want_logits = case.get("dur_logits").squeeze(0).unwrap();
        record(
            "dur_logits",
            rel_err(name, "dur_logits", &logits, &want_logits),
            name,
        );

        let dur = predictor::durations(&want_logits, case.speed()).expect("durations");
        let got_float = Tensor::new(dur.float.as_slice(), &Device::Cpu).unwrap();
        let want_float = case.get("dur_float").squeeze(0).unwrap();
        record(
            "dur_float",
            rel_err(name, "dur_float", &got_float, &want_float),
            name,
        );
        assert_eq!(dur.frames, frames, "{name}: pred_dur from oracle logits");

        // Expanding the oracle's `d` is a pure gather, so it also stands in for a missing `en`.
        let en = enc.frame_features(&want_d, &frames).expect("en");
        if let Some(want_en) = case.opt("en") {
            record("en", rel_err(name, "en", &en, want_en), name);
        }
        let f0n = enc.f0_n(case.opt("en").unwrap_or(&en), &s).expect("f0_n");
        if let Some(want_shared) = case.opt("shared_out") {
            let err = rel_err(name, "shared_out", &f0n.shared, want_shared);
            record("shared_out", err, name);
        }
        record(
            "F0_pred",
            rel_err(name, "F0_pred", &f0n.f0, case.get("F0_pred")),
            name,
        );
        record(
            "N_pred",
            rel_err(name, "N_pred", &f0n.n, case.get("N_pred")),
            name,
        );

        let t_en = enc.text_features(&ids).expect("text encoder");
        record("t_en", rel_err(name, "t_en", &t_en, case.get("t_en")), name);

        let asr = enc
            .frame_text_features(case.get("t_en"), &frames)
            .expect("asr");
        assert_eq!(asr.dims(), [1, 512, frames.iter().sum::<u32>() as usize]);
        if let Some(want_asr) = case.opt("asr") {
            record("asr", rel_err(name, "asr", &asr, want_asr), name);
        }
    }
    for (stage, err) in &worst {
        println!("encoder stage {stage:<11} max relative error {err:.2e}");
    }
    assert_eq!(
        worst.len(),
        11,
        "every float stage was checked at least once"
    );
}

/// The whole chain from tokens: durations identical; F0, N and asr within the same tolerance
/// (measured chained errors are ~1e-6, so the stages' errors do not compound noticeably).
#[test]
fn encode_from_tokens_matches_oracle() {
    let Some(enc) = encoder() else {
        return;
    };
    let cases = cases();
    for case in &cases {
        let name = case.name.as_str();
        let ids = case.ids();
        let prosody = enc
            .encode(&ids[1..ids.len() - 1], case.get("style"), case.speed())
            .expect("encode");
        assert_eq!(prosody.pred_dur, case.pred_dur(), "{name}: pred_dur");
        assert_eq!(prosody.frames(), prosody.asr.dim(2).unwrap());
        for (stage, got) in [
            ("asr", &prosody.asr),
            ("F0_pred", &prosody.f0),
            ("N_pred", &prosody.n),
        ] {
            let Some(want) = case.opt(stage) else {
                continue;
            };
            let err = rel_err(name, stage, got, want);
            println!("{name} chained {stage:<8} relative error {err:.2e}");
            assert!(err <= REL_TOL, "{name} chained {stage}: {err:e}");
        }
    }
}

/// The encoder with ALBERT, the F0/N branches and the text encoder's convolutions in bfloat16
/// (the default on CPUs with AVX-512 BF16): the same lengths and, within a few percent, the
/// same pitch and text features as the oracle.
#[test]
fn encode_in_bf16_keeps_durations_and_pitch() {
    let Some(enc) = encoder() else {
        return;
    };
    let mut fast = enc.clone();
    if fast.use_bf16(CpuKernel::Tiles).expect("pack bf16") == 0 {
        eprintln!("skipped: no AVX-512 BF16 on this CPU, the encoder stays in f32");
        return;
    }
    for case in &cases() {
        let name = case.name.as_str();
        let ids = case.ids();
        let prosody = fast
            .encode(&ids[1..ids.len() - 1], case.get("style"), case.speed())
            .expect("encode");
        let want_dur = case.pred_dur();
        let (got_frames, want_frames): (u32, u32) =
            (prosody.pred_dur.iter().sum(), want_dur.iter().sum());
        let moved = prosody
            .pred_dur
            .iter()
            .zip(&want_dur)
            .filter(|(a, b)| a != b)
            .count();
        let frames_off = f64::from(got_frames.abs_diff(want_frames)) / f64::from(want_frames);
        // Pitch where the oracle is voiced (F0 > 50 Hz), relative RMS difference.
        let (mut err, mut norm) = (0.0f64, 0.0f64);
        if prosody.frames() == want_frames as usize {
            let got = prosody
                .f0
                .flatten_all()
                .and_then(|t| t.to_vec1::<f32>())
                .expect("f0");
            let want = case
                .get("F0_pred")
                .flatten_all()
                .and_then(|t| t.to_vec1::<f32>())
                .expect("f0");
            for (g, w) in got.iter().zip(&want).filter(|(_, w)| **w > 50.0) {
                err += f64::from(g - w).powi(2);
                norm += f64::from(*w).powi(2);
            }
        }
        let f0_rel = (err / norm.max(1e-9)).sqrt();
        println!(
            "{name} bf16: {moved} of {} durations moved, {got_frames} frames against \
             {want_frames}; F0 relative RMS difference {f0_rel:.4}",
            want_dur.len()
        );
        assert!(
            frames_off <= 0.02,
            "{name}: {got_frames} frames, oracle {want_frames}"
        );
        assert!(f0_rel < 0.02, "{name}: F0 off by {f0_rel}");
        let padded = fast.padded_ids(&ids[1..ids.len() - 1]).expect("ids");
        let t_en = fast.text_features(&padded).expect("text encoder");
        let t_en_err = rel_err(name, "t_en", &t_en, case.get("t_en"));
        println!("{name} bf16: text features relative error {t_en_err:.2e}");
        assert!(t_en_err < 1e-2, "{name}: text features off by {t_en_err}");
    }
}

/// Bad input is an error, never a panic.
#[test]
fn encode_rejects_bad_input() {
    let Some(enc) = encoder() else { return };
    let style = Tensor::zeros((1, 256), DType::F32, &Device::Cpu).unwrap();
    assert!(enc.encode(&[], &style, 1.0).is_err(), "empty");
    assert!(enc.encode(&[5; 511], &style, 1.0).is_err(), "511 ids");
    assert!(
        enc.encode(&[5, 178], &style, 1.0).is_err(),
        "id out of vocab"
    );
    assert!(enc.encode(&[5, 6], &style, 0.0).is_err(), "speed 0");
    assert!(enc.encode(&[5, 6], &style, f32::NAN).is_err(), "speed NaN");
    let narrow = Tensor::zeros((1, 128), DType::F32, &Device::Cpu).unwrap();
    assert!(enc.encode(&[5, 6], &narrow, 1.0).is_err(), "style width");
    // The longest accepted input runs.
    let ok = enc.encode(&[43; 510], &style, 1.0).expect("510 ids");
    assert_eq!(ok.pred_dur.len(), 512);
}

/// Reads voice row `n - 1` of `voices/NAME.bin` (raw f32 LE `[510, 1, 256]`).
/// Every golden (three voices, lengths 20–150 tokens) encoded in one padded batch comes out as
/// it does alone: the same durations and, up to float rounding, the same F0, N and text
/// features; an invalid member gets its own error and leaves the rest batched. In f32 packed
/// (ALBERT without padding, F0/N item by item) and padded (ALBERT masked, F0/N over the padded
/// frames), and in bf16 on CPUs that have it.
#[test]
fn encode_batch_equals_each_alone() {
    let Some(enc) = encoder() else {
        return;
    };
    let mut fast = enc.clone();
    let bf16 = fast.use_bf16(CpuKernel::Tiles).expect("pack bf16") > 0;
    let cases = cases();
    let tokens: Vec<Vec<u32>> = cases
        .iter()
        .map(|c| {
            let ids = c.ids();
            ids[1..ids.len() - 1].to_vec()
        })
        .collect();
    let speeds = [1.0f32, 1.3, 0.8];
    let mut inputs: Vec<EncodeInput<'_>> = cases
        .iter()
        .zip(&tokens)
        .enumerate()
        .map(|(i, (c, t))| EncodeInput {
            tokens: t,
            style: c.get("style"),
            speed: speeds[i % speeds.len()],
        })
        .collect();
    // An empty member sits in the middle of the batch.
    inputs.insert(
        2,
        EncodeInput {
            tokens: &[],
            style: cases[0].get("style"),
            speed: 1.0,
        },
    );
    // In bf16 a last-bit difference in an f32 product (the batch's taller matrices are blocked
    // differently) can flip an input's rounding to bfloat16, a 2⁻⁸ relative step: measured
    // up to 4.5e-3 of max |N|, against 6e-7 in f32.
    // Packed (the CPU's layout) and padded with masks (the GPU's), both in f32.
    let mut models: Vec<(&str, &KokoroEncoder, BatchLayout, f32)> = vec![
        ("f32 packed", enc, BatchLayout::Packed, REL_TOL),
        ("f32 padded", enc, BatchLayout::Padded, REL_TOL),
    ];
    if bf16 {
        models.push(("bf16 packed", &fast, BatchLayout::Packed, 1e-2));
    }
    for (precision, model, layout, tol) in models {
        let batch = model
            .encode_batch_pass(&inputs, layout)
            .unwrap_or_else(|e| panic!("{precision}: the batched pass failed: {e}"));
        assert_eq!(batch.len(), inputs.len());
        for (i, (input, got)) in inputs.iter().zip(batch).enumerate() {
            let Ok(got) = got else {
                assert_eq!(i, 2, "{precision}: item {i} failed in the batch");
                continue;
            };
            assert_ne!(i, 2, "{precision}: the empty item was encoded");
            let alone = model
                .encode(input.tokens, input.style, input.speed)
                .expect("encode alone");
            let name = format!("{precision} item {i}");
            assert_eq!(got.pred_dur, alone.pred_dur, "{name}: durations");
            for (stage, a, b) in [
                ("f0", &got.f0, &alone.f0),
                ("n", &got.n, &alone.n),
                ("asr", &got.asr, &alone.asr),
            ] {
                let err = rel_err(&name, stage, a, b);
                assert!(err <= tol, "{name} {stage}: rel err {err:.2e} > {tol:.0e}");
            }
        }
    }
}

fn voice_style(name: &str, n: usize) -> Option<Tensor> {
    let path = crate::support::model_store()?.voice_table(name);
    let bytes = std::fs::read(&path).expect("read voice");
    let row = n.clamp(1, 510) - 1;
    let floats: Vec<f32> = bytes[row * 1024..(row + 1) * 1024]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Some(Tensor::from_vec(floats, (1, 256), &Device::Cpu).expect("style row"))
}

/// Per-stage wall time (best of 3) for a ~50 and a ~250 token input.
#[test]
#[ignore = "timing report, run with --ignored --nocapture"]
fn encoder_stage_timings() {
    let Some(enc) = encoder() else {
        return;
    };
    let cases = cases();
    let base = cases[0].ids();
    let phonemes: Vec<u32> = base[1..base.len() - 1].to_vec();
    for target in [50usize, 250] {
        let tokens: Vec<u32> = phonemes.iter().copied().cycle().take(target).collect();
        let Some(style) = voice_style("af_heart", tokens.len()) else {
            return;
        };
        let s = enc.predictor_style(&style).unwrap();
        let ids = enc.padded_ids(&tokens).unwrap();
        let mut best: Vec<(&str, f64)> = Vec::new();
        let mut frames_total = 0;
        for _ in 0..3 {
            let mut times = Vec::new();
            let mut lap = {
                let mut t0 = Instant::now();
                move |stage: &'static str, times: &mut Vec<(&'static str, f64)>| {
                    times.push((stage, t0.elapsed().as_secs_f64() * 1e3));
                    t0 = Instant::now();
                }
            };
            let bert = enc.bert(&ids).unwrap();
            lap("bert", &mut times);
            let d_en = enc.bert_encoder(&bert).unwrap();
            lap("bert_encoder", &mut times);
            let d = enc.duration_features(&d_en, &s).unwrap();
            lap("duration_encoder", &mut times);
            let dur = enc.durations(&d, 1.0).unwrap();
            lap("durations", &mut times);
            let en = enc.frame_features(&d, &dur.frames).unwrap();
            lap("expand_en", &mut times);
            let shared = enc.predictor().shared_lstm(&en).unwrap();
            lap("shared_lstm", &mut times);
            let (f0, _n) = enc.predictor().f0_n_branches(&shared, &s).unwrap();
            lap("F0+N blocks", &mut times);
            let t_en = enc.text_features(&ids).unwrap();
            lap("text_encoder", &mut times);
            let _asr = enc.frame_text_features(&t_en, &dur.frames).unwrap();
            lap("expand_asr", &mut times);
            let t0 = Instant::now();
            let _ = enc.encode(&tokens, &style, 1.0).unwrap();
            times.push(("encode (total)", t0.elapsed().as_secs_f64() * 1e3));
            frames_total = f0.dim(1).unwrap() / 2;
            if best.is_empty() {
                best = times;
            } else {
                for ((_, b), (_, t)) in best.iter_mut().zip(times) {
                    *b = b.min(t);
                }
            }
        }
        println!(
            "encoder timings: {} tokens (+2 pads), {frames_total} frames ({:.2} s audio)",
            tokens.len(),
            frames_total as f64 / 40.0
        );
        for (stage, ms) in &best {
            println!("  {stage:<18} {ms:8.2} ms");
        }
    }
}
