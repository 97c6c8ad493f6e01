//! Pass two: the draft's raw samples (the voices, and the music and effects tracks when the
//! script has sound cues), mixed, scaled to the loudness target, resampled, limited to the
//! true-peak ceiling and encoded, block by block, into a temporary file that replaces the
//! target only when complete.
//!
//! Order matters: gain first (integrated loudness does not change with resampling), then
//! resampling, then the limiter at the *output* rate, so that the inter-sample peaks it guards
//! are those of the file a player will read. Stems are written in the same pass: each goes
//! through the same gain and its own resampler (a linear filter, so resampled stems add up to
//! the resampled mix), and then takes the gain the limiter gave the *mix* at that sample, so the
//! stems of an episode add up to its mix to the last bit of rounding.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::audio::{
    file_encoder, AudioSink, LoudnessMeter, Metadata, OutputFormat, Resampler, TruePeakLimiter,
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

/// The raw tracks of an episode (f32 LE at the model's rate). A track shorter than the others
/// is silent after its end.
#[derive(Debug, Clone, Copy)]
pub struct Tracks<'a> {
    pub speech: &'a Path,
    pub music: Option<&'a Path>,
    pub sfx: Option<&'a Path>,
}

/// What a stem holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// The speech in these sample ranges (one speaker's lines); silence elsewhere.
    Speech(Vec<Range<u64>>),
    Music,
    Sfx,
}

/// A stem to write beside the mix.
#[derive(Debug, Clone)]
pub struct Stem<'a> {
    pub part: Part,
    pub dest: &'a Path,
}

const BLOCK: usize = 1 << 15;

/// An encoder writing to a temporary file that becomes `dest` when finished.
struct Output<'a> {
    tmp: tempfile::NamedTempFile,
    sink: Box<dyn AudioSink>,
    dest: &'a Path,
}

impl<'a> Output<'a> {
    fn new(dest: &'a Path, spec: &MasterSpec<'_>) -> Result<Self, RenderError> {
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(&crate::scratch::prefix("out"))
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
        Ok(Self { tmp, sink, dest })
    }

    fn finish(self) -> Result<(), RenderError> {
        self.sink.finish()?;
        self.tmp
            .persist(self.dest)
            .map_err(|e| RenderError::io(self.dest, e.error))?;
        Ok(())
    }
}

/// A stem on its way: its resampler, and its samples waiting for the mix's limiter gain.
struct StemChain<'a> {
    part: Part,
    resampler: Option<Resampler>,
    waiting: VecDeque<f32>,
    out: Output<'a>,
    block: Vec<f32>,
    resampled: Vec<f32>,
    limited: Vec<f32>,
}

/// A raw track read a block at a time.
struct RawReader<'a> {
    path: &'a Path,
    reader: Option<BufReader<File>>,
    bytes: Vec<u8>,
}

impl<'a> RawReader<'a> {
    fn open(path: &'a Path) -> Result<Self, RenderError> {
        Ok(Self {
            path,
            reader: Some(BufReader::with_capacity(
                1 << 16,
                File::open(path).map_err(|e| RenderError::io(path, e))?,
            )),
            bytes: vec![0u8; BLOCK * 4],
        })
    }

    /// Reads the next block into `out` (scaled by `gain`); how many samples (0 at the end).
    fn read(&mut self, out: &mut Vec<f32>, gain: f32) -> Result<usize, RenderError> {
        out.clear();
        let Some(reader) = self.reader.as_mut() else {
            return Ok(0);
        };
        let n = read_full(reader, &mut self.bytes).map_err(|e| RenderError::io(self.path, e))?;
        if n == 0 {
            self.reader = None;
        }
        out.extend(
            self.bytes[..n - n % 4]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) * gain),
        );
        Ok(out.len())
    }
}

/// Masters `tracks` into `dest` and writes `stems` beside it, or only measures the mix when
/// `dest` is `None` and there are no stems (a run that settles the gain).
pub fn master(
    tracks: Tracks<'_>,
    spec: &MasterSpec<'_>,
    dest: Option<&Path>,
    stems: &[Stem<'_>],
    cancel: &AtomicBool,
) -> Result<Measured, RenderError> {
    let mut output = dest.map(|d| Output::new(d, spec)).transpose()?;
    let resampler = || {
        (spec.sample_rate != SAMPLE_RATE)
            .then(|| Resampler::new(SAMPLE_RATE, spec.sample_rate))
            .transpose()
    };
    let mut chains = stems
        .iter()
        .map(|stem| {
            Ok(StemChain {
                part: stem.part.clone(),
                resampler: resampler()?,
                waiting: VecDeque::new(),
                out: Output::new(stem.dest, spec)?,
                block: Vec::with_capacity(BLOCK),
                resampled: Vec::new(),
                limited: Vec::new(),
            })
        })
        .collect::<Result<Vec<_>, RenderError>>()?;
    let mut mix_resampler = resampler()?;
    let mut limiter = TruePeakLimiter::new(spec.sample_rate, spec.ceiling_dbtp);
    let mut meter = LoudnessMeter::new(spec.sample_rate)?;
    let mut speech_in = RawReader::open(tracks.speech)?;
    let mut music_in = tracks.music.map(RawReader::open).transpose()?;
    let mut sfx_in = tracks.sfx.map(RawReader::open).transpose()?;
    let (mut speech, mut music, mut sfx) = (Vec::new(), Vec::new(), Vec::new());
    let mut block = Vec::with_capacity(BLOCK);
    let mut resampled = Vec::new();
    let mut limited = Vec::new();
    let mut gains = Vec::new();
    let mut position = 0u64;
    let mut written = 0u64;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(RenderError::Cancelled);
        }
        let mut n = speech_in.read(&mut speech, spec.gain)?;
        for (reader, buf) in [(&mut music_in, &mut music), (&mut sfx_in, &mut sfx)] {
            buf.clear();
            if let Some(r) = reader.as_mut() {
                n = n.max(r.read(buf, spec.gain)?);
            }
        }
        if n == 0 {
            break;
        }
        for buf in [&mut speech, &mut music, &mut sfx] {
            buf.resize(n, 0.0);
        }
        block.clear();
        block.extend((0..n).map(|i| speech[i] + music[i] + sfx[i]));
        for chain in &mut chains {
            chain.block.clear();
            match &chain.part {
                Part::Speech(keep) => {
                    chain.block.extend_from_slice(&speech);
                    mute_outside(&mut chain.block, position, keep);
                }
                Part::Music => chain.block.extend_from_slice(&music),
                Part::Sfx => chain.block.extend_from_slice(&sfx),
            }
            let stage = resample(chain.resampler.as_mut(), &chain.block, &mut chain.resampled)?;
            chain.waiting.extend(stage.iter().copied());
        }
        position += n as u64;
        let stage = resample(mix_resampler.as_mut(), &block, &mut resampled)?;
        limited.clear();
        gains.clear();
        limiter.process_gains(stage, &mut limited, &mut gains);
        written += emit(&limited, &gains, output.as_mut(), &mut chains, &mut meter)?;
    }
    // The resamplers' tails, then the limiter's.
    resampled.clear();
    if let Some(r) = mix_resampler.as_mut() {
        r.flush(&mut resampled)?;
    }
    for chain in &mut chains {
        if let Some(r) = chain.resampler.as_mut() {
            chain.resampled.clear();
            r.flush(&mut chain.resampled)?;
            chain.waiting.extend(chain.resampled.iter().copied());
        }
    }
    limited.clear();
    gains.clear();
    limiter.process_gains(&resampled, &mut limited, &mut gains);
    limiter.flush_gains(&mut limited, &mut gains);
    written += emit(&limited, &gains, output.as_mut(), &mut chains, &mut meter)?;
    if let Some(out) = output {
        out.finish()?;
    }
    for chain in chains {
        chain.out.finish()?;
    }
    Ok(Measured {
        loudness_lufs: meter.integrated_lufs(),
        true_peak_dbtp: meter.true_peak_dbtp(),
        samples: written,
    })
}

/// `block` resampled into `buf`, or `block` itself when the rates match.
fn resample<'b>(
    resampler: Option<&mut Resampler>,
    block: &'b [f32],
    buf: &'b mut Vec<f32>,
) -> Result<&'b [f32], RenderError> {
    Ok(match resampler {
        Some(r) => {
            buf.clear();
            r.process(block, buf)?;
            buf
        }
        None => block,
    })
}

/// Writes the limited mix and, at the gains it got, the stems' samples of the same times;
/// how many samples of the mix.
fn emit(
    limited: &[f32],
    gains: &[f64],
    output: Option<&mut Output<'_>>,
    chains: &mut [StemChain<'_>],
    meter: &mut LoudnessMeter,
) -> Result<u64, RenderError> {
    meter.add(limited)?;
    if let Some(out) = output {
        out.sink.write(limited)?;
    }
    for chain in chains {
        chain.limited.clear();
        for &g in gains {
            let s = chain.waiting.pop_front().unwrap_or(0.0);
            chain.limited.push(TruePeakLimiter::apply(s, g));
        }
        chain.out.sink.write(&chain.limited)?;
    }
    Ok(limited.len() as u64)
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
