//! An in-memory store. (Stub: replaced by the full implementation.)
#[derive(Debug, Default)]
/// An in-memory store.
pub struct MemoryStore;
