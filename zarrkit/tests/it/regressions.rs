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

/// 2^50: a byte count beyond any address space (x86-64 and AArch64 give a
/// process at most 2^48 bytes), so that if a fix regresses, the allocation
/// fails at once (an abort, which fails the test) rather than succeeding
/// lazily where memory is overcommitted and then exhausting the machine.
const BEYOND_ADDRESS_SPACE: u64 = 1 << 50;

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
    let columns = BEYOND_ADDRESS_SPACE;
    let store = store_with_document(uint8_array_document(&[1000, columns], &[1, 1]));
    let mut array = Array::open(store, "/").unwrap();
    assert_eq!(array.memory_budget(), zarrkit::DEFAULT_MEMORY_BUDGET);
    let row = Region::new(vec![0, 0], vec![1, columns]);
    let err = array.read_region_bytes(&row).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::MemoryBudget { needed, budget, .. }
                if *needed == columns && *budget == zarrkit::DEFAULT_MEMORY_BUDGET
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("array `/`"), "{message}");
    assert!(message.contains(&format!("[1, {columns}]")), "{message}");
    assert!(array.read_region::<u8>(&row).is_err());

    // What fits the budget reads as before: unwritten chunks are the fill value.
    let small = Region::new(vec![999, columns - 10], vec![1, 10]);
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
    let store = store_with_document(uint8_array_document(&[1000, BEYOND_ADDRESS_SPACE], &[1, 1]));
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
// allocator for 100 GB and aborted (here 2^50, see `BEYOND_ADDRESS_SPACE`). It now checks the index against the
// stored shard first, and then reserves the output fallibly.
#[test]
fn issue_10_a_shard_declared_huge_is_checked_before_its_output_is_allocated() {
    let n = BEYOND_ADDRESS_SPACE;
    let mut document = uint8_array_document(&[n], &[n]);
    document["codecs"] = serde_json::json!([{
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [16],
            "codecs": [{ "name": "bytes" }],
            "index_codecs": [{ "name": "bytes", "configuration": { "endian": "little" } }]
        }
    }]);
    let store = store_with_document(document);
    store
        .set(&StoreKey::new("c/0").unwrap(), b"0123456789")
        .unwrap();
    let mut array = Array::open(store, "/").unwrap();
    // The codec itself must not trust the shape: no budget stops it here.
    array.set_memory_budget(u64::MAX);
    let err = array.read_chunk_bytes(&[0]).unwrap_err();
    assert!(
        matches!(&err, Error::Decode { key, .. } if key.as_str() == "c/0"),
        "{err:?}"
    );
    let cause = std::error::Error::source(&err).map(ToString::to_string);
    assert!(
        cause
            .as_deref()
            .is_some_and(|c| c.contains("the shard has 10 bytes, fewer than its index")),
        "{cause:?}"
    );
    // A region inside the shard reads its index alone, which is missing.
    let err = array
        .read_region_bytes(&Region::new(vec![0], vec![10]))
        .unwrap_err();
    assert!(err.to_string().contains("c/0"), "{err}");
}

/// A filesystem store in a fresh directory, with `dir` (the parent of its
/// root `store`) to put things outside it.
#[cfg(unix)]
fn filesystem_store() -> (tempfile::TempDir, zarrkit::store::FilesystemStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = zarrkit::store::FilesystemStore::new(dir.path().join("store")).unwrap();
    (dir, store)
}

#[cfg(unix)]
fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

#[cfg(unix)]
fn prefix(s: &str) -> zarrkit::store::StorePrefix {
    zarrkit::store::StorePrefix::new(s).unwrap()
}

// Issue #10: `list_dir` reported a directory link as a prefix whatever it
// pointed to, so in the v3 drafts, where every directory is an implicit
// group, `tree` descended `meta/root/l1 -> ../root` forever
// (`meta/root/l1/l1/l1/...`); and a link to itself failed the whole
// listing with "too many levels of symbolic links". Listings now skip a
// directory link to a directory containing any directory being listed,
// and unresolvable links, and record what they skipped.
#[cfg(unix)]
#[test]
fn issue_10_listings_skip_link_loops_and_report_them() {
    use std::os::unix::fs::symlink;
    use zarrkit::store::SkipReason;
    let (_dir, store) = filesystem_store();
    store.set(&key("meta/root/x.array.json"), b"{}").unwrap();
    store.set(&key("a/v"), b"1").unwrap();
    store.set(&key("c/w"), b"2").unwrap();
    let root = store.root().to_path_buf();
    symlink("../root", root.join("meta/root/l1")).unwrap();
    symlink("..", root.join("meta/root/up")).unwrap();
    symlink("self", root.join("meta/root/self")).unwrap();
    // A loop through two links: a/b -> c, c/x -> a.
    symlink("../c", root.join("a/b")).unwrap();
    symlink("../a", root.join("c/x")).unwrap();

    let listing = store.list_dir(&prefix("meta/root/")).unwrap();
    assert_eq!(listing.keys, [key("meta/root/x.array.json")]);
    assert!(listing.prefixes.is_empty(), "{:?}", listing.prefixes);
    let skipped = store.skipped_links();
    let reasons: Vec<(&str, &SkipReason)> = skipped
        .iter()
        .map(|link| (link.path.as_str(), &link.reason))
        .collect();
    assert_eq!(reasons.len(), 3, "{skipped:?}");
    assert_eq!(reasons[0], ("meta/root/l1", &SkipReason::Loop));
    assert_eq!(reasons[2].0, "meta/root/up");
    assert!(
        matches!(
            reasons[1],
            ("meta/root/self", SkipReason::Unresolvable { .. })
        ),
        "{skipped:?}"
    );
    assert!(
        skipped[0]
            .to_string()
            .contains("which contains it (a loop)"),
        "{}",
        skipped[0]
    );

    // The link between siblings is followed once, then the way back is a loop.
    let listing = store.list_dir(&prefix("a/b/")).unwrap();
    assert_eq!(listing.keys, [key("a/b/w")]);
    assert!(listing.prefixes.is_empty(), "{:?}", listing.prefixes);
    let keys = store.list().unwrap();
    assert_eq!(
        keys,
        [
            key("a/b/w"),
            key("a/v"),
            key("c/w"),
            key("c/x/v"),
            key("meta/root/x.array.json")
        ]
    );
}

// Issue #10: the store followed every symbolic link, so a store from
// elsewhere whose chunk `c/0` linked to `/etc/passwd` exported that file,
// and a directory link out of the root let erase and set reach files
// outside it. Following links out of the root is now an option, off by
// default; without it such keys are refused by name and listings skip them.
#[cfg(unix)]
#[test]
fn issue_10_links_out_of_the_root_are_refused_unless_followed() {
    use std::os::unix::fs::symlink;
    use zarrkit::store::{ByteRange, SkipReason, StoreError};
    let (dir, store) = filesystem_store();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret"), b"secret bytes").unwrap();
    let root = store.root().to_path_buf();
    store.set(&key("a/zarr.json"), b"{}").unwrap();
    std::fs::create_dir(root.join("c")).unwrap();
    symlink(outside.join("secret"), root.join("c/0")).unwrap();
    symlink(&outside, root.join("ext")).unwrap();
    // Links that stay inside the root, relative and absolute, keep working.
    symlink("../a/zarr.json", root.join("c/1")).unwrap();
    symlink(root.join("a"), root.join("abs")).unwrap();

    let refused = |err: StoreError, name: &str| {
        assert!(
            matches!(&err, StoreError::LinkOutsideRoot { key, .. } if key == name),
            "{err:?}"
        );
        assert!(err.to_string().contains(&format!("`{name}`")), "{err}");
    };
    refused(store.get(&key("c/0"), None).unwrap_err(), "c/0");
    refused(
        store
            .get(&key("c/0"), Some(ByteRange::Suffix(5)))
            .unwrap_err(),
        "c/0",
    );
    refused(
        store.get_partial_values(&[(key("c/0"), None)]).unwrap_err(),
        "c/0",
    );
    refused(store.size(&key("c/0")).unwrap_err(), "c/0");
    refused(
        store.get(&key("ext/secret"), None).unwrap_err(),
        "ext/secret",
    );
    // Writes and erases through the link would change files outside.
    refused(store.set(&key("ext/new"), b"x").unwrap_err(), "ext/new");
    refused(store.erase(&key("ext/secret")).unwrap_err(), "ext/secret");
    refused(
        store
            .set_partial_values(&[(key("c/0"), 0, b"XX".to_vec())])
            .unwrap_err(),
        "c/0",
    );
    assert_eq!(
        std::fs::read(outside.join("secret")).unwrap(),
        b"secret bytes"
    );
    assert!(!outside.join("new").exists());

    assert_eq!(store.get(&key("c/1"), None).unwrap().unwrap(), b"{}");
    assert_eq!(
        store.get(&key("abs/zarr.json"), None).unwrap().unwrap(),
        b"{}"
    );
    assert_eq!(store.get(&key("c/2"), None).unwrap(), None);
    assert_eq!(
        store.list().unwrap(),
        [key("a/zarr.json"), key("abs/zarr.json"), key("c/1")]
    );
    let skipped = store.skipped_links();
    let paths: Vec<(&str, &SkipReason)> = skipped
        .iter()
        .map(|l| (l.path.as_str(), &l.reason))
        .collect();
    assert_eq!(
        paths,
        [
            ("c/0", &SkipReason::OutsideRoot),
            ("ext", &SkipReason::OutsideRoot)
        ]
    );

    // Asked to, the store follows them.
    let store = store.follow_links_outside_root(true);
    assert_eq!(
        store.get(&key("c/0"), None).unwrap().unwrap(),
        b"secret bytes"
    );
    assert_eq!(
        store.list().unwrap(),
        [
            key("a/zarr.json"),
            key("abs/zarr.json"),
            key("c/0"),
            key("c/1"),
            key("ext/secret")
        ]
    );
}

// Issue #10: a chunk that reaches past the array's edge was decoded whole
// even when the chain can decode part of it, so an array of 10 elements
// whose document declares shards of 10^11 allocated the whole declared
// shard (after the index check, for a shard whose index is valid). Such
// chunks now go through the partial decoder, which reads the index and
// only the inner chunks inside the array; a whole-chunk decode larger
// than the memory budget is refused.
#[test]
fn issue_10_an_edge_chunk_declared_huge_decodes_only_what_the_array_holds() {
    let mut document = uint8_array_document(&[10], &[BEYOND_ADDRESS_SPACE]);
    document["codecs"] = serde_json::json!([{
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [BEYOND_ADDRESS_SPACE],
            "codecs": [{ "name": "bytes" }],
            "index_codecs": [{ "name": "bytes", "configuration": { "endian": "little" } }]
        }
    }]);
    let store = store_with_document(document);
    // A valid shard: its one inner chunk is not stored.
    store
        .set(&StoreKey::new("c/0").unwrap(), &[0xff; 16])
        .unwrap();
    let array = Array::open(Arc::clone(&store), "/").unwrap();
    let whole = Region::whole(array.shape());
    assert_eq!(array.read_region_bytes(&whole).unwrap(), vec![7u8; 10]);

    // Decoding the whole chunk needs its declared size: over the budget.
    let err = array.read_chunk_bytes(&[0]).unwrap_err();
    assert!(
        matches!(&err, Error::MemoryBudget { needed, what, .. }
            if *needed == BEYOND_ADDRESS_SPACE && what.contains("`c/0`")),
        "{err:?}"
    );
}
