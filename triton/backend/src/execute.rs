//! `TRITONBACKEND_ModelInstanceExecute`: every request of the batch read, checked and started,
//! and `Execute` returns at once.
//!
//! A request is answered in one of two ways. Bad input (a tensor the protocol refuses, an
//! unknown voice, a speed out of range) gets one error response naming the field, flagged
//! final, and counts as a failed request. Good input gets a response factory and a thread of
//! its own that streams the audio; it counts as a successful request (Triton's statistics are
//! tied to the request, which is released here, before its audio is made). Nothing that goes
//! wrong with one request touches the others, and `Execute` itself never fails once it owns
//! the requests (Triton would then think it still owned them).

use triton_wire::protocol::{DataType, FieldError, Request as WireRequest, Tensor};

use crate::ffi::{self, dtype, InputCopy, Instance, Request};
use crate::instance::InstanceState;
use crate::plan::Plan;
use crate::{guarded, stream, Failure};

/// Handles a batch; every request is released before this returns.
pub fn execute(instance: Instance, requests: Vec<Request>) {
    let exec_start = ffi::now_ns();
    let state = match instance.state() {
        Ok(state) => Some(state),
        Err(e) => {
            ffi::log_error(&format!("banter: {e}"));
            None
        }
    };
    let mut started = 0u64;
    for request in requests {
        let outcome = match state {
            Some(state) => guarded(|| prepare(state, &request)),
            None => Err(Failure::internal("the model instance is not loaded")),
        };
        let ready = outcome.and_then(|plan| {
            let factory = request.response_factory()?;
            Ok((plan, factory))
        });
        let now = ffi::now_ns();
        let times = [exec_start, exec_start, now, now];
        match ready {
            Ok((plan, factory)) => {
                report(instance, &request, true, times);
                release(request);
                if let Some(state) = state {
                    stream::start(state, plan, factory);
                }
                started += 1;
            }
            Err(failure) => {
                if let Err(e) = request.send_error(&failure) {
                    ffi::log_error(&format!("banter: sending an error response: {e}"));
                }
                report(instance, &request, false, times);
                release(request);
            }
        }
    }
    if started > 0 {
        let now = ffi::now_ns();
        if let Err(e) = instance.report_batch(started, [exec_start, exec_start, now, now]) {
            ffi::log_error(&format!("banter: batch statistics: {e}"));
        }
    }
}

fn report(instance: Instance, request: &Request, success: bool, times: [u64; 4]) {
    if let Err(e) = instance.report(request, success, times) {
        ffi::log_error(&format!("banter: request statistics: {e}"));
    }
}

fn release(request: Request) {
    if let Err(e) = request.release() {
        ffi::log_error(&format!("banter: releasing a request: {e}"));
    }
}

/// The request's inputs, checked and mapped onto the instance's engine.
fn prepare(state: &InstanceState, request: &Request) -> Result<Plan, Failure> {
    let inputs = request.inputs()?;
    let request = parse(&inputs)?;
    Plan::new(&state.engine, request)
}

/// Triton's tensors through the protocol's one checked parser.
pub fn parse(inputs: &[InputCopy]) -> Result<WireRequest, Failure> {
    let tensors = inputs
        .iter()
        .map(|input| {
            Ok(Tensor {
                name: &input.name,
                datatype: datatype(input)?,
                shape: &input.shape,
                data: &input.data,
            })
        })
        .collect::<Result<Vec<_>, FieldError>>()?;
    Ok(WireRequest::from_tensors(tensors)?)
}

fn datatype(input: &InputCopy) -> Result<DataType, FieldError> {
    Ok(match input.datatype {
        dtype::BOOL => DataType::Bool,
        dtype::INT32 => DataType::Int32,
        dtype::FP32 => DataType::Fp32,
        dtype::BYTES => DataType::Bytes,
        other => {
            return Err(FieldError {
                field: input.name.clone(),
                reason: format!(
                    "type {other} (TRITONSERVER_DataType) is not one model banter takes \
                     (BYTES, FP32, INT32, BOOL)"
                ),
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use triton_wire::protocol::{input, Voice, Words};

    fn copy(name: &str, datatype: u32, shape: &[i64], data: Vec<u8>) -> InputCopy {
        InputCopy {
            name: name.to_owned(),
            datatype,
            shape: shape.to_vec(),
            data,
        }
    }

    fn bytes(s: &str) -> Vec<u8> {
        let mut v = (s.len() as u32).to_le_bytes().to_vec();
        v.extend_from_slice(s.as_bytes());
        v
    }

    #[test]
    fn reads_triton_inputs_as_protocol_tensors() {
        let inputs = [
            copy(input::PHONEMES, dtype::BYTES, &[1], bytes("hˈɛlO")),
            copy(input::VOICE, dtype::BYTES, &[1], bytes("af_heart")),
            copy(
                input::SPEED,
                dtype::FP32,
                &[1],
                1.25f32.to_le_bytes().to_vec(),
            ),
            copy(input::WHOLE, dtype::BOOL, &[1], vec![1]),
        ];
        let r = parse(&inputs).unwrap();
        assert_eq!(r.words, Words::Phonemes(vec!["hˈɛlO".to_owned()]));
        assert_eq!(r.voice, Voice::Named("af_heart".to_owned()));
        assert!((r.speed - 1.25).abs() < f32::EPSILON && r.whole && r.sample_rate == 24_000);
    }

    #[test]
    fn refusals_name_the_field() {
        let voice = copy(input::VOICE, dtype::BYTES, &[1], bytes("af_heart"));
        let words = copy(input::TEXT, dtype::BYTES, &[1], bytes("Hi."));
        let speed_int = copy(
            input::SPEED,
            dtype::INT32,
            &[1],
            1i32.to_le_bytes().to_vec(),
        );
        let e = parse(&[words.clone(), voice.clone(), speed_int]).unwrap_err();
        assert!(e.message.contains("`SPEED`"), "{e}");
        let int64 = copy(
            input::SAMPLE_RATE,
            9,
            &[1],
            16_000i64.to_le_bytes().to_vec(),
        );
        let e = parse(&[words.clone(), voice.clone(), int64]).unwrap_err();
        assert!(e.message.contains("`SAMPLE_RATE`"), "{e}");
        let e = parse(std::slice::from_ref(&words)).unwrap_err();
        assert!(e.message.contains("`VOICE`"), "{e}");
        let unknown = copy("PITCH", dtype::FP32, &[1], vec![0; 4]);
        let e = parse(&[words, voice, unknown]).unwrap_err();
        assert!(e.message.contains("`PITCH`"), "{e}");
        assert_eq!(e.code, crate::Code::InvalidArg);
    }
}
