//! What the fuzz targets share: an in-memory store holding the fuzzer's
//! documents, and a bounded walk that opens and reads whatever they declare.
//!
//! Inputs that carry several documents separate them with `0xFF`, a byte
//! that never occurs in UTF-8 (so in no JSON document); `corpus.py` builds
//! the seeds that way from the test fixtures.

use std::sync::Arc;

use zarrkit::metadata::{DataType, ExtensionObject};
use zarrkit::store::{MemoryStore, Store, StoreKey};
use zarrkit::{Array, Node, Region};

/// The largest decoded chunk (in bytes, or elements for variable-length
/// data) the targets read. A document may declare any chunk shape, and
/// reading a chunk that is not stored rightly allocates its declared size
/// for the fill value; a bound here keeps such inputs from tripping
/// `-malloc_limit_mb` while every stored chunk is still decoded.
pub const MAX_READ: u64 = 1 << 20;

/// The nodes of a hierarchy the targets open at most.
const MAX_NODES: usize = 16;

/// The fuzzer's input split into documents at `0xFF` bytes.
#[must_use]
pub fn documents(data: &[u8]) -> Vec<&[u8]> {
    data.split(|&b| b == 0xFF).collect()
}

/// A memory store holding `value` under each `key`.
///
/// # Panics
/// If a key is invalid (the targets' keys are fixed).
#[must_use]
pub fn store_with(entries: &[(&str, &[u8])]) -> Arc<dyn Store> {
    let store = MemoryStore::new();
    for (key, value) in entries {
        let key = StoreKey::new(*key).expect("a valid key");
        store.set(&key, value).expect("a memory store write");
    }
    Arc::new(store)
}

/// Opens the node at `path` (any format, consolidated metadata used), and
/// reads the first chunk of every array it finds.
pub fn exercise_node(store: Arc<dyn Store>, path: &str) {
    match Node::open(store, path) {
        Ok(Node::Array(array)) => exercise_array(&array),
        Ok(Node::Group(group)) => {
            let _ = group.warnings();
            if let Ok(nodes) = group.walk() {
                for node in nodes.into_iter().take(MAX_NODES) {
                    if let Node::Array(array) = node {
                        exercise_array(&array);
                    }
                }
            }
        }
        // Every error must render (its message names the key or field).
        Err(error) => drop(error.to_string()),
    }
}

/// Reads the first chunk of `array`, if its decoded size is within
/// [`MAX_READ`], and a stored chunk's raw bytes.
pub fn exercise_array(array: &Array) {
    let _ = array.chunk_grid_shape();
    if array.shape().contains(&0) {
        return;
    }
    let first = vec![0; array.ndim()];
    let _ = array.read_chunk_bytes(&first);
    let region = array.chunk_region(&first);
    let Some(elements) = region.num_elements() else {
        return;
    };
    let data_type = array.data_type();
    if data_type.is_variable_length() {
        if elements <= MAX_READ {
            let _ = array.read_vlen(&region);
        }
    } else if elements.saturating_mul(data_type.size() as u64) <= MAX_READ {
        let _ = array.read_region_bytes(&region);
    }
    // The last element's chunk: a partial chunk at the edge.
    let last: Vec<u64> = array.shape().iter().map(|&n| n - 1).collect();
    let one = Region::new(last, vec![1; array.ndim()]);
    if !data_type.is_variable_length() {
        let _ = array.read_region_bytes(&one);
    }
}

/// A codec's metadata from its name and JSON configuration (`null`: none).
///
/// # Panics
/// If `configuration` is neither an object nor `null`.
#[must_use]
pub fn codec(name: &str, configuration: serde_json::Value) -> ExtensionObject {
    match configuration {
        serde_json::Value::Null => ExtensionObject::new(name),
        serde_json::Value::Object(map) => ExtensionObject::with_configuration(name, map),
        other => panic!("a configuration is an object, not {other}"),
    }
}

/// Arrays of one chunk each, one per codec chain, in one memory store;
/// the targets that decode chunks store the fuzzer's bytes as the chunk of
/// the array its first byte chooses.
pub struct OneChunkArrays {
    store: Arc<MemoryStore>,
    arrays: Vec<(StoreKey, Array)>,
}

impl OneChunkArrays {
    /// An array of `shape` (one chunk) for each data type and chain.
    ///
    /// # Panics
    /// If a chain is invalid: a table entry that drifts from the codecs'
    /// configurations fails at start-up, rather than fuzzing nothing.
    #[must_use]
    pub fn new(shape: &[u64], chains: Vec<(DataType, Vec<ExtensionObject>)>) -> Self {
        let store = Arc::new(MemoryStore::new());
        let arrays = chains
            .into_iter()
            .enumerate()
            .map(|(i, (data_type, codecs))| {
                let array = Array::builder(shape, data_type, shape)
                    .codecs_metadata(codecs)
                    .create(store.clone(), &format!("/{i}"))
                    .unwrap_or_else(|e| panic!("chain {i}: {e}"));
                let key = array.chunk_key(&vec![0; shape.len()]).expect("a chunk key");
                (key, array)
            })
            .collect();
        Self { store, arrays }
    }

    /// The array `selector` chooses, with `chunk` stored as its chunk.
    ///
    /// # Panics
    /// If the memory store refuses the write.
    pub fn with_chunk(&self, selector: u8, chunk: &[u8]) -> &Array {
        let (key, array) = &self.arrays[usize::from(selector) % self.arrays.len()];
        self.store.set(key, chunk).expect("a memory store write");
        array
    }
}
