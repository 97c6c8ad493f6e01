//! Playback: a shared, growing buffer of 24 kHz audio and the [`AudioOut`] backends that play it.
//!
//! The studio appends chunks to a [`PlayBuffer`] as the scheduler delivers them; the output
//! device reads from it at its own pace. The playhead is the buffer's read position, so the
//! timeline and the sound card agree without messages, and seeking inside audio that is already
//! rendered is a single store. The device callback never blocks: it `try_lock`s the samples and
//! plays silence for that period if the UI thread happens to be appending at that instant, and it
//! never allocates.
//!
//! Backends: [`CpalOut`] (the default output device through cpal, resampling 24 kHz to the
//! device's rate by linear interpolation), and [`MockOut`] for tests, which records exactly what
//! it was given, like kira's mock backend: the test pulls samples as a callback would.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use engine::synth::SAMPLE_RATE;

/// Why audio cannot be played.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AudioOutError {
    #[error("no audio output device was found ({host})")]
    NoDevice { host: String },
    #[error("the audio device {device} cannot be opened: {reason}")]
    Open { device: String, reason: String },
}

/// Audio the studio has rendered for playback, and where the listener is in it.
#[derive(Debug, Default)]
pub struct PlayBuffer {
    samples: Mutex<Vec<f32>>,
    /// Read position in samples (the playhead).
    pos: AtomicUsize,
    /// Samples appended so far (readable without the lock).
    len: AtomicUsize,
    playing: AtomicBool,
    /// No more audio will come: reaching the end stops playback.
    complete: AtomicBool,
}

impl PlayBuffer {
    #[must_use]
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Appends rendered audio (called on the UI thread as chunks arrive).
    pub fn append(&self, samples: &[f32]) {
        let mut buf = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        buf.extend_from_slice(samples);
        self.len.store(buf.len(), Ordering::Release);
    }

    /// Forgets all audio and rewinds.
    pub fn clear(&self) {
        let mut buf = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        buf.clear();
        self.len.store(0, Ordering::Release);
        self.pos.store(0, Ordering::Release);
        self.complete.store(false, Ordering::Release);
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[must_use]
    pub fn position(&self) -> usize {
        self.pos.load(Ordering::Acquire)
    }

    pub fn seek(&self, sample: usize) {
        self.pos.store(sample.min(self.len()), Ordering::Release);
    }

    #[must_use]
    pub fn is_playing(&self) -> bool {
        self.playing.load(Ordering::Acquire)
    }

    pub fn set_playing(&self, playing: bool) {
        self.playing.store(playing, Ordering::Release);
    }

    pub fn set_complete(&self, complete: bool) {
        self.complete.store(complete, Ordering::Release);
    }

    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.complete.load(Ordering::Acquire)
    }

    /// Copies up to `out.len()` samples from the playhead into `out` and advances; what is not
    /// available yet (or could not be read without waiting) is silence. Returns how many real
    /// samples were written. Never blocks, never allocates.
    pub fn read(&self, out: &mut [f32]) -> usize {
        out.fill(0.0);
        if !self.is_playing() {
            return 0;
        }
        let Ok(buf) = self.samples.try_lock() else {
            return 0;
        };
        let pos = self.pos.load(Ordering::Acquire).min(buf.len());
        let n = out.len().min(buf.len() - pos);
        out[..n].copy_from_slice(&buf[pos..pos + n]);
        drop(buf);
        self.pos.store(pos + n, Ordering::Release);
        if n == 0 && self.is_complete() {
            self.set_playing(false);
        }
        n
    }
}

/// Something that plays a [`PlayBuffer`].
pub trait AudioOut {
    /// The device, in words (for the status bar).
    fn describe(&self) -> String;
    /// Starts pulling from `buffer` (playback itself is gated by [`PlayBuffer::set_playing`]).
    fn attach(&mut self, buffer: Arc<PlayBuffer>) -> Result<(), AudioOutError>;
}

/// No device: the studio still renders and exports, and says why it cannot play.
#[derive(Debug)]
pub struct NoAudio(pub AudioOutError);

impl AudioOut for NoAudio {
    fn describe(&self) -> String {
        format!("no playback: {}", self.0)
    }

    fn attach(&mut self, _buffer: Arc<PlayBuffer>) -> Result<(), AudioOutError> {
        Err(self.0.clone())
    }
}

/// A backend for tests: it records every sample it pulls.
#[derive(Debug, Clone, Default)]
pub struct MockOut {
    inner: Arc<Mutex<MockState>>,
    /// The device name it reports (`None`: "mock output (tests)").
    name: Option<String>,
}

#[derive(Debug, Default)]
struct MockState {
    buffer: Option<Arc<PlayBuffer>>,
    received: Vec<f32>,
}

impl MockOut {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The same recorder under another device name (the mock device picker).
    #[must_use]
    pub fn named(&self, name: &str) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            name: Some(name.to_owned()),
        }
    }

    /// Pulls up to `frames` samples as a device callback would; returns how many were real.
    pub fn pull(&self, frames: usize) -> usize {
        let mut st = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(buffer) = st.buffer.clone() else {
            return 0;
        };
        let mut out = vec![0.0; frames];
        let n = buffer.read(&mut out);
        st.received.extend_from_slice(&out[..n]);
        n
    }

    /// Every real sample pulled so far.
    #[must_use]
    pub fn received(&self) -> Vec<f32> {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .received
            .clone()
    }
}

impl AudioOut for MockOut {
    fn describe(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| "mock output (tests)".into())
    }

    fn attach(&mut self, buffer: Arc<PlayBuffer>) -> Result<(), AudioOutError> {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .buffer = Some(buffer);
        Ok(())
    }
}

/// The default output device through cpal.
pub struct CpalOut {
    device: cpal::Device,
    name: String,
    stream: Option<cpal::Stream>,
}

impl CpalOut {
    /// Opens the default output device, or says why there is none.
    pub fn open_default() -> Result<Self, AudioOutError> {
        use cpal::traits::{DeviceTrait, HostTrait};
        let host = cpal::default_host();
        let device = host
            .default_output_device()
            .ok_or_else(|| AudioOutError::NoDevice {
                host: host.id().name().to_owned(),
            })?;
        let name = device
            .description()
            .map_or_else(|_| "default output".to_owned(), |d| d.name().to_owned());
        Ok(Self {
            device,
            name,
            stream: None,
        })
    }

    /// The output devices' names, the default first.
    pub fn output_names() -> Result<Vec<String>, AudioOutError> {
        use cpal::traits::HostTrait;
        let host = cpal::default_host();
        let default = host.default_output_device().map(|d| device_name(&d));
        let devices = host.output_devices().map_err(|e| AudioOutError::Open {
            device: "output devices".into(),
            reason: e.to_string(),
        })?;
        let mut names: Vec<String> = default.iter().cloned().collect();
        for d in devices {
            let n = device_name(&d);
            if !names.contains(&n) {
                names.push(n);
            }
        }
        Ok(names)
    }

    /// Opens the output device called `name`.
    pub fn open_named(name: &str) -> Result<Self, AudioOutError> {
        use cpal::traits::HostTrait;
        let host = cpal::default_host();
        let devices = host.output_devices().map_err(|e| AudioOutError::Open {
            device: name.to_owned(),
            reason: e.to_string(),
        })?;
        for device in devices {
            if device_name(&device) == name {
                return Ok(Self {
                    device,
                    name: name.to_owned(),
                    stream: None,
                });
            }
        }
        Err(AudioOutError::Open {
            device: name.to_owned(),
            reason: "it is no longer connected".into(),
        })
    }
}

fn device_name(device: &cpal::Device) -> String {
    use cpal::traits::DeviceTrait;
    device
        .description()
        .map_or_else(|_| "unnamed output".to_owned(), |d| d.name().to_owned())
}

impl AudioOut for CpalOut {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn attach(&mut self, buffer: Arc<PlayBuffer>) -> Result<(), AudioOutError> {
        use cpal::traits::{DeviceTrait, StreamTrait};
        let open_err = |reason: String| AudioOutError::Open {
            device: self.name.clone(),
            reason,
        };
        let config = self
            .device
            .default_output_config()
            .map_err(|e| open_err(e.to_string()))?;
        let channels = usize::from(config.channels()).max(1);
        let rate = config.sample_rate();
        let mut resampler = Linear::new(SAMPLE_RATE, rate);
        let stream_config: cpal::StreamConfig = config.into();
        let stream = self
            .device
            .build_output_stream(
                stream_config,
                move |data: &mut [f32], _: &cpal::OutputCallbackInfo| {
                    resampler.fill(&buffer, data, channels);
                },
                |e| tracing::warn!("audio output: {e}"),
                None,
            )
            .map_err(|e| open_err(e.to_string()))?;
        stream.play().map_err(|e| open_err(e.to_string()))?;
        self.stream = Some(stream);
        Ok(())
    }
}

/// Linear-interpolation rate conversion inside the callback, with a fixed scratch block so the
/// callback never allocates. Good enough for monitoring; exports use the engine's resampler.
struct Linear {
    step: f64,
    frac: f64,
    prev: f32,
    next: f32,
    scratch: [f32; 512],
    have: usize,
    at: usize,
}

impl Linear {
    fn new(from: u32, to: u32) -> Self {
        Self {
            step: f64::from(from) / f64::from(to.max(1)),
            frac: 0.0,
            prev: 0.0,
            next: 0.0,
            scratch: [0.0; 512],
            have: 0,
            at: 0,
        }
    }

    fn source_sample(&mut self, buffer: &PlayBuffer) -> f32 {
        if self.at >= self.have {
            self.have = buffer.read(&mut self.scratch).max(1);
            self.at = 0;
        }
        let s = self.scratch[self.at];
        self.at += 1;
        s
    }

    fn fill(&mut self, buffer: &PlayBuffer, data: &mut [f32], channels: usize) {
        for frame in data.chunks_mut(channels) {
            while self.frac >= 1.0 {
                self.prev = self.next;
                self.next = self.source_sample(buffer);
                self.frac -= 1.0;
            }
            let s = self.prev + (self.next - self.prev) * self.frac as f32;
            frame.fill(s);
            self.frac += self.step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::float_cmp)] // the samples are copied, not computed: exact equality is right
    fn reads_from_the_playhead_and_stops_at_the_end_when_complete() {
        let buf = PlayBuffer::new();
        buf.append(&[1.0, 2.0, 3.0]);
        let mut out = [9.0; 2];
        assert_eq!(buf.read(&mut out), 0, "not playing yet");
        assert_eq!(out, [0.0, 0.0]);
        buf.set_playing(true);
        assert_eq!(buf.read(&mut out), 2);
        assert_eq!(out, [1.0, 2.0]);
        assert_eq!(buf.read(&mut out), 1);
        assert_eq!(out, [3.0, 0.0]);
        assert!(buf.is_playing(), "more audio may come");
        buf.set_complete(true);
        assert_eq!(buf.read(&mut out), 0);
        assert!(!buf.is_playing());
        buf.seek(1);
        assert_eq!(buf.position(), 1);
        buf.seek(99);
        assert_eq!(buf.position(), 3, "seek is clamped to what exists");
    }

    #[test]
    fn mock_records_what_it_pulled() {
        let buf = PlayBuffer::new();
        let mut mock = MockOut::new();
        mock.attach(Arc::clone(&buf)).expect("mock attaches");
        buf.append(&[0.5; 10]);
        buf.set_playing(true);
        assert_eq!(mock.pull(4), 4);
        assert_eq!(mock.pull(100), 6);
        assert_eq!(mock.received().len(), 10);
    }

    #[test]
    fn linear_resampler_doubles_the_rate() {
        let buf = PlayBuffer::new();
        buf.append(&[0.0, 1.0, 0.0, 1.0]);
        buf.set_playing(true);
        let mut r = Linear::new(24_000, 48_000);
        let mut data = [0.0f32; 8];
        r.fill(&buf, &mut data, 1);
        // Interpolated half-way points appear between source samples.
        assert!(data.iter().any(|&s| (s - 0.5).abs() < 1e-6), "{data:?}");
    }
}
