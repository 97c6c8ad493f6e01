//! Any bytes as a request's tensors (names, types, shapes and raw contents cut from the input),
//! then as a response's: accepted or refused naming a field, never a panic or a huge
//! allocation, and whatever is accepted survives the wire unchanged.
#![no_main]

use triton_wire::protocol::{input, output, Chunk, DataType, Request, Tensor};

const NAMES: [&str; 12] = [
    input::TEXT,
    input::PHONEMES,
    input::VOICE,
    input::STYLE,
    input::SPEED,
    input::SAMPLE_RATE,
    input::WHOLE,
    output::AUDIO,
    output::SEGMENT,
    output::SEGMENT_END,
    output::DURATIONS,
    "OTHER",
];
const TYPES: [DataType; 4] = [DataType::Bytes, DataType::Fp32, DataType::Int32, DataType::Bool];

/// Cuts `data` into tensors: per tensor a header byte (name, type), a rank, dimensions as
/// little-endian i64 (any value, negative and huge included), a length, then the contents.
fn tensors(mut data: &[u8]) -> Vec<(&'static str, DataType, Vec<i64>, &[u8])> {
    let mut out = Vec::new();
    while let [head, rank, rest @ ..] = data {
        let rank = usize::from(*rank % 4);
        let mut shape = Vec::with_capacity(rank);
        let mut rest = rest;
        for _ in 0..rank {
            let Some((dim, tail)) = rest.split_first_chunk::<8>() else {
                return out;
            };
            shape.push(i64::from_le_bytes(*dim));
            rest = tail;
        }
        let Some((len, tail)) = rest.split_first_chunk::<2>() else {
            return out;
        };
        let len = usize::from(u16::from_le_bytes(*len)).min(tail.len());
        let (contents, tail) = tail.split_at(len);
        out.push((
            NAMES[usize::from(*head) % NAMES.len()],
            TYPES[usize::from(*head / 16) % TYPES.len()],
            shape,
            contents,
        ));
        data = tail;
    }
    out
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let cut = tensors(data);
    let borrowed = || {
        cut.iter().map(|(name, datatype, shape, data)| Tensor {
            name,
            datatype: *datatype,
            shape,
            data,
        })
    };
    match Request::from_tensors(borrowed()) {
        Ok(request) => {
            let again = request.to_tensors();
            let back = Request::from_tensors(again.iter().map(|t| t.borrow()));
            assert_eq!(back.as_ref().ok(), Some(&request), "{back:?}");
        }
        Err(e) => assert!(!e.field.is_empty() && !e.reason.is_empty()),
    }
    if let Ok(chunk) = Chunk::from_tensors(borrowed()) {
        let again = chunk.to_tensors();
        let back = Chunk::from_tensors(again.iter().map(|t| t.borrow()));
        assert_eq!(back.as_ref().ok(), Some(&chunk));
    }
});
