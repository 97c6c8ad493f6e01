//! `banter triton repo DIR`: a Triton Inference Server model repository serving this Banter's
//! engine, so `tritonserver` can be started on it at once.
//!
//! It writes `DIR/models/banter/config.pbtxt` (model `banter` of backend `banter`: decoupled,
//! the tensors of `triton_wire::protocol`, the instance count asked for, and the absolute
//! path of the model store this `banter` uses, so the weights are never copied), the version
//! folder Triton needs, and copies the backend `libtriton_banter.so` into
//! `DIR/backends/banter/`. Every file is written under a temporary name and renamed, and a
//! `models/banter` this command did not write is never overwritten.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// The first line of every config this command writes: how it knows a folder is its own.
const MARKER: &str = "# Written by `banter triton repo`";
const LIBRARY: &str = "libtriton_banter.so";

#[derive(Debug, clap::Subcommand)]
pub enum TritonCommand {
    /// Write a Triton model repository (model `banter`) and the backend into DIR.
    Repo(RepoArgs),
}

#[derive(Debug, clap::Args)]
pub struct RepoArgs {
    /// The repository folder (created; DIR/models and DIR/backends go in it).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Model instances, each with its own engine (model thread) on the CPU.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub instances: u32,
    /// The backend library to copy (default: libtriton_banter.so beside this banter).
    #[arg(long, value_name = "PATH")]
    pub backend: Option<PathBuf>,
    /// Model folder (default: $BANTER_MODEL_DIR or $XDG_DATA_HOME/banter/models).
    #[arg(long, value_name = "DIR")]
    pub models: Option<PathBuf>,
}

pub fn run(cmd: &TritonCommand) -> anyhow::Result<()> {
    match cmd {
        TritonCommand::Repo(args) => repo(args),
    }
}

fn repo(args: &RepoArgs) -> anyhow::Result<()> {
    // The store is only named here, never fetched: the server's machine may fetch it later.
    let store = match &args.models {
        Some(dir) => engine::assets::ModelStore::at(dir),
        None => engine::assets::ModelStore::open_default()?,
    };
    let store_dir = std::path::absolute(store.root())
        .with_context(|| format!("resolving {}", store.root().display()))?;
    if !store.is_ready() {
        eprintln!(
            "warning: the model store {} is not complete yet; run `banter models fetch` before \
             starting tritonserver",
            store_dir.display()
        );
    }
    let library = backend_library(args.backend.as_deref())?;
    let dir = std::path::absolute(&args.dir)
        .with_context(|| format!("resolving {}", args.dir.display()))?;
    let model_dir = dir.join("models").join("banter");
    let config_path = model_dir.join("config.pbtxt");
    if model_dir.exists() && !written_by_us(&config_path) {
        bail!(
            "{} exists and was not written by `banter triton repo`; remove it or choose another DIR",
            model_dir.display()
        );
    }
    let store_text = store_dir
        .to_str()
        .context("the model store's path is not UTF-8, which config.pbtxt cannot hold")?;
    fs_err::create_dir_all(model_dir.join("1"))?;
    write_atomic(
        &config_path,
        config_pbtxt(args.instances, store_text).as_bytes(),
    )?;
    write_atomic(
        &model_dir.join("1").join("README.txt"),
        format!(
            "Model `banter` has no files of its own here: the backend reads Kokoro's weights \
             from the Banter model store named by the `model_store` parameter in \
             ../config.pbtxt ({store_text}).\n"
        )
        .as_bytes(),
    )?;
    let backend_dir = dir.join("backends").join("banter");
    fs_err::create_dir_all(&backend_dir)?;
    let bytes = fs_err::read(&library)?;
    write_atomic(&backend_dir.join(LIBRARY), &bytes)?;
    println!(
        "Wrote {} ({} instance{}, model store {store_text}) and {}.",
        config_path.display(),
        args.instances,
        if args.instances == 1 { "" } else { "s" },
        backend_dir.join(LIBRARY).display()
    );
    println!("Start Triton (2.51 or later) on it with:");
    println!(
        "  tritonserver --model-repository {} --backend-directory {} --allow-gpu-metrics=false",
        dir.join("models").display(),
        dir.join("backends").display()
    );
    Ok(())
}

/// `--backend`, else the library beside this executable (cargo puts both in target/<profile>).
fn backend_library(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = given {
        if !path.is_file() {
            bail!("--backend {}: no such file", path.display());
        }
        return Ok(path.to_owned());
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(LIBRARY)));
    match beside {
        Some(path) if path.is_file() => Ok(path),
        _ => bail!(
            "{LIBRARY} is not beside this banter; build it with `cargo build -p triton-backend \
             --release` (it lands in target/release/) or give its path with --backend PATH"
        ),
    }
}

fn written_by_us(config: &Path) -> bool {
    fs_err::read_to_string(config).is_ok_and(|text| text.starts_with(MARKER))
}

/// Writes `path` under a temporary name in its folder, then renames it into place.
fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    fs_err::write(&tmp, bytes)?;
    fs_err::rename(&tmp, path)?;
    Ok(())
}

/// The model's configuration: the tensors of `triton_wire::protocol`. Every input is optional
/// to Triton because the words (TEXT or PHONEMES) and the voice (VOICE or STYLE) each come in
/// one of two tensors; the backend's parser refuses a request without one of each, naming it.
fn config_pbtxt(instances: u32, store: &str) -> String {
    const INPUTS: [(&str, &str, &str); 7] = [
        ("TEXT", "TYPE_STRING", "1"),
        ("PHONEMES", "TYPE_STRING", "-1"),
        ("VOICE", "TYPE_STRING", "1"),
        ("STYLE", "TYPE_FP32", "510, 256"),
        ("SPEED", "TYPE_FP32", "1"),
        ("SAMPLE_RATE", "TYPE_INT32", "1"),
        ("WHOLE", "TYPE_BOOL", "1"),
    ];
    const OUTPUTS: [(&str, &str, &str); 4] = [
        ("AUDIO", "TYPE_FP32", "-1"),
        ("SEGMENT", "TYPE_INT32", "1"),
        ("SEGMENT_END", "TYPE_BOOL", "1"),
        ("DURATIONS", "TYPE_INT32", "-1"),
    ];
    let tensor = |(name, ty, dims): &(&str, &str, &str), optional: bool| {
        let optional = if optional { " optional: true" } else { "" };
        format!("  {{ name: \"{name}\" data_type: {ty} dims: [ {dims} ]{optional} }}")
    };
    let inputs: Vec<String> = INPUTS.iter().map(|t| tensor(t, true)).collect();
    let outputs: Vec<String> = OUTPUTS.iter().map(|t| tensor(t, false)).collect();
    let store = store.replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        "{MARKER}; it rewrites this file, so edit a copy.\n\
         name: \"banter\"\n\
         backend: \"banter\"\n\
         max_batch_size: 0\n\
         # one response per audio chunk, then an empty final one\n\
         model_transaction_policy {{ decoupled: true }}\n\
         input [\n{}\n]\n\
         output [\n{}\n]\n\
         # each instance is one Banter engine: one model thread and its scheduler\n\
         instance_group [ {{ count: {instances} kind: KIND_CPU }} ]\n\
         parameters {{ key: \"model_store\" value {{ string_value: \"{store}\" }} }}\n",
        inputs.join(",\n"),
        outputs.join(",\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_names_every_tensor_and_the_store() {
        let text = config_pbtxt(3, "/data/banter \"models\"");
        assert!(text.starts_with(MARKER));
        for name in [
            "TEXT",
            "PHONEMES",
            "VOICE",
            "STYLE",
            "SPEED",
            "SAMPLE_RATE",
            "WHOLE",
        ] {
            assert!(
                text.contains(&format!("name: \"{name}\"")),
                "{name} missing:\n{text}"
            );
        }
        assert_eq!(text.matches("optional: true").count(), 7);
        assert!(text.contains("dims: [ 510, 256 ]"));
        assert!(text.contains("count: 3 kind: KIND_CPU"));
        assert!(text.contains("decoupled: true"));
        assert!(text.contains(r#"string_value: "/data/banter \"models\"""#));
    }

    #[test]
    fn refuses_a_model_folder_it_did_not_write() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join(LIBRARY);
        fs_err::write(&lib, b"not really a library").unwrap();
        let models = dir.path().join("store");
        let args = |repo: &Path| RepoArgs {
            dir: repo.to_owned(),
            instances: 2,
            backend: Some(lib.clone()),
            models: Some(models.clone()),
        };
        let repo_dir = dir.path().join("repo");
        repo(&args(&repo_dir)).unwrap();
        let config = repo_dir.join("models/banter/config.pbtxt");
        assert!(written_by_us(&config));
        assert!(repo_dir.join("models/banter/1/README.txt").is_file());
        assert!(repo_dir.join("backends/banter").join(LIBRARY).is_file());
        repo(&args(&repo_dir)).expect("its own folder is rewritten");
        fs_err::write(&config, "name: \"banter\"\n").unwrap();
        let e = repo(&args(&repo_dir)).unwrap_err().to_string();
        assert!(e.contains("not written by"), "{e}");
    }
}
