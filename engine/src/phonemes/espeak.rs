//! The one place Banter calls espeak-ng's C API.
//!
//! espeak-ng keeps all its state in C globals (data path, current voice and translator, output
//! buffers) and none of it is thread-safe, so the library must be initialised once per process
//! and used by one thread at a time. [`Espeak::global`] does the initialisation exactly once and
//! hands out a `&'static Mutex<Espeak>`; every FFI call goes through `&mut Espeak`, i.e. through
//! that mutex. Nothing else in Banter may call `espeak_rs_sys`.
//!
//! The calls mirror phonemizer 3.4's `EspeakWrapper` as kokoro-onnx uses it: IPA output with `_`
//! between phonemes, UTF-8 input, the text fed clause by clause to `espeak_TextToPhonemes`.
//! [`Espeak::clauses_with_terminators`] is piper-tts's variant, which also reports how each
//! clause ended; it is built from espeak's internal functions (see [`internal`]).

// FFI into espeak-ng needs `unsafe`; it is confined to this module and each block says why it
// is sound.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use espeak_rs_sys as sys;

use super::PhonemeError;

/// espeak keeps the data path in `char path_home[160]` and appends file names to it.
const MAX_DATA_PATH: usize = 120;

/// `espeak_TextToPhonemes` phoneme mode: IPA (bit 1) with `_` as phoneme separator
/// (bits 8..23), exactly phonemizer's `ord("_") << 8 | 0x02`.
const PHONEME_MODE: c_int = ((b'_' as c_int) << 8) | 0x02;

/// Handle to the process-wide espeak-ng instance; only reachable through its mutex.
#[derive(Debug)]
pub(super) struct Espeak {
    data_dir: PathBuf,
    /// The voice espeak has loaded, to skip reloading it (and its dictionary) on every call.
    voice: Option<String>,
}

static INSTANCE: OnceLock<Mutex<Espeak>> = OnceLock::new();
/// Serialises initialisation attempts (a failed one may be retried).
static INIT: Mutex<()> = Mutex::new(());

impl Espeak {
    /// The process-wide instance, initialising espeak-ng with `data_dir()` on first use.
    pub(super) fn global(
        data_dir: impl FnOnce() -> Result<PathBuf, PhonemeError>,
    ) -> Result<&'static Mutex<Espeak>, PhonemeError> {
        if let Some(instance) = INSTANCE.get() {
            return Ok(instance);
        }
        let _guard = INIT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(instance) = INSTANCE.get() {
            return Ok(instance);
        }
        let data_dir = data_dir()?;
        initialize(&data_dir)?;
        Ok(INSTANCE.get_or_init(|| {
            Mutex::new(Espeak {
                data_dir,
                voice: None,
            })
        }))
    }

    /// The espeak-ng data directory in use.
    pub(super) fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Selects a voice by its identifier (e.g. `gmw/en-US`) or name (`en-us`), as phonemizer's
    /// `set_voice` and piper-tts's `espeak_SetVoiceByName`.
    pub(super) fn set_voice(&mut self, voice: &str) -> Result<(), (u32, String)> {
        if self.voice.as_deref() == Some(voice) {
            return Ok(());
        }
        let name = CString::new(voice).map_err(|_| (0, "voice name contains NUL".to_owned()))?;
        self.voice = None;
        // SAFETY: espeak is initialised (an `Espeak` exists only after `initialize` succeeded),
        // we hold `&mut self` so no other thread is inside espeak, and `name` is a valid
        // NUL-terminated string that outlives the call (espeak copies what it keeps).
        let status = unsafe { sys::espeak_ng_SetVoiceByName(name.as_ptr()) };
        if status != sys::espeak_ng_STATUS_ENS_OK {
            return Err((status, status_message(status)));
        }
        self.voice = Some(voice.to_owned());
        Ok(())
    }

    /// phonemizer's `EspeakWrapper.text_to_phonemes(text)` without tie: the IPA of every clause
    /// espeak finds in `text`, phonemes separated by `_`, words by spaces, clauses joined by a
    /// space. Like the C side of ctypes, the text ends at its first NUL. A word too long for
    /// espeak's buffers is cut first (`guard::cut_long_words`).
    #[expect(
        clippy::unused_self,
        reason = "`&mut self` is the proof of exclusive access to espeak's global state"
    )]
    pub(super) fn text_to_phonemes(&mut self, text: &str) -> String {
        let text = super::guard::cut_long_words(text.split('\0').next().unwrap_or_default());
        let text = text.as_ref();
        let Ok(c_text) = CString::new(text) else {
            return String::new(); // unreachable: NULs were cut off above
        };
        let mut clauses: Vec<String> = Vec::new();
        let mut ptr: *const c_void = c_text.as_ptr().cast();
        // Each call consumes at least one character; the bound only guards against a stuck loop.
        let max_calls = text.len() + 2;
        for _ in 0..max_calls {
            if ptr.is_null() {
                break;
            }
            let before = ptr;
            // SAFETY: espeak is initialised and exclusively ours (`&mut self`). `ptr` points
            // into `c_text`, a NUL-terminated UTF-8 buffer alive for this whole loop, or (after
            // the first call) into espeak's own decoder buffer, which espeak keeps alive until
            // the next call; espeak advances it or sets it to NULL at the end of the text.
            let phonemes = unsafe {
                sys::espeak_TextToPhonemes(
                    &raw mut ptr,
                    sys::espeakCHARS_UTF8 as c_int,
                    PHONEME_MODE,
                )
            };
            if !phonemes.is_null() {
                // SAFETY: a non-NULL result is a NUL-terminated string in espeak's static
                // phoneme buffer, valid until the next espeak call; we copy it out right away.
                let bytes = unsafe { CStr::from_ptr(phonemes) }.to_bytes();
                if !bytes.is_empty() {
                    clauses.push(String::from_utf8_lossy(bytes).into_owned());
                }
            } else if ptr == before {
                tracing::warn!("espeak could not decode the text; rest of the clause dropped");
                break;
            }
        }
        clauses.join(" ")
    }

    /// piper-tts 1.8.0's `espeakbridge.get_phonemes(text)` before it names the terminators: for
    /// every clause espeak finds in `text`, its IPA (no separator) and the clause flags espeak
    /// ended it with (see [`clause`]), exactly as `espeak_TextToPhonemesWithTerminator(&text,
    /// espeakCHARS_AUTO, espeakPHONEMES_IPA, &terminator)` returns them, one call per clause until
    /// espeak has consumed the text. Empty clauses are kept (piper keeps their terminators), and
    /// an empty text still gives its one (end-of-text) clause. Like the C side of Python's `s`
    /// argument, the text ends at its first NUL.
    ///
    /// The text is decoded with `espeakCHARS_UTF8` where piper asks for `espeakCHARS_AUTO`; the
    /// two read valid UTF-8 (every `&str`) identically: the automatic decoder falls back to the
    /// voice's 8-bit code page only on an invalid sequence (a literal U+FFFD reads as 0x1A in
    /// both, `encoding.c`).
    ///
    /// Needs a voice ([`Espeak::set_voice`]); without one it returns no clauses.
    pub(super) fn clauses_with_terminators(&mut self, text: &str) -> Vec<(String, u32)> {
        let text = super::guard::cut_long_words(text.split('\0').next().unwrap_or_default());
        let text = text.as_ref();
        let mut clauses = Vec::new();
        if self.voice.is_none() {
            return clauses;
        }
        let Ok(c_text) = CString::new(text) else {
            return clauses; // unreachable: NULs were cut off above
        };
        let mut ptr: *const c_void = c_text.as_ptr().cast();
        // Each call consumes at least one character; the bound only guards against a stuck loop.
        let max_calls = text.len() + 2;
        for _ in 0..max_calls {
            if ptr.is_null() {
                break;
            }
            let before = ptr;
            // SAFETY: espeak is initialised and a voice is loaded (so `translator` is non-NULL),
            // and we hold `&mut self`, so no other thread is inside espeak. This is the body of
            // espeak's own `espeak_TextToPhonemes` (speech.c) with `TranslateClauseWithTerminator`
            // for `TranslateClause`, which is what `espeak_TextToPhonemesWithTerminator` is in
            // later espeak-ng releases. `ptr` points into `c_text`, a NUL-terminated UTF-8 buffer
            // alive for this whole loop, or (after the first call) into the decoder's copy of it,
            // which espeak keeps alive until the next decode; `terminator` is a valid out-pointer.
            let (phonemes, terminator) =
                unsafe { internal::text_to_phonemes_with_terminator(&mut ptr) };
            if let Some(phonemes) = phonemes {
                clauses.push((phonemes, terminator));
            } else if ptr == before {
                tracing::warn!("espeak could not decode the text; rest of the clause dropped");
                break;
            }
        }
        clauses
    }
}

/// espeak's clause flags (`translate.h`), as [`Espeak::clauses_with_terminators`] reports them;
/// the low 12 bits of a clause kind are its pause in units of 10 ms (`0x28` is 400 ms).
pub(super) mod clause {
    /// `CLAUSE_INTONATION_FULL_STOP`.
    pub const INTONATION_FULL_STOP: u32 = 0x0000_0000;
    /// `CLAUSE_INTONATION_COMMA`.
    pub const INTONATION_COMMA: u32 = 0x0000_1000;
    /// `CLAUSE_INTONATION_QUESTION`.
    pub const INTONATION_QUESTION: u32 = 0x0000_2000;
    /// `CLAUSE_INTONATION_EXCLAMATION`.
    pub const INTONATION_EXCLAMATION: u32 = 0x0000_3000;
    /// `CLAUSE_TYPE_CLAUSE`.
    pub const TYPE_CLAUSE: u32 = 0x0004_0000;
    /// `CLAUSE_TYPE_SENTENCE`: the clause ends a sentence.
    pub const TYPE_SENTENCE: u32 = 0x0008_0000;
    /// `CLAUSE_PERIOD`.
    pub const PERIOD: u32 = 0x28 | INTONATION_FULL_STOP | TYPE_SENTENCE;
    /// `CLAUSE_COMMA`.
    pub const COMMA: u32 = 0x14 | INTONATION_COMMA | TYPE_CLAUSE;
    /// `CLAUSE_QUESTION`.
    pub const QUESTION: u32 = 0x28 | INTONATION_QUESTION | TYPE_SENTENCE;
    /// `CLAUSE_EXCLAMATION`.
    pub const EXCLAMATION: u32 = 0x2d | INTONATION_EXCLAMATION | TYPE_SENTENCE;
    /// `CLAUSE_COLON`.
    pub const COLON: u32 = 0x1e | INTONATION_FULL_STOP | TYPE_CLAUSE;
    /// `CLAUSE_SEMICOLON`.
    pub const SEMICOLON: u32 = 0x1e | INTONATION_COMMA | TYPE_CLAUSE;
}

/// espeak-ng internals that `espeak_TextToPhonemesWithTerminator` is made of.
///
/// espeak-rs-sys 0.2.0 builds espeak-ng 1.52, which predates that function, but links the
/// static library whose non-static functions and globals it needs; they are declared here by
/// hand from `translate.h`, `readclause.c`, `encoding.h` and `dictionary.h` of that source.
mod internal {
    use std::ffi::{c_char, c_int, c_void, CStr};

    /// `espeakCHARS_UTF8` (`speak_lib.h`).
    const CHARS_UTF8: c_int = 1;
    /// `ESPEAKNG_ENCODING_UTF_8` (`encoding.h`); ignored with `espeakCHARS_UTF8`.
    const ENCODING_UTF_8: c_int = 19;
    /// `espeakPHONEMES_IPA` with no separator, as piper asks for.
    const PHONEMES_IPA: c_int = 0x02;
    /// `ENS_OK`.
    const STATUS_OK: u32 = 0;

    #[allow(non_upper_case_globals)]
    extern "C" {
        /// `espeak_ng_TEXT_DECODER *p_decoder` (readclause.c), created on first use.
        static mut p_decoder: *mut c_void;
        /// `Translator *translator` (translate.c), the current voice's translator.
        static translator: *mut c_void;
        fn create_text_decoder() -> *mut c_void;
        fn text_decoder_decode_string_multibyte(
            decoder: *mut c_void,
            input: *const c_void,
            encoding: c_int,
            flags: c_int,
        ) -> u32;
        fn text_decoder_get_buffer(decoder: *mut c_void) -> *const c_void;
        fn TranslateClauseWithTerminator(
            tr: *mut c_void,
            tone_out: *mut c_int,
            voice_change: *mut *mut c_char,
            terminator_out: *mut c_int,
        );
        fn GetTranslatedPhonemeString(phoneme_mode: c_int) -> *const c_char;
    }

    /// `espeak_TextToPhonemesWithTerminator(textptr, espeakCHARS_UTF8, espeakPHONEMES_IPA,
    /// &terminator)`: the phonemes of the next clause (`None` where espeak could not decode the
    /// text) and its terminator flags; `*textptr` is advanced past the clause, or set to NULL at
    /// the end of the text.
    ///
    /// # Safety
    ///
    /// espeak must be initialised with a voice loaded, no other thread may be inside espeak, and
    /// `*textptr` must point to a NUL-terminated UTF-8 string that stays alive for the call.
    pub(super) unsafe fn text_to_phonemes_with_terminator(
        textptr: &mut *const c_void,
    ) -> (Option<String>, u32) {
        // SAFETY: the caller has exclusive access to espeak's globals, which only espeak and
        // this function touch; reading and writing the pointer copies no reference.
        let decoder = unsafe {
            if p_decoder.is_null() {
                p_decoder = create_text_decoder();
            }
            p_decoder
        };
        // SAFETY: as above; a NULL `translator` means no voice is loaded.
        let tr = unsafe { translator };
        if decoder.is_null() || tr.is_null() {
            return (None, 0);
        }
        // SAFETY: `decoder` is espeak's live decoder and `*textptr` a NUL-terminated string
        // (caller's guarantee); the decoder only keeps pointers into it until the next decode.
        let status = unsafe {
            text_decoder_decode_string_multibyte(decoder, *textptr, ENCODING_UTF_8, CHARS_UTF8)
        };
        if status != STATUS_OK {
            return (None, 0);
        }
        let mut terminator: c_int = 0;
        // SAFETY: a voice's translator and a decoder loaded with the text, exactly as
        // `espeak_TextToPhonemes` calls `TranslateClause`; NULL tone and voice-change
        // out-pointers are allowed, and `terminator` is a valid `int` out-pointer.
        unsafe {
            TranslateClauseWithTerminator(
                tr,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &raw mut terminator,
            );
        }
        // SAFETY: `decoder` is live; the result is NULL at the end of the text or points into
        // the string the decoder was given, which is still alive.
        *textptr = unsafe { text_decoder_get_buffer(decoder) };
        // SAFETY: reads the phonemes of the clause just translated into espeak's static buffer.
        let phonemes = unsafe { GetTranslatedPhonemeString(PHONEMES_IPA) };
        if phonemes.is_null() {
            return (Some(String::new()), terminator as u32);
        }
        // SAFETY: a non-NULL result is a NUL-terminated string in espeak's static phoneme
        // buffer, valid until the next espeak call; it is copied out right away.
        let bytes = unsafe { CStr::from_ptr(phonemes) }.to_bytes();
        (
            Some(String::from_utf8_lossy(bytes).into_owned()),
            terminator as u32,
        )
    }
}

/// `espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, data_dir, 0)` as phonemizer does it, but via
/// the `espeak_ng_*` calls it wraps so a failure is returned instead of calling `exit(1)`.
fn initialize(data_dir: &Path) -> Result<(), PhonemeError> {
    let path_str = data_dir.to_str().ok_or_else(|| PhonemeError::DataPath {
        path: data_dir.to_path_buf(),
        reason: "not valid UTF-8".into(),
    })?;
    if path_str.len() > MAX_DATA_PATH {
        return Err(PhonemeError::DataPath {
            path: data_dir.to_path_buf(),
            reason: format!("longer than espeak's limit of {MAX_DATA_PATH} bytes"),
        });
    }
    let c_path = CString::new(path_str).map_err(|_| PhonemeError::DataPath {
        path: data_dir.to_path_buf(),
        reason: "contains NUL".into(),
    })?;
    // SAFETY: called once per process (under `INIT`, before any other espeak call), with a
    // valid NUL-terminated path shorter than espeak's buffer; espeak copies it into `path_home`.
    unsafe { sys::espeak_ng_InitializePath(c_path.as_ptr()) };
    let mut context: sys::espeak_ng_ERROR_CONTEXT = std::ptr::null_mut();
    // SAFETY: the path is set; `context` is a valid out-pointer that espeak may fill with an
    // allocated error context, which we free below with espeak's own function.
    let status = unsafe { sys::espeak_ng_Initialize(&raw mut context) };
    if !context.is_null() {
        // SAFETY: `context` was allocated by espeak_ng_Initialize and is freed exactly once.
        unsafe { sys::espeak_ng_ClearErrorContext(&raw mut context) };
    }
    if status != sys::espeak_ng_STATUS_ENS_OK {
        return Err(PhonemeError::Init {
            path: data_dir.to_path_buf(),
            status,
            message: status_message(status),
        });
    }
    // SAFETY: espeak is initialised; synchronous mode opens no audio device; NULL device is
    // allowed.
    let status = unsafe {
        sys::espeak_ng_InitializeOutput(
            sys::espeak_ng_OUTPUT_MODE_ENOUTPUT_MODE_SYNCHRONOUS,
            0,
            std::ptr::null(),
        )
    };
    if status != sys::espeak_ng_STATUS_ENS_OK {
        return Err(PhonemeError::Init {
            path: data_dir.to_path_buf(),
            status,
            message: status_message(status),
        });
    }
    Ok(())
}

/// espeak's text for a status code.
fn status_message(status: sys::espeak_ng_STATUS) -> String {
    let mut buf = [0 as c_char; 256];
    // SAFETY: espeak writes at most `buf.len()` bytes, NUL-terminated, into our buffer; this
    // function touches no global state.
    unsafe { sys::espeak_ng_GetStatusCodeMessage(status, buf.as_mut_ptr(), buf.len()) };
    // SAFETY: the buffer is zero-initialised and espeak NUL-terminates within its length, so
    // there is a NUL inside `buf`.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}
