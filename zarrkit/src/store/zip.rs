//! Zip archives as stores: [`ZipStore`] reads one, [`ZipStoreWriter`] writes one.
//!
//! A zipped Zarr hierarchy (zarr-python's `ZipStore`, OME-Zarr's zipped
//! form) keeps each key as a member of the archive. [`ZipStore`] reads any
//! zip: stored or deflated members, zip64, and a root inside the archive
//! ([`ZipStore::with_prefix`]). The archive is itself a value in another
//! store, or a local file, and is only ever read by byte ranges: the end of
//! the central directory with one suffix read, the central directory once at
//! open, each member's local header once (cached), and then exactly the bytes
//! asked for (a stored member) or the member's compressed bytes (a deflated
//! one). A zip on object storage is never downloaded whole.
//!
//! [`ZipStoreWriter`] writes a new zip whose members are stored
//! uncompressed, as zarr-python's `ZipStore` writes them and as OME-Zarr's
//! zipped form requires. It stages values in a temporary file, so setting a
//! key again or erasing it keeps the archive consistent (each key appears
//! once, with its last value), and [`ZipStoreWriter::finish`] writes the zip
//! to a temporary file and renames it into place, so a crash never leaves a
//! half-written zip under the final name.
//!
//! The zip format itself (central directory, zip64, local headers) is the
//! `zip` crate's; this module maps members to keys and bytes.

use super::StorePrefix;
use super::memory::{keys_with_prefix, list_dir_of, slice_value};
use super::{ByteRange, ListDir, ReadRequest, Store, StoreCapabilities, StoreError, StoreKey};
use ::zip::{CompressionMethod, ZipArchive, ZipWriter};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

const NAME: &str = "zip store";
const WRITER_NAME: &str = "zip store writer";

/// How many bytes the first read of an archive takes from its end: the end
/// of central directory record (with a comment of up to 64 KiB) and, in most
/// archives, the whole central directory, in one request.
const TAIL_READ: u64 = 64 * 1024 + 1024;

/// Read-ahead while the central directory is parsed: it starts here and
/// doubles with each read, up to [`MAX_DIRECTORY_READ_AHEAD`], so a large
/// directory (millions of chunks) costs a few dozen requests, not thousands.
const DIRECTORY_READ_AHEAD: u64 = 256 * 1024;
const MAX_DIRECTORY_READ_AHEAD: u64 = 16 << 20;

/// The fixed part of a local file header, the only part the `zip` crate
/// reads to find where a member's data starts.
const LOCAL_HEADER_LEN: u64 = 30;

/// How many members' local headers [`Store::size`] reads at once: the one
/// asked for and the next ones in key order.
const SIZE_READ_AHEAD: usize = 64;

/// Deflate cannot expand data by more than about 1032:1; a member that
/// declares more is lying or a bomb.
const MAX_DEFLATE_RATIO: u64 = 1032;

// Reading --------------------------------------------------------------------

/// Where an archive's bytes come from.
#[derive(Clone, Debug)]
enum Source {
    /// A value in another store.
    Store {
        store: Arc<dyn Store>,
        key: StoreKey,
    },
    /// A local file.
    File { file: Arc<File>, path: PathBuf },
}

impl Source {
    /// Describes the archive for messages.
    fn describe(&self) -> String {
        match self {
            Self::Store { store, key } => format!("{key}` in `{}", store.name()),
            Self::File { path, .. } => path.display().to_string(),
        }
    }

    /// Reads `len` bytes at `offset`, all of which must exist.
    fn read_at(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let mut values = self.read_many(&[(offset, len)])?;
        Ok(values.pop().unwrap_or_default())
    }

    /// Reads each `(offset, len)`, in one batch where the source batches.
    fn read_many(&self, ranges: &[(u64, u64)]) -> io::Result<Vec<Vec<u8>>> {
        match self {
            Self::Store { store, key } => {
                let requests: Vec<ReadRequest> = ranges
                    .iter()
                    .map(|&(offset, len)| (key.clone(), Some(ByteRange::new(offset, len))))
                    .collect();
                let values = store
                    .get_partial_values(&requests)
                    .map_err(io::Error::other)?;
                values
                    .into_iter()
                    .map(|value| {
                        value.ok_or_else(|| {
                            io::Error::new(ErrorKind::NotFound, "the archive has disappeared")
                        })
                    })
                    .collect()
            }
            Self::File { file, .. } => ranges
                .iter()
                .map(|&(offset, len)| {
                    let len = usize::try_from(len)
                        .map_err(|_| io::Error::new(ErrorKind::InvalidData, "range too large"))?;
                    let mut buf = vec![0; len];
                    read_exact_at(file, &mut buf, offset)?;
                    Ok(buf)
                })
                .collect(),
        }
    }

    /// The last `n` bytes (fewer if the archive is shorter).
    fn read_suffix(&self, n: u64, len: u64) -> io::Result<Vec<u8>> {
        match self {
            Self::Store { store, key } => store
                .get(key, Some(ByteRange::Suffix(n)))
                .map_err(io::Error::other)?
                .ok_or_else(|| io::Error::new(ErrorKind::NotFound, "the archive has disappeared")),
            Self::File { .. } => {
                let n = n.min(len);
                self.read_at(len - n, n)
            }
        }
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, offset) {
            Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn read_exact_at(_file: &File, _buf: &mut [u8], _offset: u64) -> io::Result<()> {
    // Reads at an offset without a shared cursor, which concurrent reads
    // need, exist only on Unix and Windows.
    Err(io::Error::new(
        ErrorKind::Unsupported,
        "positioned file reads are not available on this platform",
    ))
}

/// `Read + Seek` over an archive's bytes by ranged reads, with a read-ahead
/// buffer, for the `zip` crate's parser.
#[derive(Debug)]
struct RangedReader {
    source: Source,
    len: u64,
    pos: u64,
    read_ahead: u64,
    buf_start: u64,
    buf: Vec<u8>,
}

impl Clone for RangedReader {
    /// A clone starts with an empty buffer and reads only headers, one at a time.
    fn clone(&self) -> Self {
        Self {
            source: self.source.clone(),
            len: self.len,
            pos: 0,
            read_ahead: LOCAL_HEADER_LEN,
            buf_start: 0,
            buf: Vec::new(),
        }
    }
}

impl Read for RangedReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() || self.pos >= self.len {
            return Ok(0);
        }
        let buf_end = self.buf_start + self.buf.len() as u64;
        if !(self.buf_start..buf_end).contains(&self.pos) {
            let want = (out.len() as u64).max(self.read_ahead);
            let n = want.min(self.len - self.pos);
            self.buf = self.source.read_at(self.pos, n)?;
            self.buf_start = self.pos;
            if self.read_ahead >= DIRECTORY_READ_AHEAD {
                self.read_ahead = (self.read_ahead * 2).min(MAX_DIRECTORY_READ_AHEAD);
            }
            if self.buf.len() as u64 != n {
                return Err(ErrorKind::UnexpectedEof.into());
            }
        }
        // `pos` lies in the buffer, so the offset fits in usize.
        let at = (self.pos - self.buf_start) as usize;
        let n = out.len().min(self.buf.len() - at);
        out[..n].copy_from_slice(&self.buf[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for RangedReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(pos) => Some(pos),
            SeekFrom::End(delta) => self.len.checked_add_signed(delta),
            SeekFrom::Current(delta) => self.pos.checked_add_signed(delta),
        };
        self.pos = pos.ok_or_else(|| {
            io::Error::new(
                ErrorKind::InvalidInput,
                "seek before the start of the archive",
            )
        })?;
        Ok(self.pos)
    }
}

/// What the store knows of one member after reading its local header.
#[derive(Clone, Copy, Debug)]
struct MemberInfo {
    data_start: u64,
    compressed_size: u64,
    size: u64,
    deflated: bool,
    crc32: u32,
}

/// A member name that [`ZipStore`] does not serve as a key, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedMember {
    /// The member's name, escaped for display.
    pub name: String,
    /// Why it is not a valid store key.
    pub reason: String,
}

/// A read-only store over the members of a zip archive.
///
/// ```
/// use std::sync::Arc;
/// use zarrkit::store::{MemoryStore, Store, StoreKey, ZipStore, ZipStoreWriter};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("data.zip");
/// let writer = ZipStoreWriter::create(&path)?;
/// writer.set(&StoreKey::new("zarr.json")?, b"{}")?;
/// writer.finish()?;
///
/// let store = ZipStore::open_path(&path)?;
/// assert_eq!(store.get(&StoreKey::new("zarr.json")?, None)?, Some(b"{}".to_vec()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Member names that are not valid keys (absolute, with `..` segments,
/// backslashes or NUL) are never served; [`ZipStore::skipped_members`]
/// lists them. Directory entries are ignored. When a name occurs twice (as
/// zarr-python's `ZipStore` writes when a key is set twice), the last
/// member wins, as Python's `zipfile` reads it.
pub struct ZipStore {
    /// The parsed central directory over a reader of the archive; each read
    /// clones it (the directory is shared, not copied).
    archive: ZipArchive<RangedReader>,
    source: Source,
    len: u64,
    /// The members under the root prefix, relative to it, with their index.
    members: BTreeMap<StoreKey, usize>,
    prefix: StorePrefix,
    infos: Vec<OnceLock<MemberInfo>>,
    skipped: Vec<SkippedMember>,
}

impl std::fmt::Debug for ZipStore {
    /// The archive and its size, not its (possibly huge) central directory.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZipStore")
            .field("archive", &self.source.describe())
            .field("len", &self.len)
            .field("prefix", &self.prefix)
            .field("members", &self.members.len())
            .field("skipped", &self.skipped.len())
            .finish_non_exhaustive()
    }
}

fn open_error(archive: &str, source: io::Error) -> StoreError {
    StoreError::Open {
        store: NAME,
        path: archive.to_string(),
        source,
    }
}

fn invalid_data(message: String) -> io::Error {
    io::Error::new(ErrorKind::InvalidData, message)
}

/// The key a member name maps to, or why it maps to none.
fn member_key(name: &str) -> Result<StoreKey, String> {
    // `StoreKey` rejects absolute names, `.`/`..` segments, backslashes and
    // NUL; a drive letter is rejected here as well so that no name reads as
    // a Windows path.
    if name.as_bytes().get(1) == Some(&b':') {
        return Err("it starts with a drive letter".to_string());
    }
    StoreKey::new(name).map_err(|err| match err {
        StoreError::InvalidKey { reason, .. } => reason.to_string(),
        other => other.to_string(),
    })
}

impl ZipStore {
    /// Opens the zip archive stored under `key` in `store`.
    ///
    /// Reads the size of the archive, its end with one suffix read, and its
    /// central directory; members are read later, by ranges.
    ///
    /// # Errors
    /// [`StoreError::Open`] if the key holds no value, the value is not a
    /// zip archive, or its central directory is malformed; a backend error
    /// of `store`.
    pub fn open(store: Arc<dyn Store>, key: StoreKey) -> Result<Self, StoreError> {
        let len = store.size(&key)?;
        let source = Source::Store { store, key };
        let Some(len) = len else {
            let source_err = io::Error::new(ErrorKind::NotFound, "no value under this key");
            return Err(open_error(&source.describe(), source_err));
        };
        Self::from_source(source, len)
    }

    /// Opens the zip archive at `path` on the local filesystem.
    ///
    /// # Errors
    /// [`StoreError::Open`] if the file cannot be opened, is not a zip
    /// archive, or its central directory is malformed.
    pub fn open_path(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let describe = path.display().to_string();
        let file = File::open(path).map_err(|source| open_error(&describe, source))?;
        let metadata = file
            .metadata()
            .map_err(|source| open_error(&describe, source))?;
        if !metadata.is_file() {
            let source = io::Error::new(ErrorKind::InvalidInput, "not a regular file");
            return Err(open_error(&describe, source));
        }
        let source = Source::File {
            file: Arc::new(file),
            path: path.to_path_buf(),
        };
        Self::from_source(source, metadata.len())
    }

    fn from_source(source: Source, len: u64) -> Result<Self, StoreError> {
        let describe = source.describe();
        let tail = source
            .read_suffix(TAIL_READ, len)
            .map_err(|err| open_error(&describe, err))?;
        let reader = RangedReader {
            source: source.clone(),
            len,
            pos: 0,
            read_ahead: DIRECTORY_READ_AHEAD,
            buf_start: len.saturating_sub(tail.len() as u64),
            buf: tail,
        };
        let parsed =
            ZipArchive::new(reader).map_err(|err| open_error(&describe, io::Error::from(err)))?;
        // A clone shares the parsed directory but not the parser's read-ahead
        // buffer (up to `MAX_DIRECTORY_READ_AHEAD`), which is dropped here.
        let archive = parsed.clone();
        drop(parsed);
        let mut members = BTreeMap::new();
        let mut skipped = Vec::new();
        for index in 0..archive.len() {
            let Some(name) = archive.name_for_index(index) else {
                continue;
            };
            if name.ends_with('/') {
                // A directory entry: keys have no directories.
                continue;
            }
            match member_key(name) {
                Ok(key) => {
                    members.insert(key, index);
                }
                Err(reason) => skipped.push(SkippedMember {
                    name: name.escape_debug().to_string(),
                    reason,
                }),
            }
        }
        let infos = (0..archive.len()).map(|_| OnceLock::new()).collect();
        Ok(Self {
            archive,
            source,
            len,
            members,
            prefix: StorePrefix::root(),
            infos,
            skipped,
        })
    }

    /// The store rooted at `prefix` inside the archive: key `a/zarr.json`
    /// reads member `<prefix>a/zarr.json`, and members outside `prefix` are
    /// not served. The root prefix changes nothing; a second prefix is
    /// taken inside the first.
    #[must_use]
    pub fn with_prefix(mut self, prefix: &StorePrefix) -> Self {
        if prefix.is_root() {
            return self;
        }
        let members = std::mem::take(&mut self.members);
        self.members = members
            .into_iter()
            .filter(|(key, _)| key.has_prefix(prefix))
            .filter_map(|(key, index)| {
                let rest = &key.as_str()[prefix.as_str().len()..];
                StoreKey::new(rest).ok().map(|key| (key, index))
            })
            .collect();
        // Both are valid prefixes, so their concatenation is one too.
        self.prefix = StorePrefix::new(format!("{}{}", self.prefix.as_str(), prefix.as_str()))
            .unwrap_or_else(|_| prefix.clone());
        self
    }

    /// The prefix inside the archive that this store serves as its root.
    #[must_use]
    pub fn prefix(&self) -> &StorePrefix {
        &self.prefix
    }

    /// The size of the archive in bytes.
    #[must_use]
    pub fn archive_len(&self) -> u64 {
        self.len
    }

    /// Members whose names are not valid store keys, and so are not served.
    #[must_use]
    pub fn skipped_members(&self) -> &[SkippedMember] {
        &self.skipped
    }

    fn read_error(key: &StoreKey, source: io::Error) -> StoreError {
        StoreError::Read {
            store: NAME,
            key: key.clone(),
            source,
        }
    }

    fn has_info(&self, index: usize) -> bool {
        self.infos.get(index).and_then(OnceLock::get).is_some()
    }

    /// Reads the local headers of `members` concurrently (each is one small
    /// ranged read). Errors are left for [`ZipStore::info`] to report when
    /// the member is used.
    fn prefetch_infos(&self, members: &[(&StoreKey, usize)]) {
        use rayon::prelude::*;
        match members {
            [] => {}
            [(key, index)] => drop(self.info(key, *index)),
            _ => members.par_iter().for_each(|&(key, index)| {
                let _ = self.info(key, index);
            }),
        }
    }

    /// The member's local header, read once and cached.
    fn info(&self, key: &StoreKey, index: usize) -> Result<MemberInfo, StoreError> {
        if let Some(info) = self.infos.get(index).and_then(OnceLock::get) {
            return Ok(*info);
        }
        let mut archive = self.archive.clone();
        let file = archive
            .by_index_raw(index)
            .map_err(|err| Self::read_error(key, io::Error::from(err)))?;
        let deflated = match file.compression() {
            CompressionMethod::Stored => false,
            CompressionMethod::Deflated => true,
            other => {
                let message =
                    format!("member uses compression method {other}, not stored or deflate");
                return Err(Self::read_error(key, invalid_data(message)));
            }
        };
        if file.encrypted() {
            let message = "member is encrypted".to_string();
            return Err(Self::read_error(key, invalid_data(message)));
        }
        let data_start = file.data_start().unwrap_or(file.header_start());
        let info = MemberInfo {
            data_start,
            compressed_size: file.compressed_size(),
            size: file.size(),
            deflated,
            crc32: file.crc32(),
        };
        drop(file);
        let end = info.data_start.checked_add(info.compressed_size);
        if end.is_none_or(|end| end > self.len) {
            let message = format!(
                "member data ({} bytes at offset {}) runs past the end of the {}-byte archive",
                info.compressed_size, info.data_start, self.len
            );
            return Err(Self::read_error(key, invalid_data(message)));
        }
        if !info.deflated && info.size != info.compressed_size {
            let message = format!(
                "stored member declares {} bytes but holds {}",
                info.size, info.compressed_size
            );
            return Err(Self::read_error(key, invalid_data(message)));
        }
        if info.deflated
            && info.size
                > info
                    .compressed_size
                    .saturating_mul(MAX_DEFLATE_RATIO)
                    .saturating_add(1024)
        {
            let message = format!(
                "deflated member declares {} bytes from {} compressed bytes, more than deflate can produce",
                info.size, info.compressed_size
            );
            return Err(Self::read_error(key, invalid_data(message)));
        }
        if let Some(cell) = self.infos.get(index) {
            let _ = cell.set(info);
        }
        Ok(info)
    }
}

fn read_only(operation: &'static str) -> StoreError {
    StoreError::Unsupported {
        store: NAME,
        operation,
    }
}

/// Inflates a deflated member, checking its declared size and CRC-32.
/// The snapshot of a deflated member: its inflated bytes (`None` had it
/// vanished). An archive opened for reading does not change, so it pins
/// no version.
struct InflatedSnapshot {
    key: StoreKey,
    value: Option<Vec<u8>>,
}

impl super::ValueSnapshot for InflatedSnapshot {
    fn read(&self, ranges: &[Option<ByteRange>]) -> Result<Option<Vec<Vec<u8>>>, StoreError> {
        let Some(value) = &self.value else {
            return Ok(None);
        };
        ranges
            .iter()
            .map(|range| slice_value(NAME, &self.key, value, *range))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    fn version(&self) -> Option<super::ValueVersion> {
        None
    }
}

fn inflate(key: &StoreKey, info: &MemberInfo, compressed: &[u8]) -> Result<Vec<u8>, StoreError> {
    let too_large = || {
        let message = format!(
            "deflated member declares {} bytes, too many for memory",
            info.size
        );
        ZipStore::read_error(key, invalid_data(message))
    };
    let size = usize::try_from(info.size).map_err(|_| too_large())?;
    // The declared size is bounded by the compressed bytes in hand (see
    // `MAX_DEFLATE_RATIO`); reserve at most a modest amount up front anyway.
    let mut out = Vec::with_capacity(size.min(64 << 20));
    // Read one byte past the declared size to notice a member that inflates
    // to more than it declares, without inflating all of it.
    flate2::read::DeflateDecoder::new(compressed)
        .take(info.size.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|err| ZipStore::read_error(key, err))?;
    if out.len() != size {
        let message = if out.len() > size {
            format!(
                "deflated member inflates to more than its declared {} bytes",
                info.size
            )
        } else {
            format!(
                "deflated member inflates to {} bytes, not its declared {}",
                out.len(),
                info.size
            )
        };
        return Err(ZipStore::read_error(key, invalid_data(message)));
    }
    check_crc(key, info, &out)?;
    Ok(out)
}

fn check_crc(key: &StoreKey, info: &MemberInfo, value: &[u8]) -> Result<(), StoreError> {
    let mut crc = flate2::Crc::new();
    crc.update(value);
    if crc.sum() == info.crc32 {
        Ok(())
    } else {
        let message = format!(
            "member CRC-32 mismatch (stored {:#010x}, computed {:#010x})",
            info.crc32,
            crc.sum()
        );
        Err(ZipStore::read_error(key, invalid_data(message)))
    }
}

/// How one request of a batch is answered.
enum Plan {
    Missing,
    /// Bytes of the archive, the `n`th range of the batch; `whole` asks for a
    /// CRC check.
    Stored {
        range: usize,
        info: MemberInfo,
        whole: bool,
    },
    /// A slice `start..end` of the inflated member read as the `n`th range.
    Deflated {
        range: usize,
        info: MemberInfo,
        start: usize,
        end: usize,
    },
}

impl Store for ZipStore {
    fn name(&self) -> &'static str {
        NAME
    }

    /// What the store holding the archive keeps in flight: a zip in S3
    /// reads its members with as many requests at once as S3 does.
    fn concurrency(&self) -> usize {
        match &self.source {
            Source::Store { store, .. } => store.concurrency(),
            Source::File { .. } => 1,
        }
    }

    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            read: true,
            write: false,
            partial_write: false,
            list: true,
            conditional_write: false,
            conditional_create: false,
        }
    }

    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        let mut values = self.get_partial_values(&[(key.clone(), range)])?;
        Ok(values.pop().flatten())
    }

    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let unseen: Vec<(&StoreKey, usize)> = requests
            .iter()
            .filter_map(|(key, _)| self.members.get(key).map(|&index| (key, index)))
            .filter(|&(_, index)| !self.has_info(index))
            .collect();
        self.prefetch_infos(&unseen);
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        let mut deflated_ranges: HashMap<usize, usize> = HashMap::new();
        let mut plans = Vec::with_capacity(requests.len());
        for (key, range) in requests {
            let Some(&index) = self.members.get(key) else {
                plans.push(Plan::Missing);
                continue;
            };
            let info = self.info(key, index)?;
            let (start, end) = match range {
                None => (0, info.size),
                Some(range) => range
                    .bounds(info.size)
                    .ok_or_else(|| StoreError::InvalidRange {
                        store: NAME,
                        key: key.clone(),
                        range: *range,
                        len: info.size,
                    })?,
            };
            if info.deflated {
                let n = *deflated_ranges.entry(index).or_insert_with(|| {
                    ranges.push((info.data_start, info.compressed_size));
                    ranges.len() - 1
                });
                // The bounds lie within the declared size, which
                // `inflate` checks fits in usize.
                let (start, end) = (
                    usize::try_from(start).unwrap_or(usize::MAX),
                    usize::try_from(end).unwrap_or(usize::MAX),
                );
                plans.push(Plan::Deflated {
                    range: n,
                    info,
                    start,
                    end,
                });
            } else {
                ranges.push((info.data_start + start, end - start));
                let whole = range.is_none();
                plans.push(Plan::Stored {
                    range: ranges.len() - 1,
                    info,
                    whole,
                });
            }
        }
        if ranges.is_empty() {
            return Ok(plans.iter().map(|_| None).collect());
        }
        let mut bytes: Vec<Option<Vec<u8>>> = self
            .source
            .read_many(&ranges)
            .map_err(|err| Self::read_error(&requests[0].0, err))?
            .into_iter()
            .map(Some)
            .collect();
        let mut inflated: HashMap<usize, Vec<u8>> = HashMap::new();
        plans
            .into_iter()
            .zip(requests)
            .map(|(plan, (key, _))| match plan {
                Plan::Missing => Ok(None),
                Plan::Stored { range, info, whole } => {
                    let value = bytes[range].take().unwrap_or_default();
                    if whole {
                        check_crc(key, &info, &value)?;
                    }
                    Ok(Some(value))
                }
                Plan::Deflated {
                    range,
                    info,
                    start,
                    end,
                } => {
                    let value = match inflated.entry(range) {
                        Entry::Occupied(entry) => entry.into_mut(),
                        Entry::Vacant(entry) => {
                            let compressed = bytes[range].take().unwrap_or_default();
                            entry.insert(inflate(key, &info, &compressed)?)
                        }
                    };
                    Ok(Some(value[start..end].to_vec()))
                }
            })
            .collect()
    }

    /// A deflated member is inflated once and held for the snapshot's
    /// reads: a partial read of a shard (its index, then its inner chunks
    /// slab by slab) would otherwise inflate the whole member for each
    /// range. A stored member's ranges are read from the archive as asked.
    fn snapshot<'a>(
        &'a self,
        key: &StoreKey,
    ) -> Result<Box<dyn super::ValueSnapshot + 'a>, StoreError> {
        let deflated = match self.members.get(key) {
            Some(&index) => self.info(key, index)?.deflated,
            None => false,
        };
        if deflated {
            return Ok(Box::new(InflatedSnapshot {
                key: key.clone(),
                value: self.get(key, None)?,
            }));
        }
        Ok(Box::new(super::UnpinnedSnapshot {
            store: self,
            key: key.clone(),
        }))
    }

    fn set(&self, _key: &StoreKey, _value: &[u8]) -> Result<(), StoreError> {
        Err(read_only(
            "writes (it is read-only; write a new zip with ZipStoreWriter)",
        ))
    }

    fn set_partial_values(&self, _items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        Err(read_only("partial writes (it is read-only)"))
    }

    fn erase(&self, _key: &StoreKey) -> Result<(), StoreError> {
        Err(read_only("erasing (it is read-only)"))
    }

    fn erase_prefix(&self, _prefix: &StorePrefix) -> Result<(), StoreError> {
        Err(read_only("erasing (it is read-only)"))
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        Ok(keys_with_prefix(&self.members, prefix).cloned().collect())
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        list_dir_of(&self.members, prefix)
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        let Some(&index) = self.members.get(key) else {
            return Ok(None);
        };
        if !self.has_info(index) {
            // A caller that sizes one member usually sizes the next ones
            // (`Array::stored_size`, `zarrkit info`): read their local
            // headers in the same parallel round, not one round trip each.
            let window: Vec<(&StoreKey, usize)> = self
                .members
                .range::<StoreKey, _>(key..)
                .map(|(key, &index)| (key, index))
                .filter(|&(_, index)| !self.has_info(index))
                .take(SIZE_READ_AHEAD)
                .collect();
            self.prefetch_infos(&window);
        }
        Ok(Some(self.info(key, index)?.size))
    }
}

// Writing --------------------------------------------------------------------

/// Where a finished archive goes.
#[derive(Debug)]
enum Target {
    Path(PathBuf),
    Store {
        store: Arc<dyn Store>,
        key: StoreKey,
    },
}

impl Target {
    fn describe(&self) -> String {
        match self {
            Self::Path(path) => path.display().to_string(),
            Self::Store { store, key } => format!("{key}` in `{}", store.name()),
        }
    }
}

#[derive(Debug)]
struct WriterState {
    /// Values as they were set, end to end; `None` once the archive is finished.
    staging: Option<File>,
    staging_len: u64,
    /// Each key's last value: offset and length in `staging`.
    members: BTreeMap<StoreKey, (u64, u64)>,
}

/// A store that writes a new zip archive, its members stored uncompressed.
///
/// Values are staged in a temporary file as they are set; [`finish`]
/// (or dropping the writer) writes the archive (every `zarr.json` first,
/// breadth-first, as RFC-9 recommends for zipped OME-Zarr, then the other
/// keys in key order) to a
/// temporary file beside the target and renames it into place, so the
/// target is never a half-written zip. Until then the writer is a full
/// read-write store: setting a key again replaces its value and erasing a
/// key removes it, and the archive holds each key once with its last value
/// (zarr-python's `ZipStore` would instead append a second member of the
/// same name). Partial writes are not supported. Members of 4 GiB or more,
/// and archives past 4 GiB, use zip64.
///
/// [`finish`]: ZipStoreWriter::finish
#[derive(Debug)]
pub struct ZipStoreWriter {
    target: Target,
    state: Mutex<WriterState>,
}

fn writer_error(key: &StoreKey, source: io::Error) -> StoreError {
    StoreError::Write {
        store: WRITER_NAME,
        key: key.clone(),
        source,
    }
}

fn finished_error() -> io::Error {
    io::Error::other("the archive is already finished")
}

impl ZipStoreWriter {
    /// A writer of a new zip archive at `path`, which [`finish`] creates or
    /// replaces. Its directory must exist.
    ///
    /// [`finish`]: ZipStoreWriter::finish
    ///
    /// # Errors
    /// [`StoreError::Open`] if no temporary file can be made in the
    /// directory of `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = std::path::absolute(path.as_ref()).map_err(|source| StoreError::Open {
            store: WRITER_NAME,
            path: path.as_ref().display().to_string(),
            source,
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let staging = tempfile::tempfile_in(dir).map_err(|source| StoreError::Open {
            store: WRITER_NAME,
            path: path.display().to_string(),
            source,
        })?;
        Ok(Self::new(Target::Path(path), staging))
    }

    /// A writer of a new zip archive that [`finish`] stores under `key` in
    /// `store` with one [`Store::set`]. Values are staged in the system's
    /// temporary directory.
    ///
    /// [`finish`]: ZipStoreWriter::finish
    ///
    /// # Errors
    /// [`StoreError::Open`] if no temporary file can be made.
    pub fn create_in(store: Arc<dyn Store>, key: StoreKey) -> Result<Self, StoreError> {
        let target = Target::Store { store, key };
        let staging = tempfile::tempfile().map_err(|source| StoreError::Open {
            store: WRITER_NAME,
            path: target.describe(),
            source,
        })?;
        Ok(Self::new(target, staging))
    }

    fn new(target: Target, staging: File) -> Self {
        Self {
            target,
            state: Mutex::new(WriterState {
                staging: Some(staging),
                staging_len: 0,
                members: BTreeMap::new(),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, WriterState> {
        // Each mutation completes or leaves the map as it was.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes the archive and puts it in place. Every later operation but
    /// `finish` fails (open the archive with [`ZipStore`] to read it);
    /// finishing again does nothing.
    ///
    /// # Errors
    /// [`StoreError::Finish`] if the archive cannot be written or renamed
    /// into place (the writer then keeps its values, and `finish` may be
    /// called again), or an error of the target store.
    pub fn finish(&self) -> Result<(), StoreError> {
        let mut state = self.state();
        let Some(staging) = &state.staging else {
            return Ok(());
        };
        let finish_error = |source: io::Error| StoreError::Finish {
            store: WRITER_NAME,
            path: self.target.describe(),
            source,
        };
        let dir = match &self.target {
            Target::Path(path) => path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            Target::Store { .. } => std::env::temp_dir(),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".zarrkit-zip-").suffix(".tmp");
        // A temporary file is private (0600) by default; the archive is a
        // file like any other, so it gets 0666 less the umask, as
        // `File::create` would give it.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let archive = builder.tempfile_in(dir).map_err(finish_error)?;
        write_archive(staging, &state.members, archive.as_file()).map_err(finish_error)?;
        match &self.target {
            Target::Path(path) => {
                archive.as_file().sync_all().map_err(finish_error)?;
                archive
                    .persist(path)
                    .map_err(|err| finish_error(err.error))?;
            }
            Target::Store { store, key } => {
                let mut bytes = Vec::new();
                let mut file = archive.as_file();
                file.seek(SeekFrom::Start(0)).map_err(finish_error)?;
                file.read_to_end(&mut bytes).map_err(finish_error)?;
                store.set(key, &bytes)?;
            }
        }
        state.staging = None;
        Ok(())
    }

    /// The state, or a listing error once the archive is finished.
    fn live_listing(
        &self,
        prefix: &StorePrefix,
    ) -> Result<std::sync::MutexGuard<'_, WriterState>, StoreError> {
        let state = self.state();
        if state.staging.is_none() {
            return Err(StoreError::List {
                store: WRITER_NAME,
                prefix: prefix.as_str().to_string(),
                source: finished_error(),
            });
        }
        Ok(state)
    }

    /// Whether [`ZipStoreWriter::finish`] has written the archive.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.state().staging.is_none()
    }
}

/// The order of the members in a new archive: every `zarr.json`
/// breadth-first (shallower first, then by key), then the other keys in
/// key order.
///
/// This is the order RFC-9 (zipped OME-Zarr) recommends, so that a reader
/// that streams the archive, or reads its head, meets the metadata
/// documents of a hierarchy first; to every other reader the order is
/// immaterial.
fn archive_order(members: &BTreeMap<StoreKey, (u64, u64)>) -> Vec<(&StoreKey, &(u64, u64))> {
    let mut order: Vec<_> = members.iter().collect();
    order.sort_by_key(|(key, _)| {
        let document = key.name() == "zarr.json";
        let depth = key.as_str().matches('/').count();
        (!document, if document { depth } else { 0 }, *key)
    });
    order
}

/// Writes the members of `staging` as a zip with stored members into `out`.
fn write_archive(
    staging: &File,
    members: &BTreeMap<StoreKey, (u64, u64)>,
    out: &File,
) -> io::Result<()> {
    let mut zip = ZipWriter::new(io::BufWriter::with_capacity(1 << 20, out));
    let mut buf = vec![0; 1 << 20];
    for (key, &(offset, len)) in archive_order(members) {
        let options = ::zip::write::SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .large_file(len >= u64::from(u32::MAX));
        zip.start_file(key.as_str(), options)?;
        let mut done = 0;
        while done < len {
            // At most the buffer's length, so it fits in usize.
            let n = (len - done).min(buf.len() as u64) as usize;
            read_exact_at(staging, &mut buf[..n], offset + done)?;
            zip.write_all(&buf[..n])?;
            done += n as u64;
        }
    }
    let mut out = zip.finish()?;
    out.flush()
}

impl Drop for ZipStoreWriter {
    /// Finishes the archive if [`ZipStoreWriter::finish`] was not called,
    /// ignoring errors; call `finish` to see them.
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// Appends `value` to the staging file as the value of `key` (a later value
/// of a key replaces the earlier one in the archive).
fn stage(state: &mut WriterState, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
    let offset = state.staging_len;
    let Some(mut staging) = state.staging.as_ref() else {
        return Err(writer_error(key, finished_error()));
    };
    staging
        .seek(SeekFrom::Start(offset))
        .and_then(|_| staging.write_all(value))
        .map_err(|source| writer_error(key, source))?;
    state.staging_len += value.len() as u64;
    state
        .members
        .insert(key.clone(), (offset, value.len() as u64));
    Ok(())
}

impl Store for ZipStoreWriter {
    fn name(&self) -> &'static str {
        WRITER_NAME
    }

    fn finish(&self) -> Result<(), StoreError> {
        ZipStoreWriter::finish(self)
    }

    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            read: true,
            write: true,
            partial_write: false,
            list: true,
            conditional_write: false,
            conditional_create: true,
        }
    }

    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        let state = self.state();
        if state.staging.is_none() {
            return Err(StoreError::Read {
                store: WRITER_NAME,
                key: key.clone(),
                source: finished_error(),
            });
        }
        let Some(&(offset, len)) = state.members.get(key) else {
            return Ok(None);
        };
        let (start, end) = match range {
            None => (0, len),
            Some(range) => range.bounds(len).ok_or_else(|| StoreError::InvalidRange {
                store: WRITER_NAME,
                key: key.clone(),
                range,
                len,
            })?,
        };
        let Some(staging) = &state.staging else {
            return Err(StoreError::Read {
                store: WRITER_NAME,
                key: key.clone(),
                source: finished_error(),
            });
        };
        let n = usize::try_from(end - start).map_err(|_| StoreError::Read {
            store: WRITER_NAME,
            key: key.clone(),
            source: io::Error::new(ErrorKind::OutOfMemory, "the value is too large for memory"),
        })?;
        let mut value = vec![0; n];
        read_exact_at(staging, &mut value, offset + start).map_err(|source| StoreError::Read {
            store: WRITER_NAME,
            key: key.clone(),
            source,
        })?;
        Ok(Some(value))
    }

    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        stage(&mut self.state(), key, value)
    }

    fn set_if_absent(&self, key: &StoreKey, value: &[u8]) -> Result<bool, StoreError> {
        // Under the one lock every write takes, so the check and the write
        // are one step for every handle of this writer.
        let mut state = self.state();
        if state.staging.is_some() && state.members.contains_key(key) {
            return Ok(false);
        }
        stage(&mut state, key, value)?;
        Ok(true)
    }

    fn set_partial_values(&self, _items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        Err(StoreError::Unsupported {
            store: WRITER_NAME,
            operation: "partial writes",
        })
    }

    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        let mut state = self.state();
        if state.staging.is_none() {
            return Err(StoreError::Erase {
                store: WRITER_NAME,
                key: key.to_string(),
                source: finished_error(),
            });
        }
        state.members.remove(key);
        Ok(())
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        let mut state = self.state();
        if state.staging.is_none() {
            return Err(StoreError::Erase {
                store: WRITER_NAME,
                key: prefix.as_str().to_string(),
                source: finished_error(),
            });
        }
        state.members.retain(|key, _| !key.has_prefix(prefix));
        Ok(())
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        let state = self.live_listing(prefix)?;
        Ok(keys_with_prefix(&state.members, prefix).cloned().collect())
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        list_dir_of(&self.live_listing(prefix)?.members, prefix)
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        let state = self.state();
        if state.staging.is_none() {
            return Err(StoreError::Read {
                store: WRITER_NAME,
                key: key.clone(),
                source: finished_error(),
            });
        }
        Ok(state.members.get(key).map(|&(_, len)| len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;
    use crate::store::testing::CountingStore;

    fn key(s: &str) -> StoreKey {
        StoreKey::new(s).unwrap()
    }

    fn prefix(s: &str) -> StorePrefix {
        StorePrefix::new(s).unwrap()
    }

    /// The values the read-side checks zip up: nested keys, an empty value,
    /// keys that share a string prefix, dots and Unicode.
    fn sample() -> MemoryStore {
        let store = MemoryStore::new();
        let values: &[(&str, &[u8])] = &[
            ("zarr.json", b"{\"node_type\": \"group\"}"),
            ("a/zarr.json", b"{}"),
            ("a/c/0/0", b"0123456789"),
            ("a/c/0/1", b""),
            ("a-b/x", b"dash"),
            ("a.b/.zattrs", b"dot"),
            ("\u{e9}t\u{e9}/\u{1f600}", "unicode".as_bytes()),
        ];
        for (k, v) in values {
            store.set(&key(k), v).unwrap();
        }
        store.set(&key("big/value"), &vec![7; 300_000]).unwrap();
        store
    }

    /// Zips every value of `from` with the writer into a value of a memory store.
    fn zip_of(from: &dyn Store) -> Vec<u8> {
        let target = Arc::new(MemoryStore::new());
        let writer = ZipStoreWriter::create_in(target.clone(), key("data.zip")).unwrap();
        for k in from.list().unwrap() {
            writer
                .set(&k, &from.get(&k, None).unwrap().unwrap())
                .unwrap();
        }
        writer.finish().unwrap();
        target.get(&key("data.zip"), None).unwrap().unwrap()
    }

    fn open_bytes(bytes: Vec<u8>) -> Result<ZipStore, StoreError> {
        let store = Arc::new(MemoryStore::new());
        store.set(&key("data.zip"), &bytes).unwrap();
        ZipStore::open(store, key("data.zip"))
    }

    /// Checks that `actual` holds exactly the values of `expected`, read
    /// whole, by ranges, in batches, by size and by listing.
    fn check_same_contents(expected: &dyn Store, actual: &dyn Store) {
        let keys = expected.list().unwrap();
        assert_eq!(actual.list().unwrap(), keys);
        let mut prefixes = vec![StorePrefix::root()];
        for k in &keys {
            let value = expected.get(k, None).unwrap().unwrap();
            let len = value.len() as u64;
            assert_eq!(actual.get(k, None).unwrap().as_ref(), Some(&value), "{k}");
            assert_eq!(actual.size(k).unwrap(), Some(len), "{k}");
            for range in [
                ByteRange::new(0, len.min(3)),
                ByteRange::new(len / 2, len - len / 2),
                ByteRange::Suffix(4),
                ByteRange::FromStart {
                    offset: len,
                    length: None,
                },
            ] {
                assert_eq!(
                    actual.get(k, Some(range)).unwrap(),
                    expected.get(k, Some(range)).unwrap(),
                    "{k} {range}"
                );
            }
            let past = ByteRange::new(len, 1);
            assert!(matches!(
                actual.get(k, Some(past)),
                Err(StoreError::InvalidRange { .. })
            ));
            let mut p = k.parent();
            while !p.is_root() {
                prefixes.push(p.clone());
                p = StorePrefix::new(
                    p.as_str()[..p.as_str().len() - 1]
                        .rsplit_once('/')
                        .map_or(String::new(), |(head, _)| format!("{head}/")),
                )
                .unwrap();
            }
        }
        for p in &prefixes {
            assert_eq!(
                actual.list_dir(p).unwrap(),
                expected.list_dir(p).unwrap(),
                "{p}"
            );
            assert_eq!(
                actual.list_prefix(p).unwrap(),
                expected.list_prefix(p).unwrap()
            );
        }
        let batch: Vec<ReadRequest> = keys
            .iter()
            .flat_map(|k| [(k.clone(), None), (k.clone(), Some(ByteRange::Suffix(2)))])
            .chain([(key("missing"), None)])
            .collect();
        assert_eq!(
            actual.get_partial_values(&batch).unwrap(),
            expected.get_partial_values(&batch).unwrap()
        );
        assert_eq!(actual.get(&key("missing"), None).unwrap(), None);
        assert_eq!(actual.size(&key("missing")).unwrap(), None);
    }

    #[test]
    fn zip_writer_passes_the_conformance_suite() {
        let dir = tempfile::tempdir().unwrap();
        let writer = ZipStoreWriter::create(dir.path().join("suite.zip")).unwrap();
        crate::store::testing::run_all(&writer);
        writer.finish().unwrap();
        let store = ZipStore::open_path(dir.path().join("suite.zip")).unwrap();
        assert_eq!(store.list().unwrap(), Vec::<StoreKey>::new());
    }

    #[test]
    fn zip_writer_lets_one_of_racing_creators_win_and_refuses_after_finish() {
        let dir = tempfile::tempdir().unwrap();
        let writer = ZipStoreWriter::create(dir.path().join("race.zip")).unwrap();
        for _ in 0..20 {
            crate::store::testing::check_racing_creates(&writer, 8);
        }
        let k = StoreKey::new("zarr.json").unwrap();
        assert!(writer.set_if_absent(&k, b"{}").unwrap());
        writer.finish().unwrap();
        // A finished writer refuses every write, a create too.
        let other = StoreKey::new("other").unwrap();
        assert!(writer.set_if_absent(&k, b"[]").is_err());
        assert!(writer.set_if_absent(&other, b"[]").is_err());
        let store = ZipStore::open_path(dir.path().join("race.zip")).unwrap();
        assert_eq!(store.list().unwrap(), [k]);
    }

    /// A writable store whose every read goes through a [`ZipStore`]:
    /// values live in a memory store, and each write zips them again, so
    /// the conformance suite's read checks (ranges, batches, sizes,
    /// listings, Unicode keys) all run against zip reads.
    #[derive(Debug)]
    struct RezipStore {
        values: MemoryStore,
        deflate: bool,
        zip: Mutex<ZipStore>,
    }

    impl RezipStore {
        fn new(deflate: bool) -> Self {
            let values = MemoryStore::new();
            let zip = Mutex::new(Self::zip(&values, deflate));
            Self {
                values,
                deflate,
                zip,
            }
        }

        fn zip(values: &MemoryStore, deflate: bool) -> ZipStore {
            if !deflate {
                return open_bytes(zip_of(values)).unwrap();
            }
            open_bytes(crate_zip_of(values, CompressionMethod::Deflated, false)).unwrap()
        }

        fn rezip(&self) {
            *self.zip.lock().unwrap() = Self::zip(&self.values, self.deflate);
        }

        fn read(&self) -> std::sync::MutexGuard<'_, ZipStore> {
            self.zip.lock().unwrap()
        }
    }

    impl Store for RezipStore {
        fn name(&self) -> &'static str {
            NAME
        }
        fn capabilities(&self) -> StoreCapabilities {
            StoreCapabilities {
                write: true,
                ..self.read().capabilities()
            }
        }
        fn get(
            &self,
            key: &StoreKey,
            range: Option<ByteRange>,
        ) -> Result<Option<Vec<u8>>, StoreError> {
            self.read().get(key, range)
        }
        fn get_partial_values(
            &self,
            requests: &[ReadRequest],
        ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
            self.read().get_partial_values(requests)
        }
        fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
            self.values.set(key, value)?;
            self.rezip();
            Ok(())
        }
        fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
            self.read().set_partial_values(items)
        }
        fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
            self.values.erase(key)?;
            self.rezip();
            Ok(())
        }
        fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
            self.values.erase_prefix(prefix)?;
            self.rezip();
            Ok(())
        }
        fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
            self.read().list_prefix(prefix)
        }
        fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
            self.read().list_dir(prefix)
        }
        fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
            self.read().size(key)
        }
    }

    #[test]
    fn zip_reads_pass_the_conformance_suite_stored_and_deflated() {
        crate::store::testing::run_all(&RezipStore::new(false));
        crate::store::testing::run_all(&RezipStore::new(true));
    }

    #[test]
    fn a_deflated_members_snapshot_inflates_it_once_for_all_its_ranges() {
        let values = MemoryStore::new();
        let value: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 13) as u8).collect();
        values.set(&key("a/c/0"), &value).unwrap();
        let counting = Arc::new(CountingStore::new(MemoryStore::new()));
        let zipped = crate_zip_of(&values, CompressionMethod::Deflated, false);
        counting.set(&key("data.zip"), &zipped).unwrap();
        let zip = ZipStore::open(counting.clone(), key("data.zip")).unwrap();
        let snapshot = zip.snapshot(&key("a/c/0")).unwrap();
        let before = counting.requests();
        for (range, want) in [
            (ByteRange::Suffix(16), &value[100_000 - 16..]),
            (ByteRange::new(0, 1000), &value[..1000]),
            (ByteRange::new(50_000, 20_000), &value[50_000..70_000]),
        ] {
            let got = snapshot.read(&[Some(range)]).unwrap();
            assert_eq!(got, Some(vec![want.to_vec()]), "{range}");
        }
        assert_eq!(
            counting.requests(),
            before,
            "a range read the archive again"
        );
        let err = snapshot
            .read(&[Some(ByteRange::new(99_999, 2))])
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::InvalidRange { len: 100_000, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("`a/c/0`"), "{err}");
        assert_eq!(
            zip.snapshot(&key("a/c/1")).unwrap().read(&[None]).unwrap(),
            None
        );
    }

    #[test]
    fn zip_reader_passes_the_conformance_suite() {
        // The suite's groups that write are skipped on a read-only store;
        // the filled archive is checked by `check_same_contents`.
        let store = open_bytes(zip_of(&MemoryStore::new())).unwrap();
        crate::store::testing::run_all(&store);
        let err = store.set(&key("a"), b"x").unwrap_err();
        assert!(matches!(err, StoreError::Unsupported { .. }), "{err:?}");
    }

    #[test]
    fn zip_round_trips_through_a_memory_store_and_a_file() {
        let sample = sample();
        let bytes = zip_of(&sample);
        check_same_contents(&sample, &open_bytes(bytes.clone()).unwrap());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.zip");
        std::fs::write(&path, &bytes).unwrap();
        check_same_contents(&sample, &ZipStore::open_path(&path).unwrap());
        let fs = Arc::new(crate::store::FilesystemStore::new(dir.path()).unwrap());
        check_same_contents(&sample, &ZipStore::open(fs, key("data.zip")).unwrap());
    }

    #[test]
    fn zip_writer_keeps_the_last_value_and_drops_erased_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.zip");
        let writer = ZipStoreWriter::create(&path).unwrap();
        writer.set(&key("a"), b"first").unwrap();
        writer.set(&key("b/c"), b"gone").unwrap();
        writer.set(&key("a"), b"second").unwrap();
        writer.erase(&key("b/c")).unwrap();
        assert!(!path.exists(), "the zip appears only when finished");
        writer.finish().unwrap();
        writer.finish().unwrap();
        assert!(writer.is_finished());
        let err = writer.set(&key("a"), b"late").unwrap_err();
        assert!(err.to_string().contains("cannot write `a`"), "{err}");
        let store = ZipStore::open_path(&path).unwrap();
        assert_eq!(store.list().unwrap(), [key("a")]);
        assert_eq!(store.get(&key("a"), None).unwrap().unwrap(), b"second");
        // No names appear twice in the central directory.
        let archive = ZipArchive::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(archive.len(), 1);
        // No staging or temporary file is left beside the zip.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn zip_writer_puts_zarr_json_documents_first_breadth_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("order.zip");
        let writer = ZipStoreWriter::create(&path).unwrap();
        for k in [
            "a/c/0",
            "a/b/zarr.json",
            "a/zarr.json",
            "zarr.json",
            "b/zarr.json",
            "a/b/c/0",
            ".zattrs",
        ] {
            writer.set(&key(k), b"x").unwrap();
        }
        writer.finish().unwrap();
        let archive = ZipArchive::new(File::open(&path).unwrap()).unwrap();
        let names: Vec<&str> = archive.file_names().collect();
        assert_eq!(
            names,
            [
                "zarr.json",
                "a/zarr.json",
                "b/zarr.json",
                "a/b/zarr.json",
                ".zattrs",
                "a/b/c/0",
                "a/c/0"
            ]
        );
    }

    #[test]
    fn a_failed_finish_keeps_the_values_for_another_try() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("busy.zip");
        let writer = ZipStoreWriter::create(&path).unwrap();
        writer.set(&key("zarr.json"), b"{}").unwrap();
        // A directory in the way: the rename into place fails.
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("keep"), b"").unwrap();
        let err = writer.finish().unwrap_err();
        assert!(matches!(err, StoreError::Finish { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("cannot finish zip store writer at `"),
            "{err}"
        );
        assert!(!writer.is_finished());
        assert_eq!(writer.get(&key("zarr.json"), None).unwrap().unwrap(), b"{}");
        std::fs::remove_dir_all(&path).unwrap();
        writer.finish().unwrap();
        let store = ZipStore::open_path(&path).unwrap();
        assert_eq!(store.list().unwrap(), [key("zarr.json")]);
        // Only the zip is left: no temporary file from the failed try.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn zip_writer_finishes_when_dropped_and_writes_stored_members() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("drop.zip");
        {
            let writer = ZipStoreWriter::create(&path).unwrap();
            writer.set(&key("x/zarr.json"), b"{}").unwrap();
            writer.set(&key("x/c/0"), &[1; 1000]).unwrap();
        }
        let mut archive = ZipArchive::new(File::open(&path).unwrap()).unwrap();
        for i in 0..archive.len() {
            assert_eq!(
                archive.by_index(i).unwrap().compression(),
                CompressionMethod::Stored
            );
        }
        let err = ZipStoreWriter::create(dir.path().join("no/such/dir/a.zip")).unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    }

    /// An archive written by the `zip` crate directly, with the given
    /// compression and forced zip64 extra fields.
    fn crate_zip(members: &[(&str, &[u8])], method: CompressionMethod, zip64: bool) -> Vec<u8> {
        let mut zip = ZipWriter::new(io::Cursor::new(Vec::new()));
        for (name, value) in members {
            let options = ::zip::write::SimpleFileOptions::default()
                .compression_method(method)
                .large_file(zip64);
            zip.start_file(*name, options).unwrap();
            zip.write_all(value).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    /// Every value of `from`, zipped by the `zip` crate as [`crate_zip`] does.
    fn crate_zip_of(from: &dyn Store, method: CompressionMethod, zip64: bool) -> Vec<u8> {
        let values: Vec<(String, Vec<u8>)> = from
            .list()
            .unwrap()
            .into_iter()
            .map(|k| (k.to_string(), from.get(&k, None).unwrap().unwrap()))
            .collect();
        let members: Vec<(&str, &[u8])> = values
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_slice()))
            .collect();
        crate_zip(&members, method, zip64)
    }

    #[test]
    fn zip_reads_deflated_and_zip64_members() {
        let sample = sample();
        for (method, zip64) in [
            (CompressionMethod::Deflated, false),
            (CompressionMethod::Deflated, true),
            (CompressionMethod::Stored, true),
        ] {
            let bytes = crate_zip_of(&sample, method, zip64);
            check_same_contents(&sample, &open_bytes(bytes).unwrap());
        }
    }

    #[test]
    fn zip_with_a_prefix_serves_a_folder_inside_the_archive() {
        let bytes = crate_zip(
            &[
                ("image.zarr/", b""),
                ("image.zarr/zarr.json", b"root"),
                ("image.zarr/0/c/0", b"chunk"),
                ("image.zarr.txt", b"not under the prefix"),
                ("other/zarr.json", b"other"),
            ],
            CompressionMethod::Stored,
            false,
        );
        let store = open_bytes(bytes)
            .unwrap()
            .with_prefix(&prefix("image.zarr/"));
        assert_eq!(store.prefix(), &prefix("image.zarr/"));
        assert_eq!(store.list().unwrap(), [key("0/c/0"), key("zarr.json")]);
        assert_eq!(
            store.get(&key("zarr.json"), None).unwrap().unwrap(),
            b"root"
        );
        assert_eq!(store.get(&key("other/zarr.json"), None).unwrap(), None);
        let dir = store.list_dir(&StorePrefix::root()).unwrap();
        assert_eq!(dir.keys, [key("zarr.json")]);
        assert_eq!(dir.prefixes, [prefix("0/")]);
    }

    #[test]
    fn zip_never_serves_member_names_outside_the_root() {
        let bytes = crate_zip(
            &[
                ("../evil", b"1"),
                ("/etc/passwd", b"2"),
                ("a\\b", b"3"),
                ("a/../../b", b"4"),
                ("C:/x", b"5"),
                ("a//b", b"6"),
                ("nul\0name", b"7"),
                ("ok/zarr.json", b"8"),
            ],
            CompressionMethod::Stored,
            false,
        );
        let store = open_bytes(bytes).unwrap();
        assert_eq!(store.list().unwrap(), [key("ok/zarr.json")]);
        let skipped: Vec<&str> = store
            .skipped_members()
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        // The zip crate may normalise some names as it writes them; every
        // name that reaches the archive unchanged and is not a key is skipped.
        assert!(skipped.contains(&"../evil"), "{skipped:?}");
        assert!(skipped.contains(&"a/../../b"), "{skipped:?}");
        assert!(store.skipped_members().iter().all(|m| !m.reason.is_empty()));
    }

    #[test]
    fn one_chunk_of_a_large_zip_reads_few_bytes() {
        let sample = MemoryStore::new();
        for i in 0..64 {
            sample
                .set(&key(&format!("a/c/{i}")), &vec![i as u8; 100_000])
                .unwrap();
        }
        sample.set(&key("a/zarr.json"), b"{}").unwrap();
        let bytes = zip_of(&sample);
        let archive_len = bytes.len() as u64;
        let counting = Arc::new(CountingStore::new(MemoryStore::new()));
        counting.set(&key("big.zip"), &bytes).unwrap();
        let store = ZipStore::open(counting.clone(), key("big.zip")).unwrap();
        let opened = counting.bytes_read();
        assert!(opened < 80_000, "opening read {opened} bytes");
        let value = store
            .get(&key("a/c/17"), Some(ByteRange::new(10, 100)))
            .unwrap();
        assert_eq!(value.unwrap(), vec![17; 100]);
        let read = counting.bytes_read() - opened;
        assert!(
            read <= 100 + LOCAL_HEADER_LEN,
            "one range read {read} bytes"
        );
        // The local header is cached: a second read is one request of its bytes.
        let requests = counting.requests();
        store
            .get(&key("a/c/17"), Some(ByteRange::Suffix(5)))
            .unwrap();
        assert_eq!(counting.requests(), requests + 1);
        let whole = store.get(&key("a/c/3"), None).unwrap().unwrap();
        assert_eq!(whole, vec![3; 100_000]);
        let total = counting.bytes_read();
        assert!(
            total < archive_len / 10,
            "read {total} of {archive_len} bytes"
        );
    }

    /// The offset of the first central directory header in `bytes`.
    fn central_header(bytes: &[u8]) -> usize {
        bytes
            .windows(4)
            .position(|w| w == [0x50, 0x4b, 0x01, 0x02])
            .unwrap()
    }

    #[test]
    fn zip_rejects_deflate_bombs_and_lying_sizes() {
        let zeros = vec![0; 1 << 20];
        let bytes = crate_zip(&[("c/0", &zeros)], CompressionMethod::Deflated, false);
        let at = central_header(&bytes);
        // Uncompressed size: bytes 24..28 of the central directory header.
        for (declared, expect) in [
            (1000_u32, "more than its declared 1000 bytes"),
            (0xFFFF_FFF0, "more than deflate can produce"),
            ((1 << 20) + 1, "not its declared"),
        ] {
            let mut bad = bytes.clone();
            bad[at + 24..at + 28].copy_from_slice(&declared.to_le_bytes());
            let store = open_bytes(bad).unwrap();
            let err = store.get(&key("c/0"), None).unwrap_err();
            let chain = format!("{err}: {}", std::error::Error::source(&err).unwrap());
            assert!(
                chain.contains("cannot read `c/0` from zip store"),
                "{chain}"
            );
            assert!(chain.contains(expect), "{chain}");
        }
    }

    #[test]
    fn zip_rejects_offsets_past_the_end() {
        let bytes = crate_zip(&[("c/0", b"0123456789")], CompressionMethod::Stored, false);
        let at = central_header(&bytes);
        let mut bad = bytes.clone();
        // Compressed and uncompressed size: bytes 20..28.
        bad[at + 20..at + 24].copy_from_slice(&0x7FFF_FFFF_u32.to_le_bytes());
        bad[at + 24..at + 28].copy_from_slice(&0x7FFF_FFFF_u32.to_le_bytes());
        let store = open_bytes(bad).unwrap();
        let err = store.get(&key("c/0"), None).unwrap_err();
        let source = std::error::Error::source(&err).unwrap().to_string();
        assert!(source.contains("runs past the end"), "{source}");
        // Local header offset: bytes 42..46.
        let mut bad = bytes;
        bad[at + 42..at + 46].copy_from_slice(&0x7FFF_FFFF_u32.to_le_bytes());
        if let Ok(store) = open_bytes(bad) {
            assert!(store.get(&key("c/0"), None).is_err());
        }
    }

    #[test]
    fn zip_with_more_members_than_a_plain_end_record_counts() {
        // 70 000 members need the zip64 end of central directory record.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("many.zip");
        let writer = ZipStoreWriter::create(&path).unwrap();
        for i in 0..70_000 {
            writer
                .set(&key(&format!("c/{i}")), &[(i % 251) as u8])
                .unwrap();
        }
        writer.finish().unwrap();
        let store = ZipStore::open_path(&path).unwrap();
        assert_eq!(store.list_prefix(&prefix("c/")).unwrap().len(), 70_000);
        assert_eq!(
            store.get(&key("c/69999"), None).unwrap().unwrap(),
            [(69_999 % 251) as u8]
        );
        assert!(format!("{store:?}").contains("members: 70000"));
        // The 3 MiB central directory is read in a handful of requests.
        let counting = Arc::new(CountingStore::new(MemoryStore::new()));
        counting
            .set(&key("many.zip"), &std::fs::read(&path).unwrap())
            .unwrap();
        let store = ZipStore::open(counting.clone(), key("many.zip")).unwrap();
        assert_eq!(store.list().unwrap().len(), 70_000);
        assert!(counting.requests() <= 8, "{} requests", counting.requests());
    }

    #[test]
    fn sizes_read_the_next_local_headers_in_one_round() {
        let sample = MemoryStore::new();
        for i in 0..100 {
            sample.set(&key(&format!("c/{i:03}")), &[1; 10]).unwrap();
        }
        let counting = Arc::new(CountingStore::new(MemoryStore::new()));
        counting.set(&key("z.zip"), &zip_of(&sample)).unwrap();
        let store = ZipStore::open(counting.clone(), key("z.zip")).unwrap();
        let opened = counting.requests();
        assert_eq!(store.size(&key("c/000")).unwrap(), Some(10));
        assert_eq!(counting.requests() - opened, SIZE_READ_AHEAD as u64);
        for i in 1..SIZE_READ_AHEAD {
            assert_eq!(store.size(&key(&format!("c/{i:03}"))).unwrap(), Some(10));
        }
        assert_eq!(counting.requests() - opened, SIZE_READ_AHEAD as u64);
        assert_eq!(store.get(&key("c/001"), None).unwrap().unwrap(), [1; 10]);
        assert_eq!(counting.requests() - opened, SIZE_READ_AHEAD as u64 + 1);
    }

    #[test]
    fn absurd_member_counts_are_errors() {
        let empty = zip_of(&MemoryStore::new());
        assert_eq!(empty.len(), 22, "an empty zip is its end record");
        let mut bad = empty.clone();
        // Entries on this disk and in total, then the directory's size.
        bad[8..12].copy_from_slice(&[0xFF; 4]);
        bad[12..16].copy_from_slice(&0x00FF_FFFF_u32.to_le_bytes());
        assert!(open_bytes(bad).is_err());
        let mut bad = empty;
        bad[8..12].copy_from_slice(&[0xFF; 4]);
        assert!(open_bytes(bad).is_err());
    }

    #[test]
    fn malformed_archives_give_errors_not_panics() {
        let sample = sample();
        sample.erase(&key("big/value")).unwrap();
        let good = zip_of(&sample);
        assert!(matches!(
            open_bytes(Vec::new()),
            Err(StoreError::Open { .. })
        ));
        assert!(matches!(
            open_bytes(b"garbage".repeat(1000)),
            Err(StoreError::Open { .. })
        ));
        let missing = ZipStore::open(Arc::new(MemoryStore::new()), key("none.zip")).unwrap_err();
        assert!(missing.to_string().contains("none.zip"), "{missing}");
        // Truncated at every length, and one byte flipped at many positions:
        // opening and reading every member must never panic.
        let mut cases: Vec<Vec<u8>> = (0..good.len())
            .step_by(7)
            .map(|n| good[..n].to_vec())
            .collect();
        cases.extend((0..good.len()).step_by(3).map(|i| {
            let mut bad = good.clone();
            bad[i] ^= 0xA5;
            bad
        }));
        let tail = good.len() - 200;
        cases.extend((tail..good.len()).map(|i| {
            let mut bad = good.clone();
            bad[i] = 0xFF;
            bad
        }));
        for bad in cases {
            if let Ok(store) = open_bytes(bad) {
                for k in store.list().unwrap() {
                    let _ = store.get(&k, None);
                    let _ = store.get(&k, Some(ByteRange::Suffix(3)));
                    let _ = store.size(&k);
                }
            }
        }
    }
}
