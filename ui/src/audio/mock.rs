//! [`MockOut`]: a backend for tests that records exactly what it plays, like kira's mock
//! backend. The test pulls samples as a device callback would; each pull first feeds the ring
//! (what the cpal backend's thread does), so a test sees everything that is rendered.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use super::{AudioOut, AudioOutError, DeviceNews, PlayBuffer, Player};

/// A backend for tests: it records every sample it pulls.
#[derive(Clone, Default)]
pub struct MockOut {
    inner: Arc<Mutex<MockState>>,
    /// The device name it reports (`None`: "mock output (tests)").
    name: Option<String>,
}

impl std::fmt::Debug for MockOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockOut")
            .field("name", &self.describe())
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct MockState {
    link: Option<(Arc<PlayBuffer>, Player)>,
    received: Vec<f32>,
    news: VecDeque<DeviceNews>,
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
        let MockState { link, received, .. } = &mut *st;
        let Some((buffer, player)) = link.as_mut() else {
            return 0;
        };
        let mut out = vec![0.0; frames];
        let n = pull_into(buffer, player, &mut out);
        received.extend_from_slice(&out[..n]);
        n
    }

    /// Reports `news` to the studio as a real device would (a device that went away).
    pub fn report(&self, news: DeviceNews) {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .news
            .push_back(news);
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

/// Feeds and reads until `out` is full or nothing more comes (more than the ring holds may be
/// asked for at once); returns the real samples.
pub(crate) fn pull_into(buffer: &PlayBuffer, player: &mut Player, out: &mut [f32]) -> usize {
    // Two empty reads in a row: the first may only have dropped blocks a seek made stale.
    let (mut n, mut empty) = (0, 0);
    while n < out.len() && empty < 2 {
        buffer.feed();
        let k = player.read(&mut out[n..]);
        empty = if k == 0 { empty + 1 } else { 0 };
        n += k;
    }
    n
}

impl AudioOut for MockOut {
    fn describe(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| "mock output (tests)".into())
    }

    fn attach(&mut self, buffer: Arc<PlayBuffer>) -> Result<(), AudioOutError> {
        let player = buffer.connect();
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .link = Some((buffer, player));
        Ok(())
    }

    fn news(&mut self) -> Option<DeviceNews> {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .news
            .pop_front()
    }
}
