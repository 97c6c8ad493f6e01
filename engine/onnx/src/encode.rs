//! A small protobuf writer for ONNX messages: builds models byte by byte, so the reader, each
//! family's weight mapping and the fuzzers' seed corpus can be made without a real model file.
//! It writes only what the reader reads; it is not an ONNX exporter.

/// One protobuf message under construction.
#[derive(Debug, Default, Clone)]
#[must_use]
pub struct Msg(pub Vec<u8>);

pub fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

impl Msg {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn key(mut self, field: u64, wire_type: u64) -> Self {
        put_varint(field << 3 | wire_type, &mut self.0);
        self
    }

    pub fn varint(self, field: u64, v: u64) -> Self {
        let mut m = self.key(field, 0);
        put_varint(v, &mut m.0);
        m
    }

    pub fn fixed32(self, field: u64, v: [u8; 4]) -> Self {
        let mut m = self.key(field, 5);
        m.0.extend_from_slice(&v);
        m
    }

    pub fn bytes(self, field: u64, b: &[u8]) -> Self {
        let mut m = self.key(field, 2);
        put_varint(b.len() as u64, &mut m.0);
        m.0.extend_from_slice(b);
        m
    }

    pub fn str(self, field: u64, s: &str) -> Self {
        self.bytes(field, s.as_bytes())
    }

    pub fn msg(self, field: u64, m: &Msg) -> Self {
        self.bytes(field, &m.0)
    }

    pub fn packed_varints(self, field: u64, vs: &[i64]) -> Self {
        let mut payload = Vec::new();
        for &v in vs {
            put_varint(v as u64, &mut payload);
        }
        self.bytes(field, &payload)
    }

    pub fn packed_f32(self, field: u64, vs: &[f32]) -> Self {
        let payload: Vec<u8> = vs.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.bytes(field, &payload)
    }
}

/// ONNX data type codes (`TensorProto.DataType`).
pub const FLOAT: u64 = 1;
pub const UINT8: u64 = 2;
pub const INT8: u64 = 3;

/// An initializer with `raw_data`.
pub fn raw_tensor(name: &str, dims: &[i64], data_type: u64, raw: &[u8]) -> Msg {
    Msg::new()
        .packed_varints(1, dims)
        .varint(2, data_type)
        .str(8, name)
        .bytes(9, raw)
}

pub fn f32_tensor(name: &str, dims: &[i64], values: &[f32]) -> Msg {
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    raw_tensor(name, dims, FLOAT, &raw)
}

pub fn i8_tensor(name: &str, dims: &[i64], values: &[i8]) -> Msg {
    let raw: Vec<u8> = values.iter().map(|&v| v as u8).collect();
    raw_tensor(name, dims, INT8, &raw)
}

pub fn u8_tensor(name: &str, dims: &[i64], values: &[u8]) -> Msg {
    raw_tensor(name, dims, UINT8, values)
}

pub fn node(name: &str, op_type: &str, inputs: &[&str], outputs: &[&str]) -> Msg {
    let mut m = Msg::new();
    for i in inputs {
        m = m.str(1, i);
    }
    for o in outputs {
        m = m.str(2, o);
    }
    m.str(3, name).str(4, op_type)
}

/// A serialized `ModelProto` holding one graph.
#[must_use]
pub fn model(nodes: &[Msg], initializers: &[Msg]) -> Vec<u8> {
    let mut graph = Msg::new().str(2, "test");
    for n in nodes {
        graph = graph.msg(1, n);
    }
    for t in initializers {
        graph = graph.msg(5, t);
    }
    let opset = Msg::new().str(1, "").varint(2, 20);
    Msg::new()
        .varint(1, 9)
        .str(2, "banter-test")
        .msg(7, &graph)
        .msg(8, &opset)
        .0
}
