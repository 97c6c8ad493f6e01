//! Finds every Kokoro-82M parameter in the int8 ONNX graph by walking the nodes that consume
//! weights, and plans how to turn each into its torch tensor (`kokoro-port.md` §2).
//!
//! Names come from the consuming node's scope (see [`scope`](super::scope)), never from a
//! table of the anonymous initializer names, so the mapping follows the graph's structure:
//!
//! | node | weight | bias |
//! |---|---|---|
//! | `MatMulInteger` | int8 `[in,out]`, per-column scale → transpose | f32 on the Add (or `FastGelu`) after the rescale |
//! | `ConvInteger` | uint8 `[out,in/g,k]`, per-tensor asymmetric | f32 input of the Div that pre-scales the int32 bias |
//! | `Conv` / `ConvTranspose` (f32) | as stored | input 2 |
//! | `MatMul` (f32) | `[in,out]` → transpose | f32 on the following Add |
//! | `DynamicQuantizeLSTM` | int8 W/R per direction → transpose, gates iofc → ifgo | B split ih/hh, same reorder |
//! | `Gather` → `DequantizeLinear` | int8 embedding table, per tensor | — |
//! | (Skip)LayerNormalization | γ, β as stored (named initializers) | |
//!
//! Finally, named f32 initializers that no such node consumes but the model needs (the
//! Snake `alpha1`/`alpha2` of the generator) are taken by name, and the result is checked
//! against the expected parameter list.

use std::collections::HashMap;

use super::graph::{input, Graph};
use super::proto::NodeProto;
use super::recipe::{Channels, Layout, Planned};
use super::scope::{module_of_node, param_of_initializer, scale_of_quantized};
use super::ConvertError;

/// The planned output tensors, in discovery order.
#[derive(Debug, Default)]
pub(crate) struct Mapping<'g> {
    pub tensors: Vec<Planned<'g>>,
    index: HashMap<String, usize>,
}

impl<'g> Mapping<'g> {
    pub(super) fn get(&self, name: &str) -> Option<&Planned<'g>> {
        self.index.get(name).map(|&k| &self.tensors[k])
    }

    /// Adds a tensor. The same parameter found again from the same initializers (ALBERT's
    /// shared layer is unrolled 12×) is fine; from different ones it is a conflict.
    fn put(&mut self, p: Planned<'g>) -> Result<(), ConvertError> {
        if let Some(&k) = self.index.get(&p.name) {
            let first = &self.tensors[k];
            if first.sources != p.sources || first.shape != p.shape {
                return Err(ConvertError::Conflict {
                    param: p.name,
                    first: first.sources.clone(),
                    second: p.sources,
                });
            }
            return Ok(());
        }
        self.index.insert(p.name.clone(), self.tensors.len());
        self.tensors.push(p);
        Ok(())
    }
}

/// Maps the whole graph and checks the result against `expected` (name → shape).
pub(crate) fn map_kokoro<'g>(
    graph: &'g Graph<'_>,
    expected: &[(String, Vec<usize>)],
) -> Result<Mapping<'g>, ConvertError> {
    let mut m = map_weight_consumers(graph)?;
    let wanted: HashMap<&str, &[usize]> = expected
        .iter()
        .map(|(n, s)| (n.as_str(), s.as_slice()))
        .collect();
    add_named_constants(graph, &mut m, &wanted)?;
    for p in &m.tensors {
        let Some(&shape) = wanted.get(p.name.as_str()) else {
            return Err(ConvertError::UnknownParameter {
                param: p.name.clone(),
                node: p.node.clone(),
            });
        };
        if p.shape != shape {
            return Err(ConvertError::ParameterShape {
                param: p.name.clone(),
                expected: shape.to_vec(),
                found: p.shape.clone(),
            });
        }
    }
    let missing: Vec<String> = expected
        .iter()
        .filter(|(n, _)| m.get(n).is_none())
        .map(|(n, _)| n.clone())
        .collect();
    if !missing.is_empty() {
        return Err(ConvertError::MissingParameters { missing });
    }
    Ok(m)
}

/// Walks the nodes in graph order and plans every weight and bias they consume.
pub(crate) fn map_weight_consumers<'g>(graph: &'g Graph<'_>) -> Result<Mapping<'g>, ConvertError> {
    let mut m = Mapping::default();
    for node in &graph.nodes {
        let init_input = |k: usize| node.inputs.get(k).is_some_and(|i| graph.is_initializer(i));
        match node.op_type {
            "MatMulInteger" if init_input(1) => matmul_integer(graph, node, &mut m)?,
            "ConvInteger" => conv_integer(graph, node, &mut m)?,
            "Conv" | "ConvTranspose" if init_input(1) && !node.name.contains("istft") => {
                float_conv(graph, node, &mut m)?;
            }
            "DynamicQuantizeLSTM" => lstm(graph, node, &mut m)?,
            "Gather" if init_input(0) && node.inputs[0].ends_with("_quantized") => {
                embedding(graph, node, &mut m)?;
            }
            "LayerNormalization" => layer_norm(graph, node, 1, &mut m)?,
            "SkipLayerNormalization" => layer_norm(graph, node, 2, &mut m)?,
            "MatMul" if init_input(1) => float_matmul(graph, node, &mut m)?,
            _ => {}
        }
    }
    Ok(m)
}

fn module(node: &NodeProto<'_>) -> Result<String, ConvertError> {
    module_of_node(node.name).ok_or_else(|| ConvertError::NoScope {
        node: node.name.to_owned(),
    })
}

/// The scale initializer stored beside a quantized weight (`<stem>_scale`).
fn scale_name(weight: &str) -> String {
    scale_of_quantized(weight).unwrap_or_else(|| format!("{weight}_scale"))
}

fn matmul_integer<'g>(
    graph: &'g Graph<'_>,
    node: &NodeProto<'_>,
    m: &mut Mapping<'g>,
) -> Result<(), ConvertError> {
    let module = module(node)?;
    let w = input(node, 1)?;
    let q = graph.ints(w, node.name)?;
    let zp = graph.ints(input(node, 3)?, node.name)?;
    let scale = graph.floats(&scale_name(w), node.name)?;
    let (rows, cols) = match q.dims[..] {
        [rows, cols] => (rows, cols),
        _ => (0, 0), // Planned::quantized reports the shape error
    };
    let channels = Channels {
        inner: 1,
        count: cols.max(1),
    };
    let layout = Layout::Transpose { rows, cols };
    m.put(Planned::quantized(
        format!("{module}.weight"),
        node.name,
        &q,
        &zp,
        &scale,
        channels,
        layout,
    )?)?;
    bias_after(graph, node, &module, m)
}

fn conv_integer<'g>(
    graph: &'g Graph<'_>,
    node: &NodeProto<'_>,
    m: &mut Mapping<'g>,
) -> Result<(), ConvertError> {
    let module = module(node)?;
    let w = input(node, 1)?;
    let q = graph.ints(w, node.name)?;
    let zp = graph.ints(input(node, 3)?, node.name)?;
    let scale = graph.floats(&scale_name(w), node.name)?;
    let p = Planned::quantized(
        format!("{module}.weight"),
        node.name,
        &q,
        &zp,
        &scale,
        Channels::PER_TENSOR,
        Layout::AsIs,
    )?;
    m.put(p)?;
    bias_after(graph, node, &module, m)
}

fn float_conv<'g>(
    graph: &'g Graph<'_>,
    node: &NodeProto<'_>,
    m: &mut Mapping<'g>,
) -> Result<(), ConvertError> {
    let module = module(node)?;
    let w = graph.floats(input(node, 1)?, node.name)?;
    m.put(Planned::float(
        format!("{module}.weight"),
        node.name,
        &w,
        Layout::AsIs,
    )?)?;
    if let Some(b) = node.inputs.get(2).filter(|b| graph.is_initializer(b)) {
        let b = graph.floats(b, node.name)?;
        m.put(Planned::float(
            format!("{module}.bias"),
            node.name,
            &b,
            Layout::AsIs,
        )?)?;
    }
    Ok(())
}

fn float_matmul<'g>(
    graph: &'g Graph<'_>,
    node: &NodeProto<'_>,
    m: &mut Mapping<'g>,
) -> Result<(), ConvertError> {
    let module = module(node)?;
    let w = graph.floats(input(node, 1)?, node.name)?;
    let (rows, cols) = match w.dims[..] {
        [rows, cols] => (rows, cols),
        _ => (0, 0),
    };
    let layout = Layout::Transpose { rows, cols };
    m.put(Planned::float(
        format!("{module}.weight"),
        node.name,
        &w,
        layout,
    )?)?;
    bias_after(graph, node, &module, m)
}

/// `DynamicQuantizeLSTM` inputs: 1 W `[2,in,4H]`, 2 R `[2,H,4H]`, 3 B `[2,8H]`,
/// 8/9 W scale/zero point `[2]`, 10/11 R scale/zero point `[2]`.
fn lstm<'g>(
    graph: &'g Graph<'_>,
    node: &NodeProto<'_>,
    m: &mut Mapping<'g>,
) -> Result<(), ConvertError> {
    let module = module(node)?;
    let w = graph.ints(input(node, 1)?, node.name)?;
    let r = graph.ints(input(node, 2)?, node.name)?;
    let b = graph.floats(input(node, 3)?, node.name)?;
    let w_scale = graph.floats(input(node, 8)?, node.name)?;
    let w_zp = graph.ints(input(node, 9)?, node.name)?;
    let r_scale = graph.floats(input(node, 10)?, node.name)?;
    let r_zp = graph.ints(input(node, 11)?, node.name)?;
    let hidden = r.dims.get(1).copied().unwrap_or(0);
    let input_size = w.dims.get(1).copied().unwrap_or(0);
    for (direction, sfx) in [(0, ""), (1, "_reverse")] {
        let per_direction = |rows: usize| Channels {
            inner: (rows * 4 * hidden).max(1),
            count: 2,
        };
        m.put(Planned::quantized(
            format!("{module}.weight_ih_l0{sfx}"),
            node.name,
            &w,
            &w_zp,
            &w_scale,
            per_direction(input_size),
            Layout::LstmWeight {
                direction,
                input: input_size,
                hidden,
            },
        )?)?;
        m.put(Planned::quantized(
            format!("{module}.weight_hh_l0{sfx}"),
            node.name,
            &r,
            &r_zp,
            &r_scale,
            per_direction(hidden),
            Layout::LstmWeight {
                direction,
                input: hidden,
                hidden,
            },
        )?)?;
        for (half, name) in [(0, "bias_ih_l0"), (1, "bias_hh_l0")] {
            let layout = Layout::LstmBias {
                direction,
                half,
                hidden,
            };
            m.put(Planned::float(
                format!("{module}.{name}{sfx}"),
                node.name,
                &b,
                layout,
            )?)?;
        }
    }
    Ok(())
}

/// Gather on an int8 table, dequantised by the `DequantizeLinear` that consumes its output.
fn embedding<'g>(
    graph: &'g Graph<'_>,
    node: &NodeProto<'_>,
    m: &mut Mapping<'g>,
) -> Result<(), ConvertError> {
    let table = input(node, 0)?;
    let output = node.outputs.first().copied().unwrap_or_default();
    let consumers = graph.consumers(output);
    let dq = consumers
        .first()
        .filter(|c| c.op_type == "DequantizeLinear")
        .ok_or_else(|| ConvertError::UnexpectedConsumer {
            node: node.name.to_owned(),
            value: output.to_owned(),
            consumer: consumers
                .first()
                .map_or("nothing", |c| c.op_type)
                .to_owned(),
            expected: "DequantizeLinear",
        })?;
    let name = match param_of_initializer(table) {
        Some(name) => name,
        None => format!("{}.weight", module(node)?),
    };
    let q = graph.ints(table, node.name)?;
    let scale = graph.floats(input(dq, 1)?, dq.name)?;
    let zp = graph.ints(input(dq, 2)?, dq.name)?;
    m.put(Planned::quantized(
        name,
        node.name,
        &q,
        &zp,
        &scale,
        Channels::PER_TENSOR,
        Layout::AsIs,
    )?)
}

/// γ at input `gamma`, β right after it. Nodes whose γ is an anonymous constant (the
/// `DurationEncoder`'s `AdaLayerNorm` uses fixed ones/zeros) hold no parameters.
fn layer_norm<'g>(
    graph: &'g Graph<'_>,
    node: &NodeProto<'_>,
    gamma: usize,
    m: &mut Mapping<'g>,
) -> Result<(), ConvertError> {
    for k in [gamma, gamma + 1] {
        let Some(init) = node.inputs.get(k).filter(|i| !i.is_empty()) else {
            continue;
        };
        let Some(param) = param_of_initializer(init) else {
            if k == gamma {
                return Ok(());
            }
            return Err(ConvertError::NoScope {
                node: format!("{} (its β {init:?} carries no PyTorch name)", node.name),
            });
        };
        let t = graph.floats(init, node.name)?;
        m.put(Planned::float(param, node.name, &t, Layout::AsIs)?)?;
    }
    Ok(())
}

/// Plans `<module>.bias` if the node's result flows into a bias addition.
fn bias_after<'g>(
    graph: &'g Graph<'_>,
    node: &NodeProto<'_>,
    module: &str,
    m: &mut Mapping<'g>,
) -> Result<(), ConvertError> {
    let Some(output) = node.outputs.first() else {
        return Ok(());
    };
    if let Some(bias) = follow_to_bias(graph, output) {
        let b = graph.floats(bias, node.name)?;
        m.put(Planned::float(
            format!("{module}.bias"),
            node.name,
            &b,
            Layout::AsIs,
        )?)?;
    }
    Ok(())
}

/// From a weight op's output, follows the single-consumer chain through Cast and Mul (the
/// int32 → f32 rescale) to the Add or `FastGelu` that adds the bias, and returns the bias
/// initializer. For `ConvInteger` the bias is added in int32 before the rescale: the Add's
/// other input is `Reshape(Cast(Floor(Div(bias, x_scale·w_scale))))`, and the raw f32 bias
/// is the Div's first input.
fn follow_to_bias<'g>(graph: &'g Graph<'_>, value: &str) -> Option<&'g str> {
    const MAX_HOPS: usize = 6;
    let mut current = value.to_owned();
    for _ in 0..MAX_HOPS {
        let consumers = graph.consumers(&current);
        let [next] = consumers[..] else {
            return None;
        };
        match next.op_type {
            "Add" | "FastGelu" => {
                let is_f32_init = |x: &str| graph.data_type(x) == Some(super::graph::dtype::FLOAT);
                if let Some(&b) = next
                    .inputs
                    .iter()
                    .find(|&&x| x != current && is_f32_init(x))
                {
                    return Some(b);
                }
                let other = next.inputs.iter().find(|&&x| x != current)?;
                let mut producer = graph.producer(other);
                for _ in 0..MAX_HOPS {
                    let p = producer?;
                    let first = p.inputs.first().copied()?;
                    if p.op_type == "Div" && graph.is_initializer(first) {
                        return Some(first);
                    }
                    producer = graph.producer(first);
                }
                return None;
            }
            "Cast" | "Mul" => current = next.outputs.first()?.to_string(),
            _ => return None,
        }
    }
    None
}

/// Named f32 initializers that no weight-consuming node took but the model needs (the
/// generator's Snake `alpha1`/`alpha2`, consumed by plain Mul nodes). The iSTFT basis and
/// quantisation artefacts are never parameters.
fn add_named_constants<'g>(
    graph: &'g Graph<'_>,
    m: &mut Mapping<'g>,
    wanted: &HashMap<&str, &[usize]>,
) -> Result<(), ConvertError> {
    for &name in graph.initializer_names() {
        if name.ends_with("_quantized")
            || name.ends_with("_scale")
            || name.ends_with("_zero_point")
            || name.contains("istft")
        {
            continue;
        }
        let Some(param) = param_of_initializer(name) else {
            continue;
        };
        if wanted.contains_key(param.as_str()) && m.get(&param).is_none() {
            let t = graph.floats(name, "(named initializer)")?;
            m.put(Planned::float(
                param,
                "(named initializer)",
                &t,
                Layout::AsIs,
            )?)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
