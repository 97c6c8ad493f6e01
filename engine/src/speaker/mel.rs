//! The encoder's input features: a 40-channel mel *power* spectrogram (not log) of 16 kHz
//! audio, 25 ms Hann window, 10 ms hop, computed as resemblyzer computes it with
//! `librosa.feature.melspectrogram(y, sr=16000, n_fft=400, hop_length=160, n_mels=40)`.
//!
//! librosa's defaults that matter, all matched here: a periodic Hann window of `n_fft`
//! samples; `center=True` with zero padding of `n_fft / 2` on both sides (librosa ≥ 0.10;
//! older versions reflected) so there are `1 + len / 160` frames; `power=2` (|STFT|²); the
//! Slaney mel scale (`htk=False`: linear below 1 kHz, logarithmic above) from 0 Hz to 8 kHz;
//! `norm='slaney'` (each triangle scaled by 2 / its width in Hz, so filters have equal area).
//!
//! `n_fft = 400` is not a power of two, so the DFT is one matrix product with a precomputed
//! windowed cosine/sine basis (`[400, 2·201]`), which candle's GEMM runs fast on the CPU.

use candle_core::{Device, Tensor};

use super::{at, SpeakerError, SAMPLE_RATE};

/// Window length in samples (25 ms).
pub const N_FFT: usize = 400;
/// Hop in samples (10 ms).
pub const HOP: usize = 160;
/// Mel channels.
pub const N_MELS: usize = 40;
/// Frequency bins of the one-sided spectrum.
pub const N_BINS: usize = N_FFT / 2 + 1;

/// Slaney mel scale: linear below 1 kHz (200/3 Hz per mel), logarithmic above.
fn hz_to_mel(hz: f64) -> f64 {
    let f_sp = 200.0 / 3.0;
    let log_step = 6.4f64.ln() / 27.0;
    if hz >= 1000.0 {
        1000.0 / f_sp + (hz / 1000.0).ln() / log_step
    } else {
        hz / f_sp
    }
}

fn mel_to_hz(mel: f64) -> f64 {
    let f_sp = 200.0 / 3.0;
    let log_step = 6.4f64.ln() / 27.0;
    let min_log_mel = 1000.0 / f_sp;
    if mel >= min_log_mel {
        1000.0 * (log_step * (mel - min_log_mel)).exp()
    } else {
        mel * f_sp
    }
}

/// The mel filterbank, `[N_MELS][N_BINS]` row-major, Slaney-normalised (librosa's
/// `filters.mel(sr=16000, n_fft=400, n_mels=40)`).
#[must_use]
pub fn mel_filterbank() -> Vec<f32> {
    let sr = f64::from(SAMPLE_RATE);
    let max_mel = hz_to_mel(sr / 2.0);
    let edges: Vec<f64> = (0..N_MELS + 2)
        .map(|i| mel_to_hz(max_mel * i as f64 / (N_MELS + 1) as f64))
        .collect();
    let mut out = vec![0.0f32; N_MELS * N_BINS];
    for m in 0..N_MELS {
        let (lo, centre, hi) = (edges[m], edges[m + 1], edges[m + 2]);
        let norm = 2.0 / (hi - lo);
        for k in 0..N_BINS {
            let f = sr * k as f64 / N_FFT as f64;
            let rising = (f - lo) / (centre - lo);
            let falling = (hi - f) / (hi - centre);
            #[allow(clippy::cast_possible_truncation)] // librosa stores the filters as f32
            let w = (rising.min(falling).max(0.0) * norm) as f32;
            out[m * N_BINS + k] = w;
        }
    }
    out
}

/// Windowed DFT basis `[N_FFT, 2·N_BINS]`: columns `0..N_BINS` are `w[n]·cos(2πkn/N)`, the
/// rest `w[n]·sin(2πkn/N)` (the sign of the imaginary part does not matter for the power).
fn dft_basis() -> Vec<f32> {
    let mut out = vec![0.0f32; N_FFT * 2 * N_BINS];
    for n in 0..N_FFT {
        let angle_n = 2.0 * std::f64::consts::PI * n as f64 / N_FFT as f64;
        let window = 0.5 - 0.5 * angle_n.cos();
        for k in 0..N_BINS {
            // (k·n) mod N keeps the argument small, so the table is exact to f64 rounding.
            let phase = 2.0 * std::f64::consts::PI * ((k * n) % N_FFT) as f64 / N_FFT as f64;
            #[allow(clippy::cast_possible_truncation)] // the basis is used in f32
            {
                out[n * 2 * N_BINS + k] = (window * phase.cos()) as f32;
                out[n * 2 * N_BINS + N_BINS + k] = (window * phase.sin()) as f32;
            }
        }
    }
    out
}

/// Computes mel spectrograms; holds the DFT basis and the filterbank.
#[derive(Debug, Clone)]
pub struct MelSpectrogram {
    /// `[N_FFT, 2·N_BINS]`.
    basis: Tensor,
    /// `[N_BINS, N_MELS]` (the filterbank transposed, for `power · fbᵀ`).
    filters_t: Tensor,
}

impl MelSpectrogram {
    pub fn new() -> Result<Self, SpeakerError> {
        let device = Device::Cpu;
        let basis =
            Tensor::from_vec(dft_basis(), (N_FFT, 2 * N_BINS), &device).map_err(at("mel basis"))?;
        let filters_t = Tensor::from_vec(mel_filterbank(), (N_MELS, N_BINS), &device)
            .and_then(|t| t.t()?.contiguous())
            .map_err(at("mel filterbank"))?;
        Ok(Self { basis, filters_t })
    }

    /// Number of frames for `n` samples (`center=True`).
    #[must_use]
    pub fn frame_count(n: usize) -> usize {
        1 + n / HOP
    }

    /// The mel power spectrogram of `wav` (16 kHz) as a CPU tensor `[frames, N_MELS]`.
    pub fn compute(&self, wav: &[f32]) -> Result<Tensor, SpeakerError> {
        let frames = Self::frame_count(wav.len());
        let pad = N_FFT / 2;
        let mut framed = vec![0.0f32; frames * N_FFT];
        for (f, row) in framed.chunks_exact_mut(N_FFT).enumerate() {
            // Frame f covers padded samples [f·HOP, f·HOP + N_FFT), i.e. wav[f·HOP - pad ..].
            let start = f * HOP;
            for (j, slot) in row.iter_mut().enumerate() {
                let idx = start + j;
                if idx >= pad {
                    if let Some(&s) = wav.get(idx - pad) {
                        *slot = s;
                    }
                }
            }
        }
        let framed =
            Tensor::from_vec(framed, (frames, N_FFT), &Device::Cpu).map_err(at("mel framing"))?;
        let spec = framed.matmul(&self.basis).map_err(at("mel dft"))?;
        let power = (|| {
            let re = spec.narrow(1, 0, N_BINS)?;
            let im = spec.narrow(1, N_BINS, N_BINS)?;
            (re.sqr()? + im.sqr()?)?.matmul(&self.filters_t)
        })()
        .map_err(at("mel power"))?;
        Ok(power)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mel_scale_round_trips_and_matches_known_points() {
        assert!((hz_to_mel(1000.0) - 15.0).abs() < 1e-12);
        assert!((hz_to_mel(500.0) - 7.5).abs() < 1e-12);
        for hz in [0.0, 123.0, 999.0, 1000.0, 4321.0, 8000.0] {
            assert!((mel_to_hz(hz_to_mel(hz)) - hz).abs() < 1e-9, "{hz}");
        }
    }

    #[test]
    fn filterbank_matches_librosa_values() {
        // librosa 0.11 `filters.mel(sr=16000, n_fft=400, n_mels=40)`: row 0 starts
        // [0, 0.00739021, 0.01240452, 0.00501431]; row 39 is non-zero on bins 172..=199.
        let fb = mel_filterbank();
        let row = |m: usize| &fb[m * N_BINS..(m + 1) * N_BINS];
        let expected = [0.0, 0.007_390_21, 0.012_404_52, 0.005_014_31];
        for (got, want) in row(0)[..4].iter().zip(expected) {
            assert!((got - want).abs() < 1e-7, "{got} vs {want}");
        }
        let nonzero: Vec<usize> = (0..N_BINS).filter(|&k| row(39)[k] > 0.0).collect();
        assert_eq!((nonzero[0], nonzero[nonzero.len() - 1]), (172, 199));
        assert!((row(39)[185] - row(39).iter().copied().fold(0.0, f32::max)).abs() < 1e-3);
        // Slaney normalisation: each filter's integral over Hz is about 1.
        for m in 0..N_MELS {
            let area: f32 = row(m).iter().sum::<f32>() * (SAMPLE_RATE as f32 / N_FFT as f32);
            assert!((area - 1.0).abs() < 0.05, "filter {m} area {area}");
        }
    }

    #[test]
    fn a_pure_tone_lands_in_its_mel_channel() {
        let mel = MelSpectrogram::new().expect("mel");
        // 1 kHz sine, 0.5 s: 1 + 8000/160 = 51 frames.
        let wav: Vec<f32> = (0..8000)
            .map(|i| (2.0 * std::f32::consts::PI * 1000.0 * i as f32 / 16_000.0).sin())
            .collect();
        let out = mel.compute(&wav).expect("compute");
        assert_eq!(out.dims(), [51, N_MELS]);
        let frame: Vec<f32> = out.get(25).and_then(|t| t.to_vec1()).expect("frame");
        let best = (0..N_MELS)
            .max_by(|&a, &b| frame[a].total_cmp(&frame[b]))
            .expect("non-empty");
        // librosa gives channel 13 and a frame total of 196.069 for the same input.
        assert_eq!(best, 13);
        let total: f32 = frame.iter().sum();
        assert!((total - 196.069).abs() < 0.01, "{total}");
    }
}
