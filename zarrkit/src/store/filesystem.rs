//! A store in a directory of the local filesystem.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/stores/filesystem/>
//! (`final/v3/stores/filesystem`). A key's `/`-separated segments become
//! path components under the root directory, so `a/b/zarr.json` is the file
//! `<root>/a/b/zarr.json`, and the directory can be copied or synced by tools
//! that know nothing about Zarr.
//!
//! # Guarantees
//!
//! - [`Store::set`] is atomic: it writes a temporary file in the target's
//!   directory and renames it over the target, so a concurrent reader sees
//!   the old value or the new one, never a mix. It does not `fsync`, so it
//!   is not durable across a power failure. On Linux the target's directory
//!   is opened once beneath the root, and the temporary file is created,
//!   exchanged with the old value (`renameat2(RENAME_EXCHANGE)`) or renamed,
//!   and removed relative to it.
//! - [`Store::set_partial_values`] writes into the existing file in place and
//!   is *not* atomic: a concurrent reader may see some items written and not
//!   others, and a failing batch may leave earlier items written.
//! - Ranged reads seek and read only the bytes asked for.
//! - A [`Store::snapshot`] holds the file open, so all its reads see one
//!   version of the value even while other processes replace it.
//! - On Unix, [`Store::set_if_unchanged`] is a compare-and-swap that holds
//!   across processes: under an exclusive `flock` on a lock file beside the
//!   target (`.zarrkit-lock.<name>`, removed again on release), it checks
//!   that the target is still the file the snapshot opened (same device,
//!   inode, length and modification time) and only then renames the new
//!   value into place. The lock is held for that check and the rename
//!   only, never while data is read or encoded, and plain [`Store::set`]
//!   takes no lock: a whole-value `set` racing a conditional write of the
//!   same key may be overwritten by it. Elsewhere the store has no
//!   conditional writes, and zarrkit guards read-modify-writes within one
//!   process only.
//! - [`Store::set_if_absent`] is atomic across processes too: it writes a
//!   temporary file and moves it to the target's name only if nothing is
//!   there, in one step, so the value appears whole or not at all and of
//!   two creators exactly one succeeds. On Linux the temporary file is
//!   anonymous (`O_TMPFILE` in the target's directory, found beneath the
//!   root with `openat2`) and is linked under the target's name
//!   (`linkat`, which fails where the name exists): a killed creator leaves
//!   no file behind, and it takes fewer system calls (no name to make up,
//!   check and rename away). Elsewhere, or where that cannot be done
//!   (no `O_TMPFILE` on the filesystem, no `/proc`, a link or several
//!   missing directories on the way), a named temporary file is moved with
//!   `renameat2(RENAME_NOREPLACE)` or, without it, a hard link, which also
//!   fails where the name exists. A filesystem with neither (some network
//!   and FAT filesystems) makes it fail with [`StoreError::Write`].
//! - Erasing a key removes directories it leaves empty, up to the root.
//!
//! # Limitations
//!
//! - A key cannot be both a value and a prefix (`a` and `a/b`), since `a`
//!   cannot be a file and a directory at once; the second `set` fails.
//! - Temporary files are named `.zarrkit-tmp.<pid>.<counter>`, and lock
//!   files `.zarrkit-lock.<name>`. Listings skip such names, and also names
//!   that are not valid [`StoreKey`] segments (for example, names that are
//!   not UTF-8).
//! - Symbolic links in the root path are followed. Inside the store, links
//!   that stay inside the root are followed; a key reached through a link
//!   that leads out of the root is refused with
//!   [`StoreError::LinkOutsideRoot`] naming the key, and listings skip such
//!   links, unless the store is built with
//!   [`FilesystemStore::follow_links_outside_root`] (for stores assembled out
//!   of links). A store from elsewhere could otherwise read any file the user
//!   can read (a chunk linked to `/etc/passwd`).
//! - Listings never follow a directory link into a loop (a link to a
//!   directory that contains it, such as `meta/root/l1 -> ../root`) and skip
//!   links that cannot be resolved (a link to itself). What they skip is
//!   kept: [`FilesystemStore::skipped_links`].
//! - On case-insensitive filesystems (the default on Windows and macOS), keys
//!   that differ only in case name the same file.

use super::buffers::BUFFERS;
use super::{
    ByteRange, ListDir, ReadRequest, Store, StoreCapabilities, StoreError, StoreKey, StorePrefix,
    ValueSnapshot, ValueVersion, VersionKind,
};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::fs::{self, File, OpenOptions};
#[cfg(not(unix))]
use std::io::Read;
use std::io::{self, ErrorKind, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

const NAME: &str = "filesystem store";

/// The start of every temporary file name; listings skip names that start with it.
const TEMP_PREFIX: &str = ".zarrkit-tmp.";

/// The start of every lock file name; listings skip names that start with it.
const LOCK_PREFIX: &str = ".zarrkit-lock.";

/// A file as a snapshot opened it: held open, so that its inode number
/// cannot be given to another file while the version lives (which would
/// let a replaced file pass for the one read), with what identifies its
/// content.
#[derive(Debug)]
pub(super) struct FileVersion {
    file: File,
    len: u64,
    identity: FileIdentity,
}

/// What tells one file, and one state of its content, from another.
#[derive(Debug, PartialEq, Eq)]
struct FileIdentity {
    #[cfg(unix)]
    device: u64,
    #[cfg(unix)]
    inode: u64,
    len: u64,
    /// Catches writes in place (`set_partial_values`), which keep the inode.
    modified: Option<std::time::SystemTime>,
}

impl FileIdentity {
    fn of(metadata: &fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Self {
            #[cfg(unix)]
            device: metadata.dev(),
            #[cfg(unix)]
            inode: metadata.ino(),
            len: metadata.len(),
            modified: metadata.modified().ok(),
        }
    }
}

/// A snapshot of one key: the file opened once, or `None` when missing.
struct FileSnapshot {
    key: StoreKey,
    version: Option<Arc<FileVersion>>,
    /// Serialises reads, which move the shared file cursor off Unix (Unix
    /// has `pread`).
    #[cfg(not(unix))]
    cursor: Mutex<()>,
}

impl ValueSnapshot for FileSnapshot {
    fn read(&self, ranges: &[Option<ByteRange>]) -> Result<Option<Vec<Vec<u8>>>, StoreError> {
        let Some(version) = &self.version else {
            return Ok(None);
        };
        #[cfg(unix)]
        if ranges.len() > 1 {
            return read_ranges(&version.file, &self.key, version.len, ranges).map(Some);
        }
        // `pread` leaves the cursor alone: reads of one snapshot on
        // several threads (a shard's slabs) need not wait for each other.
        #[cfg(not(unix))]
        let _cursor = self.cursor.lock().unwrap_or_else(PoisonError::into_inner);
        ranges
            .iter()
            .map(|range| read_range(&version.file, &self.key, version.len, *range))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// `POSIX_FADV_WILLNEED` on Linux: the kernel queues reads of the
    /// range's pages not in the page cache and returns, so the device
    /// reads a shard ahead of the decoding of its slabs.
    fn will_read(&self, range: ByteRange) {
        #[cfg(target_os = "linux")]
        if let (Some(version), ByteRange::FromStart { offset, length }) = (&self.version, range) {
            // Only a hint: a failure changes nothing that reads rely on.
            let _ = rustix::fs::fadvise(
                &version.file,
                offset,
                length.and_then(std::num::NonZeroU64::new),
                rustix::fs::Advice::WillNeed,
            );
        }
        #[cfg(not(target_os = "linux"))]
        let _ = range;
    }

    fn version(&self) -> Option<ValueVersion> {
        Some(ValueVersion(match &self.version {
            Some(version) => VersionKind::File(Arc::clone(version)),
            None => VersionKind::Missing,
        }))
    }
}

/// An exclusive advisory lock on the key whose file is at `target`: a
/// `flock` on `.zarrkit-lock.<name>` beside it. Dropping it removes the lock
/// file and then releases the lock.
#[cfg(unix)]
struct KeyLock {
    path: PathBuf,
    _file: File,
}

#[cfg(unix)]
impl KeyLock {
    /// Waits for the lock. Fails with `NotFound` when the target's
    /// directory does not exist.
    fn acquire(target: &Path) -> io::Result<Self> {
        let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(io::Error::from(ErrorKind::InvalidInput));
        };
        let mut lock_name = std::ffi::OsString::from(LOCK_PREFIX);
        lock_name.push(name);
        let path = dir.join(lock_name);
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)?;
            rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
            // The previous holder removes the lock file before releasing
            // it, so a waiter may now hold a lock on a file no longer
            // there (or replaced by a newer lock file): only a lock on the
            // file at the path counts.
            let held = FileIdentity::of(&file.metadata()?);
            match fs::metadata(&path) {
                Ok(now) if FileIdentity::of(&now).same_file(&held) => {
                    return Ok(Self { path, _file: file });
                }
                Ok(_) => {}
                Err(err) if err.kind() == ErrorKind::NotFound => {}
                Err(err) => return Err(err),
            }
        }
    }
}

#[cfg(unix)]
impl Drop for KeyLock {
    fn drop(&mut self) {
        // Best effort: a lock file left behind is harmless (listings skip
        // it), and the lock itself is released when the file closes.
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(unix)]
impl FileIdentity {
    fn same_file(&self, other: &Self) -> bool {
        self.device == other.device && self.inode == other.inode
    }
}

/// A store in a directory of the local filesystem.
///
/// ```
/// use zarrkit::store::{FilesystemStore, Store, StoreKey};
///
/// let dir = tempfile::tempdir()?;
/// let store = FilesystemStore::new(dir.path().join("data.zarr"))?;
/// store.set(&StoreKey::new("temperature/zarr.json")?, b"{}")?;
/// assert!(dir.path().join("data.zarr/temperature/zarr.json").is_file());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FilesystemStore {
    root: PathBuf,
    /// The root with the links in its path resolved: what "inside the
    /// root" is measured against.
    canonical_root: PathBuf,
    follow_links_outside_root: bool,
    /// The links listings did not follow, shared by clones.
    skipped: Arc<Mutex<BTreeSet<SkippedLink>>>,
}

/// A symbolic link a listing of a [`FilesystemStore`] did not follow.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SkippedLink {
    /// The link's path under the root, `/`-separated, as a key would name it.
    pub path: String,
    /// Where it leads (with its links resolved), when that could be found.
    pub target: Option<PathBuf>,
    /// Why it was not followed.
    pub reason: SkipReason,
}

/// Why a listing skipped a symbolic link.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SkipReason {
    /// It leads to a directory that contains it (or one being listed): a loop.
    Loop,
    /// It leads outside the store root, and the store does not follow such links.
    OutsideRoot,
    /// It cannot be resolved (such as a link to itself).
    Unresolvable {
        /// The system's error message.
        error: String,
    },
}

impl std::fmt::Display for SkippedLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let target = self
            .target
            .as_ref()
            .map(|t| format!("a link to `{}`", t.display()));
        match (&self.reason, target) {
            (SkipReason::Loop, Some(target)) => {
                write!(f, "`{}`: {target}, which contains it (a loop)", self.path)
            }
            (SkipReason::OutsideRoot, Some(target)) => {
                write!(f, "`{}`: {target}, outside the store root", self.path)
            }
            (SkipReason::Unresolvable { error }, _) => {
                write!(
                    f,
                    "`{}`: a link that cannot be resolved: {error}",
                    self.path
                )
            }
            (_, None) => write!(f, "`{}`: a link", self.path),
        }
    }
}

/// A file opened under the root, or where the path leads when it leaves the root.
enum Opened {
    File(File),
    Outside(PathBuf),
}

/// How [`FilesystemStore::open_inside`] opens a file.
#[derive(Clone, Copy)]
enum Access {
    Read,
    Write,
    /// Only find a directory (`O_PATH`), to check where it is.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Directory,
    /// Only find a file or directory (`O_PATH`), for its metadata.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Path,
}

/// Distinguishes temporary files of one process; with the process id, their names are unique.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How many values [`FilesystemStore::create_linked`] has created, for the
/// tests to see that creating took the anonymous file's way.
#[cfg(all(test, target_os = "linux"))]
static LINKED: AtomicU64 = AtomicU64::new(0);

/// How many values [`FilesystemStore::set_beneath`] has stored, for the
/// tests to see that `set` took the directory descriptor's way.
#[cfg(all(test, target_os = "linux"))]
static SET_BENEATH: AtomicU64 = AtomicU64::new(0);

/// How many values written in parts ([`Store::begin_set`]) were put in
/// place, for the tests to see that a write took that way.
#[cfg(all(test, target_os = "linux"))]
pub(crate) static PARTS_COMMITTED: AtomicU64 = AtomicU64::new(0);

/// How often [`Store::set`] tries to create its temporary file. It retries
/// when a concurrent erase removes a freshly created (so still empty)
/// directory, or when a stale file of a crashed process holds the name;
/// each retry needs another thread to have made progress, so the bound is
/// generous and costs nothing when there is no contention.
const TEMP_ATTEMPTS: u32 = 100;

impl FilesystemStore {
    /// A store rooted at `root`, creating the directory (and its parents) if missing.
    ///
    /// A relative `root` is made absolute against the current directory now,
    /// so the store keeps working if the current directory changes.
    ///
    /// # Errors
    /// [`StoreError::Open`] if the directory cannot be created, or `root`
    /// exists and is not a directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, StoreError> {
        let root = absolute(root.as_ref())?;
        fs::create_dir_all(&root).map_err(|source| open_error(&root, source))?;
        Self::open_existing(root)
    }

    /// A store rooted at the existing directory `root`.
    ///
    /// # Errors
    /// [`StoreError::Open`] if `root` does not exist or is not a directory.
    pub fn open_existing(root: impl AsRef<Path>) -> Result<Self, StoreError> {
        let root = absolute(root.as_ref())?;
        let metadata = fs::metadata(&root).map_err(|source| open_error(&root, source))?;
        if !metadata.is_dir() {
            let source = io::Error::new(ErrorKind::NotADirectory, "not a directory");
            return Err(open_error(&root, source));
        }
        let canonical_root = fs::canonicalize(&root).map_err(|source| open_error(&root, source))?;
        Ok(Self {
            root,
            canonical_root,
            follow_links_outside_root: false,
            skipped: Arc::default(),
        })
    }

    /// Whether to follow symbolic links that lead outside the root (off by
    /// default): on for a store assembled out of links to data elsewhere.
    /// Off, a key reached through such a link is refused with
    /// [`StoreError::LinkOutsideRoot`] and listings skip it. Links that stay
    /// inside the root are followed either way.
    ///
    /// ```
    /// use zarrkit::store::FilesystemStore;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let store = FilesystemStore::new(dir.path())?.follow_links_outside_root(true);
    /// assert!(store.follows_links_outside_root());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn follow_links_outside_root(mut self, follow: bool) -> Self {
        self.follow_links_outside_root = follow;
        self
    }

    /// Whether links that lead outside the root are followed.
    #[must_use]
    pub fn follows_links_outside_root(&self) -> bool {
        self.follow_links_outside_root
    }

    /// The symbolic links listings of this store (and its clones) have
    /// skipped so far, sorted by path: loops, links out of the root (unless
    /// followed) and links that cannot be resolved.
    #[must_use]
    pub fn skipped_links(&self) -> Vec<SkippedLink> {
        self.skipped
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    fn skip(&self, path: String, target: Option<PathBuf>, reason: SkipReason) {
        self.skipped
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(SkippedLink {
                path,
                target,
                reason,
            });
    }

    /// Where `path` leads, with links resolved, when that lies outside the
    /// root; `None` inside it. A missing path is judged by its deepest
    /// existing ancestor, so a missing file beyond a link out of the root
    /// is outside too.
    fn outside_target(&self, path: &Path) -> io::Result<Option<PathBuf>> {
        let mut existing = path;
        let mut missing = Vec::new();
        let mut resolved = loop {
            match fs::canonicalize(existing) {
                Ok(canonical) => break canonical,
                Err(err) if is_missing(&err) => {
                    let (Some(parent), Some(name)) = (existing.parent(), existing.file_name())
                    else {
                        return Err(err);
                    };
                    missing.push(name);
                    existing = parent;
                }
                Err(err) => return Err(err),
            }
        };
        for name in missing.iter().rev() {
            resolved.push(name);
        }
        Ok((!resolved.starts_with(&self.canonical_root)).then_some(resolved))
    }

    /// Reads a batch of values or ranges (see [`Store::get_partial_values`]),
    /// on the I/O threads when `parallel`, else on the caller's thread.
    fn read_batch(
        &self,
        requests: &[ReadRequest],
        parallel: bool,
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let groups = group_requests(requests);
        // Files are read in parallel on the store's I/O threads, however
        // many the caller's pool has: a cold read waits on the disk, and
        // more reads in flight keep the device busy while the caller's
        // threads decode the batch before (the array engine fetches ahead).
        // The root is opened once for them all.
        let root = if groups.len() > 1 {
            self.batch_root()
        } else {
            None
        };
        let read_group = |(key, indices): (&StoreKey, Vec<usize>)| {
            // Reads that may wait always answer.
            self.read_group(key, &indices, requests, root.as_ref(), false)
                .unwrap_or_default()
        };
        // A small batch (a region's few chunks) first reads what the page
        // cache holds on the caller's thread; only files that would wait
        // on the device go to the I/O threads.
        let mut results: Vec<(usize, ReadResult)> = Vec::new();
        #[cfg(target_os = "linux")]
        let groups = if parallel && (2..=CACHED_FIRST_FILES).contains(&groups.len()) {
            let mut uncached = Vec::new();
            for (key, indices) in groups {
                match self.read_group(key, &indices, requests, root.as_ref(), true) {
                    Some(answers) => results.extend(answers),
                    None => uncached.push((key, indices)),
                }
            }
            uncached
        } else {
            groups
        };
        match io_pool().filter(|_| parallel && groups.len() > 1) {
            Some(pool) => pool.install(|| {
                results.par_extend(
                    groups
                        .into_par_iter()
                        .with_max_len(1)
                        .flat_map_iter(read_group),
                );
            }),
            None => results.extend(groups.into_iter().flat_map(read_group)),
        }

        let mut answers: Vec<Option<Vec<u8>>> = vec![None; requests.len()];
        // The error to report is that of the earliest failing request.
        let mut first_error: Option<(usize, StoreError)> = None;
        for (i, result) in results {
            match result {
                Ok(answer) => answers[i] = answer,
                Err(err) => {
                    if first_error.as_ref().is_none_or(|(at, _)| i < *at) {
                        first_error = Some((i, err));
                    }
                }
            }
        }
        match first_error {
            Some((_, err)) => Err(err),
            None => Ok(answers),
        }
    }

    /// [`Store::get_values_each`]: each file read on the I/O threads and
    /// its answers handed to `each` there, as soon as it is read.
    fn read_each(
        &self,
        requests: &[ReadRequest],
        each: &(dyn Fn(usize, ReadResult) -> bool + Sync),
    ) {
        let groups = group_requests(requests);
        let root = if groups.len() > 1 {
            self.batch_root()
        } else {
            None
        };
        let stop = AtomicBool::new(false);
        let read_group = |(key, indices): (&StoreKey, Vec<usize>)| {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let answers = self
                .read_group(key, &indices, requests, root.as_ref(), false)
                .unwrap_or_default();
            for (i, answer) in answers {
                if !each(i, answer) {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
            }
        };
        match io_pool().filter(|_| groups.len() > 1) {
            Some(pool) => pool.install(|| {
                groups.into_par_iter().with_max_len(1).for_each(read_group);
            }),
            None => groups.into_iter().for_each(read_group),
        }
    }

    /// Reads the ranges `indices` of `requests` (all of `key`): every
    /// answer, errors included (a failed read ends the group). With
    /// `cached_only`, from the page cache alone (Linux; elsewhere reads
    /// wait), and `None` when a read would wait on the device: the caller
    /// then reads the group again on the I/O threads.
    fn read_group(
        &self,
        key: &StoreKey,
        indices: &[usize],
        requests: &[ReadRequest],
        root: Option<&RootDir>,
        cached_only: bool,
    ) -> Option<Vec<(usize, ReadResult)>> {
        let (file, len) = match self.open_for_read(key, root) {
            Err(err) => return Some(vec![(indices[0], Err(err))]),
            Ok(None) => return Some(indices.iter().map(|&i| (i, Ok(None))).collect()),
            Ok(Some(open)) => open,
        };
        let mut answers = Vec::with_capacity(indices.len());
        for &i in indices {
            let range = requests[i].1;
            #[cfg(target_os = "linux")]
            let read = if cached_only {
                read_range_cached(&file, key, len, range)
            } else {
                read_range(&file, key, len, range).map(Some)
            };
            #[cfg(not(target_os = "linux"))]
            let read = {
                let _ = cached_only;
                read_range(&file, key, len, range).map(Some)
            };
            match read {
                Ok(Some(bytes)) => answers.push((i, Ok(Some(bytes)))),
                Ok(None) => {
                    BUFFERS.give(answers.into_iter().filter_map(|(_, a)| a.ok().flatten()));
                    return None;
                }
                Err(err) => {
                    answers.push((i, Err(err)));
                    break;
                }
            }
        }
        Some(answers)
    }

    /// The root directory opened (`O_PATH`) for a batch of opens beneath
    /// it, so that each need not open it again; `None` where opens do not
    /// go through it (links out of the root are followed, or the system
    /// has no `openat2`) or it cannot be opened (each open then reports
    /// why).
    fn batch_root(&self) -> Option<RootDir> {
        #[cfg(target_os = "linux")]
        if !self.follow_links_outside_root {
            return open_root_dir(&self.root).ok().map(RootDir);
        }
        None
    }

    /// Opens the file of `key` (at `path`) unless the way to it leaves the
    /// root through a link and such links are not followed; beneath `root`
    /// when the caller has opened it.
    fn open_inside(
        &self,
        key: &StoreKey,
        path: &Path,
        access: Access,
        root: Option<&RootDir>,
    ) -> io::Result<Opened> {
        let open = || match access {
            Access::Read | Access::Directory | Access::Path => File::open(path),
            Access::Write => OpenOptions::new().write(true).open(path),
        };
        if self.follow_links_outside_root {
            return open().map(Opened::File);
        }
        // One `openat2(RESOLVE_BENEATH)` both opens the file and checks that
        // no link on the way leaves the root; only when it refuses (a link
        // out of the root, or an absolute link, which it refuses even when
        // it points inside) is the path resolved by hand.
        #[cfg(target_os = "linux")]
        {
            let opened = match root {
                Some(root) => open_beneath_at(&root.0, key.as_str(), access),
                None => open_beneath(&self.root, key.as_str(), access),
            };
            if let Some(opened) = opened {
                return opened.map(Opened::File);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (key, root);
        match self.outside_target(path)? {
            Some(target) => Ok(Opened::Outside(target)),
            None => open().map(Opened::File),
        }
    }

    /// Checks that `dir`, the directory a write or erase of `key` works in,
    /// does not lie beyond a link out of the root (unless such links are
    /// followed). `error` wraps a failure to find out.
    fn check_dir_inside(
        &self,
        key: &str,
        dir: &Path,
        error: impl FnOnce(io::Error) -> StoreError,
    ) -> Result<(), StoreError> {
        if self.follow_links_outside_root {
            return Ok(());
        }
        #[cfg(target_os = "linux")]
        if let Ok(rel) = dir.strip_prefix(&self.root) {
            // The fast path: one `openat2(RESOLVE_BENEATH)` of the directory
            // (the root itself when `rel` is empty).
            let rel = if rel.as_os_str().is_empty() {
                Path::new(".")
            } else {
                rel
            };
            if let Some(rel) = rel.to_str()
                && let Some(Ok(_)) = open_beneath(&self.root, rel, Access::Directory)
            {
                return Ok(());
            }
        }
        match self.outside_target(dir) {
            Ok(None) => Ok(()),
            Ok(Some(target)) => Err(self.outside_error(key, &target)),
            Err(err) => Err(error(err)),
        }
    }

    fn outside_error(&self, key: &str, target: &Path) -> StoreError {
        StoreError::LinkOutsideRoot {
            store: NAME,
            key: key.to_string(),
            target: target.display().to_string(),
        }
    }

    /// Whether a listing follows the link at `rel` (under the root) that
    /// resolves to `target`, given the canonical directories being listed
    /// (`chain`); records the link as skipped when not.
    fn follows_link(&self, rel: &str, target: &Path, chain: &[PathBuf], is_dir: bool) -> bool {
        let reason = if is_dir && chain.iter().any(|dir| dir.starts_with(target)) {
            SkipReason::Loop
        } else if !self.follow_links_outside_root && !target.starts_with(&self.canonical_root) {
            SkipReason::OutsideRoot
        } else {
            return true;
        };
        self.skip(rel.to_string(), Some(target.to_path_buf()), reason);
        false
    }

    /// The canonical directories from the root down to `prefix`'s, for loop
    /// checks in a listing of `prefix`.
    fn chain_of(&self, prefix: &StorePrefix) -> Vec<PathBuf> {
        let mut chain = vec![self.canonical_root.clone()];
        let mut path = self.root.clone();
        if let Some(body) = prefix.as_str().strip_suffix('/') {
            for segment in body.split('/') {
                path.push(segment);
                if let Ok(canonical) = fs::canonicalize(&path) {
                    chain.push(canonical);
                }
            }
        }
        chain
    }

    /// The root directory (absolute).
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The temporary files (`.zarrkit-tmp.*`) and lock files
    /// (`.zarrkit-lock.*`) under the root, as paths relative to it, sorted:
    /// what writers killed part way left (or what live writers are using).
    /// Listings skip them; `zarrkit check` reports them. Links are not
    /// followed.
    ///
    /// # Errors
    /// [`StoreError::List`] naming the directory that could not be read.
    pub fn leftover_files(&self) -> Result<Vec<PathBuf>, StoreError> {
        // Replaced values being removed are no leftovers.
        settle_removals();
        let mut found = Vec::new();
        let mut dirs = vec![self.root.clone()];
        while let Some(dir) = dirs.pop() {
            let relative =
                |path: &Path| path.strip_prefix(&self.root).unwrap_or(path).to_path_buf();
            let error = |path: &Path, source| StoreError::List {
                store: NAME,
                prefix: relative(path).display().to_string(),
                source,
            };
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(err) if is_missing(&err) => continue,
                Err(err) => return Err(error(&dir, err)),
            };
            for entry in entries {
                let entry = entry.map_err(|err| error(&dir, err))?;
                let path = entry.path();
                let file_type = entry.file_type().map_err(|err| error(&path, err))?;
                if file_type.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with(TEMP_PREFIX) || name.starts_with(LOCK_PREFIX) {
                    found.push(relative(&path));
                }
            }
        }
        found.sort();
        Ok(found)
    }

    /// Removes the temporary files (`.zarrkit-tmp.*`) and lock files
    /// (`.zarrkit-lock.*`) that writers killed part way left under the root
    /// ([`FilesystemStore::leftover_files`]), and returns how many it
    /// removed. Listings skip such files, but they take space. Links are
    /// not followed.
    ///
    /// Only for a store that no other process is writing to: a live
    /// writer's temporary file would be removed too, and its write fail.
    ///
    /// # Errors
    /// [`StoreError::List`] naming a directory that could not be read, or
    /// [`StoreError::Erase`] naming the file that could not be removed.
    pub fn remove_leftover_files(&self) -> Result<u64, StoreError> {
        let mut removed = 0;
        for relative in self.leftover_files()? {
            match fs::remove_file(self.root.join(&relative)) {
                Ok(()) => removed += 1,
                Err(err) if is_missing(&err) => {}
                Err(err) => return Err(erase_error(&relative.display().to_string(), err)),
            }
        }
        Ok(removed)
    }

    /// The path of `key`: its segments joined under the root.
    fn key_path(&self, key: &StoreKey) -> PathBuf {
        self.segments_path(key.as_str())
    }

    /// The directory of `prefix` (the root for the root prefix).
    fn prefix_path(&self, prefix: &StorePrefix) -> PathBuf {
        match prefix.as_str().strip_suffix('/') {
            Some(body) => self.segments_path(body),
            None => self.root.clone(),
        }
    }

    fn segments_path(&self, segments: &str) -> PathBuf {
        let mut path = self.root.clone();
        for segment in segments.split('/') {
            // StoreKey and StorePrefix reject `..`, `.`, empty segments,
            // separators and (on Windows) drive letters, so every segment is
            // one plain path component and the path stays under the root.
            debug_assert!(
                matches!(
                    Path::new(segment).components().collect::<Vec<_>>()[..],
                    [std::path::Component::Normal(_)]
                ),
                "store key segment `{segment}` is not a plain path component"
            );
            path.push(segment);
        }
        path
    }

    /// Opens the file of `key` for reading, with its length; `None` if there is no such file.
    fn open_for_read(
        &self,
        key: &StoreKey,
        root: Option<&RootDir>,
    ) -> Result<Option<(File, u64)>, StoreError> {
        Ok(self
            .open_with_metadata(key, root)?
            .map(|(file, metadata)| (file, metadata.len())))
    }

    /// Opens the file of `key` for reading; `None` if there is no such
    /// file (a directory may open: the caller finds out).
    fn open_file(
        &self,
        key: &StoreKey,
        root: Option<&RootDir>,
    ) -> Result<Option<File>, StoreError> {
        let path = self.key_path(key);
        match self.open_inside(key, &path, Access::Read, root) {
            Ok(Opened::File(file)) => Ok(Some(file)),
            Ok(Opened::Outside(target)) => Err(self.outside_error(key.as_str(), &target)),
            Err(err) if is_missing(&err) || is_directory(&path) => Ok(None),
            Err(err) => Err(read_error(key, err)),
        }
    }

    /// [`Self::open_for_read`], with the file's metadata (one `statx`).
    fn open_with_metadata(
        &self,
        key: &StoreKey,
        root: Option<&RootDir>,
    ) -> Result<Option<(File, fs::Metadata)>, StoreError> {
        let Some(file) = self.open_file(key, root)? else {
            return Ok(None);
        };
        let metadata = file.metadata().map_err(|err| read_error(key, err))?;
        // Opening a directory succeeds on Unix; a directory holds no value.
        if metadata.is_dir() {
            return Ok(None);
        }
        Ok(Some((file, metadata)))
    }

    /// Reads the whole value of `key`, expected to be small (a metadata
    /// document): one read of up to [`SMALL_READ`] bytes, and only a
    /// value that fills it costs a `statx` for its length and a second
    /// read. Opening, `statx`, reading and closing each took about as
    /// long (1,000 arrays opened: 1,000 of each).
    #[cfg(unix)]
    fn read_small(&self, key: &StoreKey, root: Option<&RootDir>) -> ReadResult {
        let Some(file) = self.open_file(key, root)? else {
            return Ok(None);
        };
        let mut first = [0u8; SMALL_READ];
        let n = match read_first(&mut first, |buf, at| rustix::io::pread(&file, buf, at)) {
            Ok(n) => n,
            // Opening a directory succeeds on Unix; a directory holds no value.
            Err(rustix::io::Errno::ISDIR) => return Ok(None),
            Err(err) => return Err(read_error(key, err.into())),
        };
        if n < SMALL_READ {
            return Ok(Some(first[..n].to_vec()));
        }
        let len = file.metadata().map_err(|err| read_error(key, err))?.len();
        let (_, n_bytes, mut bytes) = range_buffer(key, len, None)?;
        bytes.extend_from_slice(&first[..SMALL_READ.min(n_bytes)]);
        read_at(&file, &mut bytes, n_bytes, 0).map_err(|err| read_error(key, err))?;
        check_read_whole(key, &bytes, n_bytes)?;
        Ok(Some(bytes))
    }

    /// [`Self::read_small`] from the kernel's caches alone, on Linux: the
    /// path resolved from the dentry cache (`openat2` with
    /// `RESOLVE_CACHED`, Linux 5.12) and the bytes read from the page cache
    /// (`RWF_NOWAIT`). `None` when either would wait on the device, and
    /// for anything [`Self::read_small`] answers more carefully (a value
    /// that fills its first read, a directory, a link out of the root, an
    /// older kernel): the caller reads those the usual way.
    #[cfg(target_os = "linux")]
    fn read_small_cached(&self, key: &StoreKey, root: &RootDir) -> Option<ReadResult> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        use rustix::io::{Errno, ReadWriteFlags};
        let file = match rustix::fs::openat2(
            &root.0,
            key.as_str(),
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS | ResolveFlags::CACHED,
        ) {
            Ok(fd) => fd,
            // A cached negative entry: no such file. (ENOTDIR, a file on
            // the way, is left to the usual path with the rest.)
            Err(Errno::NOENT) => return Some(Ok(None)),
            Err(_) => return None,
        };
        let mut first = [0u8; SMALL_READ];
        let nowait = |buf: &mut [u8], at| {
            let mut bufs = [std::io::IoSliceMut::new(buf)];
            rustix::io::preadv2(&file, &mut bufs, at, ReadWriteFlags::NOWAIT)
        };
        // Not cached (EAGAIN), a directory (which has no `RWF_NOWAIT`
        // reads), any failure the usual read reports, or a value that
        // fills the first read: `None`.
        match read_first(&mut first, nowait) {
            Ok(n) if n < SMALL_READ => Some(Ok(Some(first[..n].to_vec()))),
            _ => None,
        }
    }

    /// Opens the file of `key` as a version for a snapshot; `None` if there is no such file.
    fn open_version(&self, key: &StoreKey) -> Result<Option<FileVersion>, StoreError> {
        let Some((file, metadata)) = self.open_with_metadata(key, None)? else {
            return Ok(None);
        };
        Ok(Some(FileVersion {
            file,
            len: metadata.len(),
            identity: FileIdentity::of(&metadata),
        }))
    }

    /// Writes `value` to a new temporary file in the directory of `path`
    /// (creating the directory if missing), to be renamed into place.
    fn write_temp(
        &self,
        key: &StoreKey,
        path: &Path,
        value: &[u8],
    ) -> Result<TempFile, StoreError> {
        let dir = path.parent().unwrap_or(&self.root);
        let mut attempt = 0;
        let (mut file, temp) = loop {
            attempt += 1;
            let temp_path = dir.join(temp_name());
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp_path)
            {
                Ok(file) => {
                    let temp = TempFile {
                        path: temp_path,
                        persisted: false,
                    };
                    break (file, temp);
                }
                // The directory is missing: create it (once more if a
                // concurrent erase removed it again as empty).
                Err(err) if err.kind() == ErrorKind::NotFound && attempt < TEMP_ATTEMPTS => {
                    match fs::create_dir_all(dir) {
                        // A concurrent erase removed a parent between two
                        // of the `mkdir` calls (NotFound), or removed a
                        // directory that `mkdir` had just found
                        // (AlreadyExists, as std then sees no directory):
                        // try again. A file in the way shows up as
                        // NotADirectory on the next attempt.
                        Err(err)
                            if !matches!(
                                err.kind(),
                                ErrorKind::NotFound | ErrorKind::AlreadyExists
                            ) =>
                        {
                            return Err(write_error(key, err));
                        }
                        _ => {}
                    }
                }
                Err(err) if err.kind() == ErrorKind::AlreadyExists && attempt < TEMP_ATTEMPTS => {}
                Err(err) => return Err(write_error(key, err)),
            }
        };
        file.write_all(value).map_err(|err| write_error(key, err))?;
        Ok(temp)
    }

    /// Renames the temporary file `temp` over `path`, atomically for readers.
    fn persist(key: &StoreKey, mut temp: TempFile, path: &Path) -> Result<(), StoreError> {
        if replace_by_exchange(&temp.path, path) {
            // The old value now sits under the temporary name; dropping
            // `temp` removes it.
            return Ok(());
        }
        fs::rename(&temp.path, path).map_err(|err| write_error(key, err))?;
        temp.persisted = true;
        Ok(())
    }

    /// Moves the temporary file `temp` to `path` only if nothing is there,
    /// in one step; returns whether it did. Where something is, `temp` is
    /// removed and the target left alone.
    fn persist_new(key: &StoreKey, temp: TempFile, path: &Path) -> Result<bool, StoreError> {
        // After a link the temporary name is a second name of the new file,
        // which dropping `temp` removes; after a rename it is gone, and
        // removing it again fails harmlessly (the name is this process's
        // own, so no other file can have taken it).
        match create_by_rename(&temp.path, path).unwrap_or_else(|| fs::hard_link(&temp.path, path))
        {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == ErrorKind::AlreadyExists => Self::found_at(key, path, err),
            Err(err) => Err(write_error(key, err)),
        }
    }

    /// What a create-only write of `key` that found something at `path`
    /// (`err`, "already exists") answers: `false` for a value there. A
    /// directory or a link that leads nowhere holds no value, but a plain
    /// `set` cannot replace it either: reported as `set` would rather than
    /// as a value found.
    fn found_at(key: &StoreKey, path: &Path, err: io::Error) -> Result<bool, StoreError> {
        match fs::symlink_metadata(path) {
            Ok(metadata) if metadata.is_file() => Ok(false),
            Ok(metadata) if metadata.file_type().is_symlink() && path.is_file() => Ok(false),
            _ => Err(write_error(key, err)),
        }
    }

    /// Creates `key` with `value` only if nothing is there, without a named
    /// temporary file: the value goes into an anonymous file in the key's
    /// directory (`O_TMPFILE`), which is then linked under the key's name
    /// (`linkat`, which fails where the name exists). Readers see the whole
    /// value or none, as with a rename; a writer killed part way leaves
    /// nothing behind (the anonymous file dies with it); and it takes
    /// fewer system calls than a named temporary file (no name to create,
    /// check and rename away). The directory is found beneath the root
    /// (`openat2(RESOLVE_BENEATH)`), so no link leads the write out of it;
    /// it is made with one `mkdirat` in its parent first (an existing one
    /// answers `EEXIST`), since a new node's directory is mostly missing.
    ///
    /// `None` where this way cannot be taken: a kernel or filesystem
    /// without `openat2` or `O_TMPFILE`, no `/proc` to link through, a
    /// link on the way to the directory, a missing directory deeper than
    /// one level, a concurrent erase of the directory, a file where a
    /// directory should be. Nothing is stored under `key` then, and the
    /// caller takes the named temporary file's way, which deals with each.
    #[cfg(target_os = "linux")]
    fn create_linked(&self, key: &StoreKey, value: &[u8]) -> Option<Result<bool, StoreError>> {
        use rustix::fd::AsRawFd;
        use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};
        use rustix::io::Errno;
        let dir_flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let beneath = |base: &rustix::fd::OwnedFd, rel: &str| {
            rustix::fs::openat2(
                base,
                rel,
                dir_flags,
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
            )
        };
        let root = rustix::fs::open(&self.root, dir_flags, Mode::empty()).ok()?;
        let (dir, name) = match key.as_str().rsplit_once('/') {
            None => (root, key.as_str()),
            Some((rel, name)) => {
                // The key's directory is mostly new (a new node's): make it
                // first, where its parent is (one level; deeper, the
                // caller's way makes every missing level), rather than
                // look for it first. `mkdirat` follows no link in its last
                // component, and the parent was found beneath the root.
                let (parent, last) = match rel.rsplit_once('/') {
                    None => (root, rel),
                    Some((parent, last)) => (beneath(&root, parent).ok()?, last),
                };
                match rustix::fs::mkdirat(&parent, last, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(_) => return None,
                }
                (beneath(&parent, last).ok()?, name)
            }
        };
        let anonymous = rustix::fs::openat(
            &dir,
            ".",
            OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .ok()?;
        let mut file = File::from(anonymous);
        if let Err(err) = file.write_all(value) {
            return Some(Err(write_error(key, err)));
        }
        // Linking the descriptor itself (`AT_EMPTY_PATH`) needs no
        // privilege since Linux 6.10, and skips the walk through `/proc`
        // (a third of the create's kernel time on tmpfs); before, without
        // `CAP_DAC_READ_SEARCH`, it fails with `ENOENT`, and linking
        // through the descriptor's `/proc` link needs no privilege.
        let linked = match rustix::fs::linkat(&file, "", &dir, name, AtFlags::EMPTY_PATH) {
            Err(Errno::NOENT | Errno::PERM | Errno::INVAL | Errno::NOSYS) => {
                let link = format!("/proc/self/fd/{}", file.as_raw_fd());
                rustix::fs::linkat(rustix::fs::CWD, &link, &dir, name, AtFlags::SYMLINK_FOLLOW)
            }
            other => other,
        };
        match linked {
            Ok(()) => {
                #[cfg(test)]
                LINKED.fetch_add(1, Ordering::Relaxed);
                Some(Ok(true))
            }
            Err(Errno::EXIST) => {
                let path = self.key_path(key);
                Some(Self::found_at(key, &path, Errno::EXIST.into()))
            }
            Err(_) => None,
        }
    }

    /// [`Store::set`] in the key's directory found once beneath the root
    /// (`openat2(RESOLVE_BENEATH)`, which also checks that no link leads
    /// out of it) and then named by its descriptor: the temporary file is
    /// created, checked for, exchanged and removed relative to it. The
    /// same steps as the named-path way (temporary file, then an exchange
    /// with the old value or a rename, so readers see the old value or the
    /// new one), with one system call fewer and no path walked again from
    /// `/` for each of them; the directory checked is the one written in.
    ///
    /// `None`, with nothing left behind, where this way is not taken:
    /// links out of the root are followed, the directory is missing (the
    /// named way makes it), or any step but writing the data fails (the
    /// named way then reports the error as it always has).
    #[cfg(target_os = "linux")]
    fn set_beneath(&self, key: &StoreKey, value: &[u8]) -> Option<Result<(), StoreError>> {
        let mut temp = self.create_beneath(key)?;
        if let Err(err) = temp.file()?.write_all(value) {
            return Some(Err(write_error(key, err)));
        }
        temp.put_in_place().ok()?;
        #[cfg(test)]
        SET_BENEATH.fetch_add(1, Ordering::Relaxed);
        Some(Ok(()))
    }

    /// The first half of [`Self::set_beneath`]: the temporary file beside
    /// `key`, created relative to the descriptor of the key's directory,
    /// for the caller to write. `None` where that way is not taken.
    #[cfg(target_os = "linux")]
    fn create_beneath(&self, key: &StoreKey) -> Option<BeneathTemp> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        if self.follow_links_outside_root {
            return None;
        }
        let root = open_root_dir(&self.root).ok()?;
        let (dir, name) = match key.as_str().rsplit_once('/') {
            None => (root, key.as_str()),
            Some((rel, name)) => (
                rustix::fs::openat2(
                    &root,
                    rel,
                    OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                    ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
                )
                .ok()?,
                name,
            ),
        };
        let temp = temp_name();
        let file = rustix::fs::openat(
            &dir,
            temp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .ok()?;
        Some(BeneathTemp {
            dir: Some(dir),
            name: name.to_owned(),
            temp,
            file: Some(File::from(file)),
            placed: false,
        })
    }

    /// Removes the now-empty directories from `dir` up to, not including, the root.
    fn remove_empty_parents(&self, dir: Option<&Path>) {
        // A replaced value still being removed would keep its directory.
        settle_removals();
        let mut dir = dir;
        while let Some(current) = dir {
            if current == self.root || !current.starts_with(&self.root) {
                break;
            }
            // Fails, and ends the walk, at the first directory that is not
            // empty (or that a concurrent writer has just filled).
            if fs::remove_dir(current).is_err() {
                break;
            }
            dir = current.parent();
        }
    }

    /// Adds every key under `dir` (whose key prefix is `key_prefix`) to `keys`.
    ///
    /// `ancestors` holds the canonical paths of the directories being
    /// walked (from the root), so that a symbolic link to one of them, or
    /// to a directory containing one, is not followed: a loop.
    fn walk(
        &self,
        listed: &StorePrefix,
        dir: &Path,
        key_prefix: &str,
        ancestors: &mut Vec<PathBuf>,
        keys: &mut Vec<StoreKey>,
    ) -> Result<(), StoreError> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            // A concurrent erase removed the directory after its parent was read.
            Err(err) if is_missing(&err) => return Ok(()),
            Err(err) => return Err(list_error(listed, err)),
        };
        for entry in entries {
            let entry = entry.map_err(|err| list_error(listed, err))?;
            let Some(name) = entry_name(&entry) else {
                continue;
            };
            let rel = format!("{key_prefix}{name}");
            let Some(kind) = self.entry_kind(&entry, &rel, listed)? else {
                continue;
            };
            match kind {
                EntryKind::File { link } => {
                    if link && !self.follow_links_outside_root {
                        match fs::canonicalize(entry.path()) {
                            Ok(target) => {
                                if !self.follows_link(&rel, &target, ancestors, false) {
                                    continue;
                                }
                            }
                            Err(err) if is_missing(&err) => continue,
                            Err(err) => return Err(list_error(listed, err)),
                        }
                    }
                    if let Ok(key) = StoreKey::new(rel) {
                        keys.push(key);
                    }
                }
                EntryKind::Directory { link } => {
                    let Ok(child) = StorePrefix::new(format!("{rel}/")) else {
                        continue;
                    };
                    let canonical = if link {
                        match fs::canonicalize(entry.path()) {
                            Ok(canonical) => canonical,
                            Err(err) if is_missing(&err) => continue,
                            Err(err) => return Err(list_error(listed, err)),
                        }
                    } else {
                        match ancestors.last() {
                            Some(parent) => parent.join(name),
                            None => continue,
                        }
                    };
                    if link && !self.follows_link(&rel, &canonical, ancestors, true) {
                        continue;
                    }
                    ancestors.push(canonical);
                    let walked = self.walk(listed, &entry.path(), child.as_str(), ancestors, keys);
                    ancestors.pop();
                    walked?;
                }
                EntryKind::Other | EntryKind::Unresolvable(_) => {}
            }
        }
        Ok(())
    }

    /// What `entry` (at `rel` under the root) is, following links; `None`,
    /// with the link recorded as skipped, for a link that cannot be
    /// resolved (a link to itself, a loop of links).
    fn entry_kind(
        &self,
        entry: &fs::DirEntry,
        rel: &str,
        listed: &StorePrefix,
    ) -> Result<Option<EntryKind>, StoreError> {
        match entry_kind(entry) {
            Ok(EntryKind::Unresolvable(err)) => {
                self.skip(
                    rel.to_string(),
                    None,
                    SkipReason::Unresolvable {
                        error: err.to_string(),
                    },
                );
                Ok(None)
            }
            Ok(kind) => Ok(Some(kind)),
            Err(err) => Err(list_error(listed, err)),
        }
    }
}

/// Opens `rel` under `root` with `openat2(RESOLVE_BENEATH)`, which fails
/// with `EXDEV` when a link on the way leaves `root` (or is absolute);
/// `None` then, or where `openat2` is missing (Linux before 5.6), for the
/// caller to resolve the path itself.
#[cfg(target_os = "linux")]
fn open_beneath(root: &Path, rel: &str, access: Access) -> Option<io::Result<File>> {
    match open_root_dir(root) {
        Ok(dir) => open_beneath_at(&dir, rel, access),
        Err(err) => Some(Err(err)),
    }
}

/// The root directory opened for [`open_beneath_at`] (`O_PATH`).
#[cfg(target_os = "linux")]
fn open_root_dir(root: &Path) -> io::Result<rustix::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    Ok(rustix::fs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// [`open_beneath`] in the root directory `dir`, opened already.
#[cfg(target_os = "linux")]
fn open_beneath_at(
    dir: &rustix::fd::OwnedFd,
    rel: &str,
    access: Access,
) -> Option<io::Result<File>> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    use rustix::io::Errno;
    let flags = match access {
        Access::Read => OFlags::RDONLY,
        Access::Write => OFlags::WRONLY,
        Access::Directory => OFlags::PATH | OFlags::DIRECTORY,
        Access::Path => OFlags::PATH,
    } | OFlags::CLOEXEC;
    match rustix::fs::openat2(
        dir,
        rel,
        flags,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    ) {
        Ok(fd) => Some(Ok(File::from(fd))),
        // EAGAIN: a rename raced the lookup; the slow path retries it.
        Err(Errno::XDEV | Errno::NOSYS | Errno::AGAIN) => None,
        Err(err) => Some(Err(err.into())),
    }
}

/// The root directory, opened once for a batch of opens beneath it (see
/// [`FilesystemStore::batch_root`]).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct RootDir(#[cfg(target_os = "linux")] rustix::fd::OwnedFd);

/// What a directory entry is, following symbolic links.
enum EntryKind {
    File {
        /// Whether the entry is a symbolic link to the file.
        link: bool,
    },
    Directory {
        /// Whether the entry is a symbolic link to the directory.
        link: bool,
    },
    /// A broken link, socket, FIFO or device: not a value.
    Other,
    /// A link that cannot be resolved, with the error resolving it.
    Unresolvable(io::Error),
}

fn entry_kind(entry: &fs::DirEntry) -> io::Result<EntryKind> {
    let file_type = entry.file_type()?;
    if file_type.is_file() {
        return Ok(EntryKind::File { link: false });
    }
    if file_type.is_dir() {
        return Ok(EntryKind::Directory { link: false });
    }
    if file_type.is_symlink() {
        return match fs::metadata(entry.path()) {
            Ok(metadata) if metadata.is_file() => Ok(EntryKind::File { link: true }),
            Ok(metadata) if metadata.is_dir() => Ok(EntryKind::Directory { link: true }),
            Ok(_) => Ok(EntryKind::Other),
            Err(err) if is_missing(&err) => Ok(EntryKind::Other),
            // A link to itself, a loop of links ("too many levels of
            // symbolic links"), or one the user may not resolve.
            Err(err) => Ok(EntryKind::Unresolvable(err)),
        };
    }
    Ok(EntryKind::Other)
}

/// The entry's name if it can be part of a key: UTF-8 and not a temporary or lock file.
fn entry_name(entry: &fs::DirEntry) -> Option<String> {
    let name = entry.file_name().into_string().ok()?;
    (!name.starts_with(TEMP_PREFIX) && !name.starts_with(LOCK_PREFIX)).then_some(name)
}

fn temp_name() -> String {
    let counter = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{TEMP_PREFIX}{}.{counter}", process_id())
}

/// This process's id, asked of the kernel once (`getpid` was one system
/// call of a dozen per stored chunk). A child forked after the first ask
/// names its temporary files with its parent's id: creating them is
/// exclusive, so a name its parent holds is skipped, never shared.
fn process_id() -> u32 {
    static ID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *ID.get_or_init(std::process::id)
}

/// A temporary file that is removed when dropped, unless it was renamed into place.
struct TempFile {
    path: PathBuf,
    persisted: bool,
}

impl Drop for FilesystemStore {
    fn drop(&mut self) {
        // What this store replaced is gone when it is.
        settle_removals();
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.persisted {
            // Best effort: the write already failed, and that error is the one to report.
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// A temporary file beside a key, named relative to the descriptor of
/// the key's directory ([`FilesystemStore::create_beneath`]), removed when
/// dropped unless it was put in place.
#[cfg(target_os = "linux")]
struct BeneathTemp {
    /// The key's directory; `None` once handed to the removal threads.
    dir: Option<rustix::fd::OwnedFd>,
    /// The key's name in `dir`.
    name: String,
    /// The temporary file's name in `dir`.
    temp: String,
    /// The temporary file, open for writing until it is put in place.
    file: Option<File>,
    placed: bool,
}

#[cfg(target_os = "linux")]
impl BeneathTemp {
    /// The second half of [`FilesystemStore::set_beneath`]: closes the
    /// file and puts it in place under the key's name, by an exchange with
    /// the old value or a rename, so readers see the old value or the new
    /// one. The old value, then under the temporary name (which no listing
    /// shows), is removed; inside [`deferring`], on the removal threads.
    ///
    /// [`deferring`]: super::deferring
    fn put_in_place(mut self) -> io::Result<()> {
        use rustix::fs::{AtFlags, FileType, RenameFlags};
        // Closed first, as `set` always closed its file before renaming.
        drop(self.file.take());
        let dir = self.dir_fd()?;
        // As `replace_by_exchange`: only a regular file is exchanged (an
        // exchange would swap a directory away, where a rename refuses).
        let replaces_a_file =
            rustix::fs::statat(dir, self.name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile);
        if replaces_a_file
            && rustix::fs::renameat_with(
                dir,
                self.temp.as_str(),
                dir,
                self.name.as_str(),
                RenameFlags::EXCHANGE,
            )
            .is_ok()
        {
            // The old value now sits under the temporary name.
            self.placed = true;
            if super::is_deferring()
                && let Some(dir) = self.dir.take()
            {
                remove_later(dir, std::mem::take(&mut self.temp));
            } else {
                self.remove_temp();
            }
            return Ok(());
        }
        rustix::fs::renameat(dir, self.temp.as_str(), dir, self.name.as_str())?;
        self.placed = true;
        Ok(())
    }

    /// The temporary file, while it is open for writing.
    fn file(&mut self) -> Option<&mut File> {
        self.file.as_mut()
    }

    fn dir_fd(&self) -> io::Result<&rustix::fd::OwnedFd> {
        self.dir
            .as_ref()
            .ok_or_else(|| io::Error::other("the directory was handed over"))
    }

    /// Removes the temporary name, best effort, as `TempFile` does: the
    /// name is this process's own.
    fn remove_temp(&self) {
        if let Some(dir) = &self.dir {
            let _ = rustix::fs::unlinkat(dir, self.temp.as_str(), rustix::fs::AtFlags::empty());
        }
    }
}

#[cfg(target_os = "linux")]
impl Drop for BeneathTemp {
    fn drop(&mut self) {
        if !self.placed {
            self.remove_temp();
        }
    }
}

/// A value [`Store::begin_set`] writes in parts: a temporary file beside
/// its key, put in place on commit.
#[cfg(target_os = "linux")]
struct PendingFile {
    key: StoreKey,
    temp: BeneathTemp,
}

#[cfg(target_os = "linux")]
impl super::PendingValue for PendingFile {
    fn append(&mut self, parts: &[&[u8]]) -> Result<(), StoreError> {
        let mut slices: Vec<io::IoSlice<'_>> = parts.iter().map(|p| io::IoSlice::new(p)).collect();
        let mut rest = slices.as_mut_slice();
        // `writev` of every part at once; the kernel takes what it will.
        while !rest.is_empty() {
            let file = self.temp.file().ok_or_else(|| {
                write_error(
                    &self.key,
                    io::Error::other("the value was already put in place"),
                )
            })?;
            match file.write_vectored(rest) {
                Ok(0) => {
                    return Err(write_error(
                        &self.key,
                        io::Error::new(ErrorKind::WriteZero, "the file took no more bytes"),
                    ));
                }
                Ok(n) => io::IoSlice::advance_slices(&mut rest, n),
                Err(err) if err.kind() == ErrorKind::Interrupted => {}
                Err(err) => return Err(write_error(&self.key, err)),
            }
        }
        Ok(())
    }

    fn commit(self: Box<Self>) -> Result<(), StoreError> {
        let Self { key, temp } = *self;
        temp.put_in_place().map_err(|err| write_error(&key, err))?;
        #[cfg(test)]
        PARTS_COMMITTED.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// Whether `err` means there is nothing at the path: the file is missing, or
/// a component of the path is a file rather than a directory.
fn is_missing(err: &io::Error) -> bool {
    matches!(err.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

/// Whether `path` is a directory (following links); false if that cannot be told.
fn is_directory(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|metadata| metadata.is_dir())
}

fn absolute(root: &Path) -> Result<PathBuf, StoreError> {
    std::path::absolute(root).map_err(|source| open_error(root, source))
}

fn open_error(root: &Path, source: io::Error) -> StoreError {
    StoreError::Open {
        store: NAME,
        path: root.display().to_string(),
        source,
    }
}

/// The bytes [`FilesystemStore::read_small`] reads before asking a
/// value's length: more than most metadata documents.
#[cfg(unix)]
const SMALL_READ: usize = 16 << 10;

/// Reads a file from its start into `first` with `read` (`pread`, or a
/// variant that must not wait) until `first` is full or the file ends, and
/// returns how many bytes it read: fewer than `first` holds only at the
/// end of the file (a read that returned nothing).
#[cfg(unix)]
fn read_first(
    first: &mut [u8],
    mut read: impl FnMut(&mut [u8], u64) -> rustix::io::Result<usize>,
) -> rustix::io::Result<usize> {
    let mut n = 0;
    while n < first.len() {
        match read(&mut first[n..], n as u64) {
            Ok(0) => break,
            Ok(read) => n += read,
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err),
        }
    }
    Ok(n)
}

/// The replaced values being removed on the removal threads, and a
/// signal for those who wait until there are none ([`settle_removals`]).
static REMOVALS: (Mutex<usize>, std::sync::Condvar) = (Mutex::new(0), std::sync::Condvar::new());

/// Removes `name` in `dir` (a replaced value under a temporary name) on
/// the removal threads ([`removal_queue`]), so that the writer does not
/// wait: freeing a file's blocks can wait on the device (a file system
/// mounted with `discard` trims them before the removal returns, 0.1–0.4
/// ms a 512 KiB chunk on this repository's machine, a third of a 64-chunk
/// write's time).
#[cfg(target_os = "linux")]
fn remove_later(dir: rustix::fd::OwnedFd, name: String) {
    let remove = move || {
        #[cfg(test)]
        std::thread::sleep(std::time::Duration::from_millis(
            REMOVAL_DELAY_MS.load(Ordering::Relaxed),
        ));
        // Best effort, as `TempFile` does: the name is this process's own.
        let _ = rustix::fs::unlinkat(&dir, name.as_str(), rustix::fs::AtFlags::empty());
    };
    let Some(queue) = removal_queue() else {
        return remove();
    };
    let (pending, _) = &REMOVALS;
    *pending.lock().unwrap_or_else(PoisonError::into_inner) += 1;
    let removal: Removal = Box::new(move || {
        remove();
        let (pending, idle) = &REMOVALS;
        let mut pending = pending.lock().unwrap_or_else(PoisonError::into_inner);
        *pending -= 1;
        if *pending == 0 {
            idle.notify_all();
        }
    });
    // The threads never stop, so the queue is never closed; were it
    // closed, the removal runs here.
    if let Err(std::sync::mpsc::SendError(removal)) = queue.send(removal) {
        removal();
    }
}

/// One removal for [`removal_queue`]'s threads.
#[cfg(target_os = "linux")]
type Removal = Box<dyn FnOnce() + Send>;

/// The threads of [`removal_queue`].
#[cfg(target_os = "linux")]
const REMOVAL_THREADS: usize = 4;

/// The queue of [`remove_later`]: [`REMOVAL_THREADS`] threads, made on
/// first use, that sleep until a removal arrives. Not [`io_pool`]:
/// rayon's idle workers spin before they sleep, and up to 16 of them woken
/// for a write's 64 removals took CPU from the threads encoding it
/// (bench-compare child, fresh-process writes of the 256³ array, 12
/// interleaved runs each, medians and worst: v2 blosc 11.9 ms and 15.9 ms
/// on the I/O pool, 9.8 and 11.6 ms on 4 blocking threads; v2 zlib 23.0
/// and 39.2, 22.6 and 25.3; zstd 10.1 and 14.4, 9.6 and 13.1). `None` if
/// no thread can be started: the writer removes.
#[cfg(target_os = "linux")]
fn removal_queue() -> Option<&'static std::sync::mpsc::Sender<Removal>> {
    static QUEUE: std::sync::OnceLock<Option<std::sync::mpsc::Sender<Removal>>> =
        std::sync::OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (sender, receiver) = std::sync::mpsc::channel::<Removal>();
            let receiver = Arc::new(Mutex::new(receiver));
            let started = (0..REMOVAL_THREADS)
                .filter(|i| {
                    let receiver = Arc::clone(&receiver);
                    std::thread::Builder::new()
                        .name(format!("zarrkit-remove-{i}"))
                        .spawn(move || {
                            loop {
                                // The lock is held while waiting for the
                                // next removal (the other threads wait for
                                // the lock) and let go before running it.
                                let next = receiver
                                    .lock()
                                    .unwrap_or_else(PoisonError::into_inner)
                                    .recv();
                                match next {
                                    Ok(removal) => removal(),
                                    Err(_) => return,
                                }
                            }
                        })
                        .is_ok()
                })
                .count();
            (started > 0).then_some(sender)
        })
        .as_ref()
}

/// How long each background removal waits first, so that tests can see
/// what happens before it is done.
#[cfg(all(test, target_os = "linux"))]
pub(crate) static REMOVAL_DELAY_MS: AtomicU64 = AtomicU64::new(0);

/// Waits until no replaced value is being removed ([`remove_later`]), in
/// any store of the process.
fn settle_removals() {
    let (pending, idle) = &REMOVALS;
    let pending = pending.lock().unwrap_or_else(PoisonError::into_inner);
    drop(
        idle.wait_while(pending, |n| *n > 0)
            .unwrap_or_else(PoisonError::into_inner),
    );
}

/// The most small values [`Store::get_small_values`] reads one after
/// another on the caller's thread; more go to [`io_pool`].
#[cfg(unix)]
const SMALL_VALUES_ON_CALLER: usize = 8;

/// The threads of [`io_pool`].
const IO_THREADS: usize = 16;

/// The most files a batch reads from the page cache on the caller's
/// thread before handing those that would wait on the device to
/// [`io_pool`] (a region's few chunks; larger batches, whole reads, go to
/// the I/O threads at once, which also share out the copying from the
/// cache). Handing each file of a 32³ region of 64³ zstd chunks to the I/O
/// threads made 56 context switches a region and doubled its CPU time
/// (bench-compare child, 1,408 regions: 78,483 switches, 405 ms of CPU;
/// reading them on the caller's thread: 6,338 and 209 ms).
#[cfg(target_os = "linux")]
const CACHED_FIRST_FILES: usize = 8;

/// The threads that read the files of a batch
/// ([`Store::get_partial_values`]), made on first use and shared by every
/// store of the process. Their number is not the caller's thread count: a
/// read from a cold page cache mostly waits on the device, which serves
/// many reads at once (tensorstore's `file_io_concurrency` is the same
/// idea). `None` if the pool cannot be made: the caller's thread reads.
///
/// The array engine runs a local store's partial reads of element runs
/// here too (each waits on the disk when the file is cold).
pub(crate) fn io_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(IO_THREADS)
            .thread_name(|i| format!("zarrkit-io-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// The indices of `requests` grouped by key, in the order each key first
/// appears: a batch opens each file once, however many ranges it is asked
/// for.
fn group_requests(requests: &[ReadRequest]) -> Vec<(&StoreKey, Vec<usize>)> {
    let mut groups: Vec<(&StoreKey, Vec<usize>)> = Vec::new();
    let mut group_of: HashMap<&StoreKey, usize> = HashMap::new();
    for (i, (key, _)) in requests.iter().enumerate() {
        let group = *group_of.entry(key).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        groups[group].1.push(i);
    }
    groups
}

fn read_error(key: &StoreKey, source: io::Error) -> StoreError {
    StoreError::Read {
        store: NAME,
        key: key.clone(),
        source,
    }
}

fn write_error(key: &StoreKey, source: io::Error) -> StoreError {
    StoreError::Write {
        store: NAME,
        key: key.clone(),
        source,
    }
}

fn erase_error(key: &str, source: io::Error) -> StoreError {
    StoreError::Erase {
        store: NAME,
        key: key.to_string(),
        source,
    }
}

fn list_error(prefix: &StorePrefix, source: io::Error) -> StoreError {
    StoreError::List {
        store: NAME,
        prefix: prefix.as_str().to_string(),
        source,
    }
}

/// The answer to one read of a batch.
type ReadResult = Result<Option<Vec<u8>>, StoreError>;

/// The start of `range` (or everything) in the value of `key`, `len`
/// bytes long, and an empty buffer from the pool with room for its bytes.
fn range_buffer(
    key: &StoreKey,
    len: u64,
    range: Option<ByteRange>,
) -> Result<(u64, usize, Vec<u8>), StoreError> {
    let (start, end) = match range {
        None => (0, len),
        Some(range) => range.bounds(len).ok_or_else(|| StoreError::InvalidRange {
            store: NAME,
            key: key.clone(),
            range,
            len,
        })?,
    };
    let too_large = || {
        read_error(
            key,
            io::Error::new(ErrorKind::OutOfMemory, "the range does not fit in memory"),
        )
    };
    let n_bytes = usize::try_from(end - start).map_err(|_| too_large())?;
    // Read only the bytes asked for (a shard index is a few bytes at the
    // end of a file that may hold gigabytes), into reserved capacity
    // without zeroing it first (zeroing a fresh buffer costs as much as
    // reading a cached file), from the process's buffer pool: readers give
    // chunk values back once placed, and a fresh buffer's pages would
    // fault in again on every read.
    let bytes = BUFFERS.empty(n_bytes).ok_or_else(too_large)?;
    Ok((start, n_bytes, bytes))
}

/// Checks that a read of `n_bytes` got them all.
fn check_read_whole(key: &StoreKey, bytes: &[u8], n_bytes: usize) -> Result<(), StoreError> {
    if bytes.len() != n_bytes {
        // The file shrank between reading its length and its bytes.
        return Err(read_error(key, io::Error::from(ErrorKind::UnexpectedEof)));
    }
    Ok(())
}

/// Reads `range` (or everything) of the open file of `key`, which is `len` bytes long.
fn read_range(
    file: &File,
    key: &StoreKey,
    len: u64,
    range: Option<ByteRange>,
) -> Result<Vec<u8>, StoreError> {
    let (start, n_bytes, mut bytes) = range_buffer(key, len, range)?;
    read_at(file, &mut bytes, n_bytes, start).map_err(|err| read_error(key, err))?;
    check_read_whole(key, &bytes, n_bytes)?;
    Ok(bytes)
}

/// Reads `ranges` of the open file of `key` (`len` bytes long), as
/// [`read_range`] each: first those the page cache holds, on the caller's
/// thread (Linux), then those that would wait on the device in parallel on
/// [`io_pool`], each `pread` of the one file waiting at once. A region of
/// a shard reads its inner chunks so. Read one after another, each waited
/// for the device in turn: 64 cold region reads of a 256³ blosc shard (4
/// or 5 ranges each) took 59 ms, in parallel 52 ms (medians of 8
/// alternating runs; tensorstore, which reads a shard's ranges in parallel
/// too, 39–45 ms). The error reported is that of the earliest failing
/// range.
#[cfg(unix)]
fn read_ranges(
    file: &File,
    key: &StoreKey,
    len: u64,
    ranges: &[Option<ByteRange>],
) -> Result<Vec<Vec<u8>>, StoreError> {
    #[cfg(target_os = "linux")]
    let mut read: Vec<Option<Result<Vec<u8>, StoreError>>> = ranges
        .iter()
        .map(|range| read_range_cached(file, key, len, *range).transpose())
        .collect();
    #[cfg(not(target_os = "linux"))]
    let mut read: Vec<Option<Result<Vec<u8>, StoreError>>> = ranges.iter().map(|_| None).collect();
    read_waiting(&mut read, |i| read_range(file, key, len, ranges[i]));
    read.into_iter().flatten().collect()
}

/// Fills the answers still `None` (those the caches did not hold) with
/// `read` of their index: on [`io_pool`], in parallel, when there are
/// several (each waits on the device), else on the caller's thread.
#[cfg(unix)]
fn read_waiting<T: Send>(answers: &mut [Option<T>], read: impl Fn(usize) -> T + Sync) {
    let waiting: Vec<usize> = (0..answers.len())
        .filter(|&i| answers[i].is_none())
        .collect();
    let read_one = |&i: &usize| (i, read(i));
    let read: Vec<(usize, T)> = match io_pool().filter(|_| waiting.len() > 1) {
        Some(pool) => pool.install(|| waiting.par_iter().map(read_one).collect()),
        None => waiting.iter().map(read_one).collect(),
    };
    for (i, answer) in read {
        answers[i] = Some(answer);
    }
}

/// [`read_range`] from the page cache only: `Ok(None)` when part of the
/// range is not cached and reading it would wait on the device.
#[cfg(target_os = "linux")]
fn read_range_cached(
    file: &File,
    key: &StoreKey,
    len: u64,
    range: Option<ByteRange>,
) -> Result<Option<Vec<u8>>, StoreError> {
    let (start, n_bytes, mut bytes) = range_buffer(key, len, range)?;
    while bytes.len() < n_bytes {
        let at = start + bytes.len() as u64;
        let wanted = n_bytes - bytes.len();
        let spare = &mut bytes.spare_capacity_mut()[..wanted];
        let iov = libc::iovec {
            iov_base: spare.as_mut_ptr().cast(),
            iov_len: spare.len(),
        };
        let Ok(offset) = libc::off_t::try_from(at) else {
            return Err(read_error(key, io::Error::from(ErrorKind::InvalidInput)));
        };
        // SAFETY: `iov` describes `spare`, writable memory of the vector
        // that outlives the call; the kernel writes at most `iov_len`
        // bytes there and returns how many.
        #[allow(unsafe_code)]
        let read = unsafe {
            libc::preadv2(
                std::os::fd::AsRawFd::as_raw_fd(file),
                &iov,
                1,
                offset,
                libc::RWF_NOWAIT,
            )
        };
        match read {
            0 => break,
            n if n > 0 => {
                // SAFETY: the kernel initialised the first `n` spare bytes.
                #[allow(unsafe_code)]
                unsafe {
                    bytes.set_len(bytes.len() + n as usize);
                }
            }
            _ => match io::Error::last_os_error() {
                err if err.raw_os_error() == Some(libc::EINTR) => {}
                // Not cached (EAGAIN), or the file system has no
                // RWF_NOWAIT (EOPNOTSUPP): the I/O threads read it.
                err if matches!(
                    err.raw_os_error(),
                    Some(libc::EAGAIN | libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL)
                ) =>
                {
                    BUFFERS.give([bytes]);
                    return Ok(None);
                }
                err => return Err(read_error(key, err)),
            },
        }
    }
    check_read_whole(key, &bytes, n_bytes)?;
    Ok(Some(bytes))
}

/// Appends the `n` bytes of `file` at `offset` to `bytes` (empty, with
/// capacity for `n`), or fewer when the file ends first: one `pread` per
/// call where the file has them all, where `std`'s `read_to_end` made a
/// `lseek` and a `read` of 8, 16, 32, … KiB, one after another (seven
/// system calls for a 512 KiB chunk).
#[cfg(unix)]
fn read_at(file: &File, bytes: &mut Vec<u8>, n: usize, offset: u64) -> io::Result<()> {
    while bytes.len() < n {
        let at = offset + bytes.len() as u64;
        match rustix::io::pread(file, rustix::buffer::spare_capacity(bytes), at) {
            Ok(0) => break,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
    // The capacity may exceed `n` and the file have grown meanwhile.
    bytes.truncate(n);
    Ok(())
}

#[cfg(not(unix))]
fn read_at(mut file: &File, bytes: &mut Vec<u8>, n: usize, offset: u64) -> io::Result<()> {
    file.seek(SeekFrom::Start(offset))?;
    file.take(n as u64).read_to_end(bytes)?;
    Ok(())
}

/// Atomically swaps `temp` into place at `target` when `target` exists,
/// returning whether it did (the old value is then at `temp`).
///
/// Both this and `rename` replace the value atomically for readers. The
/// exchange is used because ext4 flushes a file's data to disk when it is
/// renamed over an existing file (its `auto_da_alloc` heuristic), which made
/// rewriting a 512 KiB chunk several times slower than writing it; an
/// exchange followed by removing the old file does not trigger that flush.
/// Where `renameat2(RENAME_EXCHANGE)` is missing (other systems, other
/// filesystems) or the target does not exist, the caller renames.
#[cfg(target_os = "linux")]
fn replace_by_exchange(temp: &Path, target: &Path) -> bool {
    // Only over a regular file: an exchange would happily swap a directory
    // away, where `rename` refuses to replace it.
    let replaces_a_file = fs::symlink_metadata(target).is_ok_and(|m| m.file_type().is_file());
    replaces_a_file
        && rustix::fs::renameat_with(
            rustix::fs::CWD,
            temp,
            rustix::fs::CWD,
            target,
            rustix::fs::RenameFlags::EXCHANGE,
        )
        .is_ok()
}

#[cfg(not(target_os = "linux"))]
fn replace_by_exchange(_temp: &Path, _target: &Path) -> bool {
    false
}

/// Renames `temp` to `target` unless `target` exists
/// (`renameat2(RENAME_NOREPLACE)`, one atomic step); `None` where the
/// system or the filesystem cannot, for the caller to link instead.
#[cfg(target_os = "linux")]
fn create_by_rename(temp: &Path, target: &Path) -> Option<io::Result<()>> {
    match rustix::fs::renameat_with(
        rustix::fs::CWD,
        temp,
        rustix::fs::CWD,
        target,
        rustix::fs::RenameFlags::NOREPLACE,
    ) {
        Ok(()) => Some(Ok(())),
        // The kernel (ENOSYS) or the filesystem (EINVAL) lacks the flag.
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::INVAL) => None,
        Err(err) => Some(Err(err.into())),
    }
}

#[cfg(not(target_os = "linux"))]
fn create_by_rename(_temp: &Path, _target: &Path) -> Option<io::Result<()>> {
    None
}

impl Store for FilesystemStore {
    fn name(&self) -> &'static str {
        NAME
    }

    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            read: true,
            write: true,
            partial_write: true,
            list: true,
            conditional_write: cfg!(unix),
            conditional_create: true,
        }
    }

    /// On Linux: the file's length (one `statx`) when a read of its first
    /// byte that may not wait (`RWF_NOWAIT`) fails with `EAGAIN`.
    /// Elsewhere, and on file systems without such reads, `None`.
    fn cold_size(&self, key: &StoreKey) -> Option<u64> {
        #[cfg(target_os = "linux")]
        {
            let (file, len) = self.open_for_read(key, None).ok()??;
            let mut first = [0u8; 1];
            let mut bufs = [std::io::IoSliceMut::new(&mut first)];
            let read = rustix::io::preadv2(&file, &mut bufs, 0, rustix::io::ReadWriteFlags::NOWAIT);
            matches!(read, Err(rustix::io::Errno::AGAIN)).then_some(len)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = key;
            None
        }
    }

    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        let Some((file, len)) = self.open_for_read(key, None)? else {
            return Ok(None);
        };
        read_range(&file, key, len, range).map(Some)
    }

    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.read_batch(requests, true)
    }

    fn get_values_each(
        &self,
        requests: &[ReadRequest],
        _batch: usize,
        each: &(dyn Fn(usize, ReadResult) -> bool + Sync),
    ) {
        self.read_each(requests, each);
    }

    fn get_small_values(&self, keys: &[StoreKey]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        // On the caller's thread: waking the I/O threads for a few small
        // reads (a creator's probes that nothing is there, mostly misses)
        // took longer than the reads (1000 arrays created: 40 → 70 ms).
        #[cfg(unix)]
        {
            if keys.len() <= SMALL_VALUES_ON_CALLER {
                let root = (keys.len() > 1).then(|| self.batch_root()).flatten();
                return keys
                    .iter()
                    .map(|key| self.read_small(key, root.as_ref()))
                    .collect();
            }
            // Many (a group's children's documents): first those the
            // caches hold, on the caller's threads, then those that would
            // wait on the device, on the I/O threads.
            let root = self.batch_root();
            let mut results: Vec<Option<ReadResult>> = keys.iter().map(|_| None).collect();
            #[cfg(target_os = "linux")]
            if let Some(dir) = root.as_ref() {
                results = keys
                    .par_iter()
                    .map(|key| self.read_small_cached(key, dir))
                    .collect();
            }
            read_waiting(&mut results, |i| self.read_small(&keys[i], root.as_ref()));
            // The error to report is that of the earliest failing key.
            results.into_iter().flatten().collect()
        }
        #[cfg(not(unix))]
        {
            let requests: Vec<ReadRequest> = keys.iter().map(|key| (key.clone(), None)).collect();
            self.read_batch(&requests, false)
        }
    }

    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        #[cfg(target_os = "linux")]
        if let Some(stored) = self.set_beneath(key, value) {
            return stored;
        }
        let path = self.key_path(key);
        let dir = path.parent().unwrap_or(&self.root);
        self.check_dir_inside(key.as_str(), dir, |err| write_error(key, err))?;
        // Write a temporary file beside the target and rename it into place:
        // a rename within one directory is atomic, so readers never see a
        // partly written value.
        let temp = self.write_temp(key, &path, value)?;
        Self::persist(key, temp, &path)
    }

    /// On Linux, a temporary file beside the key, created relative to the
    /// descriptor of the key's directory as [`Store::set`] creates it (the
    /// directory is made first where it is missing), and exchanged with
    /// the old value or renamed into place on commit; `Ok(None)` elsewhere,
    /// and where `set` would take its named way (links out of the root
    /// are followed).
    fn begin_set(
        &self,
        key: &StoreKey,
    ) -> Result<Option<Box<dyn super::PendingValue + '_>>, StoreError> {
        #[cfg(target_os = "linux")]
        {
            if self.follow_links_outside_root {
                return Ok(None);
            }
            let temp = match self.create_beneath(key) {
                Some(temp) => Some(temp),
                None => {
                    // The key's directory may be missing: made as `set`
                    // makes it, inside the root, then tried once more.
                    let path = self.key_path(key);
                    let dir = path.parent().unwrap_or(&self.root);
                    self.check_dir_inside(key.as_str(), dir, |err| write_error(key, err))?;
                    match fs::create_dir_all(dir) {
                        Ok(()) => self.create_beneath(key),
                        Err(_) => None,
                    }
                }
            };
            Ok(temp.map(|temp| {
                Box::new(PendingFile {
                    key: key.clone(),
                    temp,
                }) as Box<dyn super::PendingValue>
            }))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = key;
            Ok(None)
        }
    }

    fn set_if_absent(&self, key: &StoreKey, value: &[u8]) -> Result<bool, StoreError> {
        #[cfg(target_os = "linux")]
        if let Some(created) = self.create_linked(key, value) {
            return created;
        }
        let path = self.key_path(key);
        let dir = path.parent().unwrap_or(&self.root);
        self.check_dir_inside(key.as_str(), dir, |err| write_error(key, err))?;
        let temp = self.write_temp(key, &path, value)?;
        Self::persist_new(key, temp, &path)
    }

    fn snapshot<'a>(&'a self, key: &StoreKey) -> Result<Box<dyn ValueSnapshot + 'a>, StoreError> {
        Ok(Box::new(FileSnapshot {
            key: key.clone(),
            version: self.open_version(key)?.map(Arc::new),
            #[cfg(not(unix))]
            cursor: Mutex::new(()),
        }))
    }

    #[cfg(unix)]
    fn set_if_unchanged(
        &self,
        key: &StoreKey,
        value: Option<&[u8]>,
        expected: &ValueVersion,
    ) -> Result<bool, StoreError> {
        let expected = match &expected.0 {
            VersionKind::Missing => None,
            VersionKind::File(version) => Some(version),
            _ => {
                return Err(StoreError::ForeignVersion {
                    store: NAME,
                    key: key.clone(),
                });
            }
        };
        let path = self.key_path(key);
        let dir = path.parent().unwrap_or(&self.root);
        self.check_dir_inside(key.as_str(), dir, |err| write_error(key, err))?;
        // Write the new value before taking the lock, so that the lock is
        // held for the check and the rename only. The temporary file also
        // keeps its directory from being removed as empty meanwhile.
        let temp = value
            .map(|value| self.write_temp(key, &path, value))
            .transpose()?;
        let lock = match KeyLock::acquire(&path) {
            Ok(lock) => lock,
            // No directory, so no value: unchanged only if none was expected.
            Err(err) if is_missing(&err) && temp.is_none() => return Ok(expected.is_none()),
            Err(err) => return Err(write_error(key, err)),
        };
        let current = match fs::metadata(&path) {
            Ok(metadata) if metadata.is_dir() => None,
            Ok(metadata) => Some(FileIdentity::of(&metadata)),
            Err(err) if is_missing(&err) => None,
            Err(err) => return Err(write_error(key, err)),
        };
        let mut unchanged = match (expected, &current) {
            (None, None) => true,
            (Some(expected), Some(current)) => expected.identity == *current,
            _ => false,
        };
        let mut erased = false;
        if unchanged {
            match temp {
                // Created only where nothing is, as `set_if_absent` creates,
                // so that it and this cannot both create the key.
                Some(temp) if expected.is_none() => {
                    unchanged = Self::persist_new(key, temp, &path)?;
                }
                Some(temp) => Self::persist(key, temp, &path)?,
                None if current.is_some() => {
                    fs::remove_file(&path).map_err(|err| erase_error(key.as_str(), err))?;
                    erased = true;
                }
                None => {}
            }
        }
        drop(lock);
        if erased {
            self.remove_empty_parents(path.parent());
        }
        Ok(unchanged)
    }

    fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        // Not atomic: each item is written in place, in order. Runs of items
        // for one key share one open file.
        let mut open: Option<(&StoreKey, File)> = None;
        for (key, offset, bytes) in items {
            let invalid = |len| StoreError::InvalidPartialWrite {
                store: NAME,
                key: key.clone(),
                offset: *offset,
                len,
            };
            let file = match &mut open {
                Some((open_key, file)) if *open_key == key => file,
                _ => {
                    let path = self.key_path(key);
                    let file = match self.open_inside(key, &path, Access::Write, None) {
                        Ok(Opened::File(file)) => file,
                        Ok(Opened::Outside(target)) => {
                            return Err(self.outside_error(key.as_str(), &target));
                        }
                        Err(err) if is_missing(&err) || is_directory(&path) => {
                            return Err(invalid(0));
                        }
                        Err(err) => return Err(write_error(key, err)),
                    };
                    &mut open.insert((key, file)).1
                }
            };
            let len = file.metadata().map_err(|err| write_error(key, err))?.len();
            if *offset > len {
                return Err(invalid(len));
            }
            file.seek(SeekFrom::Start(*offset))
                .map_err(|err| write_error(key, err))?;
            file.write_all(bytes).map_err(|err| write_error(key, err))?;
        }
        Ok(())
    }

    fn settle(&self) {
        settle_removals();
    }

    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        let path = self.key_path(key);
        // Removing a link removes the link, but a link among the parents
        // would make this remove a file out of the root.
        let parent = path.parent().unwrap_or(&self.root);
        self.check_dir_inside(key.as_str(), parent, |err| erase_error(key.as_str(), err))?;
        match fs::remove_file(&path) {
            Ok(()) => {
                self.remove_empty_parents(path.parent());
                Ok(())
            }
            // Nothing there, or a directory: either way, no value under `key`.
            Err(err) if is_missing(&err) || is_directory(&path) => Ok(()),
            Err(err) => Err(erase_error(key.as_str(), err)),
        }
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        // A replaced value still being removed would keep its directory.
        settle_removals();
        let error = |err| erase_error(prefix.as_str(), err);
        if prefix.is_root() {
            // Empty the root but keep it: it may be a mount point, or be
            // shared with other processes that hold it open.
            for entry in fs::read_dir(&self.root).map_err(error)? {
                let entry = entry.map_err(error)?;
                let removed = if entry.file_type().map_err(error)?.is_dir() {
                    fs::remove_dir_all(entry.path())
                } else {
                    fs::remove_file(entry.path())
                };
                match removed {
                    Err(err) if !is_missing(&err) => return Err(error(err)),
                    _ => {}
                }
            }
            return Ok(());
        }
        let path = self.prefix_path(prefix);
        let parent = path.parent().unwrap_or(&self.root);
        self.check_dir_inside(prefix.as_str(), parent, error)?;
        let metadata = match fs::symlink_metadata(&path) {
            Ok(metadata) => metadata,
            Err(err) if is_missing(&err) => return Ok(()),
            Err(err) => return Err(error(err)),
        };
        // A link to a directory is removed, not followed: the keys under the
        // prefix disappear and the linked directory is left alone.
        let holds_keys =
            metadata.is_dir() || (metadata.file_type().is_symlink() && is_directory(&path));
        if !holds_keys {
            // A file: a value under the key without the slash, not under the prefix.
            return Ok(());
        }
        match fs::remove_dir_all(&path) {
            Err(err) if !is_missing(&err) => return Err(error(err)),
            _ => {}
        }
        self.remove_empty_parents(path.parent());
        Ok(())
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        let dir = self.prefix_path(prefix);
        let canonical = match fs::canonicalize(&dir) {
            Ok(canonical) => canonical,
            Err(err) if is_missing(&err) => return Ok(Vec::new()),
            Err(err) => return Err(list_error(prefix, err)),
        };
        if !is_directory(&canonical) {
            return Ok(Vec::new());
        }
        if !self.follow_links_outside_root && !canonical.starts_with(&self.canonical_root) {
            return Err(self.outside_error(prefix.as_str(), &canonical));
        }
        let mut keys = Vec::new();
        let mut chain = self.chain_of(prefix);
        if chain.last() != Some(&canonical) {
            chain.push(canonical);
        }
        self.walk(prefix, &dir, prefix.as_str(), &mut chain, &mut keys)?;
        // Sort whole keys, not each directory: `a-b/x` sorts before `a/b`.
        keys.sort_unstable();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        let path = self.prefix_path(prefix);
        if !self.follow_links_outside_root {
            match self.outside_target(&path) {
                Ok(None) => {}
                Ok(Some(target)) => return Err(self.outside_error(prefix.as_str(), &target)),
                Err(err) if is_missing(&err) => return Ok(ListDir::default()),
                Err(err) => return Err(list_error(prefix, err)),
            }
        }
        let entries = match fs::read_dir(&path) {
            Ok(entries) => entries,
            Err(err) if is_missing(&err) => return Ok(ListDir::default()),
            Err(err) => return Err(list_error(prefix, err)),
        };
        let mut dir = ListDir::default();
        // The canonical directories down to this one, found at the first link.
        let mut chain: Option<Vec<PathBuf>> = None;
        for entry in entries {
            let entry = entry.map_err(|err| list_error(prefix, err))?;
            let Some(name) = entry_name(&entry) else {
                continue;
            };
            let rel = format!("{}{name}", prefix.as_str());
            let Some(kind) = self.entry_kind(&entry, &rel, prefix)? else {
                continue;
            };
            let (link, is_dir) = match kind {
                EntryKind::File { link } => (link, false),
                EntryKind::Directory { link } => (link, true),
                EntryKind::Other | EntryKind::Unresolvable(_) => continue,
            };
            // A directory link is checked for loops (the v3 drafts make
            // every directory an implicit group, so `tree` would descend a
            // link to `..` forever); any link, for leaving the root.
            if link && (is_dir || !self.follow_links_outside_root) {
                let target = match fs::canonicalize(entry.path()) {
                    Ok(target) => target,
                    Err(err) if is_missing(&err) => continue,
                    Err(err) => return Err(list_error(prefix, err)),
                };
                let chain = chain.get_or_insert_with(|| self.chain_of(prefix));
                if !self.follows_link(&rel, &target, chain, is_dir) {
                    continue;
                }
            }
            if is_dir {
                dir.prefixes.extend(prefix.child(&name).ok());
            } else {
                dir.keys.extend(prefix.key(&name).ok());
            }
        }
        dir.keys.sort_unstable();
        dir.prefixes.sort_unstable();
        Ok(dir)
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        let path = self.key_path(key);
        if !self.follow_links_outside_root {
            // As in `open_inside`: one `openat2` when it can tell.
            #[cfg(target_os = "linux")]
            match open_beneath(&self.root, key.as_str(), Access::Path) {
                Some(Ok(file)) => {
                    let metadata = file.metadata().map_err(|err| read_error(key, err))?;
                    return Ok((!metadata.is_dir()).then_some(metadata.len()));
                }
                Some(Err(err)) if is_missing(&err) => return Ok(None),
                Some(Err(err)) => return Err(read_error(key, err)),
                None => {}
            }
            match self.outside_target(&path) {
                Ok(None) => {}
                Ok(Some(target)) => return Err(self.outside_error(key.as_str(), &target)),
                Err(err) if is_missing(&err) => return Ok(None),
                Err(err) => return Err(read_error(key, err)),
            }
        }
        match fs::metadata(path) {
            Ok(metadata) if metadata.is_dir() => Ok(None),
            Ok(metadata) => Ok(Some(metadata.len())),
            Err(err) if is_missing(&err) => Ok(None),
            Err(err) => Err(read_error(key, err)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> StoreKey {
        StoreKey::new(s).unwrap()
    }

    fn prefix(s: &str) -> StorePrefix {
        StorePrefix::new(s).unwrap()
    }

    fn temp_store() -> (tempfile::TempDir, FilesystemStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = FilesystemStore::new(dir.path().join("store")).unwrap();
        (dir, store)
    }

    #[test]
    fn passes_the_conformance_suite() {
        let (_dir, store) = temp_store();
        crate::store::testing::run_all(&store);
        // The suite leaves the store empty, and erasing never removes the root.
        assert!(store.root().is_dir());
        assert_eq!(fs::read_dir(store.root()).unwrap().count(), 0);
    }

    #[test]
    fn new_creates_the_root_and_its_parents() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("x/y/z.zarr");
        let store = FilesystemStore::new(&root).unwrap();
        assert!(root.is_dir());
        assert_eq!(store.root(), root);
    }

    #[test]
    fn open_existing_rejects_a_missing_root_and_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let err = FilesystemStore::open_existing(&missing).unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
        assert!(
            err.to_string()
                .contains(&format!("`{}`", missing.display())),
            "{err}"
        );
        assert!(!missing.exists(), "open_existing must not create the root");

        let file = dir.path().join("file");
        fs::write(&file, b"x").unwrap();
        let err = FilesystemStore::open_existing(&file).unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
        let err = FilesystemStore::new(&file).unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    }

    #[test]
    fn keys_are_files_under_the_root() {
        let (_dir, store) = temp_store();
        store.set(&key("a/b/zarr.json"), b"{}").unwrap();
        assert_eq!(fs::read(store.root().join("a/b/zarr.json")).unwrap(), b"{}");

        // And files put there by other tools are keys.
        fs::create_dir_all(store.root().join("c/0")).unwrap();
        fs::write(store.root().join("c/0/1"), b"chunk").unwrap();
        assert_eq!(store.get(&key("c/0/1"), None).unwrap().unwrap(), b"chunk");
        assert_eq!(store.list().unwrap(), [key("a/b/zarr.json"), key("c/0/1")]);
    }

    #[test]
    fn relative_root_is_made_absolute() {
        let store = FilesystemStore::open_existing(".").unwrap();
        assert!(store.root().is_absolute());
    }

    #[test]
    fn a_file_where_a_directory_is_expected_reads_as_missing() {
        let (_dir, store) = temp_store();
        store.set(&key("a"), b"file").unwrap();
        assert_eq!(store.get(&key("a/b"), None).unwrap(), None);
        assert_eq!(
            store.get(&key("a/b"), Some(ByteRange::Suffix(1))).unwrap(),
            None
        );
        assert_eq!(store.size(&key("a/b")).unwrap(), None);
        assert_eq!(
            store.get_partial_values(&[(key("a/b"), None)]).unwrap(),
            [None]
        );
        assert!(store.list_prefix(&prefix("a/")).unwrap().is_empty());
        assert_eq!(store.list_dir(&prefix("a/")).unwrap(), ListDir::default());
        store.erase(&key("a/b")).unwrap();
        store.erase_prefix(&prefix("a/")).unwrap();
        assert_eq!(store.get(&key("a"), None).unwrap().unwrap(), b"file");
        let err = store
            .set_partial_values(&[(key("a/b"), 0, b"x".to_vec())])
            .unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidPartialWrite { len: 0, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn setting_a_key_below_a_file_fails_naming_the_key() {
        let (_dir, store) = temp_store();
        store.set(&key("a"), b"file").unwrap();
        let err = store.set(&key("a/b"), b"x").unwrap_err();
        assert!(matches!(err, StoreError::Write { .. }), "{err:?}");
        assert_eq!(err.to_string(), "cannot write `a/b` to filesystem store");
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn a_directory_reads_as_missing_and_is_not_erased_as_a_key() {
        let (_dir, store) = temp_store();
        store.set(&key("a/b"), b"x").unwrap();
        assert_eq!(store.get(&key("a"), None).unwrap(), None);
        assert_eq!(store.size(&key("a")).unwrap(), None);
        store.erase(&key("a")).unwrap();
        assert_eq!(store.get(&key("a/b"), None).unwrap().unwrap(), b"x");
        let err = store
            .set_partial_values(&[(key("a"), 0, b"x".to_vec())])
            .unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidPartialWrite { len: 0, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn failed_set_removes_its_temporary_file() {
        let (_dir, store) = temp_store();
        store.set(&key("a/b"), b"x").unwrap();
        // `a` is a non-empty directory, so renaming a file over it fails.
        let err = store.set(&key("a"), b"value").unwrap_err();
        assert!(matches!(err, StoreError::Write { .. }), "{err:?}");
        let names: Vec<_> = fs::read_dir(store.root())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a"]);
    }

    #[test]
    fn leftover_temporary_and_lock_files_are_removed() {
        let (_dir, store) = temp_store();
        store.set(&key("a/b/c"), b"x").unwrap();
        fs::write(store.root().join(".zarrkit-tmp.1.2"), b"partial").unwrap();
        fs::write(store.root().join("a/b/.zarrkit-tmp.3.4"), b"").unwrap();
        fs::write(store.root().join("a/.zarrkit-lock.b"), b"").unwrap();
        fs::write(store.root().join("a/.zarrkit-other"), b"kept").unwrap();
        assert_eq!(
            store.leftover_files().unwrap(),
            [
                Path::new(".zarrkit-tmp.1.2"),
                Path::new("a/.zarrkit-lock.b"),
                Path::new("a/b/.zarrkit-tmp.3.4")
            ]
        );
        assert_eq!(store.remove_leftover_files().unwrap(), 3);
        let mut left = Vec::new();
        let mut dirs = vec![store.root().to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    left.push(path.strip_prefix(store.root()).unwrap().to_path_buf());
                }
            }
        }
        left.sort();
        assert_eq!(left, [Path::new("a/.zarrkit-other"), Path::new("a/b/c")]);
        assert_eq!(store.remove_leftover_files().unwrap(), 0);
    }

    #[test]
    fn temporary_and_invalid_names_are_not_listed() {
        let (_dir, store) = temp_store();
        store.set(&key("a/zarr.json"), b"{}").unwrap();
        fs::write(store.root().join(".zarrkit-tmp.1.2"), b"partial").unwrap();
        fs::write(store.root().join("a/.zarrkit-tmp.3.4"), b"partial").unwrap();
        // A lock file left by a crashed conditional write.
        fs::write(store.root().join("a/.zarrkit-lock.zarr.json"), b"").unwrap();
        if cfg!(unix) {
            // A legal file name on Unix, but no key may hold a backslash.
            fs::write(store.root().join("a/back\\slash"), b"x").unwrap();
        }
        assert_eq!(store.list().unwrap(), [key("a/zarr.json")]);
        let dir = store.list_dir(&prefix("a/")).unwrap();
        assert_eq!(dir.keys, [key("a/zarr.json")]);
        assert_eq!(store.list_dir(&StorePrefix::root()).unwrap().keys, []);
    }

    #[cfg(unix)]
    #[test]
    fn conditional_writes_remove_their_lock_files_and_wait_for_a_held_lock() {
        let (_dir, store) = temp_store();
        let k = key("a/c/0");
        store.set(&k, b"old").unwrap();
        let version = store.snapshot(&k).unwrap().version().unwrap();
        // Another process holds the key's lock: the write waits for it.
        let lock = KeyLock::acquire(&store.key_path(&k)).unwrap();
        assert!(store.root().join("a/c/.zarrkit-lock.0").is_file());
        std::thread::scope(|scope| {
            let writer = scope.spawn(|| store.set_if_unchanged(&k, Some(b"new"), &version));
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert_eq!(store.get(&k, None).unwrap().unwrap(), b"old");
            drop(lock);
            assert!(writer.join().unwrap().unwrap());
        });
        assert_eq!(store.get(&k, None).unwrap().unwrap(), b"new");
        let names: Vec<_> = fs::read_dir(store.root().join("a/c"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["0"]);
        // A conditional erase removes the directories it empties.
        let version = store.snapshot(&k).unwrap().version().unwrap();
        assert!(store.set_if_unchanged(&k, None, &version).unwrap());
        assert_eq!(fs::read_dir(store.root()).unwrap().count(), 0);
    }

    #[test]
    fn racing_creates_leave_one_whole_value_and_no_temporary_files() {
        let (_dir, store) = temp_store();
        for _ in 0..20 {
            crate::store::testing::check_racing_creates(&store, 8);
        }
        // Losers remove their temporary files, and the winner's link leaves
        // no second name behind.
        assert!(store.set_if_absent(&key("race/zarr.json"), b"1").unwrap());
        assert!(!store.set_if_absent(&key("race/zarr.json"), b"2").unwrap());
        let names: Vec<_> = fs::read_dir(store.root().join("race"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["zarr.json"]);
    }

    /// A few small values read on the caller's thread answer as a batch
    /// does: in order, `None` for a missing key or a directory, a key asked
    /// twice answered twice.
    #[test]
    fn small_values_answer_as_a_batch() {
        let (_dir, store) = temp_store();
        store.set(&key("a/zarr.json"), b"a").unwrap();
        store.set(&key("zarr.json"), b"root").unwrap();
        let keys = [
            key("a/.zarray"),
            key("a/zarr.json"),
            key("a"),
            key("zarr.json"),
            key("a/zarr.json"),
            key("missing/zarr.json"),
        ];
        let small = store.get_small_values(&keys).unwrap();
        let expected: Vec<Option<Vec<u8>>> = vec![
            None,
            Some(b"a".to_vec()),
            None,
            Some(b"root".to_vec()),
            Some(b"a".to_vec()),
            None,
        ];
        assert_eq!(small, expected);
        let requests: Vec<ReadRequest> = keys.iter().map(|k| (k.clone(), None)).collect();
        assert_eq!(store.get_partial_values(&requests).unwrap(), expected);
    }

    /// Small values are read without asking their length first; values of
    /// every length around the first read's size come back whole.
    #[cfg(unix)]
    #[test]
    fn small_values_of_every_length_around_the_first_read_are_whole() {
        let (_dir, store) = temp_store();
        let lengths = [
            0,
            1,
            SMALL_READ - 1,
            SMALL_READ,
            SMALL_READ + 1,
            3 * SMALL_READ + 7,
        ];
        let keys: Vec<StoreKey> = lengths.iter().map(|n| key(&format!("v/{n}"))).collect();
        let values: Vec<Vec<u8>> = lengths
            .iter()
            .map(|&n| (0..n).map(|i| (i * 7 + n) as u8).collect())
            .collect();
        for (k, v) in keys.iter().zip(&values) {
            store.set(k, v).unwrap();
        }
        let small = store.get_small_values(&keys).unwrap();
        for ((got, want), n) in small.iter().zip(&values).zip(lengths) {
            assert_eq!(got.as_deref(), Some(&want[..]), "a value of {n} bytes");
        }
        // One key alone (no batch root), and a directory, which holds no value.
        assert_eq!(
            store.get_small_values(&keys[4..5]).unwrap(),
            vec![Some(values[4].clone())]
        );
        assert_eq!(store.get_small_values(&[key("v")]).unwrap(), vec![None]);
    }

    /// Creating goes through an anonymous file linked into place where
    /// the key's directory exists or is one level deep; deeper, through a
    /// named temporary file. Either way the value is whole, the directory
    /// holds nothing else, and the file has the permissions `set` gives.
    #[cfg(target_os = "linux")]
    #[test]
    fn creating_links_an_anonymous_file_and_leaves_nothing_else() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, store) = temp_store();
        let value = b"{\"zarr_format\": 3}".repeat(1000);
        let linked = || LINKED.load(Ordering::Relaxed);
        let before = linked();
        // In the root, in an existing directory, in a new directory.
        assert!(store.set_if_absent(&key("zarr.json"), &value).unwrap());
        store.set(&key("a/x"), b"x").unwrap();
        assert!(store.set_if_absent(&key("a/zarr.json"), &value).unwrap());
        assert!(store.set_if_absent(&key("b/zarr.json"), &value).unwrap());
        assert!(
            linked() >= before + 3,
            "{} creates linked",
            linked() - before
        );
        // Two missing levels: the named temporary file's way.
        assert!(store.set_if_absent(&key("c/d/zarr.json"), &value).unwrap());
        // What is there stays, through either way.
        assert!(!store.set_if_absent(&key("b/zarr.json"), b"other").unwrap());
        assert!(
            !store
                .set_if_absent(&key("c/d/zarr.json"), b"other")
                .unwrap()
        );
        for (k, names) in [
            ("zarr.json", &["a", "b", "c", "zarr.json"][..]),
            ("a/zarr.json", &["x", "zarr.json"]),
            ("b/zarr.json", &["zarr.json"]),
            ("c/d/zarr.json", &["zarr.json"]),
        ] {
            assert_eq!(store.get(&key(k), None).unwrap().unwrap(), value, "{k}");
            let dir = store.key_path(&key(k)).parent().unwrap().to_path_buf();
            let mut found: Vec<_> = fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            found.sort();
            assert_eq!(found, names, "{k}");
        }
        let mode = |k: &str| {
            let path = store.key_path(&key(k));
            fs::metadata(path).unwrap().permissions().mode() & 0o777
        };
        assert_eq!(mode("b/zarr.json"), mode("a/x"));
        assert_eq!(store.leftover_files().unwrap(), Vec::<PathBuf>::new());
    }

    /// `set` writes, exchanges and removes relative to the key's directory
    /// descriptor: new keys, replaced values and keys in the root go that
    /// way, a missing directory or a directory in the way of the value
    /// take the named way (which makes the one and refuses the other, as
    /// before), and no temporary file is left behind.
    #[cfg(target_os = "linux")]
    #[test]
    fn set_goes_through_the_directory_descriptor_and_leaves_nothing_else() {
        let (_dir, store) = temp_store();
        let beneath = || SET_BENEATH.load(Ordering::Relaxed);
        let before = beneath();
        store.set(&key("zarr.json"), b"root").unwrap();
        store.set(&key("a/x"), b"first").unwrap(); // `a` is missing: named way
        store.set(&key("a/x"), b"second").unwrap(); // an exchange
        store.set(&key("a/y"), b"new").unwrap(); // a rename
        assert!(
            beneath() >= before + 3,
            "{} sets beneath",
            beneath() - before
        );
        fs::create_dir_all(store.root().join("a/z/inner")).unwrap();
        let err = store.set(&key("a/z"), b"over a directory").unwrap_err();
        assert!(err.to_string().contains("`a/z`"), "{err}");
        for (k, v) in [
            ("zarr.json", &b"root"[..]),
            ("a/x", b"second"),
            ("a/y", b"new"),
        ] {
            assert_eq!(store.get(&key(k), None).unwrap().unwrap(), v, "{k}");
        }
        // The value `second` replaced is removed in the background.
        store.settle();
        let mut names: Vec<_> = fs::read_dir(store.root().join("a"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["x", "y", "z"]);
        assert_eq!(store.leftover_files().unwrap(), Vec::<PathBuf>::new());
    }

    /// Inside `deferring`, replaced values are removed on the removal
    /// threads: listings never show them meanwhile, and `settle` and
    /// dropping the store wait until they are gone (each removal made 50 ms
    /// slow; array writes: `array::select`'s tests).
    #[cfg(target_os = "linux")]
    #[test]
    fn replaced_values_are_removed_in_the_background_and_settled() {
        REMOVAL_DELAY_MS.store(50, Ordering::Relaxed);
        let (dir, store) = temp_store();
        let files = |sub: &str| {
            let mut n = 0;
            let mut dirs = vec![dir.path().join("store").join(sub)];
            while let Some(d) = dirs.pop() {
                for entry in fs::read_dir(d).unwrap() {
                    let entry = entry.unwrap();
                    if entry.file_type().unwrap().is_dir() {
                        dirs.push(entry.path());
                    } else {
                        n += 1;
                    }
                }
            }
            n
        };
        let keys: Vec<StoreKey> = (0..8).map(|i| key(&format!("c/{i}"))).collect();
        // Outside `deferring`, `set` removes what it replaced itself.
        for k in &keys {
            store.set(k, b"first").unwrap();
            store.set(k, b"second").unwrap();
        }
        assert_eq!(files("c"), 8);
        for round in 1..=2u8 {
            super::super::deferring(|| {
                for k in &keys {
                    store.set(k, &[round; 4096]).unwrap();
                }
            });
            {
                // The replaced values are still there, under names no
                // listing shows.
                assert_eq!(files("c"), 16);
            }
            assert_eq!(store.list_prefix(&prefix("c/")).unwrap().len(), 8);
            assert_eq!(store.list_dir(&prefix("c/")).unwrap().keys.len(), 8);
            store.settle();
            assert_eq!(files("c"), 8, "round {round}");
            for k in &keys {
                assert_eq!(store.get(k, None).unwrap().unwrap(), [round; 4096]);
            }
        }
        // Dropping the store waits too.
        super::super::deferring(|| {
            for k in &keys {
                store.set(k, b"last").unwrap();
            }
        });
        drop(store);
        assert_eq!(files("c"), 8);
        REMOVAL_DELAY_MS.store(0, Ordering::Relaxed);
    }

    /// A reader of a key that `set` keeps replacing sees one whole value
    /// or the other, never a mix or a part (the exchange is atomic).
    #[test]
    fn a_reader_never_sees_a_value_being_replaced_in_part() {
        let (_dir, store) = temp_store();
        let values = [vec![1u8; 96 << 10], vec![2u8; 160 << 10]];
        let k = key("c/0/0");
        store.set(&k, &values[0]).unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for i in 0..300 {
                    store.set(&k, &values[i % 2]).unwrap();
                }
                done.store(true, Ordering::Relaxed);
            });
            let mut reads = 0;
            while !done.load(Ordering::Relaxed) || reads == 0 {
                let read = store
                    .get(&k, None)
                    .unwrap()
                    .expect("the key is always there");
                assert!(
                    values.contains(&read),
                    "a torn value of {} bytes",
                    read.len()
                );
                reads += 1;
            }
        });
        assert_eq!(store.get(&k, None).unwrap().unwrap(), values[1]);
        assert_eq!(store.leftover_files().unwrap(), Vec::<PathBuf>::new());
    }

    /// A value written in parts (`begin_set`) shows under its key only
    /// once committed, and then whole: until then readers see the value it
    /// replaces. A missing directory is made; one dropped uncommitted
    /// leaves nothing behind; a directory in the way and a link out of the
    /// root are refused as `set` refuses them.
    #[cfg(target_os = "linux")]
    #[test]
    fn values_written_in_parts_appear_whole_on_commit_and_vanish_when_dropped() {
        let (dir, store) = temp_store();
        let get = |k: &str| store.get(&key(k), None).unwrap();
        store.set(&key("c/0"), b"old value").unwrap();
        let mut pending = store
            .begin_set(&key("c/0"))
            .unwrap()
            .expect("the filesystem store writes values in parts");
        pending.append(&[b"new ", b"value"]).unwrap();
        pending.append(&[b" in parts"]).unwrap();
        assert_eq!(get("c/0").unwrap(), b"old value");
        let listed: Vec<String> = store
            .list_prefix(&prefix("c/"))
            .unwrap()
            .iter()
            .map(|k| k.as_str().to_owned())
            .collect();
        assert_eq!(listed, ["c/0"]);
        pending.commit().unwrap();
        assert_eq!(get("c/0").unwrap(), b"new value in parts");
        // A key whose directories are missing.
        let mut deep = store.begin_set(&key("d/e/f")).unwrap().unwrap();
        deep.append(&[b"deep"]).unwrap();
        deep.commit().unwrap();
        assert_eq!(get("d/e/f").unwrap(), b"deep");
        // Dropped uncommitted: the old value stays, and so does nothing else.
        let mut dropped = store.begin_set(&key("c/0")).unwrap().unwrap();
        dropped.append(&[b"never stored"]).unwrap();
        drop(dropped);
        let mut never = store.begin_set(&key("c/1")).unwrap().unwrap();
        never.append(&[b"never stored"]).unwrap();
        drop(never);
        assert_eq!(get("c/0").unwrap(), b"new value in parts");
        assert_eq!(get("c/1"), None);
        // A directory where the value would go.
        fs::create_dir_all(store.root().join("c/2/inner")).unwrap();
        let mut blocked = store.begin_set(&key("c/2")).unwrap().unwrap();
        blocked.append(&[b"x"]).unwrap();
        let err = blocked.commit().unwrap_err();
        assert!(err.to_string().contains("`c/2`"), "{err}");
        // A link out of the root, to an existing or a missing directory.
        let outside = dir.path().join("outside");
        fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, store.root().join("out")).unwrap();
        for k in ["out/zarr.json", "out/new/zarr.json"] {
            let err = store.begin_set(&key(k)).err().unwrap();
            assert!(
                matches!(err, StoreError::LinkOutsideRoot { .. }),
                "{k}: {err:?}"
            );
        }
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        store.settle();
        assert_eq!(store.leftover_files().unwrap(), Vec::<PathBuf>::new());
    }

    /// The anonymous file's way finds the key's directory beneath the
    /// root: a link out of the root on the way is refused as `set` refuses
    /// it, and nothing is written where it leads.
    #[cfg(unix)]
    #[test]
    fn creating_through_a_link_out_of_the_root_is_refused() {
        let (dir, store) = temp_store();
        let outside = dir.path().join("outside");
        fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, store.root().join("out")).unwrap();
        for k in ["out/zarr.json", "out/new/zarr.json"] {
            let err = store.set_if_absent(&key(k), b"x").unwrap_err();
            assert!(
                matches!(err, StoreError::LinkOutsideRoot { .. }),
                "{k}: {err:?}"
            );
        }
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        // Followed when the store is told to.
        let store = store.follow_links_outside_root(true);
        assert!(store.set_if_absent(&key("out/zarr.json"), b"x").unwrap());
        assert_eq!(fs::read(outside.join("zarr.json")).unwrap(), b"x");
    }

    #[test]
    fn creating_a_key_where_a_directory_is_fails_as_set_does() {
        let (_dir, store) = temp_store();
        store.set(&key("a/b"), b"x").unwrap();
        let err = store.set_if_absent(&key("a"), b"y").unwrap_err();
        assert!(matches!(err, StoreError::Write { .. }), "{err:?}");
        assert!(err.to_string().contains("`a`"), "{err}");
        assert!(store.set(&key("a"), b"y").is_err());
        assert_eq!(fs::read_dir(store.root().join("a")).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_conditional_write_expecting_no_value_does_not_replace_a_created_one() {
        // `set_if_unchanged` from the missing version checks under its lock
        // that nothing is there; a `set_if_absent` in another process takes
        // no lock, so the write itself must not replace what appeared.
        let (_dir, store) = temp_store();
        let k = key("a/zarr.json");
        let missing = store.snapshot(&k).unwrap().version().unwrap();
        assert!(store.set_if_absent(&k, b"created").unwrap());
        assert!(!store.set_if_unchanged(&k, Some(b"cas"), &missing).unwrap());
        assert_eq!(store.get(&k, None).unwrap().unwrap(), b"created");
    }

    /// Where a child process of [`processes_racing_to_create_one_key_leave_one_winner`]
    /// creates the key, from `ZARRKIT_TEST_RACE`.
    const RACE_VAR: &str = "ZARRKIT_TEST_RACE";

    /// Two processes (this test binary again, running only this test)
    /// create one key at one moment: exactly one wins. A child finds
    /// `ZARRKIT_TEST_RACE` (the store root, its own name and when to
    /// start), creates the key and prints whether it won.
    #[test]
    fn processes_racing_to_create_one_key_leave_one_winner() {
        use std::time::{Duration, SystemTime, UNIX_EPOCH};
        let now = || SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        if let Ok(spec) = std::env::var(RACE_VAR) {
            let mut parts = spec.splitn(3, '\n');
            let (root, name, start) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            let start = Duration::from_nanos(start.parse().unwrap());
            let store = FilesystemStore::new(root).unwrap();
            let value = format!("{name} ").repeat(10_000);
            std::thread::sleep(start.saturating_sub(now()));
            let won = store
                .set_if_absent(&key("race/zarr.json"), value.as_bytes())
                .unwrap();
            println!("race-result {name} {won}");
            return;
        }
        let (_dir, store) = temp_store();
        for round in 0..5 {
            let root = store.root().join(round.to_string());
            let start = now() + Duration::from_millis(300);
            let children: Vec<_> = ["p0", "p1"]
                .iter()
                .map(|name| {
                    let spec = format!("{}\n{name}\n{}", root.display(), start.as_nanos());
                    std::process::Command::new(std::env::current_exe().unwrap())
                        .args([
                            "--exact",
                            "store::filesystem::tests::processes_racing_to_create_one_key_leave_one_winner",
                            "--nocapture",
                        ])
                        .env(RACE_VAR, spec)
                        .stdout(std::process::Stdio::piped())
                        .spawn()
                        .unwrap()
                })
                .collect();
            let mut winners = Vec::new();
            for child in children {
                let out = child.wait_with_output().unwrap();
                assert!(out.status.success(), "a racing process failed");
                let out = String::from_utf8(out.stdout).unwrap();
                let line = out
                    .lines()
                    .find(|l| l.starts_with("race-result "))
                    .unwrap_or_else(|| panic!("no result from a racing process: {out}"));
                let mut words = line.split(' ').skip(1);
                let (name, won) = (words.next().unwrap(), words.next().unwrap());
                if won == "true" {
                    winners.push(name.to_string());
                }
            }
            assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
            let stored = fs::read(root.join("race/zarr.json")).unwrap();
            assert_eq!(
                stored,
                format!("{} ", winners[0]).repeat(10_000).into_bytes()
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_are_not_listed() {
        use std::os::unix::ffi::OsStrExt;
        let (_dir, store) = temp_store();
        store.set(&key("ok"), b"1").unwrap();
        let name = std::ffi::OsStr::from_bytes(b"bad\xff");
        fs::write(store.root().join(name), b"x").unwrap();
        fs::create_dir(store.root().join(std::ffi::OsStr::from_bytes(b"dir\xfe"))).unwrap();
        assert_eq!(store.list().unwrap(), [key("ok")]);
        assert_eq!(
            store.list_dir(&StorePrefix::root()).unwrap(),
            ListDir {
                keys: vec![key("ok")],
                prefixes: vec![]
            }
        );
    }

    #[test]
    fn erase_removes_empty_parents_up_to_the_root() {
        let (_dir, store) = temp_store();
        store.set(&key("a/b/c/d"), b"1").unwrap();
        store.set(&key("a/x"), b"2").unwrap();
        store.erase(&key("a/b/c/d")).unwrap();
        assert!(!store.root().join("a/b").exists());
        assert!(store.root().join("a/x").is_file());
        store.erase(&key("a/x")).unwrap();
        assert!(!store.root().join("a").exists());
        assert!(store.root().is_dir());
    }

    #[test]
    fn erase_prefix_removes_empty_parents_but_keeps_the_root() {
        let (_dir, store) = temp_store();
        store.set(&key("a/b/c"), b"1").unwrap();
        store.erase_prefix(&prefix("a/b/")).unwrap();
        assert!(!store.root().join("a").exists());
        store.set(&key("x/y"), b"1").unwrap();
        store.erase_prefix(&StorePrefix::root()).unwrap();
        assert!(store.root().is_dir());
        assert_eq!(fs::read_dir(store.root()).unwrap().count(), 0);
    }

    #[test]
    fn suffix_read_of_a_huge_sparse_file_reads_only_the_suffix() {
        let (_dir, store) = temp_store();
        // 64 GiB of holes and then 4 bytes: reading the whole file for the
        // suffix would fail to allocate.
        let len = 64u64 << 30;
        let file = File::create(store.root().join("shard")).unwrap();
        file.set_len(len - 4).unwrap();
        drop(file);
        store
            .set_partial_values(&[(key("shard"), len - 4, b"tail".to_vec())])
            .unwrap();
        assert_eq!(store.size(&key("shard")).unwrap(), Some(len));
        let shard = key("shard");
        assert_eq!(
            store
                .get(&shard, Some(ByteRange::Suffix(4)))
                .unwrap()
                .unwrap(),
            b"tail"
        );
        assert_eq!(
            store
                .get(&shard, Some(ByteRange::new(len - 6, 3)))
                .unwrap()
                .unwrap(),
            b"\0\0t"
        );
        let answers = store
            .get_partial_values(&[
                (shard.clone(), Some(ByteRange::Suffix(2))),
                (shard.clone(), Some(ByteRange::new(0, 2))),
            ])
            .unwrap();
        assert_eq!(answers, [Some(b"il".to_vec()), Some(vec![0, 0])]);
    }

    #[test]
    fn batched_read_reports_the_earliest_failing_request() {
        let (_dir, store) = temp_store();
        store.set(&key("x"), b"0123456789").unwrap();
        store.set(&key("y"), b"01").unwrap();
        // `x` is opened first, and its second range fails; `y`'s range comes
        // earlier in the batch, so its error is the one reported.
        let err = store
            .get_partial_values(&[
                (key("x"), Some(ByteRange::new(0, 1))),
                (key("y"), Some(ByteRange::new(5, 1))),
                (key("x"), Some(ByteRange::new(50, 1))),
            ])
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::InvalidRange { key, len: 2, .. } if key.as_str() == "y"),
            "{err:?}"
        );
    }

    /// The answers of `get_values_each`, gathered by request index: each
    /// request answered once, as `get_partial_values` answers it.
    fn answers_each(store: &dyn Store, requests: &[ReadRequest]) -> Vec<ReadResult> {
        let answers: Mutex<Vec<Option<ReadResult>>> =
            Mutex::new(requests.iter().map(|_| None).collect());
        store.get_values_each(requests, 2, &|i, answer| {
            let mut answers = answers.lock().unwrap();
            assert!(answers[i].is_none(), "request {i} answered twice");
            answers[i] = Some(answer);
            true
        });
        answers
            .into_inner()
            .unwrap()
            .into_iter()
            .enumerate()
            .map(|(i, a)| a.unwrap_or_else(|| panic!("request {i} not answered")))
            .collect()
    }

    #[test]
    fn values_handed_over_as_read_answer_each_request_once() {
        let (_dir, store) = temp_store();
        for i in 0..40 {
            store
                .set(&key(&format!("c/{i}")), format!("value {i}").as_bytes())
                .unwrap();
        }
        let mut requests: Vec<ReadRequest> =
            (0..40).map(|i| (key(&format!("c/{i}")), None)).collect();
        requests.push((key("c/missing"), None));
        requests.push((key("c/7"), Some(ByteRange::new(6, 1))));
        requests.push((key("c/3"), Some(ByteRange::new(50, 1))));
        requests.push((key("c"), None));
        let answers = answers_each(&store, &requests);
        for (i, answer) in answers.iter().take(40).enumerate() {
            assert_eq!(
                answer.as_ref().unwrap().as_deref(),
                Some(format!("value {i}").as_bytes())
            );
        }
        assert_eq!(answers[40].as_ref().unwrap(), &None);
        assert_eq!(answers[41].as_ref().unwrap().as_deref(), Some(&b"7"[..]));
        // A range past the end is that request's error, naming its key;
        // a directory is no value.
        assert!(
            matches!(&answers[42], Err(StoreError::InvalidRange { key, len: 7, .. }) if key.as_str() == "c/3"),
            "{:?}",
            answers[42]
        );
        assert_eq!(answers[43].as_ref().unwrap(), &None);
        // The same answers as a batch read's, which stops at the error.
        let batch = store.get_partial_values(&requests[..42]).unwrap();
        let each: Vec<Option<Vec<u8>>> = answers.into_iter().take(42).map(Result::unwrap).collect();
        assert_eq!(batch, each);
        // The default, which reads a batch at a time: in order.
        let memory = crate::store::MemoryStore::new();
        memory.set(&key("a"), b"A").unwrap();
        memory.set(&key("b"), b"B").unwrap();
        let order = Mutex::new(Vec::new());
        let requests = [(key("a"), None), (key("z"), None), (key("b"), None)];
        memory.get_values_each(&requests, 2, &|i, answer| {
            order.lock().unwrap().push((i, answer.unwrap()));
            true
        });
        assert_eq!(
            order.into_inner().unwrap(),
            [
                (0, Some(b"A".to_vec())),
                (1, None),
                (2, Some(b"B".to_vec()))
            ]
        );
    }

    #[test]
    fn values_handed_over_as_read_stop_when_refused() {
        let (_dir, store) = temp_store();
        let requests: Vec<ReadRequest> = (0..400)
            .map(|i| {
                let k = key(&format!("c/{i}"));
                store.set(&k, &[1; 64]).unwrap();
                (k, None)
            })
            .collect();
        let calls = AtomicU64::new(0);
        store.get_values_each(&requests, 8, &|_, _| {
            calls.fetch_add(1, Ordering::Relaxed);
            false
        });
        // The reads under way when the first answer is refused still end
        // (one a thread at most), but no new one starts.
        let calls = calls.into_inner();
        assert!((1..=64).contains(&calls), "{calls} answers handed over");
    }

    #[test]
    fn batched_read_answers_repeated_keys_in_request_order() {
        let (_dir, store) = temp_store();
        store.set(&key("x"), b"0123456789").unwrap();
        store.set(&key("y"), b"ab").unwrap();
        let answers = store
            .get_partial_values(&[
                (key("x"), Some(ByteRange::new(8, 2))),
                (key("y"), None),
                (key("x"), Some(ByteRange::new(0, 2))),
                (key("z"), None),
                (key("x"), Some(ByteRange::Suffix(1))),
                (key("y"), Some(ByteRange::new(1, 1))),
            ])
            .unwrap();
        let expected: Vec<Option<Vec<u8>>> = vec![
            Some(b"89".to_vec()),
            Some(b"ab".to_vec()),
            Some(b"01".to_vec()),
            None,
            Some(b"9".to_vec()),
            Some(b"b".to_vec()),
        ];
        assert_eq!(answers, expected);
    }

    /// Drops `file`'s pages from the page cache: advises it up to 20 times
    /// (pages under writeback stay) until `evicted` says so; whether it did.
    #[cfg(target_os = "linux")]
    fn evict(file: &File, evicted: impl Fn() -> bool) -> bool {
        (0..20).any(|_| {
            rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(5));
            evicted()
        })
    }

    /// `cold_size` answers a file's length only while its bytes are out
    /// of the page cache, and nothing for missing keys and directories.
    #[cfg(target_os = "linux")]
    #[test]
    fn cold_size_is_the_length_of_a_file_the_page_cache_does_not_hold() {
        let (_dir, store) = temp_store();
        let value: Vec<u8> = (0..200_000u32).map(|i| (i * 13 % 251) as u8).collect();
        store.set(&key("c/0"), &value).unwrap();
        store.set(&key("c/1"), &value[..10]).unwrap();
        // Just written: cached.
        assert_eq!(store.cold_size(&key("c/0")), None);
        assert_eq!(store.cold_size(&key("c/404")), None);
        assert_eq!(store.cold_size(&key("c")), None);
        // Dropped from the page cache, on a disk file system (tmpfs,
        // magic 0x01021994, keeps its pages): asked again a few times, as
        // in `small_values_come_from_the_caches_first_and_the_rest_from_the_device`.
        if rustix::fs::statfs(store.root()).unwrap().f_type != 0x0102_1994 {
            let file = File::open(store.root().join("c/0")).unwrap();
            file.sync_all().unwrap();
            let evicted = evict(&file, || store.cold_size(&key("c/0")) == Some(200_000));
            assert!(evicted, "`c/0` stayed in the page cache after 20 advices");
            assert_eq!(store.cold_size(&key("c/1")), None);
            // Read back whole: cached again.
            assert_eq!(store.get(&key("c/0"), None).unwrap(), Some(value));
            assert_eq!(store.cold_size(&key("c/0")), None);
        }
    }

    /// Whether every page of bytes `offset..offset + len` of `file` is in
    /// the page cache (`mincore` of a mapping, which reads nothing; a
    /// `RWF_NOWAIT` probe, as `cold_size` makes, starts a read ahead).
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn resident(file: &File, offset: usize, len: usize) -> bool {
        use std::os::fd::AsRawFd;
        let page = 4096;
        let (start, end) = (offset / page * page, (offset + len).div_ceil(page) * page);
        let size = end - start;
        // SAFETY: a read-only shared mapping of the file's pages within its
        // length, unmapped before returning; `mincore` writes one byte per
        // page into `pages`, which holds that many.
        unsafe {
            let addr = libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                start as libc::off_t,
            );
            assert_ne!(addr, libc::MAP_FAILED);
            let mut pages = vec![0u8; size / page];
            let answered = libc::mincore(addr, size, pages.as_mut_ptr());
            libc::munmap(addr, size);
            assert_eq!(answered, 0);
            pages.iter().all(|p| p & 1 == 1)
        }
    }

    /// A snapshot's `will_read` has the kernel read the range into the
    /// page cache in the background, and only that range.
    #[cfg(target_os = "linux")]
    #[test]
    fn will_read_brings_the_range_into_the_page_cache() {
        let (_dir, store) = temp_store();
        let value: Vec<u8> = (0..2_000_000u32).map(|i| (i * 13 % 251) as u8).collect();
        store.set(&key("c/0"), &value).unwrap();
        // tmpfs (magic 0x01021994) keeps its pages: nothing to read ahead.
        if rustix::fs::statfs(store.root()).unwrap().f_type == 0x0102_1994 {
            return;
        }
        let file = File::open(store.root().join("c/0")).unwrap();
        file.sync_all().unwrap();
        let evict = || {
            let evicted = evict(&file, || {
                !resident(&file, 0, 4096) && !resident(&file, 1 << 20, 4096)
            });
            assert!(evicted, "`c/0` stayed in the page cache after 20 advices");
        };
        // Cached within 2 s of the advice (which does not wait for reads).
        let cached_soon = |offset, len| {
            (0..400).any(|_| {
                std::thread::sleep(std::time::Duration::from_millis(5));
                resident(&file, offset, len)
            })
        };
        evict();
        let snapshot = store.snapshot(&key("c/0")).unwrap();
        snapshot.will_read(ByteRange::new(1 << 20, 500_000));
        assert!(
            cached_soon(1 << 20, 500_000),
            "the range was not read ahead"
        );
        assert!(!resident(&file, 0, 4096), "the first page was read too");
        evict();
        snapshot.will_read(ByteRange::new(0, 500_000));
        assert!(cached_soon(0, 500_000), "the range was not read ahead");
        assert_eq!(
            snapshot.read(&[Some(ByteRange::new(0, 500_000))]).unwrap(),
            Some(vec![value[..500_000].to_vec()])
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn cached_reads_answer_ranges_and_refuse_a_range_past_the_end() {
        let (_dir, store) = temp_store();
        let value: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        store.set(&key("v"), &value).unwrap();
        let (file, len) = store.open_for_read(&key("v"), None).unwrap().unwrap();
        // Just written: in the page cache (or on a file system that never
        // waits, such as tmpfs).
        let cached = |range| read_range_cached(&file, &key("v"), len, range).unwrap();
        assert_eq!(cached(None), Some(value.clone()));
        assert_eq!(
            cached(Some(ByteRange::new(100, 50))),
            Some(value[100..150].to_vec())
        );
        assert_eq!(
            cached(Some(ByteRange::Suffix(7))),
            Some(value[9_993..].to_vec())
        );
        assert_eq!(cached(Some(ByteRange::new(10_000, 0))), Some(Vec::new()));
        let err =
            read_range_cached(&file, &key("v"), len, Some(ByteRange::new(9_990, 11))).unwrap_err();
        assert!(matches!(err, StoreError::InvalidRange { .. }), "{err:?}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn small_values_come_from_the_caches_first_and_the_rest_from_the_device() {
        let (_dir, store) = temp_store();
        let n = 3 * SMALL_VALUES_ON_CALLER;
        let value = |i: usize| -> Vec<u8> {
            let len = if i == 5 { SMALL_READ + 3 } else { 100 + i };
            (0..len).map(|j| (i * 31 + j * 7) as u8).collect()
        };
        for i in 0..n {
            store
                .set(&key(&format!("g/{i}/zarr.json")), &value(i))
                .unwrap();
        }
        // Every third value written to disk and dropped from the page
        // cache: a read that must not wait finds nothing (on a disk file
        // system; tmpfs, magic 0x01021994, keeps its pages).
        let disk = rustix::fs::statfs(store.root()).unwrap().f_type != 0x0102_1994;
        for i in (0..n).step_by(3) {
            let file = File::open(store.root().join(format!("g/{i}/zarr.json"))).unwrap();
            file.sync_all().unwrap();
            rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
        }
        let root = store.batch_root().unwrap();
        let cached = |k: &str| store.read_small_cached(&key(k), &root).map(Result::unwrap);
        assert_eq!(cached("g/1/zarr.json"), Some(Some(value(1))));
        if disk {
            // Asked again while the kernel keeps it (see
            // `a_small_batch_of_files_evicted_from_the_page_cache_reads_them_all`).
            let file = File::open(store.root().join("g/3/zarr.json")).unwrap();
            let evicted = (0..20).any(|_| {
                rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
                let missed = cached("g/3/zarr.json").is_none();
                std::thread::sleep(std::time::Duration::from_millis(5));
                missed
            });
            assert!(evicted, "`g/3` stayed in the page cache after 20 advices");
        }
        // A value that fills the first read is left to the usual read, as
        // is a directory (no `RWF_NOWAIT` read there).
        assert_eq!(cached("g/5/zarr.json"), None);
        assert_eq!(cached("g/1"), None);
        // A name the dentry cache knows to be missing (looked up once).
        assert!(fs::metadata(store.root().join("g/1/nothing")).is_err());
        assert_eq!(cached("g/1/nothing"), Some(None));
        // The batch: cached, evicted, long, missing and a directory, each
        // answered in its place.
        let keys: Vec<StoreKey> = (0..n)
            .map(|i| key(&format!("g/{i}/zarr.json")))
            .chain([key("g/404/zarr.json"), key("g/2")])
            .collect();
        let answers = store.get_small_values(&keys).unwrap();
        assert_eq!(answers.len(), n + 2);
        for (i, answer) in answers.iter().take(n).enumerate() {
            assert_eq!(answer.as_deref(), Some(&value(i)[..]), "value {i}");
        }
        assert_eq!(answers[n..], [None, None]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_snapshot_reads_cached_and_evicted_ranges_of_one_file_each_in_its_place() {
        let (_dir, store) = temp_store();
        let k = key("shard/c/0");
        let value: Vec<u8> = (0..2_000_000u32).map(|j| (j * 7 + j / 251) as u8).collect();
        store.set(&k, &value).unwrap();
        let file = File::open(store.root().join("shard/c/0")).unwrap();
        file.sync_all().unwrap();
        // Dropped from the page cache (on a disk file system; tmpfs,
        // magic 0x01021994, keeps its pages), asked again while the kernel
        // keeps a page; checked on a byte no range below reads (a read
        // that must not wait brings the pages around it back).
        if rustix::fs::statfs(store.root()).unwrap().f_type != 0x0102_1994 {
            let probe = Some(ByteRange::new(1_000_000, 1));
            let evicted = (0..20).any(|_| {
                rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
                let cached = read_range_cached(&file, &k, 2_000_000, probe).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(5));
                cached.is_none()
            });
            assert!(
                evicted,
                "the value stayed in the page cache after 20 advices"
            );
            rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
        }
        // One range read back into the cache: the batch mixes both kinds.
        let cached_range = ByteRange::new(600_000, 70_000);
        read_range(&file, &k, 2_000_000, Some(cached_range)).unwrap();
        let snapshot = store.snapshot(&k).unwrap();
        let ranges = [
            Some(ByteRange::new(1_500_000, 65_000)),
            Some(cached_range),
            Some(ByteRange::new(10, 100_000)),
            Some(ByteRange::Suffix(8_196)),
            None,
            Some(ByteRange::new(1_999_999, 1)),
        ];
        let read = snapshot.read(&ranges).unwrap().unwrap();
        let expected: Vec<&[u8]> = vec![
            &value[1_500_000..1_565_000],
            &value[600_000..670_000],
            &value[10..100_010],
            &value[2_000_000 - 8_196..],
            &value[..],
            &value[1_999_999..],
        ];
        assert_eq!(read.len(), expected.len());
        for (i, (got, want)) in read.iter().zip(&expected).enumerate() {
            assert!(
                got == want,
                "range {i}: {} bytes, expected {}",
                got.len(),
                want.len()
            );
        }
        // Of two ranges past the end, the error names the first.
        let first_bad = ByteRange::new(2_000_000, 10);
        let error = snapshot
            .read(&[
                Some(ByteRange::new(0, 10)),
                Some(first_bad),
                Some(ByteRange::new(3_000_000, 10)),
            ])
            .unwrap_err();
        match error {
            StoreError::InvalidRange {
                key, range, len, ..
            } => {
                assert_eq!((key, range, len), (k.clone(), first_bad, 2_000_000));
            }
            other => panic!("expected an invalid range, got {other}"),
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_small_batch_of_files_evicted_from_the_page_cache_reads_them_all() {
        let (_dir, store) = temp_store();
        let value =
            |i: usize| -> Vec<u8> { (0..300_000).map(|j| (i * 31 + j * 7) as u8).collect() };
        for i in 0..CACHED_FIRST_FILES {
            store.set(&key(&format!("k/{i}")), &value(i)).unwrap();
            // Written to disk, then dropped from the page cache, so a
            // read that must not wait finds nothing cached (on a disk
            // file system; tmpfs keeps its pages).
            let file = File::open(store.root().join(format!("k/{i}"))).unwrap();
            file.sync_all().unwrap();
            rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
        }
        // A disk file system then has to read it from the device (tmpfs,
        // whose magic number is 0x01021994, keeps its pages in memory).
        // On a loaded machine the kernel may keep a page the first advice
        // asked it to drop (one still on another core's list of pages
        // being added): it is asked again, a few times.
        let (file, len) = store.open_for_read(&key("k/2"), None).unwrap().unwrap();
        if rustix::fs::statfs(store.root()).unwrap().f_type != 0x0102_1994 {
            let evicted = (0..20).any(|_| {
                rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
                let cached = read_range_cached(&file, &key("k/2"), len, None).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(5));
                cached.is_none()
            });
            assert!(evicted, "`k/2` stayed in the page cache after 20 advices");
        }
        // Keys 1 and 4 cached again: the batch mixes both kinds.
        for i in [1, 4] {
            assert_eq!(
                fs::read(store.root().join(format!("k/{i}"))).unwrap(),
                value(i)
            );
        }
        let requests: Vec<ReadRequest> = (0..CACHED_FIRST_FILES)
            .map(|i| {
                let range = (i % 2 == 1).then(|| ByteRange::new(1_000, 5_000));
                (key(&format!("k/{i}")), range)
            })
            .chain([(key("missing"), None)])
            .collect();
        assert_eq!(requests.len(), CACHED_FIRST_FILES + 1);
        let answers = store.get_partial_values(&requests[1..]).unwrap();
        for (answer, i) in answers.iter().zip(1..) {
            let expected = match i {
                _ if i == CACHED_FIRST_FILES => None,
                _ if i % 2 == 1 => Some(value(i)[1_000..6_000].to_vec()),
                _ => Some(value(i)),
            };
            assert!(*answer == expected, "answer {i}");
        }
    }

    #[test]
    fn a_batch_of_more_files_than_io_threads_answers_each_in_request_order() {
        let (_dir, store) = temp_store();
        // Values of different lengths, up to a few reads' worth (1 MiB).
        let value = |i: usize| -> Vec<u8> {
            let len = if i.is_multiple_of(10) {
                1 << 20
            } else {
                i * 37
            };
            (0..len).map(|j| (i * 31 + j * 7) as u8).collect()
        };
        let n = 4 * IO_THREADS;
        for i in (0..n).filter(|i| i % 7 != 3) {
            store.set(&key(&format!("k/{i}")), &value(i)).unwrap();
        }
        let requests: Vec<ReadRequest> = (0..n)
            .map(|i| {
                let range =
                    (i % 4 == 1 && i % 7 != 3).then(|| ByteRange::new(3, (i * 37 - 3) as u64));
                (key(&format!("k/{i}")), range)
            })
            .collect();
        let answers = store.get_partial_values(&requests).unwrap();
        for (i, answer) in answers.into_iter().enumerate() {
            let expected = match i {
                _ if i % 7 == 3 => None,
                _ if i % 4 == 1 => Some(value(i)[3..].to_vec()),
                _ => Some(value(i)),
            };
            assert!(answer == expected, "answer {i}");
        }
    }
}
