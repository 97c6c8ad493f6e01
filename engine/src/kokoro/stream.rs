//! Decoding one segment: encode once, then run the generator over one or more windows.
//!
//! A segment is encoded once (durations, F0/N, the decoder body and the harmonic source need the
//! whole segment and are cheap). The generator — nearly all of the work — can then run over
//! windows of decoder frames (one frame = 300 samples = 12.5 ms), each padded with `context`
//! frames of its neighbours so the convolutions see what they would see in one pass.
//!
//! But every `AdaIN` layer normalises over the whole time axis of what it is given, so a window's
//! statistics are its own, not the segment's: windowed output is *not* the reference audio (the
//! `streaming` tests measure SNR 2–4 dB against one pass, yet 332 dB with full context, which
//! shows the slicing itself is exact). [`ChunkPlan::whole`], the default, decodes a segment in one
//! window; the engine gets early audio from short first segments instead
//! ([`crate::synth::plan_segments`]). [`ChunkPlan::windowed`] stays for callers who accept the
//! approximation for lower latency inside very long segments.

use candle_core::{Tensor, D};

use super::model::Kokoro;

/// Samples per decoder frame (the generator's input rate: 2 per predicted duration frame).
pub const SAMPLES_PER_FRAME: usize = 300;
/// Spectrum frames (`har`, `conv_post`) per decoder frame.
const SPEC_PER_FRAME: usize = 60;

/// How a segment's decoder frames are cut into windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkPlan {
    /// Frames in the first window (time to first audio).
    pub first: usize,
    /// Frames in every later window (throughput).
    pub rest: usize,
    /// Frames of neighbouring context on each side of a window.
    pub context: usize,
    /// Segments with at most this many frames are decoded in a single window.
    pub whole_below: usize,
}

impl Default for ChunkPlan {
    fn default() -> Self {
        Self::whole()
    }
}

impl ChunkPlan {
    /// Windows of 0.5 s first, then 2 s, with 0.3 s of context: approximate (see module docs).
    #[must_use]
    pub fn windowed() -> Self {
        Self {
            first: 40,
            rest: 160,
            context: 24,
            whole_below: 0,
        }
    }

    /// One window per segment: exactly the reference computation, no streaming inside a segment.
    #[must_use]
    pub fn whole() -> Self {
        Self {
            first: usize::MAX,
            rest: usize::MAX,
            context: 0,
            whole_below: usize::MAX,
        }
    }

    /// The `[start, end)` frame ranges of the windows for a segment of `frames` decoder frames.
    #[must_use]
    pub fn windows(&self, frames: usize) -> Vec<(usize, usize)> {
        if frames <= self.whole_below || frames == 0 {
            return vec![(0, frames)];
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut size = self.first.max(1);
        while start < frames {
            let mut end = start.saturating_add(size).min(frames);
            // Never leave a sliver: a last window shorter than the context joins this one.
            if frames - end < self.context.max(8) {
                end = frames;
            }
            out.push((start, end));
            start = end;
            size = self.rest.max(1);
        }
        out
    }
}

/// A segment being decoded: its encoded features and where the next window starts.
pub struct SegmentDecoder<'m> {
    model: &'m Kokoro,
    /// Decoder output `[1, 512, L]` (the generator's input).
    body: Tensor,
    /// Source spectrum `[1, 22, 60L + 1]`.
    har: Tensor,
    /// Acoustic style `[1, 128]`.
    style: Tensor,
    windows: Vec<(usize, usize)>,
    next: usize,
    context: usize,
}

impl<'m> SegmentDecoder<'m> {
    /// Encodes the segment (everything but the generator) and plans its windows.
    pub fn new(
        model: &'m Kokoro,
        ids: &[u32],
        style: &Tensor,
        speed: f32,
        plan: ChunkPlan,
    ) -> candle_core::Result<Self> {
        let prosody = model
            .encoder()
            .encode(ids, style, speed)
            .map_err(|e| candle_core::Error::Msg(e.to_string()))?;
        let acoustic = style.narrow(D::Minus1, 0, model.style_dim())?;
        let decoder = model.decoder();
        let body = decoder
            .body(&prosody.asr, &prosody.f0, &prosody.n, &acoustic)
            .map_err(|e| candle_core::Error::Msg(e.to_string()))?;
        let generator = decoder.generator();
        let har = generator.source_spectrum(&generator.harmonic_source(&prosody.f0)?)?;
        let frames = body.dim(D::Minus1)?;
        Ok(Self {
            model,
            body,
            har,
            style: acoustic,
            windows: plan.windows(frames),
            next: 0,
            context: plan.context,
        })
    }

    /// Decoder frames in this segment (each is [`SAMPLES_PER_FRAME`] samples).
    #[must_use]
    pub fn frames(&self) -> usize {
        self.windows.last().map_or(0, |w| w.1)
    }

    /// True when every window has been decoded.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.next >= self.windows.len()
    }

    /// Decodes the next window; `None` when the segment is finished.
    pub fn next_chunk(&mut self) -> candle_core::Result<Option<Vec<f32>>> {
        let Some(&(start, end)) = self.windows.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let frames = self.frames();
        let lo = start.saturating_sub(self.context);
        let hi = end.saturating_add(self.context).min(frames);
        let x = self.body.narrow(D::Minus1, lo, hi - lo)?;
        let har = self.har.narrow(
            D::Minus1,
            lo * SPEC_PER_FRAME,
            (hi - lo) * SPEC_PER_FRAME + 1,
        )?;
        let generator = self.model.decoder().generator();
        let audio = generator
            .istft(&generator.body(&x, &har, &self.style)?)?
            .flatten_all()?;
        let keep = audio.narrow(
            0,
            (start - lo) * SAMPLES_PER_FRAME,
            (end - start) * SAMPLES_PER_FRAME,
        )?;
        Ok(Some(keep.to_vec1::<f32>()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cover_every_frame_once() {
        let plan = ChunkPlan {
            first: 40,
            rest: 160,
            context: 24,
            whole_below: 0,
        };
        for frames in [1, 39, 40, 41, 64, 65, 200, 201, 777, 5000] {
            let w = plan.windows(frames);
            assert_eq!(w[0].0, 0);
            assert_eq!(w.last().unwrap().1, frames);
            assert!(w.windows(2).all(|p| p[0].1 == p[1].0), "{frames}: {w:?}");
            assert!(w.iter().all(|&(a, b)| b > a));
        }
        assert_eq!(plan.windows(300)[0], (0, 40));
        assert_eq!(ChunkPlan::whole().windows(300), vec![(0, 300)]);
        let short = ChunkPlan {
            whole_below: 100,
            ..plan
        };
        assert_eq!(short.windows(100), vec![(0, 100)]);
        assert_eq!(short.windows(101)[0], (0, 40));
    }
}
