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
    voice: Option<&'static str>,
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

    /// Selects a voice by its identifier (e.g. `gmw/en-US`), as phonemizer's `set_voice`.
    pub(super) fn set_voice(&mut self, voice: &'static str) -> Result<(), (u32, String)> {
        if self.voice == Some(voice) {
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
        self.voice = Some(voice);
        Ok(())
    }

    /// phonemizer's `EspeakWrapper.text_to_phonemes(text)` without tie: the IPA of every clause
    /// espeak finds in `text`, phonemes separated by `_`, words by spaces, clauses joined by a
    /// space. Like the C side of ctypes, the text ends at its first NUL.
    #[expect(
        clippy::unused_self,
        reason = "`&mut self` is the proof of exclusive access to espeak's global state"
    )]
    pub(super) fn text_to_phonemes(&mut self, text: &str) -> String {
        let text = text.split('\0').next().unwrap_or_default();
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
