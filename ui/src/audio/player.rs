//! [`Player`]: the audio callback's end of playback. It runs on the device's realtime thread, so
//! it only pops blocks from the lock-free ring and loads and stores atomics: no lock, no
//! allocation, no waiting. What it does with the transport word is explained in
//! [`super::buffer`].

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::buffer::{Block, Control, Shared};

/// Pulls 24 kHz mono samples for a device callback (made by [`super::PlayBuffer::connect`]).
pub struct Player {
    consumer: rtrb::Consumer<Block>,
    shared: Arc<Shared>,
    id: u64,
    /// The generation being played and the position of the next sample in it.
    gen: u32,
    pos: usize,
    /// How far into the block at the head of the ring.
    at: usize,
}

impl Player {
    pub(crate) fn new(
        consumer: rtrb::Consumer<Block>,
        shared: Arc<Shared>,
        id: u64,
        start: Control,
    ) -> Self {
        Self {
            consumer,
            shared,
            id,
            gen: start.gen,
            pos: start.pos,
            at: 0,
        }
    }

    /// The position of the next sample this player reads (tests hold it to what it played).
    #[cfg(test)]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Fills `out` from the playhead and advances it; what is not there yet (or everything,
    /// while paused) is silence. Returns how many real samples were written. Never blocks,
    /// never allocates.
    pub fn read(&mut self, out: &mut [f32]) -> usize {
        out.fill(0.0);
        if self.shared.live.load(Ordering::Acquire) != self.id {
            return 0;
        }
        let control = Control::load(&self.shared.control);
        if control.gen != self.gen {
            // A seek or clear: start over where it points; older blocks are dropped below.
            self.gen = control.gen;
            self.pos = control.pos;
            self.at = 0;
        }
        let mut n = 0;
        while let Ok(block) = self.consumer.peek() {
            if block.gen != self.gen {
                if Control::load(&self.shared.control).gen == block.gen {
                    // Cut for a seek made since `control` was loaded: the next call adopts it.
                    break;
                }
                let _ = self.consumer.pop();
                continue;
            }
            if !control.playing || n == out.len() {
                break;
            }
            let k = (block.len - self.at).min(out.len() - n);
            out[n..n + k].copy_from_slice(&block.samples[self.at..self.at + k]);
            n += k;
            self.at += k;
            if self.at == block.len {
                let _ = self.consumer.pop();
                self.at = 0;
            }
        }
        self.pos += n;
        self.shared.heard.store(
            Control {
                playing: false,
                gen: self.gen,
                pos: self.pos,
            }
            .pack(),
            Ordering::Release,
        );
        if control.playing
            && n < out.len()
            && self.shared.complete.load(Ordering::Acquire)
            && self.pos >= self.shared.len.load(Ordering::Acquire)
        {
            // The end: stop, unless the studio changed anything since `control` was loaded.
            let stopped = Control {
                playing: false,
                ..control
            };
            let _ = self.shared.control.compare_exchange(
                control.pack(),
                stopped.pack(),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
        }
        n
    }
}
