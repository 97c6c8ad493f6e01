//! What a stream's consumer receives: audio with the durations that time its words, or the
//! typed error that ended it.

use std::sync::Arc;

use crate::speech::SynthError;

/// What a stream's consumer receives; the channel closing means the stream is complete.
#[derive(Debug)]
pub enum StreamEvent {
    /// 24 kHz mono audio: a chunk of segment `segment`; `segment_end` on its last chunk.
    Audio {
        samples: Vec<f32>,
        segment: usize,
        segment_end: bool,
        /// On a segment's first chunk: the frames (600 samples, 25 ms each) the model gave
        /// every token of the segment, the two pads included, so the consumer can tell when
        /// each word is spoken ([`crate::words`]). `None` on later chunks.
        durations: Option<Arc<[u32]>>,
    },
    /// The stream stopped with this error (after any audio already sent); the error keeps
    /// its kind, so an input error (a segment too long for the model) stays one.
    Failed(SynthError),
}

/// Audio and the frames the model gave every token of each segment that made it (pads
/// included), which say when each word is spoken ([`crate::words`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimedAudio {
    /// 24 kHz mono.
    pub samples: Vec<f32>,
    /// One entry per segment, in order.
    pub durations: Vec<Arc<[u32]>>,
}
