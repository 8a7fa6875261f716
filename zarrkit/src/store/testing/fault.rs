//! A store wrapper that injects faults, for tests of what zarrkit (or a
//! program built on it) does when a store fails or returns damaged data.

use crate::store::{
    ByteRange, ListDir, ReadRequest, Store, StoreCapabilities, StoreError, StoreKey, StorePrefix,
    ValueSnapshot, ValueVersion,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The kind of store operation a [`FaultRule`] applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultOp {
    /// Reads: [`Store::get`], [`Store::get_partial_values`] (each request
    /// counts once), [`Store::size`] and the reads of a [`Store::snapshot`].
    Get,
    /// Writes: [`Store::set`], [`Store::set_if_unchanged`],
    /// [`Store::set_if_absent`] and [`Store::set_partial_values`] (each
    /// item counts once).
    Set,
    /// Listings: [`Store::list_prefix`], [`Store::list_dir`] and
    /// [`Store::list_prefix_sizes`].
    List,
    /// Erases: [`Store::erase`], [`Store::erase_values`] (each key counts
    /// once) and [`Store::erase_prefix`].
    Erase,
}

impl FaultOp {
    const ALL: [Self; 4] = [Self::Get, Self::Set, Self::List, Self::Erase];

    fn index(self) -> usize {
        self as usize
    }
}

/// What a [`FaultRule`] does to an operation it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The operation fails, before it reaches the wrapped store, with the
    /// error of its kind ([`StoreError::Read`], [`StoreError::Write`],
    /// [`StoreError::List`], [`StoreError::Erase`]) naming the key or
    /// prefix; nothing is written or erased.
    Fail,
    /// A read sees the value cut to its first `len` bytes (a short file,
    /// a truncated download); ranged reads are taken from the cut value,
    /// so a range past its end is [`StoreError::InvalidRange`].
    Truncate {
        /// The length the value appears to have.
        len: u64,
    },
    /// A read sees the value with one bit flipped: bit `bit` (0–7) of the
    /// byte at `byte` (counted from the end when negative: `-1` is the last
    /// byte; wrapped into the value when past its end). Ranged reads are
    /// taken from the damaged value.
    FlipBit {
        /// The byte's offset, from the end when negative.
        byte: i64,
        /// Which bit of the byte.
        bit: u8,
    },
    /// The operation waits, then goes ahead unchanged.
    Delay(Duration),
}

/// When a [`FaultRule`] fires, counted over the operations it matches
/// (its kind, and its keys if it has a pattern), from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// Every matching operation.
    Always,
    /// The `k`-th matching operation only.
    Nth(u64),
    /// The `k`-th matching operation and every one after it.
    From(u64),
    /// Every `n`-th matching operation (`n`, `2n`, …).
    Every(u64),
}

/// One fault to inject: which operations, which keys, when, and what.
///
/// ```
/// use zarrkit::store::testing::{Fault, FaultOp, FaultRule, Trigger};
/// // The 3rd write of a key containing `c/` fails.
/// let rule = FaultRule::new(FaultOp::Set, Fault::Fail).keys_containing("c/").when(Trigger::Nth(3));
/// ```
#[derive(Clone, Debug)]
pub struct FaultRule {
    op: FaultOp,
    fault: Fault,
    pattern: Option<String>,
    trigger: Trigger,
}

impl FaultRule {
    /// A rule that applies `fault` to every operation of kind `op`.
    #[must_use]
    pub fn new(op: FaultOp, fault: Fault) -> Self {
        Self {
            op,
            fault,
            pattern: None,
            trigger: Trigger::Always,
        }
    }

    /// Applies only to keys (or prefixes, for listings and prefix erases)
    /// that contain `pattern`.
    #[must_use]
    pub fn keys_containing(mut self, pattern: impl Into<String>) -> Self {
        self.pattern = Some(pattern.into());
        self
    }

    /// Fires on the matching operations `trigger` picks.
    #[must_use]
    pub fn when(mut self, trigger: Trigger) -> Self {
        self.trigger = trigger;
        self
    }
}

/// A rule with its count of matching operations.
#[derive(Debug)]
struct Armed {
    rule: FaultRule,
    seen: u64,
    fired: u64,
}

/// A store that injects faults into the operations of the store it wraps:
/// fails the k-th (or every n-th, or every) read, write, listing or erase,
/// optionally only of keys containing a pattern; returns truncated or
/// bit-flipped values; delays. It also counts each kind of operation and
/// the conditional writes ([`Store::set_if_unchanged`]), so a test can
/// show that a path takes no conditional write.
///
/// Errors it injects name the key as the wrapped store's errors do (the
/// store is called `"fault store"` in them), and the cause says
/// `injected fault`. It answers the wrapped store's capabilities, and its
/// snapshots pin what the wrapped store's pin.
///
/// ```
/// use std::sync::Arc;
/// use zarrkit::store::{MemoryStore, Store, StoreKey};
/// use zarrkit::store::testing::{Fault, FaultOp, FaultRule, FaultStore, Trigger};
///
/// let store = FaultStore::new(Arc::new(MemoryStore::new()));
/// let key = StoreKey::new("a/c/0")?;
/// store.set(&key, b"value")?;
/// store.inject(FaultRule::new(FaultOp::Get, Fault::Truncate { len: 2 }).when(Trigger::Nth(1)));
/// assert_eq!(store.get(&key, None)?.unwrap(), b"va");
/// assert_eq!(store.get(&key, None)?.unwrap(), b"value");
/// store.inject(FaultRule::new(FaultOp::Set, Fault::Fail));
/// let err = store.set(&key, b"new").unwrap_err();
/// assert!(err.to_string().contains("a/c/0"));
/// assert_eq!(store.calls(FaultOp::Set), 2);
/// # Ok::<(), zarrkit::store::StoreError>(())
/// ```
#[derive(Debug)]
pub struct FaultStore {
    inner: Arc<dyn Store>,
    rules: Mutex<Vec<Armed>>,
    calls: [AtomicU64; 4],
    conditional_writes: AtomicU64,
    injected: AtomicU64,
}

const NAME: &str = "fault store";

fn injected() -> std::io::Error {
    std::io::Error::other("injected fault")
}

/// What the rules decided for one operation.
#[derive(Default)]
struct Decision {
    fail: bool,
    delay: Option<Duration>,
    /// Damage to apply, in rule order.
    damage: Vec<Fault>,
}

impl FaultStore {
    /// Wraps `inner`, injecting nothing until [`FaultStore::inject`].
    pub fn new(inner: Arc<dyn Store>) -> Self {
        Self {
            inner,
            rules: Mutex::new(Vec::new()),
            calls: Default::default(),
            conditional_writes: AtomicU64::new(0),
            injected: AtomicU64::new(0),
        }
    }

    /// Adds a rule; rules apply together, in the order added (a failing
    /// rule wins over damage).
    pub fn inject(&self, rule: FaultRule) {
        self.rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Armed {
                rule,
                seen: 0,
                fired: 0,
            });
    }

    /// Removes every rule (the counts stay).
    pub fn clear(&self) {
        self.rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// How many operations of kind `op` the store was asked for so far.
    pub fn calls(&self, op: FaultOp) -> u64 {
        self.calls[op.index()].load(Ordering::SeqCst)
    }

    /// How many [`Store::set_if_unchanged`] calls it was asked for so far.
    pub fn conditional_writes(&self) -> u64 {
        self.conditional_writes.load(Ordering::SeqCst)
    }

    /// How many faults (failures, damage, delays) were injected so far.
    pub fn injected(&self) -> u64 {
        self.injected.load(Ordering::SeqCst)
    }

    /// Forgets the counts so far.
    pub fn reset_counts(&self) {
        for op in FaultOp::ALL {
            self.calls[op.index()].store(0, Ordering::SeqCst);
        }
        self.conditional_writes.store(0, Ordering::SeqCst);
        self.injected.store(0, Ordering::SeqCst);
    }

    /// The wrapped store.
    pub fn inner(&self) -> &Arc<dyn Store> {
        &self.inner
    }

    /// Counts one operation of kind `op` on `key` and decides its faults.
    fn decide(&self, op: FaultOp, key: &str) -> Decision {
        self.calls[op.index()].fetch_add(1, Ordering::SeqCst);
        let mut decision = Decision::default();
        let mut rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
        for armed in rules.iter_mut() {
            let rule = &armed.rule;
            if rule.op != op || rule.pattern.as_deref().is_some_and(|p| !key.contains(p)) {
                continue;
            }
            armed.seen += 1;
            let fires = match rule.trigger {
                Trigger::Always => true,
                Trigger::Nth(k) => armed.seen == k,
                Trigger::From(k) => armed.seen >= k,
                Trigger::Every(n) => n > 0 && armed.seen.is_multiple_of(n),
            };
            if !fires {
                continue;
            }
            armed.fired += 1;
            self.injected.fetch_add(1, Ordering::SeqCst);
            match rule.fault {
                Fault::Fail => decision.fail = true,
                Fault::Delay(d) => decision.delay = Some(decision.delay.unwrap_or_default() + d),
                damage => decision.damage.push(damage),
            }
        }
        drop(rules);
        if let Some(delay) = decision.delay {
            std::thread::sleep(delay);
        }
        decision
    }

    /// Decides a write of `key`: `Err` when it is to fail.
    fn check_write(&self, key: &StoreKey) -> Result<(), StoreError> {
        if self.decide(FaultOp::Set, key.as_str()).fail {
            return Err(StoreError::Write {
                store: NAME,
                key: key.clone(),
                source: injected(),
            });
        }
        Ok(())
    }

    fn check_erase(&self, key: &str) -> Result<(), StoreError> {
        if self.decide(FaultOp::Erase, key).fail {
            return Err(StoreError::Erase {
                store: NAME,
                key: key.to_string(),
                source: injected(),
            });
        }
        Ok(())
    }

    fn check_list(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        if self.decide(FaultOp::List, prefix.as_str()).fail {
            return Err(StoreError::List {
                store: NAME,
                prefix: prefix.as_str().to_string(),
                source: injected(),
            });
        }
        Ok(())
    }

    /// One read of `key` through `read` (which reads ranges of the value
    /// from the wrapped store or a snapshot of it), with its faults.
    fn read_one(
        &self,
        key: &StoreKey,
        range: Option<ByteRange>,
        read: impl Fn(Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let decision = self.decide(FaultOp::Get, key.as_str());
        if decision.fail {
            return Err(StoreError::Read {
                store: NAME,
                key: key.clone(),
                source: injected(),
            });
        }
        if decision.damage.is_empty() {
            return read(range);
        }
        // Damage applies to the value as stored: read it whole, damage it,
        // then take the range.
        let Some(mut value) = read(None)? else {
            return Ok(None);
        };
        for damage in decision.damage {
            match damage {
                Fault::Truncate { len } => {
                    value.truncate(usize::try_from(len).unwrap_or(usize::MAX));
                }
                Fault::FlipBit { byte, bit } if !value.is_empty() => {
                    let n = value.len() as i64;
                    let at = byte.rem_euclid(n) as usize;
                    value[at] ^= 1 << (bit % 8);
                }
                _ => {}
            }
        }
        let Some(range) = range else {
            return Ok(Some(value));
        };
        let len = value.len() as u64;
        let (start, end) = range.bounds(len).ok_or(StoreError::InvalidRange {
            store: NAME,
            key: key.clone(),
            range,
            len,
        })?;
        Ok(Some(value[start as usize..end as usize].to_vec()))
    }
}

/// A snapshot of the wrapped store, its reads going through the faults.
struct FaultSnapshot<'a> {
    store: &'a FaultStore,
    key: StoreKey,
    inner: Box<dyn ValueSnapshot + 'a>,
}

impl ValueSnapshot for FaultSnapshot<'_> {
    fn read(&self, ranges: &[Option<ByteRange>]) -> Result<Option<Vec<Vec<u8>>>, StoreError> {
        let mut out = Vec::with_capacity(ranges.len());
        for range in ranges {
            let value = self.store.read_one(&self.key, *range, |r| {
                Ok(self.inner.read(&[r])?.and_then(|mut v| v.pop()))
            })?;
            match value {
                Some(value) => out.push(value),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    fn version(&self) -> Option<ValueVersion> {
        self.inner.version()
    }
}

impl Store for FaultStore {
    fn name(&self) -> &'static str {
        NAME
    }

    fn capabilities(&self) -> StoreCapabilities {
        self.inner.capabilities()
    }

    fn concurrency(&self) -> usize {
        self.inner.concurrency()
    }

    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        self.read_one(key, range, |r| self.inner.get(key, r))
    }

    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        requests
            .iter()
            .map(|(key, range)| self.get(key, *range))
            .collect()
    }

    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        self.check_write(key)?;
        self.inner.set(key, value)
    }

    fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        for (key, _, _) in items {
            self.check_write(key)?;
        }
        self.inner.set_partial_values(items)
    }

    fn snapshot<'a>(&'a self, key: &StoreKey) -> Result<Box<dyn ValueSnapshot + 'a>, StoreError> {
        Ok(Box::new(FaultSnapshot {
            store: self,
            key: key.clone(),
            inner: self.inner.snapshot(key)?,
        }))
    }

    fn set_if_unchanged(
        &self,
        key: &StoreKey,
        value: Option<&[u8]>,
        expected: &ValueVersion,
    ) -> Result<bool, StoreError> {
        self.conditional_writes.fetch_add(1, Ordering::SeqCst);
        self.check_write(key)?;
        self.inner.set_if_unchanged(key, value, expected)
    }

    fn set_if_absent(&self, key: &StoreKey, value: &[u8]) -> Result<bool, StoreError> {
        self.check_write(key)?;
        self.inner.set_if_absent(key, value)
    }

    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.check_erase(key.as_str())?;
        self.inner.erase(key)
    }

    fn erase_values(&self, keys: &[StoreKey]) -> Result<(), StoreError> {
        for key in keys {
            self.check_erase(key.as_str())?;
        }
        self.inner.erase_values(keys)
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        self.check_erase(prefix.as_str())?;
        self.inner.erase_prefix(prefix)
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        self.check_list(prefix)?;
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        self.check_list(prefix)?;
        self.inner.list_dir(prefix)
    }

    fn list_prefix_sizes(&self, prefix: &StorePrefix) -> Result<Vec<(StoreKey, u64)>, StoreError> {
        self.check_list(prefix)?;
        self.inner.list_prefix_sizes(prefix)
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        Ok(self.get(key, None)?.map(|v| v.len() as u64))
    }

    fn finish(&self) -> Result<(), StoreError> {
        self.inner.finish()
    }

    fn settle(&self) {
        self.inner.settle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    fn key(s: &str) -> StoreKey {
        StoreKey::new(s).unwrap()
    }

    #[test]
    fn without_rules_it_passes_the_conformance_suite() {
        crate::store::testing::run_all(&FaultStore::new(Arc::new(MemoryStore::new())));
    }

    #[test]
    fn triggers_count_matching_operations_only() {
        let store = FaultStore::new(Arc::new(MemoryStore::new()));
        store.inject(
            FaultRule::new(FaultOp::Set, Fault::Fail)
                .keys_containing("c/")
                .when(Trigger::Every(2)),
        );
        let mut failed = Vec::new();
        for i in 0..6 {
            store.set(&key("a/zarr.json"), b"{}").unwrap();
            if store.set(&key(&format!("a/c/{i}")), b"x").is_err() {
                failed.push(i);
            }
        }
        assert_eq!(failed, [1, 3, 5]);
        assert_eq!(store.calls(FaultOp::Set), 12);
        assert_eq!(store.injected(), 3);
        assert_eq!(store.inner().get(&key("a/c/1"), None).unwrap(), None);
    }

    #[test]
    fn damage_applies_to_the_stored_value_before_the_range() {
        let store = FaultStore::new(Arc::new(MemoryStore::new()));
        store.set(&key("k"), &[0, 0, 0, 0]).unwrap();
        store.inject(FaultRule::new(
            FaultOp::Get,
            Fault::FlipBit { byte: -1, bit: 1 },
        ));
        assert_eq!(store.get(&key("k"), None).unwrap().unwrap(), [0, 0, 0, 2]);
        assert_eq!(
            store
                .get(&key("k"), Some(ByteRange::Suffix(2)))
                .unwrap()
                .unwrap(),
            [0, 2]
        );
        let snapshot = store.snapshot(&key("k")).unwrap();
        assert_eq!(
            snapshot
                .read(&[Some(ByteRange::new(3, 1))])
                .unwrap()
                .unwrap(),
            [vec![2]]
        );
        store.clear();
        store.inject(FaultRule::new(FaultOp::Get, Fault::Truncate { len: 3 }));
        let err = store
            .get(&key("k"), Some(ByteRange::new(2, 2)))
            .unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidRange { len: 3, .. }),
            "{err}"
        );
    }

    #[test]
    fn conditional_writes_are_counted() {
        let store = FaultStore::new(Arc::new(MemoryStore::new()));
        let snapshot = store.snapshot(&key("k")).unwrap();
        let _ = snapshot.read(&[None]).unwrap();
        let version = snapshot.version().unwrap();
        assert!(
            store
                .set_if_unchanged(&key("k"), Some(b"v"), &version)
                .unwrap()
        );
        assert_eq!(store.conditional_writes(), 1);
        store.set(&key("k"), b"w").unwrap();
        assert_eq!(store.conditional_writes(), 1);
    }
}
