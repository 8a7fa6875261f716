//! A filesystem store. (Stub: replaced by the full implementation.)
#[derive(Debug)]
/// A filesystem store.
pub struct FilesystemStore;
