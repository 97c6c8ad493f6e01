//! Unit tests of the protobuf reader on hand-made byte strings, well-formed and broken.

use super::*;
use crate::encode::{self as testutil, Msg};

fn sample_model() -> Vec<u8> {
    let attr = Msg::new()
        .str(1, "pads")
        .varint(20, 7)
        .packed_varints(8, &[1, 1]);
    let conv = testutil::node("/enc/conv/Conv", "Conv", &["x", "w", ""], &["y"]).msg(5, &attr);
    let w = testutil::f32_tensor("w", &[1, 2], &[1.5, -2.0]);
    testutil::model(&[conv], &[w])
}

#[test]
fn parses_a_small_model() {
    let bytes = sample_model();
    let m = parse_model(&bytes).expect("well-formed model");
    assert_eq!(m.ir_version, 9);
    assert_eq!(m.producer_name, "banter-test");
    assert_eq!(
        m.opset_import,
        vec![OpsetId {
            domain: "",
            version: 20
        }]
    );
    let g = m.graph.expect("graph present");
    assert_eq!(g.name, "test");
    assert_eq!(g.nodes.len(), 1);
    let n = &g.nodes[0];
    assert_eq!(n.name, "/enc/conv/Conv");
    assert_eq!(n.op_type, "Conv");
    assert_eq!(n.inputs, vec!["x", "w", ""]);
    assert_eq!(n.outputs, vec!["y"]);
    assert_eq!(n.attributes.len(), 1);
    assert_eq!(n.attributes[0].name, "pads");
    assert_eq!(n.attributes[0].kind, 7);
    assert_eq!(n.attributes[0].ints, vec![1, 1]);
    let t = &g.initializers[0];
    assert_eq!(t.name, "w");
    assert_eq!(t.dims, vec![1, 2]);
    assert_eq!(t.data_type, 1);
    let raw: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(t.raw_data, Some(raw.as_slice()));
    assert!(t.offset > 0 && t.offset < bytes.len());
}

#[test]
fn reads_typed_fallbacks_packed_and_unpacked() {
    // dims unpacked (one varint per field), float_data both unpacked and packed,
    // int32_data packed with a negative value (10-byte sign-extended varint), int64_data.
    let t = Msg::new()
        .varint(1, 2)
        .varint(1, 3)
        .varint(2, 1)
        .fixed32(4, 0.25f32.to_le_bytes())
        .packed_f32(4, &[1.0, -3.5])
        .packed_varints(5, &[-64, 127, 0])
        .varint(7, u64::MAX) // -1 as int64
        .str(8, "t");
    let bytes = Msg::new().msg(5, &t);
    let g = parse_graph(Reader::new(&bytes.0, 0)).expect("well-formed graph");
    let t = &g.initializers[0];
    assert_eq!(t.dims, vec![2, 3]);
    assert_eq!(t.float_data, vec![0.25, 1.0, -3.5]);
    assert_eq!(t.int32_data, vec![-64, 127, 0]);
    assert_eq!(t.int64_data, vec![-1]);
    assert_eq!(t.raw_data, None);
}

#[test]
fn skips_unknown_fields_of_every_wire_type() {
    let mut m = Msg::new().varint(99, 5).key(98, 1);
    m.0.extend_from_slice(&[0; 8]); // fixed64 payload
    let m = m.bytes(97, b"whatever").fixed32(96, [0; 4]).str(4, "Relu");
    let n = parse_node(Reader::new(&m.0, 0)).expect("unknown fields are skipped");
    assert_eq!(n.op_type, "Relu");
}

#[test]
fn varint_limits() {
    // 2^64 - 1 takes exactly ten bytes and is accepted.
    let mut ok = vec![0xff; 9];
    ok.push(0x01);
    assert_eq!(Reader::new(&ok, 0).varint(), Ok(u64::MAX));
    // A tenth byte above 1 would overflow 64 bits.
    let mut over = vec![0xff; 9];
    over.push(0x02);
    assert_eq!(
        Reader::new(&over, 0).varint(),
        Err(ProtoError::BadVarint { offset: 0 })
    );
    // Eleven continuation bytes.
    let long = vec![0x80; 11];
    assert_eq!(
        Reader::new(&long, 0).varint(),
        Err(ProtoError::BadVarint { offset: 0 })
    );
    // Ends in the middle.
    assert!(matches!(
        Reader::new(&[0x80, 0x80], 0).varint(),
        Err(ProtoError::Truncated { what: "varint", .. })
    ));
}

#[test]
fn rejects_a_length_past_the_end() {
    // Graph field 1 (node) claims 100 bytes, 2 follow.
    let bytes = [0x0a, 100, 0x22, 0x00];
    let err = parse_graph(Reader::new(&bytes, 0)).expect_err("truncated");
    assert_eq!(
        err,
        ProtoError::Truncated {
            what: "length-delimited field",
            offset: 2,
            needed: 100,
            available: 2
        }
    );
}

#[test]
fn rejects_a_huge_declared_length_without_allocating() {
    let mut bytes = vec![0x4a]; // TensorProto.raw_data, wire type 2
    bytes.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    let err = parse_tensor(Reader::new(&bytes, 0)).expect_err("truncated");
    assert!(matches!(
        err,
        ProtoError::Truncated {
            needed: u64::MAX,
            ..
        }
    ));
}

#[test]
fn rejects_group_and_invalid_wire_types() {
    for wire_type in [3u8, 4, 6, 7] {
        let bytes = [(1 << 3) | wire_type, 0];
        let err = parse_node(Reader::new(&bytes, 0)).expect_err("bad wire type");
        assert_eq!(
            err,
            ProtoError::UnsupportedWireType {
                field: 1,
                wire_type,
                offset: 0
            }
        );
    }
}

#[test]
fn rejects_field_number_zero() {
    let err = parse_node(Reader::new(&[0x02, 0x00], 0)).expect_err("field 0");
    assert_eq!(err, ProtoError::BadFieldKey { key: 2, offset: 0 });
}

#[test]
fn rejects_wrong_wire_type_for_a_known_field() {
    // NodeProto.name (3) sent as a varint.
    let bytes = Msg::new().varint(3, 1).0;
    let err = parse_node(Reader::new(&bytes, 0)).expect_err("wrong wire type");
    assert!(matches!(
        err,
        ProtoError::WrongWireType {
            message: "NodeProto",
            field: 3,
            found: 0,
            ..
        }
    ));
}

#[test]
fn rejects_invalid_utf8_names() {
    let bytes = Msg::new().bytes(3, &[0xff, 0xfe]).0;
    let err = parse_node(Reader::new(&bytes, 0)).expect_err("bad utf-8");
    assert!(matches!(
        err,
        ProtoError::BadUtf8 {
            message: "NodeProto",
            field: 3,
            ..
        }
    ));
}

#[test]
fn rejects_packed_floats_of_odd_length() {
    let bytes = Msg::new().bytes(4, &[0, 0, 0]).0;
    let err = parse_tensor(Reader::new(&bytes, 0)).expect_err("odd packed length");
    assert!(matches!(
        err,
        ProtoError::PackedLength {
            len: 3,
            width: 4,
            ..
        }
    ));
}

#[test]
fn error_offsets_are_absolute() {
    // A node whose name is invalid UTF-8, nested in a graph nested in a model.
    let node = Msg::new().bytes(3, &[0xc3]);
    let graph = Msg::new().msg(1, &node);
    let bytes = Msg::new().varint(1, 9).msg(7, &graph).0;
    let err = parse_model(&bytes).expect_err("bad utf-8");
    // model: [08 09] [3a len] graph: [0a len] node: [1a 01 c3] -> node field at byte 6.
    assert_eq!(
        err,
        ProtoError::BadUtf8 {
            message: "NodeProto",
            field: 3,
            offset: 6
        }
    );
}

#[test]
fn every_truncation_errors_or_parses_without_panicking() {
    let bytes = sample_model();
    let mut errors = 0;
    for len in 0..bytes.len() {
        if parse_model(&bytes[..len]).is_err() {
            errors += 1;
        }
    }
    // Cutting inside the graph message always breaks its declared length.
    assert!(
        errors > bytes.len() / 2,
        "{errors} of {} prefixes",
        bytes.len()
    );
}

#[test]
fn corrupted_bytes_never_panic() {
    let bytes = sample_model();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..5000 {
        let mut b = bytes.clone();
        for _ in 0..3 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let at = (state >> 33) as usize % b.len();
            b[at] = (state >> 13) as u8;
        }
        let _ = parse_model(&b);
    }
}
