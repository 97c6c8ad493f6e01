//! `banter say`: one voice, one text, one WAV file, streamed to disk chunk by chunk so that even
//! 100,000 characters render in bounded memory.

use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use engine::audio::{SampleFormat, WavWriter};
use engine::{Mode, StreamEvent};
use engine::{SpeechRequest, SAMPLE_RATE};

use super::output::Output;
use super::EngineArgs;
use crate::exit::BadInput;

#[derive(Debug, clap::Args)]
pub struct SayArgs {
    /// The text to speak; `-` reads it from standard input.
    pub text: String,
    /// A stock voice (`af_heart`), a blend (`af_bella:0.7+af_sky:0.3`), or a library voice.
    #[arg(long, default_value = "af_heart")]
    pub voice: String,
    /// Speaking rate, 0.5–2.0.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f32,
    /// Output WAV file; `-` writes to standard output.
    #[arg(short, long, value_name = "OUT.wav")]
    pub output: PathBuf,
    /// Speak the text as it arrives (`-` only: an LLM's output piped in), starting at its
    /// first clause and writing the audio as it goes; to standard output (`-o -`) as a WAV
    /// stream another program can play while it is written (`| aplay`, `| ffplay -`).
    #[arg(long)]
    pub follow: bool,
    /// Sample format of the WAV file.
    #[arg(long, value_enum, default_value = "pcm16")]
    pub format: WavFormat,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum WavFormat {
    Pcm16,
    Pcm24,
    F32,
}

pub fn run(args: &SayArgs) -> anyhow::Result<()> {
    if args.follow && args.text != "-" {
        return Err(BadInput(
            "--follow speaks standard input as it arrives: give `-` as the text".into(),
        )
        .into());
    }
    let text = if args.follow {
        String::new()
    } else if args.text == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| BadInput(format!("reading standard input: {e}")))?;
        s
    } else {
        args.text.clone()
    };
    // A library voice (blend or matched, by name) first, then a stock voice or recipe.
    let saved = match super::library::open_optional("library voices are unavailable") {
        Some(lib) => engine::voicematch::resolve::library_voice(&lib, &args.voice)
            .map_err(super::library::user_error)?,
        None => None,
    };
    let request = match &saved {
        Some(v) => SpeechRequest {
            voice: v.spec.clone(),
            speed: args.speed,
            language: None,
        },
        None => SpeechRequest::new(&args.voice, args.speed)?,
    };
    // A stock voice handed text in another language reads it with its own sounds: said here.
    if saved.is_none() {
        let heard = crate::server::input_language::heard(&text, &args.voice, false);
        if let Some(crate::server::input_language::Heard::Mismatch(note)) = heard {
            eprintln!("warning: {note}");
        }
    }
    // Before the model loads: a folder, a missing or read-only folder is refused now, not
    // after the synthesis; a device or a FIFO is written to, never renamed over.
    let output = super::output::check(&args.output, &[])?;
    super::output::sweep_leftovers(&args.output);
    if args.follow && matches!(output, Output::Stream(_)) {
        return Err(BadInput(format!(
            "{}: --follow writes a file or standard output (-o -), not a device or FIFO",
            output.describe()
        ))
        .into());
    }
    // A Piper voice needs no Kokoro: it is loaded only if something asks for it.
    let engine = if saved.as_ref().is_some_and(|v| v.piper.is_some()) {
        super::models::load_engine_on_demand(&args.engine)?
    } else {
        super::models::load_engine(&args.engine)?
    };
    if let Some(v) = &saved {
        v.register(&engine);
    }
    if args.follow {
        return super::say_follow::run(args, &engine, request);
    }
    let format = match args.format {
        WavFormat::Pcm16 => SampleFormat::Pcm16,
        WavFormat::Pcm24 => SampleFormat::Pcm24,
        WavFormat::F32 => SampleFormat::Float32,
    };
    let started = Instant::now();
    // Offline: whole segments, exactly as the reference computes them (a file is the goal).
    let mut stream = engine.submit_text(&text, request, Mode::Offline)?;
    let mut first_audio = None;
    let mut samples = 0usize;
    let to_stdout = output == Output::Stdout;
    let target = &args.output;
    // A stream (FIFO, device) is written whole from a private temporary once complete.
    let scratch = match output {
        Output::Stream(_) => Some(
            tempfile::Builder::new()
                .prefix(&engine::scratch::prefix("say"))
                .tempdir()?,
        ),
        Output::File(_) | Output::Stdout => None,
    };
    let part = scratch
        .as_ref()
        .map_or_else(|| part_path(target), |d| d.path().join("say.wav"));
    let mut sink: Box<dyn WriteSeek> = if to_stdout {
        Box::new(SeekableStdout::default())
    } else {
        Box::new(BufWriter::new(fs_err::File::create(&part).map_err(
            |e| BadInput(format!("cannot write {}: {e}", target.display())),
        )?))
    };
    let result = (|| -> anyhow::Result<()> {
        let mut wav = WavWriter::new(&mut sink, SAMPLE_RATE, 1, format)?;
        while let Some(event) = stream.blocking_next() {
            let chunk = match event {
                StreamEvent::Audio { samples, .. } => samples,
                StreamEvent::Failed(e) => return Err(e.into()),
            };
            first_audio.get_or_insert_with(|| started.elapsed());
            samples += chunk.len();
            wav.write(&chunk)?;
        }
        wav.finish()?;
        Ok(())
    })();
    if let Err(e) = result {
        drop(sink);
        let _ = std::fs::remove_file(&part);
        return Err(e);
    }
    sink.flush()?;
    drop(sink);
    match &output {
        Output::File(_) => {
            fs_err::rename(&part, target).context("moving the finished file into place")?;
        }
        Output::Stream(_) => output.copy_from(&part)?,
        Output::Stdout => {}
    }
    let elapsed = started.elapsed().as_secs_f64();
    let audio_s = samples as f64 / f64::from(SAMPLE_RATE);
    let ttfa = first_audio.map_or(0.0, |d| d.as_secs_f64());
    eprintln!(
        "wrote {} ({audio_s:.2} s of audio in {elapsed:.2} s, xRT {:.2}, first audio after {ttfa:.2} s)",
        if to_stdout { "standard output".to_owned() } else { target.display().to_string() },
        audio_s / elapsed.max(1e-9)
    );
    Ok(())
}

pub(super) fn part_path(target: &std::path::Path) -> PathBuf {
    let name = target
        .file_name()
        .map_or_else(|| "out.wav".into(), |n| n.to_string_lossy().into_owned());
    target.with_file_name(format!("{}{name}.part", engine::scratch::prefix("say")))
}

trait WriteSeek: Write + std::io::Seek {}
impl<T: Write + std::io::Seek> WriteSeek for T {}

/// Standard output cannot seek, so the WAV is assembled in memory and written on flush.
#[derive(Default)]
struct SeekableStdout {
    buf: std::io::Cursor<Vec<u8>>,
}

impl Write for SeekableStdout {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.write(data)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        out.write_all(self.buf.get_ref())?;
        self.buf.get_mut().clear();
        self.buf.set_position(0);
        out.flush()
    }
}

impl std::io::Seek for SeekableStdout {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.buf.seek(pos)
    }
}
