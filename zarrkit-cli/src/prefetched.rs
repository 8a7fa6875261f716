//! A store that answers some whole-value reads from values already read:
//! the documents a remote location's probe fetched (`cmd::locate`), so that
//! opening the node found costs no second round trip (#13).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use zarrkit::store::{
    ByteRange, ListDir, ReadRequest, Store, StoreCapabilities, StoreError, StoreKey, StorePrefix,
    ValueSnapshot, ValueVersion,
};

/// `inner`, with the values (or absences) of some keys known in advance.
/// Any write or erase forgets them all, so a read never sees a stale value.
#[derive(Debug)]
pub struct Prefetched {
    inner: Arc<dyn Store>,
    known: Mutex<HashMap<StoreKey, Option<Vec<u8>>>>,
}

impl Prefetched {
    pub fn new(inner: Arc<dyn Store>, known: HashMap<StoreKey, Option<Vec<u8>>>) -> Self {
        Self {
            inner,
            known: Mutex::new(known),
        }
    }

    fn known(&self, key: &StoreKey, range: Option<ByteRange>) -> Option<Option<Vec<u8>>> {
        if range.is_some() {
            return None;
        }
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known.get(key).cloned()
    }

    fn forget(&self) {
        self.known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

impl Store for Prefetched {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn capabilities(&self) -> StoreCapabilities {
        self.inner.capabilities()
    }

    fn concurrency(&self) -> usize {
        self.inner.concurrency()
    }

    fn cold_size(&self, key: &StoreKey) -> Option<u64> {
        self.inner.cold_size(key)
    }

    fn get(&self, key: &StoreKey, range: Option<ByteRange>) -> Result<Option<Vec<u8>>, StoreError> {
        match self.known(key, range) {
            Some(value) => Ok(value),
            None => self.inner.get(key, range),
        }
    }

    fn get_partial_values(
        &self,
        requests: &[ReadRequest],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let mut answers: Vec<Option<Option<Vec<u8>>>> = requests
            .iter()
            .map(|(key, range)| self.known(key, *range))
            .collect();
        let missing: Vec<ReadRequest> = requests
            .iter()
            .zip(&answers)
            .filter(|(_, answer)| answer.is_none())
            .map(|(request, _)| request.clone())
            .collect();
        // The rest in one batch, as the inner store would have read them.
        let mut fetched = if missing.is_empty() {
            Vec::new()
        } else {
            self.inner.get_partial_values(&missing)?
        }
        .into_iter();
        for answer in &mut answers {
            if answer.is_none() {
                *answer = Some(fetched.next().flatten());
            }
        }
        Ok(answers.into_iter().map(Option::flatten).collect())
    }

    fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), StoreError> {
        self.forget();
        self.inner.set(key, value)
    }

    fn set_partial_values(&self, items: &[(StoreKey, u64, Vec<u8>)]) -> Result<(), StoreError> {
        self.forget();
        self.inner.set_partial_values(items)
    }

    fn snapshot<'a>(&'a self, key: &StoreKey) -> Result<Box<dyn ValueSnapshot + 'a>, StoreError> {
        self.inner.snapshot(key)
    }

    fn set_if_unchanged(
        &self,
        key: &StoreKey,
        value: Option<&[u8]>,
        expected: &ValueVersion,
    ) -> Result<bool, StoreError> {
        self.forget();
        self.inner.set_if_unchanged(key, value, expected)
    }

    fn erase(&self, key: &StoreKey) -> Result<(), StoreError> {
        self.forget();
        self.inner.erase(key)
    }

    fn erase_values(&self, keys: &[StoreKey]) -> Result<(), StoreError> {
        self.forget();
        self.inner.erase_values(keys)
    }

    fn erase_prefix(&self, prefix: &StorePrefix) -> Result<(), StoreError> {
        self.forget();
        self.inner.erase_prefix(prefix)
    }

    fn list(&self) -> Result<Vec<StoreKey>, StoreError> {
        self.inner.list()
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StoreError> {
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<ListDir, StoreError> {
        self.inner.list_dir(prefix)
    }

    fn list_prefix_sizes(&self, prefix: &StorePrefix) -> Result<Vec<(StoreKey, u64)>, StoreError> {
        self.inner.list_prefix_sizes(prefix)
    }

    fn finish(&self) -> Result<(), StoreError> {
        self.inner.finish()
    }

    fn size(&self, key: &StoreKey) -> Result<Option<u64>, StoreError> {
        match self.known(key, None) {
            Some(value) => Ok(value.map(|v| v.len() as u64)),
            None => self.inner.size(key),
        }
    }
}
