//! Remote stores: S3, Google Cloud Storage, Azure Blob Storage and HTTP,
//! through the `object_store` crate.
//!
//! [`RemoteStore`] keeps the [`Store`] trait blocking, so the filesystem
//! path pays nothing for it: it runs `object_store`'s futures on one small
//! runtime shared by every remote store of the process (two I/O threads;
//! decoding stays on rayon) and waits for them. What hides latency is that
//! one call issues many requests at once: [`Store::get_partial_values`]
//! sends a whole batch concurrently (up to [`RemoteStore::concurrency`]
//! requests, 64 by default), and the ranges of one object are merged into
//! few requests when they lie close together (`object_store`'s
//! `get_ranges`).
//!
//! Each backend's limits:
//! - HTTP is read-only: writes, erases and listings are
//!   [`StoreError::Unsupported`].
//! - Azure has no suffix ranges in `object_store`: a suffix read asks for
//!   the size first, then reads a bounded range (two round trips).
//! - Every backend but HTTP offers
//!   [`StoreCapabilities::conditional_create`] ([`Store::set_if_absent`]
//!   is a `PUT` with `If-None-Match: *` on S3 and Azure, with
//!   `ifGenerationMatch=0` on GCS), so creating a node is atomic where the
//!   server honours the condition: Amazon S3, Azure, GCS, and S3-compatible
//!   servers that implement it (SeaweedFS does, atomically; s3s-fs checks
//!   it, but not atomically against a concurrent `PUT`). S3 configured with
//!   `conditional_put=disabled` answers it as unsupported, and zarrkit
//!   then checks and writes in two steps.
//! - S3, Azure and other `object_store` backends (not GCS, not HTTP) offer
//!   [`StoreCapabilities::conditional_write`]: a [`Store::snapshot`] notes
//!   the `ETag` of its first read and asks every later read for it
//!   (`If-Match`), failing with [`StoreError::Changed`] rather than mixing
//!   two versions (object storage keeps one version of an object, so the
//!   old one cannot be read once replaced), and
//!   [`Store::set_if_unchanged`] is a `PUT` with `If-Match` on that
//!   `ETag` (`PutMode::Update`; `If-None-Match: *` for a missing value).
//!   Writers of parts of one shard in several processes or machines thus
//!   never lose each other's updates where the server honours `If-Match`
//!   on `PUT` atomically (Amazon S3, Azure, SeaweedFS; s3s-fs checks it,
//!   but not atomically, see the README). A server that ignores `If-Match`
//!   on `GET` (s3s-fs) is caught by the `ETag` of its answer. Erasing through it (a shard written back all fill) checks
//!   the `ETag` and then deletes, two requests: a write landing between
//!   them is lost. A conditional write is one `PUT` (S3 takes up to
//!   5 GiB), never a multipart upload.
//! - GCS has no conditional writes here: `object_store` asks GCS for the
//!   object's generation rather than its `ETag`. A partial write of a
//!   chunk there guards only against writers in this process, and the
//!   array engine says so in a warning (the `log` crate) once per store.

use super::{
    ByteRange, ListDir, ReadRequest, Store, StoreCapabilities, StoreError, StoreKey, StorePrefix,
    ValueSnapshot, ValueVersion,
};
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    WriteMultipart,
};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The number of requests a [`RemoteStore`] keeps in flight by default.
pub const DEFAULT_CONCURRENCY: usize = 64;

/// Values larger than this are written with a multipart upload.
const MULTIPART_THRESHOLD: usize = 8 << 20;

/// The size of each part of a multipart upload (S3 wants at least 5 MiB
/// for every part but the last).
const PART_SIZE: usize = 8 << 20;

/// Which service a [`RemoteStore`] talks to: it decides the store's name,
/// which range requests it can make and whether it can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// Amazon S3 or an S3-compatible server.
    S3,
    /// Google Cloud Storage.
    Gcs,
    /// Azure Blob Storage.
    Azure,
    /// A plain HTTP(S) server (read-only).
    Http,
    /// Any other `object_store` implementation (in-memory, tests).
    Other,
}

impl Backend {
    /// The backend's name in messages.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::S3 => "S3 store",
            Self::Gcs => "GCS store",
            Self::Azure => "Azure store",
            Self::Http => "HTTP store",
            Self::Other => "object store",
        }
    }
}

/// A [`Store`] over an `object_store` backend, under a prefix.
///
/// Made by [`open`](super::open) from a URL (`s3://bucket/prefix`,
/// `gs://…`, `az://…`, `https://…`), or by [`RemoteStore::new`] from any
/// [`ObjectStore`].
#[derive(Clone)]
pub struct RemoteStore {
    inner: Arc<dyn ObjectStore>,
    /// The prefix of every key, without a trailing `/` (empty for the bucket root).
    root: String,
    backend: Backend,
    /// The backend's name and location, for messages.
    name: &'static str,
    concurrency: usize,
}

impl std::fmt::Debug for RemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteStore")
            .field("name", &self.name)
            .field("concurrency", &self.concurrency)
            .finish_non_exhaustive()
    }
}

/// `text` as a `&'static str`, leaked once per distinct text: store names
/// carry their location (`S3 store `s3://bucket/data.zarr``) so that every
/// error names it, and [`Store::name`] is `&'static str`.
fn intern(text: String) -> &'static str {
    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(name) = names.iter().find(|n| **n == text) {
        return name;
    }
    let name: &'static str = Box::leak(text.into_boxed_str());
    names.push(name);
    name
}

/// The runtime that every remote store runs its requests on, made on first use.
fn runtime() -> Result<&'static tokio::runtime::Runtime, io::Error> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            // Two threads drive the sockets; they do no CPU work of their
            // own (decoding runs on rayon), so more would only contend.
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("zarrkit-io")
                .enable_all()
                .build()
                .map_err(|err| err.to_string())
        })
        .as_ref()
        .map_err(|err| io::Error::other(format!("cannot start the I/O runtime: {err}")))
}

/// Runs `future` on the shared runtime and waits for it. It is spawned
/// rather than run with `Runtime::block_on`, so that a caller inside some
/// other tokio runtime does not panic.
fn block_on<T: Send + 'static>(
    future: impl Future<Output = T> + Send + 'static,
) -> Result<T, io::Error> {
    let handle = runtime()?.spawn(future);
    match futures::executor::block_on(handle) {
        Ok(value) => Ok(value),
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(err) => Err(io::Error::other(err)),
    }
}

/// What went wrong in one request, before it is given the store's name.
enum Failure {
    /// The key (or the bucket) does not exist.
    NotFound(object_store::Error),
    /// Anything else the backend reported.
    Backend(object_store::Error),
    /// A range outside the value.
    InvalidRange { range: ByteRange, len: u64 },
}

impl From<object_store::Error> for Failure {
    fn from(err: object_store::Error) -> Self {
        match err {
            object_store::Error::NotFound { .. } => Self::NotFound(err),
            err => Self::Backend(err),
        }
    }
}

/// An `object_store` error as the `source` of a [`StoreError`]: its message
/// only, since it already spells out its own causes, and a source chain
/// that repeated them would print each one several times.
fn cause(err: &object_store::Error) -> io::Error {
    io::Error::other(err.to_string())
}

/// Whether an error says that the bucket or container is missing (as
/// opposed to the key): S3's `NoSuchBucket`, Azure's `ContainerNotFound`,
/// GCS's "bucket does not exist".
fn is_missing_bucket(err: &object_store::Error) -> bool {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        text.push_str(&s.to_string());
        source = s.source();
    }
    text.contains("NoSuchBucket")
        || text.contains("ContainerNotFound")
        || text.contains("bucket does not exist")
}

impl RemoteStore {
    /// A store over `inner`, with every key under `prefix` (`""` for the
    /// root; a trailing `/` is optional).
    ///
    /// # Errors
    /// [`StoreError::InvalidKey`] if `prefix` is not a valid object path.
    pub fn new(
        inner: Arc<dyn ObjectStore>,
        prefix: &str,
        backend: Backend,
    ) -> Result<Self, StoreError> {
        let root = Path::parse(prefix)
            .map_err(|_| StoreError::InvalidKey {
                key: prefix.escape_debug().to_string(),
                reason: "not a valid object path",
            })?
            .to_string();
        let location = if root.is_empty() {
            inner.to_string()
        } else {
            format!("{inner}/{root}")
        };
        Ok(Self {
            inner,
            root,
            backend,
            name: intern(format!("{} `{location}`", backend.name())),
            concurrency: DEFAULT_CONCURRENCY,
        })
    }

    /// Keeps at most `n` requests in flight (at least 1).
    #[must_use]
    pub fn with_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// Names the store `name` in messages (for example with the URL it was
    /// opened from) instead of the `object_store` client's description.
    #[must_use]
    pub fn with_location(mut self, location: &str) -> Self {
        self.name = intern(format!("{} `{location}`", self.backend.name()));
        self
    }

    /// The backend this store talks to.
    #[must_use]
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The object path of `key`.
    fn path(&self, key: &str) -> Result<Path, StoreError> {
        let full = if self.root.is_empty() {
            key.to_string()
        } else {
            format!("{}/{key}", self.root)
        };
        Path::parse(&full).map_err(|_| StoreError::InvalidKey {
            key: key.escape_debug().to_string(),
            reason: "not a valid object path",
        })
    }

    /// The object path of `prefix` (`None` for the bucket root).
    fn prefix_path(&self, prefix: &StorePrefix) -> Result<Option<Path>, StoreError> {
        let p = prefix.as_str().trim_end_matches('/');
        if p.is_empty() && self.root.is_empty() {
            return Ok(None);
        }
        self.path(p).map(Some)
    }

    /// The key of an object path under the root, or `None` for one outside it.
    fn key_of(&self, path: &Path) -> Option<StoreKey> {
        let raw = path.as_ref();
        let rel = if self.root.is_empty() {
            raw
        } else {
            raw.strip_prefix(self.root.as_str())?.strip_prefix('/')?
        };
        StoreKey::new(rel).ok()
    }

    fn error(&self, key: &str, failure: Failure, write: bool) -> StoreError {
        let store = self.name;
        match failure {
            Failure::InvalidRange { range, len } => StoreError::InvalidRange {
                store,
                // Callers pass a key here; a prefix never has a range.
                key: StoreKey::new(key).unwrap_or_else(|_| StoreKey::new("?").expect("valid")),
                range,
                len,
            },
            Failure::NotFound(err) | Failure::Backend(err) => self.backend_error(key, err, write),
        }
    }

    fn backend_error(&self, key: &str, err: object_store::Error, write: bool) -> StoreError {
        let store = self.name;
        match err {
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. } => StoreError::AccessDenied {
                store,
                key: key.to_string(),
                source: cause(&err),
            },
            err if is_missing_bucket(&err) => StoreError::NoSuchBucket {
                store,
                source: cause(&err),
            },
            object_store::Error::NotSupported { .. }
            | object_store::Error::NotImplemented { .. } => StoreError::Unsupported {
                store,
                operation: if write { "writes" } else { "this read" },
            },
            err => self.io_error(key, cause(&err), write),
        }
    }

    fn io_error(&self, key: &str, source: io::Error, write: bool) -> StoreError {
        let store = self.name;
        match StoreKey::new(key) {
            Ok(key) if write => StoreError::Write { store, key, source },
            Ok(key) => StoreError::Read { store, key, source },
            Err(_) => StoreError::List {
                store,
                prefix: key.to_string(),
                source,
            },
        }
    }

    fn read_only(&self) -> Result<(), StoreError> {
        if self.backend == Backend::Http {
            return Err(StoreError::Unsupported {
                store: self.name,
                operation: "writes",
            });
        }
        Ok(())
    }

    /// Runs `future` on the runtime, mapping a runtime failure for `key`.
    fn run<T: Send + 'static>(
        &self,
        key: &str,
        write: bool,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, StoreError> {
        block_on(future).map_err(|err| self.io_error(key, err, write))
    }
}

/// Reads one range of `path` (the whole value for `None`): `Ok(None)` when missing.
async fn read_one(
    inner: Arc<dyn ObjectStore>,
    path: Path,
    range: Option<ByteRange>,
    suffix: bool,
    if_match: Option<String>,
) -> Result<Option<(Vec<u8>, Option<String>)>, Failure> {
    let get_range = match range {
        None => None,
        Some(ByteRange::FromStart {
            offset: 0,
            length: None,
        }) => None,
        Some(ByteRange::FromStart {
            offset,
            length: None,
        }) => Some(GetRange::Offset(offset)),
        Some(ByteRange::FromStart {
            offset,
            length: Some(length),
        }) if length > 0 => Some(GetRange::Bounded(offset..offset.saturating_add(length))),
        Some(ByteRange::Suffix(n)) if n > 0 && suffix => Some(GetRange::Suffix(n)),
        // An empty range, or a suffix where the backend has none: the size
        // decides (a HEAD, then a bounded read).
        Some(range) => return read_by_size(inner, path, range, if_match).await,
    };
    let options = GetOptions {
        range: get_range.clone(),
        if_match: if_match.clone(),
        ..GetOptions::default()
    };
    match inner.get_opts(&path, options).await {
        Ok(result) => {
            let len = result.meta.size;
            let tag = result.meta.e_tag.clone();
            check_tag(&path, if_match.as_deref(), tag.as_deref())?;
            let bytes = result.bytes().await?;
            if let Some(range) = range {
                check_length(range, len, bytes.len())?;
            }
            Ok(Some((Vec::from(bytes), tag)))
        }
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        // A range past the end (HTTP 416, or the client's own check): the
        // size says whether the range is invalid or simply empty.
        Err(err @ object_store::Error::Generic { .. }) if get_range.is_some() => {
            match read_by_size(inner, path, range.unwrap_or(ByteRange::Suffix(0)), if_match).await {
                Err(Failure::Backend(_)) => Err(Failure::Backend(err)),
                other => other,
            }
        }
        Err(err) => Err(err.into()),
    }
}

/// Checks that a read asked `If-Match: expected` got that version: some
/// servers (s3s-fs) ignore the condition and answer the current value,
/// whose `ETag` then tells.
fn check_tag(path: &Path, expected: Option<&str>, got: Option<&str>) -> Result<(), Failure> {
    match (expected, got) {
        (Some(expected), Some(got)) if expected != got => {
            Err(Failure::Backend(object_store::Error::Precondition {
                path: path.to_string(),
                source: "the value changed while it was read".into(),
            }))
        }
        _ => Ok(()),
    }
}

/// Checks that a read of `range` from a value of `len` bytes returned what
/// [`ByteRange::bounds`] says (servers return the rest of the value for a
/// range that runs past its end).
fn check_length(range: ByteRange, len: u64, got: usize) -> Result<(), Failure> {
    match range.bounds(len) {
        Some((start, end)) if end - start == got as u64 => Ok(()),
        _ => Err(Failure::InvalidRange { range, len }),
    }
}

/// Reads `range` of `path` after asking for its size: for empty ranges,
/// ranges a server refused, and suffixes on backends without them.
async fn read_by_size(
    inner: Arc<dyn ObjectStore>,
    path: Path,
    range: ByteRange,
    if_match: Option<String>,
) -> Result<Option<(Vec<u8>, Option<String>)>, Failure> {
    let meta = match inner.head(&path).await {
        Ok(meta) => meta,
        Err(object_store::Error::NotFound { .. }) => return Ok(None),
        Err(err) => return Err(err.into()),
    };
    if let (Some(expected), Some(tag)) = (&if_match, &meta.e_tag)
        && expected != tag
    {
        return Err(Failure::Backend(object_store::Error::Precondition {
            path: path.to_string(),
            source: "the value changed while it was read".into(),
        }));
    }
    let (start, end) = range.bounds(meta.size).ok_or(Failure::InvalidRange {
        range,
        len: meta.size,
    })?;
    if start == end {
        return Ok(Some((Vec::new(), meta.e_tag)));
    }
    let options = GetOptions {
        range: Some(GetRange::Bounded(start..end)),
        if_match: if_match.or(meta.e_tag.clone()),
        ..GetOptions::default()
    };
    let expected = options.if_match.clone();
    match inner.get_opts(&path, options).await {
        Ok(result) => {
            let tag = result.meta.e_tag.clone();
            check_tag(&path, expected.as_deref(), tag.as_deref())?;
            let bytes = result.bytes().await?;
            check_length(range, meta.size, bytes.len())?;
            Ok(Some((Vec::from(bytes), tag)))
        }
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// Reads bounded, non-empty `ranges` of one object with `get_ranges`,
/// which merges those that lie close together into one request.
async fn read_ranges(
    inner: Arc<dyn ObjectStore>,
    path: Path,
    ranges: Vec<ByteRange>,
) -> Result<Option<Vec<Vec<u8>>>, Failure> {
    let bounded: Vec<Range<u64>> = ranges
        .iter()
        .map(|r| match *r {
            ByteRange::FromStart {
                offset,
                length: Some(length),
            } => offset..offset.saturating_add(length),
            _ => 0..0,
        })
        .collect();
    match inner.get_ranges(&path, &bounded).await {
        Ok(values)
            if values
                .iter()
                .zip(&bounded)
                .all(|(v, r)| v.len() as u64 == r.end - r.start) =>
        {
            Ok(Some(values.into_iter().map(Vec::from).collect()))
        }
        Ok(_) | Err(object_store::Error::Generic { .. }) => {
            // A range ran past the end: find which, from the size.
            let meta = match inner.head(&path).await {
                Ok(meta) => meta,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(err) => return Err(err.into()),
            };
            if let Some(range) = ranges.iter().find(|r| r.bounds(meta.size).is_none()) {
                return Err(Failure::InvalidRange {
                    range: *range,
                    len: meta.size,
                });
            }
            // Every range is valid: the failure was the server's; read them one by one.
            let mut out = Vec::with_capacity(ranges.len());
            for range in ranges {
                match read_one(Arc::clone(&inner), path.clone(), Some(range), true, None).await? {
                    Some((bytes, _)) => out.push(bytes),
                    None => return Ok(None),
                }
            }
            Ok(Some(out))
        }
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// The answers to one batch, by request index.
type Answers = Vec<(Vec<usize>, Result<Option<Vec<Vec<u8>>>, Failure>)>;

impl RemoteStore {
    /// Whether `err`, from a read, means a missing key: over HTTP a static
    /// file server answers 403 Forbidden for a directory (nginx does, for
    /// `meta` holding a v3 draft's documents, where a v1 reader looks for
    /// a file), as the filesystem store reads a directory as no value. A
    /// 401 (credentials) stays [`StoreError::AccessDenied`].
    fn forbidden_is_missing(&self, err: &object_store::Error) -> bool {
        self.backend == Backend::Http && matches!(err, object_store::Error::PermissionDenied { .. })
    }

    /// Whether the backend answers suffix ranges itself.
    fn has_suffix_ranges(&self) -> bool {
        self.backend != Backend::Azure
    }

    /// Reads `requests` concurrently, at most [`Self::concurrency`] at once.
    fn read_batch(&self, requests: &[ReadRequest]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        // Bounded ranges of one key go in one `get_ranges` call; every
        // other request is a call of its own.
        let mut groups: HashMap<&StoreKey, (Vec<usize>, Vec<ByteRange>)> = HashMap::new();
        let mut tasks = Vec::new();
        let suffix = self.has_suffix_ranges();
        for (i, (key, range)) in requests.iter().enumerate() {
            match range {
                Some(
                    r @ ByteRange::FromStart {
                        length: Some(length),
                        ..
                    },
                ) if *length > 0 => {
                    let group = groups.entry(key).or_default();
                    group.0.push(i);
                    group.1.push(*r);
                }
                _ => {
                    let inner = Arc::clone(&self.inner);
                    let path = self.path(key.as_str())?;
                    let range = *range;
                    tasks.push(futures::future::Either::Left(async move {
                        let answer = read_one(inner, path, range, suffix, None)
                            .await
                            .map(|v| v.map(|(bytes, _)| vec![bytes]));
                        (vec![i], answer)
                    }));
                }
            }
        }
        for (key, (indices, ranges)) in groups {
            let inner = Arc::clone(&self.inner);
            let path = self.path(key.as_str())?;
            tasks.push(futures::future::Either::Right(async move {
                (indices, read_ranges(inner, path, ranges).await)
            }));
        }
        let concurrency = self.concurrency;
        let first_key = requests.first().map_or("", |(k, _)| k.as_str());
        let answers: Answers = self.run(first_key, false, async move {
            futures::stream::iter(tasks)
                .buffer_unordered(concurrency)
                .collect()
                .await
        })?;
        let mut out: Vec<Option<Vec<u8>>> = vec![None; requests.len()];
        for (indices, answer) in answers {
            match answer {
                Ok(Some(values)) => {
                    for (i, value) in indices.into_iter().zip(values) {
                        out[i] = Some(value);
                    }
                }
                Ok(None) => {}
                Err(Failure::NotFound(err)) if !is_missing_bucket(&err) => {}
                Err(Failure::Backend(err)) if self.forbidden_is_missing(&err) => {}
                Err(failure) => {
                    return Err(self.error(requests[indices[0]].0.as_str(), failure, false));
                }
            }
        }
        Ok(out)
    }

    /// Stores `value` at `path` with `mode`: one `PUT`, or a multipart
    /// upload for a large value without a condition (the object appears
    /// whole when the upload completes, or not at all).
    fn put(&self, key: &StoreKey, value: &[u8], mode: PutMode) -> Result<bool, StoreError> {
        self.read_only()?;
        let path = self.path(key.as_str())?;
        let inner = Arc::clone(&self.inner);
        let multipart = value.len() > MULTIPART_THRESHOLD && matches!(mode, PutMode::Overwrite);
        let payload = PutPayload::from(value.to_vec());
        let result = self.run(key.as_str(), true, async move {
            if multipart {
                let upload = inner.put_multipart(&path).await?;
                let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
                for part in payload.iter() {
                    writer.put(part.clone());
                }
                writer.finish().await.map(|_| ())
            } else {
                let options = PutOptions {
                    mode,
                    ..PutOptions::default()
                };
                inner.put_opts(&path, payload, options).await.map(|_| ())
            }
        })?;
        match result {
            Ok(()) => Ok(true),
            Err(
                object_store::Error::Precondition { .. }
                | object_store::Error::AlreadyExists { .. },
            ) => Ok(false),
            Err(err) => Err(self.backend_error(key.as_str(), err, true)),
        }
    }

    fn delete_paths(&self, what: &str, paths: Vec<Path>) -> Result<(), StoreError> {
        self.read_only()?;
        let inner = Arc::clone(&self.inner);
        let results: Vec<Result<Path, object_store::Error>> = self.run(what, true, async move {
            let locations = futures::stream::iter(paths.into_iter().map(Ok)).boxed();
            inner.delete_stream(locations).collect().await
        })?;
        for result in results {
            match result {
                Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                Err(err) => {
                    return Err(match self.backend_error(what, err, true) {
                        StoreError::Write { store, source, .. }
                        | StoreError::Read { store, source, .. }
                        | StoreError::List { store, source, .. } => StoreError::Erase {
                            store,
                            key: what.to_string(),
                            source,
                        },
                        other => other,
                    });
                }
            }
        }
        Ok(())
    }

    /// The object path of `prefix`, or [`StoreError::Unsupported`] on a
    /// backend that cannot list (HTTP).
    fn listable_prefix(&self, prefix: &StorePrefix) -> Result<Option<Path>, StoreError> {
        if self.backend == Backend::Http {
            return Err(StoreError::Unsupported {
                store: self.name,
                operation: "listing",
            });
        }
        self.prefix_path(prefix)
    }

    fn list_paths(&self, prefix: &StorePrefix) -> Result<Vec<Path>, StoreError> {
        Ok(self
            .list_sized_paths(prefix)?
            .into_iter()
            .map(|(path, _)| path)
            .collect())
    }

    /// The objects under `prefix` with their sizes, as one listing gives them.
    fn list_sized_paths(&self, prefix: &StorePrefix) -> Result<Vec<(Path, u64)>, StoreError> {
        let path = self.listable_prefix(prefix)?;
        let inner = Arc::clone(&self.inner);
        let listed = self.run(prefix.as_str(), false, async move {
            inner
                .list(path.as_ref())
                .map_ok(|meta| (meta.location, meta.size))
                .try_collect::<Vec<(Path, u64)>>()
                .await
        })?;
        listed.map_err(|err| self.list_error(prefix, err))
    }

    fn list_error(&self, prefix: &StorePrefix, err: object_store::Error) -> StoreError {
        match err {
            // Listing never misses a key: a 404 means the bucket is missing.
            object_store::Error::NotFound { .. } => StoreError::NoSuchBucket {
                store: self.name,
                source: cause(&err),
            },
            err => match self.backend_error(prefix.as_str(), err, false) {
                StoreError::Read { store, source, .. } => StoreError::List {
                    store,
                    prefix: prefix.as_str().to_string(),
                    source,
                },
                other => other,
            },
        }
    }
}

/// A snapshot of one object: the first read notes its `ETag`, and every
/// later read asks for that version (`If-Match`), so that a shard's index
/// and inner chunks never come from two versions of the shard.
struct TaggedSnapshot<'a> {
    store: &'a RemoteStore,
    key: StoreKey,
    /// `None` before the first read; then the version it saw.
    seen: Mutex<Option<ValueVersion>>,
}

impl ValueSnapshot for TaggedSnapshot<'_> {
    fn read(&self, ranges: &[Option<ByteRange>]) -> Result<Option<Vec<Vec<u8>>>, StoreError> {
        let store = self.store;
        let path = store.path(self.key.as_str())?;
        let pinned = self
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if pinned.as_ref().is_some_and(ValueVersion::is_missing) {
            return Ok(None);
        }
        let if_match = pinned.as_ref().and_then(|v| v.as_tag().map(String::from));
        let suffix = store.has_suffix_ranges();
        let tasks: Vec<_> = ranges
            .iter()
            .map(|range| {
                read_one(
                    Arc::clone(&store.inner),
                    path.clone(),
                    *range,
                    suffix,
                    if_match.clone(),
                )
            })
            .collect();
        let concurrency = store.concurrency;
        let answers: Vec<_> = store.run(self.key.as_str(), false, async move {
            futures::stream::iter(tasks)
                .buffered(concurrency)
                .collect::<Vec<_>>()
                .await
        })?;
        let changed = || StoreError::Changed {
            store: store.name,
            key: self.key.clone(),
        };
        let mut values = Vec::with_capacity(ranges.len());
        let mut tags = Vec::new();
        for answer in answers {
            match answer {
                Ok(Some((bytes, tag))) => {
                    values.push(bytes);
                    tags.push(tag);
                }
                Ok(None) => {
                    let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
                    if seen.is_none() {
                        *seen = Some(ValueVersion::missing());
                        return Ok(None);
                    }
                    // Erased since the first read.
                    return Err(changed());
                }
                // `If-Match` failed: replaced since the first read.
                Err(Failure::Backend(object_store::Error::Precondition { .. })) => {
                    return Err(changed());
                }
                Err(failure) => return Err(store.error(self.key.as_str(), failure, false)),
            }
        }
        if pinned.is_none() {
            let first = tags.first().cloned().flatten();
            if tags.iter().any(|t| *t != first) {
                return Err(changed());
            }
            if let Some(tag) = first {
                *self.seen.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some(ValueVersion::tag(tag));
            }
        }
        Ok(Some(values))
    }

    fn version(&self) -> Option<ValueVersion> {
        // The `ETag` guards this snapshot's reads (a replaced version
        // cannot be read: reads then fail with `Changed`), and a
        // conditional write compares against it. Before the first read,
        // or where the server gave no `ETag`, nothing is pinned.
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Store for RemoteStore {
    fn name(&self) -> &'static str {
        self.name
    }

    fn capabilities(&self) -> StoreCapabilities {
        let write = self.backend != Backend::Http;
        StoreCapabilities {
            read: true,
            write,
            partial_write: false,
            list: write,
            // `If-Match` on the `ETag` (see `TaggedSnapshot::version`);
            // `object_store` wants GCS's generation instead, which the
            // snapshot does not note.
            conditional_write: write && self.backend != Backend::Gcs,
            // `PutMode::Create`: `If-None-Match: *` on S3 and Azure,
            // `ifGenerationMatch=0` on GCS; any other `object_store` says
            // `NotImplemented` if it cannot, which `set_if_absent` reports
            // as unsupported.
            conditional_create: write,
        }
    }

    fn concurrency(&self) -> usize {
        self.concurrency
    }

    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        let mut values = self.read_batch(&[(key.clone(), range)])?;
        Ok(values.pop().flatten())
    }

    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.read_batch(requests)
    }

    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        self.put(key, value, PutMode::Overwrite).map(|_| ())
    }

    fn set_if_absent(&self, key: &StoreKey, value: &[u8]) -> Result<bool, StoreError> {
        // `put` maps the answer of a failed condition (`AlreadyExists`, or
        // `Precondition` where a server answers 412) to `false`, and
        // `NotImplemented` (S3 with `conditional_put` set to `disabled`, a
        // backend without conditional puts) to `Unsupported`.
        self.put(key, value, PutMode::Create)
            .map_err(|err| match err {
                StoreError::Unsupported { store, .. } => StoreError::Unsupported {
                    store,
                    operation: "conditional creates",
                },
                err => err,
            })
    }

    fn set_if_unchanged(
        &self,
        key: &StoreKey,
        value: Option<&[u8]>,
        expected: &ValueVersion,
    ) -> Result<bool, StoreError> {
        if !self.capabilities().conditional_write {
            return Err(StoreError::Unsupported {
                store: self.name,
                operation: "conditional writes",
            });
        }
        let unsupported = |err| match err {
            StoreError::Unsupported { store, .. } => StoreError::Unsupported {
                store,
                operation: "conditional writes",
            },
            err => err,
        };
        let tag = match (expected.is_missing(), expected.as_tag()) {
            (true, _) => None,
            (false, Some(tag)) => Some(tag.to_string()),
            (false, None) => {
                return Err(StoreError::ForeignVersion {
                    store: self.name,
                    key: key.clone(),
                });
            }
        };
        match (value, tag) {
            (Some(value), None) => self.put(key, value, PutMode::Create).map_err(unsupported),
            (Some(value), Some(tag)) => {
                let mode = PutMode::Update(object_store::UpdateVersion {
                    e_tag: Some(tag),
                    version: None,
                });
                self.put(key, value, mode).map_err(unsupported)
            }
            (None, None) => Ok(self.size(key)?.is_none()),
            (None, Some(tag)) => {
                // Object storage has no conditional delete: compare the
                // `ETag`, then delete (a write between the two is lost).
                let path = self.path(key.as_str())?;
                let inner = Arc::clone(&self.inner);
                match self.run(key.as_str(), false, async move { inner.head(&path).await })? {
                    Ok(meta) if meta.e_tag.as_deref() == Some(tag.as_str()) => {
                        self.erase(key)?;
                        Ok(true)
                    }
                    Ok(_) | Err(object_store::Error::NotFound { .. }) => Ok(false),
                    Err(err) => Err(self.error(key.as_str(), Failure::from(err), true)),
                }
            }
        }
    }

    fn set_partial_values(&self, _items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        Err(StoreError::Unsupported {
            store: self.name,
            operation: "partial writes",
        })
    }

    fn snapshot<'a>(&'a self, key: &StoreKey) -> Result<Box<dyn ValueSnapshot + 'a>, StoreError> {
        Ok(Box::new(TaggedSnapshot {
            store: self,
            key: key.clone(),
            seen: Mutex::new(None),
        }))
    }

    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        let path = self.path(key.as_str())?;
        self.delete_paths(key.as_str(), vec![path])
    }

    fn erase_values(&self, keys: &[StoreKey]) -> Result<(), StoreError> {
        let Some(first) = keys.first() else {
            return Ok(());
        };
        let paths = keys
            .iter()
            .map(|k| self.path(k.as_str()))
            .collect::<Result<Vec<_>, _>>()?;
        self.delete_paths(first.as_str(), paths)
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        self.read_only()?;
        let paths = self.list_paths(prefix)?;
        self.delete_paths(prefix.as_str(), paths)
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        let mut keys: Vec<StoreKey> = self
            .list_paths(prefix)?
            .iter()
            .filter_map(|p| self.key_of(p))
            .filter(|k| k.has_prefix(prefix))
            .collect();
        keys.sort_unstable();
        Ok(keys)
    }

    fn list_prefix_sizes(&self, prefix: &StorePrefix) -> Result<Vec<(StoreKey, u64)>, StoreError> {
        // The listing carries the sizes: no request per key.
        let mut sized: Vec<(StoreKey, u64)> = self
            .list_sized_paths(prefix)?
            .iter()
            .filter_map(|(path, size)| Some((self.key_of(path)?, *size)))
            .filter(|(key, _)| key.has_prefix(prefix))
            .collect();
        sized.sort_unstable();
        Ok(sized)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        let path = self.listable_prefix(prefix)?;
        let inner = Arc::clone(&self.inner);
        let listed = self.run(prefix.as_str(), false, async move {
            inner.list_with_delimiter(path.as_ref()).await
        })?;
        let listed = listed.map_err(|err| self.list_error(prefix, err))?;
        let mut keys: Vec<StoreKey> = listed
            .objects
            .iter()
            .filter_map(|meta| self.key_of(&meta.location))
            .collect();
        let mut prefixes: Vec<StorePrefix> = listed
            .common_prefixes
            .iter()
            .filter_map(|p| self.key_of(p))
            .filter_map(|k| StorePrefix::new(format!("{}/", k.as_str())).ok())
            .collect();
        keys.sort_unstable();
        prefixes.sort_unstable();
        Ok(ListDir { keys, prefixes })
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        let path = self.path(key.as_str())?;
        let inner = Arc::clone(&self.inner);
        match self.run(key.as_str(), false, async move { inner.head(&path).await })? {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(err) if self.forbidden_is_missing(&err) => Ok(None),
            Err(err) => Err(self.error(key.as_str(), Failure::from(err), false)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> RemoteStore {
        let inner: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        RemoteStore::new(inner, "some/prefix", Backend::Other).unwrap()
    }

    #[test]
    fn passes_the_conformance_suite_over_object_stores_memory_backend() {
        crate::store::testing::run_all(&memory());
    }

    #[test]
    fn racing_creates_leave_one_winner_over_object_stores_memory_backend() {
        let store = memory();
        for _ in 0..5 {
            crate::store::testing::check_racing_creates(&store, 8);
        }
    }

    #[test]
    fn keys_live_under_the_prefix() {
        let inner: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let store = RemoteStore::new(Arc::clone(&inner), "p/q/", Backend::Other).unwrap();
        store.set(&StoreKey::new("a/b").unwrap(), b"x").unwrap();
        let got = block_on(async move { inner.get(&Path::from("p/q/a/b")).await })
            .unwrap()
            .unwrap();
        assert_eq!(got.meta.size, 1);
    }

    #[test]
    fn large_values_round_trip_through_multipart_uploads() {
        let store = memory();
        let value: Vec<u8> = (0..MULTIPART_THRESHOLD + 3 * PART_SIZE / 2)
            .map(|i| (i % 251) as u8)
            .collect();
        let key = StoreKey::new("big").unwrap();
        store.set(&key, &value).unwrap();
        assert_eq!(store.get(&key, None).unwrap().unwrap(), value);
        store.erase(&key).unwrap();
    }
}
