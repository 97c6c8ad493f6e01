//! The functions Triton looks up in `libtriton_banter.so` by name.
//!
//! `unsafe` is allowed here because exporting an unmangled symbol is (`#[no_mangle]`) and
//! because each function turns the raw handles Triton passes into [`crate::ffi`]'s wrappers,
//! whose one rule (a handle Triton gave, used while the call lasts) these calls keep. Every
//! body runs under [`crate::guarded`]: a panic becomes a `TRITONSERVER_Error` and never
//! unwinds into C.

#![allow(unsafe_code)]

use std::ptr;

use crate::execute;
use crate::ffi::{
    self, Instance, Model, RawBackend, RawInstance, RawModel, RawRequest, Request, TritonError,
};
use crate::instance::InstanceState;
use crate::model::ModelState;
use crate::{guarded, Code, Failure};

/// `nullptr` for success, else a new error Triton takes.
fn to_c(result: Result<(), Failure>) -> *mut TritonError {
    match result {
        Ok(()) => ptr::null_mut(),
        Err(failure) => {
            ffi::log_error(&format!("banter: {failure}"));
            ffi::new_error(&failure)
        }
    }
}

/// Checks that this Triton speaks the backend API this library was written against.
#[no_mangle]
pub extern "C" fn TRITONBACKEND_Initialize(_backend: *mut RawBackend) -> *mut TritonError {
    to_c(guarded(|| {
        let (major, minor) = ffi::api_version()?;
        if major != ffi::API_MAJOR || minor < ffi::API_MINOR {
            return Err(Failure::new(
                Code::Unsupported,
                format!(
                    "the banter backend needs Triton's backend API {}.{} or a later 1.x; this \
                     Triton has {major}.{minor}",
                    ffi::API_MAJOR,
                    ffi::API_MINOR
                ),
            ));
        }
        ffi::log_info(&format!(
            "banter: backend API {major}.{minor}, built for {}.{}",
            ffi::API_MAJOR,
            ffi::API_MINOR
        ));
        Ok(())
    }))
}

#[no_mangle]
pub extern "C" fn TRITONBACKEND_ModelInitialize(model: *mut RawModel) -> *mut TritonError {
    to_c(guarded(|| {
        // SAFETY: `model` is the handle Triton passes for the duration of this call.
        let model = unsafe { Model::from_raw(model) };
        model.set_state(ModelState::initialize(model)?)
    }))
}

#[no_mangle]
pub extern "C" fn TRITONBACKEND_ModelFinalize(model: *mut RawModel) -> *mut TritonError {
    to_c(guarded(|| {
        // SAFETY: `model` is the handle Triton passes for the duration of this call.
        let model = unsafe { Model::from_raw(model) };
        drop(model.take_state()?);
        Ok(())
    }))
}

/// Loads the instance's engine; Triton marks the model ready only after this returns.
#[no_mangle]
pub extern "C" fn TRITONBACKEND_ModelInstanceInitialize(
    instance: *mut RawInstance,
) -> *mut TritonError {
    to_c(guarded(|| {
        // SAFETY: `instance` is the handle Triton passes for the duration of this call.
        let instance = unsafe { Instance::from_raw(instance) };
        instance.set_state(InstanceState::initialize(instance)?)
    }))
}

#[no_mangle]
pub extern "C" fn TRITONBACKEND_ModelInstanceFinalize(
    instance: *mut RawInstance,
) -> *mut TritonError {
    to_c(guarded(|| {
        // SAFETY: `instance` is the handle Triton passes for the duration of this call.
        let instance = unsafe { Instance::from_raw(instance) };
        if let Some(state) = instance.take_state()? {
            state.finalize();
        }
        Ok(())
    }))
}

/// Starts every request's stream and returns; always succeeds once the requests are ours
/// (each failure is that request's error response).
#[no_mangle]
pub extern "C" fn TRITONBACKEND_ModelInstanceExecute(
    instance: *mut RawInstance,
    requests: *mut *mut RawRequest,
    request_count: u32,
) -> *mut TritonError {
    if requests.is_null() && request_count > 0 {
        return ffi::new_error(&Failure::internal("Execute without its requests"));
    }
    let raw: Vec<*mut RawRequest> = if request_count == 0 {
        Vec::new()
    } else {
        // SAFETY: Triton passes an array of `request_count` request pointers, readable for
        // this call; they are copied out before it returns.
        unsafe { std::slice::from_raw_parts(requests, request_count as usize) }.to_vec()
    };
    // SAFETY: `instance` is the handle Triton passes for the duration of this call, and each
    // request pointer is one of this call's requests, wrapped once.
    let (instance, requests) = unsafe {
        (
            Instance::from_raw(instance),
            raw.into_iter()
                .map(|r| Request::from_raw(r))
                .collect::<Vec<_>>(),
        )
    };
    // `execute` guards each request itself and releases every one; a panic outside those
    // guards would leave some unreleased, so it is logged, not returned as an error (Triton
    // would then take the released ones back too).
    if let Err(failure) = guarded(|| {
        execute::execute(instance, requests);
        Ok(())
    }) {
        ffi::log_error(&format!("banter: {failure}"));
    }
    ptr::null_mut()
}
