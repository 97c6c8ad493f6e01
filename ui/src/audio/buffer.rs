//! [`PlayBuffer`]: the studio's side of playback — the rendered audio, the transport controls,
//! and the feeder that keeps the device's ring topped up.
//!
//! Why it is built this way: the audio callback must never lock, allocate or wait, or the
//! listener hears a dropout. So the callback ([`super::Player`]) only pops fixed-size blocks from
//! a lock-free single-producer single-consumer ring (`rtrb`) and reads and writes a few atomics.
//! Everything else stays here, on the non-realtime side: the whole episode in a [`Chunks`] store
//! (the waveform, seeking back and replays need it), and the feeder, which copies from the
//! playhead into the ring. Whoever drives the device calls [`PlayBuffer::feed`] often: the cpal
//! backend's own thread, or the mock backend before each pull.
//!
//! Seek, clear, play and pause are one atomic word ([`Control`]): the playing bit, a generation
//! and the position the generation starts at. A seek or clear starts a new generation; every
//! block in the ring carries the generation it was cut for, so the callback drops stale blocks
//! and restarts at the new position. The callback never stores into that word except to clear
//! the playing bit at the end of the audio, and then only by compare-and-swap on the exact word
//! it saw, so a seek, clear or play can never be lost between its load and its store. The
//! callback publishes where it is (generation and position) in a second word; the playhead the
//! timeline shows comes from there.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::player::Player;
use super::store::Chunks;

/// Source samples in one ring block (about 11 ms at 24 kHz).
pub(crate) const BLOCK_SAMPLES: usize = 256;
/// Blocks in the ring: about a second of audio, so the feeder can be late without a dropout.
const RING_BLOCKS: usize = 96;

const GEN_BITS: u32 = 23;
const GEN_MASK: u32 = (1 << GEN_BITS) - 1;
/// Positions are stored in the 40 bits above the generation (over a year of 24 kHz audio).
const POS_SHIFT: u32 = GEN_BITS + 1;
const POS_MAX: usize = (1 << (64 - POS_SHIFT)) - 1;

/// The transport in one word: playing, the generation, and where that generation starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Control {
    pub(crate) playing: bool,
    pub(crate) gen: u32,
    pub(crate) pos: usize,
}

impl Control {
    pub(crate) fn pack(self) -> u64 {
        ((self.pos.min(POS_MAX) as u64) << POS_SHIFT)
            | (u64::from(self.gen & GEN_MASK) << 1)
            | u64::from(self.playing)
    }

    pub(crate) fn unpack(word: u64) -> Self {
        Self {
            playing: word & 1 == 1,
            gen: ((word >> 1) as u32) & GEN_MASK,
            pos: (word >> POS_SHIFT) as usize,
        }
    }

    pub(crate) fn load(atom: &AtomicU64) -> Self {
        Self::unpack(atom.load(Ordering::Acquire))
    }

    /// The next generation, starting at `pos`.
    fn restart_at(self, pos: usize) -> Self {
        Self {
            gen: self.gen.wrapping_add(1) & GEN_MASK,
            pos,
            ..self
        }
    }
}

/// A block of source audio in the ring, tagged with the generation it was cut for.
#[derive(Clone, Copy)]
pub(crate) struct Block {
    pub(crate) gen: u32,
    pub(crate) len: usize,
    pub(crate) samples: [f32; BLOCK_SAMPLES],
}

/// The atomics the studio and the callback share.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// [`Control`], packed. The studio changes it; the callback only clears `playing` (by CAS).
    pub(crate) control: AtomicU64,
    /// What the device has reached: a [`Control`] with the callback's generation and position.
    pub(crate) heard: AtomicU64,
    /// Samples rendered so far.
    pub(crate) len: AtomicUsize,
    /// No more audio will come: reaching the end stops playback.
    pub(crate) complete: AtomicBool,
    /// Which [`Player`] is live: connecting a new one silences the one before.
    pub(crate) live: AtomicU64,
}

/// The ring's producing end and where it has got to.
struct Feeder {
    producer: rtrb::Producer<Block>,
    gen: u32,
    next: usize,
}

/// Audio the studio has rendered for playback, and where the listener is in it.
pub struct PlayBuffer {
    store: Mutex<Chunks>,
    feeder: Mutex<Option<Feeder>>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for PlayBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlayBuffer")
            .field("len", &self.len())
            .field("position", &self.position())
            .field("playing", &self.is_playing())
            .finish_non_exhaustive()
    }
}

impl Default for PlayBuffer {
    fn default() -> Self {
        Self {
            store: Mutex::default(),
            feeder: Mutex::new(None),
            shared: Arc::default(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl PlayBuffer {
    #[must_use]
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Appends rendered audio (the UI thread, as chunks arrive). Never copies what is there.
    pub fn append(&self, samples: &[f32]) {
        let mut store = lock(&self.store);
        store.append(samples);
        self.shared.len.store(store.len(), Ordering::Release);
    }

    /// Forgets all audio and rewinds (playing or paused stays as it was).
    pub fn clear(&self) {
        // Under the store's lock, so the feeder never tags old audio with the new generation.
        let mut store = lock(&self.store);
        store.clear();
        self.shared.len.store(0, Ordering::Release);
        self.shared.complete.store(false, Ordering::Release);
        self.update(|c| c.restart_at(0));
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.shared.len.load(Ordering::Acquire)
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The playhead: the next sample the device plays (a seek shows at once, before the device
    /// has caught up with it).
    #[must_use]
    pub fn position(&self) -> usize {
        let control = Control::load(&self.shared.control);
        let heard = Control::load(&self.shared.heard);
        if heard.gen == control.gen {
            heard.pos
        } else {
            control.pos
        }
    }

    /// Moves the playhead (clamped to the audio there is).
    pub fn seek(&self, sample: usize) {
        let to = sample.min(self.len());
        self.update(|c| c.restart_at(to));
    }

    #[must_use]
    pub fn is_playing(&self) -> bool {
        Control::load(&self.shared.control).playing
    }

    pub fn set_playing(&self, playing: bool) {
        self.update(|c| Control { playing, ..c });
    }

    pub fn set_complete(&self, complete: bool) {
        self.shared.complete.store(complete, Ordering::Release);
    }

    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.shared.complete.load(Ordering::Acquire)
    }

    /// Changes the control word atomically: a CAS loop, so a concurrent stop at the end of the
    /// audio (the callback's only store) and this change both take effect.
    fn update(&self, change: impl Fn(Control) -> Control) {
        let _ = self
            .shared
            .control
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                Some(change(Control::unpack(w)).pack())
            });
    }

    /// A new ring and the [`Player`] that drains it, for a device's callback. Playback goes on
    /// from the playhead; any player connected before falls silent.
    #[must_use]
    pub fn connect(&self) -> Player {
        let (producer, consumer) = rtrb::RingBuffer::new(RING_BLOCKS);
        let mut feeder = lock(&self.feeder);
        let id = self.shared.live.fetch_add(1, Ordering::AcqRel) + 1;
        // A new generation from the playhead: the new ring and player both start there.
        let at = self.position();
        self.update(|c| c.restart_at(at));
        let control = Control::load(&self.shared.control);
        *feeder = Some(Feeder {
            producer,
            gen: control.gen,
            next: control.pos,
        });
        Player::new(consumer, Arc::clone(&self.shared), id, control)
    }

    /// Tops up the ring from the playhead (never on the callback). Returns the samples pushed.
    pub fn feed(&self) -> usize {
        let mut feeder = lock(&self.feeder);
        let Some(f) = feeder.as_mut() else {
            return 0;
        };
        let store = lock(&self.store);
        // Read under the store's lock: `clear` changes both under it.
        let control = Control::load(&self.shared.control);
        if control.gen != f.gen {
            f.gen = control.gen;
            f.next = control.pos;
        }
        let mut pushed = 0;
        while f.next < store.len() && !f.producer.is_full() {
            let mut block = Block {
                gen: f.gen,
                len: 0,
                samples: [0.0; BLOCK_SAMPLES],
            };
            block.len = store.copy_to(f.next, &mut block.samples);
            f.next += block.len;
            pushed += block.len;
            if f.producer.push(block).is_err() {
                break;
            }
        }
        pushed
    }
}
