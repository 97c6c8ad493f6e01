//! Audio containers the engine writes. Only WAV for now; the episode renderer adds FLAC and MP3.

pub mod decode;
pub mod wav;

pub use wav::{write_wav_file, SampleFormat, WavWriter};
