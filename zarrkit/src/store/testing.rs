//! The conformance suite every store backend runs.
//!
//! [`run_all`] checks a store against the abstract store interface (v3 core
//! draft 2022, "Abstract store interface") and the promises of the [`Store`]
//! trait: missing keys read as `None`, ranges follow [`ByteRange::bounds`],
//! batches answer in order, listings are sorted, and so on. It is test
//! support: it reports a failure by panicking with a message that names the
//! store, the check and the values involved, which is what a `#[test]` wants.
//!
//! ```
//! zarrkit::store::testing::run_all(&zarrkit::store::MemoryStore::new());
//! ```
//!
//! It also holds wrappers for tests of code built on stores:
//! [`FaultStore`] injects failures, damaged values and delays,
//! [`LatencyStore`] adds a round trip's wait, and [`CountingStore`] counts
//! requests and bytes.

mod fault;

pub use fault::{Fault, FaultOp, FaultRule, FaultStore, Trigger};

use super::{
    ByteRange, ListDir, ReadRequest, Store, StoreCapabilities, StoreError, StoreKey, StorePrefix,
};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

/// The value of the environment variable `var` that locates a test server
/// (`ZARRKIT_S3_ENDPOINT`, `ZARRKIT_HTTP_URL`, … as `scripts/servers.sh`
/// exports them), or `None` after saying on stderr that the test skips.
///
/// # Panics
/// When `var` is unset and `ZARRKIT_REQUIRE_SERVERS=1`: the test command
/// started the servers, so a missing one is a failure, not a skip.
pub fn server_from_env(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(value) if !value.is_empty() => Some(value),
        _ => {
            assert!(
                std::env::var("ZARRKIT_REQUIRE_SERVERS").as_deref() != Ok("1"),
                "{var} is not set and ZARRKIT_REQUIRE_SERVERS=1: start the test servers (scripts/servers.sh)"
            );
            eprintln!("skipped: {var} is not set (scripts/servers.sh starts the test servers)");
            None
        }
    }
}

/// A store that waits a fixed time before each read and each whole-value
/// write ([`Store::set`]) of the store it wraps, as a remote store waits a
/// round trip, and counts how many reads (and writes) it has in flight at
/// once: for measuring how well a reader or writer hides latency, without a
/// server.
///
/// Its [`Store::get_partial_values`] runs the batch's reads on threads of
/// their own, at most `concurrency` at once (what it answers to
/// [`Store::concurrency`]), as a remote store keeps requests in flight.
///
/// ```
/// use zarrkit::store::{MemoryStore, ReadRequest, Store, StoreKey, testing::LatencyStore};
/// let inner = std::sync::Arc::new(MemoryStore::new());
/// let store = LatencyStore::new(inner, std::time::Duration::from_millis(1), 8);
/// let requests: Vec<ReadRequest> =
///     (0..16).map(|i| (StoreKey::new(format!("c/{i}")).unwrap(), None)).collect();
/// store.get_partial_values(&requests)?;
/// assert!(store.peak_in_flight() <= 8);
/// # Ok::<(), zarrkit::store::StoreError>(())
/// ```
#[derive(Debug)]
pub struct LatencyStore {
    inner: Arc<dyn Store>,
    delay: Duration,
    concurrency: usize,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    reads: AtomicUsize,
    /// How many reads of each key are in flight, and the most keys at once.
    keys: std::sync::Mutex<std::collections::HashMap<StoreKey, usize>>,
    peak_keys: AtomicUsize,
    writes_in_flight: AtomicUsize,
    peak_writes: AtomicUsize,
}

impl LatencyStore {
    /// Wraps `inner`, waiting `delay` before each read, with at most
    /// `concurrency` (at least 1) reads of a batch in flight.
    pub fn new(inner: Arc<dyn Store>, delay: Duration, concurrency: usize) -> Self {
        Self {
            inner,
            delay,
            concurrency: concurrency.max(1),
            in_flight: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            reads: AtomicUsize::new(0),
            keys: std::sync::Mutex::default(),
            peak_keys: AtomicUsize::new(0),
            writes_in_flight: AtomicUsize::new(0),
            peak_writes: AtomicUsize::new(0),
        }
    }

    /// The most whole-value writes that were in flight at once.
    pub fn peak_writes_in_flight(&self) -> usize {
        self.peak_writes.load(Ordering::SeqCst)
    }

    /// The most reads that were in flight at once.
    pub fn peak_in_flight(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    /// The most distinct keys that had reads in flight at once (many
    /// ranges of one shard count once).
    pub fn peak_keys_in_flight(&self) -> usize {
        self.peak_keys.load(Ordering::SeqCst)
    }

    /// The number of reads so far.
    pub fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }

    /// Forgets the counts so far.
    pub fn reset_counts(&self) {
        self.peak.store(0, Ordering::SeqCst);
        self.reads.store(0, Ordering::SeqCst);
        self.peak_keys.store(0, Ordering::SeqCst);
    }

    /// The wrapped store.
    pub fn inner(&self) -> &Arc<dyn Store> {
        &self.inner
    }

    fn delayed_get(
        &self,
        key: &StoreKey,
        range: Option<ByteRange>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        self.reads.fetch_add(1, Ordering::SeqCst);
        {
            let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
            *keys.entry(key.clone()).or_default() += 1;
            self.peak_keys.fetch_max(keys.len(), Ordering::SeqCst);
        }
        std::thread::sleep(self.delay);
        let result = self.inner.get(key, range);
        {
            let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(n) = keys.get_mut(key) {
                *n -= 1;
                if *n == 0 {
                    keys.remove(key);
                }
            }
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

impl Store for LatencyStore {
    fn name(&self) -> &'static str {
        "latency store"
    }

    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            conditional_write: false,
            ..self.inner.capabilities()
        }
    }

    fn concurrency(&self) -> usize {
        self.concurrency
    }

    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        self.delayed_get(key, range)
    }

    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let mut out = Vec::with_capacity(requests.len());
        for wave in requests.chunks(self.concurrency) {
            let answers: Vec<_> = std::thread::scope(|scope| {
                let handles: Vec<_> = wave
                    .iter()
                    .map(|(key, range)| scope.spawn(move || self.delayed_get(key, *range)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            for answer in answers {
                out.push(answer?);
            }
        }
        Ok(out)
    }

    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        let now = self.writes_in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak_writes.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(self.delay);
        let result = self.inner.set(key, value);
        self.writes_in_flight.fetch_sub(1, Ordering::SeqCst);
        result
    }

    fn set_if_absent(&self, key: &StoreKey, value: &[u8]) -> Result<bool, StoreError> {
        self.inner.set_if_absent(key, value)
    }

    fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        self.inner.set_partial_values(items)
    }

    fn settle(&self) {
        self.inner.settle();
    }

    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.inner.erase(key)
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        self.inner.erase_prefix(prefix)
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        self.inner.list_dir(prefix)
    }
}

/// Runs every check that `store`'s [`capabilities`](Store::capabilities) allow.
///
/// The store must start empty and is empty again when the suite passes. Each
/// group of checks works under its own top-level prefix (`round_trip/`,
/// `ranges/`, …) and erases its keys with [`Store::erase`] when done. Groups
/// that write are skipped when the store is not writeable, partial writes are
/// checked to fail with [`StoreError::Unsupported`] when `partial_write` is
/// off, conditional writes are checked when `conditional_write` is on,
/// conditional creates ([`Store::set_if_absent`], one writer at a time; see
/// [`check_racing_creates`] for writers at once) are checked when
/// `conditional_create` is on and checked to fail with
/// [`StoreError::Unsupported`] when it is off, and listing groups are
/// skipped when the store is not listable.
///
/// # Panics
/// On the first check that fails, with a message naming the store and the
/// check; also if the store is listable and not empty at the start.
pub fn run_all(store: &dyn Store) {
    run_suite(Suite {
        store,
        empty_prefixes_linger: false,
    });
}

/// As [`run_all`], for a store whose delimiter listings keep showing a
/// prefix for a while after its last key is erased (SeaweedFS keeps the
/// emptied "directory"): [`Store::list_dir`] may list such extra prefixes,
/// as long as nothing is under them.
///
/// # Panics
/// As [`run_all`].
pub fn run_all_allowing_empty_prefixes(store: &dyn Store) {
    run_suite(Suite {
        store,
        empty_prefixes_linger: true,
    });
}

/// Checks that [`Store::set_if_absent`] lets exactly one of `writers`
/// threads create one key when they all try at once, and that the key then
/// holds that writer's whole value. Erases the key (`race/zarr.json`) when
/// done. For stores with [`StoreCapabilities::conditional_create`] whose
/// backend claims atomic creates; a backend that checks and writes in two
/// steps may let several writers win, which this reports.
///
/// # Panics
/// When no writer or more than one wins, when the stored value is not the
/// winner's, or on a store error.
pub fn check_racing_creates(store: &dyn Store, writers: usize) {
    let k = key("race/zarr.json");
    // Values of different lengths, each large enough that a torn write
    // would show, and each telling its writer.
    let value = |writer: usize| {
        format!("writer {writer} ")
            .repeat(1000 + writer)
            .into_bytes()
    };
    let barrier = std::sync::Barrier::new(writers);
    let won: Vec<bool> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..writers)
            .map(|writer| {
                let (k, barrier) = (&k, &barrier);
                let bytes = value(writer);
                scope.spawn(move || {
                    barrier.wait();
                    store.set_if_absent(k, &bytes)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
                    .unwrap_or_else(|err| panic!("{}: a racing create failed: {err}", store.name()))
            })
            .collect()
    });
    let winners: Vec<usize> = (0..writers).filter(|&w| won[w]).collect();
    assert!(
        winners.len() == 1,
        "{}: {writers} writers created one key at once and {} of them won ({winners:?})",
        store.name(),
        winners.len()
    );
    let stored = store
        .get(&k, None)
        .unwrap_or_else(|err| panic!("{}: reading the created key failed: {err}", store.name()));
    assert!(
        stored.as_deref() == Some(&value(winners[0])[..]),
        "{}: the created key does not hold the winner's (writer {}) whole value",
        store.name(),
        winners[0]
    );
    store
        .erase(&k)
        .unwrap_or_else(|err| panic!("{}: erasing `{k}` failed: {err}", store.name()));
}

fn run_suite(suite: Suite<'_>) {
    let store = suite.store;
    let caps = store.capabilities();
    if caps.list {
        suite.check_eq(
            "the store is empty at the start",
            suite.list(),
            Vec::<StoreKey>::new(),
        );
    }
    if caps.read {
        suite.missing_keys_read_as_none();
    }
    if !(caps.read && caps.write) {
        // Every remaining group writes values and reads them back.
        return;
    }
    suite.values_round_trip();
    suite.values_in_parts();
    suite.byte_ranges();
    suite.batched_reads();
    if caps.partial_write {
        suite.partial_writes();
    } else {
        suite.partial_writes_are_unsupported();
    }
    if caps.conditional_write {
        suite.conditional_writes();
    }
    if caps.conditional_create {
        suite.conditional_creates();
    } else {
        suite.conditional_creates_are_unsupported();
    }
    suite.erases();
    suite.erase_prefix();
    suite.sizes();
    suite.keys_with_dots_and_unicode(caps.list);
    if caps.list {
        suite.listing();
        suite.check_eq(
            "the store is empty at the end",
            suite.list(),
            Vec::<StoreKey>::new(),
        );
    }
}

fn key(key: &str) -> StoreKey {
    StoreKey::new(key).unwrap_or_else(|err| panic!("suite bug: {err}"))
}

fn prefix(prefix: &str) -> StorePrefix {
    StorePrefix::new(prefix).unwrap_or_else(|err| panic!("suite bug: {err}"))
}

fn keys(keys: &[&str]) -> Vec<StoreKey> {
    keys.iter().map(|k| key(k)).collect()
}

fn from(offset: u64) -> ByteRange {
    ByteRange::FromStart {
        offset,
        length: None,
    }
}

struct Suite<'a> {
    store: &'a dyn Store,
    /// Whether `list_dir` may show prefixes left empty by erases.
    empty_prefixes_linger: bool,
}

impl Suite<'_> {
    #[track_caller]
    fn fail(&self, what: &str, err: &StoreError) -> ! {
        panic!("{}: {what} failed: {err} ({err:?})", self.store.name())
    }

    #[track_caller]
    fn check_eq<T: PartialEq + std::fmt::Debug>(&self, what: &str, got: T, expected: T) {
        assert!(
            got == expected,
            "{}: {what}:\n  expected {expected:?}\n       got {got:?}",
            self.store.name()
        );
    }

    #[track_caller]
    fn get(&self, k: &str, range: Option<ByteRange>) -> Option<Vec<u8>> {
        self.store
            .get(&key(k), range)
            .unwrap_or_else(|err| self.fail(&format!("get `{k}` ({range:?})"), &err))
    }

    #[track_caller]
    fn check_get(&self, k: &str, range: Option<ByteRange>, expected: Option<&[u8]>) {
        let got = self.get(k, range);
        self.check_eq(&format!("get `{k}` ({range:?})"), got.as_deref(), expected);
    }

    #[track_caller]
    fn set(&self, k: &str, value: &[u8]) {
        self.store
            .set(&key(k), value)
            .unwrap_or_else(|err| self.fail(&format!("set `{k}`"), &err));
    }

    #[track_caller]
    fn erase(&self, k: &str) {
        self.store
            .erase(&key(k))
            .unwrap_or_else(|err| self.fail(&format!("erase `{k}`"), &err));
    }

    #[track_caller]
    fn erase_all(&self, ks: &[&str]) {
        for k in ks {
            self.erase(k);
        }
    }

    #[track_caller]
    fn size(&self, k: &str) -> Option<u64> {
        self.store
            .size(&key(k))
            .unwrap_or_else(|err| self.fail(&format!("size of `{k}`"), &err))
    }

    #[track_caller]
    fn list(&self) -> Vec<StoreKey> {
        self.store
            .list()
            .unwrap_or_else(|err| self.fail("list", &err))
    }

    #[track_caller]
    fn list_prefix(&self, p: &str) -> Vec<StoreKey> {
        self.store
            .list_prefix(&prefix(p))
            .unwrap_or_else(|err| self.fail(&format!("list_prefix `{p}`"), &err))
    }

    #[track_caller]
    fn list_dir(&self, p: &str) -> ListDir {
        self.store
            .list_dir(&prefix(p))
            .unwrap_or_else(|err| self.fail(&format!("list_dir `{p}`"), &err))
    }

    #[track_caller]
    fn check_list_dir(&self, p: &str, expected_keys: &[&str], expected_prefixes: &[&str]) {
        let mut dir = self.list_dir(p);
        if self.empty_prefixes_linger {
            dir.prefixes.retain(|q| {
                expected_prefixes.contains(&q.as_str()) || !self.list_prefix(q.as_str()).is_empty()
            });
        }
        let expected = ListDir {
            keys: keys(expected_keys),
            prefixes: expected_prefixes.iter().map(|q| prefix(q)).collect(),
        };
        self.check_eq(&format!("list_dir `{p}`"), dir, expected);
    }

    fn missing_keys_read_as_none(&self) {
        self.check_get("missing/key", None, None);
        // A range on a missing key is still `None`, not an out-of-range error.
        self.check_get("missing/key", Some(ByteRange::new(5, 5)), None);
        self.check_get("missing/key", Some(ByteRange::Suffix(3)), None);
        self.check_eq("size of a missing key", self.size("missing/key"), None);
        let answers = self
            .store
            .get_partial_values(&[(key("missing/key"), None)])
            .unwrap_or_else(|err| self.fail("get_partial_values of a missing key", &err));
        self.check_eq("get_partial_values of a missing key", answers, vec![None]);
    }

    fn values_round_trip(&self) {
        self.set("round_trip/a", b"hello");
        self.check_get("round_trip/a", None, Some(b"hello"));

        // Overwriting replaces the whole value, longer or shorter.
        self.set("round_trip/a", b"hello, world");
        self.check_get("round_trip/a", None, Some(b"hello, world"));
        self.set("round_trip/a", b"hi");
        self.check_get("round_trip/a", None, Some(b"hi"));

        // An empty value exists and is distinct from a missing key.
        self.set("round_trip/empty", b"");
        self.check_get("round_trip/empty", None, Some(b""));

        let all_bytes: Vec<u8> = (0..=255).collect();
        self.set("round_trip/bytes", &all_bytes);
        self.check_get("round_trip/bytes", None, Some(&all_bytes));

        // Large enough to need more than one read or write call in most backends.
        let large: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        self.set("round_trip/deep/er/large", &large);
        self.check_get("round_trip/deep/er/large", None, Some(&large));

        self.erase_all(&[
            "round_trip/a",
            "round_trip/empty",
            "round_trip/bytes",
            "round_trip/deep/er/large",
        ]);
    }

    /// Values written in parts ([`Store::begin_set`]), where the store
    /// writes values so: the parts one after another, under the key only
    /// once committed (the old value until then), and nothing at all from
    /// one dropped uncommitted.
    fn values_in_parts(&self) {
        let begin = |k: &str| {
            self.store
                .begin_set(&key(k))
                .unwrap_or_else(|err| self.fail(&format!("begin_set `{k}`"), &err))
        };
        self.set("parts/v", b"old");
        let Some(mut pending) = begin("parts/v") else {
            // Whole values only: callers assemble them and call `set`.
            self.erase_all(&["parts/v"]);
            return;
        };
        let large: Vec<u8> = (0..300_000u32).map(|i| (i * 13 % 251) as u8).collect();
        let (head, tail) = large.split_at(100_000);
        for parts in [&[&b"new "[..], head][..], &[tail, b"", b" end"]] {
            pending
                .append(parts)
                .unwrap_or_else(|err| self.fail("append to `parts/v`", &err));
        }
        self.check_get("parts/v", None, Some(b"old"));
        pending
            .commit()
            .unwrap_or_else(|err| self.fail("commit `parts/v`", &err));
        let expected = [&b"new "[..], &large, b" end"].concat();
        self.check_get("parts/v", None, Some(&expected));
        let Some(mut dropped) = begin("parts/w") else {
            panic!(
                "{}: begin_set wrote one value in parts, then refused another",
                self.store.name()
            );
        };
        dropped
            .append(&[b"never stored"])
            .unwrap_or_else(|err| self.fail("append to `parts/w`", &err));
        drop(dropped);
        self.check_get("parts/w", None, None);
        self.erase_all(&["parts/v"]);
    }

    fn byte_ranges(&self) {
        let value: Vec<u8> = (0..100).collect();
        let k = "ranges/v";
        self.set(k, &value);
        for (range, expected) in [
            (ByteRange::new(10, 5), &value[10..15]),
            (ByteRange::new(0, 100), &value[..]),
            (ByteRange::new(0, 0), &[][..]),
            (ByteRange::new(100, 0), &[][..]),
            (ByteRange::new(99, 1), &value[99..]),
            (from(0), &value[..]),
            (from(90), &value[90..]),
            (from(100), &[][..]),
            (ByteRange::Suffix(10), &value[90..]),
            (ByteRange::Suffix(0), &[][..]),
            (ByteRange::Suffix(100), &value[..]),
            // A suffix longer than the value is the whole value, as in HTTP.
            (ByteRange::Suffix(1000), &value[..]),
            (ByteRange::Suffix(u64::MAX), &value[..]),
        ] {
            self.check_get(k, Some(range), Some(expected));
        }
        for range in [
            ByteRange::new(95, 10),
            ByteRange::new(100, 1),
            ByteRange::new(101, 0),
            ByteRange::new(1, u64::MAX),
            ByteRange::new(u64::MAX, 2),
            from(101),
            from(u64::MAX),
        ] {
            self.check_invalid_range(k, range, 100);
        }

        self.set("ranges/empty", b"");
        self.check_get("ranges/empty", Some(ByteRange::new(0, 0)), Some(b""));
        self.check_get("ranges/empty", Some(from(0)), Some(b""));
        self.check_get("ranges/empty", Some(ByteRange::Suffix(5)), Some(b""));
        self.check_invalid_range("ranges/empty", ByteRange::new(0, 1), 0);
        self.check_invalid_range("ranges/empty", from(1), 0);

        self.erase_all(&[k, "ranges/empty"]);
    }

    #[track_caller]
    fn check_invalid_range(&self, k: &str, range: ByteRange, value_len: u64) {
        match self.store.get(&key(k), Some(range)) {
            Err(StoreError::InvalidRange {
                key: err_key,
                range: err_range,
                len,
                ..
            }) => {
                self.check_eq(
                    &format!("InvalidRange from `{k}` ({range}): key, range and length"),
                    (err_key.as_str(), err_range, len),
                    (k, range, value_len),
                );
            }
            other => panic!(
                "{}: get `{k}` ({range}) of a {value_len}-byte value: expected InvalidRange, got {other:?}",
                self.store.name()
            ),
        }
    }

    fn batched_reads(&self) {
        self.set("batch/a", b"abcdef");
        self.set("batch/b", b"0123456789");
        let requests: Vec<ReadRequest> = vec![
            (key("batch/a"), None),
            (key("batch/missing"), None),
            (key("batch/b"), Some(ByteRange::new(2, 3))),
            (key("batch/a"), Some(ByteRange::Suffix(2))),
            (key("batch/b"), None),
            (key("batch/a"), Some(ByteRange::new(0, 1))),
            (key("batch/missing"), Some(ByteRange::new(0, 1))),
            (key("batch/b"), Some(from(9))),
            (key("batch/a"), Some(ByteRange::new(6, 0))),
        ];
        let answers = self
            .store
            .get_partial_values(&requests)
            .unwrap_or_else(|err| self.fail("get_partial_values", &err));
        let expected: Vec<Option<Vec<u8>>> = [
            Some(&b"abcdef"[..]),
            None,
            Some(b"234"),
            Some(b"ef"),
            Some(b"0123456789"),
            Some(b"a"),
            None,
            Some(b"9"),
            Some(b""),
        ]
        .into_iter()
        .map(|v| v.map(<[u8]>::to_vec))
        .collect();
        self.check_eq(
            "get_partial_values answers in request order",
            answers,
            expected,
        );

        let empty = self
            .store
            .get_partial_values(&[])
            .unwrap_or_else(|err| self.fail("get_partial_values of an empty batch", &err));
        self.check_eq("get_partial_values of an empty batch", empty, vec![]);

        let result = self.store.get_partial_values(&[
            (key("batch/a"), None),
            (key("batch/b"), Some(ByteRange::new(5, 6))),
        ]);
        assert!(
            matches!(&result, Err(StoreError::InvalidRange { key, .. }) if key.as_str() == "batch/b"),
            "{}: get_partial_values with an out-of-bounds range: expected InvalidRange for `batch/b`, got {result:?}",
            self.store.name()
        );

        self.erase_all(&["batch/a", "batch/b"]);
    }

    #[track_caller]
    fn set_partial(&self, items: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        let items: Vec<(StoreKey, u64, Vec<u8>)> = items
            .iter()
            .map(|&(k, offset, bytes)| (key(k), offset, bytes.to_vec()))
            .collect();
        self.store.set_partial_values(&items)
    }

    fn partial_writes(&self) {
        let k = "partial/a";
        self.set(k, b"hello world");
        let ok = |items: &[(&str, u64, &[u8])]| {
            self.set_partial(items)
                .unwrap_or_else(|err| self.fail(&format!("set_partial_values {items:?}"), &err));
        };

        ok(&[(k, 0, b"J")]);
        self.check_get(k, None, Some(b"Jello world"));
        ok(&[(k, 6, b"W"), (k, 1, b"E")]);
        self.check_get(k, None, Some(b"JEllo World"));
        // Bytes running past the end extend the value.
        ok(&[(k, 9, b"LDS!")]);
        self.check_get(k, None, Some(b"JEllo WorLDS!"));
        // Writing exactly at the end appends; an empty write changes nothing.
        ok(&[(k, 13, b"?"), (k, 3, b"")]);
        self.check_get(k, None, Some(b"JEllo WorLDS!?"));

        // One batch may touch several keys; an empty value can be extended.
        self.set("partial/b", b"");
        ok(&[("partial/b", 0, b"new"), (k, 0, b"j")]);
        self.check_get("partial/b", None, Some(b"new"));
        self.check_get(k, None, Some(b"jEllo WorLDS!?"));

        let err = self.set_partial(&[(k, 15, b"gap")]);
        match err {
            Err(StoreError::InvalidPartialWrite {
                key: err_key,
                offset,
                len,
                ..
            }) => self.check_eq(
                "InvalidPartialWrite past the end: key, offset and length",
                (err_key.as_str(), offset, len),
                (k, 15, 14),
            ),
            other => panic!(
                "{}: set_partial_values at offset 15 of a 14-byte value: expected InvalidPartialWrite, got {other:?}",
                self.store.name()
            ),
        }
        self.check_get(k, None, Some(b"jEllo WorLDS!?"));

        let err = self.set_partial(&[("partial/missing", 0, b"x")]);
        assert!(
            matches!(&err, Err(StoreError::InvalidPartialWrite { key, .. }) if key.as_str() == "partial/missing"),
            "{}: set_partial_values on a missing key: expected InvalidPartialWrite, got {err:?}",
            self.store.name()
        );
        self.check_get("partial/missing", None, None);

        self.erase_all(&[k, "partial/b"]);
    }

    fn partial_writes_are_unsupported(&self) {
        self.set("partial/a", b"hello");
        let result = self.set_partial(&[("partial/a", 0, b"J")]);
        assert!(
            matches!(result, Err(StoreError::Unsupported { .. })),
            "{}: capabilities say no partial writes, but set_partial_values gave {result:?}",
            self.store.name()
        );
        self.erase("partial/a");
    }

    fn conditional_writes(&self) {
        let k = key("cas/c/0");
        let snapshot = |what: &str| {
            self.store
                .snapshot(&k)
                .unwrap_or_else(|err| self.fail(what, &err))
        };
        let version = |what: &str, s: &dyn super::ValueSnapshot| {
            s.version().unwrap_or_else(|| {
                panic!(
                    "{}: {what}: conditional writes, but the snapshot pins no version",
                    self.store.name()
                )
            })
        };
        let cas = |what: &str, value: Option<&[u8]>, expected: &super::ValueVersion| {
            self.store
                .set_if_unchanged(&k, value, expected)
                .unwrap_or_else(|err| self.fail(what, &err))
        };
        let missing = snapshot("snapshot of a missing key");
        self.check_eq(
            "a snapshot of a missing key reads as None",
            missing.read(&[None]).ok(),
            Some(None),
        );
        let v_missing = version("missing", &*missing);
        self.check_eq("a missing key's version", v_missing.is_missing(), true);
        self.check_eq(
            "creating a key expected missing",
            cas("create", Some(b"one"), &v_missing),
            true,
        );
        self.check_eq(
            "creating it again from the stale missing version fails",
            cas("create again", Some(b"two"), &v_missing),
            false,
        );
        self.check_get("cas/c/0", None, Some(b"one"));

        // A snapshot pins the version of its first read (object storage
        // learns the `ETag` only then).
        let first = snapshot("snapshot of `one`");
        self.check_eq(
            "a snapshot reads the current value",
            first.read(&[Some(ByteRange::new(0, 1))]).ok().flatten(),
            Some(vec![b"o".to_vec()]),
        );
        let v_first = version("first", &*first);
        self.set("cas/c/0", b"replaced by set");
        // It keeps reading that version, or (object storage, which keeps
        // no old version) fails with `Changed`: never the new value.
        match first.read(&[Some(ByteRange::new(0, 2)), None]) {
            Err(StoreError::Changed { .. }) => {}
            read => self.check_eq(
                "a snapshot keeps reading the version it pinned",
                read.ok().flatten(),
                Some(vec![b"on".to_vec(), b"one".to_vec()]),
            ),
        }
        self.check_eq(
            "a conditional write over a replaced value fails",
            cas("stale", Some(b"lost"), &v_first),
            false,
        );
        self.check_get("cas/c/0", None, Some(b"replaced by set"));

        let current = snapshot("snapshot of the current value");
        let _ = current.read(&[None]);
        let v_current = version("current", &*current);
        self.check_eq(
            "a conditional write over the current value succeeds",
            cas("current", Some(b"three"), &v_current),
            true,
        );
        self.check_eq(
            "the same version cannot be used twice",
            cas("twice", Some(b"four"), &v_current),
            false,
        );
        self.check_get("cas/c/0", None, Some(b"three"));
        let last = snapshot("snapshot before erasing");
        let _ = last.read(&[None]);
        self.check_eq(
            "a conditional erase of the current value succeeds",
            cas("erase", None, &version("last", &*last)),
            true,
        );
        self.check_get("cas/c/0", None, None);
        // A store whose versions are tags (object storage's `ETag`s)
        // cannot tell a foreign tag from a stale one: it must not match.
        let foreign = self.store.set_if_unchanged(
            &k,
            Some(b"x"),
            &super::ValueVersion::tag("\"not-this-stores-0123456789\""),
        );
        if !matches!(foreign, Err(StoreError::ForeignVersion { .. }) | Ok(false)) {
            panic!(
                "{}: a version of another kind is refused: got {foreign:?}",
                self.store.name()
            );
        }
        self.check_get("cas/c/0", None, None);
    }

    fn conditional_creates(&self) {
        let create = |k: &str, value: &[u8]| {
            self.store
                .set_if_absent(&key(k), value)
                .unwrap_or_else(|err| self.fail(&format!("set_if_absent `{k}`"), &err))
        };
        self.check_eq("creating a missing key", create("create/a", b"one"), true);
        self.check_get("create/a", None, Some(b"one"));
        self.check_eq(
            "creating an existing key fails",
            create("create/a", b"two"),
            false,
        );
        self.check_get("create/a", None, Some(b"one"));
        self.set("create/a", b"three");
        self.check_eq(
            "creating a key that `set` wrote fails",
            create("create/a", b"four"),
            false,
        );
        self.check_get("create/a", None, Some(b"three"));
        self.erase("create/a");
        self.check_eq(
            "creating an erased key succeeds",
            create("create/a", b"five"),
            true,
        );
        self.check_get("create/a", None, Some(b"five"));
        self.check_eq(
            "creating a key under a missing prefix",
            create("create/b/c/zarr.json", b"{}"),
            true,
        );
        self.check_get("create/b/c/zarr.json", None, Some(b"{}"));
        self.check_eq("creating an empty value", create("create/empty", b""), true);
        self.check_eq(
            "creating over an empty value fails",
            create("create/empty", b"x"),
            false,
        );
        self.check_get("create/empty", None, Some(b""));
        self.erase("create/a");
        self.erase("create/b/c/zarr.json");
        self.erase("create/empty");
    }

    fn conditional_creates_are_unsupported(&self) {
        let result = self.store.set_if_absent(&key("create/a"), b"one");
        assert!(
            matches!(result, Err(StoreError::Unsupported { .. })),
            "{}: capabilities say no conditional creates, but set_if_absent gave {result:?}",
            self.store.name()
        );
        self.check_get("create/a", None, None);
    }

    fn erases(&self) {
        for k in ["erase/a", "erase/b", "erase/c/d", "erase/c/e"] {
            self.set(k, k.as_bytes());
        }
        self.erase("erase/a");
        self.check_get("erase/a", None, None);
        self.check_get("erase/b", None, Some(b"erase/b"));
        // Erasing a missing key, or one under a missing prefix, succeeds.
        self.erase("erase/a");
        self.erase("erase/never/was");

        self.store
            .erase_values(&keys(&["erase/b", "erase/missing", "erase/c/d"]))
            .unwrap_or_else(|err| self.fail("erase_values", &err));
        self.check_get("erase/b", None, None);
        self.check_get("erase/c/d", None, None);
        self.check_get("erase/c/e", None, Some(b"erase/c/e"));
        self.check_eq("size of an erased key", self.size("erase/b"), None);
        self.erase("erase/c/e");
        self.check_get("erase/c/e", None, None);
    }

    fn erase_prefix(&self) {
        let doomed = ["ep/a/b/c", "ep/a/b/d/e"];
        let kept = ["ep/a/bc/f", "ep/a/b0", "ep/a/x", "ep/ab/y", "ep/zarr.json"];
        for k in doomed.iter().chain(&kept) {
            self.set(k, k.as_bytes());
        }
        let erase_prefix = |p: &str| {
            self.store
                .erase_prefix(&prefix(p))
                .unwrap_or_else(|err| self.fail(&format!("erase_prefix `{p}`"), &err));
        };
        erase_prefix("ep/a/b/");
        for k in doomed {
            self.check_get(k, None, None);
        }
        // `ep/a/bc/f` and `ep/a/b0` share the string `ep/a/b` but not the prefix `ep/a/b/`.
        for k in kept {
            self.check_get(k, None, Some(k.as_bytes()));
        }
        // A prefix that matches nothing, or that names a key rather than a
        // directory, erases nothing.
        erase_prefix("ep/nothing/here/");
        erase_prefix("ep/a/x/");
        for k in kept {
            self.check_get(k, None, Some(k.as_bytes()));
        }
        erase_prefix("ep/");
        for k in kept {
            self.check_get(k, None, None);
        }

        // The root prefix erases everything.
        self.set("ep_root/a", b"1");
        self.set("ep_root.json", b"2");
        erase_prefix("");
        self.check_get("ep_root/a", None, None);
        self.check_get("ep_root.json", None, None);
        // The store still works after its root was emptied.
        self.set("ep_root/a", b"3");
        self.check_get("ep_root/a", None, Some(b"3"));
        self.erase("ep_root/a");
    }

    fn sizes(&self) {
        self.set("size/a", b"12345");
        self.check_eq("size of a 5-byte value", self.size("size/a"), Some(5));
        self.set("size/a", b"123");
        self.check_eq("size after overwriting", self.size("size/a"), Some(3));
        self.set("size/empty", b"");
        self.check_eq("size of an empty value", self.size("size/empty"), Some(0));
        self.check_eq("size of a missing key", self.size("size/missing"), None);
        // `size/` holds keys, so it is a directory in some backends, not a value.
        self.set("size_dir/a/b", b"x");
        self.check_eq(
            "size of a prefix without the slash",
            self.size("size_dir/a"),
            None,
        );
        self.check_get("size_dir/a", None, None);
        if self.store.capabilities().list {
            self.set("size_dir/a/c", b"yz");
            let sized = |prefix: &str| -> Vec<(String, u64)> {
                self.store
                    .list_prefix_sizes(&StorePrefix::new(prefix).unwrap())
                    .unwrap()
                    .into_iter()
                    .map(|(k, n)| (k.as_str().to_string(), n))
                    .collect()
            };
            let expect = |pairs: &[(&str, u64)]| -> Vec<(String, u64)> {
                pairs.iter().map(|(k, n)| ((*k).to_string(), *n)).collect()
            };
            self.check_eq(
                "keys and sizes under a prefix",
                sized("size/"),
                expect(&[("size/a", 3), ("size/empty", 0)]),
            );
            self.check_eq(
                "keys and sizes under a deeper prefix",
                sized("size_dir/"),
                expect(&[("size_dir/a/b", 1), ("size_dir/a/c", 2)]),
            );
            self.erase("size_dir/a/c");
        }
        self.erase_all(&["size/a", "size/empty", "size_dir/a/b"]);
    }

    fn keys_with_dots_and_unicode(&self, listable: bool) {
        let ks = [
            "uni/.zattrs",
            "uni/c/0.1",
            "uni/c/0.1.2",
            "uni/x y",
            "uni/ä/ß.json",
            "uni/日本/データ",
        ];
        for k in ks {
            self.set(k, k.as_bytes());
        }
        for k in ks {
            self.check_get(k, None, Some(k.as_bytes()));
        }
        if listable {
            let mut sorted = ks.to_vec();
            sorted.sort_unstable();
            self.check_eq(
                "list_prefix `uni/`",
                self.list_prefix("uni/"),
                keys(&sorted),
            );
            self.check_list_dir("uni/ä/", &["uni/ä/ß.json"], &[]);
            self.check_list_dir(
                "uni/",
                &["uni/.zattrs", "uni/x y"],
                &["uni/c/", "uni/ä/", "uni/日本/"],
            );
        }
        self.erase_all(&ks);
    }

    fn listing(&self) {
        // Sorted by bytes, `-` < `.` < `/`: a backend that sorts each
        // directory on its own lists `ls/a/...` before `ls/a-b/x` and fails.
        let ks = [
            "ls/a-b/x",
            "ls/a.b",
            "ls/a/c/0/0",
            "ls/a/c/0/1",
            "ls/a/c/1/0",
            "ls/a/zarr.json",
            "ls/b.json",
            "ls/zarr.json",
            "root.json",
        ];
        // Set in a scrambled order so that insertion order cannot pass for sorting.
        for k in ks
            .iter()
            .rev()
            .step_by(2)
            .chain(ks.iter().rev().skip(1).step_by(2))
        {
            self.set(k, b"");
        }
        self.check_eq("list", self.list(), keys(&ks));
        self.check_eq("list_prefix ``", self.list_prefix(""), keys(&ks));
        self.check_eq("list_prefix `ls/`", self.list_prefix("ls/"), keys(&ks[..8]));
        self.check_eq(
            "list_prefix `ls/a/`",
            self.list_prefix("ls/a/"),
            keys(&ks[2..6]),
        );
        self.check_eq(
            "list_prefix `ls/a/c/0/`",
            self.list_prefix("ls/a/c/0/"),
            keys(&ks[2..4]),
        );
        self.check_eq(
            "list_prefix `ls/nothing/`",
            self.list_prefix("ls/nothing/"),
            vec![],
        );
        self.check_eq(
            "list_prefix of a key with a slash",
            self.list_prefix("ls/a/zarr.json/"),
            vec![],
        );

        self.check_list_dir("", &["root.json"], &["ls/"]);
        self.check_list_dir(
            "ls/",
            &["ls/a.b", "ls/b.json", "ls/zarr.json"],
            &["ls/a-b/", "ls/a/"],
        );
        self.check_list_dir("ls/a/", &["ls/a/zarr.json"], &["ls/a/c/"]);
        self.check_list_dir("ls/a/c/", &[], &["ls/a/c/0/", "ls/a/c/1/"]);
        self.check_list_dir("ls/a/c/0/", &["ls/a/c/0/0", "ls/a/c/0/1"], &[]);
        self.check_list_dir("ls/nothing/", &[], &[]);
        self.check_list_dir("ls/b.json/", &[], &[]);

        // Erased keys disappear from listings, and so do prefixes left empty.
        self.erase("ls/a/c/1/0");
        self.check_eq(
            "list_prefix `ls/a/` after an erase",
            self.list_prefix("ls/a/"),
            keys(&ks[2..6])
                .into_iter()
                .filter(|k| k.as_str() != "ls/a/c/1/0")
                .collect(),
        );
        self.check_list_dir("ls/a/c/", &[], &["ls/a/c/0/"]);

        self.erase_all(&ks);
        self.check_eq("list after erasing every key", self.list(), vec![]);
        self.check_list_dir("", &[], &[]);
    }
}

/// A store that forwards every operation to another and counts the reads
/// that reach it: requests, bytes, and reads of whole values.
///
/// For tests that prove a reader reads by ranges (a zip archive on object
/// storage, a shard index) rather than downloading whole values.
///
/// ```
/// use zarrkit::store::{ByteRange, MemoryStore, Store, StoreKey, testing::CountingStore};
///
/// let store = CountingStore::new(MemoryStore::new());
/// let key = StoreKey::new("a")?;
/// store.set(&key, b"hello")?;
/// store.get(&key, Some(ByteRange::new(1, 2)))?;
/// assert_eq!((store.requests(), store.bytes_read(), store.whole_reads()), (1, 2, 0));
/// # Ok::<(), zarrkit::store::StoreError>(())
/// ```
#[derive(Debug, Default)]
pub struct CountingStore<S> {
    inner: S,
    requests: AtomicU64,
    bytes: AtomicU64,
    whole_reads: AtomicU64,
}

impl<S: Store> CountingStore<S> {
    /// Counts the reads of `inner`, from zero.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            whole_reads: AtomicU64::new(0),
        }
    }

    /// The store being counted.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// How many values or ranges were read (each of a batch counts).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// How many bytes the reads returned.
    pub fn bytes_read(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// How many reads asked for a whole value (no byte range).
    pub fn whole_reads(&self) -> u64 {
        self.whole_reads.load(Ordering::Relaxed)
    }
}

impl<S: Store> Store for CountingStore<S> {
    fn name(&self) -> &'static str {
        "counting store"
    }

    fn capabilities(&self) -> super::StoreCapabilities {
        self.inner.capabilities()
    }

    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        let value = self.inner.get(key, range)?;
        self.requests.fetch_add(1, Ordering::Relaxed);
        if range.is_none() {
            self.whole_reads.fetch_add(1, Ordering::Relaxed);
        }
        let n = value.as_ref().map_or(0, Vec::len) as u64;
        self.bytes.fetch_add(n, Ordering::Relaxed);
        Ok(value)
    }

    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        self.inner.set(key, value)
    }

    fn set_if_absent(&self, key: &StoreKey, value: &[u8]) -> Result<bool, StoreError> {
        self.inner.set_if_absent(key, value)
    }

    fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        self.inner.set_partial_values(items)
    }

    fn settle(&self) {
        self.inner.settle();
    }

    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.inner.erase(key)
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        self.inner.erase_prefix(prefix)
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        self.inner.list_dir(prefix)
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        self.inner.size(key)
    }
}

/// A zip archive of stored members with exactly these names (APPNOTE 6.3:
/// local headers, central directory, end record), as an attacker would
/// write it: no library between the names and the bytes, so a name may be
/// `../x`, absolute, hold a backslash or NUL, or not be UTF-8. For tests
/// that a reader never serves such a member as a key.
///
/// # Panics
/// If a name or member is too large for a zip without zip64 (the tests'
/// archives are tiny).
#[cfg(feature = "zip")]
#[must_use]
pub fn crafted_zip(members: &[(&[u8], &[u8])]) -> Vec<u8> {
    let u16_of = |n: usize| u16::try_from(n).expect("a short name");
    let u32_of = |n: usize| u32::try_from(n).expect("a small archive");
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in members {
        let offset = u32_of(out.len());
        let mut crc = flate2::Crc::new();
        crc.update(data);
        let crc = crc.sum();
        let len = u32_of(data.len());
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&u16_of(name.len()).to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(name);
        out.extend_from_slice(data);

        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&len.to_le_bytes());
        central.extend_from_slice(&len.to_le_bytes());
        central.extend_from_slice(&u16_of(name.len()).to_le_bytes());
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name);
    }
    let central_offset = u32_of(out.len());
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    let n = u16_of(members.len());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&u32_of(central.len()).to_le_bytes());
    out.extend_from_slice(&central_offset.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}
