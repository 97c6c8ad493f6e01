//! `banter render`: a script in, a finished episode out (audio, captions, chapters, stems).
//!
//! Progress goes to stderr (a live line on a terminal, a line per 10% otherwise). Ctrl-C sets a
//! flag the renderer checks between sentences; it then deletes its temporaries and the command
//! exits with status 130, leaving any earlier file at the target untouched.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use engine::audio::{Codec, OutputFormat, SampleFormat, EPISODE_RATES};
use engine::render::cache::Cached;
use engine::render::{self, CaptionFormat, FromModel, Progress, RenderError, RenderOptions};

use super::output::Output;
use super::script_input::{self, ScriptArgs};
use super::EngineArgs;
use crate::exit::BadInput;

// Command-line flags are bools by nature.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// The script (any supported format); `-` reads standard input.
    pub script: PathBuf,
    /// Output file (default: the script's name with the format's extension); `-` writes the
    /// audio to standard output (no captions or chapters are written then).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Audio format (default: from the output's extension, else wav).
    #[arg(long, value_parser = codec_parser())]
    pub format: Option<Codec>,
    /// Sample format for WAV and FLAC.
    #[arg(long, value_enum, default_value = "s16")]
    pub sample_format: SampleArg,
    /// MP3 bit rate in kbit/s (32–320), or Opus target bit rate (6–256).
    #[arg(long, default_value_t = 128)]
    pub bitrate: u32,
    /// Output sample rate: 24000 (the model's), 44100 or 48000.
    #[arg(long, default_value_t = 24_000, value_parser = parse_rate)]
    pub rate: u32,
    /// Captions beside the audio: srt, vtt, both (one cue per sentence), words (word-timed
    /// vtt and phrase srt) or none.
    #[arg(long, value_enum, default_value = "srt")]
    pub captions: CaptionsArg,
    /// Also write one file per speaker (`OUT-STEM.SPEAKER.EXT`), and the music beds and
    /// sound effects (`OUT-STEM.music.EXT`, `OUT-STEM.sfx.EXT`) when the script has sound
    /// cues; at the mix's gain, so the stems add up to the episode.
    #[arg(long)]
    pub stems: bool,
    /// Do not write `OUT-STEM.chapters.json`.
    #[arg(long)]
    pub no_markers: bool,
    /// Integrated loudness target in LUFS.
    #[arg(long, default_value_t = render::TARGET_LUFS, allow_negative_numbers = true)]
    pub loudness: f64,
    /// Title tag (default: the script's title, else the file name).
    #[arg(long)]
    pub title: Option<String>,
    /// Artist tag (default: the speakers' names).
    #[arg(long)]
    pub artist: Option<String>,
    /// Render every sentence with the model, neither reading nor filling the render cache.
    #[arg(long)]
    pub no_cache: bool,
    /// After rendering, score every line against its speaker's voice and list the lines that
    /// do not sound like it (needs the markers file).
    #[arg(long)]
    pub check_voices: bool,
    #[command(flatten)]
    pub script_args: ScriptArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// `--format`: the engine's codec names (`wav`, `flac`, `mp3`, `opus`), listed in `--help`.
fn codec_parser() -> impl clap::builder::TypedValueParser<Value = Codec> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Codec::ALL.map(Codec::name))
        .try_map(|name: String| Codec::from_name(&name).ok_or("not an audio format"))
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SampleArg {
    S16,
    S24,
    F32,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum CaptionsArg {
    Srt,
    Vtt,
    Both,
    /// Word timing: `WebVTT` with each word's start marked, SRT with one cue per short phrase.
    Words,
    None,
}

fn parse_rate(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(r) if EPISODE_RATES.contains(&r) => Ok(r),
        _ => Err(format!(
            "{s}: the rate must be one of {}",
            EPISODE_RATES.map(|r| r.to_string()).join(", ")
        )),
    }
}

pub fn run(args: &RenderArgs) -> anyhow::Result<()> {
    let mut episode = script_input::load(&args.script, &args.script_args, None)?;
    for w in &episode.warnings {
        eprintln!("{}: warning: {}", episode.locate(w.position), w.message);
    }
    // An explicit --format wins; else the output's extension says (`-o episode.mp3`); else WAV.
    let codec = args
        .format
        .or_else(|| args.output.as_deref().and_then(Codec::from_path))
        .unwrap_or(Codec::Wav);
    let format = output_format(codec, args)?;
    let target =
        match &args.output {
            Some(p) => p.clone(),
            None if args.script.as_os_str() == "-" => return Err(BadInput(
                "reading the script from standard input needs -o OUT (or -o - for standard output)"
                    .into(),
            )
            .into()),
            None => default_target(&args.script, format.extension()),
        };
    // Before any work: never the script itself, never a rename over a device or a FIFO.
    let output = super::output::check(&target, &[args.script.as_path()])?;
    super::output::sweep_leftovers(&target);
    let to_stdout = output.is_stream();
    if matches!(output, Output::Stream(_)) && !args.no_markers {
        eprintln!(
            "note: {} is not a regular file: captions, chapters and stems are not written",
            output.describe()
        );
    }
    // A stream gets the finished file from a private temporary folder (removed on every
    // exit, error or not); a file is rendered beside its target and renamed into place.
    let scratch = if to_stdout {
        Some(
            tempfile::Builder::new()
                .prefix(&engine::scratch::prefix("render"))
                .tempdir()?,
        )
    } else {
        None
    };
    let dest = match &scratch {
        Some(dir) => dir.path().join(format!("episode.{}", format.extension())),
        None => target.clone(),
    };
    if args.check_voices && (to_stdout || args.no_markers) {
        return Err(BadInput(
            "--check-voices reads the markers file: drop --no-markers and write to a file".into(),
        )
        .into());
    }
    let options = RenderOptions {
        format,
        sample_rate: args.rate,
        target_lufs: args.loudness,
        captions: if to_stdout {
            vec![]
        } else {
            match args.captions {
                CaptionsArg::Srt => vec![CaptionFormat::Srt],
                CaptionsArg::Vtt => vec![CaptionFormat::Vtt],
                CaptionsArg::Both => vec![CaptionFormat::Srt, CaptionFormat::Vtt],
                CaptionsArg::Words => vec![CaptionFormat::WordSrt, CaptionFormat::WordVtt],
                CaptionsArg::None => vec![],
            }
        },
        markers: !args.no_markers && !to_stdout,
        stems: args.stems && !to_stdout,
        // Sound cues name files relative to the script (standard input: the current folder).
        sounds_dir: Some(sounds_dir(&args.script)),
        title: args.title.clone(),
        artist: args.artist.clone(),
        ..RenderOptions::default()
    };
    let engine = super::models::load_engine(&args.engine)?;
    let library = super::library::open_optional("rendering without the render cache");
    if let Some(lib) = &library {
        let rewritten = engine::voicematch::resolve::resolve_cast(lib, &engine, &mut episode)
            .map_err(super::library::user_error)?;
        for (speaker, name, recipe) in rewritten {
            eprintln!("{speaker}: library voice {name} = {recipe}");
        }
    }
    let cached = match library {
        Some(lib) if !args.no_cache => Some(Cached::new(FromModel, lib)),
        _ => None,
    };
    let source: &dyn render::SentenceSource = match &cached {
        Some(c) => c,
        None => &FromModel,
    };
    // Temporaries are hidden dot-files beside the target, never the target itself.
    let cancel = super::cancel_on_ctrl_c("stopping after the current sentence…")?;
    let mut meter = ProgressLine::new();
    let result = render::render_episode(
        &engine,
        source,
        &episode,
        &dest,
        &options,
        &cancel,
        &mut |p| meter.show(p),
    );
    meter.done();
    let report = match result {
        Ok(r) => r,
        Err(RenderError::Cancelled) => {
            return Err(crate::exit::Stopped("render cancelled; nothing was written".into()).into())
        }
        Err(e) if e.is_input_error() => return Err(BadInput(e.to_string()).into()),
        Err(e) => return Err(e.into()),
    };
    for notice in &report.notices {
        eprintln!("warning: {notice}");
    }
    if to_stdout {
        output.copy_from(&dest)?;
    } else {
        for path in &report.outputs {
            eprintln!("wrote {}", path.display());
        }
    }
    let servers = engine.remote_spoken();
    if !servers.is_empty() {
        let each: Vec<String> = servers
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        eprintln!("segments spoken remotely: {}", each.join(", "));
    }
    eprintln!(
        "{} lines, {} sentences, {:.1} s of audio in {:.1} s (xRT {:.2}); loudness {} LUFS, true peak {:.1} dBTP",
        report.lines,
        report.sentences,
        report.duration_secs,
        report.total.as_secs_f64(),
        report.xrt(),
        report
            .loudness_lufs
            .map_or_else(|| "n/a".into(), |l| format!("{l:.1}")),
        report.true_peak_dbtp
    );
    if let Some(c) = &cached {
        let n = c.counts();
        eprintln!(
            "render cache: {} hits, {} misses; model time {:.1} s, pass one {:.1} s{}",
            n.hits,
            n.misses,
            n.model_time.as_secs_f64(),
            report.compute.as_secs_f64(),
            if n.errors > 0 {
                format!(" ({} cache errors, see the log)", n.errors)
            } else {
                String::new()
            }
        );
    }
    if args.check_voices {
        check_voices(args, &engine, cached.map(|c| c.into_parts().1), &dest)?;
    }
    Ok(())
}

/// `--check-voices`: every line scored against its voice; the outliers listed.
fn check_voices(
    args: &RenderArgs,
    engine: &engine::Engine,
    library: Option<engine::library::Library>,
    dest: &Path,
) -> anyhow::Result<()> {
    use engine::voicematch::consistency;
    let library = match library {
        Some(l) => l,
        None => super::library::open()?,
    };
    let store = match &args.engine.models {
        Some(d) => engine::assets::ModelStore::at(d),
        None => engine::assets::ModelStore::open_default()?,
    };
    let embedder = super::library::load_embedder(&store, engine)?;
    let markers = consistency::markers_beside(dest);
    let report = consistency::check_render(&embedder, engine, &library, dest, &markers)
        .map_err(super::library::user_error)?;
    let scored = report
        .scores
        .iter()
        .filter(|s| s.similarity.is_some())
        .count();
    eprintln!(
        "voice check: {scored} of {} lines scored (shorter than {:.0} s are skipped); median \
         similarity {:.3}, flagging below {:.3}; {} flagged",
        report.scores.len(),
        consistency::MIN_LINE_SECS,
        report.median,
        report.threshold,
        report.flagged.len()
    );
    if !report.from_stems.is_empty() {
        eprintln!(
            "voice check: {} lines with music or effects under them were scored from their speakers' stems",
            report.from_stems.len()
        );
    }
    if let Some(&first) = report.with_sound.first() {
        eprintln!(
            "voice check: {} lines have music or effects under them and were scored with it in              (the first at {}:{}); render with --stems to score the voices alone",
            report.with_sound.len(),
            episode_source(args),
            report.scores[first].line.source_line
        );
    }
    for &i in &report.flagged {
        let s = &report.scores[i];
        println!(
            "{}:{}: {} ({}) at {}–{} does not sound like its voice: similarity {:.3}",
            episode_source(args),
            s.line.source_line,
            s.line.speaker,
            s.line.voice,
            clock(s.line.start),
            clock(s.line.end),
            s.similarity.unwrap_or(0.0)
        );
    }
    Ok(())
}

/// The folder a script's sound cues are named from: the script's own, or the current one for
/// standard input.
fn sounds_dir(script: &Path) -> PathBuf {
    match script.parent() {
        Some(p) if script.as_os_str() != "-" && !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn episode_source(args: &RenderArgs) -> String {
    if args.script.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        args.script.display().to_string()
    }
}

/// The engine's format for `codec` with the command's settings; the engine's rules decide
/// (FLAC stores integers, each lossy codec's bit rates, Opus has no 44.1 kHz).
fn output_format(codec: Codec, args: &RenderArgs) -> anyhow::Result<OutputFormat> {
    let sample = match args.sample_format {
        SampleArg::S16 => SampleFormat::Pcm16,
        SampleArg::S24 => SampleFormat::Pcm24,
        SampleArg::F32 => SampleFormat::Float32,
    };
    let format = OutputFormat::new(codec, sample, args.bitrate)
        .map_err(|e| BadInput(format!("--format {}: {e}", codec.name())))?;
    codec
        .check_rate(args.rate)
        .map_err(|e| BadInput(format!("--rate {}: {e}", args.rate)))?;
    Ok(format)
}

/// The progress display: a line rewritten in place on a terminal, sparse lines otherwise.
struct ProgressLine {
    tty: bool,
    last_tenth: i64,
    shown: bool,
}

impl ProgressLine {
    fn new() -> Self {
        Self {
            tty: std::io::stderr().is_terminal(),
            last_tenth: -1,
            shown: false,
        }
    }

    fn show(&mut self, p: &Progress) {
        let pct = p.fraction() * 100.0;
        let eta = p
            .eta()
            .map_or_else(|| "…".into(), |d| clock(d.as_secs_f64()));
        let text = format!(
            "[{pct:5.1}%] line {}/{} · {} of audio · ETA {eta}",
            p.line + 1,
            p.lines,
            clock(p.audio_secs)
        );
        if self.tty {
            eprint!("\r{text}\x1b[K");
            self.shown = true;
        } else {
            let tenth = (pct / 10.0).floor() as i64;
            if tenth > self.last_tenth {
                self.last_tenth = tenth;
                eprintln!("{text}");
            }
        }
    }

    fn done(&self) {
        if self.tty && self.shown {
            eprintln!();
        }
    }
}

fn clock(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// The audio's name when no `-o` is given: the script's, with the format's extension. A
/// subtitle file used as a script (`ep.srt`) would have its captions written over it, so its
/// episode is `ep.episode.wav` (captions `ep.episode.srt`), and the note says where.
fn default_target(script: &Path, extension: &str) -> PathBuf {
    let is_subtitles = script
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("srt") || e.eq_ignore_ascii_case("vtt"));
    if is_subtitles {
        let target = engine::render::beside(script, "episode", extension);
        eprintln!(
            "note: {} is a subtitle file; the episode goes to {} so its captions do not replace it",
            script.display(),
            target.display()
        );
        target
    } else {
        script.with_extension(extension)
    }
}
