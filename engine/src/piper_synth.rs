//! Piper voices on the model thread: their VITS models, loaded when first spoken, through the
//! one model interface (`scheduler::model`).
//!
//! A segment begins with [`Vits::encode`] (text encoder, durations, the prior's sample: cheap,
//! and it says how long the sentence is). Then, for a file, one scheduling step decodes it
//! whole (flow and HiFi-GAN); for a listener who waits, it is decoded in windows, the first as
//! short as Kokoro's first window and each later one twice the last, each with
//! [`DECODE_CONTEXT`] frames of its neighbours, which makes a window's samples the whole
//! decode's (the flow and the decoder have no statistic over time). The audio is resampled
//! from the voice's rate to the engine's 24 kHz as it comes, so a Piper line joins a Kokoro
//! episode on one timeline and streams like one. The model file is hashed when it is loaded and must
//! still be the file the voice was added with: a replaced or moved file is an error naming it,
//! never another voice speaking.
//!
//! Costs are reported in Kokoro's decoder frames of the same audio length (12.5 ms), so the
//! scheduler's deadlines and prices stay in one unit across families.

use std::sync::Arc;

use candle_core::Device;
use vits::model::{Noise, Prior, Vits, DECODE_CONTEXT};

use crate::audio::resample::Resampler;
use crate::scheduler::SegmentJob;
use crate::speech::{check_speed, Segment, SpeechRequest, SynthError, SAMPLE_RATE};
use crate::voice::{file_sha256, PiperVoice, VoiceBook, VoiceError};

/// Kokoro decoder frames per second of audio (the scheduler's unit of work).
const FRAMES_PER_SECOND: f64 = SAMPLE_RATE as f64 / 300.0;
/// Models kept loaded at once; the least recently used goes first.
const LOADED_MODELS: usize = 6;
/// The seed of every sentence's noise: the same text in the same voice is the same audio.
const SEED: u64 = 0x5049_5045_5221;

/// The Piper models loaded on the model thread, by the model file's sha256.
pub(crate) struct PiperModels {
    voices: Arc<VoiceBook>,
    device: Device,
    loaded: std::cell::RefCell<Vec<(String, Arc<Vits>)>>,
}

impl PiperModels {
    pub(crate) fn new(voices: Arc<VoiceBook>, device: Device) -> Self {
        Self {
            voices,
            device,
            loaded: std::cell::RefCell::new(Vec::new()),
        }
    }

    fn model(&self, voice: &PiperVoice) -> Result<Arc<Vits>, SynthError> {
        let mut loaded = self.loaded.borrow_mut();
        if let Some(i) = loaded.iter().position(|(sha, _)| *sha == voice.sha256) {
            let entry = loaded.remove(i);
            let model = Arc::clone(&entry.1);
            loaded.push(entry);
            return Ok(model);
        }
        let sha = file_sha256(&voice.onnx).map_err(|e| match e {
            VoiceError::Io(source) => SynthError::Voice(VoiceError::PiperFile {
                name: voice.name.clone(),
                path: voice.onnx.clone(),
                reason: source.to_string(),
            }),
            other => SynthError::Voice(other),
        })?;
        if sha != voice.sha256 {
            return Err(SynthError::Voice(VoiceError::PiperFile {
                name: voice.name.clone(),
                path: voice.onnx.clone(),
                reason: "the file changed since the voice was added (its sha256 differs); add it again if the new file is the voice you want".to_owned(),
            }));
        }
        let model = Vits::read(&voice.onnx, &self.device).map_err(|e| {
            SynthError::Voice(VoiceError::PiperFile {
                name: voice.name.clone(),
                path: voice.onnx.clone(),
                reason: e.to_string(),
            })
        })?;
        let model = Arc::new(model);
        if loaded.len() >= LOADED_MODELS {
            loaded.remove(0);
        }
        loaded.push((sha, Arc::clone(&model)));
        Ok(model)
    }

    /// Encodes `segment` in the Piper voice the request names.
    pub(crate) fn begin(
        &self,
        segment: &Segment,
        request: &SpeechRequest,
        first_window: Option<usize>,
    ) -> Result<Box<dyn SegmentJob>, SynthError> {
        check_speed(request.speed)?;
        let key = request.voice.piper_key().ok_or_else(|| {
            SynthError::Voice(VoiceError::UnknownPiper {
                key: request.voice.canonical(),
            })
        })?;
        let voice = self.voices.piper(key)?;
        let model = self.model(&voice)?;
        let ids: Vec<i64> = segment.ids.iter().map(|&i| i64::from(i)).collect();
        let mut scales = voice.config.inference;
        scales.length_scale /= request.speed;
        let prior = model
            .encode(&ids, scales, voice.speaker, &Noise::Seeded(SEED))
            .map_err(|e| piper_error(&voice, &e))?;
        let rate = voice.config.sample_rate;
        let frames = prior.frames();
        // Kokoro frames (the scheduler's unit) per frame of this voice.
        let scale = (model.hop() as f64 / f64::from(rate)) * FRAMES_PER_SECOND;
        let first = first_window.map(|kokoro| ((kokoro as f64 / scale).ceil() as usize).max(1));
        let resampler = if rate == SAMPLE_RATE {
            None
        } else {
            Some(Resampler::new(rate, SAMPLE_RATE).map_err(|e| resample_error(rate, &e))?)
        };
        let durations = kokoro_layout(
            &segment.phonemes,
            &voice,
            &prior.durations,
            model.hop() as f64 / f64::from(rate),
        )
        .map(Arc::from);
        Ok(Box::new(PiperJob {
            model,
            voice,
            durations,
            prior,
            next: 0,
            window: first.unwrap_or(frames).min(frames),
            windowed: first.is_some(),
            scale,
            resampler,
        }))
    }
}

fn piper_error(voice: &PiperVoice, e: &vits::VitsError) -> SynthError {
    match e {
        vits::VitsError::Candle(c) => SynthError::Inference(candle_core::Error::Msg(format!(
            "Piper voice {}: {c}",
            voice.name
        ))),
        other => SynthError::Voice(VoiceError::PiperFile {
            name: voice.name.clone(),
            path: voice.onnx.clone(),
            reason: other.to_string(),
        }),
    }
}

/// One Piper sentence: encoded, decoded window by window (or whole).
struct PiperJob {
    model: Arc<Vits>,
    voice: Arc<PiperVoice>,
    /// The sentence's durations in Kokoro's layout for word timing, until taken.
    durations: Option<Arc<[u32]>>,
    prior: Prior,
    /// The first frame not decoded yet.
    next: usize,
    /// Frames in the next window.
    window: usize,
    /// Decoding in windows (a listener waits) rather than whole.
    windowed: bool,
    /// Kokoro frames per frame of this voice.
    scale: f64,
    /// The voice's rate to 24 kHz, carried across windows (`None` at 24 kHz).
    resampler: Option<Resampler>,
}

impl PiperJob {
    /// The frames the next step decodes, context included, in this voice's frames.
    fn next_cost(&self) -> usize {
        let frames = self.prior.frames();
        if self.next >= frames {
            return 0;
        }
        if !self.windowed {
            return frames;
        }
        let end = (self.next + self.window).min(frames);
        let lo = self.next.saturating_sub(DECODE_CONTEXT);
        let hi = (end + DECODE_CONTEXT).min(frames);
        hi - lo
    }
}

impl SegmentJob for PiperJob {
    fn advance(&mut self) -> Result<Option<Vec<f32>>, SynthError> {
        let frames = self.prior.frames();
        if self.next >= frames {
            return Ok(None);
        }
        let end = if self.windowed {
            (self.next + self.window).min(frames)
        } else {
            frames
        };
        let audio = if self.next == 0 && end == frames {
            self.model.decode(&self.prior)
        } else {
            self.model
                .decode_window(&self.prior, self.next..end, DECODE_CONTEXT)
        }
        .map_err(|e| piper_error(&self.voice, &e))?;
        if !audio.iter().all(|x| x.is_finite()) {
            return Err(SynthError::DamagedModel {
                path: self.voice.onnx.display().to_string(),
            });
        }
        self.next = end;
        self.window = self.window.saturating_mul(2).max(1);
        let rate = self.voice.config.sample_rate;
        let Some(resampler) = self.resampler.as_mut() else {
            return Ok(Some(audio));
        };
        let mut out = Vec::with_capacity(audio.len() * SAMPLE_RATE as usize / rate as usize + 64);
        resampler
            .process(&audio, &mut out)
            .map_err(|e| resample_error(rate, &e))?;
        if self.next >= frames {
            resampler
                .flush(&mut out)
                .map_err(|e| resample_error(rate, &e))?;
        }
        Ok(Some(out))
    }

    fn is_done(&self) -> bool {
        self.next >= self.prior.frames()
    }

    fn next_step_frames(&self) -> f64 {
        self.next_cost() as f64 * self.scale
    }

    fn frames_to_audio(&self) -> f64 {
        self.next_step_frames()
    }

    fn frames(&self) -> usize {
        (self.prior.frames() as f64 * self.scale).ceil() as usize
    }

    fn take_durations(&mut self) -> Option<Arc<[u32]>> {
        self.durations.take()
    }
}

/// Seconds of one of Kokoro's duration frames (600 samples at 24 kHz), the unit word timing
/// counts in ([`crate::words`]).
const KOKORO_FRAME_SECS: f64 = crate::words::SAMPLES_PER_FRAME as f64 / SAMPLE_RATE as f64;

/// A Piper sentence's durations (frames per id: `^ _ p1 _ p2 _ … $`) in the layout Kokoro's
/// word timing reads: one duration per phoneme character Kokoro's vocabulary knows, between a
/// leading and a trailing pad, in Kokoro's 25 ms frames. A phoneme's time includes the pad
/// after it; characters Kokoro's vocabulary lacks (and phonemes the voice has no ids for) give
/// their time to the next known character. Rounded on the running total, so no error adds up.
/// `None` when the ids and the durations do not line up (no word timing rather than wrong).
fn kokoro_layout(
    phonemes: &str,
    voice: &PiperVoice,
    durations: &[u32],
    seconds_per_frame: f64,
) -> Option<Vec<u32>> {
    let map = &voice.config.phoneme_id_map;
    let count = |symbol: &str| map.get(symbol).map_or(0, Vec::len);
    let (bos, pad, eos) = (count("^"), count("_"), count("$"));
    let list = crate::segments::piper_phoneme_list(phonemes, voice);
    let frames = |range: std::ops::Range<usize>| -> Option<f64> {
        Some(f64::from(durations.get(range)?.iter().sum::<u32>()) * seconds_per_frame)
    };
    let mut at = bos + pad;
    let lead = frames(0..at)?;
    // Seconds of each character of `phonemes`.
    let mut per_char: Vec<f64> = Vec::with_capacity(phonemes.len());
    for phoneme in &list {
        let n = count(phoneme);
        let secs = if n == 0 {
            0.0
        } else {
            let s = frames(at..at + n + pad)?;
            at += n + pad;
            s
        };
        for (i, _) in phoneme.chars().enumerate() {
            per_char.push(if i == 0 { secs } else { 0.0 });
        }
    }
    if at + eos != durations.len() {
        return None;
    }
    let tail = frames(at..durations.len())?;
    let vocab = crate::phonemes::Vocab::kokoro();
    let mut seconds = vec![lead];
    let mut carry = 0.0;
    for (c, secs) in phonemes.chars().zip(per_char) {
        carry += secs;
        if vocab.contains(c) {
            seconds.push(carry);
            carry = 0.0;
        }
    }
    seconds.push(carry + tail);
    let mut out = Vec::with_capacity(seconds.len());
    let (mut total, mut placed) = (0.0f64, 0i64);
    for s in seconds {
        total += s;
        let now = (total / KOKORO_FRAME_SECS).round() as i64;
        out.push(u32::try_from(now - placed).unwrap_or(0));
        placed = now;
    }
    Some(out)
}

fn resample_error(rate: u32, e: &crate::audio::AudioError) -> SynthError {
    SynthError::Inference(candle_core::Error::Msg(format!(
        "resampling {rate} Hz to {SAMPLE_RATE} Hz: {e}"
    )))
}

/// True when the request names a Piper voice ([`crate::families`] routes it here).
pub(crate) fn is_piper(request: &SpeechRequest) -> bool {
    request.voice.piper_key().is_some()
}
