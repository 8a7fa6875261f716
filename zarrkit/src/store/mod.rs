//! Bytes under keys: the abstract store interface of the Zarr specs.
//!
//! Spec: "Abstract store interface" in the v3 core draft of 2022 and
//! `final/v3/stores`. A store knows nothing about Zarr: it maps [`StoreKey`]s
//! to byte values and answers ranged and batched reads.
//!
//! The [`Store`] trait is object safe; arrays and groups hold an
//! `Arc<dyn Store>`. Every operation a backend cannot do returns
//! [`StoreError::Unsupported`], and [`Store::capabilities`] says up front
//! which groups of operations work.

pub(crate) mod buffers;
mod filesystem;
mod key;
mod location;
mod memory;
#[cfg(feature = "remote")]
mod object;
#[allow(unsafe_code)]
pub(crate) mod pages;
pub mod testing;
#[cfg(feature = "zip")]
mod zip;

#[cfg(all(test, target_os = "linux"))]
pub(crate) use filesystem::PARTS_COMMITTED;
#[cfg(all(test, target_os = "linux"))]
pub(crate) use filesystem::REMOVAL_DELAY_MS;
pub(crate) use filesystem::io_pool;
pub use filesystem::{FilesystemStore, SkipReason, SkippedLink};
pub use key::{StoreKey, StorePrefix};
pub use location::{StoreOptions, open, open_or_create};
pub use memory::MemoryStore;
#[cfg(feature = "remote")]
pub use object::{Backend, DEFAULT_CONCURRENCY, RemoteStore};
#[cfg(feature = "zip")]
pub use zip::{SkippedMember, ZipStore, ZipStoreWriter};

use std::fmt::Debug;
use std::sync::Arc;

/// A byte range within a stored value.
///
/// v3 core draft 2022, "Abstract store interface": `get_partial_values`
/// takes a `(key, range)` pair whose range is either an offset with an
/// optional length, or a number of bytes counted from the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteRange {
    /// `length` bytes (or all remaining bytes when `None`) starting at `offset`.
    FromStart {
        /// First byte of the range.
        offset: u64,
        /// Number of bytes, or `None` for everything from `offset` on.
        length: Option<u64>,
    },
    /// The last `n` bytes of the value (all of it when the value is shorter).
    Suffix(u64),
}

impl ByteRange {
    /// The bounded range `offset..offset + length`.
    #[must_use]
    pub fn new(offset: u64, length: u64) -> Self {
        Self::FromStart {
            offset,
            length: Some(length),
        }
    }

    /// The start and end (exclusive) of this range in a value of `len` bytes.
    ///
    /// Returns `None` if the range does not lie within the value: an offset
    /// past the end or a bounded range that runs past the end. A suffix longer
    /// than the value is the whole value, as in HTTP range requests.
    #[must_use]
    pub fn bounds(&self, len: u64) -> Option<(u64, u64)> {
        match *self {
            Self::FromStart { offset, length } => {
                let end = match length {
                    Some(length) => offset.checked_add(length)?,
                    None => len,
                };
                (offset <= len && end <= len && offset <= end).then_some((offset, end))
            }
            Self::Suffix(n) => Some((len.saturating_sub(n), len)),
        }
    }
}

impl std::fmt::Display for ByteRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::FromStart {
                offset,
                length: Some(length),
            } => write!(f, "bytes {offset}..{}", offset.saturating_add(*length)),
            Self::FromStart {
                offset,
                length: None,
            } => write!(f, "bytes {offset}.."),
            Self::Suffix(n) => write!(f, "last {n} bytes"),
        }
    }
}

/// Which groups of operations a store supports.
///
/// v3 core draft 2022, "Abstract store interface": a store may be readable,
/// writeable and listable, each independently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools)]
pub struct StoreCapabilities {
    /// `get` and `get_partial_values`.
    pub read: bool,
    /// `set`, `erase`, `erase_values` and `erase_prefix`.
    pub write: bool,
    /// `set_partial_values`.
    pub partial_write: bool,
    /// `list`, `list_prefix` and `list_dir`.
    pub list: bool,
    /// [`Store::snapshot`] pins one version of a value and
    /// [`Store::set_if_unchanged`] replaces exactly that version, also
    /// against writers in other processes.
    pub conditional_write: bool,
    /// [`Store::set_if_absent`] creates a value only where none is, as one
    /// atomic step, so that of two writers creating one key exactly one
    /// succeeds (also across processes and machines, as far as the
    /// backend reaches).
    pub conditional_create: bool,
}

/// What [`Store::list_dir`] finds directly under a prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListDir {
    /// Keys directly under the prefix (no further `/`), sorted.
    pub keys: Vec<StoreKey>,
    /// Child prefixes (each ending in `/`), sorted.
    pub prefixes: Vec<StorePrefix>,
}

/// One read of a batch: a key and an optional byte range (`None` reads the whole value).
pub type ReadRequest = (StoreKey, Option<ByteRange>);

/// The version of a stored value that [`Store::snapshot`] read, for
/// [`Store::set_if_unchanged`] to compare against.
///
/// It is opaque: each backend makes and checks its own. A backend over
/// object storage would use the object's `ETag` ([`ValueVersion::tag`]) and
/// a conditional `PUT` (`If-Match`, or `If-None-Match: *` for a missing
/// value).
#[derive(Clone, Debug)]
pub struct ValueVersion(VersionKind);

#[derive(Clone, Debug)]
enum VersionKind {
    /// The key held no value.
    Missing,
    /// A backend's tag, such as an `ETag`.
    Tag(String),
    /// A value of a [`MemoryStore`]: the shared bytes themselves, whose
    /// address cannot be reused while this version holds them.
    Memory(Arc<Vec<u8>>),
    /// A file of a [`FilesystemStore`], held open so that its inode number
    /// cannot be reused by another file while this version lives.
    File(Arc<filesystem::FileVersion>),
}

impl ValueVersion {
    /// The version of a key that holds no value.
    #[must_use]
    pub fn missing() -> Self {
        Self(VersionKind::Missing)
    }

    /// A version named by a backend's tag (for example an HTTP `ETag`).
    #[must_use]
    pub fn tag(tag: impl Into<String>) -> Self {
        Self(VersionKind::Tag(tag.into()))
    }

    /// Whether this is the version of a missing value.
    #[must_use]
    pub fn is_missing(&self) -> bool {
        matches!(self.0, VersionKind::Missing)
    }

    /// The backend's tag, if the version was made by [`ValueVersion::tag`].
    #[must_use]
    pub fn as_tag(&self) -> Option<&str> {
        match &self.0 {
            VersionKind::Tag(tag) => Some(tag),
            _ => None,
        }
    }
}

/// One version of the value under a key, read by byte ranges.
///
/// A read-modify-write reads the old value through a snapshot and stores
/// the new one with [`Store::set_if_unchanged`]; a partial read (a shard's
/// index, then its inner chunks) reads every range through one snapshot, so
/// it never mixes two versions of the value.
pub trait ValueSnapshot: Send + Sync {
    /// Reads each range (`None`: the whole value) of this version of the
    /// value, in order; `Ok(None)` when the key held no value.
    ///
    /// # Errors
    /// [`StoreError::InvalidRange`] if a range does not lie within the
    /// value, or a backend error.
    fn read(&self, ranges: &[Option<ByteRange>]) -> Result<Option<Vec<Vec<u8>>>, StoreError>;

    /// The version this snapshot pins, or `None` when it pins none (it
    /// then reads whatever the key holds at each call). A snapshot of
    /// object storage pins the version of its first read, so it answers
    /// `None` until it has read.
    fn version(&self) -> Option<ValueVersion>;

    /// Says that `range` of this version will be read soon: a store on a
    /// device starts reading it into memory and returns at once. A hint:
    /// it does nothing by default.
    fn will_read(&self, range: ByteRange) {
        let _ = range;
    }
}

/// The snapshot of stores that cannot pin a version: each read goes to
/// [`Store::get_partial_values`].
struct UnpinnedSnapshot<'a, S: ?Sized> {
    store: &'a S,
    key: StoreKey,
}

impl<S: Store + ?Sized> ValueSnapshot for UnpinnedSnapshot<'_, S> {
    fn read(&self, ranges: &[Option<ByteRange>]) -> Result<Option<Vec<Vec<u8>>>, StoreError> {
        let requests: Vec<ReadRequest> = ranges.iter().map(|r| (self.key.clone(), *r)).collect();
        let values = self.store.get_partial_values(&requests)?;
        Ok(values.into_iter().collect())
    }

    fn version(&self) -> Option<ValueVersion> {
        None
    }
}

/// Errors from a [`Store`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Reading a key failed in the backend.
    #[error("cannot read `{key}` from {store}")]
    Read {
        /// The backend's name.
        store: &'static str,
        /// The key being read.
        key: StoreKey,
        /// What the backend reported.
        #[source]
        source: std::io::Error,
    },

    /// Writing a key failed in the backend.
    #[error("cannot write `{key}` to {store}")]
    Write {
        /// The backend's name.
        store: &'static str,
        /// The key being written.
        key: StoreKey,
        /// What the backend reported.
        #[source]
        source: std::io::Error,
    },

    /// Erasing a key or prefix failed in the backend.
    #[error("cannot erase `{key}` from {store}")]
    Erase {
        /// The backend's name.
        store: &'static str,
        /// The key or prefix being erased.
        key: String,
        /// What the backend reported.
        #[source]
        source: std::io::Error,
    },

    /// Listing a prefix failed in the backend.
    #[error("cannot list `{prefix}` in {store}")]
    List {
        /// The backend's name.
        store: &'static str,
        /// The prefix being listed.
        prefix: String,
        /// What the backend reported.
        #[source]
        source: std::io::Error,
    },

    /// A byte range does not lie within the stored value.
    #[error("{range} is out of bounds for `{key}` ({len} bytes) in {store}")]
    InvalidRange {
        /// The backend's name.
        store: &'static str,
        /// The key being read.
        key: StoreKey,
        /// The requested range.
        range: ByteRange,
        /// The length of the stored value.
        len: u64,
    },

    /// A partial write would leave a gap past the end of the stored value, or
    /// targets a key that does not exist.
    #[error("cannot write at offset {offset} of `{key}` ({len} bytes) in {store}")]
    InvalidPartialWrite {
        /// The backend's name.
        store: &'static str,
        /// The key being written.
        key: StoreKey,
        /// The requested offset.
        offset: u64,
        /// The length of the stored value (0 when it does not exist).
        len: u64,
    },

    /// The value under a key was replaced (or erased) by another writer
    /// while a [`ValueSnapshot`] was reading it, on a store that cannot
    /// keep reading the old version (object storage): the reads fail
    /// rather than mix two versions. Read again from a new snapshot; the
    /// array engine does so itself.
    #[error("`{key}` changed in {store} while it was read")]
    Changed {
        /// The backend's name.
        store: &'static str,
        /// The key being read.
        key: StoreKey,
    },

    /// A conditional write was given a version that another store made.
    #[error("the version given for `{key}` was not made by {store}")]
    ForeignVersion {
        /// The backend's name.
        store: &'static str,
        /// The key being written.
        key: StoreKey,
    },

    /// A key is reached through a symbolic link that leads outside the
    /// store's root, which the store was not told to follow.
    #[error(
        "`{key}` in {store} leads through a symbolic link outside the store root (to `{target}`), and links out of the root are not followed"
    )]
    LinkOutsideRoot {
        /// The backend's name.
        store: &'static str,
        /// The key or prefix.
        key: String,
        /// Where the link leads.
        target: String,
    },

    /// A string is not a valid store key or prefix.
    #[error("invalid store key `{key}`: {reason}")]
    InvalidKey {
        /// The rejected key, escaped for display.
        key: String,
        /// Which rule it breaks.
        reason: &'static str,
    },

    /// The store root cannot be opened or created.
    #[error("cannot open {store} at `{path}`")]
    Open {
        /// The backend's name.
        store: &'static str,
        /// The root path.
        path: String,
        /// What the backend reported.
        #[source]
        source: std::io::Error,
    },

    /// Finishing a store that writes its values out at the end (a zip
    /// archive) failed.
    #[error("cannot finish {store} at `{path}`")]
    Finish {
        /// The backend's name.
        store: &'static str,
        /// Where the store writes.
        path: String,
        /// What the backend reported.
        #[source]
        source: std::io::Error,
    },

    /// The store does not offer this operation (for example, writing over HTTP).
    #[error("{store} does not support {operation}")]
    Unsupported {
        /// The backend's name.
        store: &'static str,
        /// The operation that was asked for.
        operation: &'static str,
    },

    /// The server refused access to a key: wrong or missing credentials, or
    /// a policy that does not allow the operation (HTTP 401 or 403).
    #[error(
        "access to `{key}` denied by {store} (check the credentials; a public bucket opens anonymously)"
    )]
    AccessDenied {
        /// The backend's name and location.
        store: &'static str,
        /// The key (or prefix) being accessed.
        key: String,
        /// What the backend reported.
        #[source]
        source: std::io::Error,
    },

    /// The bucket (S3, GCS) or container (Azure) of a remote store does not exist.
    #[error("the bucket or container of {store} does not exist")]
    NoSuchBucket {
        /// The backend's name and location.
        store: &'static str,
        /// What the backend reported.
        #[source]
        source: std::io::Error,
    },

    /// A location (a path or URL) given to [`open`] is malformed.
    #[error("invalid store location `{location}`: {reason}")]
    InvalidLocation {
        /// The location as given.
        location: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A location names a kind of store that this build cannot open (its
    /// cargo feature is off, or it is not implemented yet).
    #[error("cannot open `{location}`: {reason}")]
    UnsupportedLocation {
        /// The location as given.
        location: String,
        /// Why, naming the feature or the missing support.
        reason: String,
    },

    /// A storage option given to [`open`] is unknown to the backend or has an invalid value.
    #[error("invalid storage option `{key}` for {backend}: {reason}")]
    InvalidOption {
        /// The backend the option was given for.
        backend: &'static str,
        /// The option's key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
}

thread_local! {
    /// Whether writes on this thread may leave work to the background ([`deferring`]).
    static DEFERRING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, whose writes a store may finish in the background until
/// [`Store::settle`]: the filesystem store then removes the files of the
/// values `f` replaces on threads of its own instead of before `set`
/// returns (freeing a file's blocks can wait on the device). Worth it where a
/// writer stores many values (an array write of several chunks); a write
/// of one value gains nothing from it and would pay the hand-off, so
/// writes outside `f` finish at once.
pub fn deferring<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEFERRING.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(DEFERRING.with(|d| d.replace(true)));
    f()
}

/// Whether the current thread runs inside [`deferring`].
pub(crate) fn is_deferring() -> bool {
    DEFERRING.with(std::cell::Cell::get)
}

/// A value a store is writing in parts ([`Store::begin_set`]).
pub trait PendingValue: Send {
    /// Appends `parts`, one after another, to the value.
    ///
    /// # Errors
    /// A backend error naming the key; the value is then not stored.
    fn append(&mut self, parts: &[&[u8]]) -> Result<(), StoreError>;

    /// Puts the value in place under its key, replacing any previous value
    /// atomically: a reader sees the old value or the whole new one.
    ///
    /// # Errors
    /// A backend error naming the key; the previous value then stays.
    fn commit(self: Box<Self>) -> Result<(), StoreError>;
}

/// A key/value store, the storage layer under every Zarr format.
///
/// All methods take `&self`: backends synchronise internally, so one store
/// can serve many threads at once. A missing key is `Ok(None)` from the read
/// methods and not an error from the erase methods.
pub trait Store: Send + Sync + Debug {
    /// A short name for messages, such as `"filesystem store"`.
    fn name(&self) -> &'static str;

    /// Which groups of operations this store supports.
    fn capabilities(&self) -> StoreCapabilities;

    /// How many requests are worth keeping in flight at once, for readers
    /// that batch their reads (the array read engine sizes its batches and
    /// prefetches by it).
    ///
    /// 1 (the default) for local stores, where a read costs CPU time rather
    /// than a wait; a remote store answers its configured concurrency
    /// (64 by default), since each of its
    /// reads mostly waits a round trip. A store that wraps another answers
    /// what the inner one does.
    fn concurrency(&self) -> usize {
        1
    }

    /// The size of the value under `key` when reading it now would wait
    /// on a device (a local file whose bytes the operating system's page
    /// cache does not hold), as far as the store can tell without reading
    /// it. The array read engine asks before a whole read of many
    /// compressed chunks: large values that wait on the disk are decoded
    /// one by one as they arrive, values the cache holds in batches.
    ///
    /// `None` (the default) where the store cannot tell, when the cache
    /// holds the value, or when it is missing; a remote store's reads are
    /// fetched ahead by its [`Store::concurrency`] instead. A store that
    /// wraps another answers what the inner one does.
    fn cold_size(&self, key: &StoreKey) -> Option<u64> {
        let _ = key;
        None
    }

    /// Reads the value under `key`, or the given byte range of it.
    ///
    /// # Errors
    /// [`StoreError::InvalidRange`] if the range does not lie within the
    /// value, or a backend error.
    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError>;

    /// Reads a batch of values or ranges, answered in order, with `None` for
    /// missing keys.
    ///
    /// A store with high latency overrides this to issue the reads
    /// concurrently; the default loops over [`Store::get`].
    ///
    /// # Errors
    /// The first error of any read in the batch.
    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        requests
            .iter()
            .map(|(key, range)| self.get(key, *range))
            .collect()
    }

    /// Reads a batch of values or ranges as [`Store::get_partial_values`]
    /// does, but hands each answer to `each`, with its request's index, as
    /// soon as it is read: in any order and from any thread, so that a
    /// reader decodes the first values while the rest still load. An
    /// error is handed over as the answer of the request that failed.
    /// When `each` returns `false` the store starts no further reads; the
    /// reads already under way still end and hand their answers over.
    /// Otherwise every request must be answered exactly once: the array
    /// engine believes a request's first answer only, ignores answers to
    /// requests it did not make, and fails a read naming the key of a
    /// request left unanswered.
    ///
    /// The default reads `batch` requests at a time with
    /// [`Store::get_partial_values`] and hands their answers over in
    /// order; a batch that fails is handed over as one error, at its
    /// first request's index.
    fn get_values_each(
        &self,
        requests: &[ReadRequest],
        batch: usize,
        each: &(dyn Fn(usize, Result<Option<Vec<u8>>, StoreError>) -> bool + Sync),
    ) {
        let batch = batch.max(1);
        for (n, slice) in requests.chunks(batch).enumerate() {
            match self.get_partial_values(slice) {
                Ok(values) => {
                    for (i, value) in values.into_iter().enumerate() {
                        if !each(n * batch + i, Ok(value)) {
                            return;
                        }
                    }
                }
                Err(err) => {
                    each(n * batch, Err(err));
                    return;
                }
            }
        }
    }

    /// Reads a few small whole values (such as the documents a node may
    /// have), answered in order, with `None` for missing keys: as
    /// [`Store::get_partial_values`], except that a local store may read
    /// them one after another on the caller's thread, where handing a few
    /// small reads to other threads costs more than the reads. The default
    /// calls [`Store::get_partial_values`].
    ///
    /// # Errors
    /// The first error of any read in the batch.
    fn get_small_values(&self, keys: &[StoreKey]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let requests: Vec<ReadRequest> = keys.iter().map(|key| (key.clone(), None)).collect();
        self.get_partial_values(&requests)
    }

    /// Stores `value` under `key`, replacing any previous value.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] on a read-only store, or a backend error.
    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError>;

    /// Starts storing a value under `key` that the caller writes in parts,
    /// in order ([`PendingValue`]), so that a large value (a shard) goes
    /// to its file as it is encoded instead of being assembled in memory
    /// first. Nothing shows under `key` until [`PendingValue::commit`],
    /// which replaces any previous value as atomically as [`Store::set`];
    /// a pending value dropped uncommitted leaves nothing behind.
    ///
    /// `Ok(None)` where the store writes whole values only (the default):
    /// the caller then assembles the value and calls [`Store::set`].
    ///
    /// # Errors
    /// As [`Store::set`].
    fn begin_set(&self, key: &StoreKey) -> Result<Option<Box<dyn PendingValue + '_>>, StoreError> {
        let _ = key;
        Ok(None)
    }

    /// Writes each `(key, offset, bytes)` into the existing value, extending
    /// it when the bytes run past its end.
    ///
    /// # Errors
    /// [`StoreError::InvalidPartialWrite`] when the offset lies past the end
    /// of the value or the key does not exist; [`StoreError::Unsupported`]
    /// where the backend cannot write in place.
    fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError>;

    /// Opens one version of the value under `key` for ranged reads.
    ///
    /// A store with [`StoreCapabilities::conditional_write`] pins the
    /// version its first read sees: every later read of the snapshot sees
    /// that version too, whatever writers do meanwhile, or fails with
    /// [`StoreError::Changed`] where the backend cannot keep an old
    /// version readable (object storage); [`ValueSnapshot::version`] names
    /// it. The default pins nothing and reads through
    /// [`Store::get_partial_values`].
    ///
    /// # Errors
    /// A backend error.
    fn snapshot<'a>(&'a self, key: &StoreKey) -> Result<Box<dyn ValueSnapshot + 'a>, StoreError> {
        Ok(Box::new(UnpinnedSnapshot {
            store: self,
            key: key.clone(),
        }))
    }

    /// Stores `value` under `key` (erases it for `None`) only if the key
    /// still holds the version `expected` that a [`Store::snapshot`] of this
    /// store read; returns whether it did. A read-modify-write that gets
    /// `false` reads again and retries, so concurrent writers of one key
    /// never lose each other's updates.
    ///
    /// Plain [`Store::set`] and [`Store::erase`] take no part in this: they
    /// replace the value whatever its version.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] unless the store has
    /// [`StoreCapabilities::conditional_write`],
    /// [`StoreError::ForeignVersion`] for a version another store made, or a
    /// backend error.
    fn set_if_unchanged(
        &self,
        key: &StoreKey,
        value: Option<&[u8]>,
        expected: &ValueVersion,
    ) -> Result<bool, StoreError> {
        let _ = (key, value, expected);
        Err(StoreError::Unsupported {
            store: self.name(),
            operation: "conditional writes",
        })
    }

    /// Stores `value` under `key` only if the key holds no value, as one
    /// atomic step; returns whether it did. Of several writers creating one
    /// key at once, exactly one gets `true` and the value is that writer's
    /// whole: no reader sees a partly written value.
    ///
    /// Creating a Zarr node with overwriting off goes through this where the
    /// store has [`StoreCapabilities::conditional_create`], so two writers
    /// cannot both create the node.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] unless the store has
    /// [`StoreCapabilities::conditional_create`] (some backends also answer
    /// it when the server turns out not to offer conditional creates), or a
    /// backend error, as [`Store::set`] gives.
    fn set_if_absent(&self, key: &StoreKey, value: &[u8]) -> Result<bool, StoreError> {
        let _ = (key, value);
        Err(StoreError::Unsupported {
            store: self.name(),
            operation: "conditional creates",
        })
    }

    /// Erases `key`; erasing a missing key succeeds.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] on a read-only store, or a backend error.
    fn erase(&self, key: &StoreKey) -> Result<(), StoreError>;

    /// Erases each key; the default loops over [`Store::erase`].
    ///
    /// # Errors
    /// The first error of any erase.
    fn erase_values(&self, keys: &[StoreKey]) -> Result<(), StoreError> {
        keys.iter().try_for_each(|key| self.erase(key))
    }

    /// Erases every key that starts with `prefix` (the root prefix erases everything).
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] on a read-only store, or a backend error.
    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError>;

    /// Every key in the store, sorted.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] on an unlistable store, or a backend error.
    fn list(&self) -> Result<Vec<StoreKey>, StoreError> {
        self.list_prefix(&StorePrefix::root())
    }

    /// Every key that starts with `prefix`, sorted.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] on an unlistable store, or a backend error.
    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError>;

    /// The keys and child prefixes directly under `prefix`.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] on an unlistable store, or a backend error.
    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError>;

    /// Every key that starts with `prefix` with the size of its value,
    /// sorted by key: what [`Store::list_prefix`] and [`Store::size`] say,
    /// in one listing where the backend's listing carries sizes (object
    /// storage), so that adding up the bytes under a prefix costs no
    /// request per key. A key erased between the listing and its size
    /// query is left out. The default asks [`Store::size`] of each key.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] on an unlistable store, or a backend error.
    fn list_prefix_sizes(&self, prefix: &StorePrefix) -> Result<Vec<(StoreKey, u64)>, StoreError> {
        let mut sized = Vec::new();
        for key in self.list_prefix(prefix)? {
            if let Some(size) = self.size(&key)? {
                sized.push((key, size));
            }
        }
        Ok(sized)
    }

    /// Completes the writes the store holds back until the end: a zip
    /// writer (`ZipStoreWriter`, feature `zip`) writes its archive. Stores that write through
    /// (every other backend) have nothing to do. Call it once all writes
    /// are done; the store may refuse writes afterwards.
    ///
    /// # Errors
    /// A backend error; the held-back writes are then not complete.
    fn finish(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Waits for the work earlier writes left to run in the background
    /// (see [`deferring`]): the filesystem store removes the files of
    /// replaced values on threads of its own (a replaced value's file sits
    /// under a temporary name no listing shows until then). Array writes
    /// settle before they return, and so does dropping the store; other
    /// stores have nothing to wait for.
    fn settle(&self) {}

    /// The size in bytes of the value under `key`, or `None` if it is missing.
    ///
    /// # Errors
    /// A backend error. The default reads the whole value.
    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        Ok(self.get(key, None)?.map(|v| v.len() as u64))
    }
}
