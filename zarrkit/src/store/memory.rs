//! An in-memory store: a sorted map from keys to values behind a lock.
//!
//! Useful for tests, examples and scratch arrays. Every operation is
//! supported, and every batch operation is atomic: a failing
//! [`Store::set_partial_values`] leaves the store unchanged.

use super::{
    ByteRange, ListDir, Store, StoreCapabilities, StoreError, StoreKey, StorePrefix, ValueSnapshot,
    ValueVersion, VersionKind,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The map behind the lock. Values are shared, so a snapshot holds one
/// without copying it, and a conditional write recognises the version it
/// read by the allocation's identity (which cannot be reused while the
/// snapshot holds it).
type Values = BTreeMap<StoreKey, Arc<Vec<u8>>>;

const NAME: &str = "memory store";

/// A store that keeps every value in memory.
///
/// ```
/// use zarrkit::store::{ByteRange, MemoryStore, Store, StoreKey};
///
/// let store = MemoryStore::new();
/// let key = StoreKey::new("a/zarr.json")?;
/// store.set(&key, b"{}\n")?;
/// assert_eq!(store.get(&key, Some(ByteRange::new(0, 2)))?, Some(b"{}".to_vec()));
/// # Ok::<(), zarrkit::store::StoreError>(())
/// ```
#[derive(Debug, Default)]
pub struct MemoryStore {
    // A BTreeMap keeps keys sorted, so listing a prefix is a range scan.
    values: RwLock<Values>,
}

impl MemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    // Every mutation below either completes or changes nothing before it can
    // panic, so a poisoned lock still guards a consistent map.
    fn read(&self) -> RwLockReadGuard<'_, Values> {
        self.values.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Values> {
        self.values.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The keys of `map` that start with `prefix`, in order.
pub(super) fn keys_with_prefix<'a, V>(
    map: &'a BTreeMap<StoreKey, V>,
    prefix: &'a StorePrefix,
) -> impl Iterator<Item = &'a StoreKey> + 'a {
    // Keys that start with `prefix` sort at or after it and form one run.
    map.range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
        .map(|(key, _)| key)
        .take_while(move |key| key.has_prefix(prefix))
}

/// The keys and child prefixes of `map` directly under `prefix`.
pub(super) fn list_dir_of<V>(
    map: &BTreeMap<StoreKey, V>,
    prefix: &StorePrefix,
) -> Result<ListDir, StoreError> {
    let mut keys = Vec::new();
    let mut children = BTreeSet::new();
    // Each child name once; many keys may lie under one child prefix.
    for key in keys_with_prefix(map, prefix) {
        let rest = &key.as_str()[prefix.as_str().len()..];
        match rest.split_once('/') {
            None => keys.push(key.clone()),
            Some((child, _)) => {
                children.insert(child);
            }
        }
    }
    let mut prefixes = children
        .into_iter()
        .map(|child| prefix.child(child))
        .collect::<Result<Vec<_>, _>>()?;
    // Sort whole prefixes, not names: `a-b/` sorts before `a/`.
    prefixes.sort_unstable();
    Ok(ListDir { keys, prefixes })
}

/// Slices `value`, held in memory, to `range` (`None`: all of it), or
/// reports the range as out of bounds for `store` (the memory store's
/// values, a zip member held inflated).
pub(super) fn slice_value(
    store: &'static str,
    key: &StoreKey,
    value: &[u8],
    range: Option<ByteRange>,
) -> Result<Vec<u8>, StoreError> {
    let Some(range) = range else {
        return Ok(value.to_vec());
    };
    let len = value.len() as u64;
    let (start, end) = range.bounds(len).ok_or_else(|| StoreError::InvalidRange {
        store,
        key: key.clone(),
        range,
        len,
    })?;
    // Both bounds are at most `value.len()`, so they fit in usize.
    Ok(value[start as usize..end as usize].to_vec())
}

/// A snapshot: the value shared with the map when it was taken.
struct HeldSnapshot {
    key: StoreKey,
    value: Option<Arc<Vec<u8>>>,
}

impl ValueSnapshot for HeldSnapshot {
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

    fn version(&self) -> Option<ValueVersion> {
        Some(ValueVersion(match &self.value {
            Some(value) => VersionKind::Memory(Arc::clone(value)),
            None => VersionKind::Missing,
        }))
    }
}

impl Store for MemoryStore {
    fn name(&self) -> &'static str {
        NAME
    }

    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            read: true,
            write: true,
            partial_write: true,
            list: true,
            conditional_write: true,
            conditional_create: true,
        }
    }

    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        let values = self.read();
        values
            .get(key)
            .map(|value| slice_value(NAME, key, value, range))
            .transpose()
    }

    fn get_partial_values(
        &self,
        requests: &[super::ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        // One lock for the whole batch, so the answers are a consistent snapshot.
        let values = self.read();
        requests
            .iter()
            .map(|(key, range)| {
                values
                    .get(key)
                    .map(|value| slice_value(NAME, key, value, *range))
                    .transpose()
            })
            .collect()
    }

    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        self.write().insert(key.clone(), Arc::new(value.to_vec()));
        Ok(())
    }

    fn snapshot<'a>(&'a self, key: &StoreKey) -> Result<Box<dyn ValueSnapshot + 'a>, StoreError> {
        Ok(Box::new(HeldSnapshot {
            key: key.clone(),
            value: self.read().get(key).cloned(),
        }))
    }

    fn set_if_unchanged(
        &self,
        key: &StoreKey,
        value: Option<&[u8]>,
        expected: &ValueVersion,
    ) -> Result<bool, StoreError> {
        let mut values = self.write();
        let unchanged = match (&expected.0, values.get(key)) {
            (VersionKind::Missing, current) => current.is_none(),
            (VersionKind::Memory(seen), Some(current)) => Arc::ptr_eq(seen, current),
            (VersionKind::Memory(_), None) => false,
            _ => {
                return Err(StoreError::ForeignVersion {
                    store: NAME,
                    key: key.clone(),
                });
            }
        };
        if unchanged {
            match value {
                Some(value) => values.insert(key.clone(), Arc::new(value.to_vec())),
                None => values.remove(key),
            };
        }
        Ok(unchanged)
    }

    fn set_if_absent(&self, key: &StoreKey, value: &[u8]) -> Result<bool, StoreError> {
        // One write lock for the check and the insert.
        match self.write().entry(key.clone()) {
            std::collections::btree_map::Entry::Occupied(_) => Ok(false),
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(Arc::new(value.to_vec()));
                Ok(true)
            }
        }
    }

    fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        let mut values = self.write();
        // Apply the batch to copies of the touched values and commit only if
        // every item succeeds, so a bad item leaves the store unchanged. Items
        // apply in order: a later item may start where an earlier one extended
        // the value.
        let mut staged: HashMap<&StoreKey, Vec<u8>> = HashMap::new();
        for (key, offset, bytes) in items {
            let value = match staged.get_mut(key) {
                Some(value) => value,
                None => {
                    let Some(current) = values.get(key) else {
                        return Err(StoreError::InvalidPartialWrite {
                            store: NAME,
                            key: key.clone(),
                            offset: *offset,
                            len: 0,
                        });
                    };
                    staged.entry(key).or_insert_with(|| current.to_vec())
                }
            };
            let len = value.len();
            let start = usize::try_from(*offset)
                .ok()
                .filter(|&start| start <= len)
                .ok_or_else(|| StoreError::InvalidPartialWrite {
                    store: NAME,
                    key: key.clone(),
                    offset: *offset,
                    len: len as u64,
                })?;
            let overlap = bytes.len().min(len - start);
            value[start..start + overlap].copy_from_slice(&bytes[..overlap]);
            value.extend_from_slice(&bytes[overlap..]);
        }
        for (key, value) in staged {
            values.insert(key.clone(), Arc::new(value));
        }
        Ok(())
    }

    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.write().remove(key);
        Ok(())
    }

    fn erase_values(&self, keys: &[StoreKey]) -> Result<(), StoreError> {
        let mut values = self.write();
        for key in keys {
            values.remove(key);
        }
        Ok(())
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        let mut values = self.write();
        if prefix.is_root() {
            values.clear();
        } else {
            let doomed: Vec<StoreKey> = keys_with_prefix(&values, prefix).cloned().collect();
            for key in doomed {
                values.remove(&key);
            }
        }
        Ok(())
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        Ok(keys_with_prefix(&self.read(), prefix).cloned().collect())
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        list_dir_of(&self.read(), prefix)
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        Ok(self.read().get(key).map(|value| value.len() as u64))
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

    #[test]
    fn passes_the_conformance_suite() {
        crate::store::testing::run_all(&MemoryStore::new());
    }

    #[test]
    fn racing_creates_leave_one_winner() {
        let store = MemoryStore::new();
        for _ in 0..20 {
            crate::store::testing::check_racing_creates(&store, 8);
        }
    }

    #[test]
    fn failing_partial_write_batch_leaves_the_store_unchanged() {
        let store = MemoryStore::new();
        store.set(&key("a"), b"hello").unwrap();
        let err = store
            .set_partial_values(&[
                (key("a"), 0, b"J".to_vec()),
                (key("missing"), 0, b"x".to_vec()),
            ])
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::InvalidPartialWrite { key: k, len: 0, .. } if k.as_str() == "missing"),
            "{err:?}"
        );
        assert_eq!(store.get(&key("a"), None).unwrap().unwrap(), b"hello");
    }

    #[test]
    fn partial_writes_in_one_batch_apply_in_order() {
        let store = MemoryStore::new();
        store.set(&key("a"), b"ab").unwrap();
        store
            .set_partial_values(&[
                (key("a"), 2, b"cd".to_vec()),
                (key("a"), 4, b"ef".to_vec()),
                (key("a"), 0, b"A".to_vec()),
            ])
            .unwrap();
        assert_eq!(store.get(&key("a"), None).unwrap().unwrap(), b"Abcdef");
    }

    #[test]
    fn partial_write_at_a_huge_offset_is_rejected() {
        let store = MemoryStore::new();
        store.set(&key("a"), b"ab").unwrap();
        let err = store
            .set_partial_values(&[(key("a"), u64::MAX, b"x".to_vec())])
            .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::InvalidPartialWrite {
                    offset: u64::MAX,
                    len: 2,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn list_dir_groups_nested_keys_under_their_first_segment() {
        let store = MemoryStore::new();
        for k in ["a/b", "a/bc/d", "a/bc/e/f", "a/c", "a0", "b/x"] {
            store.set(&key(k), b"").unwrap();
        }
        let dir = store.list_dir(&prefix("a/")).unwrap();
        assert_eq!(dir.keys, [key("a/b"), key("a/c")]);
        assert_eq!(dir.prefixes, [prefix("a/bc/")]);
        let root = store.list_dir(&StorePrefix::root()).unwrap();
        assert_eq!(root.keys, [key("a0")]);
        assert_eq!(root.prefixes, [prefix("a/"), prefix("b/")]);
    }

    #[test]
    fn erase_prefix_keeps_keys_that_only_share_a_string_prefix() {
        let store = MemoryStore::new();
        for k in ["a/b/c", "a/bc/d", "a/b0", "a/b"] {
            store.set(&key(k), b"1").unwrap();
        }
        store.erase_prefix(&prefix("a/b/")).unwrap();
        assert_eq!(
            store.list().unwrap(),
            [key("a/b"), key("a/b0"), key("a/bc/d")]
        );
    }

    #[test]
    fn out_of_range_read_names_key_range_and_length() {
        let store = MemoryStore::new();
        store.set(&key("g/c/0"), b"0123").unwrap();
        let err = store
            .get(&key("g/c/0"), Some(ByteRange::new(3, 2)))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "bytes 3..5 is out of bounds for `g/c/0` (4 bytes) in memory store"
        );
    }
}
