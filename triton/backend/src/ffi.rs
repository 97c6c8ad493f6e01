//! The part of Triton's backend C API (`tritonbackend.h` 1.19, `tritonserver.h` 1.34, Triton
//! 2.51) this backend calls, declared by hand, and the safe wrappers the rest of the crate uses.
//!
//! `unsafe` is allowed here and in `entry` only, because calling C is the point: every
//! function below is resolved from the `tritonserver` process when Triton loads the library
//! (the cdylib leaves them undefined: rustc links a cdylib without `-z defs`, so no linker
//! flag is needed). The wrappers keep one rule each, stated on
//! their type: a handle is only made from a pointer Triton gave for that purpose, it is used
//! while Triton says the object lives, and every error Triton returns is read and deleted here,
//! so no raw pointer or `TRITONSERVER_Error` leaves this module except through [`Failure`]s
//! turned into errors at the entry points.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;

use triton_wire::protocol::OwnedTensor;

use crate::Failure;

/// Opaque C types (only ever behind pointers).
#[repr(C)]
pub struct TritonError {
    _private: [u8; 0],
}
#[repr(C)]
pub struct Message {
    _private: [u8; 0],
}
#[repr(C)]
pub struct RawModel {
    _private: [u8; 0],
}
#[repr(C)]
pub struct RawInstance {
    _private: [u8; 0],
}
#[repr(C)]
pub struct RawRequest {
    _private: [u8; 0],
}
#[repr(C)]
pub struct RawInput {
    _private: [u8; 0],
}
#[repr(C)]
pub struct RawFactory {
    _private: [u8; 0],
}
#[repr(C)]
pub struct RawResponse {
    _private: [u8; 0],
}
#[repr(C)]
pub struct RawOutput {
    _private: [u8; 0],
}
#[repr(C)]
pub struct RawBackend {
    _private: [u8; 0],
}

/// The API version this backend was written against: Triton's major must equal it, its minor
/// be at least this.
pub const API_MAJOR: u32 = 1;
pub const API_MINOR: u32 = 19;

/// `TRITONSERVER_Error_Code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Code {
    Unknown = 0,
    Internal = 1,
    NotFound = 2,
    InvalidArg = 3,
    Unavailable = 4,
    Unsupported = 5,
    AlreadyExists = 6,
    Cancelled = 7,
}

/// `TRITONSERVER_DataType` values this protocol uses (the enum is a C `int`).
pub mod dtype {
    pub const BOOL: u32 = 1;
    pub const INT32: u32 = 8;
    pub const FP32: u32 = 11;
    pub const BYTES: u32 = 13;
}

/// `TRITONSERVER_MemoryType`: CPU, and pinned CPU memory (plain memory to us).
const MEMORY_CPU: u32 = 0;
const MEMORY_CPU_PINNED: u32 = 1;
/// `TRITONSERVER_InstanceGroupKind`.
pub mod kind {
    pub const AUTO: u32 = 0;
    pub const CPU: u32 = 1;
    pub const GPU: u32 = 2;
    pub const MODEL: u32 = 3;
}
/// `TRITONSERVER_REQUEST_RELEASE_ALL`.
const RELEASE_ALL: u32 = 1;
/// `TRITONSERVER_RESPONSE_COMPLETE_FINAL`.
const COMPLETE_FINAL: u32 = 1;
/// `TRITONSERVER_LogLevel`: info, warn, error.
const LOG_INFO: u32 = 0;
const LOG_ERROR: u32 = 2;

type Err = *mut TritonError;

extern "C" {
    fn TRITONSERVER_ErrorNew(code: u32, msg: *const c_char) -> Err;
    fn TRITONSERVER_ErrorDelete(error: Err);
    fn TRITONSERVER_ErrorCode(error: Err) -> u32;
    fn TRITONSERVER_ErrorMessage(error: Err) -> *const c_char;
    fn TRITONSERVER_MessageSerializeToJson(
        message: *mut Message,
        base: *mut *const c_char,
        byte_size: *mut usize,
    ) -> Err;
    fn TRITONSERVER_MessageDelete(message: *mut Message) -> Err;
    fn TRITONSERVER_LogMessage(
        level: u32,
        filename: *const c_char,
        line: i32,
        msg: *const c_char,
    ) -> Err;

    fn TRITONBACKEND_ApiVersion(major: *mut u32, minor: *mut u32) -> Err;

    fn TRITONBACKEND_ModelConfig(
        model: *mut RawModel,
        version: u32,
        config: *mut *mut Message,
    ) -> Err;
    fn TRITONBACKEND_ModelState(model: *mut RawModel, state: *mut *mut c_void) -> Err;
    fn TRITONBACKEND_ModelSetState(model: *mut RawModel, state: *mut c_void) -> Err;

    fn TRITONBACKEND_ModelInstanceModel(
        instance: *mut RawInstance,
        model: *mut *mut RawModel,
    ) -> Err;
    fn TRITONBACKEND_ModelInstanceKind(instance: *mut RawInstance, kind: *mut u32) -> Err;
    fn TRITONBACKEND_ModelInstanceDeviceId(instance: *mut RawInstance, id: *mut i32) -> Err;
    fn TRITONBACKEND_ModelInstanceState(instance: *mut RawInstance, state: *mut *mut c_void)
        -> Err;
    fn TRITONBACKEND_ModelInstanceSetState(instance: *mut RawInstance, state: *mut c_void) -> Err;
    fn TRITONBACKEND_ModelInstanceReportStatistics(
        instance: *mut RawInstance,
        request: *mut RawRequest,
        success: bool,
        exec_start_ns: u64,
        compute_start_ns: u64,
        compute_end_ns: u64,
        exec_end_ns: u64,
    ) -> Err;
    fn TRITONBACKEND_ModelInstanceReportBatchStatistics(
        instance: *mut RawInstance,
        batch_size: u64,
        exec_start_ns: u64,
        compute_start_ns: u64,
        compute_end_ns: u64,
        exec_end_ns: u64,
    ) -> Err;

    fn TRITONBACKEND_RequestInputCount(request: *mut RawRequest, count: *mut u32) -> Err;
    fn TRITONBACKEND_RequestInputByIndex(
        request: *mut RawRequest,
        index: u32,
        input: *mut *mut RawInput,
    ) -> Err;
    fn TRITONBACKEND_InputProperties(
        input: *mut RawInput,
        name: *mut *const c_char,
        datatype: *mut u32,
        shape: *mut *const i64,
        dims_count: *mut u32,
        byte_size: *mut u64,
        buffer_count: *mut u32,
    ) -> Err;
    fn TRITONBACKEND_InputBuffer(
        input: *mut RawInput,
        index: u32,
        buffer: *mut *const c_void,
        buffer_byte_size: *mut u64,
        memory_type: *mut u32,
        memory_type_id: *mut i64,
    ) -> Err;
    fn TRITONBACKEND_RequestRelease(request: *mut RawRequest, release_flags: u32) -> Err;

    fn TRITONBACKEND_ResponseNew(response: *mut *mut RawResponse, request: *mut RawRequest) -> Err;
    fn TRITONBACKEND_ResponseFactoryNew(
        factory: *mut *mut RawFactory,
        request: *mut RawRequest,
    ) -> Err;
    fn TRITONBACKEND_ResponseFactoryDelete(factory: *mut RawFactory) -> Err;
    fn TRITONBACKEND_ResponseFactorySendFlags(factory: *mut RawFactory, send_flags: u32) -> Err;
    fn TRITONBACKEND_ResponseFactoryIsCancelled(
        factory: *mut RawFactory,
        cancelled: *mut bool,
    ) -> Err;
    fn TRITONBACKEND_ResponseNewFromFactory(
        response: *mut *mut RawResponse,
        factory: *mut RawFactory,
    ) -> Err;
    fn TRITONBACKEND_ResponseDelete(response: *mut RawResponse) -> Err;
    fn TRITONBACKEND_ResponseOutput(
        response: *mut RawResponse,
        output: *mut *mut RawOutput,
        name: *const c_char,
        datatype: u32,
        shape: *const i64,
        dims_count: u32,
    ) -> Err;
    fn TRITONBACKEND_OutputBuffer(
        output: *mut RawOutput,
        buffer: *mut *mut c_void,
        buffer_byte_size: u64,
        memory_type: *mut u32,
        memory_type_id: *mut i64,
    ) -> Err;
    fn TRITONBACKEND_ResponseSend(response: *mut RawResponse, send_flags: u32, error: Err) -> Err;
}

/// A `TRITONSERVER_Error` Triton returned, read and deleted.
fn check(error: Err) -> Result<(), Failure> {
    if error.is_null() {
        return Ok(());
    }
    // SAFETY: `error` is a non-null error Triton just returned to us, so we own it; it is read
    // and then deleted exactly once here.
    let (code, message) = unsafe {
        let code = TRITONSERVER_ErrorCode(error);
        let text = TRITONSERVER_ErrorMessage(error);
        let message = if text.is_null() {
            String::new()
        } else {
            CStr::from_ptr(text).to_string_lossy().into_owned()
        };
        TRITONSERVER_ErrorDelete(error);
        (code, message)
    };
    Err(Failure::new(code_from(code), format!("triton: {message}")))
}

fn code_from(code: u32) -> Code {
    match code {
        1 => Code::Internal,
        2 => Code::NotFound,
        3 => Code::InvalidArg,
        4 => Code::Unavailable,
        5 => Code::Unsupported,
        6 => Code::AlreadyExists,
        7 => Code::Cancelled,
        _ => Code::Unknown,
    }
}

/// A C string of `text`, any NUL in it replaced (messages come from our own formatting).
fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', " ")).unwrap_or_default()
}

/// A new `TRITONSERVER_Error` for Triton to own (what an entry point returns).
#[must_use]
pub fn new_error(failure: &Failure) -> *mut TritonError {
    let message = c_string(&failure.message);
    // SAFETY: `message` is a valid NUL-terminated string that Triton copies; the new error is
    // handed to the caller, who passes its ownership to Triton.
    unsafe { TRITONSERVER_ErrorNew(failure.code as u32, message.as_ptr()) }
}

/// Writes a line to Triton's log (what `--log-verbose`/`--log-info` show).
pub fn log_info(message: &str) {
    log(LOG_INFO, message);
}

pub fn log_error(message: &str) {
    log(LOG_ERROR, message);
}

fn log(level: u32, message: &str) {
    let file = c_string(file!());
    let message = c_string(message);
    // SAFETY: both strings are valid NUL-terminated C strings for the call's duration; Triton
    // copies them. A logging failure is read and dropped by `check`.
    let _ = check(unsafe { TRITONSERVER_LogMessage(level, file.as_ptr(), 0, message.as_ptr()) });
}

/// Triton's `TRITONBACKEND_API` version.
pub fn api_version() -> Result<(u32, u32), Failure> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both out-pointers point at live locals.
    check(unsafe { TRITONBACKEND_ApiVersion(&raw mut major, &raw mut minor) })?;
    Ok((major, minor))
}

/// Nanoseconds of `CLOCK_MONOTONIC`, the clock of `std::chrono::steady_clock` that Triton's own
/// timestamps (queue start, request start) are taken with, so the statistics line up.
#[must_use]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a live, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut ts) };
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

/// A `TRITONBACKEND_Model` for the duration of one entry point call.
#[derive(Clone, Copy)]
pub struct Model(*mut RawModel);

impl Model {
    /// # Safety
    /// `raw` is a model handle Triton passed to an entry point that is still running (or the
    /// model of such an instance); the handle is not kept after it returns.
    pub unsafe fn from_raw(raw: *mut RawModel) -> Self {
        Self(raw)
    }

    /// The model's configuration (`config.pbtxt` as Triton completed it), as JSON.
    pub fn config_json(self) -> Result<String, Failure> {
        let mut message: *mut Message = ptr::null_mut();
        // SAFETY: `self.0` is live (type invariant); the out-pointer is a live local.
        check(unsafe { TRITONBACKEND_ModelConfig(self.0, 1, &raw mut message) })?;
        let mut base: *const c_char = ptr::null();
        let mut size = 0usize;
        // SAFETY: `message` was just returned to us and is ours until deleted below; the
        // serialized bytes belong to it and are copied before it is deleted.
        let json = unsafe {
            let read = check(TRITONSERVER_MessageSerializeToJson(
                message,
                &raw mut base,
                &raw mut size,
            ))
            .map(|()| {
                if base.is_null() {
                    String::new()
                } else {
                    let bytes = std::slice::from_raw_parts(base.cast::<u8>(), size);
                    String::from_utf8_lossy(bytes).into_owned()
                }
            });
            let _ = check(TRITONSERVER_MessageDelete(message));
            read
        }?;
        Ok(json)
    }

    /// Hands the model's state to Triton to keep until [`Self::take_state`].
    pub fn set_state(self, state: Box<crate::model::ModelState>) -> Result<(), Failure> {
        let raw = Box::into_raw(state);
        // SAFETY: `self.0` is live; Triton only stores the pointer.
        let set = check(unsafe { TRITONBACKEND_ModelSetState(self.0, raw.cast()) });
        if set.is_err() {
            // SAFETY: Triton refused the pointer, so it is still only ours: take it back once.
            drop(unsafe { Box::from_raw(raw) });
        }
        set
    }

    fn state_ptr(self) -> Result<*mut crate::model::ModelState, Failure> {
        let mut state: *mut c_void = ptr::null_mut();
        // SAFETY: `self.0` is live; the out-pointer is a live local.
        check(unsafe { TRITONBACKEND_ModelState(self.0, &raw mut state) })?;
        Ok(state.cast())
    }

    /// The state set by [`Self::set_state`] (only ever a `ModelState`, set in
    /// `ModelInitialize`, taken in `ModelFinalize`, after every instance is finalized).
    pub fn state<'a>(self) -> Result<&'a crate::model::ModelState, Failure> {
        let state = self.state_ptr()?;
        // SAFETY: the only pointer ever stored is a leaked `Box<ModelState>`, alive until
        // `ModelFinalize`, which Triton calls after every use of the model ends.
        unsafe { state.as_ref() }.ok_or_else(|| Failure::internal("the model has no state"))
    }

    /// Takes the state back (in `ModelFinalize`) to drop it.
    pub fn take_state(self) -> Result<Option<Box<crate::model::ModelState>>, Failure> {
        let state = self.state_ptr()?;
        if state.is_null() {
            return Ok(None);
        }
        // SAFETY: `self.0` is live; the state is cleared before the box is rebuilt below.
        check(unsafe { TRITONBACKEND_ModelSetState(self.0, ptr::null_mut()) })?;
        // SAFETY: the pointer came from `Box::into_raw` in `set_state` and is no longer stored
        // by Triton, so this is its only owner.
        Ok(Some(unsafe { Box::from_raw(state) }))
    }
}

/// A `TRITONBACKEND_ModelInstance` for the duration of one entry point call.
#[derive(Clone, Copy)]
pub struct Instance(*mut RawInstance);

impl Instance {
    /// # Safety
    /// `raw` is an instance handle Triton passed to an entry point that is still running.
    pub unsafe fn from_raw(raw: *mut RawInstance) -> Self {
        Self(raw)
    }

    pub fn model(self) -> Result<Model, Failure> {
        let mut model: *mut RawModel = ptr::null_mut();
        // SAFETY: `self.0` is live; the out-pointer is a live local.
        check(unsafe { TRITONBACKEND_ModelInstanceModel(self.0, &raw mut model) })?;
        // SAFETY: an instance's model outlives it, so the handle lives as long as `self`.
        Ok(unsafe { Model::from_raw(model) })
    }

    /// The instance group's kind (`kind::CPU`, `kind::GPU`, …) and device id.
    pub fn kind_and_device(self) -> Result<(u32, i32), Failure> {
        let (mut kind, mut device) = (0u32, 0i32);
        // SAFETY: `self.0` is live; the out-pointers are live locals.
        check(unsafe { TRITONBACKEND_ModelInstanceKind(self.0, &raw mut kind) })?;
        // SAFETY: as above.
        check(unsafe { TRITONBACKEND_ModelInstanceDeviceId(self.0, &raw mut device) })?;
        Ok((kind, device))
    }

    pub fn set_state(self, state: Box<crate::instance::InstanceState>) -> Result<(), Failure> {
        let raw = Box::into_raw(state);
        // SAFETY: `self.0` is live; Triton only stores the pointer.
        let set = check(unsafe { TRITONBACKEND_ModelInstanceSetState(self.0, raw.cast()) });
        if set.is_err() {
            // SAFETY: Triton refused the pointer, so it is still only ours: take it back once.
            drop(unsafe { Box::from_raw(raw) });
        }
        set
    }

    fn state_ptr(self) -> Result<*mut crate::instance::InstanceState, Failure> {
        let mut state: *mut c_void = ptr::null_mut();
        // SAFETY: `self.0` is live; the out-pointer is a live local.
        check(unsafe { TRITONBACKEND_ModelInstanceState(self.0, &raw mut state) })?;
        Ok(state.cast())
    }

    /// The state set by [`Self::set_state`] (only ever an `InstanceState`).
    pub fn state<'a>(self) -> Result<&'a crate::instance::InstanceState, Failure> {
        let state = self.state_ptr()?;
        // SAFETY: the only pointer stored is a leaked `Box<InstanceState>`, alive until
        // `ModelInstanceFinalize`, which Triton never runs beside `Execute` of the instance.
        unsafe { state.as_ref() }.ok_or_else(|| Failure::internal("the instance has no state"))
    }

    pub fn take_state(self) -> Result<Option<Box<crate::instance::InstanceState>>, Failure> {
        let state = self.state_ptr()?;
        if state.is_null() {
            return Ok(None);
        }
        // SAFETY: `self.0` is live; the state is cleared before the box is rebuilt below.
        check(unsafe { TRITONBACKEND_ModelInstanceSetState(self.0, ptr::null_mut()) })?;
        // SAFETY: from `Box::into_raw` in `set_state`, no longer stored by Triton: one owner.
        Ok(Some(unsafe { Box::from_raw(state) }))
    }

    /// Records one request's statistics (before it is released).
    pub fn report(self, request: &Request, success: bool, times: [u64; 4]) -> Result<(), Failure> {
        let [a, b, c, d] = times;
        // SAFETY: both handles are live: the request is not yet released (`release` consumes
        // the `Request`, so a borrowed one is still Triton's live request).
        check(unsafe {
            TRITONBACKEND_ModelInstanceReportStatistics(self.0, request.0, success, a, b, c, d)
        })
    }

    /// Records one `Execute` call's statistics (`batch` requests started).
    pub fn report_batch(self, batch: u64, times: [u64; 4]) -> Result<(), Failure> {
        let [a, b, c, d] = times;
        // SAFETY: `self.0` is live.
        check(unsafe {
            TRITONBACKEND_ModelInstanceReportBatchStatistics(self.0, batch, a, b, c, d)
        })
    }
}

/// A request handed to `Execute`, owned by the backend until [`Request::release`].
pub struct Request(*mut RawRequest);

/// One input tensor, copied out of Triton's buffers.
#[derive(Debug, Clone, PartialEq)]
pub struct InputCopy {
    pub name: String,
    /// `TRITONSERVER_DataType` (see [`dtype`]).
    pub datatype: u32,
    pub shape: Vec<i64>,
    pub data: Vec<u8>,
}

impl Request {
    /// # Safety
    /// `raw` is one of the requests passed to the running `Execute`, not yet released, and
    /// no other `Request` is made for it.
    pub unsafe fn from_raw(raw: *mut RawRequest) -> Self {
        Self(raw)
    }

    /// Every input, its bytes copied (they may come in several buffers, and they die with
    /// the request).
    pub fn inputs(&self) -> Result<Vec<InputCopy>, Failure> {
        let mut count = 0u32;
        // SAFETY: the request is live until `release` consumes `self`.
        check(unsafe { TRITONBACKEND_RequestInputCount(self.0, &raw mut count) })?;
        let mut inputs = Vec::with_capacity(count as usize);
        for index in 0..count {
            let mut input: *mut RawInput = ptr::null_mut();
            // SAFETY: `index < count`; out-pointer is a live local.
            check(unsafe { TRITONBACKEND_RequestInputByIndex(self.0, index, &raw mut input) })?;
            inputs.push(Self::copy_input(input)?);
        }
        Ok(inputs)
    }

    fn copy_input(input: *mut RawInput) -> Result<InputCopy, Failure> {
        let mut name: *const c_char = ptr::null();
        let (mut datatype, mut dims, mut byte_size, mut buffers) = (0u32, 0u32, 0u64, 0u32);
        let mut shape: *const i64 = ptr::null();
        // SAFETY: `input` was just returned for this live request; all out-pointers are live
        // locals.
        check(unsafe {
            TRITONBACKEND_InputProperties(
                input,
                &raw mut name,
                &raw mut datatype,
                &raw mut shape,
                &raw mut dims,
                &raw mut byte_size,
                &raw mut buffers,
            )
        })?;
        // SAFETY: Triton owns the name and shape for the request's lifetime; both are copied
        // now. A null shape only comes with zero dimensions.
        let (name, shape) = unsafe {
            let name = if name.is_null() {
                String::new()
            } else {
                CStr::from_ptr(name).to_string_lossy().into_owned()
            };
            let shape = if shape.is_null() || dims == 0 {
                Vec::new()
            } else {
                std::slice::from_raw_parts(shape, dims as usize).to_vec()
            };
            (name, shape)
        };
        let mut data = Vec::with_capacity(usize::try_from(byte_size).unwrap_or(0));
        for index in 0..buffers {
            let mut buffer: *const c_void = ptr::null();
            let (mut size, mut memory, mut memory_id) = (0u64, MEMORY_CPU, 0i64);
            // SAFETY: `index < buffers`; out-pointers are live locals.
            check(unsafe {
                TRITONBACKEND_InputBuffer(
                    input,
                    index,
                    &raw mut buffer,
                    &raw mut size,
                    &raw mut memory,
                    &raw mut memory_id,
                )
            })?;
            if memory != MEMORY_CPU && memory != MEMORY_CPU_PINNED {
                return Err(Failure::new(
                    Code::Unsupported,
                    format!("input `{name}`: only CPU memory is read, buffer {index} is on a GPU"),
                ));
            }
            if size > 0 && !buffer.is_null() {
                // SAFETY: Triton says `buffer` holds `size` readable bytes in CPU memory
                // (plain or pinned) for the request's lifetime; they are copied now.
                data.extend_from_slice(unsafe {
                    std::slice::from_raw_parts(buffer.cast::<u8>(), size as usize)
                });
            }
        }
        Ok(InputCopy {
            name,
            datatype,
            shape,
            data,
        })
    }

    /// A factory for this request's responses, which outlives the request.
    pub fn response_factory(&self) -> Result<ResponseFactory, Failure> {
        let mut factory: *mut RawFactory = ptr::null_mut();
        // SAFETY: the request is live; out-pointer is a live local.
        check(unsafe { TRITONBACKEND_ResponseFactoryNew(&raw mut factory, self.0) })?;
        Ok(ResponseFactory(factory))
    }

    /// Sends one error response, flagged final, straight from the request.
    pub fn send_error(&self, failure: &Failure) -> Result<(), Failure> {
        let mut response: *mut RawResponse = ptr::null_mut();
        // SAFETY: the request is live; out-pointer is a live local.
        check(unsafe { TRITONBACKEND_ResponseNew(&raw mut response, self.0) })?;
        send_response(response, COMPLETE_FINAL, Some(failure))
    }

    /// Gives the request back to Triton (its inputs die with it).
    pub fn release(self) -> Result<(), Failure> {
        // SAFETY: the request is live and owned by us; `self` is consumed, so it is released
        // once and never used after.
        check(unsafe { TRITONBACKEND_RequestRelease(self.0, RELEASE_ALL) })
    }
}

/// Sends `response` (consuming it), with `failure` as its error if any.
fn send_response(
    response: *mut RawResponse,
    flags: u32,
    failure: Option<&Failure>,
) -> Result<(), Failure> {
    let error = failure.map_or(ptr::null_mut(), new_error);
    // SAFETY: `response` is a live response of ours; sending transfers it to Triton. The
    // error stays ours and is deleted after the call.
    let sent = check(unsafe { TRITONBACKEND_ResponseSend(response, flags, error) });
    if !error.is_null() {
        // SAFETY: `error` was made by `new_error` above and Triton does not take it.
        unsafe { TRITONSERVER_ErrorDelete(error) };
    }
    sent
}

/// A request's response factory: every response of a stream, from the stream's own thread.
/// Deleted when dropped.
pub struct ResponseFactory(*mut RawFactory);

// SAFETY: Triton allows a response factory to be used from any thread (it exists so that a
// request can be answered after `Execute` returned); this type is owned by one thread at a time
// and its responses are built one after another, as the API asks of one request.
unsafe impl Send for ResponseFactory {}

impl ResponseFactory {
    /// Whether the client cancelled the request.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        let mut cancelled = false;
        // SAFETY: the factory is live until dropped; out-pointer is a live local.
        let asked =
            check(unsafe { TRITONBACKEND_ResponseFactoryIsCancelled(self.0, &raw mut cancelled) });
        asked.is_ok() && cancelled
    }

    /// Sends one response carrying `tensors` (CPU memory), flagged final if `last`.
    pub fn send(&self, tensors: &[OwnedTensor]) -> Result<(), Failure> {
        let mut response: *mut RawResponse = ptr::null_mut();
        // SAFETY: the factory is live; out-pointer is a live local.
        check(unsafe { TRITONBACKEND_ResponseNewFromFactory(&raw mut response, self.0) })?;
        for tensor in tensors {
            if let Err(e) = add_output(response, tensor) {
                // SAFETY: the response was not sent, so it is still ours to delete, once.
                let _ = check(unsafe { TRITONBACKEND_ResponseDelete(response) });
                return Err(e);
            }
        }
        send_response(response, 0, None)
    }

    /// Sends an error response, flagged final (the stream ends with it).
    pub fn send_error(&self, failure: &Failure) -> Result<(), Failure> {
        let mut response: *mut RawResponse = ptr::null_mut();
        // SAFETY: the factory is live; out-pointer is a live local.
        check(unsafe { TRITONBACKEND_ResponseNewFromFactory(&raw mut response, self.0) })?;
        send_response(response, COMPLETE_FINAL, Some(failure))
    }

    /// Tells Triton the stream is complete (no response with it).
    pub fn send_final(&self) -> Result<(), Failure> {
        // SAFETY: the factory is live.
        check(unsafe { TRITONBACKEND_ResponseFactorySendFlags(self.0, COMPLETE_FINAL) })
    }
}

impl Drop for ResponseFactory {
    fn drop(&mut self) {
        // SAFETY: the factory is ours and this is its one deletion.
        let _ = check(unsafe { TRITONBACKEND_ResponseFactoryDelete(self.0) });
    }
}

fn wire_type(datatype: triton_wire::protocol::DataType) -> u32 {
    use triton_wire::protocol::DataType;
    match datatype {
        DataType::Bool => dtype::BOOL,
        DataType::Int32 => dtype::INT32,
        DataType::Fp32 => dtype::FP32,
        DataType::Bytes => dtype::BYTES,
    }
}

/// Adds one output to an unsent response and copies its bytes into Triton's CPU buffer.
fn add_output(response: *mut RawResponse, tensor: &OwnedTensor) -> Result<(), Failure> {
    let name = c_string(tensor.name);
    let mut output: *mut RawOutput = ptr::null_mut();
    // SAFETY: `response` is live and unsent; name and shape are valid for the call and
    // copied by Triton.
    check(unsafe {
        TRITONBACKEND_ResponseOutput(
            response,
            &raw mut output,
            name.as_ptr(),
            wire_type(tensor.datatype),
            tensor.shape.as_ptr(),
            tensor.shape.len() as u32,
        )
    })?;
    // Every output gets its buffer, an empty one too: Triton's gRPC front end counts outputs by
    // their buffers and refuses a response whose counts differ.
    let mut buffer: *mut c_void = ptr::null_mut();
    let (mut memory, mut memory_id) = (MEMORY_CPU, 0i64);
    // SAFETY: `output` was just made on the live response; out-pointers are live locals.
    check(unsafe {
        TRITONBACKEND_OutputBuffer(
            output,
            &raw mut buffer,
            tensor.data.len() as u64,
            &raw mut memory,
            &raw mut memory_id,
        )
    })?;
    if tensor.data.is_empty() {
        return Ok(());
    }
    if buffer.is_null() || (memory != MEMORY_CPU && memory != MEMORY_CPU_PINNED) {
        return Err(Failure::internal(format!(
            "output `{}`: Triton gave no CPU buffer",
            tensor.name
        )));
    }
    // SAFETY: Triton gave a writable CPU buffer of `data.len()` bytes owned by the output;
    // our bytes are a separate allocation, so the ranges do not overlap.
    unsafe {
        ptr::copy_nonoverlapping(tensor.data.as_ptr(), buffer.cast::<u8>(), tensor.data.len());
    }
    Ok(())
}
