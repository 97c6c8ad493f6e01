//! Unit tests of the graph walk on small hand-built graphs that mimic the int8 Kokoro export.

use super::*;
use crate::onnx::proto::parse_model;
use onnx_proto::encode::{self as testutil, node, Msg};

fn with_graph<R>(nodes: &[Msg], inits: &[Msg], f: impl FnOnce(&Graph<'_>) -> R) -> R {
    let bytes = testutil::model(nodes, inits);
    let model = parse_model(&bytes).expect("test model parses");
    let graph =
        Graph::new(model.graph.expect("test model has a graph")).expect("test graph indexes");
    f(&graph)
}

fn values(m: &Mapping<'_>, name: &str) -> (Vec<usize>, Vec<f32>) {
    let p = m.get(name).unwrap_or_else(|| panic!("{name} mapped"));
    (p.shape.clone(), p.values())
}

/// `MatMulInteger` → Cast → Mul(scales) → Add(bias), as ORT's quantizer emits it.
fn matmul_chain(scope: &str, weight: &str, bias: &str) -> Vec<Msg> {
    vec![
        node(
            &format!("{scope}/MatMul_quant"),
            "MatMulInteger",
            &["xq", weight, "xz", "wzp"],
            &[&format!("{scope}/mm")],
        ),
        node(
            &format!("{scope}/cast"),
            "Cast",
            &[&format!("{scope}/mm")],
            &[&format!("{scope}/mmf")],
        ),
        node(
            &format!("{scope}/mul"),
            "Mul",
            &[&format!("{scope}/mmf"), "scales"],
            &[&format!("{scope}/scaled")],
        ),
        node(
            &format!("{scope}/Add"),
            "Add",
            &[&format!("{scope}/scaled"), bias],
            &[&format!("{scope}/y")],
        ),
    ]
}

#[test]
fn matmul_integer_weight_is_dequantised_per_column_and_transposed() {
    let nodes = matmul_chain(
        "/encoder/bert_encoder",
        "onnx::MatMul_1_quantized",
        "encoder.bert_encoder.bias",
    );
    let inits = [
        testutil::i8_tensor("onnx::MatMul_1_quantized", &[2, 3], &[1, -2, 3, 4, 5, -6]),
        testutil::i8_tensor("wzp", &[3], &[0, 0, 0]),
        testutil::f32_tensor("onnx::MatMul_1_scale", &[3], &[0.5, 2.0, 0.25]),
        testutil::f32_tensor("encoder.bert_encoder.bias", &[3], &[0.1, 0.2, 0.3]),
    ];
    with_graph(&nodes, &inits, |g| {
        let m = map_weight_consumers(g).expect("maps");
        assert_eq!(m.tensors.len(), 2);
        assert_eq!(
            values(&m, "bert_encoder.weight"),
            (vec![3, 2], vec![0.5, 2.0, -4.0, 10.0, 0.75, -1.5])
        );
        assert_eq!(
            values(&m, "bert_encoder.bias"),
            (vec![3], vec![0.1, 0.2, 0.3])
        );
    });
}

#[test]
fn conv_integer_bias_comes_from_the_div_before_the_int32_add() {
    let scope = "/decoder/decoder/asr_res/asr_res.0";
    let nodes = [
        node(
            &format!("{scope}/Conv_quant"),
            "ConvInteger",
            &[
                "xq",
                "/decoder/decoder/asr_res/Mul_output_0_quantized",
                "xz",
                "shared_zp",
            ],
            &["ci"],
        ),
        node(
            "bias_div",
            "Div",
            &["decoder.decoder.asr_res.0.bias", "bias_scale"],
            &["dv"],
        ),
        node("bias_floor", "Floor", &["dv"], &["fl"]),
        node("bias_cast", "Cast", &["fl"], &["ca"]),
        node("bias_reshape", "Reshape", &["ca", "shape"], &["rs"]),
        node("bias_add", "Add", &["ci", "rs"], &["sum"]),
        node("out_cast", "Cast", &["sum"], &["sumf"]),
        node("out_mul", "Mul", &["sumf", "bias_scale"], &["y"]),
    ];
    // The shared uint8 zero point is stored in int32_data, as 35 of the real ones are.
    let zp = Msg::new()
        .varint(2, testutil::UINT8)
        .packed_varints(5, &[69])
        .str(8, "shared_zp");
    let inits = [
        testutil::u8_tensor(
            "/decoder/decoder/asr_res/Mul_output_0_quantized",
            &[2, 1, 1],
            &[70, 0],
        ),
        zp,
        testutil::f32_tensor("/decoder/decoder/asr_res/Mul_output_0_scale", &[], &[0.5]),
        testutil::f32_tensor("decoder.decoder.asr_res.0.bias", &[2], &[-1.0, 1.0]),
        testutil::f32_tensor("bias_scale", &[], &[0.01]),
    ];
    with_graph(&nodes, &inits, |g| {
        let m = map_weight_consumers(g).expect("maps");
        assert_eq!(
            values(&m, "decoder.asr_res.0.weight"),
            (vec![2, 1, 1], vec![0.5, -34.5])
        );
        assert_eq!(
            values(&m, "decoder.asr_res.0.bias"),
            (vec![2], vec![-1.0, 1.0])
        );
    });
}

#[test]
fn lstm_module_comes_from_the_node_scope() {
    let inputs = [
        "x", "W_q", "R_q", "B", "", "h0", "c0", "", "W_s", "zp", "R_s", "zp",
    ];
    let nodes = [node(
        "/encoder/shared/LSTM_quant",
        "DynamicQuantizeLSTM",
        &inputs,
        &["y"],
    )];
    // hidden 1, input 1: W/R [2, 1, 4] in ONNX gate order i,o,f,c.
    let inits = [
        testutil::i8_tensor("W_q", &[2, 1, 4], &[1, 2, 3, 4, 5, 6, 7, 8]),
        testutil::i8_tensor("R_q", &[2, 1, 4], &[-1, -2, -3, -4, -5, -6, -7, -8]),
        testutil::f32_tensor("B", &[2, 8], &(0..16).map(|v| v as f32).collect::<Vec<_>>()),
        testutil::f32_tensor("W_s", &[2], &[1.0, 0.5]),
        testutil::f32_tensor("R_s", &[2], &[2.0, 1.0]),
        testutil::i8_tensor("zp", &[2], &[0, 0]),
    ];
    with_graph(&nodes, &inits, |g| {
        let m = map_weight_consumers(g).expect("maps");
        assert_eq!(m.tensors.len(), 8);
        let p = "predictor.shared";
        assert_eq!(
            values(&m, &format!("{p}.weight_ih_l0")),
            (vec![4, 1], vec![1., 3., 4., 2.])
        );
        assert_eq!(
            values(&m, &format!("{p}.weight_ih_l0_reverse")),
            (vec![4, 1], vec![2.5, 3.5, 4., 3.])
        );
        assert_eq!(
            values(&m, &format!("{p}.weight_hh_l0")),
            (vec![4, 1], vec![-2., -6., -8., -4.])
        );
        assert_eq!(
            values(&m, &format!("{p}.weight_hh_l0_reverse")),
            (vec![4, 1], vec![-5., -7., -8., -6.])
        );
        assert_eq!(
            values(&m, &format!("{p}.bias_ih_l0")).1,
            vec![0., 2., 3., 1.]
        );
        assert_eq!(
            values(&m, &format!("{p}.bias_hh_l0")).1,
            vec![4., 6., 7., 5.]
        );
        assert_eq!(
            values(&m, &format!("{p}.bias_ih_l0_reverse")).1,
            vec![8., 10., 11., 9.]
        );
        assert_eq!(
            values(&m, &format!("{p}.bias_hh_l0_reverse")).1,
            vec![12., 14., 15., 13.]
        );
    });
}

#[test]
fn quantized_embedding_and_layer_norms() {
    let table = "encoder.bert.embeddings.word_embeddings.weight_quantized";
    let nodes = [
        node(
            "/encoder/bert/embeddings/word_embeddings/Gather_quant",
            "Gather",
            &[table, "tokens"],
            &["e"],
        ),
        node(
            "/encoder/bert/embeddings/word_embeddings/dq",
            "DequantizeLinear",
            &["e", "emb_scale", "emb_zp"],
            &["ef"],
        ),
        node(
            "/encoder/bert/embeddings/LayerNorm/LayerNormalization",
            "LayerNormalization",
            &[
                "ef",
                "encoder.bert.embeddings.LayerNorm.weight",
                "encoder.bert.embeddings.LayerNorm.bias",
            ],
            &["ln"],
        ),
        // AdaLayerNorm with constant ones/zeros: no parameter.
        node(
            "/encoder/predictor/text_encoder/lstms.1/LayerNormalization",
            "LayerNormalization",
            &[
                "ln",
                "/encoder/predictor/text_encoder/lstms.1/Constant_7_output_0",
                "/encoder/predictor/text_encoder/lstms.1/Constant_8_output_0",
            ],
            &["ln2"],
        ),
    ];
    let inits = [
        testutil::i8_tensor(table, &[2, 2], &[0, 0, 3, -4]),
        testutil::f32_tensor("emb_scale", &[], &[0.25]),
        testutil::i8_tensor("emb_zp", &[], &[0]),
        testutil::f32_tensor(
            "encoder.bert.embeddings.LayerNorm.weight",
            &[2],
            &[1.0, 2.0],
        ),
        testutil::f32_tensor("encoder.bert.embeddings.LayerNorm.bias", &[2], &[0.0, -1.0]),
        testutil::f32_tensor(
            "/encoder/predictor/text_encoder/lstms.1/Constant_7_output_0",
            &[2],
            &[1.0, 1.0],
        ),
        testutil::f32_tensor(
            "/encoder/predictor/text_encoder/lstms.1/Constant_8_output_0",
            &[2],
            &[0.0, 0.0],
        ),
    ];
    with_graph(&nodes, &inits, |g| {
        let m = map_weight_consumers(g).expect("maps");
        assert_eq!(m.tensors.len(), 3);
        assert_eq!(
            values(&m, "bert.embeddings.word_embeddings.weight"),
            (vec![2, 2], vec![0.0, 0.0, 0.75, -1.0])
        );
        assert_eq!(
            values(&m, "bert.embeddings.LayerNorm.bias").1,
            vec![0.0, -1.0]
        );
    });
}

#[test]
fn unrolled_copies_agree_and_different_sources_conflict() {
    let mut nodes = matmul_chain("/encoder/bert/x/query_1", "w_quantized", "b");
    nodes.extend(matmul_chain("/encoder/bert/x/query_2", "w_quantized", "b"));
    let inits = |second: &str| {
        vec![
            testutil::i8_tensor("w_quantized", &[1, 1], &[1]),
            testutil::i8_tensor("w2_quantized", &[1, 1], &[2]),
            testutil::i8_tensor("wzp", &[1], &[0]),
            testutil::f32_tensor("w_scale", &[1], &[1.0]),
            testutil::f32_tensor("w2_scale", &[1], &[1.0]),
            testutil::f32_tensor("b", &[1], &[0.0]),
            testutil::f32_tensor(second, &[1], &[0.0]),
        ]
    };
    with_graph(&nodes, &inits("unused"), |g| {
        let m = map_weight_consumers(g).expect("the same weight twice is fine");
        assert_eq!(m.tensors.len(), 2);
        assert!(m.get("bert.x.query.weight").is_some());
    });
    let mut nodes = matmul_chain("/encoder/bert/x/query_1", "w_quantized", "b");
    nodes.extend(matmul_chain("/encoder/bert/x/query_2", "w2_quantized", "b"));
    with_graph(&nodes, &inits("unused"), |g| {
        let err = map_weight_consumers(g).expect_err("two different weights");
        assert!(
            matches!(&err, ConvertError::Conflict { param, .. } if param == "bert.x.query.weight"),
            "{err}"
        );
    });
}

#[test]
fn named_constants_unknown_and_missing_parameters() {
    let alpha = "decoder.decoder.generator.resblocks.0.alpha1.0";
    let nodes = vec![
        node(
            "/decoder/decoder/generator/resblocks.0/Mul",
            "Mul",
            &["x", alpha],
            &["y"],
        ),
        node(
            "/decoder/decoder/generator/istft/ConvTranspose",
            "ConvTranspose",
            &["y", "decoder.decoder.generator.stft.istft.basis"],
            &["z"],
        ),
    ];
    let inits = [
        testutil::f32_tensor(alpha, &[1, 2, 1], &[0.5, 0.25]),
        testutil::f32_tensor(
            "decoder.decoder.generator.stft.istft.basis",
            &[1, 1, 2],
            &[1.0, 1.0],
        ),
    ];
    let alpha_param = "decoder.generator.resblocks.0.alpha1.0".to_owned();
    with_graph(&nodes, &inits, |g| {
        let m = map_kokoro(g, &[(alpha_param.clone(), vec![1, 2, 1])]).expect("maps");
        assert_eq!(m.tensors.len(), 1, "the iSTFT basis is not a parameter");
        assert_eq!(values(&m, &alpha_param).1, vec![0.5, 0.25]);

        let err = map_kokoro(g, &[(alpha_param.clone(), vec![2])]).expect_err("shape");
        assert!(matches!(err, ConvertError::ParameterShape { .. }), "{err}");

        let expected = [
            (alpha_param.clone(), vec![1, 2, 1]),
            ("decoder.gone.weight".to_owned(), vec![1]),
        ];
        let err = map_kokoro(g, &expected).expect_err("missing");
        assert!(
            matches!(&err, ConvertError::MissingParameters { missing } if missing == &["decoder.gone.weight"]),
            "{err}"
        );
    });
    let nodes = matmul_chain("/encoder/surprise", "w_quantized", "b");
    let inits = [
        testutil::i8_tensor("w_quantized", &[1, 1], &[1]),
        testutil::i8_tensor("wzp", &[1], &[0]),
        testutil::f32_tensor("w_scale", &[1], &[1.0]),
        testutil::f32_tensor("b", &[1], &[0.0]),
    ];
    with_graph(&nodes, &inits, |g| {
        let err = map_kokoro(g, &[]).expect_err("unknown");
        assert!(
            matches!(&err, ConvertError::UnknownParameter { param, .. } if param == "surprise.weight"),
            "{err}"
        );
    });
}

#[test]
fn malformed_initializers_are_errors() {
    let nodes = matmul_chain("/encoder/bert_encoder", "w_quantized", "b");
    let good = || {
        vec![
            testutil::i8_tensor("w_quantized", &[2, 2], &[1, 2, 3, 4]),
            testutil::i8_tensor("wzp", &[2], &[0, 0]),
            testutil::f32_tensor("w_scale", &[2], &[1.0, 1.0]),
            testutil::f32_tensor("b", &[2], &[0.0, 0.0]),
        ]
    };
    let check = |inits: Vec<Msg>, what: &str, ok: &dyn Fn(&ConvertError) -> bool| {
        with_graph(&nodes, &inits, |g| {
            let err = map_weight_consumers(g).expect_err(what);
            assert!(ok(&err), "{what}: {err}");
        });
    };
    let mut inits = good();
    inits[0] = testutil::i8_tensor("w_quantized", &[2, 2], &[1, 2, 3]);
    check(inits, "short raw_data", &|e| {
        matches!(
            e,
            ConvertError::DataLength {
                expected: 4,
                found: 3,
                ..
            }
        )
    });
    let mut inits = good();
    inits[0] = testutil::i8_tensor("w_quantized", &[2, -2], &[1, 2, 3, 4]);
    check(inits, "negative dim", &|e| {
        matches!(e, ConvertError::BadDims { .. })
    });
    let mut inits = good();
    inits[0] = testutil::i8_tensor("w_quantized", &[1 << 40, 1 << 40], &[1]);
    check(inits, "overflowing dims", &|e| {
        matches!(e, ConvertError::BadDims { .. })
    });
    let mut inits = good();
    inits[2] = testutil::i8_tensor("w_scale", &[2], &[1, 1]);
    check(inits, "int scale", &|e| {
        matches!(e, ConvertError::DataType { found: 3, .. })
    });
    let mut inits = good();
    let _ = inits.remove(2);
    check(
        inits,
        "no scale",
        &|e| matches!(e, ConvertError::MissingInitializer { name, .. } if name == "w_scale"),
    );
    let mut inits = good();
    inits[1] = testutil::i8_tensor("wzp", &[3], &[0, 0, 0]);
    check(
        inits,
        "zero point count",
        &|e| matches!(e, ConvertError::Shape { name, .. } if name == "wzp"),
    );
    let mut inits = good();
    inits[0] = testutil::i8_tensor("w_quantized", &[4], &[1, 2, 3, 4]);
    check(inits, "1-D weight", &|e| {
        matches!(e, ConvertError::Shape { .. })
    });
    let mut inits = good();
    inits[0] = inits[0].clone().varint(14, 1);
    check(inits, "external data", &|e| {
        matches!(e, ConvertError::ExternalData { .. })
    });
}

#[test]
fn scopeless_and_short_nodes_are_errors() {
    let inits = [
        testutil::i8_tensor("w_quantized", &[1, 1], &[1]),
        testutil::i8_tensor("wzp", &[1], &[0]),
        testutil::f32_tensor("w_scale", &[1], &[1.0]),
    ];
    let nodes = [node(
        "MatMul_quant",
        "MatMulInteger",
        &["x", "w_quantized", "xz", "wzp"],
        &["y"],
    )];
    with_graph(&nodes, &inits, |g| {
        let err = map_weight_consumers(g).expect_err("no scope");
        assert!(matches!(err, ConvertError::NoScope { .. }), "{err}");
    });
    let nodes = [node(
        "/encoder/a/MatMul_quant",
        "MatMulInteger",
        &["x", "w_quantized"],
        &["y"],
    )];
    with_graph(&nodes, &inits, |g| {
        let err = map_weight_consumers(g).expect_err("no zero point input");
        assert!(
            matches!(err, ConvertError::MissingInput { index: 3, .. }),
            "{err}"
        );
    });
}
