//! One model instance: one [`Engine`] (one model thread, one scheduler) and the streams it is
//! answering.
//!
//! The engine is loaded synchronously in `ModelInstanceInitialize`, so Triton reports the model
//! ready (`/v2/health/ready`) only once Kokoro is in memory. Streams run on threads of their
//! own after `Execute` returns; the instance counts them, and its finalization asks them to stop
//! and waits until they have, because their response factories belong to the model Triton is
//! about to tear down.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use engine::device::DeviceChoice;
use engine::Engine;

use crate::ffi::{self, kind, Instance};
use crate::Failure;

/// What Triton keeps for an instance between calls.
pub struct InstanceState {
    pub engine: Engine,
    pub streams: Arc<Streams>,
}

/// The instance's running streams.
#[derive(Default)]
pub struct Streams {
    running: Mutex<usize>,
    ended: Condvar,
    closing: AtomicBool,
}

impl Streams {
    /// Counts a stream in; [`StreamTicket`] counts it out when dropped.
    pub fn enter(self: &Arc<Self>) -> StreamTicket {
        *self.running.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        StreamTicket(Arc::clone(self))
    }

    /// Whether the instance is being unloaded (streams stop between chunks).
    #[must_use]
    pub fn closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// Asks every stream to stop and waits for them (at most `limit`); how many are left.
    pub fn close(&self, limit: Duration) -> usize {
        self.closing.store(true, Ordering::Release);
        let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        let (running, _) = self
            .ended
            .wait_timeout_while(running, limit, |n| *n > 0)
            .unwrap_or_else(PoisonError::into_inner);
        *running
    }
}

/// A running stream's place in [`Streams`].
pub struct StreamTicket(Arc<Streams>);

impl StreamTicket {
    #[must_use]
    pub fn streams(&self) -> &Streams {
        &self.0
    }
}

impl Drop for StreamTicket {
    fn drop(&mut self) {
        let mut running = self
            .0
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *running = running.saturating_sub(1);
        self.0.ended.notify_all();
    }
}

/// Where an instance group of `kind` on `device_id` runs.
pub fn device_for(group_kind: u32, device_id: i32) -> Result<DeviceChoice, Failure> {
    match group_kind {
        kind::CPU => Ok(DeviceChoice::Cpu),
        kind::GPU => {
            if !cfg!(feature = "cuda") {
                return Err(Failure::new(
                    ffi::Code::Unsupported,
                    "this banter backend was built without CUDA: use `kind: KIND_CPU`, or \
                     rebuild it with `cargo build -p triton-backend --release --features cuda`",
                ));
            }
            let index = usize::try_from(device_id).map_err(|_| {
                Failure::invalid(format!("GPU instance with device id {device_id}"))
            })?;
            Ok(DeviceChoice::Cuda(index))
        }
        kind::AUTO | kind::MODEL => Ok(DeviceChoice::Auto),
        other => Err(Failure::invalid(format!(
            "instance group kind {other} is not one banter runs on"
        ))),
    }
}

impl InstanceState {
    /// Loads the instance's engine (blocking until Kokoro is loaded).
    pub fn initialize(instance: Instance) -> Result<Box<Self>, Failure> {
        let model = instance.model()?.state()?;
        let (group_kind, device_id) = instance.kind_and_device()?;
        let device = device_for(group_kind, device_id)?;
        let engine = Engine::load(&model.store, device).map_err(|e| {
            let code = if e.is_input_error() {
                ffi::Code::InvalidArg
            } else {
                ffi::Code::Internal
            };
            Failure::new(code, format!("loading Kokoro on {device}: {e}"))
        })?;
        ffi::log_info(&format!(
            "banter: instance loaded on {}",
            engine.device_name()
        ));
        Ok(Box::new(Self {
            engine,
            streams: Arc::new(Streams::default()),
        }))
    }

    /// Stops the instance's streams (waiting for them) before the engine is dropped.
    pub fn finalize(self) {
        let left = self.streams.close(Duration::from_secs(30));
        if left > 0 {
            ffi::log_error(&format!(
                "banter: {left} streams still running after 30 s at unload"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_kinds_map_to_devices() {
        assert_eq!(device_for(kind::CPU, 0).unwrap(), DeviceChoice::Cpu);
        assert_eq!(device_for(kind::AUTO, 0).unwrap(), DeviceChoice::Auto);
        let gpu = device_for(kind::GPU, 1);
        if cfg!(feature = "cuda") {
            assert_eq!(gpu.unwrap(), DeviceChoice::Cuda(1));
        } else {
            let e = gpu.unwrap_err();
            assert!(
                e.message.contains("KIND_CPU") && e.message.contains("cuda"),
                "{e}"
            );
        }
        assert!(device_for(9, 0).is_err());
    }

    #[test]
    fn close_waits_for_streams_and_tells_them_to_stop() {
        let streams = Arc::new(Streams::default());
        let ticket = streams.enter();
        assert!(!ticket.streams().closing());
        let s = Arc::clone(&streams);
        let closer = std::thread::Builder::new()
            .name("closer".to_owned())
            .spawn(move || s.close(Duration::from_secs(5)))
            .unwrap();
        while !ticket.streams().closing() {
            std::thread::yield_now();
        }
        drop(ticket);
        assert_eq!(closer.join().unwrap(), 0);
        assert_eq!(streams.close(Duration::from_millis(1)), 0);
    }
}
