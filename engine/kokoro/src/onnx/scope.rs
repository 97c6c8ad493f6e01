//! Naming rules that turn ONNX node scopes and initializer names into torch module paths of
//! Kokoro-82M (`kokoro` 0.9.4 `KModel`), as described in `kokoro-port.md` §2a.
//!
//! Most weights in the int8 export sit in anonymous initializers (`onnx::MatMul_6547`,
//! `/decoder/decoder/decode.0/Mul_output_0_quantized`), so their names come from the node
//! that consumes them: the torch exporter names nodes after the module that ran them, e.g.
//! `/decoder/decoder/decode.0/conv1/Conv_quant` is the conv of `decoder.decode.0.conv1`.

/// Module scopes that the exporter traced directly under `/encoder/` although they belong to
/// the prosody predictor (the F0/N branch and the shared LSTM run outside its `forward`).
const PREDICTOR_TOP: [&str; 5] = ["F0.", "N.", "F0_proj", "N_proj", "shared"];

/// ALBERT's single shared layer is unrolled 12 times; the copies get `_<k>` suffixes.
const ALBERT_REPEATED: [&str; 10] = [
    "attention",
    "query",
    "key",
    "value",
    "dense",
    "ffn",
    "ffn_output",
    "LayerNorm",
    "full_layer_layer_norm",
    "activation",
];

/// The torch module path of the module that ran `node_name`, e.g.
/// `/decoder/decoder/decode.0/conv1/Conv_quant` → `decoder.decode.0.conv1`.
/// `None` if the name has no scope (a bare op name).
pub(crate) fn module_of_node(node_name: &str) -> Option<String> {
    let mut parts: Vec<&str> = node_name.split('/').filter(|p| !p.is_empty()).collect();
    parts.pop()?; // the op itself: Conv_quant, MatMul_quant, LSTM_quant, ConvTranspose, ...
    if parts.is_empty() {
        return None;
    }
    let mut prefix: Option<&str> = None;
    if parts[0] == "encoder" {
        parts.remove(0);
        if parts
            .first()
            .is_some_and(|p| PREDICTOR_TOP.iter().any(|top| p.starts_with(top)))
        {
            prefix = Some("predictor");
        }
    } else if parts.len() >= 2 && parts[0] == "decoder" && parts[1] == "decoder" {
        parts.remove(0);
    }
    let mut out: Vec<&str> = prefix.into_iter().collect();
    for (i, &c) in parts.iter().enumerate() {
        // nn.Sequential shows up twice: cnn.0/cnn.0.0 -> cnn.0.0, asr_res/asr_res.0 -> asr_res.0
        if parts
            .get(i + 1)
            .and_then(|next| next.strip_prefix(c))
            .is_some_and(|rest| rest.starts_with('.'))
        {
            continue;
        }
        out.push(strip_albert_repeat(c));
    }
    if out.is_empty() {
        None
    } else {
        Some(out.join("."))
    }
}

/// `query_7` → `query` for the ALBERT module names in [`ALBERT_REPEATED`]; anything else as is.
fn strip_albert_repeat(component: &str) -> &str {
    if let Some((base, digits)) = component.rsplit_once('_') {
        if !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && ALBERT_REPEATED.contains(&base)
        {
            return base;
        }
    }
    component
}

/// The torch parameter name of an initializer that still carries one
/// (`encoder.bert.embeddings.word_embeddings.weight_quantized` →
/// `bert.embeddings.word_embeddings.weight`); `None` for anonymous initializers.
pub(crate) fn param_of_initializer(name: &str) -> Option<String> {
    let mut name = name;
    for suffix in ["_quantized", "_scale", "_zero_point"] {
        name = name.strip_suffix(suffix).unwrap_or(name);
    }
    if let Some(rest) = name.strip_prefix("encoder.") {
        Some(rest.to_owned())
    } else {
        name.strip_prefix("decoder.decoder.")
            .map(|rest| format!("decoder.{rest}"))
    }
}

/// The scale initializer that ORT's quantizer stores beside a quantized weight:
/// `<stem>_quantized` → `<stem>_scale`. `None` if the weight is not named that way.
pub(crate) fn scale_of_quantized(weight: &str) -> Option<String> {
    weight
        .strip_suffix("_quantized")
        .map(|stem| format!("{stem}_scale"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_scopes_become_module_paths() {
        let cases = [
            ("/decoder/decoder/decode.0/conv1/Conv_quant", "decoder.decode.0.conv1"),
            ("/encoder/text_encoder/cnn.0/cnn.0.0/Conv_quant", "text_encoder.cnn.0.0"),
            ("/decoder/decoder/asr_res/asr_res.0/Conv_quant", "decoder.asr_res.0"),
            ("/encoder/F0.1/pool/ConvTranspose", "predictor.F0.1.pool"),
            ("/encoder/N_proj/Conv_quant", "predictor.N_proj"),
            ("/encoder/shared/LSTM_quant", "predictor.shared"),
            ("/encoder/predictor/lstm/LSTM_quant", "predictor.lstm"),
            ("/encoder/text_encoder/lstm/LSTM_quant", "text_encoder.lstm"),
            (
                "/encoder/bert/encoder/albert_layer_groups.0/albert_layers.0/attention_7/query_7/MatMul_quant",
                "bert.encoder.albert_layer_groups.0.albert_layers.0.attention.query",
            ),
            (
                "/encoder/bert/encoder/albert_layer_groups.0/albert_layers.0/ffn_output_11/MatMul_quant",
                "bert.encoder.albert_layer_groups.0.albert_layers.0.ffn_output",
            ),
            (
                "/decoder/decoder/generator/resblocks.4/adain2.2/fc/Gemm_MatMul_quant",
                "decoder.generator.resblocks.4.adain2.2.fc",
            ),
            ("/encoder/bert_encoder/MatMul_quant", "bert_encoder"),
        ];
        for (node, module) in cases {
            assert_eq!(module_of_node(node).as_deref(), Some(module), "{node}");
        }
    }

    #[test]
    fn names_without_scope_have_no_module() {
        assert_eq!(module_of_node("SkipLayerNormalization"), None);
        assert_eq!(module_of_node(""), None);
        assert_eq!(module_of_node("/Conv"), None);
    }

    #[test]
    fn only_albert_module_names_lose_their_suffix() {
        assert_eq!(strip_albert_repeat("LayerNorm_3"), "LayerNorm");
        assert_eq!(strip_albert_repeat("ffn_output"), "ffn_output");
        assert_eq!(strip_albert_repeat("lstms_2"), "lstms_2");
        assert_eq!(strip_albert_repeat("query_"), "query_");
        assert_eq!(strip_albert_repeat("query_x1"), "query_x1");
    }

    #[test]
    fn sequential_collapse_needs_a_dot() {
        // `cnn` followed by `cnnx.0` is not a Sequential double.
        assert_eq!(
            module_of_node("/encoder/a/ab.0/Conv").as_deref(),
            Some("a.ab.0")
        );
        assert_eq!(
            module_of_node("/encoder/a/a.0/Conv").as_deref(),
            Some("a.0")
        );
    }

    #[test]
    fn initializer_names() {
        assert_eq!(
            param_of_initializer("encoder.bert.embeddings.word_embeddings.weight_quantized")
                .as_deref(),
            Some("bert.embeddings.word_embeddings.weight")
        );
        assert_eq!(
            param_of_initializer("decoder.decoder.generator.resblocks.0.alpha1.2").as_deref(),
            Some("decoder.generator.resblocks.0.alpha1.2")
        );
        assert_eq!(param_of_initializer("onnx::MatMul_6547"), None);
        assert_eq!(
            param_of_initializer("/decoder/decoder/decode.0/Mul_output_0"),
            None
        );
        assert_eq!(
            scale_of_quantized("onnx::LSTM_6930_quantized").as_deref(),
            Some("onnx::LSTM_6930_scale")
        );
        assert_eq!(scale_of_quantized("onnx::LSTM_6929"), None);
    }
}
