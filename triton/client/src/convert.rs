//! Protocol tensors ↔ `KServe` v2 gRPC messages, with no I/O.
//!
//! Tensors travel in Triton's raw form (`raw_input_contents` / `raw_output_contents`, one entry
//! per tensor in the order of the metadata), which is exactly what `triton_wire::protocol`
//! reads and writes, so nothing is converted element by element here. The model is decoupled
//! (one request, a response per audio chunk), so the request asks Triton for an empty final
//! response and a flag on every response: the flag, not the stream's end, says a segment's
//! answer is complete, and a stream that ends without it means the server went away.

use engine::remote::RemoteJob;
use triton_wire::protocol::{self, Chunk, DataType, OwnedTensor, Request, Tensor, Voice, Words};

use crate::proto::{
    infer_parameter::ParameterChoice, model_infer_request::InferInputTensor, InferParameter,
    ModelInferRequest, ModelStreamInferResponse,
};

/// Asks Triton to close a decoupled model's answer with a response of its own, flagged.
pub(crate) const ENABLE_EMPTY_FINAL: &str = "triton_enable_empty_final_response";
/// The flag on each response: true on the request's last.
pub(crate) const FINAL_RESPONSE: &str = "triton_final_response";

/// The tensors that speak `job`: its phonemes as one segment, its voice table, at Kokoro's
/// native rate (the engine mixes at 24 kHz).
pub(crate) fn job_tensors(job: &RemoteJob) -> Vec<OwnedTensor> {
    Request {
        words: Words::Phonemes(vec![job.phonemes.clone()]),
        voice: Voice::Style(job.style.to_vec()),
        speed: job.speed,
        sample_rate: protocol::NATIVE_RATE,
        whole: job.whole,
    }
    .to_tensors()
}

/// One request for model `banter` carrying `tensors`, with Triton's final-response flag on.
pub(crate) fn infer_request(id: String, tensors: Vec<OwnedTensor>) -> ModelInferRequest {
    let (inputs, raw) = tensors
        .into_iter()
        .map(|t| {
            let meta = InferInputTensor {
                name: t.name.to_owned(),
                datatype: t.datatype.name().to_owned(),
                shape: t.shape,
                ..InferInputTensor::default()
            };
            (meta, t.data)
        })
        .unzip();
    ModelInferRequest {
        model_name: protocol::MODEL.to_owned(),
        id,
        parameters: [(ENABLE_EMPTY_FINAL.to_owned(), bool_param(true))].into(),
        inputs,
        raw_input_contents: raw,
        ..ModelInferRequest::default()
    }
}

fn bool_param(value: bool) -> InferParameter {
    InferParameter {
        parameter_choice: Some(ParameterChoice::BoolParam(value)),
    }
}

/// What one message of the stream holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    /// A chunk of audio.
    Chunk(Chunk),
    /// The server refused the request (its `error_message`).
    Refused(String),
    /// Outputs this client cannot read: a server speaking another version of the protocol.
    Malformed(String),
}

/// One message read: its item (none for the empty final response) and whether it is the last.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    pub item: Option<Item>,
    pub last: bool,
}

/// Reads one stream message. An error without Triton's flag is taken as the last message (a
/// request refused before it ran gets no other); otherwise the flag decides.
pub(crate) fn read_reply(message: ModelStreamInferResponse) -> Reply {
    let response = message.infer_response.unwrap_or_default();
    let flag = response
        .parameters
        .get(FINAL_RESPONSE)
        .and_then(|p| match p.parameter_choice {
            Some(ParameterChoice::BoolParam(b)) => Some(b),
            _ => None,
        });
    if !message.error_message.is_empty() {
        return Reply {
            item: Some(Item::Refused(message.error_message)),
            last: flag.unwrap_or(true),
        };
    }
    let last = flag.unwrap_or(false);
    if response.outputs.is_empty() {
        return Reply { item: None, last };
    }
    let item = if response.outputs.len() == response.raw_output_contents.len() {
        let mut tensors = Vec::with_capacity(response.outputs.len());
        let mut unknown = None;
        for (meta, data) in response.outputs.iter().zip(&response.raw_output_contents) {
            match DataType::from_name(&meta.datatype) {
                Some(datatype) => tensors.push(Tensor {
                    name: &meta.name,
                    datatype,
                    shape: &meta.shape,
                    data,
                }),
                // An output this protocol does not name may be of any type; skip it as
                // `Chunk::from_tensors` skips unknown names.
                None if is_ours(&meta.name) => {
                    unknown = Some(format!(
                        "output `{}` has type {}, which model `{}` does not use",
                        meta.name,
                        meta.datatype,
                        protocol::MODEL
                    ));
                }
                None => {}
            }
        }
        match unknown {
            Some(e) => Item::Malformed(e),
            None => match Chunk::from_tensors(tensors) {
                Ok(chunk) => Item::Chunk(chunk),
                Err(e) => Item::Malformed(format!("output `{}`: {}", e.field, e.reason)),
            },
        }
    } else {
        Item::Malformed(format!(
            "{} outputs but {} raw contents (this client reads raw outputs only)",
            response.outputs.len(),
            response.raw_output_contents.len()
        ))
    };
    Reply {
        item: Some(item),
        last,
    }
}

fn is_ours(name: &str) -> bool {
    use protocol::output::{AUDIO, DURATIONS, SEGMENT, SEGMENT_END};
    [AUDIO, SEGMENT, SEGMENT_END, DURATIONS].contains(&name)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::proto::{model_infer_response::InferOutputTensor, ModelInferResponse};

    pub(crate) fn job() -> RemoteJob {
        RemoteJob {
            phonemes: "həlˈoʊ".to_owned(),
            style: Arc::from(vec![0.25f32; protocol::STYLE_ROWS * protocol::STYLE_DIM]),
            speed: 1.25,
            whole: true,
        }
    }

    /// A stream message carrying `chunk` as a server sends it.
    pub(crate) fn response(chunk: &Chunk, last: Option<bool>) -> ModelStreamInferResponse {
        let (outputs, raw) = chunk
            .to_tensors()
            .into_iter()
            .map(|t| {
                let meta = InferOutputTensor {
                    name: t.name.to_owned(),
                    datatype: t.datatype.name().to_owned(),
                    shape: t.shape,
                    ..InferOutputTensor::default()
                };
                (meta, t.data)
            })
            .unzip();
        ModelStreamInferResponse {
            error_message: String::new(),
            infer_response: Some(ModelInferResponse {
                model_name: protocol::MODEL.to_owned(),
                parameters: flag(last),
                outputs,
                raw_output_contents: raw,
                ..ModelInferResponse::default()
            }),
        }
    }

    fn flag(last: Option<bool>) -> std::collections::HashMap<String, InferParameter> {
        last.map(|b| (FINAL_RESPONSE.to_owned(), bool_param(b)))
            .into_iter()
            .collect()
    }

    /// The empty response Triton closes a decoupled request with.
    pub(crate) fn final_response() -> ModelStreamInferResponse {
        ModelStreamInferResponse {
            error_message: String::new(),
            infer_response: Some(ModelInferResponse {
                parameters: flag(Some(true)),
                ..ModelInferResponse::default()
            }),
        }
    }

    pub(crate) fn error_response(message: &str) -> ModelStreamInferResponse {
        ModelStreamInferResponse {
            error_message: message.to_owned(),
            infer_response: None,
        }
    }

    pub(crate) fn chunk(segment_end: bool, durations: Option<Vec<u32>>) -> Chunk {
        Chunk {
            audio: vec![0.5, -0.25, 0.125],
            segment: 0,
            segment_end,
            durations,
        }
    }

    #[test]
    fn a_job_becomes_one_request_the_backend_parses_back() {
        let job = job();
        let request = infer_request("banter-7".to_owned(), job_tensors(&job));
        assert_eq!(request.model_name, "banter");
        assert_eq!(request.id, "banter-7");
        assert_eq!(
            request.parameters.get(ENABLE_EMPTY_FINAL),
            Some(&bool_param(true))
        );
        let names: Vec<_> = request.inputs.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["PHONEMES", "STYLE", "SPEED", "SAMPLE_RATE", "WHOLE"]
        );
        assert_eq!(request.raw_input_contents.len(), request.inputs.len());
        let style = &request.inputs[1];
        assert_eq!(
            (style.datatype.as_str(), style.shape.as_slice()),
            ("FP32", &[510, 256][..])
        );
        // What the backend reads from these inputs is the job, exactly.
        let tensors = request
            .inputs
            .iter()
            .zip(&request.raw_input_contents)
            .map(|(m, data)| Tensor {
                name: &m.name,
                datatype: DataType::from_name(&m.datatype).expect("known type"),
                shape: &m.shape,
                data,
            });
        let parsed = Request::from_tensors(tensors).expect("the backend accepts it");
        assert_eq!(parsed.words, Words::Phonemes(vec![job.phonemes.clone()]));
        assert_eq!(parsed.voice, Voice::Style(job.style.to_vec()));
        assert_eq!(
            (parsed.speed, parsed.sample_rate, parsed.whole),
            (1.25, 24_000, true)
        );
    }

    #[test]
    fn a_response_decodes_into_its_chunk() {
        let sent = chunk(false, Some(vec![3, 1, 4]));
        let reply = read_reply(response(&sent, Some(false)));
        assert_eq!(
            reply,
            Reply {
                item: Some(Item::Chunk(sent)),
                last: false
            }
        );
        // Triton may also flag the last response that carries audio.
        let sent = chunk(true, None);
        assert!(read_reply(response(&sent, Some(true))).last);
        assert_eq!(
            read_reply(final_response()),
            Reply {
                item: None,
                last: true
            }
        );
    }

    #[test]
    fn an_error_message_is_a_refusal_and_ends_the_answer() {
        let reply = read_reply(error_response(
            "input `STYLE`: shape [3], expected [510, 256]",
        ));
        assert_eq!(
            reply,
            Reply {
                item: Some(Item::Refused(
                    "input `STYLE`: shape [3], expected [510, 256]".to_owned()
                )),
                last: true
            }
        );
    }

    #[test]
    fn unreadable_outputs_are_malformed_not_a_panic() {
        let mut message = response(&chunk(true, None), Some(true));
        let response = message.infer_response.as_mut().expect("set");
        response.raw_output_contents.pop();
        assert!(
            matches!(read_reply(message.clone()).item, Some(Item::Malformed(e)) if e.contains("raw contents"))
        );
        let mut message = self::response(&chunk(true, None), Some(true));
        let response = message.infer_response.as_mut().expect("set");
        response.raw_output_contents[0].pop();
        let reply = read_reply(message);
        assert!(
            matches!(&reply.item, Some(Item::Malformed(e)) if e.starts_with("output `AUDIO`")),
            "{reply:?}"
        );
        let mut message = self::response(&chunk(true, None), Some(true));
        let response = message.infer_response.as_mut().expect("set");
        response.outputs[2].datatype = "FP64".to_owned();
        assert!(
            matches!(read_reply(message).item, Some(Item::Malformed(e)) if e.contains("SEGMENT_END"))
        );
    }
}
