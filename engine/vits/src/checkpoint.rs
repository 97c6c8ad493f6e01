//! The weights of a Piper `.onnx`, named by torch module path, and the settings of every
//! convolution as the graph states them.
//!
//! Why from the graph: Piper exports keep most weights under their module names
//! (`dec.ups.0.weight`), but the exporter renames some (the folded weight-norm convolutions of the
//! flow become `onnx::Conv_8168`, the phoneme embedding was seen named `sid`) and folds others
//! into constants (the duration predictor's `exp(-logs)`). The exporter names every node after the
//! module that ran it (`/flow/flows.6/enc/in_layers.0/Conv`), so a weight consumed by a
//! convolution or an embedding lookup is named by its consumer, whatever the initializer is
//! called. The same nodes carry each convolution's padding, dilation, groups and stride, so voices
//! of other sizes (x-low to high, other upsampling rates or kernel sets) need no table here.

use std::collections::HashMap;
use std::path::Path;

use onnx_proto::{NodeProto, TensorProto};

use crate::VitsError;

/// A float tensor from the checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub dims: Vec<usize>,
    pub data: Vec<f32>,
}

/// A convolution's settings, from its ONNX node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvAttrs {
    pub pad_left: usize,
    pub pad_right: usize,
    pub dilation: usize,
    pub stride: usize,
    pub groups: usize,
    /// Set for `ConvTranspose`.
    pub transposed: bool,
}

/// Everything the model reads from the `.onnx`.
#[derive(Debug, Default)]
pub struct Checkpoint {
    pub params: HashMap<String, Param>,
    /// By module path (`dec.ups.0`).
    pub convs: HashMap<String, ConvAttrs>,
    /// The graph's inputs (`input`, `input_lengths`, `scales`, and `sid` for several speakers).
    pub inputs: Vec<String>,
}

/// The module name the duration predictor's folded `exp(-logs)` is stored under.
pub const DP_EXP_NEG_LOGS: &str = "dp.flows.0.exp_neg_logs";

/// Prefixes of the module paths a VITS checkpoint holds.
const MODULES: [&str; 5] = ["enc_p.", "dp.", "flow.", "dec.", "emb_g."];

impl Checkpoint {
    /// Reads `path` (a Piper voice's `.onnx`).
    pub fn read(path: &Path) -> Result<Self, VitsError> {
        let bytes = std::fs::read(path).map_err(|source| VitsError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&bytes).map_err(|e| match e {
            Parse::Onnx(source) => VitsError::Onnx {
                path: path.to_path_buf(),
                source,
            },
            Parse::NotVits(reason) => VitsError::NotVits {
                path: path.to_path_buf(),
                reason,
            },
        })
    }

    /// Reads an in-memory `.onnx`.
    pub fn parse(bytes: &[u8]) -> Result<Self, Parse> {
        let model = onnx_proto::parse_model(bytes).map_err(Parse::Onnx)?;
        let graph = model
            .graph
            .ok_or_else(|| Parse::NotVits("the file holds no graph".to_owned()))?;
        let by_name: HashMap<&str, &TensorProto<'_>> =
            graph.initializers.iter().map(|t| (t.name, t)).collect();
        let mut out = Checkpoint::default();
        // Weights named by the module that consumes them.
        for node in &graph.nodes {
            let Some(scope) = module_scope(node.name) else {
                continue;
            };
            let slots: &[(usize, &str)] = match node.op_type {
                "Conv" | "ConvTranspose" => &[(1, "weight"), (2, "bias")],
                "Gather" if scope.ends_with("emb") || scope.starts_with("emb_g") => {
                    &[(0, "weight")]
                }
                "Mul" if scope == "dp.flows.0" => &[(1, "exp_neg_logs")],
                _ => &[],
            };
            for &(slot, field) in slots {
                let Some(tensor) = node.inputs.get(slot).and_then(|n| by_name.get(n)) else {
                    continue;
                };
                let name = format!("{scope}.{field}");
                if field == "exp_neg_logs" && !tensor.name.ends_with("Exp_output_0") {
                    continue; // the mask product, not the folded scale
                }
                out.params.insert(name.clone(), param(tensor, &name)?);
            }
            if matches!(node.op_type, "Conv" | "ConvTranspose") {
                out.convs.insert(scope, conv_attrs(node)?);
            }
        }
        // Everything else that is a parameter keeps its own name (layer norms, relative
        // position embeddings, the affine flow's mean).
        for tensor in &graph.initializers {
            if MODULES.iter().any(|m| tensor.name.starts_with(m))
                && !out.params.contains_key(tensor.name)
                && tensor.data_type == FLOAT
            {
                out.params
                    .insert(tensor.name.to_owned(), param(tensor, tensor.name)?);
            }
        }
        out.inputs = graph_inputs(&graph);
        if !out.params.contains_key("enc_p.emb.weight") || !out.convs.contains_key("dec.conv_pre") {
            return Err(Parse::NotVits(
                "no phoneme embedding (enc_p.emb) or decoder (dec.conv_pre): not a Piper VITS export"
                    .to_owned(),
            ));
        }
        Ok(out)
    }

    /// The parameter `name`, or an error naming it.
    pub fn get(&self, name: &str) -> Result<&Param, VitsError> {
        self.params.get(name).ok_or_else(|| VitsError::Weight {
            name: name.to_owned(),
            reason: "missing from the model".to_owned(),
        })
    }

    /// The settings of the convolution at module path `name`.
    pub fn conv(&self, name: &str) -> Result<ConvAttrs, VitsError> {
        self.convs
            .get(name)
            .copied()
            .ok_or_else(|| VitsError::Weight {
                name: name.to_owned(),
                reason: "no convolution of that name in the graph".to_owned(),
            })
    }

    /// One more than the highest `N` with a parameter under `prefix.N.` (`dec.ups` → 3; 0 when
    /// there is none). Modules without parameters (flips) and ones the export pruned count as
    /// gaps below the highest.
    #[must_use]
    pub fn count(&self, prefix: &str) -> usize {
        let lead = format!("{prefix}.");
        self.params
            .keys()
            .filter_map(|k| {
                k.strip_prefix(&lead)?
                    .split('.')
                    .next()?
                    .parse::<usize>()
                    .ok()
            })
            .max()
            .map_or(0, |n| n + 1)
    }
}

/// Why bytes are not a usable Piper model (without the path, which [`Checkpoint::read`] adds).
#[derive(Debug)]
pub enum Parse {
    Onnx(onnx_proto::ProtoError),
    NotVits(String),
}

const FLOAT: i32 = 1;

/// `/flow/flows.6/enc/in_layers.0/Conv` → `flow.flows.6.enc.in_layers.0`; `None` for nodes
/// outside the model's modules.
fn module_scope(node: &str) -> Option<String> {
    let path = node.strip_prefix('/')?;
    let (scope, _op) = path.rsplit_once('/')?;
    let dotted = scope.replace('/', ".");
    MODULES
        .iter()
        .any(|m| format!("{dotted}.").starts_with(m))
        .then_some(dotted)
}

fn param(t: &TensorProto<'_>, name: &str) -> Result<Param, Parse> {
    let bad = |reason: String| Parse::NotVits(format!("weight {name} ({}): {reason}", t.name));
    if t.data_type != FLOAT {
        return Err(bad(format!("data type {} is not float32", t.data_type)));
    }
    if t.data_location != 0 || t.has_external_data {
        return Err(bad("stored in an external file".to_owned()));
    }
    let dims: Vec<usize> = t
        .dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| bad(format!("negative dimension {d}"))))
        .collect::<Result<_, _>>()?;
    let count = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| bad("shape overflows".to_owned()))?;
    let data: Vec<f32> = if let Some(raw) = t.raw_data {
        if raw.len() != count.saturating_mul(4) {
            return Err(bad(format!(
                "{} bytes of data for {count} values",
                raw.len()
            )));
        }
        raw.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    } else {
        if t.float_data.len() != count {
            return Err(bad(format!(
                "{} values for shape {dims:?}",
                t.float_data.len()
            )));
        }
        t.float_data.clone()
    };
    if let Some(v) = data.iter().find(|v| !v.is_finite()) {
        return Err(bad(format!("holds a non-finite value {v}")));
    }
    Ok(Param { dims, data })
}

fn conv_attrs(node: &NodeProto<'_>) -> Result<ConvAttrs, Parse> {
    let ints = |name: &str| -> Vec<i64> {
        node.attributes
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.ints.clone())
            .unwrap_or_default()
    };
    let int = |name: &str, default: i64| -> i64 {
        node.attributes
            .iter()
            .find(|a| a.name == name)
            .map_or(default, |a| a.i)
    };
    let bad = |what: &str| Parse::NotVits(format!("{}: {what}", node.name));
    let one = |v: Vec<i64>, default: i64, what: &str| -> Result<usize, Parse> {
        match v.as_slice() {
            [] => Ok(default as usize),
            [x] if *x >= 0 => Ok(*x as usize),
            _ => Err(bad(&format!("{what} {v:?} is not a 1-D setting"))),
        }
    };
    let pads = ints("pads");
    let (pad_left, pad_right) = match pads.as_slice() {
        [] => (0, 0),
        [l, r] if *l >= 0 && *r >= 0 => (*l as usize, *r as usize),
        _ => return Err(bad(&format!("pads {pads:?} are not 1-D"))),
    };
    if !ints("output_padding").iter().all(|&p| p == 0) {
        return Err(bad("output_padding is not supported"));
    }
    let groups = int("group", 1);
    if groups < 1 {
        return Err(bad("group below 1"));
    }
    Ok(ConvAttrs {
        pad_left,
        pad_right,
        dilation: one(ints("dilations"), 1, "dilations")?.max(1),
        stride: one(ints("strides"), 1, "strides")?.max(1),
        groups: groups as usize,
        transposed: node.op_type == "ConvTranspose",
    })
}

/// The graph's real inputs (not initializers listed as inputs by older exporters).
fn graph_inputs(graph: &onnx_proto::GraphProto<'_>) -> Vec<String> {
    let inits: std::collections::HashSet<&str> =
        graph.initializers.iter().map(|t| t.name).collect();
    let mut seen: Vec<String> = Vec::new();
    for node in &graph.nodes {
        for &i in &node.inputs {
            if ["input", "input_lengths", "scales", "sid"].contains(&i)
                && !inits.contains(i)
                && !seen.iter().any(|s| s == i)
            {
                seen.push(i.to_owned());
            }
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_proto::encode::{self, node, Msg};

    fn conv(name: &str, inputs: &[&str], dilation: i64, pads: [i64; 2], group: i64) -> Msg {
        let attr = |n: &str, v: &[i64]| Msg::new().str(1, n).varint(20, 7).packed_varints(8, v);
        let g = Msg::new()
            .str(1, "group")
            .varint(20, 2)
            .varint(3, group as u64);
        node(name, "Conv", inputs, &["y"])
            .msg(5, &attr("dilations", &[dilation]))
            .msg(5, &attr("pads", &pads))
            .msg(5, &g)
    }

    #[test]
    fn names_weights_by_their_consumer_and_reads_conv_settings() {
        let bytes = encode::model(
            &[
                node("/enc_p/emb/Gather", "Gather", &["sid", "input"], &["e"]),
                conv(
                    "/flow/flows.6/enc/in_layers.0/Conv",
                    &["x", "onnx::Conv_1", "flow.flows.6.enc.in_layers.0.bias"],
                    3,
                    [6, 6],
                    1,
                ),
                conv(
                    "/dec/conv_pre/Conv",
                    &["z", "dec.conv_pre.weight", ""],
                    1,
                    [3, 3],
                    1,
                ),
                node(
                    "/dp/flows.0/Mul",
                    "Mul",
                    &["a", "/dp/flows.0/Exp_output_0"],
                    &["m"],
                ),
            ],
            &[
                encode::f32_tensor("sid", &[4, 2], &[0.0; 8]),
                encode::f32_tensor("onnx::Conv_1", &[2, 2, 5], &[0.5; 20]),
                encode::f32_tensor("flow.flows.6.enc.in_layers.0.bias", &[2], &[1.0, 2.0]),
                encode::f32_tensor("dec.conv_pre.weight", &[1, 2, 7], &[0.0; 14]),
                encode::f32_tensor("/dp/flows.0/Exp_output_0", &[2, 1], &[0.9, 1.1]),
                encode::f32_tensor("enc_p.encoder.norm_layers_1.0.gamma", &[2], &[1.0, 1.0]),
            ],
        );
        let ck = Checkpoint::parse(&bytes).expect("a tiny VITS");
        assert_eq!(ck.get("enc_p.emb.weight").expect("emb").dims, [4, 2]);
        assert_eq!(
            ck.get("flow.flows.6.enc.in_layers.0.weight")
                .expect("renamed conv")
                .dims,
            [2, 2, 5]
        );
        assert_eq!(ck.get(DP_EXP_NEG_LOGS).expect("folded").data, [0.9, 1.1]);
        assert!(ck.get("enc_p.encoder.norm_layers_1.0.gamma").is_ok());
        let c = ck.conv("flow.flows.6.enc.in_layers.0").expect("attrs");
        assert_eq!(
            (c.dilation, c.pad_left, c.pad_right, c.groups),
            (3, 6, 6, 1)
        );
        assert_eq!(ck.inputs, ["input"]);
    }

    #[test]
    fn refuses_a_graph_that_is_not_vits_and_says_why() {
        let bytes = encode::model(
            &[node("/encoder/x/Relu", "Relu", &["a"], &["b"])],
            &[encode::f32_tensor("w", &[1], &[1.0])],
        );
        match Checkpoint::parse(&bytes) {
            Err(Parse::NotVits(reason)) => assert!(reason.contains("enc_p.emb"), "{reason}"),
            other => panic!("expected NotVits, got {other:?}"),
        }
        assert!(matches!(
            Checkpoint::parse(b"\xff\xff\xff"),
            Err(Parse::Onnx(_))
        ));
    }

    #[test]
    fn refuses_truncated_weights_naming_them() {
        let mut t = encode::raw_tensor("dec.conv_pre.weight", &[1, 2, 7], encode::FLOAT, &[0; 8]);
        t = t.str(8, "dec.conv_pre.weight");
        let bytes = encode::model(
            &[
                node("/enc_p/emb/Gather", "Gather", &["sid", "input"], &["e"]),
                conv(
                    "/dec/conv_pre/Conv",
                    &["z", "dec.conv_pre.weight"],
                    1,
                    [3, 3],
                    1,
                ),
            ],
            &[encode::f32_tensor("sid", &[1, 1], &[0.0]), t],
        );
        match Checkpoint::parse(&bytes) {
            Err(Parse::NotVits(reason)) => {
                assert!(reason.contains("dec.conv_pre.weight"), "{reason}");
            }
            other => panic!("expected NotVits, got {other:?}"),
        }
    }
}
