//! resemblyzer's waveform preprocessing: volume normalisation and silence trimming, on 16 kHz
//! mono `f32`.
//!
//! Volume: the RMS level is raised to −30 dBFS when it is below, never lowered (the reference's
//! `increase_only=True`).
//!
//! Silence trimming: the reference classifies 30 ms windows with WebRTC's VAD (mode 3, the most
//! aggressive), smooths the flags with an 8-window moving average (rounded, so a window counts
//! as voiced when at least 5 of the 8 around it are), dilates the result by 3 windows each side
//! and keeps only the samples of voiced windows. So only silences longer than about 0.2 s are
//! shortened. WebRTC's VAD is a fixed-point GMM classifier with trained tables; no pure-Rust
//! port of that exact algorithm is at hand, and porting it (about a thousand lines of C and
//! its tables) is out of proportion for what it decides here. We classify each window by
//! energy instead ([`voice_flags`]) and keep the reference's smoothing and dilation exactly
//! ([`speech_mask`]). On clean speech both detectors agree on where the long pauses are; the
//! speaker e2e test measures how far the resulting embeddings differ from the reference's.

use super::SAMPLE_RATE;

/// The reference's target level.
pub const TARGET_DBFS: f64 = -30.0;
/// VAD window: 30 ms at 16 kHz.
pub const VAD_WINDOW: usize = (30 * SAMPLE_RATE as usize) / 1000;
/// Moving-average width over window flags.
const MOVING_AVERAGE_WIDTH: usize = 8;
/// Dilation half-width in windows (the reference's `vad_max_silence_length` 6 → a 7-wide
/// structuring element).
const DILATION: usize = 3;
/// `2**15 - 1`, the reference's int16 scale.
const INT16_MAX: f64 = 32_767.0;

/// A window counts as speech when its level is above both this absolute floor (dBFS of its
/// RMS)...
const ABSOLUTE_FLOOR_DB: f64 = -50.0;
/// ...and the loudest window's level minus this margin (dB).
const RELATIVE_FLOOR_DB: f64 = 35.0;
/// Windows still flagged as speech after the level drops, like WebRTC's overhang (which, in
/// its most aggressive mode with 30 ms frames, holds speech for about three frames). With the
/// two thresholds above this reproduces the reference's per-window flags on the golden clips
/// to 2 windows in 390 (without it, 25 differ).
const HANGOVER: usize = 3;

/// Raises the level of `wav` to [`TARGET_DBFS`] (RMS over int16 full scale) when it is below;
/// leaves silence and louder audio unchanged.
pub fn normalize_volume(wav: &mut [f32]) {
    if wav.is_empty() {
        return;
    }
    let mean_sq = wav
        .iter()
        .map(|&s| (f64::from(s) * INT16_MAX).powi(2))
        .sum::<f64>()
        / wav.len() as f64;
    let rms = mean_sq.sqrt();
    if rms <= 0.0 || !rms.is_finite() {
        return;
    }
    let change_db = TARGET_DBFS - 20.0 * (rms / INT16_MAX).log10();
    if change_db <= 0.0 {
        return;
    }
    #[allow(clippy::cast_possible_truncation)] // a gain factor, f32 is the sample precision
    let gain = 10f64.powf(change_db / 20.0) as f32;
    for s in wav.iter_mut() {
        *s *= gain;
    }
}

/// Level of one window in dBFS (RMS of the int16-rounded samples, as the VAD sees them).
fn window_db(window: &[f32]) -> f64 {
    let mean_sq = window
        .iter()
        .map(|&s| {
            let q = (f64::from(s) * INT16_MAX)
                .round()
                .clamp(-32_768.0, INT16_MAX);
            q * q
        })
        .sum::<f64>()
        / window.len().max(1) as f64;
    10.0 * (mean_sq.max(1e-12) / (INT16_MAX * INT16_MAX)).log10()
}

/// Energy voice-activity flags, one per whole 30 ms window (a trailing partial window is
/// dropped, as the reference does): above the level floors, or within [`HANGOVER`] windows
/// after a window that was.
#[must_use]
pub fn voice_flags(wav: &[f32]) -> Vec<bool> {
    let levels: Vec<f64> = wav.chunks_exact(VAD_WINDOW).map(window_db).collect();
    let loudest = levels.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let floor = ABSOLUTE_FLOOR_DB.max(loudest - RELATIVE_FLOOR_DB);
    let mut left = 0;
    levels
        .iter()
        .map(|&db| {
            if db > floor {
                left = HANGOVER;
                true
            } else if left > 0 {
                left -= 1;
                true
            } else {
                false
            }
        })
        .collect()
}

/// The reference's smoothing (moving average of 8, rounded half to even) and dilation
/// (3 windows each side) of per-window voice flags.
#[must_use]
pub fn speech_mask(flags: &[bool]) -> Vec<bool> {
    let n = flags.len();
    let before = (MOVING_AVERAGE_WIDTH - 1) / 2;
    // Window i averages flags[i - 3 .. i + 5) with zeros outside; 4 of 8 is 0.5, which numpy
    // rounds to 0, so 5 are needed.
    let smoothed: Vec<bool> = (0..n)
        .map(|i| {
            let lo = i.saturating_sub(before);
            let hi = (i + MOVING_AVERAGE_WIDTH - before).min(n);
            let count = flags[lo..hi].iter().filter(|&&f| f).count();
            2 * count > MOVING_AVERAGE_WIDTH
        })
        .collect();
    (0..n)
        .map(|i| {
            let lo = i.saturating_sub(DILATION);
            let hi = (i + DILATION + 1).min(n);
            smoothed[lo..hi].iter().any(|&f| f)
        })
        .collect()
}

/// Keeps the samples of the windows `mask` marks; a trailing partial window is dropped.
#[must_use]
pub fn apply_mask(wav: &[f32], mask: &[bool]) -> Vec<f32> {
    wav.chunks_exact(VAD_WINDOW)
        .zip(mask)
        .filter(|(_, &keep)| keep)
        .flat_map(|(w, _)| w.iter().copied())
        .collect()
}

/// Shortens silences longer than about 0.2 s, with the energy VAD.
#[must_use]
pub fn trim_long_silences(wav: &[f32]) -> Vec<f32> {
    apply_mask(wav, &speech_mask(&voice_flags(wav)))
}

/// The full reference preprocessing of 16 kHz mono audio: volume, then silence trimming.
#[must_use]
pub fn preprocess(wav_16k: &[f32]) -> Vec<f32> {
    let mut wav = wav_16k.to_vec();
    normalize_volume(&mut wav);
    trim_long_silences(&wav)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(secs: f32, amp: f32) -> Vec<f32> {
        let n = (secs * SAMPLE_RATE as f32) as usize;
        (0..n).map(|i| amp * (i as f32 * 0.07).sin()).collect()
    }

    #[test]
    fn volume_is_raised_to_minus_30_dbfs_but_never_lowered() {
        let mut quiet = tone(0.5, 0.001);
        normalize_volume(&mut quiet);
        let rms =
            (quiet.iter().map(|s| f64::from(*s).powi(2)).sum::<f64>() / quiet.len() as f64).sqrt();
        assert!((20.0 * rms.log10() - TARGET_DBFS).abs() < 0.01, "{rms}");
        let loud = tone(0.5, 0.5);
        let mut same = loud.clone();
        normalize_volume(&mut same);
        assert_eq!(same, loud);
        let mut silent = vec![0.0; 100];
        normalize_volume(&mut silent);
        assert!(silent.iter().all(|s| *s == 0.0));
    }

    #[test]
    fn smoothing_and_dilation_match_the_reference_rules() {
        // 5 voiced windows in a row survive smoothing (4 of them) and dilate by 3 each side.
        let mut flags = vec![false; 30];
        flags[10..15].iter_mut().for_each(|f| *f = true);
        let mask = speech_mask(&flags);
        let kept: Vec<usize> = (0..30).filter(|&i| mask[i]).collect();
        // Window i averages flags[i-3..=i+4]: windows 10..=13 see all 5; dilation gives 7..=16.
        assert_eq!(kept, (7..=16).collect::<Vec<_>>());
        // 4 voiced windows never reach 5 of 8: all trimmed.
        let mut four = vec![false; 30];
        four[10..14].iter_mut().for_each(|f| *f = true);
        assert!(speech_mask(&four).iter().all(|f| !f));
    }

    #[test]
    fn speech_is_held_for_the_hangover() {
        let mut wav = vec![0.0f32; VAD_WINDOW * 10];
        wav[VAD_WINDOW..2 * VAD_WINDOW]
            .iter_mut()
            .enumerate()
            .for_each(|(i, s)| *s = 0.3 * (i as f32 * 0.07).sin());
        let flags = voice_flags(&wav);
        let on: Vec<usize> = (0..flags.len()).filter(|&i| flags[i]).collect();
        assert_eq!(on, (1..=1 + HANGOVER).collect::<Vec<_>>());
    }

    #[test]
    fn long_silence_is_shortened_short_pause_kept() {
        let speech = tone(1.0, 0.3);
        let mut wav = speech.clone();
        wav.extend(vec![0.0; SAMPLE_RATE as usize]); // 1 s silence
        wav.extend(&speech);
        wav.extend(vec![0.0; 1600]); // 0.1 s
        wav.extend(&speech);
        let out = trim_long_silences(&wav);
        let removed = wav.len() - out.len();
        // Most of the 1 s gap goes (hangover and dilation keep about 0.2 s of it); the 0.1 s
        // pause stays.
        assert!(removed > 11_000 && removed < 15_000, "removed {removed}");
    }
}
