//! Packed bfloat16 weights kept between starts, so a start reads panels instead of making them.
//!
//! Packing is a per-start conversion: every start read 231 MB of f32 convolution and dense
//! weights from the checkpoint, only to turn them into 116 MB of bfloat16 panels and drop
//! them. Reading, faulting in and converting those weights was most of a model load
//! (`banter say "Hi."` spends more time loading than speaking). The first start on a machine
//! writes the panels it packed to one file; later starts read them back and never read those
//! f32 tensors at all (the model's weight loader hands out placeholders for them).
//!
//! The file is derived data, kept in the user's cache directory (`BANTER_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/banter`) and keyed by a fingerprint of everything the panels depend on:
//! the checkpoint (its length, modification time and safetensors header), the kernel, whether
//! this CPU has AMX, the panel geometry and this format's version. A fingerprint that differs
//! names another file, which is rebuilt; older files are deleted when a new one is written.
//! It is written to a temporary name and renamed, so a crash mid-write leaves no half file
//! under the real name, and every panel carries a CRC-32 checked on reading (about 10 ms): a
//! damaged file is reported, deleted and rebuilt, never run.
//! [`bf16::PackedWeights::from_parts`] checks the shape invariants the kernels' `unsafe`
//! code relies on before any panel is used.
//!
//! The cache is reached through a scope on the loading thread ([`reading`], [`recording`])
//! rather than through every layer's constructor: the layers only name their weights
//! ([`super::ProductWeights::named`]), and `use_bf16` asks [`lookup`] or tells [`record`].
//! Outside a scope both do nothing.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::aligned::Aligned;
use super::bf16::{self, Format};
use super::{Bf16Weights, CpuKernel, Stored};

const MAGIC: &[u8; 8] = b"BNTRPACK";
/// Bumped whenever the panels' layout, this file's, or the format a kernel packs a layer in
/// changes (3: the decoder body beside int8 in bfloat16). [`lookup`] also refuses panels of
/// another format, so a file that escaped a bump is rebuilt rather than run.
const VERSION: u32 = 3;
/// Magic, version, fingerprint, entry count, table length, table CRC.
const HEADER: usize = 8 + 4 + 32 + 4 + 8 + 4;
/// Largest table accepted (the real one is a few KB).
const MAX_TABLE: u64 = 1 << 20;
/// Panels start on a cache line in the file as in memory.
const ALIGN: u64 = 64;
/// Age past which a temporary file is taken for a crashed start's, not a write in progress.
const STALE: std::time::Duration = std::time::Duration::from_mins(10);

/// The fingerprint of the panels `kernel` packs from the checkpoint at `model` on this CPU.
///
/// # Errors
///
/// If the checkpoint cannot be read.
pub fn fingerprint(model: &Path, kernel: CpuKernel) -> io::Result<[u8; 32]> {
    let mut file = File::open(model)?;
    let meta = file.metadata()?;
    let mut len = [0u8; 8];
    file.read_exact(&mut len)?;
    let header_len = u64::from_le_bytes(len).min(16 << 20);
    let mut header = Vec::new();
    file.take(header_len).read_to_end(&mut header)?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let mut h = Sha256::new();
    h.update(VERSION.to_le_bytes());
    h.update(format!(
        "{kernel:?} amx={} fma={} int8={}",
        super::tiles_available(),
        super::fma::preferred(),
        super::int8::supported()
    ));
    h.update(bf16::geometry());
    h.update(meta.len().to_le_bytes());
    h.update(modified.to_le_bytes());
    h.update(&header);
    Ok(h.finalize().into())
}

/// The cache file's name for `kernel`'s panels with this fingerprint. Each kernel keeps its
/// own file, so switching `BANTER_PRECISION` back and forth does not rebuild them.
#[must_use]
pub fn file_name(kernel: CpuKernel, fingerprint: &[u8; 32]) -> String {
    let mut first = [0u8; 8];
    first.copy_from_slice(&fingerprint[..8]);
    let hex = u64::from_be_bytes(first);
    format!("{}{hex:016x}.packed", prefix(kernel))
}

fn prefix(kernel: CpuKernel) -> &'static str {
    match kernel {
        CpuKernel::Tiles => "kokoro-tiles-",
        CpuKernel::Vectors => "kokoro-vectors-",
        CpuKernel::F32 => "kokoro-fma-",
        CpuKernel::Int8 => "kokoro-int8-",
    }
}

fn invalid(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

/// One table entry: a layer's panels and where they lie in the file.
struct Entry {
    name: String,
    taps: usize,
    c_in: usize,
    c_out: usize,
    format: Format,
    /// Values (`u32`: a pair of bfloat16, or an f32).
    len: usize,
    offset: u64,
    crc: u32,
}

/// Writes `packed` (names and panels) as `kernel`'s cache for `fingerprint` in `dir`, deleting
/// that kernel's files of other fingerprints there; returns the file's path.
///
/// # Errors
///
/// If the directory or the file cannot be written; nothing is left under the file's name then.
pub fn write(
    dir: &Path,
    kernel: CpuKernel,
    fingerprint: &[u8; 32],
    packed: &[(String, Arc<Bf16Weights>)],
) -> io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let mut table = Vec::new();
    let mut offsets = Vec::with_capacity(packed.len());
    // The table's length depends only on the names, so the data offsets can follow it.
    let table_len: usize = packed
        .iter()
        .map(|(name, _)| 2 + name.len() + 4 * 3 + 1 + 8 + 8 + 4)
        .sum();
    let mut at = (HEADER + table_len) as u64;
    for (name, w) in packed {
        let p = w.packed();
        let name_len = u16::try_from(name.len()).map_err(|_| invalid("tensor name too long"))?;
        at = at.next_multiple_of(ALIGN);
        offsets.push(at);
        table.extend_from_slice(&name_len.to_le_bytes());
        table.extend_from_slice(name.as_bytes());
        for v in [p.taps(), p.c_in(), p.c_out()] {
            let v = u32::try_from(v).map_err(|_| invalid("layer too large"))?;
            table.extend_from_slice(&v.to_le_bytes());
        }
        table.push(match p.format() {
            Format::Bf16 => 0,
            Format::Tiles => 1,
            Format::F32 => 2,
            Format::I8 => 3,
        });
        table.extend_from_slice(&(p.data().len() as u64).to_le_bytes());
        table.extend_from_slice(&at.to_le_bytes());
        table.extend_from_slice(&crc32fast::hash(bytemuck::cast_slice(p.data())).to_le_bytes());
        at += p.data().len() as u64 * 4;
    }
    debug_assert_eq!(table.len(), table_len);
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&VERSION.to_le_bytes());
    header.extend_from_slice(fingerprint);
    let count = u32::try_from(packed.len()).map_err(|_| invalid("too many layers"))?;
    header.extend_from_slice(&count.to_le_bytes());
    header.extend_from_slice(&(table.len() as u64).to_le_bytes());
    header.extend_from_slice(&crc32fast::hash(&table).to_le_bytes());

    let path = dir.join(file_name(kernel, fingerprint));
    let tmp = dir.join(format!(
        "{}.{}.tmp",
        file_name(kernel, fingerprint),
        std::process::id()
    ));
    let written = (|| {
        let mut file = io::BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        file.write_all(&header)?;
        file.write_all(&table)?;
        let mut pos = (HEADER + table.len()) as u64;
        for ((_, w), &offset) in packed.iter().zip(&offsets) {
            file.write_all(&vec![0u8; (offset - pos) as usize])?;
            let data: &[u8] = bytemuck::cast_slice(w.packed().data());
            file.write_all(data)?;
            pos = offset + data.len() as u64;
        }
        // No fsync: a file a crash left damaged fails its CRCs and is rebuilt, like any other.
        file.into_inner().map_err(io::IntoInnerError::into_error)?;
        std::fs::rename(&tmp, &path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    // This kernel's files of other fingerprints (another checkpoint or version) are dead, and
    // so is a temporary file a crashed start left behind; one younger than STALE may be
    // another start's write in progress.
    let keep = file_name(kernel, fingerprint);
    if let Ok(listing) = std::fs::read_dir(dir) {
        for entry in listing.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !name.starts_with(prefix(kernel)) || name == keep {
                continue;
            }
            let stale_tmp = name.ends_with(".tmp")
                && entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE);
            if name.ends_with(".packed") || stale_tmp {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    Ok(path)
}

/// Reads the cache at `path` written for `fingerprint`: the packed weights by tensor name.
///
/// # Errors
///
/// `NotFound` if there is no such file; `InvalidData`, naming what, if it is for another
/// fingerprint or damaged in any way (a bad header or table, a CRC mismatch, panels that do
/// not fit their layer); other I/O errors as they come.
pub fn read(path: &Path, fingerprint: &[u8; 32]) -> io::Result<HashMap<String, Arc<Bf16Weights>>> {
    let mut file = File::open(path)?;
    let file_len = file.metadata()?.len();
    let mut header = [0u8; HEADER];
    file.read_exact(&mut header)
        .map_err(|_| invalid("shorter than its header"))?;
    let u32_at =
        |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or_default());
    let u64_at =
        |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
    if &header[..8] != MAGIC {
        return Err(invalid("not a packed-weights cache"));
    }
    if u32_at(&header, 8) != VERSION {
        return Err(invalid(format!("format version {}", u32_at(&header, 8))));
    }
    if header[12..44] != fingerprint[..] {
        return Err(invalid("written for another checkpoint, kernel or CPU"));
    }
    let count = u32_at(&header, 44) as usize;
    let table_len = u64_at(&header, 48);
    if table_len > MAX_TABLE || HEADER as u64 + table_len > file_len {
        return Err(invalid(format!("implausible table length {table_len}")));
    }
    let mut table = vec![0u8; table_len as usize];
    file.read_exact(&mut table)?;
    if crc32fast::hash(&table) != u32_at(&header, 56) {
        return Err(invalid("table CRC mismatch"));
    }
    let entries = parse_table(&table, count, file_len)?;
    let read: io::Result<Vec<(String, Arc<Bf16Weights>)>> = entries
        .into_par_iter()
        .map(|e| {
            let mut data = Aligned::<u32>::zeroed(e.len);
            file.read_exact_at(bytemuck::cast_slice_mut(&mut data), e.offset)?;
            if crc32fast::hash(bytemuck::cast_slice(&data)) != e.crc {
                return Err(invalid(format!("{}: CRC mismatch", e.name)));
            }
            let packed =
                bf16::PackedWeights::from_parts(data, e.taps, e.c_in, e.c_out, e.format)
                    .ok_or_else(|| invalid(format!("{}: panels do not fit the layer", e.name)))?;
            Ok((e.name, Arc::new(Bf16Weights::from_packed(packed))))
        })
        .collect();
    Ok(read?.into_iter().collect())
}

fn parse_table(table: &[u8], count: usize, file_len: u64) -> io::Result<Vec<Entry>> {
    let mut at = 0usize;
    let mut take = |n: usize| -> io::Result<&[u8]> {
        let bytes = table
            .get(at..at + n)
            .ok_or_else(|| invalid("table ends early"))?;
        at += n;
        Ok(bytes)
    };
    let mut entries = Vec::with_capacity(count.min(4096));
    let mut names = HashSet::new();
    for _ in 0..count {
        let name_len = u16::from_le_bytes(take(2)?.try_into().unwrap_or_default()) as usize;
        let name = std::str::from_utf8(take(name_len)?)
            .map_err(|_| invalid("a name is not UTF-8"))?
            .to_owned();
        let mut dims = [0usize; 3];
        for d in &mut dims {
            *d = u32::from_le_bytes(take(4)?.try_into().unwrap_or_default()) as usize;
        }
        let format = match take(1)?[0] {
            0 => Format::Bf16,
            1 => Format::Tiles,
            2 => Format::F32,
            3 => Format::I8,
            other => return Err(invalid(format!("{name}: format {other}"))),
        };
        let len = u64::from_le_bytes(take(8)?.try_into().unwrap_or_default());
        let offset = u64::from_le_bytes(take(8)?.try_into().unwrap_or_default());
        let crc = u32::from_le_bytes(take(4)?.try_into().unwrap_or_default());
        let end = len.checked_mul(4).and_then(|b| b.checked_add(offset));
        if !offset.is_multiple_of(4) || end.is_none_or(|end| end > file_len) {
            return Err(invalid(format!("{name}: panels outside the file")));
        }
        if !names.insert(name.clone()) {
            return Err(invalid(format!("{name} appears twice")));
        }
        entries.push(Entry {
            name,
            taps: dims[0],
            c_in: dims[1],
            c_out: dims[2],
            format,
            len: usize::try_from(len).map_err(|_| invalid("panels too large"))?,
            offset,
            crc,
        });
    }
    if at != table.len() {
        return Err(invalid("table longer than its entries"));
    }
    Ok(entries)
}

/// What the loading thread's scope does with packed weights.
enum Scope {
    Reading {
        packed: HashMap<String, Arc<Bf16Weights>>,
        used: HashSet<String>,
    },
    Recording(Vec<(String, Arc<Bf16Weights>)>),
}

thread_local! {
    static SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// Clears the scope when the closure returns or unwinds.
struct Ends;

impl Drop for Ends {
    fn drop(&mut self) {
        SCOPE.with(|s| s.borrow_mut().take());
    }
}

fn scoped<R>(scope: Scope, f: impl FnOnce() -> R) -> (R, Option<Scope>) {
    SCOPE.with(|s| *s.borrow_mut() = Some(scope));
    let ends = Ends;
    let result = f();
    let scope = SCOPE.with(|s| s.borrow_mut().take());
    drop(ends);
    (result, scope)
}

/// Runs `f` (which calls `use_bf16`) with `packed` as the cache: named layers take their
/// panels from it ([`lookup`]). Returns `f`'s result and the names no layer asked for.
pub fn reading<R>(
    packed: impl IntoIterator<Item = (String, Arc<Bf16Weights>)>,
    f: impl FnOnce() -> R,
) -> (R, Vec<String>) {
    let (result, scope) = scoped(
        Scope::Reading {
            packed: packed.into_iter().collect(),
            used: HashSet::new(),
        },
        f,
    );
    let unused = match scope {
        Some(Scope::Reading { packed, used }) => {
            let mut unused: Vec<String> =
                packed.into_keys().filter(|n| !used.contains(n)).collect();
            unused.sort();
            unused
        }
        _ => Vec::new(),
    };
    (result, unused)
}

/// Runs `f` (which calls `use_bf16`) and returns, beside its result, every named layer's
/// freshly packed weights ([`record`]), each name once, in packing order.
pub fn recording<R>(f: impl FnOnce() -> R) -> (R, Vec<(String, Arc<Bf16Weights>)>) {
    let (result, scope) = scoped(Scope::Recording(Vec::new()), f);
    match scope {
        Some(Scope::Recording(packed)) => (result, packed),
        _ => (result, Vec::new()),
    }
}

/// The cached panels for tensor `name` (stored as `layout`, of shape `dims`) when a
/// [`reading`] scope has them.
///
/// # Errors
///
/// If the cached panels are for a layer of another shape, or in another format than
/// `kernel` packs this layer in (the file was written when the layer ran on another
/// kernel): the caller's tensor may be a placeholder, so there is nothing to pack instead,
/// and the loader rebuilds the file.
pub fn lookup(
    name: &str,
    layout: Stored,
    dims: &[usize],
    kernel: CpuKernel,
) -> candle_core::Result<Option<Arc<Bf16Weights>>> {
    SCOPE.with(|s| {
        let mut scope = s.borrow_mut();
        let Some(Scope::Reading { packed, used }) = scope.as_mut() else {
            return Ok(None);
        };
        let Some(w) = packed.get(name) else {
            return Ok(None);
        };
        let shape = match (layout, dims) {
            (Stored::Conv, &[c_out, c_in, k]) => (k, c_in, c_out),
            (Stored::Dense, &[out, input]) => (1, input, out),
            _ => (0, 0, 0),
        };
        let p = w.packed();
        if (p.taps(), p.c_in(), p.c_out()) != shape {
            candle_core::bail!(
                "packed-weights cache: {name} holds a {}-tap {}→{} layer, \
                 the model's is {dims:?}",
                p.taps(),
                p.c_in(),
                p.c_out()
            );
        }
        let wanted = Format::for_layer(kernel, p.c_out());
        if wanted != Some(p.format()) {
            candle_core::bail!(
                "packed-weights cache: {name} is packed as {:?}, the {kernel:?} kernel wants {wanted:?}",
                p.format()
            );
        }
        used.insert(name.to_owned());
        Ok(Some(Arc::clone(w)))
    })
}

/// Hands a named layer's freshly packed weights to a [`recording`] scope, if one is open.
pub fn record(name: String, packed: &Arc<Bf16Weights>) {
    SCOPE.with(|s| {
        if let Some(Scope::Recording(list)) = s.borrow_mut().as_mut() {
            if list.iter().all(|(n, _)| *n != name) {
                list.push((name, Arc::clone(packed)));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layers(kernel: CpuKernel) -> Vec<(String, Arc<Bf16Weights>)> {
        [(3usize, 64usize, 64usize), (1, 30, 22), (7, 32, 96)]
            .iter()
            .enumerate()
            .map(|(i, &(taps, c_in, c_out))| {
                let w: Vec<f32> = (0..taps * c_in * c_out)
                    .map(|v| ((v * 37 + i) % 101) as f32 / 50.0 - 1.0)
                    .collect();
                let p = bf16::PackedWeights::pack(&w, taps, c_in, c_out, kernel).expect("pack");
                (
                    format!("layer.{i}.weight"),
                    Arc::new(Bf16Weights::from_packed(p)),
                )
            })
            .collect()
    }

    #[test]
    fn panels_come_back_as_written_and_damage_is_refused() {
        if !bf16::supported() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let fp = [7u8; 32];
        let written = layers(CpuKernel::Tiles);
        let path = write(dir.path(), CpuKernel::Tiles, &fp, &written).unwrap();
        let back = read(&path, &fp).unwrap();
        assert_eq!(back.len(), written.len());
        for (name, w) in &written {
            let (a, b) = (w.packed(), back[name].packed());
            assert_eq!(a.data(), b.data(), "{name}");
            assert_eq!(
                (a.taps(), a.c_in(), a.c_out(), a.tiles()),
                (b.taps(), b.c_in(), b.c_out(), b.tiles())
            );
        }

        // Another fingerprint, a flipped bit in a panel or the table, a cut file: refused.
        let kind = |r: io::Result<_>| r.map(|_| ()).unwrap_err().kind();
        assert_eq!(kind(read(&path, &[8u8; 32])), io::ErrorKind::InvalidData);
        let bytes = std::fs::read(&path).unwrap();
        for at in [HEADER + 3, bytes.len() - 5] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            std::fs::write(&path, &bad).unwrap();
            assert_eq!(
                kind(read(&path, &fp)),
                io::ErrorKind::InvalidData,
                "byte {at}"
            );
        }
        std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
        assert_eq!(kind(read(&path, &fp)), io::ErrorKind::InvalidData);
        std::fs::write(&path, &bytes[..20]).unwrap();
        assert_eq!(kind(read(&path, &fp)), io::ErrorKind::InvalidData);

        // A new fingerprint's file replaces the old one of its kernel, not another kernel's,
        // and a crashed start's temporary file goes once it is old, not while it may be
        // another start's write in progress.
        let vectors = write(dir.path(), CpuKernel::Vectors, &fp, &written).unwrap();
        let tmp = |age: u64, pid: u32| {
            let p = dir
                .path()
                .join(format!("{}.{pid}.tmp", file_name(CpuKernel::Tiles, &fp)));
            let f = File::create(&p).unwrap();
            f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(age))
                .unwrap();
            p
        };
        let (old_tmp, young_tmp) = (tmp(3600, 1), tmp(5, 2));
        let other = write(dir.path(), CpuKernel::Tiles, &[9u8; 32], &written).unwrap();
        assert!(other.exists() && vectors.exists() && !path.exists());
        assert!(!old_tmp.exists() && young_tmp.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn scopes_hand_out_what_they_hold_and_refuse_other_shapes() {
        if !bf16::supported() {
            return;
        }
        let written = layers(CpuKernel::Vectors);
        let ((), recorded) = recording(|| {
            for (name, w) in written.iter().chain(&written) {
                record(name.clone(), w);
            }
        });
        assert_eq!(recorded.len(), written.len(), "each name once");
        let v = CpuKernel::Vectors;
        assert!(lookup("layer.0.weight", Stored::Conv, &[64, 64, 3], v)
            .unwrap()
            .is_none());

        let packed: HashMap<_, _> = recorded.into_iter().collect();
        let (found, unused) = reading(packed.clone(), || {
            lookup("layer.0.weight", Stored::Conv, &[64, 64, 3], v).unwrap()
        });
        assert!(found.is_some());
        assert_eq!(unused, ["layer.1.weight", "layer.2.weight"]);
        let (wrong, _) = reading(packed.clone(), || {
            lookup("layer.1.weight", Stored::Dense, &[30, 22], v)
        });
        assert!(wrong.is_err(), "a 30→22 layer read as 22→30");
        if crate::cpu_kernels::f32_vectors_available() {
            let (other, _) = reading(packed, || {
                lookup("layer.0.weight", Stored::Conv, &[64, 64, 3], CpuKernel::F32)
            });
            assert!(other.is_err(), "bfloat16 panels handed to the f32 kernel");
        }
    }
}
