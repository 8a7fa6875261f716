//! Store backends: the shared conformance suite on each, and the filesystem
//! store's guarantees (atomic writes, no escaping the root, cleanup).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use zarrkit::store::{
    ByteRange, FilesystemStore, MemoryStore, Store, StoreError, StoreKey, StorePrefix, testing,
};

fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

fn prefix(s: &str) -> StorePrefix {
    StorePrefix::new(s).unwrap()
}

fn temp_store() -> (tempfile::TempDir, FilesystemStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path().join("store")).unwrap();
    (dir, store)
}

/// Every path under `dir`, relative to it, with `/` separators, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if entry.file_type().unwrap().is_dir() {
                out.push(format!("{relative}/"));
                walk(root, &path, out);
            } else {
                out.push(relative);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn memory_store_passes_the_conformance_suite() {
    testing::run_all(&MemoryStore::new());
}

#[test]
fn filesystem_store_passes_the_conformance_suite() {
    let (_dir, store) = temp_store();
    testing::run_all(&store);
}

#[test]
fn filesystem_store_passes_the_suite_through_a_dyn_store() {
    let (_dir, store) = temp_store();
    let store: std::sync::Arc<dyn Store> = std::sync::Arc::new(store);
    testing::run_all(store.as_ref());
}

#[test]
fn atomic_sets_leave_no_temporary_files_behind() {
    let (_dir, store) = temp_store();
    for i in 0..200u32 {
        let value = vec![(i % 251) as u8; (i as usize * 37) % 5000];
        store.set(&key(&format!("a/c/{}", i % 7)), &value).unwrap();
        store.set(&key("a/zarr.json"), &i.to_le_bytes()).unwrap();
    }
    let mut expected: Vec<String> = (0..7).map(|i| format!("a/c/{i}")).collect();
    expected.extend(["a/".into(), "a/c/".into(), "a/zarr.json".into()]);
    expected.sort();
    assert_eq!(tree(store.root()), expected);
    assert_eq!(
        store.get(&key("a/zarr.json"), None).unwrap().unwrap(),
        199u32.to_le_bytes()
    );
}

#[test]
fn concurrent_readers_never_see_a_partly_written_value() {
    let (_dir, store) = temp_store();
    // Two values that differ in every byte and in length, so a torn or
    // truncated read cannot pass for either.
    let first = vec![0xAA_u8; 1 << 20];
    let second = vec![0x55_u8; 3 << 19];
    let k = key("array/c/0/0");
    store.set(&k, &first).unwrap();
    let writing = AtomicBool::new(true);
    std::thread::scope(|scope| {
        let readers: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| {
                    let mut reads = 0u32;
                    while writing.load(Ordering::Acquire) || reads == 0 {
                        let value = store.get(&k, None).unwrap().expect("the key always exists");
                        assert!(
                            value == first || value == second,
                            "read {} bytes starting {:?}, neither value",
                            value.len(),
                            &value[..value.len().min(4)]
                        );
                        let tail = store.get(&k, Some(ByteRange::Suffix(16))).unwrap().unwrap();
                        assert!(tail == [0xAA; 16] || tail == [0x55; 16], "{tail:?}");
                        reads += 1;
                    }
                    reads
                })
            })
            .collect();
        for i in 0..200 {
            store
                .set(&k, if i % 2 == 0 { &second } else { &first })
                .unwrap();
        }
        writing.store(false, Ordering::Release);
        for reader in readers {
            assert!(reader.join().unwrap() > 0);
        }
    });
    assert_eq!(
        tree(store.root()),
        ["array/", "array/c/", "array/c/0/", "array/c/0/0"]
    );
}

#[test]
fn concurrent_sets_to_different_keys_all_land() {
    let (_dir, store) = temp_store();
    std::thread::scope(|scope| {
        for thread in 0..8 {
            let store = &store;
            scope.spawn(move || {
                for j in 0..40 {
                    // Shared parents are created by several threads at once.
                    let k = key(&format!("shared/c/{}/{thread}.{j}", j % 4));
                    store.set(&k, format!("{thread}:{j}").as_bytes()).unwrap();
                    // A key set and erased in a directory that other threads
                    // are also emptying and refilling.
                    let churn = key(&format!("churn/d/{thread}"));
                    store.set(&churn, b"x").unwrap();
                    store.erase(&churn).unwrap();
                }
            });
        }
    });
    let keys = store.list_prefix(&prefix("shared/")).unwrap();
    assert_eq!(keys.len(), 8 * 40);
    for thread in 0..8 {
        for j in 0..40 {
            let k = key(&format!("shared/c/{}/{thread}.{j}", j % 4));
            assert_eq!(
                store.get(&k, None).unwrap().as_deref(),
                Some(format!("{thread}:{j}").as_bytes())
            );
        }
    }
    assert!(store.list_prefix(&prefix("churn/")).unwrap().is_empty());
    assert!(!store.root().join("churn").exists());
}

#[test]
fn keys_and_prefixes_that_could_escape_the_root_cannot_be_made() {
    for bad in [
        "..",
        "../x",
        "a/..",
        "a/../../x",
        ".",
        "./a",
        "/abs",
        "/",
        "",
        "a//b",
        "a/",
        "a\\b",
        "..\\x",
        "a\0b",
    ] {
        let err = StoreKey::new(bad).unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidKey { .. }),
            "key {bad:?}: {err:?}"
        );
    }
    for bad in [
        "../", "a/../", "./", "/", "/a/", "a//", "a\\b/", "a\0/", "a",
    ] {
        let err = StorePrefix::new(bad).unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidKey { .. }),
            "prefix {bad:?}: {err:?}"
        );
    }
    // Joining a name onto a valid prefix validates the result too.
    assert!(prefix("a/").key("../b").is_err());
    assert!(prefix("a/").child("..").is_err());
    assert!(StorePrefix::root().key("/etc/passwd").is_err());
}

#[test]
fn filesystem_store_writes_nothing_outside_its_root() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("secret"), b"keep").unwrap();
    let store = FilesystemStore::new(dir.path().join("store")).unwrap();
    testing::run_all(&store);
    store.set(&key("a/b"), b"x").unwrap();
    store.erase_prefix(&StorePrefix::root()).unwrap();
    store.set(&key("c"), b"x").unwrap();
    store.erase(&key("c")).unwrap();
    // The root survives, emptied; its sibling is untouched.
    assert_eq!(tree(dir.path()), ["secret", "store/"]);
    assert_eq!(fs::read(dir.path().join("secret")).unwrap(), b"keep");
}

#[test]
fn erase_removes_directories_it_leaves_empty() {
    let (_dir, store) = temp_store();
    store.set(&key("g/a/c/0/0"), b"1").unwrap();
    store.set(&key("g/a/c/0/1"), b"2").unwrap();
    store.set(&key("g/zarr.json"), b"{}").unwrap();
    store.erase(&key("g/a/c/0/0")).unwrap();
    assert_eq!(
        tree(store.root()),
        [
            "g/",
            "g/a/",
            "g/a/c/",
            "g/a/c/0/",
            "g/a/c/0/1",
            "g/zarr.json"
        ]
    );
    store.erase(&key("g/a/c/0/1")).unwrap();
    assert_eq!(tree(store.root()), ["g/", "g/zarr.json"]);
    assert!(store.list_dir(&prefix("g/")).unwrap().prefixes.is_empty());
}

#[test]
fn a_file_where_a_directory_is_expected_reads_as_none() {
    let (_dir, store) = temp_store();
    fs::write(store.root().join("group"), b"not a directory").unwrap();
    assert_eq!(store.get(&key("group/zarr.json"), None).unwrap(), None);
    assert_eq!(store.size(&key("group/zarr.json")).unwrap(), None);
    assert!(store.list_prefix(&prefix("group/")).unwrap().is_empty());
}

#[cfg(unix)]
mod symlinks {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_root_reached_through_a_symlink_works() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        symlink(&real, &link).unwrap();
        let store = FilesystemStore::open_existing(link.join(".")).unwrap();
        testing::run_all(&store);
        store.set(&key("a/zarr.json"), b"{}").unwrap();
        assert_eq!(fs::read(real.join("a/zarr.json")).unwrap(), b"{}");
        // A new root below a link is created inside the link's target.
        let nested = FilesystemStore::new(link.join("nested/store")).unwrap();
        nested.set(&key("k"), b"v").unwrap();
        assert!(real.join("nested/store/k").is_file());
    }

    #[test]
    fn links_inside_the_store_are_followed_and_loops_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("chunk"), b"data").unwrap();
        let (_store_dir, store) = temp_store();
        // These links lead out of the root: followed only when asked (#10).
        let store = store.follow_links_outside_root(true);
        store.set(&key("a/zarr.json"), b"{}").unwrap();
        symlink(&outside, store.root().join("linked")).unwrap();
        symlink(outside.join("chunk"), store.root().join("a/file_link")).unwrap();
        // A link back to an ancestor: following it would never end.
        symlink(store.root().join("a"), store.root().join("a/loop")).unwrap();
        symlink(dir.path().join("nowhere"), store.root().join("a/broken")).unwrap();

        assert_eq!(
            store.list().unwrap(),
            [key("a/file_link"), key("a/zarr.json"), key("linked/chunk")]
        );
        let root_dir = store.list_dir(&prefix("a/")).unwrap();
        assert_eq!(root_dir.keys, [key("a/file_link"), key("a/zarr.json")]);
        // A link to a directory that contains it is a loop: `tree` on a v3
        // draft store descended it forever before #10.
        assert!(root_dir.prefixes.is_empty(), "{:?}", root_dir.prefixes);
        assert_eq!(store.skipped_links()[0].path, "a/loop");
        assert_eq!(
            store.get(&key("linked/chunk"), None).unwrap().unwrap(),
            b"data"
        );
        assert_eq!(store.get(&key("a/broken"), None).unwrap(), None);

        // Erasing through a link removes the link, not what it points to.
        store.erase_prefix(&prefix("linked/")).unwrap();
        assert_eq!(store.get(&key("linked/chunk"), None).unwrap(), None);
        store.erase(&key("a/file_link")).unwrap();
        assert_eq!(fs::read(outside.join("chunk")).unwrap(), b"data");
        store.erase_prefix(&StorePrefix::root()).unwrap();
        assert_eq!(tree(&outside), ["chunk"]);
        assert_eq!(tree(dir.path()), ["outside/", "outside/chunk"]);
    }
}

#[test]
fn errors_name_the_key() {
    let (_dir, store) = temp_store();
    store.set(&key("a"), b"file").unwrap();
    let err = store.set(&key("a/b/c"), b"x").unwrap_err();
    assert!(err.to_string().contains("`a/b/c`"), "{err}");
    let err = store
        .get(&key("a"), Some(ByteRange::new(2, 9)))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "bytes 2..11 is out of bounds for `a` (4 bytes) in filesystem store"
    );
    let err = store
        .set_partial_values(&[(key("a"), 5, b"x".to_vec())])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot write at offset 5 of `a` (4 bytes) in filesystem store"
    );
}

#[test]
fn both_backends_list_the_same_keys_in_the_same_order() {
    let (_dir, fs_store) = temp_store();
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let names = [
        "z", "a-b/c", "a.b", "a/b", "a/b.c/d", "a/b-c", "a/b/c", "ä/ß", "A/x", "_/y", "0/0", "0.0",
    ];
    // `a/b` and `a/b/c` cannot both exist on a filesystem; keep the first.
    let mut set = BTreeSet::new();
    for name in names {
        let k = key(name);
        if fs_store.set(&k, name.as_bytes()).is_ok() {
            memory.set(&k, name.as_bytes()).unwrap();
            set.insert(k);
        }
    }
    let expected: Vec<StoreKey> = set.into_iter().collect();
    assert_eq!(fs_store.list().unwrap(), expected);
    assert_eq!(memory.list().unwrap(), expected);
    for p in ["", "a/", "a/b.c/", "ä/"] {
        assert_eq!(
            fs_store.list_dir(&prefix(p)).unwrap(),
            memory.list_dir(&prefix(p)).unwrap(),
            "list_dir `{p}`"
        );
    }
}

#[test]
fn setting_a_key_where_a_directory_stands_fails_and_keeps_the_directory() {
    let (_dir, store) = temp_store();
    store.set(&key("a/b"), b"inner").unwrap();
    // `a` is a directory: replacing it with a value must fail, not swap the
    // directory (and the value under it) away.
    assert!(store.set(&key("a"), b"outer").is_err());
    assert_eq!(store.get(&key("a/b"), None).unwrap().unwrap(), b"inner");
    assert_eq!(tree(store.root()), vec!["a/", "a/b"]);
}

#[test]
fn rewriting_values_replaces_them_and_leaves_no_old_copies() {
    let (_dir, store) = temp_store();
    for round in 0..50u8 {
        for k in ["c/0/0", "c/0/1", "c/1/0"] {
            store
                .set(&key(k), &vec![round; 1000 + usize::from(round)])
                .unwrap();
        }
    }
    for k in ["c/0/0", "c/0/1", "c/1/0"] {
        assert_eq!(store.get(&key(k), None).unwrap().unwrap(), vec![49u8; 1049]);
    }
    assert_eq!(
        tree(store.root()),
        vec!["c/", "c/0/", "c/0/0", "c/0/1", "c/1/", "c/1/0"]
    );
}

/// Issue #13: against a store with a round trip per read, the read engine
/// keeps the store's whole concurrency in flight (64 by default for a
/// remote store), whatever the number of cores. Counted by the store, not
/// timed; `examples/latency.rs` measures the time.
#[test]
fn reads_keep_the_stores_concurrency_in_flight() {
    use std::time::Duration;
    use zarrkit::store::testing::LatencyStore;
    use zarrkit::{Array, Region, metadata::DataType};
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let shape = [64u64, 64, 128];
    let array = Array::builder(&shape, DataType::UInt16, &[8, 8, 16])
        .create(Arc::clone(&memory), "/a")
        .unwrap();
    let data: Vec<u16> = (0..64 * 64 * 128).map(|i| (i % 1000) as u16).collect();
    let region = Region::whole(&shape);
    array.write_region(&region, &data).unwrap();
    let slow = Arc::new(LatencyStore::new(memory, Duration::from_millis(20), 64));
    let array = Array::open(Arc::clone(&slow) as Arc<dyn Store>, "/a").unwrap();
    slow.reset_counts();
    assert_eq!(array.read_region::<u16>(&region).unwrap(), data);
    assert_eq!(slow.reads(), 512);
    assert_eq!(slow.peak_in_flight(), 64);
}

/// Issue #13: whole chunks written to a store with a round trip per write
/// are stored many at once (a batch encoded while the one before is
/// stored), not one per encoding thread; every value arrives.
#[test]
fn writes_keep_many_chunks_in_flight_on_a_remote_store() {
    use std::time::Duration;
    use zarrkit::store::testing::LatencyStore;
    use zarrkit::{Array, Region, metadata::DataType};
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let slow = Arc::new(LatencyStore::new(
        Arc::clone(&memory),
        Duration::from_millis(100),
        64,
    ));
    let shape = [64u64, 64, 128];
    let array = Array::builder(&shape, DataType::UInt16, &[8, 8, 16])
        .create(Arc::clone(&slow) as Arc<dyn Store>, "/a")
        .unwrap();
    let data: Vec<u16> = (0..64 * 64 * 128).map(|i| (i % 1000) as u16).collect();
    let region = Region::whole(&shape);
    array.write_region(&region, &data).unwrap();
    // 512 chunks: batches of 64 stored at once by the remote pool's 64
    // threads (rayon's splitting lets a few take two in turn), far more
    // than the 2 to 8 encoding threads.
    let peak = slow.peak_writes_in_flight();
    assert!((32..=64).contains(&peak), "{peak} writes in flight at most");
    let direct = Array::open(memory, "/a").unwrap();
    assert_eq!(direct.read_region::<u16>(&region).unwrap(), data);
}

/// Issue #13: opening a hierarchy with consolidated metadata and walking
/// it (what `zarrkit tree` does) takes one round trip on a remote store:
/// the root's documents of every format, asked for at once, and nothing
/// after them.
#[test]
fn walking_a_consolidated_v3_hierarchy_takes_one_round_trip() {
    use std::time::Duration;
    use zarrkit::store::testing::LatencyStore;
    use zarrkit::{Array, Group, metadata::DataType, metadata::JsonMap};
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::create(Arc::clone(&memory), "/", JsonMap::new()).unwrap();
    Group::create(Arc::clone(&memory), "/g", JsonMap::new()).unwrap();
    for path in ["/g/a", "/g/b", "/c"] {
        Array::builder(&[10], DataType::Int32, &[5])
            .create(Arc::clone(&memory), path)
            .unwrap();
    }
    zarrkit::format::consolidate::consolidate(memory.as_ref(), "/").unwrap();
    // Long enough that every request of the batch starts before the first
    // ends, however loaded the machine.
    let counted = Arc::new(LatencyStore::new(memory, Duration::from_millis(250), 64));
    let root = Group::open(Arc::clone(&counted) as Arc<dyn Store>, "/").unwrap();
    assert_eq!(root.walk().unwrap().len(), 4);
    assert_eq!(counted.peak_in_flight(), counted.reads());
}

/// Issue #13: partial reads of shards (an index, then inner chunks, per
/// shard) from a store with a round trip per read also overlap, beyond
/// one shard per core. Counted by the store, as shards read at once.
#[cfg(feature = "zstd")]
#[test]
fn partial_shard_reads_overlap_on_a_store_with_latency() {
    use std::time::Duration;
    use zarrkit::codec::sharding::ShardingCodec;
    use zarrkit::codec::{Codec, bytes::BytesCodec, zstd::ZstdCodec};
    use zarrkit::store::testing::LatencyStore;
    use zarrkit::{Array, Region, metadata::DataType};
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let zstd = Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()));
    let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
    let sharding = Codec::ArrayToBytes(Arc::new(ShardingCodec::new(&[4, 4], vec![bytes, zstd])));
    let shape = [128u64, 128];
    let array = Array::builder(&shape, DataType::UInt16, &[16, 16])
        .codecs(vec![sharding])
        .create(Arc::clone(&memory), "/s")
        .unwrap();
    let data: Vec<u16> = (0..128 * 128).map(|i| (i % 977) as u16).collect();
    array.write_region(&Region::whole(&shape), &data).unwrap();
    // 100 ms a request: long enough that the 8 reads overlap even when
    // the remote pool's 64 threads are still starting on a loaded
    // machine (with 20 ms, one run under the whole suite saw fewer).
    let slow = Arc::new(LatencyStore::new(memory, Duration::from_millis(100), 64));
    let array = Array::open(Arc::clone(&slow) as Arc<dyn Store>, "/s").unwrap();
    slow.reset_counts();
    // The 8 shards of the first column, each covered in part.
    let region = Region::new(vec![0, 1], vec![128, 14]);
    let got: Vec<u16> = array.read_region(&region).unwrap();
    for (i, row) in got.chunks(14).enumerate() {
        let start = i * 128 + 1;
        assert_eq!(row, &data[start..start + 14], "row {i}");
    }
    // All 8 shards are read at once, whatever the number of cores.
    assert_eq!(slow.peak_keys_in_flight(), 8);
}

/// Issue #13: reading a node on a remote store asks for every format's
/// documents at once, not one format after another: a v2 group (after no
/// `zarr.json`, no `.zarray`) costs one round trip, not four.
#[test]
fn reading_a_v2_group_on_a_remote_store_reads_its_documents_at_once() {
    use std::time::Duration;
    use zarrkit::format::ZarrFormat;
    use zarrkit::store::testing::LatencyStore;
    use zarrkit::{Group, metadata::JsonMap};
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::create_as(Arc::clone(&memory), "/", ZarrFormat::V2, JsonMap::new()).unwrap();
    let counted = LatencyStore::new(memory, Duration::from_millis(20), 64);
    let (format, _) = zarrkit::format::read_node(&counted, &zarrkit::NodePath::root())
        .unwrap()
        .unwrap();
    assert_eq!(format, ZarrFormat::V2);
    // Everything read was read at once: one round trip.
    assert_eq!(counted.peak_in_flight(), counted.reads());
}

/// Issue #13: the bytes in flight stay within the array's budget: a budget
/// of three batches of 16 chunks keeps 16 requests in flight, not 64.
#[test]
fn the_in_flight_budget_bounds_the_requests_in_flight() {
    use std::time::Duration;
    use zarrkit::store::testing::LatencyStore;
    use zarrkit::{Array, Region, metadata::DataType};
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let shape = [64u64, 64, 128];
    let array = Array::builder(&shape, DataType::UInt16, &[8, 8, 16])
        .create(Arc::clone(&memory), "/a")
        .unwrap();
    let data: Vec<u16> = (0..64 * 64 * 128).map(|i| (i % 1000) as u16).collect();
    let region = Region::whole(&shape);
    array.write_region(&region, &data).unwrap();
    let slow = Arc::new(LatencyStore::new(memory, Duration::from_millis(5), 64));
    let mut array = Array::open(Arc::clone(&slow) as Arc<dyn Store>, "/a").unwrap();
    // 8 × 8 × 16 two-byte elements: 2 KiB a chunk.
    array.set_in_flight_bytes(3 * 16 * 2048);
    slow.reset_counts();
    assert_eq!(array.read_region::<u16>(&region).unwrap(), data);
    assert_eq!(slow.peak_in_flight(), 16);
}

/// Issue #13: the children of a group without consolidated metadata open
/// at once on a remote store (each child's documents a round trip), not one
/// after another.
#[test]
fn a_groups_children_open_at_once_on_a_remote_store() {
    use std::time::Duration;
    use zarrkit::store::testing::LatencyStore;
    use zarrkit::{Array, Group, metadata::DataType, metadata::JsonMap};
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::create(Arc::clone(&memory), "/", JsonMap::new()).unwrap();
    for i in 0..8 {
        Array::builder(&[10], DataType::Int32, &[5])
            .create(Arc::clone(&memory), &format!("/a{i}"))
            .unwrap();
    }
    // Long enough that every request of the batch starts before the first
    // ends, however loaded the machine.
    let counted = Arc::new(LatencyStore::new(memory, Duration::from_millis(250), 64));
    let root = Group::open(Arc::clone(&counted) as Arc<dyn Store>, "/").unwrap();
    counted.reset_counts();
    assert_eq!(root.children().unwrap().len(), 8);
    // The children's documents (each child's `zarr.json`) were read in one
    // batch, all in flight together: 8, not 1; and each once (before,
    // each child was looked for and then opened, probing 6 documents).
    assert_eq!(counted.peak_in_flight(), 8);
    assert_eq!(counted.reads(), 8);
}
