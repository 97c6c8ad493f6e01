//! Pass two: the draft's raw samples, scaled to the loudness target, resampled, limited to the
//! true-peak ceiling and encoded, block by block, into a temporary file that replaces the target
//! only when complete.
//!
//! Order matters: gain first (integrated loudness does not change with resampling), then
//! resampling, then the limiter at the *output* rate, so that the inter-sample peaks it guards
//! are those of the file a player will read. Stems go through the same chain with the same gain
//! and the other speakers' spans muted, so the stems of an episode add up to its mix.

use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::audio::{
    file_encoder, LoudnessMeter, Metadata, OutputFormat, Resampler, TruePeakLimiter,
};
use crate::speech::SAMPLE_RATE;

use super::RenderError;

/// What the finished file measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    pub loudness_lufs: Option<f64>,
    pub true_peak_dbtp: f64,
    pub samples: u64,
}

/// The chain's settings.
#[derive(Clone)]
pub struct MasterSpec<'a> {
    pub format: OutputFormat,
    pub sample_rate: u32,
    pub gain: f32,
    pub ceiling_dbtp: f64,
    pub meta: &'a Metadata,
}

const BLOCK: usize = 1 << 15;

/// Masters `raw` (f32 LE at the model's rate) into `dest`, or only measures the result when
/// `dest` is `None`. `keep`, if given, lists the sample
/// ranges to keep (a stem); everything else is silence.
pub fn master(
    raw: &Path,
    spec: &MasterSpec<'_>,
    keep: Option<&[Range<u64>]>,
    dest: Option<&Path>,
    cancel: &AtomicBool,
) -> Result<Measured, RenderError> {
    // `None`: a measuring run (the whole chain but the encoder), to settle the gain.
    let mut output = match dest {
        Some(dest) => {
            let dir = match dest.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let tmp = tempfile::Builder::new()
                .prefix(".banter-out-")
                // The finished file gets the user's usual permissions (0666 less the umask).
                .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
                .tempfile_in(dir)
                .map_err(|e| RenderError::io(dir, e))?;
            let out = tmp.reopen().map_err(|e| RenderError::io(tmp.path(), e))?;
            let sink = file_encoder(
                std::io::BufWriter::with_capacity(1 << 16, out),
                spec.format,
                spec.sample_rate,
                spec.meta,
            )?;
            Some((tmp, sink, dest))
        }
        None => None,
    };
    let mut resampler = (spec.sample_rate != SAMPLE_RATE)
        .then(|| Resampler::new(SAMPLE_RATE, spec.sample_rate))
        .transpose()?;
    let mut limiter = TruePeakLimiter::new(spec.sample_rate, spec.ceiling_dbtp);
    let mut meter = LoudnessMeter::new(spec.sample_rate)?;
    let mut reader = BufReader::with_capacity(
        1 << 16,
        File::open(raw).map_err(|e| RenderError::io(raw, e))?,
    );
    let mut bytes = vec![0u8; BLOCK * 4];
    let mut block = Vec::with_capacity(BLOCK);
    let mut resampled = Vec::new();
    let mut limited = Vec::new();
    let mut position = 0u64;
    let mut written = 0u64;
    let mut emit = |samples: &[f32],
                    sink: Option<&mut Box<dyn crate::audio::AudioSink>>,
                    meter: &mut LoudnessMeter|
     -> Result<(), RenderError> {
        meter.add(samples)?;
        if let Some(sink) = sink {
            sink.write(samples)?;
        }
        written += samples.len() as u64;
        Ok(())
    };
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(RenderError::Cancelled);
        }
        let n = read_full(&mut reader, &mut bytes).map_err(|e| RenderError::io(raw, e))?;
        if n == 0 {
            break;
        }
        block.clear();
        block.extend(
            bytes[..n - n % 4]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) * spec.gain),
        );
        if let Some(keep) = keep {
            mute_outside(&mut block, position, keep);
        }
        position += block.len() as u64;
        let stage = match resampler.as_mut() {
            Some(r) => {
                resampled.clear();
                r.process(&block, &mut resampled)?;
                &resampled
            }
            None => &block,
        };
        limited.clear();
        limiter.process(stage, &mut limited);
        emit(&limited, output.as_mut().map(|o| &mut o.1), &mut meter)?;
    }
    limited.clear();
    if let Some(r) = resampler.as_mut() {
        resampled.clear();
        r.flush(&mut resampled)?;
        limiter.process(&resampled, &mut limited);
    }
    limiter.flush(&mut limited);
    emit(&limited, output.as_mut().map(|o| &mut o.1), &mut meter)?;
    if let Some((tmp, sink, dest)) = output {
        sink.finish()?;
        tmp.persist(dest)
            .map_err(|e| RenderError::io(dest, e.error))?;
    }
    Ok(Measured {
        loudness_lufs: meter.integrated_lufs(),
        true_peak_dbtp: meter.true_peak_dbtp(),
        samples: written,
    })
}

/// Zeroes the samples of `block` (which starts at `start`) that fall outside every range.
fn mute_outside(block: &mut [f32], start: u64, keep: &[Range<u64>]) {
    for (i, s) in block.iter_mut().enumerate() {
        let at = start + i as u64;
        // Ranges are sorted and few per block: a binary search per sample is plenty fast.
        let idx = keep.partition_point(|r| r.end <= at);
        if !keep.get(idx).is_some_and(|r| r.contains(&at)) {
            *s = 0.0;
        }
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_mute_other_spans() {
        let mut b = vec![1.0f32; 10];
        mute_outside(&mut b, 100, &[95..102, 105..107, 200..300]);
        assert_eq!(b, [1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
    }
}
