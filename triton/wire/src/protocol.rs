//! The tensors of model `banter` on Triton: what a request carries, what each streamed
//! response carries, and the checks that turn untrusted tensors into a [`Request`].
//!
//! Every tensor travels in Triton's raw form (little-endian numbers; `BYTES` as elements each
//! prefixed by a 4-byte little-endian length), which is both what the backend C API hands a
//! backend and what `KServe` v2 gRPC carries in `raw_input_contents` / `raw_output_contents`.
//! So one parser serves both ends, and it is the only code that reads a client's tensors:
//! it is bounds-checked, names the field at fault in every error, and is fuzzed
//! (`fuzz/triton`, target `request_tensors`).
//!
//! Inputs (exactly one of `TEXT`/`PHONEMES`, exactly one of `VOICE`/`STYLE`):
//!
//! | name | type | shape | meaning |
//! |---|---|---|---|
//! | `TEXT` | BYTES | `[1]` | UTF-8 text; the server cuts it into segments and times its words |
//! | `PHONEMES` | BYTES | `[n]` | one segment's phonemes per element, already cut by the client |
//! | `VOICE` | BYTES | `[1]` | a voice name or blend recipe the server resolves (`af_heart`, `af_bella:0.7+af_sky:0.3`) |
//! | `STYLE` | FP32 | `[510, 256]` | a resolved voice table (a style pack): the client's library voice travels |
//! | `SPEED` | FP32 | `[1]` | speaking rate, default 1 |
//! | `SAMPLE_RATE` | INT32 | `[1]` | output rate in Hz, default 24000 |
//! | `WHOLE` | BOOL | `[1]` | true: each segment decoded whole, exactly (renders); false (default): in windows, first audio early (listeners) |
//!
//! Outputs, one response per audio chunk, the last response flagged final by Triton:
//!
//! | name | type | shape | meaning |
//! |---|---|---|---|
//! | `AUDIO` | FP32 | `[k]` | mono samples at the request's rate |
//! | `SEGMENT` | INT32 | `[1]` | which segment (0-based) the chunk belongs to |
//! | `SEGMENT_END` | BOOL | `[1]` | true on a segment's last chunk |
//! | `DURATIONS` | INT32 | `[t]` | on a segment's first chunk, the frames (25 ms) the model gave each token, pads included (word timing); empty on later chunks |

use std::fmt;

/// The model's name in a Triton model repository.
pub const MODEL: &str = "banter";

/// The style pack's shape: Kokoro's 510 rows (one per phoneme count) of 256 values.
pub const STYLE_ROWS: usize = 510;
pub const STYLE_DIM: usize = 256;

/// The rate Kokoro speaks at; any other output rate is resampled from it.
pub const NATIVE_RATE: u32 = 24_000;
/// Output rates a request may ask for.
pub const RATE_RANGE: std::ops::RangeInclusive<u32> = 8_000..=48_000;

/// Limits that keep one request from holding a server: far above any real line or episode
/// chapter, far below what would exhaust memory.
pub const MAX_TEXT_BYTES: usize = 1 << 20;
pub const MAX_SEGMENTS: usize = 10_000;
pub const MAX_SEGMENT_BYTES: usize = 16 << 10;
pub const MAX_VOICE_BYTES: usize = 16 << 10;

/// Input tensor names.
pub mod input {
    pub const TEXT: &str = "TEXT";
    pub const PHONEMES: &str = "PHONEMES";
    pub const VOICE: &str = "VOICE";
    pub const STYLE: &str = "STYLE";
    pub const SPEED: &str = "SPEED";
    pub const SAMPLE_RATE: &str = "SAMPLE_RATE";
    pub const WHOLE: &str = "WHOLE";
    /// Every input, in the order a request's tensors are checked.
    pub const ALL: [&str; 7] = [TEXT, PHONEMES, VOICE, STYLE, SPEED, SAMPLE_RATE, WHOLE];
}

/// Output tensor names.
pub mod output {
    pub const AUDIO: &str = "AUDIO";
    pub const SEGMENT: &str = "SEGMENT";
    pub const SEGMENT_END: &str = "SEGMENT_END";
    pub const DURATIONS: &str = "DURATIONS";
}

/// A tensor's element type, as Triton names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataType {
    Bytes,
    Fp32,
    Int32,
    Bool,
}

impl DataType {
    /// Triton's name (`"BYTES"`, `"FP32"`, …), as in `config.pbtxt` without `TYPE_` and in
    /// `KServe` v2's `datatype`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Bytes => "BYTES",
            Self::Fp32 => "FP32",
            Self::Int32 => "INT32",
            Self::Bool => "BOOL",
        }
    }

    /// The type Triton calls `name`, if this protocol uses it.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "BYTES" => Self::Bytes,
            "FP32" => Self::Fp32,
            "INT32" => Self::Int32,
            "BOOL" => Self::Bool,
            _ => return None,
        })
    }
}

/// A borrowed tensor in Triton's raw form.
#[derive(Debug, Clone, Copy)]
pub struct Tensor<'a> {
    pub name: &'a str,
    pub datatype: DataType,
    pub shape: &'a [i64],
    pub data: &'a [u8],
}

/// An owned tensor in Triton's raw form, ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedTensor {
    pub name: &'static str,
    pub datatype: DataType,
    pub shape: Vec<i64>,
    pub data: Vec<u8>,
}

impl OwnedTensor {
    #[must_use]
    pub fn borrow(&self) -> Tensor<'_> {
        Tensor {
            name: self.name,
            datatype: self.datatype,
            shape: &self.shape,
            data: &self.data,
        }
    }

    fn f32s(name: &'static str, shape: Vec<i64>, values: &[f32]) -> Self {
        Self {
            name,
            datatype: DataType::Fp32,
            shape,
            data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    fn i32s(name: &'static str, values: &[i32]) -> Self {
        Self {
            name,
            datatype: DataType::Int32,
            shape: vec![values.len() as i64],
            data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    fn one_bool(name: &'static str, value: bool) -> Self {
        Self {
            name,
            datatype: DataType::Bool,
            shape: vec![1],
            data: vec![u8::from(value)],
        }
    }

    fn strings<S: AsRef<str>>(name: &'static str, values: &[S]) -> Self {
        let mut data = Vec::new();
        for v in values {
            let v = v.as_ref().as_bytes();
            data.extend_from_slice(&(v.len() as u32).to_le_bytes());
            data.extend_from_slice(v);
        }
        Self {
            name,
            datatype: DataType::Bytes,
            shape: vec![values.len() as i64],
            data,
        }
    }
}

/// What to speak: text the server cuts, or segments the client cut.
#[derive(Debug, Clone, PartialEq)]
pub enum Words {
    Text(String),
    Phonemes(Vec<String>),
}

/// Who speaks: a name the server resolves, or a voice table resolved by the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Voice {
    Named(String),
    /// `STYLE_ROWS × STYLE_DIM` values, row-major.
    Style(Vec<f32>),
}

/// One request to model `banter`, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub words: Words,
    pub voice: Voice,
    pub speed: f32,
    pub sample_rate: u32,
    pub whole: bool,
}

/// A request tensor that is missing, unknown, or not what its field needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("input `{field}`: {reason}")]
pub struct FieldError {
    pub field: String,
    pub reason: String,
}

impl FieldError {
    fn new(field: &str, reason: impl fmt::Display) -> Self {
        Self {
            field: field.to_owned(),
            reason: reason.to_string(),
        }
    }
}

impl Request {
    /// The request as Triton input tensors, in a fixed order.
    #[must_use]
    pub fn to_tensors(&self) -> Vec<OwnedTensor> {
        vec![
            match &self.words {
                Words::Text(text) => OwnedTensor::strings(input::TEXT, &[text]),
                Words::Phonemes(segments) => OwnedTensor::strings(input::PHONEMES, segments),
            },
            match &self.voice {
                Voice::Named(name) => OwnedTensor::strings(input::VOICE, &[name]),
                Voice::Style(rows) => OwnedTensor::f32s(
                    input::STYLE,
                    vec![STYLE_ROWS as i64, STYLE_DIM as i64],
                    rows,
                ),
            },
            OwnedTensor::f32s(input::SPEED, vec![1], &[self.speed]),
            OwnedTensor::i32s(input::SAMPLE_RATE, &[self.sample_rate as i32]),
            OwnedTensor::one_bool(input::WHOLE, self.whole),
        ]
    }

    /// Checks untrusted tensors and makes the request; every refusal names its field.
    pub fn from_tensors<'a>(
        tensors: impl IntoIterator<Item = Tensor<'a>>,
    ) -> Result<Self, FieldError> {
        const NAMES: [&str; 7] = input::ALL;
        let mut seen: [Option<Tensor<'a>>; 7] = [None; 7];
        for t in tensors {
            let Some(slot) = NAMES.iter().position(|n| *n == t.name) else {
                return Err(FieldError::new(
                    t.name,
                    format!(
                        "not an input of model `{MODEL}` (it takes {})",
                        NAMES.join(", ")
                    ),
                ));
            };
            if seen[slot].is_some() {
                return Err(FieldError::new(t.name, "given twice"));
            }
            seen[slot] = Some(t);
        }
        let [text, phonemes, voice, style, speed, rate, whole] = seen;
        let words = match (text, phonemes) {
            (Some(t), None) => {
                let mut v = strings(&t, 1, MAX_TEXT_BYTES)?;
                if v.len() != 1 {
                    return Err(FieldError::new(t.name, "holds one string, the text"));
                }
                Words::Text(v.remove(0))
            }
            (None, Some(p)) => {
                let v = strings(&p, MAX_SEGMENTS, MAX_SEGMENT_BYTES)?;
                if v.is_empty() {
                    return Err(FieldError::new(p.name, "has no segments"));
                }
                Words::Phonemes(v)
            }
            (Some(_), Some(_)) => {
                return Err(FieldError::new(
                    input::TEXT,
                    "give TEXT or PHONEMES, not both",
                ))
            }
            (None, None) => {
                return Err(FieldError::new(
                    input::TEXT,
                    "missing: give TEXT (text to speak) or PHONEMES (segments)",
                ))
            }
        };
        let voice = match (voice, style) {
            (Some(v), None) => {
                let mut names = strings(&v, 1, MAX_VOICE_BYTES)?;
                if names.len() != 1 || names[0].trim().is_empty() {
                    return Err(FieldError::new(v.name, "holds one voice name"));
                }
                Voice::Named(names.remove(0))
            }
            (None, Some(s)) => {
                let want = [STYLE_ROWS as i64, STYLE_DIM as i64];
                if s.shape != want && s.shape != [STYLE_ROWS as i64, 1, STYLE_DIM as i64] {
                    return Err(FieldError::new(
                        s.name,
                        format!("shape {:?}, expected {want:?}", s.shape),
                    ));
                }
                let rows = f32s(&s, STYLE_ROWS * STYLE_DIM)?;
                if rows.iter().any(|v| !v.is_finite()) {
                    return Err(FieldError::new(
                        s.name,
                        "holds a value that is not a number",
                    ));
                }
                Voice::Style(rows)
            }
            (Some(_), Some(_)) => {
                return Err(FieldError::new(
                    input::VOICE,
                    "give VOICE or STYLE, not both",
                ))
            }
            (None, None) => {
                return Err(FieldError::new(
                    input::VOICE,
                    "missing: give VOICE (a voice name) or STYLE (a voice table)",
                ))
            }
        };
        let speed = match speed {
            Some(t) => f32s(&t, 1)?[0],
            None => 1.0,
        };
        if !speed.is_finite() || speed <= 0.0 {
            return Err(FieldError::new(
                input::SPEED,
                format!("{speed} is not a speaking rate"),
            ));
        }
        let sample_rate = match rate {
            Some(t) => {
                let r = i32s(&t, 1)?[0];
                u32::try_from(r)
                    .ok()
                    .filter(|r| RATE_RANGE.contains(r))
                    .ok_or_else(|| {
                        FieldError::new(
                            input::SAMPLE_RATE,
                            format!(
                                "{r} Hz is outside {}–{} Hz",
                                RATE_RANGE.start(),
                                RATE_RANGE.end()
                            ),
                        )
                    })?
            }
            None => NATIVE_RATE,
        };
        let whole = match whole {
            Some(t) => bools(&t, 1)?[0],
            None => false,
        };
        Ok(Self {
            words,
            voice,
            speed,
            sample_rate,
            whole,
        })
    }
}

/// One streamed response: a chunk of one segment's audio.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub audio: Vec<f32>,
    pub segment: u32,
    pub segment_end: bool,
    /// On a segment's first chunk, frames per token (pads included); `None` on later chunks.
    pub durations: Option<Vec<u32>>,
}

impl Chunk {
    /// The chunk as Triton output tensors.
    #[must_use]
    pub fn to_tensors(&self) -> Vec<OwnedTensor> {
        let durations: Vec<i32> = self
            .durations
            .iter()
            .flatten()
            .map(|d| i32::try_from(*d).unwrap_or(i32::MAX))
            .collect();
        vec![
            OwnedTensor::f32s(output::AUDIO, vec![self.audio.len() as i64], &self.audio),
            OwnedTensor::i32s(output::SEGMENT, &[self.segment as i32]),
            OwnedTensor::one_bool(output::SEGMENT_END, self.segment_end),
            OwnedTensor::i32s(output::DURATIONS, &durations),
        ]
    }

    /// Reads a response's output tensors (from a server, so checked like any input).
    pub fn from_tensors<'a>(
        tensors: impl IntoIterator<Item = Tensor<'a>>,
    ) -> Result<Self, FieldError> {
        let (mut audio, mut segment, mut end, mut durations) = (None, None, None, None);
        for t in tensors {
            match t.name {
                output::AUDIO => audio = Some(f32s(&t, usize::MAX)?),
                output::SEGMENT => segment = Some(i32s(&t, 1)?[0]),
                output::SEGMENT_END => end = Some(bools(&t, 1)?[0]),
                output::DURATIONS => durations = Some(i32s(&t, usize::MAX)?),
                // Outputs a newer server adds are not ours to refuse.
                _ => {}
            }
        }
        let missing = |name: &str| FieldError::new(name, "missing from the response");
        let segment = segment.ok_or_else(|| missing(output::SEGMENT))?;
        let segment = u32::try_from(segment)
            .map_err(|_| FieldError::new(output::SEGMENT, format!("{segment} is negative")))?;
        let durations = durations.unwrap_or_default();
        let durations = if durations.is_empty() {
            None
        } else {
            Some(
                durations
                    .into_iter()
                    .map(|d| {
                        u32::try_from(d).map_err(|_| {
                            FieldError::new(output::DURATIONS, format!("{d} frames is negative"))
                        })
                    })
                    .collect::<Result<_, _>>()?,
            )
        };
        let audio = audio.ok_or_else(|| missing(output::AUDIO))?;
        if audio.iter().any(|v| !v.is_finite()) {
            return Err(FieldError::new(
                output::AUDIO,
                "holds a sample that is not a number (a damaged model on the server)",
            ));
        }
        Ok(Self {
            audio,
            segment,
            segment_end: end.ok_or_else(|| missing(output::SEGMENT_END))?,
            durations,
        })
    }
}

/// The element count a shape promises, refusing negative dimensions and overflow.
fn elements(t: &Tensor<'_>) -> Result<usize, FieldError> {
    t.shape.iter().try_fold(1usize, |n, &d| {
        usize::try_from(d)
            .ok()
            .and_then(|d| n.checked_mul(d))
            .ok_or_else(|| FieldError::new(t.name, format!("shape {:?} is not a size", t.shape)))
    })
}

fn expect_type(t: &Tensor<'_>, want: DataType) -> Result<(), FieldError> {
    if t.datatype == want {
        Ok(())
    } else {
        Err(FieldError::new(
            t.name,
            format!("type {}, expected {}", t.datatype.name(), want.name()),
        ))
    }
}

/// Fixed-width elements: type, count (`max` at most) and byte length all agree.
fn fixed<'a>(
    t: &Tensor<'a>,
    want: DataType,
    width: usize,
    max: usize,
) -> Result<&'a [u8], FieldError> {
    expect_type(t, want)?;
    let n = elements(t)?;
    if n == 0 || n > max {
        let expected = if max == 1 {
            "one value".to_owned()
        } else {
            format!("1 to {max} values")
        };
        return Err(FieldError::new(
            t.name,
            format!("holds {n} values, expected {expected}"),
        ));
    }
    if Some(t.data.len()) != n.checked_mul(width) {
        return Err(FieldError::new(
            t.name,
            format!(
                "{} bytes for {n} {} values",
                t.data.len(),
                t.datatype.name()
            ),
        ));
    }
    Ok(t.data)
}

fn f32s(t: &Tensor<'_>, max: usize) -> Result<Vec<f32>, FieldError> {
    let data = if t.datatype == DataType::Fp32 && elements(t)? == 0 && max == usize::MAX {
        return Ok(Vec::new());
    } else {
        fixed(t, DataType::Fp32, 4, max)?
    };
    Ok(data
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

fn i32s(t: &Tensor<'_>, max: usize) -> Result<Vec<i32>, FieldError> {
    if t.datatype == DataType::Int32 && elements(t)? == 0 && max == usize::MAX {
        return Ok(Vec::new());
    }
    Ok(fixed(t, DataType::Int32, 4, max)?
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

fn bools(t: &Tensor<'_>, max: usize) -> Result<Vec<bool>, FieldError> {
    Ok(fixed(t, DataType::Bool, 1, max)?
        .iter()
        .map(|b| *b != 0)
        .collect())
}

/// `BYTES` elements as UTF-8 strings: at most `max` of them, each at most `max_bytes`.
fn strings(t: &Tensor<'_>, max: usize, max_bytes: usize) -> Result<Vec<String>, FieldError> {
    expect_type(t, DataType::Bytes)?;
    let n = elements(t)?;
    if n > max {
        return Err(FieldError::new(
            t.name,
            format!("holds {n} strings, at most {max} are taken"),
        ));
    }
    let mut out = Vec::with_capacity(n);
    let mut rest = t.data;
    for i in 0..n {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            return Err(FieldError::new(
                t.name,
                format!("string {i} has no length prefix (the data ends)"),
            ));
        };
        let len = u32::from_le_bytes(*len) as usize;
        if len > max_bytes {
            return Err(FieldError::new(
                t.name,
                format!("string {i} is {len} bytes, at most {max_bytes} are taken"),
            ));
        }
        if tail.len() < len {
            return Err(FieldError::new(
                t.name,
                format!("string {i} says {len} bytes but {} remain", tail.len()),
            ));
        }
        let (s, tail) = tail.split_at(len);
        let s = std::str::from_utf8(s)
            .map_err(|e| FieldError::new(t.name, format!("string {i} is not UTF-8: {e}")))?;
        out.push(s.to_owned());
        rest = tail;
    }
    if !rest.is_empty() {
        return Err(FieldError::new(
            t.name,
            format!("{} bytes after its {n} strings", rest.len()),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
