//! The engine's front door: load Kokoro once, then turn text into audio, whole or as a stream.
//!
//! Text is phonemized in one pass, then cut into *segments*, one Kokoro forward pass each
//! ([`plan_segments`]). The first segment is kept short — the first sentence, or its first
//! clause when the sentence is long — so that the first audio comes early; later segments pack
//! whole sentences up to [`PACK_PHONEMES`] for natural prosody and throughput.
//!
//! Segments and decoder windows: every `AdaIN` layer of Kokoro's decoder normalises over the
//! whole time axis of its input, so decoding a segment in windows changes the audio slightly
//! (the `streaming` tests measure it). The default [`ChunkPlan`] therefore decodes each segment
//! in one pass, exactly as the reference does, and `synthesize` is literally the concatenation
//! of the stream's chunks. [`Synthesizer::begin`] with [`ChunkPlan::streaming`] is what the
//! scheduler's interactive streams use, where the first audio matters more.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use candle_core::{Device, Tensor};

use crate::assets::ModelStore;
use crate::device::{DeviceChoice, DeviceError};
use crate::kokoro::model::{EncodeInput, Kokoro};
use crate::kokoro::stream::{ChunkPlan, SegmentDecoder};
use crate::phonemes::{self, Language, PhonemeError, Phonemizer, Vocab};
use crate::voice::{StockVoice, VoiceError, VoiceSpec, VoiceTable};

pub use crate::kokoro::config::SAMPLE_RATE;

/// Most phoneme ids Kokoro takes in one pass (512 with the two pads).
pub const MAX_PHONEMES: usize = 510;
/// Later segments pack whole sentences up to this many phoneme characters (about 20 s of speech).
pub const PACK_PHONEMES: usize = 250;
/// The first segment is at most this long (about 6 s): longer first sentences are cut at a
/// clause mark, else at a word boundary.
pub const FIRST_PHONEMES: usize = 80;
/// A first sentence longer than this (about 3 s) is cut at its earliest clause mark, so the
/// first audio, which costs what its length costs, comes sooner (`Well, …` stays whole: see
/// [`MIN_PIECE`]).
pub const FIRST_CLAUSE_ABOVE: usize = 40;
/// Neither piece of a cut first sentence is shorter than this (a lone word sounds clipped).
const MIN_PIECE: usize = 12;
/// Slowest and fastest speaking rate accepted (Kokoro's own limits).
pub const SPEED_RANGE: (f32, f32) = (0.5, 2.0);

/// Everything that can go wrong between text and audio.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("the text is empty; give some words to speak")]
    EmptyText,
    #[error("nothing to say: `{excerpt}` has no speakable symbols")]
    NothingToSay { excerpt: String },
    #[error("speed {value} is outside {}–{}; pick a value in that range", SPEED_RANGE.0, SPEED_RANGE.1)]
    Speed { value: f32 },
    #[error(transparent)]
    Voice(#[from] VoiceError),
    #[error(transparent)]
    Phonemes(#[from] PhonemeError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("model files are missing or incomplete in {dir}; run `banter models fetch`")]
    ModelMissing { dir: String },
    #[error("loading the model from {path}: {source}")]
    Load {
        path: String,
        source: candle_core::Error,
    },
    #[error("model inference failed: {0}")]
    Inference(#[from] candle_core::Error),
}

impl SynthError {
    /// True when the caller's input was at fault (exit status 2), false for internal faults.
    #[must_use]
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            Self::EmptyText
                | Self::NothingToSay { .. }
                | Self::Speed { .. }
                | Self::Voice(_)
                | Self::Device(_)
        )
    }
}

/// What to say and how.
#[derive(Debug, Clone)]
pub struct SpeechRequest {
    pub voice: VoiceSpec,
    pub speed: f32,
    /// Overrides the language implied by the voice name (e.g. an American voice reading French).
    pub language: Option<Language>,
}

impl SpeechRequest {
    pub fn new(voice: &str, speed: f32) -> Result<Self, SynthError> {
        Ok(Self {
            voice: VoiceSpec::parse(voice)?,
            speed,
            language: None,
        })
    }
}

/// One Kokoro pass: a sentence or a few, as phonemes and ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub phonemes: String,
    pub ids: Vec<u32>,
}

/// A piece of audio as the decoder finishes it.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// 24 kHz mono samples.
    pub samples: Vec<f32>,
    /// Index of the segment this chunk belongs to.
    pub segment: usize,
    /// Position of the first sample in the whole utterance.
    pub offset: usize,
    /// True for the last chunk of its segment.
    pub segment_end: bool,
}

/// The arithmetic of the decoder's convolutions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// f32 throughout, as the reference computes (and as the stage goldens check).
    F32,
    /// bfloat16 products with f32 sums where the CPU has AVX-512 BF16: about 1.8× faster
    /// decoding, 37–42 dB from the f32 audio and as close to the reference (see
    /// [`crate::kokoro::bf16`]). Elsewhere this is the same as `F32`.
    Bf16,
}

impl Precision {
    /// The variable that chooses: `BANTER_PRECISION=f32` keeps the decoder in f32.
    pub const ENV: &'static str = "BANTER_PRECISION";

    /// `Bf16` unless [`Self::ENV`] says `f32`.
    #[must_use]
    pub fn from_env() -> Self {
        match std::env::var(Self::ENV) {
            Ok(v) if v.trim().eq_ignore_ascii_case("f32") => Self::F32,
            _ => Self::Bf16,
        }
    }
}

/// The loaded model plus the voices it has used; shareable between threads.
pub struct Synthesizer {
    model: Arc<Kokoro>,
    device: Device,
    store: ModelStore,
    vocab: &'static Vocab,
    voices: Mutex<HashMap<String, Arc<VoiceTable>>>,
    plan: ChunkPlan,
}

impl Synthesizer {
    /// Loads the converted weights from `store` onto `device`.
    pub fn load(store: &ModelStore, device: DeviceChoice) -> Result<Self, SynthError> {
        if !store.is_ready() {
            return Err(SynthError::ModelMissing {
                dir: store.root().display().to_string(),
            });
        }
        let device = device.open()?;
        let path = store.kokoro_weights();
        let load_error = |source| SynthError::Load {
            path: path.display().to_string(),
            source,
        };
        let mut model = Kokoro::load(&path, &device).map_err(load_error)?;
        if Precision::from_env() == Precision::Bf16 {
            model.use_bf16().map_err(load_error)?;
        }
        Ok(Self {
            model: Arc::new(model),
            device,
            store: store.clone(),
            vocab: Vocab::kokoro(),
            voices: Mutex::new(HashMap::new()),
            plan: ChunkPlan::whole(),
        })
    }

    /// The device the model runs on.
    #[must_use]
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// How many segments' encoders the scheduler should batch in one pass: 8 on CUDA, where a
    /// batch costs about one launch sequence instead of `B`; 1 on the CPU, where a batch
    /// costs ~0.9–1.0× its members one by one (`banter bench batch`) and would only delay
    /// the first member's audio. `BANTER_ENCODER_BATCH=N` overrides (1–64).
    #[must_use]
    pub fn encoder_batch(&self) -> usize {
        const ENV: &str = "BANTER_ENCODER_BATCH";
        if let Ok(v) = std::env::var(ENV) {
            match v.trim().parse::<usize>() {
                Ok(n) if (1..=64).contains(&n) => return n,
                _ => tracing::warn!("{ENV}={v:?} is not a number from 1 to 64; ignored"),
            }
        }
        if self.device.is_cuda() {
            8
        } else {
            1
        }
    }

    /// Changes how segments are cut into decoder chunks (both `stream` and `synthesize`).
    pub fn set_chunk_plan(&mut self, plan: ChunkPlan) {
        self.plan = plan;
    }

    /// The names of the stock voices in the model store, sorted.
    #[must_use]
    pub fn stock_voices(&self) -> Vec<StockVoice> {
        stock_voices(&self.store)
    }

    /// Loads (once) the table of a stock voice or blend.
    pub fn voice(&self, spec: &VoiceSpec) -> Result<Arc<VoiceTable>, SynthError> {
        let key = spec.canonical();
        if let Some(t) = self.voices.lock().map_err(|_| poisoned())?.get(&key) {
            return Ok(Arc::clone(t));
        }
        let mut parts = Vec::with_capacity(spec.terms.len());
        for term in &spec.terms {
            let path = self.store.voice_table(&term.voice);
            if StockVoice::from_name(&term.voice).is_none() || !path.is_file() {
                let available = stock_voices(&self.store)
                    .into_iter()
                    .map(|v| v.name)
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(VoiceError::Unknown {
                    name: term.voice.clone(),
                    available,
                }
                .into());
            }
            parts.push((VoiceTable::read(&path)?, term.weight));
        }
        let table = Arc::new(VoiceTable::blend(&parts));
        self.voices
            .lock()
            .map_err(|_| poisoned())?
            .insert(key, Arc::clone(&table));
        Ok(table)
    }

    /// Makes `spec` render with `table` instead of the table its recipe would compute: a saved
    /// library voice (a blend or a matched voice) keeps the exact table it was saved with.
    /// Replaces any table loaded before under the same canonical spec.
    pub fn register_voice(&self, spec: &VoiceSpec, table: VoiceTable) -> Result<(), SynthError> {
        self.voices
            .lock()
            .map_err(|_| poisoned())?
            .insert(spec.canonical(), Arc::new(table));
        Ok(())
    }

    /// Phonemizes `text` and cuts it into segments.
    pub fn segments(
        &self,
        text: &str,
        request: &SpeechRequest,
    ) -> Result<Vec<Segment>, SynthError> {
        if text.trim().is_empty() {
            return Err(SynthError::EmptyText);
        }
        let language = request.language.unwrap_or_else(|| request.voice.language());
        let phonemes = Phonemizer::global()?.phonemize(&speakable_text(text), language)?;
        let segments = self.segments_from_phonemes(&phonemes);
        if segments.is_empty() {
            let excerpt: String = text.chars().take(40).collect();
            return Err(SynthError::NothingToSay { excerpt });
        }
        Ok(segments)
    }

    /// Cuts an already phonemized string into segments (see the module docs for the policy).
    #[must_use]
    pub fn segments_from_phonemes(&self, phonemes: &str) -> Vec<Segment> {
        plan_segments(phonemes)
            .into_iter()
            .filter_map(|p| {
                // Punctuation alone (`...`, `!!!`) is no speech: Kokoro would only breathe.
                if !p.chars().any(char::is_alphabetic) {
                    return None;
                }
                let ids = self.vocab.encode(&p);
                (!ids.is_empty()).then_some(Segment { phonemes: p, ids })
            })
            .collect()
    }

    /// One segment per sentence for episode rendering: `phonemes` is one sentence, kept whole
    /// (its own prosody, one Kokoro pass) unless it exceeds [`MAX_PHONEMES`], when it is split at
    /// clauses, then words. Empty when there is nothing to say.
    #[must_use]
    pub fn sentence_segments(&self, phonemes: &str) -> Vec<Segment> {
        let collapsed = phonemes.split_whitespace().collect::<Vec<_>>().join(" ");
        fit(&collapsed)
            .into_iter()
            .filter(|p| p.chars().any(char::is_alphabetic))
            .filter_map(|p| {
                let ids = self.vocab.encode(&p);
                (!ids.is_empty()).then_some(Segment { phonemes: p, ids })
            })
            .collect()
    }

    /// Starts a stream: call [`SpeechStream::next_chunk`] until it returns `None`.
    pub fn stream(
        &self,
        text: &str,
        request: &SpeechRequest,
    ) -> Result<SpeechStream<'_>, SynthError> {
        // Check the cheap things (speed, voice) before phonemizing a possibly long text.
        check_speed(request.speed)?;
        self.voice(&request.voice)?;
        let segments = self.segments(text, request)?;
        self.stream_segments(segments, request)
    }

    /// Streams already-made segments (phoneme input, or a caller's own segmentation).
    pub fn stream_segments(
        &self,
        segments: Vec<Segment>,
        request: &SpeechRequest,
    ) -> Result<SpeechStream<'_>, SynthError> {
        check_speed(request.speed)?;
        let voice = self.voice(&request.voice)?;
        Ok(SpeechStream {
            synth: self,
            voice,
            speed: request.speed,
            segments,
            next_segment: 0,
            current: None,
            offset: 0,
        })
    }

    /// Renders `text` whole. Same samples as concatenating the stream's chunks.
    pub fn synthesize(&self, text: &str, request: &SpeechRequest) -> Result<Vec<f32>, SynthError> {
        collect(self.stream(text, request)?)
    }

    /// Renders already-made segments whole (the stream's chunks, concatenated).
    pub fn render_segments(
        &self,
        segments: Vec<Segment>,
        request: &SpeechRequest,
    ) -> Result<Vec<f32>, SynthError> {
        collect(self.stream_segments(segments, request)?)
    }

    /// Encodes `segment` (everything before its first audio) and returns its decoder, which
    /// yields the audio in the windows of `plan`.
    pub fn begin(
        &self,
        segment: &Segment,
        request: &SpeechRequest,
        plan: ChunkPlan,
    ) -> Result<SegmentDecoder, SynthError> {
        check_speed(request.speed)?;
        let voice = self.voice(&request.voice)?;
        self.begin_with(&voice, segment, request.speed, plan)
    }

    /// [`Self::begin`] for several segments (of any requests) at once: their encoders run as
    /// one padded batch ([`crate::kokoro::model::KokoroEncoder::encode_batch`]), then each
    /// gets its decoder. One result per item, in order; an item's error is its own.
    pub fn begin_batch(
        &self,
        items: &[(&Segment, &SpeechRequest, ChunkPlan)],
    ) -> Vec<Result<SegmentDecoder, SynthError>> {
        let styles: Vec<Result<Tensor, SynthError>> = items
            .iter()
            .map(|(segment, request, _)| {
                check_speed(request.speed)?;
                let voice = self.voice(&request.voice)?;
                self.style(&voice, segment.ids.len())
            })
            .collect();
        let ready: Vec<usize> = (0..items.len()).filter(|&i| styles[i].is_ok()).collect();
        let inputs: Vec<EncodeInput<'_>> = ready
            .iter()
            .filter_map(|&i| {
                let style = styles[i].as_ref().ok()?;
                Some(EncodeInput {
                    tokens: &items[i].0.ids,
                    style,
                    speed: items[i].1.speed,
                })
            })
            .collect();
        let mut encoded = self.model.encoder().encode_batch(&inputs).into_iter();
        let mut out = Vec::with_capacity(items.len());
        for (i, style) in styles.into_iter().enumerate() {
            out.push(style.and_then(|style| {
                let prosody = encoded
                    .next()
                    .ok_or_else(|| {
                        SynthError::Inference(candle_core::Error::Msg(
                            "the batched encoder returned too few results".into(),
                        ))
                    })?
                    .map_err(|e| SynthError::Inference(candle_core::Error::Msg(e.to_string())))?;
                Ok(SegmentDecoder::from_prosody(
                    Arc::clone(&self.model),
                    &prosody,
                    &style,
                    items[i].2,
                )?)
            }));
        }
        out
    }

    fn begin_with(
        &self,
        voice: &VoiceTable,
        segment: &Segment,
        speed: f32,
        plan: ChunkPlan,
    ) -> Result<SegmentDecoder, SynthError> {
        let style = self.style(voice, segment.ids.len())?;
        Ok(SegmentDecoder::new(
            Arc::clone(&self.model),
            &segment.ids,
            &style,
            speed,
            plan,
        )?)
    }

    fn style(&self, voice: &VoiceTable, ids: usize) -> Result<Tensor, SynthError> {
        Ok(Tensor::from_slice(
            voice.style_for(ids),
            (1, crate::voice::STYLE_DIM),
            &self.device,
        )?)
    }
}

/// Text as espeak should see it: emoji and other pictographs dropped (espeak would read out their
/// names, "slightly smiling face"), control characters turned into spaces. Everything else is
/// left to the phonemizer, which matches kokoro-onnx.
#[must_use]
pub fn speakable_text(text: &str) -> String {
    text.chars()
        .filter(|&c| !is_pictograph(c))
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect()
}

fn is_pictograph(c: char) -> bool {
    matches!(u32::from(c),
        0x1F000..=0x1FAFF   // emoticons, pictographs, transport, flags' regional indicators, symbols
        | 0x2600..=0x27BF   // miscellaneous symbols, dingbats
        | 0x2B00..=0x2BFF   // arrows and stars used as emoji
        | 0xFE00..=0xFE0F   // variation selectors
        | 0x200D            // zero-width joiner (emoji sequences)
        | 0xE0020..=0xE007F // tag characters (flag sequences)
    )
}

fn poisoned() -> SynthError {
    SynthError::Inference(candle_core::Error::Msg("voice cache lock poisoned".into()))
}

fn check_speed(speed: f32) -> Result<(), SynthError> {
    if speed.is_finite() && (SPEED_RANGE.0..=SPEED_RANGE.1).contains(&speed) {
        Ok(())
    } else {
        Err(SynthError::Speed { value: speed })
    }
}

/// Stock voices present in the store, sorted by name.
#[must_use]
pub fn stock_voices(store: &ModelStore) -> Vec<StockVoice> {
    let mut voices: Vec<StockVoice> = std::fs::read_dir(store.voices_dir())
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let path = e.ok()?.path();
            if path.extension()? != "bin" {
                return None;
            }
            StockVoice::from_name(path.file_stem()?.to_str()?)
        })
        .collect();
    voices.sort_by(|a, b| a.name.cmp(&b.name));
    voices
}

/// Every chunk of `stream`, concatenated.
fn collect(mut stream: SpeechStream<'_>) -> Result<Vec<f32>, SynthError> {
    let mut out = Vec::new();
    while let Some(chunk) = stream.next_chunk()? {
        out.extend_from_slice(&chunk.samples);
    }
    Ok(out)
}

/// Splits a phoneme string into segment strings: a short first one, later ones packed sentences.
#[must_use]
pub fn plan_segments(phonemes: &str) -> Vec<String> {
    let collapsed = phonemes.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut sentences: Vec<String> = Vec::new();
    for sentence in split_sentences(&collapsed) {
        let sentence = sentence.trim();
        if sentence.is_empty() {
            continue;
        }
        if sentences.is_empty() && sentence.chars().count() > FIRST_CLAUSE_ABOVE {
            let (head, tail) = split_first(sentence, FIRST_PHONEMES);
            sentences.push(head.to_owned());
            if !tail.is_empty() {
                sentences.extend(fit(tail));
            }
        } else {
            sentences.extend(fit(sentence));
        }
    }
    let mut segments: Vec<String> = Vec::new();
    for sentence in sentences {
        if segments.len() > 1 {
            if let Some(last) = segments.last_mut() {
                if last.chars().count() + 1 + sentence.chars().count() <= PACK_PHONEMES {
                    last.push(' ');
                    last.push_str(&sentence);
                    continue;
                }
            }
        }
        segments.push(sentence);
    }
    segments
}

/// A sentence as one or more pieces of at most [`MAX_PHONEMES`].
fn fit(sentence: &str) -> Vec<String> {
    if sentence.chars().count() > MAX_PHONEMES {
        phonemes::split_phonemes(sentence, MAX_PHONEMES)
    } else {
        vec![sentence.to_owned()]
    }
}

/// Cuts a long first sentence after its earliest clause mark (`,;:—`) that leaves at least
/// [`MIN_PIECE`] characters on both sides within `max` characters. Without one, a sentence of
/// at most `max` stays whole (a cut mid-clause costs more in prosody than it saves in latency);
/// a longer one is cut after its last word within `max`, else at `max`. Returns (head, rest),
/// both trimmed; rest is empty when nothing was cut.
fn split_first(sentence: &str, max: usize) -> (&str, &str) {
    let chars = sentence.chars().count();
    let limit = sentence
        .char_indices()
        .nth(max)
        .map_or(sentence.len(), |(i, _)| i);
    let window = &sentence[..limit];
    let clause = window
        .char_indices()
        .enumerate()
        .filter(|&(_, (i, c))| {
            matches!(c, ',' | ';' | ':' | '—') && sentence[i + c.len_utf8()..].starts_with(' ')
        })
        .map(|(n, (i, c))| (n + 1, i + c.len_utf8()))
        .find(|&(n, _)| n >= MIN_PIECE && chars - n > MIN_PIECE)
        .map(|(_, end)| end);
    if clause.is_none() && chars <= max {
        return (sentence, "");
    }
    let cut = clause
        .or_else(|| window.rfind(' ').filter(|&i| i > 0))
        .unwrap_or(limit);
    (sentence[..cut].trim(), sentence[cut..].trim())
}

/// Sentence ends in phoneme space: `.`, `!`, `?` or `…` followed by a space.
fn split_sentences(phonemes: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = phonemes.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?' | '…') && chars.peek().is_some_and(|&(_, n)| n == ' ') {
            let end = i + c.len_utf8();
            out.push(&phonemes[start..end]);
            start = end;
        }
    }
    if start < phonemes.len() {
        out.push(&phonemes[start..]);
    }
    out
}

/// A stream being rendered: owns its position; the caller pulls chunks one by one.
pub struct SpeechStream<'a> {
    synth: &'a Synthesizer,
    voice: Arc<VoiceTable>,
    speed: f32,
    segments: Vec<Segment>,
    next_segment: usize,
    current: Option<(usize, SegmentDecoder)>,
    offset: usize,
}

impl SpeechStream<'_> {
    /// The segments this stream will speak.
    #[must_use]
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Renders the next chunk, or returns `None` when everything has been said.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>, SynthError> {
        loop {
            if let Some((index, decoder)) = &mut self.current {
                if let Some(samples) = decoder.next_chunk()? {
                    let segment = *index;
                    let segment_end = decoder.is_done();
                    let chunk = Chunk {
                        offset: self.offset,
                        samples,
                        segment,
                        segment_end,
                    };
                    self.offset += chunk.samples.len();
                    if segment_end {
                        self.current = None;
                    }
                    return Ok(Some(chunk));
                }
                self.current = None;
            }
            let Some(segment) = self.segments.get(self.next_segment) else {
                return Ok(None);
            };
            let decoder =
                self.synth
                    .begin_with(&self.voice, segment, self.speed, self.synth.plan)?;
            self.current = Some((self.next_segment, decoder));
            self.next_segment += 1;
        }
    }
}

impl Iterator for SpeechStream<'_> {
    type Item = Result<Chunk, SynthError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_chunk().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentence_is_alone_and_later_ones_are_packed() {
        let s = plan_segments("ə. bˈi. sˈiː! dˈiː? ˈiː");
        assert_eq!(s, vec!["ə.", "bˈi. sˈiː! dˈiː? ˈiː"]);
    }

    #[test]
    fn a_long_first_sentence_is_cut_at_a_clause_then_a_word() {
        let clause = format!("{}, {} {}.", "a".repeat(40), "b".repeat(30), "c".repeat(30));
        let s = plan_segments(&clause);
        assert_eq!(s[0], format!("{},", "a".repeat(40)));
        assert_eq!(s[1], format!("{} {}.", "b".repeat(30), "c".repeat(30)));
        let words = "wˈʌn ".repeat(40);
        let s = plan_segments(&words);
        assert!(
            s[0].chars().count() <= FIRST_PHONEMES && s[0].ends_with('n'),
            "{:?}",
            s[0]
        );
        assert_eq!(s.join(" ").split_whitespace().count(), 40);
    }

    #[test]
    fn a_first_sentence_is_cut_at_its_earliest_useful_clause() {
        // "wˈɛl," is too short to stand alone; the next clause is the cut.
        let sentence = format!(
            "wˈɛl, {}, {} {}.",
            "a".repeat(14),
            "b".repeat(20),
            "c".repeat(20)
        );
        let s = plan_segments(&sentence);
        assert_eq!(s[0], format!("wˈɛl, {},", "a".repeat(14)));
        // A medium sentence without a clause mark stays whole...
        let plain = format!("{} {} {}.", "a".repeat(20), "b".repeat(20), "c".repeat(20));
        assert_eq!(plan_segments(&plain), vec![plain.clone()]);
        // ...and so does a short one with a comma.
        let short = format!("{}, {}.", "a".repeat(15), "b".repeat(15));
        assert_eq!(plan_segments(&short), vec![short.clone()]);
        // A clause leaving a lone word behind is not a cut.
        let tail = format!("{}, ɐ wˈʌn.", "a".repeat(45));
        assert_eq!(plan_segments(&tail), vec![tail.clone()]);
    }

    #[test]
    fn long_sentences_are_split_under_the_limit() {
        let word = "həlˈoʊ ";
        let long: String = word.repeat(200);
        let segs = plan_segments(&long);
        assert!(segs.len() >= 3, "{}", segs.len());
        assert!(segs.iter().all(|s| s.chars().count() <= MAX_PHONEMES));
        let joined: String = segs.join(" ");
        assert_eq!(joined.split_whitespace().count(), 200);
    }

    #[test]
    fn packing_respects_the_pack_limit() {
        let sentence = format!("{}.", "a".repeat(70));
        let text = [sentence.as_str(); 9].join(" ");
        let segs = plan_segments(&text);
        assert_eq!(segs[0], sentence);
        assert!(segs.iter().all(|s| s.chars().count() <= PACK_PHONEMES));
        assert!(segs.len() < 9, "sentences after the first are packed");
        assert_eq!(
            segs.iter().map(|s| s.matches('.').count()).sum::<usize>(),
            9
        );
    }

    #[test]
    fn pictographs_and_controls_are_not_read_out() {
        assert_eq!(speakable_text("Hi 🙂👍🏽 there ✨\u{7}!"), "Hi  there  !");
        assert_eq!(speakable_text("café — naïve"), "café — naïve");
        assert_eq!(speakable_text("a\nb\tc"), "a\nb c");
    }

    #[test]
    fn empty_and_whitespace_plan_nothing() {
        assert!(plan_segments("").is_empty());
        assert!(plan_segments("   \n ").is_empty());
    }

    #[test]
    fn speed_limits() {
        assert!(check_speed(1.0).is_ok());
        assert!(check_speed(0.5).is_ok());
        assert!(check_speed(2.0).is_ok());
        for bad in [0.49, 2.01, f32::NAN, f32::INFINITY, -1.0] {
            assert!(matches!(check_speed(bad), Err(SynthError::Speed { .. })));
        }
    }
}
