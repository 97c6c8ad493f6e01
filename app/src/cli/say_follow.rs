//! `banter say --follow -`: speaks standard input while it is still being written (an LLM's
//! reply piped in), through the same open scheduler stream and text chunker the WebSocket
//! endpoints use: the first clause is spoken as soon as its space arrives, later text joins
//! the same stream, and the audio is written as it comes.
//!
//! A thread reads standard input as the pipe delivers it and pushes each piece's segments;
//! the main thread writes the audio. To a file, the WAV is completed when the text ends (a
//! `.part` file until then, as `say` does); to standard output it is a WAV stream with
//! "unknown" sizes that players read to the end while it grows.

use std::io::{BufWriter, Read, Write};
use std::time::Instant;

use anyhow::Context;
use engine::audio::{SampleFormat, WavWriter};
use engine::follow::{ChunkConfig, Chunker};
use engine::{Engine, Mode, StreamEvent, StreamFeed};
use engine::{SpeechRequest, SAMPLE_RATE};

use super::say::{part_path, SayArgs, WavFormat};
use crate::exit::BadInput;
use crate::server::format::{s16le, streaming_wav_header};

pub fn run(args: &SayArgs, engine: &Engine, request: SpeechRequest) -> anyhow::Result<()> {
    let (feed, mut stream) = engine.open(request.clone(), Mode::Interactive)?;
    let started = Instant::now();
    let reader = {
        let engine = engine.clone();
        std::thread::Builder::new()
            .name("say-follow-input".into())
            .spawn(move || read_input(&engine, &request, feed))
            .context("starting the input reader")?
    };
    let to_stdout = args.output.as_os_str() == "-";
    let part = part_path(&args.output);
    let mut out: Box<dyn AudioOut> = if to_stdout {
        if !matches!(args.format, WavFormat::Pcm16) {
            return Err(BadInput(
                "--follow to standard output writes 16-bit PCM; leave --format out".into(),
            )
            .into());
        }
        Box::new(StdoutWav::default())
    } else {
        let file = fs_err::File::create(&part)
            .map_err(|e| BadInput(format!("cannot write {}: {e}", args.output.display())))?;
        let format = match args.format {
            WavFormat::Pcm16 => SampleFormat::Pcm16,
            WavFormat::Pcm24 => SampleFormat::Pcm24,
            WavFormat::F32 => SampleFormat::Float32,
        };
        Box::new(FileWav(Some(WavWriter::new(
            BufWriter::new(file),
            SAMPLE_RATE,
            1,
            format,
        )?)))
    };
    let mut samples = 0usize;
    let mut first_audio = None;
    let written = (|| -> anyhow::Result<()> {
        while let Some(event) = stream.blocking_next() {
            match event {
                StreamEvent::Audio { samples: chunk, .. } => {
                    first_audio.get_or_insert_with(|| started.elapsed());
                    samples += chunk.len();
                    out.write(&chunk)?;
                }
                StreamEvent::Failed(e) => return Err(e.into()),
            }
        }
        out.finish()
    })();
    let read = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the input reader stopped"))?;
    let nothing: anyhow::Result<()> = if samples == 0 {
        Err(BadInput("standard input had nothing to say".into()).into())
    } else {
        Ok(())
    };
    if let Err(e) = written.and(read).and(nothing) {
        if !to_stdout {
            let _ = std::fs::remove_file(&part);
        }
        return Err(e);
    }
    if !to_stdout {
        fs_err::rename(&part, &args.output).context("moving the finished file into place")?;
    }
    eprintln!(
        "wrote {} ({:.2} s of audio; first audio {:.2} s after start)",
        if to_stdout {
            "standard output".to_owned()
        } else {
            args.output.display().to_string()
        },
        samples as f64 / f64::from(SAMPLE_RATE),
        first_audio.map_or(0.0, |d| d.as_secs_f64())
    );
    Ok(())
}

/// Reads standard input as it arrives and pushes each piece the chunker cuts; the feed is
/// dropped (the text is complete) at the end of input or on an error.
fn read_input(engine: &Engine, request: &SpeechRequest, feed: StreamFeed) -> anyhow::Result<()> {
    let mut chunker = Chunker::new(ChunkConfig::default());
    let mut stdin = std::io::stdin().lock();
    let mut buf = [0u8; 4096];
    let mut bytes: Vec<u8> = Vec::new();
    let speak = |piece: &str| -> anyhow::Result<()> {
        match engine.segments(piece, request) {
            Ok(segments) => feed.push(segments).map_err(Into::into),
            Err(e) if e.is_input_error() => {
                // Said, never silent: a piece Banter cannot speak is skipped with a warning.
                eprintln!("warning: skipped {:?}: {e}", piece.trim());
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    };
    loop {
        let n = stdin
            .read(&mut buf)
            .map_err(|e| BadInput(format!("reading standard input: {e}")))?;
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&buf[..n]);
        // Only whole UTF-8 characters go on; a character split across reads waits.
        let valid = match std::str::from_utf8(&bytes) {
            Ok(_) => bytes.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => {
                return Err(BadInput(format!(
                    "standard input is not UTF-8 text (byte {:#04x})",
                    bytes[e.valid_up_to()]
                ))
                .into())
            }
        };
        let text: String = String::from_utf8_lossy(&bytes[..valid]).into_owned();
        bytes.drain(..valid);
        for piece in chunker.push(&text) {
            speak(&piece)?;
        }
    }
    if let Some(rest) = chunker.flush() {
        speak(&rest)?;
    }
    drop(feed);
    Ok(())
}

trait AudioOut {
    fn write(&mut self, samples: &[f32]) -> anyhow::Result<()>;
    fn finish(&mut self) -> anyhow::Result<()>;
}

struct FileWav(Option<WavWriter<BufWriter<fs_err::File>>>);

impl AudioOut for FileWav {
    fn write(&mut self, samples: &[f32]) -> anyhow::Result<()> {
        if let Some(w) = &mut self.0 {
            w.write(samples)?;
        }
        Ok(())
    }
    fn finish(&mut self) -> anyhow::Result<()> {
        if let Some(w) = self.0.take() {
            w.finish()?;
        }
        Ok(())
    }
}

/// A WAV stream on standard output: the header with unknown sizes, then samples as they come.
#[derive(Default)]
struct StdoutWav {
    started: bool,
}

impl AudioOut for StdoutWav {
    fn write(&mut self, samples: &[f32]) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        if !self.started {
            self.started = true;
            out.write_all(&streaming_wav_header())?;
        }
        out.write_all(&s16le(samples))?;
        out.flush()?;
        Ok(())
    }
    fn finish(&mut self) -> anyhow::Result<()> {
        if !self.started {
            self.write(&[])?;
        }
        Ok(())
    }
}
