//! Reading a script the way every command does: file or stdin, parse options from flags, cast
//! overrides, the pronunciation lexicon, and voice validation, with errors that name the place.

use std::io::Read;
use std::path::{Path, PathBuf};

use engine::script::{
    Episode, Lexicon, ParseOptions, ScriptFormat, VoiceSource, ENGLISH_FEMALE, ENGLISH_MALE,
    OTHER_LANGUAGE_FEMALE, OTHER_LANGUAGE_MALE,
};

use crate::exit::BadInput;

/// Flags that change how a script is read.
#[derive(Debug, Clone, clap::Args)]
pub struct ScriptArgs {
    /// Read the script as this format instead of detecting it
    /// (name, vibevoice, dia, podcastfy, markdown, play, json, prose).
    #[arg(long = "script-format", value_name = "FORMAT")]
    pub script_format: Option<String>,
    /// Speak stage directions instead of dropping them.
    #[arg(long)]
    pub keep_stage_directions: bool,
    /// Let automatically cast speakers share voices once every distinct one is taken.
    #[arg(long)]
    pub reuse_voices: bool,
    /// Let automatic casting use the non-English stock voices.
    #[arg(long)]
    pub any_language_voices: bool,
    /// Give SPEAKER this voice (stock name or blend), overriding the script's cast.
    #[arg(long = "cast", value_name = "NAME=VOICE")]
    pub cast: Vec<String>,
    /// Pronunciation lexicon (`word: /ipa/` or `word: respelling`, one per line). Default:
    /// `SCRIPT-STEM.lexicon` beside the script, if there is one.
    #[arg(long, value_name = "FILE")]
    pub lexicon: Option<PathBuf>,
}

/// Reads and parses `path` (`-` = standard input), applying `args`. `format` overrides
/// `args.script_format` when given (for `script check --format`).
pub fn load(path: &Path, args: &ScriptArgs, format: Option<&str>) -> anyhow::Result<Episode> {
    let is_stdin = path.as_os_str() == "-";
    let name = if is_stdin {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    };
    let bytes = if is_stdin {
        let mut b = Vec::new();
        std::io::stdin()
            .read_to_end(&mut b)
            .map_err(|e| BadInput(format!("reading standard input: {e}")))?;
        b
    } else {
        std::fs::read(path).map_err(|e| BadInput(format!("{name}: cannot read the script: {e}")))?
    };
    let format = match format.or(args.script_format.as_deref()) {
        Some(f) => Some(
            f.parse::<ScriptFormat>()
                .map_err(|e| BadInput(format!("--format {f}: {e}")))?,
        ),
        None => None,
    };
    let options = ParseOptions {
        format,
        keep_stage_directions: args.keep_stage_directions,
        reuse_voices: args.reuse_voices,
        any_language_voices: args.any_language_voices,
    };
    let mut episode =
        Episode::parse_bytes(&name, &bytes, &options).map_err(|e| BadInput(e.to_string()))?;
    let saved = library_voice_names();
    for entry in &args.cast {
        recast(&mut episode, entry, &saved)?;
    }
    let lexicon_path = args.lexicon.clone().or_else(|| {
        let beside = path.with_extension("lexicon");
        (!is_stdin && beside.is_file()).then_some(beside)
    });
    if let Some(lex) = lexicon_path {
        let text = std::fs::read_to_string(&lex)
            .map_err(|e| BadInput(format!("{}: cannot read the lexicon: {e}", lex.display())))?;
        let lexicon = Lexicon::parse(&lex.display().to_string(), &text)
            .map_err(|e| BadInput(e.to_string()))?;
        eprintln!(
            "using {} pronunciation(s) from {}",
            lexicon.len(),
            lex.display()
        );
        episode.apply_lexicon(&lexicon);
    }
    episode
        .validate_voices(&|v| is_stock_voice(v) || saved.iter().any(|n| n == v))
        .map_err(|e| BadInput(e.to_string()))?;
    Ok(episode)
}

/// The names of the blends and matched voices saved in the voice library (empty when it cannot
/// be opened: library voices are then unknown, and say so when used).
pub fn library_voice_names() -> Vec<String> {
    engine::library::Library::open_default()
        .and_then(|l| l.list_voices())
        .map(|voices| {
            voices
                .into_iter()
                .filter(|v| v.kind != engine::library::VoiceKind::Stock)
                .map(|v| v.name)
                .collect()
        })
        .unwrap_or_default()
}

/// Applies one `--cast NAME=VOICE`; VOICE may be a library voice (any name) or a stock spec.
fn recast(episode: &mut Episode, entry: &str, saved: &[String]) -> anyhow::Result<()> {
    let Some((name, voice)) = entry.split_once('=') else {
        return Err(BadInput(format!("--cast {entry}: expected NAME=VOICE")).into());
    };
    let (name, voice) = (name.trim(), voice.trim());
    let is_saved = saved.iter().any(|n| n == voice);
    let spec = if is_saved {
        None
    } else {
        Some(
            engine::voice::VoiceSpec::parse(voice)
                .map_err(|e| BadInput(format!("--cast {entry}: {e}")))?,
        )
    };
    let terms = spec.as_ref().map_or(&[][..], |s| s.terms.as_slice());
    if let Some(t) = terms.iter().find(|t| !is_stock_voice(&t.voice)) {
        return Err(BadInput(format!(
            "--cast {entry}: unknown voice \"{}\"; `banter voices` lists them",
            t.voice
        ))
        .into());
    }
    let speakers: Vec<String> = episode
        .cast
        .members
        .iter()
        .map(|m| m.name.clone())
        .collect();
    let Some(found) = episode.cast.get(name).map(|m| m.name.clone()) else {
        return Err(BadInput(format!(
            "--cast {entry}: {} has no speaker \"{name}\"; its speakers are: {}",
            episode.source,
            speakers.join(", ")
        ))
        .into());
    };
    for member in &mut episode.cast.members {
        if member.name == found {
            voice.clone_into(&mut member.voice);
            member.source = VoiceSource::Automatic;
            member.guess = None;
        }
    }
    Ok(())
}

/// One of Kokoro v1.0's 54 stock voices (a name that merely looks like one, `af_nobody`, is not).
pub fn is_stock_voice(name: &str) -> bool {
    [
        &ENGLISH_FEMALE[..],
        &ENGLISH_MALE[..],
        &OTHER_LANGUAGE_FEMALE[..],
        &OTHER_LANGUAGE_MALE[..],
    ]
    .iter()
    .any(|list| list.contains(&name))
}
