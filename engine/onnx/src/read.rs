//! A small, bounds-checked reader for the protobuf wire format, limited to the parts of the
//! ONNX schema that the weight converter needs.
//!
//! Why hand-written: the converter only needs node names, op types, inputs/outputs and
//! initializer tensors. A generated ONNX binding (protoc, prost-build) would add a build-time
//! code generator for a few hundred lines of value. The file is downloaded, so every read is
//! checked: malformed or truncated input returns [`ProtoError`] with the byte offset, never
//! panics, and nothing is allocated from a length the input declares (every element of a
//! growing `Vec` costs at least one input byte). Tensor payloads (`raw_data`) are borrowed
//! from the input buffer, so parsing a 92 MB model copies almost nothing.
//!
//! Field numbers follow `onnx.proto3` (ONNX IR version 9). Unknown fields are skipped; of a
//! singular field given twice the last wins, as in protobuf.

/// Why the bytes are not a well-formed ONNX protobuf message.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProtoError {
    #[error("truncated protobuf: {what} at byte {offset} needs {needed} bytes, {available} left")]
    Truncated {
        what: &'static str,
        offset: usize,
        needed: u64,
        available: usize,
    },
    #[error("malformed varint at byte {offset} (longer than 10 bytes or above 64 bits)")]
    BadVarint { offset: usize },
    #[error("invalid field key {key} at byte {offset} (field number 0 or out of range)")]
    BadFieldKey { key: u64, offset: usize },
    #[error("unsupported wire type {wire_type} for field {field} at byte {offset}")]
    UnsupportedWireType {
        field: u64,
        wire_type: u8,
        offset: usize,
    },
    #[error("{message}.{field} at byte {offset} has wire type {found}, expected {expected}")]
    WrongWireType {
        message: &'static str,
        field: u64,
        expected: &'static str,
        found: u8,
        offset: usize,
    },
    #[error("{message}.{field} at byte {offset} is not valid UTF-8")]
    BadUtf8 {
        message: &'static str,
        field: u64,
        offset: usize,
    },
    #[error("packed {message}.{field} at byte {offset}: {len} bytes is not a multiple of {width}")]
    PackedLength {
        message: &'static str,
        field: u64,
        len: usize,
        width: usize,
        offset: usize,
    },
}

type Result<T> = std::result::Result<T, ProtoError>;

/// `ModelProto`: only the graph and a few identifying fields.
#[derive(Debug, Default)]
pub struct ModelProto<'a> {
    pub ir_version: i64,
    pub producer_name: &'a str,
    pub opset_import: Vec<OpsetId<'a>>,
    pub graph: Option<GraphProto<'a>>,
}

/// `OperatorSetIdProto`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct OpsetId<'a> {
    pub domain: &'a str,
    pub version: i64,
}

/// `GraphProto`: nodes in topological order and the initializers (weights).
#[derive(Debug, Default)]
pub struct GraphProto<'a> {
    pub name: &'a str,
    pub nodes: Vec<NodeProto<'a>>,
    pub initializers: Vec<TensorProto<'a>>,
}

/// `NodeProto`. Empty input names mean "optional input left out", as in ONNX.
#[derive(Debug, Default)]
pub struct NodeProto<'a> {
    pub name: &'a str,
    pub op_type: &'a str,
    pub domain: &'a str,
    pub inputs: Vec<&'a str>,
    pub outputs: Vec<&'a str>,
    pub attributes: Vec<AttributeProto<'a>>,
}

/// `AttributeProto`, scalar and list-of-scalar values only (tensor and graph attributes are
/// skipped: no weight of the models we convert lives in one).
#[derive(Debug, Default)]
pub struct AttributeProto<'a> {
    pub name: &'a str,
    /// `AttributeType` enum value (1 = FLOAT, 2 = INT, 3 = STRING, 6 = FLOATS, 7 = INTS, ...).
    pub kind: i32,
    pub f: f32,
    pub i: i64,
    pub s: &'a [u8],
    pub floats: Vec<f32>,
    pub ints: Vec<i64>,
}

/// `TensorProto`. Payload: `raw_data` (little-endian, borrowed) or one of the typed fallbacks.
#[derive(Debug, Default)]
pub struct TensorProto<'a> {
    pub name: &'a str,
    pub dims: Vec<i64>,
    /// `TensorProto.DataType` value (1 = FLOAT, 2 = UINT8, 3 = INT8, 6 = INT32, 7 = INT64, ...).
    pub data_type: i32,
    pub raw_data: Option<&'a [u8]>,
    pub float_data: Vec<f32>,
    pub int32_data: Vec<i32>,
    pub int64_data: Vec<i64>,
    /// `DataLocation`: 0 = stored here, 1 = external file.
    pub data_location: i32,
    pub has_external_data: bool,
    /// Byte offset of this message in the input, for error messages.
    pub offset: usize,
}

/// Parses a serialized `ModelProto`.
pub fn parse_model(bytes: &[u8]) -> Result<ModelProto<'_>> {
    let mut model = ModelProto::default();
    let mut r = Reader::new(bytes, 0);
    while let Some(f) = r.field()? {
        const M: &str = "ModelProto";
        match f.number {
            1 => model.ir_version = f.varint(M)? as i64,
            2 => model.producer_name = f.string(M)?,
            7 => model.graph = Some(parse_graph(f.message(M)?)?),
            8 => model.opset_import.push(parse_opset(f.message(M)?)?),
            _ => {}
        }
    }
    Ok(model)
}

fn parse_opset(mut r: Reader<'_>) -> Result<OpsetId<'_>> {
    let mut op = OpsetId::default();
    while let Some(f) = r.field()? {
        const M: &str = "OperatorSetIdProto";
        match f.number {
            1 => op.domain = f.string(M)?,
            2 => op.version = f.varint(M)? as i64,
            _ => {}
        }
    }
    Ok(op)
}

fn parse_graph(mut r: Reader<'_>) -> Result<GraphProto<'_>> {
    let mut g = GraphProto::default();
    while let Some(f) = r.field()? {
        const M: &str = "GraphProto";
        match f.number {
            1 => g.nodes.push(parse_node(f.message(M)?)?),
            2 => g.name = f.string(M)?,
            5 => g.initializers.push(parse_tensor(f.message(M)?)?),
            _ => {}
        }
    }
    Ok(g)
}

fn parse_node(mut r: Reader<'_>) -> Result<NodeProto<'_>> {
    let mut n = NodeProto::default();
    while let Some(f) = r.field()? {
        const M: &str = "NodeProto";
        match f.number {
            1 => n.inputs.push(f.string(M)?),
            2 => n.outputs.push(f.string(M)?),
            3 => n.name = f.string(M)?,
            4 => n.op_type = f.string(M)?,
            5 => n.attributes.push(parse_attribute(f.message(M)?)?),
            7 => n.domain = f.string(M)?,
            _ => {}
        }
    }
    Ok(n)
}

fn parse_attribute(mut r: Reader<'_>) -> Result<AttributeProto<'_>> {
    let mut a = AttributeProto::default();
    while let Some(f) = r.field()? {
        const M: &str = "AttributeProto";
        match f.number {
            1 => a.name = f.string(M)?,
            2 => a.f = f32::from_le_bytes(f.fixed32(M)?),
            3 => a.i = f.varint(M)? as i64,
            4 => a.s = f.bytes(M)?,
            7 => f.push_f32s(M, &mut a.floats)?,
            8 => f.push_varints(M, &mut a.ints, |v| v as i64)?,
            20 => a.kind = f.varint(M)? as i32,
            _ => {}
        }
    }
    Ok(a)
}

fn parse_tensor(mut r: Reader<'_>) -> Result<TensorProto<'_>> {
    let mut t = TensorProto {
        offset: r.offset(),
        ..TensorProto::default()
    };
    while let Some(f) = r.field()? {
        const M: &str = "TensorProto";
        match f.number {
            1 => f.push_varints(M, &mut t.dims, |v| v as i64)?,
            2 => t.data_type = f.varint(M)? as i32,
            4 => f.push_f32s(M, &mut t.float_data)?,
            // int32 is encoded as a sign-extended 64-bit varint; truncation restores it.
            5 => f.push_varints(M, &mut t.int32_data, |v| v as i32)?,
            7 => f.push_varints(M, &mut t.int64_data, |v| v as i64)?,
            8 => t.name = f.string(M)?,
            9 => t.raw_data = Some(f.bytes(M)?),
            13 => {
                f.bytes(M)?;
                t.has_external_data = true;
            }
            14 => t.data_location = f.varint(M)? as i32,
            _ => {}
        }
    }
    Ok(t)
}

/// A cursor over one message's bytes; `base` is the message's offset in the whole input.
#[derive(Debug, Clone)]
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

/// One decoded field: its number, where it starts, and its undecoded value.
#[derive(Debug)]
struct Field<'a> {
    number: u64,
    offset: usize,
    value: WireValue<'a>,
}

#[derive(Debug)]
enum WireValue<'a> {
    Varint(u64),
    Fixed64,
    /// Length-delimited payload and the absolute offset where it starts.
    Bytes(&'a [u8], usize),
    Fixed32([u8; 4]),
}

impl WireValue<'_> {
    fn wire_type(&self) -> u8 {
        match self {
            WireValue::Varint(_) => 0,
            WireValue::Fixed64 => 1,
            WireValue::Bytes(..) => 2,
            WireValue::Fixed32(_) => 5,
        }
    }
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], base: usize) -> Self {
        Self { buf, pos: 0, base }
    }

    fn offset(&self) -> usize {
        self.base + self.pos
    }

    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8]> {
        let offset = self.offset();
        let available = self.remaining();
        let end = usize::try_from(n)
            .ok()
            .filter(|&n| n <= available)
            .map(|n| self.pos + n);
        let Some(end) = end else {
            return Err(ProtoError::Truncated {
                what,
                offset,
                needed: n,
                available,
            });
        };
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn varint(&mut self) -> Result<u64> {
        let start = self.offset();
        let mut value: u64 = 0;
        for i in 0..10 {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(ProtoError::Truncated {
                    what: "varint",
                    offset: start,
                    needed: i + 1,
                    available: i as usize,
                });
            };
            self.pos += 1;
            // The tenth byte may only carry the 64th bit.
            if i == 9 && byte > 1 {
                return Err(ProtoError::BadVarint { offset: start });
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ProtoError::BadVarint { offset: start })
    }

    /// Reads the next field, or `None` at the end of the message.
    fn field(&mut self) -> Result<Option<Field<'a>>> {
        if self.remaining() == 0 {
            return Ok(None);
        }
        let offset = self.offset();
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 || number > (1 << 29) - 1 {
            return Err(ProtoError::BadFieldKey { key, offset });
        }
        let wire_type = (key & 7) as u8;
        let value = match wire_type {
            0 => WireValue::Varint(self.varint()?),
            1 => {
                self.take(8, "fixed64")?;
                WireValue::Fixed64
            }
            2 => {
                let len = self.varint()?;
                let start = self.offset();
                WireValue::Bytes(self.take(len, "length-delimited field")?, start)
            }
            5 => {
                let b = self.take(4, "fixed32")?;
                WireValue::Fixed32([b[0], b[1], b[2], b[3]])
            }
            _ => {
                return Err(ProtoError::UnsupportedWireType {
                    field: number,
                    wire_type,
                    offset,
                })
            }
        };
        Ok(Some(Field {
            number,
            offset,
            value,
        }))
    }
}

impl<'a> Field<'a> {
    fn wrong(&self, message: &'static str, expected: &'static str) -> ProtoError {
        ProtoError::WrongWireType {
            message,
            field: self.number,
            expected,
            found: self.value.wire_type(),
            offset: self.offset,
        }
    }

    fn varint(&self, message: &'static str) -> Result<u64> {
        match self.value {
            WireValue::Varint(v) => Ok(v),
            _ => Err(self.wrong(message, "varint")),
        }
    }

    fn fixed32(&self, message: &'static str) -> Result<[u8; 4]> {
        match self.value {
            WireValue::Fixed32(b) => Ok(b),
            _ => Err(self.wrong(message, "fixed32")),
        }
    }

    fn bytes(&self, message: &'static str) -> Result<&'a [u8]> {
        match self.value {
            WireValue::Bytes(b, _) => Ok(b),
            _ => Err(self.wrong(message, "length-delimited")),
        }
    }

    fn string(&self, message: &'static str) -> Result<&'a str> {
        std::str::from_utf8(self.bytes(message)?).map_err(|_| ProtoError::BadUtf8 {
            message,
            field: self.number,
            offset: self.offset,
        })
    }

    fn message(&self, message: &'static str) -> Result<Reader<'a>> {
        match self.value {
            WireValue::Bytes(b, start) => Ok(Reader::new(b, start)),
            _ => Err(self.wrong(message, "length-delimited")),
        }
    }

    /// A repeated varint field, packed (one length-delimited run) or not (one per field).
    fn push_varints<T>(
        &self,
        message: &'static str,
        out: &mut Vec<T>,
        conv: impl Fn(u64) -> T,
    ) -> Result<()> {
        match self.value {
            WireValue::Varint(v) => out.push(conv(v)),
            WireValue::Bytes(b, start) => {
                let mut r = Reader::new(b, start);
                while r.remaining() > 0 {
                    out.push(conv(r.varint()?));
                }
            }
            _ => return Err(self.wrong(message, "varint or packed varints")),
        }
        Ok(())
    }

    /// A repeated float field, packed or not.
    fn push_f32s(&self, message: &'static str, out: &mut Vec<f32>) -> Result<()> {
        match self.value {
            WireValue::Fixed32(b) => out.push(f32::from_le_bytes(b)),
            WireValue::Bytes(b, start) => {
                if b.len() % 4 != 0 {
                    return Err(ProtoError::PackedLength {
                        message,
                        field: self.number,
                        len: b.len(),
                        width: 4,
                        offset: start,
                    });
                }
                out.extend(
                    b.chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                );
            }
            _ => return Err(self.wrong(message, "fixed32 or packed fixed32")),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
