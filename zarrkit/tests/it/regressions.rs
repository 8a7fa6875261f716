//! One test per fixed bug, named `issue_<n>_<what>`, each with how the bug happened.

use std::sync::Arc;
use zarrkit::store::{MemoryStore, Store, StoreKey};
use zarrkit::{Array, Error, Region};

/// A store holding the v3 array document `zarr.json` at the root, as an
/// edited (or hostile) store would.
fn store_with_document(document: serde_json::Value) -> Arc<dyn Store> {
    let store = Arc::new(MemoryStore::new());
    store
        .set(
            &StoreKey::new("zarr.json").unwrap(),
            document.to_string().as_bytes(),
        )
        .unwrap();
    store
}

fn uint8_array_document(shape: &[u64], chunk_shape: &[u64]) -> serde_json::Value {
    serde_json::json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": "uint8",
        "chunk_grid": { "name": "regular", "configuration": { "chunk_shape": chunk_shape } },
        "chunk_key_encoding": { "name": "default" },
        "fill_value": 7,
        "codecs": [{ "name": "bytes" }]
    })
}

// Issue #10: `read_region_bytes` allocated the region's bytes with
// `vec![0u8; n]` as soon as `n` fitted a `usize`. A row of the edited shape
// `[1000, 10^12]` is 10^12 bytes, so reading it (as `zarrkit export` did,
// one row of chunks per slab) aborted the process with "memory allocation
// failed". A read now checks its output against the array's memory budget.
#[test]
fn issue_10_a_read_larger_than_the_memory_budget_is_refused_before_allocating() {
    let store = store_with_document(uint8_array_document(&[1000, 1_000_000_000_000], &[1, 1]));
    let mut array = Array::open(store, "/").unwrap();
    assert_eq!(array.memory_budget(), zarrkit::DEFAULT_MEMORY_BUDGET);
    let row = Region::new(vec![0, 0], vec![1, 1_000_000_000_000]);
    let err = array.read_region_bytes(&row).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::MemoryBudget { needed: 1_000_000_000_000, budget, .. }
                if *budget == zarrkit::DEFAULT_MEMORY_BUDGET
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("array `/`"), "{message}");
    assert!(message.contains("[1, 1000000000000]"), "{message}");
    assert!(array.read_region::<u8>(&row).is_err());

    // What fits the budget reads as before: unwritten chunks are the fill value.
    let small = Region::new(vec![999, 999_999_999_990], vec![1, 10]);
    assert_eq!(array.read_region_bytes(&small).unwrap(), vec![7u8; 10]);

    // The budget is the array's to set.
    array.set_memory_budget(5);
    let err = array.read_region_bytes(&small).unwrap_err();
    assert!(
        matches!(
            err,
            Error::MemoryBudget {
                needed: 10,
                budget: 5,
                ..
            }
        ),
        "{err:?}"
    );
}

// Issue #10: the read plan holds one piece per chunk the region touches
// (a key and three coordinate vectors), so a region of one-element chunks
// needs far more memory for its plan than for its bytes; that was never
// checked. The plan is now counted against the budget before it is built.
#[test]
fn issue_10_a_plan_of_too_many_chunks_is_refused_before_it_is_built() {
    let store = store_with_document(uint8_array_document(&[1000, 1_000_000_000_000], &[1, 1]));
    let mut array = Array::open(store, "/").unwrap();
    array.set_memory_budget(1 << 20);
    // 100 000 bytes fit 1 MiB; 100 000 planned chunks do not.
    let region = Region::new(vec![0, 0], vec![1, 100_000]);
    let err = array.read_region_bytes(&region).unwrap_err();
    assert!(
        matches!(&err, Error::MemoryBudget { what, budget: 1_048_576, .. } if what.contains("100000 chunks")),
        "{err:?}"
    );
    // 1 000 chunks are well within it.
    let region = Region::new(vec![0, 0], vec![1, 1000]);
    assert_eq!(array.read_region_bytes(&region).unwrap(), vec![7u8; 1000]);
}

// Issue #10: the `sharding_indexed` decoder allocated the whole declared
// shard (`vec![0u8; repr.size_bytes()?]`) before it looked at the stored
// bytes, so a 10-byte shard under an edited chunk shape of 10^11 asked the
// allocator for 100 GB and aborted. It now checks the index against the
// stored shard first, and then reserves the output fallibly.
#[test]
fn issue_10_a_shard_declared_huge_is_checked_before_its_output_is_allocated() {
    let mut document = uint8_array_document(&[100_000_000_000], &[100_000_000_000]);
    document["codecs"] = serde_json::json!([{
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [10],
            "codecs": [{ "name": "bytes" }],
            "index_codecs": [{ "name": "bytes", "configuration": { "endian": "little" } }]
        }
    }]);
    let store = store_with_document(document);
    store
        .set(&StoreKey::new("c/0").unwrap(), b"0123456789")
        .unwrap();
    let array = Array::open(store, "/").unwrap();
    let err = array.read_chunk_bytes(&[0]).unwrap_err();
    assert!(
        matches!(&err, Error::Decode { key, .. } if key.as_str() == "c/0"),
        "{err:?}"
    );
    let message = format!("{:#}", anyhow_like(&err));
    assert!(message.contains("fewer than its index"), "{message}");
    // A region inside the shard reads its index alone, which is missing.
    let err = array
        .read_region_bytes(&Region::new(vec![0], vec![10]))
        .unwrap_err();
    assert!(err.to_string().contains("c/0"), "{err}");
}

/// The error and its sources, joined as `anyhow`'s `{:#}` prints them.
fn anyhow_like(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
