//! An indexed view of a parsed ONNX graph: initializers by name, the producer and consumers
//! of every value, and typed, length-checked access to initializer data.
//!
//! The weight mapping walks from a weight-consuming node to its neighbours (the Add that adds
//! the bias, the Div that pre-scales an integer bias), so it needs both directions of the
//! data flow. Typed access borrows from the parsed file: nothing is copied until a value is
//! written out, and every length is checked once here so later element reads cannot fail.

use std::collections::HashMap;

use super::proto::{GraphProto, NodeProto, TensorProto};
use super::ConvertError;

/// ONNX `TensorProto.DataType` codes the converter reads.
pub(crate) mod dtype {
    pub(crate) const FLOAT: i32 = 1;
    pub(crate) const UINT8: i32 = 2;
    pub(crate) const INT8: i32 = 3;
    pub(crate) const INT32: i32 = 6;
}

/// An initializer's elements with its shape; `T` is [`Floats`] or [`Ints`].
#[derive(Debug, Clone)]
pub(crate) struct Tensor<'g, T> {
    pub name: &'g str,
    pub dims: Vec<usize>,
    pub data: T,
}

impl<T> Tensor<'_, T> {
    pub(super) fn len(&self) -> usize {
        self.dims.iter().product()
    }
}

/// f32 elements, either little-endian `raw_data` or the unpacked `float_data` field.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Floats<'g> {
    Le(&'g [u8]),
    Unpacked(&'g [f32]),
}

impl Floats<'_> {
    /// Element `i`; callers stay below the length checked by [`Graph::floats`].
    pub(super) fn get(&self, i: usize) -> f32 {
        match self {
            Floats::Le(b) => {
                f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
            }
            Floats::Unpacked(v) => v[i],
        }
    }
}

/// Integer elements (uint8, int8 or int32), widened to i32.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ints<'g> {
    U8(&'g [u8]),
    I8(&'g [u8]),
    I32Le(&'g [u8]),
    /// `int32_data`, which ONNX also uses for 8-bit types; wrapped to `data_type` on read.
    Unpacked {
        values: &'g [i32],
        data_type: i32,
    },
}

impl Ints<'_> {
    /// Element `i`; callers stay below the length checked by [`Graph::ints`].
    pub(super) fn get(&self, i: usize) -> i32 {
        match *self {
            Ints::U8(b) => i32::from(b[i]),
            Ints::I8(b) => i32::from(b[i] as i8),
            Ints::I32Le(b) => {
                i32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
            }
            Ints::Unpacked { values, data_type } => match data_type {
                dtype::UINT8 => i32::from(values[i] as u8),
                dtype::INT8 => i32::from(values[i] as i8),
                _ => values[i],
            },
        }
    }
}

/// A parsed graph with name indexes.
#[derive(Debug)]
pub(crate) struct Graph<'a> {
    pub nodes: Vec<NodeProto<'a>>,
    initializers: HashMap<&'a str, TensorProto<'a>>,
    /// Initializer names in file order, so the mapping is deterministic.
    initializer_order: Vec<&'a str>,
    producer: HashMap<&'a str, usize>,
    /// Consuming node indexes, one entry per input slot (a node using a value twice is listed twice).
    consumers: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Graph<'a> {
    pub(super) fn new(graph: GraphProto<'a>) -> Result<Self, ConvertError> {
        let mut initializers = HashMap::with_capacity(graph.initializers.len());
        let mut initializer_order = Vec::with_capacity(graph.initializers.len());
        for t in graph.initializers {
            initializer_order.push(t.name);
            if let Some(dup) = initializers.insert(t.name, t) {
                return Err(ConvertError::DuplicateInitializer {
                    name: dup.name.to_owned(),
                });
            }
        }
        let mut producer: HashMap<&'a str, usize> = HashMap::new();
        let mut consumers: HashMap<&'a str, Vec<usize>> = HashMap::new();
        for (k, n) in graph.nodes.iter().enumerate() {
            for &o in n.outputs.iter().filter(|o| !o.is_empty()) {
                if let Some(first) = producer.insert(o, k) {
                    return Err(ConvertError::DuplicateProducer {
                        value: o.to_owned(),
                        first: graph.nodes[first].name.to_owned(),
                        second: n.name.to_owned(),
                    });
                }
            }
            for &i in n.inputs.iter().filter(|i| !i.is_empty()) {
                consumers.entry(i).or_default().push(k);
            }
        }
        Ok(Self {
            nodes: graph.nodes,
            initializers,
            initializer_order,
            producer,
            consumers,
        })
    }

    pub(super) fn initializer_names(&self) -> &[&'a str] {
        &self.initializer_order
    }

    pub(super) fn initializer_count(&self) -> usize {
        self.initializer_order.len()
    }

    pub(super) fn is_initializer(&self, name: &str) -> bool {
        self.initializers.contains_key(name)
    }

    /// The ONNX data type of an initializer, `None` if `name` is not one.
    pub(super) fn data_type(&self, name: &str) -> Option<i32> {
        self.initializers.get(name).map(|t| t.data_type)
    }

    pub(super) fn producer(&self, value: &str) -> Option<&NodeProto<'a>> {
        self.producer.get(value).map(|&k| &self.nodes[k])
    }

    pub(super) fn consumers(&self, value: &str) -> Vec<&NodeProto<'a>> {
        self.consumers
            .get(value)
            .map(|ks| ks.iter().map(|&k| &self.nodes[k]).collect())
            .unwrap_or_default()
    }

    /// An f32 initializer, with its element count checked against its dims.
    pub(super) fn floats(
        &self,
        name: &str,
        node: &str,
    ) -> Result<Tensor<'_, Floats<'_>>, ConvertError> {
        let (t, dims, count) = self.checked(name, node)?;
        if t.data_type != dtype::FLOAT {
            return Err(wrong_type(t, node, "FLOAT (1)"));
        }
        let data = if let Some(raw) = t.raw_data {
            check_len(t, &dims, count, raw.len() / 4, raw.len() % 4 == 0)?;
            Floats::Le(raw)
        } else {
            check_len(t, &dims, count, t.float_data.len(), true)?;
            Floats::Unpacked(&t.float_data)
        };
        Ok(Tensor {
            name: t.name,
            dims,
            data,
        })
    }

    /// A uint8, int8 or int32 initializer, with its element count checked against its dims.
    pub(super) fn ints(
        &self,
        name: &str,
        node: &str,
    ) -> Result<Tensor<'_, Ints<'_>>, ConvertError> {
        let (t, dims, count) = self.checked(name, node)?;
        let width = match t.data_type {
            dtype::UINT8 | dtype::INT8 => 1,
            dtype::INT32 => 4,
            _ => return Err(wrong_type(t, node, "UINT8 (2), INT8 (3) or INT32 (6)")),
        };
        let data = if let Some(raw) = t.raw_data {
            check_len(t, &dims, count, raw.len() / width, raw.len() % width == 0)?;
            match t.data_type {
                dtype::UINT8 => Ints::U8(raw),
                dtype::INT8 => Ints::I8(raw),
                _ => Ints::I32Le(raw),
            }
        } else {
            check_len(t, &dims, count, t.int32_data.len(), true)?;
            Ints::Unpacked {
                values: &t.int32_data,
                data_type: t.data_type,
            }
        };
        Ok(Tensor {
            name: t.name,
            dims,
            data,
        })
    }

    /// Looks an initializer up and validates what every typed read needs: it is stored
    /// here, not externally, and its dims are non-negative with a product that fits.
    fn checked(
        &self,
        name: &str,
        node: &str,
    ) -> Result<(&TensorProto<'a>, Vec<usize>, usize), ConvertError> {
        let t = self
            .initializers
            .get(name)
            .ok_or_else(|| ConvertError::MissingInitializer {
                node: node.to_owned(),
                name: name.to_owned(),
            })?;
        if t.data_location == 1 || t.has_external_data {
            return Err(ConvertError::ExternalData {
                name: name.to_owned(),
            });
        }
        let bad = || ConvertError::BadDims {
            name: name.to_owned(),
            dims: t.dims.clone(),
        };
        let dims = t
            .dims
            .iter()
            .map(|&d| usize::try_from(d).map_err(|_| bad()))
            .collect::<Result<Vec<_>, _>>()?;
        let count = dims
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .ok_or_else(bad)?;
        Ok((t, dims, count))
    }
}

fn wrong_type(t: &TensorProto<'_>, node: &str, expected: &'static str) -> ConvertError {
    ConvertError::DataType {
        name: t.name.to_owned(),
        node: node.to_owned(),
        expected,
        found: t.data_type,
    }
}

fn check_len(
    t: &TensorProto<'_>,
    dims: &[usize],
    expected: usize,
    found: usize,
    whole: bool,
) -> Result<(), ConvertError> {
    if whole && found == expected {
        Ok(())
    } else {
        Err(ConvertError::DataLength {
            name: t.name.to_owned(),
            dims: dims.to_vec(),
            expected,
            found,
        })
    }
}

/// Input `index` of `node`, which must be present (non-empty).
pub(crate) fn input<'a>(node: &NodeProto<'a>, index: usize) -> Result<&'a str, ConvertError> {
    node.inputs
        .get(index)
        .copied()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ConvertError::MissingInput {
            node: node.name.to_owned(),
            op_type: node.op_type.to_owned(),
            index,
        })
}
