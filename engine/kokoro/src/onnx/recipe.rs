//! How one output tensor is computed from ONNX initializers: which elements (f32 as stored, or
//! dequantised integers) and which layout change (transpose, LSTM gate reorder) turn them
//! into the torch tensor.
//!
//! A [`Planned`] tensor is validated when it is built, so producing its values later cannot
//! fail: the writer computes each tensor only when it streams it to disk, which keeps peak
//! memory near the size of the ONNX file instead of the 325 MB of f32 weights.
//!
//! Dequantisation is `((q - zp) as f32) * scale` in f32, the same operations in the same
//! order as the Python reference (`kokoro_map.py`), so the results are bit-identical to it.

use super::graph::{Floats, Ints, Tensor};
use super::ConvertError;

/// Which quantisation parameters apply to source element `i`: channel `(i / inner) % count`.
/// Per tensor: `count = 1`. Per output column of a `[in, out]` matrix: `inner = 1, count = out`.
/// Per LSTM direction of `[2, in, 4H]`: `inner = in·4H, count = 2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Channels {
    pub inner: usize,
    pub count: usize,
}

impl Channels {
    pub(super) const PER_TENSOR: Channels = Channels { inner: 1, count: 1 };
}

/// The source elements, in the source initializer's own layout.
#[derive(Debug, Clone)]
pub(crate) enum Elements<'g> {
    Float(Floats<'g>),
    Quantized {
        q: Ints<'g>,
        zero_point: Ints<'g>,
        zero_point_len: usize,
        scale: Floats<'g>,
        scale_len: usize,
        channels: Channels,
    },
}

impl Elements<'_> {
    fn value(&self, i: usize) -> f32 {
        match self {
            Elements::Float(f) => f.get(i),
            Elements::Quantized {
                q,
                zero_point,
                zero_point_len,
                scale,
                scale_len,
                channels,
            } => {
                let c = (i / channels.inner) % channels.count;
                let zp = zero_point.get(if *zero_point_len == 1 { 0 } else { c });
                let s = scale.get(if *scale_len == 1 { 0 } else { c });
                (q.get(i) - zp) as f32 * s
            }
        }
    }
}

/// torch stores LSTM gates as i,f,g,o; ONNX as i,o,f,c. Entry k is the ONNX block of
/// torch gate k.
const ONNX_GATE_OF_TORCH_GATE: [usize; 4] = [0, 2, 3, 1];

/// The layout change from the source initializer to the torch tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Same shape and order.
    AsIs,
    /// Source `[rows, cols]` (ONNX `MatMul` `[in, out]`) → `[cols, rows]` (`nn.Linear` `[out, in]`).
    Transpose { rows: usize, cols: usize },
    /// Direction `direction` of the source `[2, input, 4H]` (ORT's quantizer stores W
    /// transposed), transposed to `[4H, input]` with gate blocks reordered iofc → ifgo.
    LstmWeight {
        direction: usize,
        input: usize,
        hidden: usize,
    },
    /// Half `half` (0 = input bias, 1 = recurrent bias) of direction `direction` of the
    /// source `[2, 8H]`, gate blocks reordered iofc → ifgo: `[4H]`.
    LstmBias {
        direction: usize,
        half: usize,
        hidden: usize,
    },
}

impl Layout {
    /// The output shape for a source of shape `dims`, or `None` if they do not fit together.
    fn output_shape(self, dims: &[usize]) -> Option<Vec<usize>> {
        match self {
            Layout::AsIs => Some(dims.to_vec()),
            Layout::Transpose { rows, cols } => (dims == [rows, cols]).then(|| vec![cols, rows]),
            Layout::LstmWeight {
                direction,
                input,
                hidden,
            } => (direction < 2 && hidden > 0 && dims == [2, input, 4 * hidden])
                .then(|| vec![4 * hidden, input]),
            Layout::LstmBias {
                direction,
                half,
                hidden,
            } => (direction < 2 && half < 2 && hidden > 0 && dims == [2, 8 * hidden])
                .then(|| vec![4 * hidden]),
        }
    }

    /// The source element that becomes output element `i`.
    fn source_index(self, i: usize) -> usize {
        match self {
            Layout::AsIs => i,
            Layout::Transpose { rows, cols } => {
                let (out_row, out_col) = (i / rows, i % rows);
                out_col * cols + out_row
            }
            Layout::LstmWeight {
                direction,
                input,
                hidden,
            } => {
                let (row, col) = (i / input, i % input);
                let onnx_row = ONNX_GATE_OF_TORCH_GATE[row / hidden] * hidden + row % hidden;
                (direction * input + col) * 4 * hidden + onnx_row
            }
            Layout::LstmBias {
                direction,
                half,
                hidden,
            } => {
                let onnx_row = ONNX_GATE_OF_TORCH_GATE[i / hidden] * hidden + i % hidden;
                (direction * 2 + half) * 4 * hidden + onnx_row
            }
        }
    }
}

/// One output tensor: its torch name and shape, and how to compute it.
#[derive(Debug, Clone)]
pub(crate) struct Planned<'g> {
    pub name: String,
    pub shape: Vec<usize>,
    /// The initializers it is read from (weight, scale, zero point), for conflict checks.
    pub sources: Vec<String>,
    /// The node that consumes it, for error messages.
    pub node: String,
    elements: Elements<'g>,
    layout: Layout,
}

impl<'g> Planned<'g> {
    /// An f32 initializer, laid out by `layout`.
    pub(super) fn float(
        name: String,
        node: &str,
        src: &Tensor<'g, Floats<'g>>,
        layout: Layout,
    ) -> Result<Self, ConvertError> {
        let shape = shape_for(layout, &src.dims, src.name, node)?;
        Ok(Self {
            name,
            shape,
            sources: vec![src.name.to_owned()],
            node: node.to_owned(),
            elements: Elements::Float(src.data),
            layout,
        })
    }

    /// A quantised initializer `(q - zp[c]) * scale[c]`, laid out by `layout`. `zero_point` and
    /// `scale` must hold one value or one per channel.
    pub(super) fn quantized(
        name: String,
        node: &str,
        q: &Tensor<'g, Ints<'g>>,
        zero_point: &Tensor<'g, Ints<'g>>,
        scale: &Tensor<'g, Floats<'g>>,
        channels: Channels,
        layout: Layout,
    ) -> Result<Self, ConvertError> {
        let shape = shape_for(layout, &q.dims, q.name, node)?;
        let channel_counts = if channels.count == 1 {
            "1 value".to_owned()
        } else {
            format!("1 or {} values", channels.count)
        };
        for (len, dims, what) in [
            (zero_point.len(), &zero_point.dims, zero_point.name),
            (scale.len(), &scale.dims, scale.name),
        ] {
            if channels.inner == 0 || channels.count == 0 || !(len == 1 || len == channels.count) {
                return Err(ConvertError::Shape {
                    name: what.to_owned(),
                    node: node.to_owned(),
                    expected: channel_counts,
                    found: dims.clone(),
                });
            }
        }
        Ok(Self {
            name,
            shape,
            sources: vec![
                q.name.to_owned(),
                scale.name.to_owned(),
                zero_point.name.to_owned(),
            ],
            node: node.to_owned(),
            elements: Elements::Quantized {
                q: q.data,
                zero_point: zero_point.data,
                zero_point_len: zero_point.len(),
                scale: scale.data,
                scale_len: scale.len(),
                channels,
            },
            layout,
        })
    }

    /// Number of values.
    pub(super) fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the values are dequantised integers.
    pub(super) fn is_quantized(&self) -> bool {
        matches!(self.elements, Elements::Quantized { .. })
    }

    /// The values, row-major in `shape`, as little-endian f32 bytes.
    pub(super) fn to_le_bytes(&self) -> Vec<u8> {
        let n = self.len();
        let mut out = Vec::with_capacity(n * 4);
        for i in 0..n {
            let v = self.elements.value(self.layout.source_index(i));
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// The values as f32 (tests).
    #[cfg(test)]
    pub(super) fn values(&self) -> Vec<f32> {
        (0..self.len())
            .map(|i| self.elements.value(self.layout.source_index(i)))
            .collect()
    }
}

fn shape_for(
    layout: Layout,
    dims: &[usize],
    name: &str,
    node: &str,
) -> Result<Vec<usize>, ConvertError> {
    layout
        .output_shape(dims)
        .ok_or_else(|| ConvertError::Shape {
            name: name.to_owned(),
            node: node.to_owned(),
            expected: match layout {
                Layout::AsIs => "any".to_owned(),
                Layout::Transpose { rows, cols } => format!("[{rows}, {cols}]"),
                Layout::LstmWeight { input, hidden, .. } => format!("[2, {input}, {}]", 4 * hidden),
                Layout::LstmBias { hidden, .. } => format!("[2, {}]", 8 * hidden),
            },
            found: dims.to_vec(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(
        name: &'static str,
        dims: Vec<usize>,
        v: &'static [f32],
    ) -> Tensor<'static, Floats<'static>> {
        Tensor {
            name,
            dims,
            data: Floats::Unpacked(v),
        }
    }

    fn ints(
        name: &'static str,
        dims: Vec<usize>,
        v: &'static [i32],
    ) -> Tensor<'static, Ints<'static>> {
        Tensor {
            name,
            dims,
            data: Ints::Unpacked {
                values: v,
                data_type: 6,
            },
        }
    }

    #[test]
    fn transpose_turns_in_out_into_out_in() {
        // [in=2, out=3] → [3, 2]
        let src = floats("w", vec![2, 3], &[1., 2., 3., 4., 5., 6.]);
        let p = Planned::float(
            "x.weight".into(),
            "n",
            &src,
            Layout::Transpose { rows: 2, cols: 3 },
        )
        .expect("valid");
        assert_eq!(p.shape, vec![3, 2]);
        assert_eq!(p.values(), vec![1., 4., 2., 5., 3., 6.]);
    }

    #[test]
    fn per_column_dequant_then_transpose() {
        let q = ints("q", vec![2, 3], &[1, -2, 3, 4, 5, -6]);
        let zp = ints("zp", vec![3], &[0, 1, 0]);
        let s = floats("s", vec![3], &[0.5, 2.0, 0.25]);
        let ch = Channels { inner: 1, count: 3 };
        let p = Planned::quantized(
            "w".into(),
            "n",
            &q,
            &zp,
            &s,
            ch,
            Layout::Transpose { rows: 2, cols: 3 },
        )
        .expect("valid");
        // dequantised [in, out] = [[0.5, -6, 0.75], [2, 8, -1.5]]
        assert_eq!(p.values(), vec![0.5, 2.0, -6.0, 8.0, 0.75, -1.5]);
    }

    #[test]
    fn per_tensor_asymmetric_uint8() {
        let q = Tensor {
            name: "q",
            dims: vec![2, 1, 2],
            data: Ints::U8(&[69, 0, 127, 70]),
        };
        let zp = Tensor {
            name: "zp",
            dims: vec![],
            data: Ints::U8(&[69]),
        };
        let s = floats("s", vec![], &[0.5]);
        let p = Planned::quantized(
            "w".into(),
            "n",
            &q,
            &zp,
            &s,
            Channels::PER_TENSOR,
            Layout::AsIs,
        )
        .expect("valid");
        assert_eq!(p.values(), vec![0.0, -34.5, 29.0, 0.5]);
    }

    #[test]
    fn lstm_weight_reorders_gates_per_direction() {
        // hidden 1, input 2: source [2, 2, 4]; ONNX gate order i,o,f,c along the last axis.
        // Element value encodes (direction, input col, onnx gate) as d*100 + col*10 + gate.
        static V: [f32; 16] = [
            0., 1., 2., 3., 10., 11., 12., 13., //
            100., 101., 102., 103., 110., 111., 112., 113.,
        ];
        let src = floats("W", vec![2, 2, 4], &V);
        for d in 0..2 {
            let layout = Layout::LstmWeight {
                direction: d,
                input: 2,
                hidden: 1,
            };
            let p = Planned::float("w".into(), "n", &src, layout).expect("valid");
            assert_eq!(p.shape, vec![4, 2]);
            let base = 100. * d as f32;
            // rows: torch i,f,g,o = onnx 0,2,3,1; columns: input 0, 1
            let want: Vec<f32> = [0., 10., 2., 12., 3., 13., 1., 11.]
                .iter()
                .map(|v| v + base)
                .collect();
            assert_eq!(p.values(), want);
        }
    }

    #[test]
    fn lstm_bias_takes_the_right_half_and_reorders() {
        // hidden 1: source [2, 8] = per direction [ih i,o,f,c | hh i,o,f,c]
        static V: [f32; 16] = [
            0., 1., 2., 3., 4., 5., 6., 7., //
            10., 11., 12., 13., 14., 15., 16., 17.,
        ];
        let src = floats("B", vec![2, 8], &V);
        let get = |direction, half| {
            let layout = Layout::LstmBias {
                direction,
                half,
                hidden: 1,
            };
            Planned::float("b".into(), "n", &src, layout)
                .expect("valid")
                .values()
        };
        assert_eq!(get(0, 0), vec![0., 2., 3., 1.]);
        assert_eq!(get(0, 1), vec![4., 6., 7., 5.]);
        assert_eq!(get(1, 0), vec![10., 12., 13., 11.]);
        assert_eq!(get(1, 1), vec![14., 16., 17., 15.]);
    }

    #[test]
    fn lstm_direction_scale_applies_per_direction() {
        let q = ints("q", vec![2, 1, 4], &[1, 1, 1, 1, 1, 1, 1, 1]);
        let zp = ints("zp", vec![2], &[0, 0]);
        let s = floats("s", vec![2], &[0.5, 3.0]);
        let ch = Channels { inner: 4, count: 2 };
        let rev = Layout::LstmWeight {
            direction: 1,
            input: 1,
            hidden: 1,
        };
        let p = Planned::quantized("w".into(), "n", &q, &zp, &s, ch, rev).expect("valid");
        assert_eq!(p.values(), vec![3.0; 4]);
    }

    #[test]
    fn mismatched_shapes_are_errors() {
        let src = floats("w", vec![2, 3], &[0.; 6]);
        let err = Planned::float(
            "x".into(),
            "n",
            &src,
            Layout::Transpose { rows: 3, cols: 2 },
        )
        .expect_err("wrong transpose");
        assert!(matches!(err, ConvertError::Shape { .. }), "{err}");
        let err = Planned::float(
            "x".into(),
            "n",
            &src,
            Layout::LstmBias {
                direction: 0,
                half: 0,
                hidden: 1,
            },
        )
        .expect_err("not an LSTM bias");
        assert!(matches!(err, ConvertError::Shape { .. }), "{err}");
        let q = ints("q", vec![2, 3], &[0; 6]);
        let zp = ints("zp", vec![2], &[0, 0]);
        let s = floats("s", vec![3], &[1., 1., 1.]);
        let err = Planned::quantized(
            "x".into(),
            "n",
            &q,
            &zp,
            &s,
            Channels { inner: 1, count: 3 },
            Layout::AsIs,
        )
        .expect_err("zero point per wrong axis");
        assert!(
            matches!(err, ConvertError::Shape { ref name, .. } if name == "zp"),
            "{err}"
        );
    }
}
