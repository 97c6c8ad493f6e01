//! A streaming RIFF/WAVE writer: samples are appended as they arrive and the header sizes are
//! patched on `finish`, so a long render never holds the whole episode in memory.
//!
//! `write_wav_file` writes to a temporary file beside the target and renames it into place, so a
//! crash or Ctrl-C never leaves a half-written file under the target's name.

use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

/// How samples are stored in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SampleFormat {
    /// 16-bit signed PCM (the default: what every player reads).
    #[default]
    Pcm16,
    /// 24-bit signed PCM.
    Pcm24,
    /// 32-bit IEEE float.
    Float32,
}

impl SampleFormat {
    fn bytes(self) -> u16 {
        match self {
            SampleFormat::Pcm16 => 2,
            SampleFormat::Pcm24 => 3,
            SampleFormat::Float32 => 4,
        }
    }
}

/// Appends mono or interleaved samples to a WAV stream.
pub struct WavWriter<W: Write + Seek> {
    out: W,
    format: SampleFormat,
    data_bytes: u64,
    finished: bool,
}

const HEADER_LEN: u64 = 44;

impl<W: Write + Seek> WavWriter<W> {
    /// Writes a provisional header; sizes are fixed by [`WavWriter::finish`].
    pub fn new(
        mut out: W,
        sample_rate: u32,
        channels: u16,
        format: SampleFormat,
    ) -> io::Result<Self> {
        let block = channels * format.bytes();
        out.write_all(b"RIFF")?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(b"WAVEfmt ")?;
        out.write_all(&16u32.to_le_bytes())?;
        let tag: u16 = if format == SampleFormat::Float32 {
            3
        } else {
            1
        };
        out.write_all(&tag.to_le_bytes())?;
        out.write_all(&channels.to_le_bytes())?;
        out.write_all(&sample_rate.to_le_bytes())?;
        out.write_all(&(sample_rate * u32::from(block)).to_le_bytes())?;
        out.write_all(&block.to_le_bytes())?;
        out.write_all(&(format.bytes() * 8).to_le_bytes())?;
        out.write_all(b"data")?;
        out.write_all(&0u32.to_le_bytes())?;
        Ok(Self {
            out,
            format,
            data_bytes: 0,
            finished: false,
        })
    }

    /// Appends samples in [-1, 1] (values outside are clipped for the integer formats).
    pub fn write(&mut self, samples: &[f32]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(samples.len() * usize::from(self.format.bytes()));
        for &s in samples {
            let s = if s.is_finite() { s } else { 0.0 };
            match self.format {
                SampleFormat::Pcm16 => {
                    let v = (s.clamp(-1.0, 1.0) * 32767.0).round() as i16;
                    buf.extend_from_slice(&v.to_le_bytes());
                }
                SampleFormat::Pcm24 => {
                    let v = (s.clamp(-1.0, 1.0) * 8_388_607.0).round() as i32;
                    buf.extend_from_slice(&v.to_le_bytes()[..3]);
                }
                SampleFormat::Float32 => buf.extend_from_slice(&s.to_le_bytes()),
            }
        }
        self.out.write_all(&buf)?;
        self.data_bytes += buf.len() as u64;
        Ok(())
    }

    /// Patches the RIFF and data sizes and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        let data = u32::try_from(self.data_bytes)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "WAV data over 4 GiB"))?;
        if data % 2 == 1 {
            self.out.write_all(&[0])?; // RIFF chunks are word-aligned
        }
        let riff = 4 + 8 + 16 + 8 + data + (data % 2);
        self.out.seek(SeekFrom::Start(4))?;
        self.out.write_all(&riff.to_le_bytes())?;
        self.out.seek(SeekFrom::Start(HEADER_LEN - 4))?;
        self.out.write_all(&data.to_le_bytes())?;
        self.out.seek(SeekFrom::End(0))?;
        self.out.flush()?;
        self.finished = true;
        Ok(self.out)
    }
}

/// Writes `samples` as a mono WAV file atomically (temp file + rename).
pub fn write_wav_file(
    path: &Path,
    samples: &[f32],
    sample_rate: u32,
    format: SampleFormat,
) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = part_path(dir, path);
    let result = (|| {
        let file = fs_err::File::create(&tmp)?;
        let mut w = WavWriter::new(BufWriter::new(file), sample_rate, 1, format)?;
        w.write(samples)?;
        let file = w
            .finish()?
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        fs_err::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn part_path(dir: &Path, target: &Path) -> std::path::PathBuf {
    let name = target
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    dir.join(format!("{}{name}.part", crate::scratch::prefix("wav")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn header_u32(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    #[test]
    fn pcm16_header_and_samples() {
        let mut w =
            WavWriter::new(Cursor::new(Vec::new()), 24_000, 1, SampleFormat::Pcm16).unwrap();
        w.write(&[0.0, 1.0, -1.0, 2.0]).unwrap();
        w.write(&[0.5]).unwrap();
        let b = w.finish().unwrap().into_inner();
        assert_eq!(&b[0..4], b"RIFF");
        assert_eq!(header_u32(&b, 24), 24_000);
        assert_eq!(header_u32(&b, 40), 10);
        assert_eq!(header_u32(&b, 4) as usize, b.len() - 8);
        assert_eq!(i16::from_le_bytes([b[46], b[47]]), 32767);
        assert_eq!(i16::from_le_bytes([b[48], b[49]]), -32767);
        assert_eq!(i16::from_le_bytes([b[50], b[51]]), 32767, "clipped");
    }

    #[test]
    fn pcm24_is_padded_to_even_and_float_keeps_values() {
        let mut w =
            WavWriter::new(Cursor::new(Vec::new()), 48_000, 1, SampleFormat::Pcm24).unwrap();
        w.write(&[0.25]).unwrap();
        let b = w.finish().unwrap().into_inner();
        assert_eq!(header_u32(&b, 40), 3);
        assert_eq!(b.len(), 44 + 4);
        let mut w =
            WavWriter::new(Cursor::new(Vec::new()), 24_000, 1, SampleFormat::Float32).unwrap();
        w.write(&[0.125, f32::NAN]).unwrap();
        let b = w.finish().unwrap().into_inner();
        assert_eq!(u16::from_le_bytes([b[20], b[21]]), 3);
        assert!((f32::from_le_bytes([b[44], b[45], b[46], b[47]]) - 0.125).abs() < f32::EPSILON);
        let nan_sample = f32::from_le_bytes([b[48], b[49], b[50], b[51]]);
        assert!(nan_sample.abs() < f32::EPSILON, "NaN is written as silence");
    }

    #[test]
    fn file_write_is_atomic_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.wav");
        write_wav_file(&path, &[0.0; 100], 24_000, SampleFormat::Pcm16).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 44 + 200);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
