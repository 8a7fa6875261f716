//! Issue #17, "Faults": reads and writes through `store::testing::FaultStore`
//! give errors that name the key, never wrong values silently (within what
//! the format can tell: without a checksum a flipped bit may decode to other
//! numbers), and a failed write leaves the earlier data intact.

use crate::support::error_chain;
use serde_json::json;
use std::sync::Arc;
use zarrkit::codec::sharding::ShardingCodec;
use zarrkit::codec::{Codec, bytes::BytesCodec, crc32c::Crc32cCodec, zstd::ZstdCodec};
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::DataType;
use zarrkit::store::testing::{Fault, FaultOp, FaultRule, FaultStore, Trigger};
use zarrkit::store::{MemoryStore, Store, StoreKey};
use zarrkit::{Array, Group, Region};

const SHAPE: [u64; 2] = [16, 16];

fn bytes() -> Codec {
    Codec::ArrayToBytes(Arc::new(BytesCodec::little()))
}

fn crc32c() -> Codec {
    Codec::BytesToBytes(Arc::new(Crc32cCodec::new()))
}

fn zstd() -> Codec {
    Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()))
}

fn sharded(inner: Vec<Codec>) -> Codec {
    Codec::ArrayToBytes(Arc::new(ShardingCodec::new(&[4, 4], inner)))
}

/// A fault store over memory, and its `a` array of `SHAPE` u16 in 8×8
/// chunks with `codecs`, holding `values(1)`.
fn setup(codecs: Vec<Codec>) -> (Arc<FaultStore>, Array) {
    let store = Arc::new(FaultStore::new(Arc::new(MemoryStore::new())));
    let array = Array::builder(&SHAPE, DataType::UInt16, &[8, 8])
        .codecs(codecs)
        .create(Arc::clone(&store) as Arc<dyn Store>, "a")
        .unwrap();
    array.write_region(&whole(), &values(1)).unwrap();
    (store, array)
}

fn whole() -> Region {
    Region::whole(&SHAPE)
}

/// The array's values in generation `g`: every element distinct and never 0 (the fill value).
fn values(g: u16) -> Vec<u16> {
    (0..256u16).map(|i| 1 + i + 1000 * g).collect()
}

fn reopen(store: &Arc<FaultStore>) -> Array {
    Array::open(Arc::clone(store) as Arc<dyn Store>, "a").unwrap()
}

/// Reads the whole array through a fresh handle with `rule` injected, and
/// asserts that it fails naming `key`.
fn assert_read_fails_naming(store: &Arc<FaultStore>, rule: FaultRule, key: &str) {
    store.clear();
    store.inject(rule.clone());
    let result = reopen(store).read_region::<u16>(&whole());
    store.clear();
    match result {
        Ok(read) => panic!(
            "{rule:?}: read {} elements differing from what was written, and no error",
            read.iter()
                .zip(values(1))
                .filter(|(a, b)| **a != *b)
                .count()
        ),
        Err(err) => {
            let chain = error_chain(&err);
            assert!(chain.contains(&format!("`{key}`")), "{rule:?}: {chain}");
        }
    }
}

#[test]
fn a_flipped_bit_in_a_checksummed_chunk_is_an_error_naming_the_key() {
    let (store, _) = setup(vec![bytes(), crc32c()]);
    // A bit in the data, in the middle, and in the stored checksum itself.
    for byte in [0, 37, 127, -1, -4] {
        for bit in [0, 5] {
            let rule =
                FaultRule::new(FaultOp::Get, Fault::FlipBit { byte, bit }).keys_containing("c/0/1");
            assert_read_fails_naming(&store, rule, "a/c/0/1");
        }
    }
    assert_eq!(
        reopen(&store).read_region::<u16>(&whole()).unwrap(),
        values(1)
    );
}

#[test]
fn a_flipped_bit_in_a_shard_index_or_checksummed_inner_chunk_is_an_error_naming_the_shard() {
    // The index is at the end of the shard: 4 inner chunks × 16 bytes of
    // offsets and lengths, then its crc32c.
    let (store, _) = setup(vec![sharded(vec![bytes(), crc32c()])]);
    for byte in [-1, -4, -5, -20, -68] {
        let rule =
            FaultRule::new(FaultOp::Get, Fault::FlipBit { byte, bit: 3 }).keys_containing("c/1/0");
        assert_read_fails_naming(&store, rule.clone(), "a/c/1/0");
        // A read of one inner chunk goes through the partial decoder (the
        // index, then the inner chunk, by ranges): the same.
        store.inject(rule);
        let err = reopen(&store)
            .read_region::<u16>(&Region::new(vec![8, 0], vec![4, 4]))
            .unwrap_err();
        store.clear();
        assert!(
            error_chain(&err).contains("`a/c/1/0`"),
            "{}",
            error_chain(&err)
        );
    }
    // A bit of an inner chunk's data: its own crc32c catches it.
    for byte in [0, 31, 100] {
        let rule =
            FaultRule::new(FaultOp::Get, Fault::FlipBit { byte, bit: 0 }).keys_containing("c/1/1");
        assert_read_fails_naming(&store, rule, "a/c/1/1");
    }
    assert_eq!(
        reopen(&store).read_region::<u16>(&whole()).unwrap(),
        values(1)
    );
}

// The format's limit, documented in the README ("Crash safety and many
// writers"): a chunk without a checksum has no way to tell a flipped bit
// from data. Uncompressed, the flip changes exactly one element.
#[test]
fn without_a_checksum_a_flipped_bit_reads_as_other_values() {
    let (store, _) = setup(vec![bytes()]);
    store.inject(
        FaultRule::new(FaultOp::Get, Fault::FlipBit { byte: 2, bit: 0 }).keys_containing("c/0/0"),
    );
    let read = reopen(&store).read_region::<u16>(&whole()).unwrap();
    let mut expected = values(1);
    // Byte 2 is the low byte of element 1 of chunk 0/0 (little-endian).
    expected[1] ^= 1;
    assert_eq!(read, expected);

    // Compressed without a checksum, the decoder may notice (zstd's frame
    // has no content checksum here) or not: an error names the key, else
    // the values differ. Either way, not the written ones silently equal.
    let (store, _) = setup(vec![bytes(), zstd()]);
    let mut errors = 0;
    for byte in [4, 6, 10, -1, -3] {
        store.clear();
        store.inject(
            FaultRule::new(FaultOp::Get, Fault::FlipBit { byte, bit: 2 }).keys_containing("c/0/0"),
        );
        match reopen(&store).read_region::<u16>(&whole()) {
            Err(err) => {
                errors += 1;
                assert!(
                    error_chain(&err).contains("`a/c/0/0`"),
                    "{}",
                    error_chain(&err)
                );
            }
            Ok(read) => assert_ne!(read, values(1), "flip at byte {byte} went unseen"),
        }
    }
    eprintln!("zstd without a checksum: {errors} of 5 flips were decode errors");
}

#[test]
fn a_truncated_chunk_is_an_error_naming_the_key() {
    let cases: Vec<(&str, Vec<Codec>)> = vec![
        ("bytes", vec![bytes()]),
        ("bytes+crc32c", vec![bytes(), crc32c()]),
        ("bytes+zstd", vec![bytes(), zstd()]),
        ("sharded", vec![sharded(vec![bytes()])]),
        ("sharded zstd", vec![sharded(vec![bytes(), zstd()])]),
    ];
    for (name, codecs) in cases {
        let (store, _) = setup(codecs);
        let stored = store
            .inner()
            .get(&StoreKey::new("a/c/1/1").unwrap(), None)
            .unwrap()
            .unwrap()
            .len() as u64;
        for len in [0, 1, stored / 2, stored - 1] {
            let rule =
                FaultRule::new(FaultOp::Get, Fault::Truncate { len }).keys_containing("c/1/1");
            assert_read_fails_naming(&store, rule.clone(), "a/c/1/1");
            // And a read of a part of the chunk: an error naming the key,
            // or (where the codecs read only the bytes the part needs, and
            // the cut spared them: `bytes` alone) exactly the right values.
            store.inject(rule);
            let part = Region::new(vec![12, 12], vec![2, 2]);
            let result = reopen(&store).read_region::<u16>(&part);
            store.clear();
            match result {
                Err(err) => {
                    assert!(
                        error_chain(&err).contains("`a/c/1/1`"),
                        "{name}: {}",
                        error_chain(&err)
                    );
                }
                Ok(read) => {
                    assert_eq!(read, pick(&values(1), &part), "{name}: truncated to {len}");
                    assert!(
                        name == "bytes" && len > 92,
                        "{name}: truncated to {len} read without error"
                    );
                }
            }
        }
    }
}

#[test]
fn a_failed_read_or_listing_is_an_error_naming_the_key_or_prefix() {
    let (store, _) = setup(vec![bytes()]);
    store.inject(FaultRule::new(FaultOp::Get, Fault::Fail).keys_containing("c/1/0"));
    let err = reopen(&store).read_region::<u16>(&whole()).unwrap_err();
    let chain = error_chain(&err);
    assert!(
        chain.contains("`a/c/1/0`") && chain.contains("injected fault"),
        "{chain}"
    );
    store.clear();

    store.inject(FaultRule::new(FaultOp::Get, Fault::Fail).keys_containing("zarr.json"));
    let err = Array::open(Arc::clone(&store) as Arc<dyn Store>, "a").unwrap_err();
    assert!(
        error_chain(&err).contains("`a/zarr.json`"),
        "{}",
        error_chain(&err)
    );
    store.clear();

    store.inject(FaultRule::new(FaultOp::List, Fault::Fail));
    let err = store
        .list_prefix(&zarrkit::store::StorePrefix::new("a/").unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("`a/`"), "{err}");
}

#[test]
fn a_failed_whole_chunk_write_leaves_that_chunk_as_it_was_and_a_retry_succeeds() {
    let (store, array) = setup(vec![bytes(), crc32c()]);
    store.inject(
        FaultRule::new(FaultOp::Set, Fault::Fail)
            .keys_containing("c/1/0")
            .when(Trigger::Nth(1)),
    );
    let err = array.write_region(&whole(), &values(2)).unwrap_err();
    assert!(
        error_chain(&err).contains("`a/c/1/0`"),
        "{}",
        error_chain(&err)
    );
    // The chunks are written in parallel: each other one holds the old or
    // the new values, whole; the failed one the old.
    let read = reopen(&store).read_region::<u16>(&whole()).unwrap();
    for (ci, cj) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        let region = Region::new(vec![ci * 8, cj * 8], vec![8, 8]);
        let chunk = pick(&read, &region);
        let old = pick(&values(1), &region);
        let new = pick(&values(2), &region);
        if (ci, cj) == (1, 0) {
            assert_eq!(chunk, old, "the chunk whose write failed");
        } else {
            assert!(chunk == old || chunk == new, "chunk {ci}/{cj} is torn");
        }
    }
    // The rule fired once: the retry goes through.
    array.write_region(&whole(), &values(2)).unwrap();
    assert_eq!(
        reopen(&store).read_region::<u16>(&whole()).unwrap(),
        values(2)
    );
}

/// The elements of `region` out of a whole-array buffer.
fn pick(all: &[u16], region: &Region) -> Vec<u16> {
    let mut out = Vec::new();
    for i in region.start()[0]..region.start()[0] + region.shape()[0] {
        for j in region.start()[1]..region.start()[1] + region.shape()[1] {
            out.push(all[(i * SHAPE[1] + j) as usize]);
        }
    }
    out
}

#[test]
fn a_failed_partial_shard_write_leaves_the_shard_as_it_was_and_a_retry_succeeds() {
    let (store, array) = setup(vec![sharded(vec![bytes(), crc32c()])]);
    let inner = Region::new(vec![4, 8], vec![4, 4]);
    let update: Vec<u16> = (0..16).map(|i| 60_000 + i).collect();
    // The write of the shard fails; or its read does, or reads a shard
    // damaged (a flipped bit in the index, cut short): the write must stop
    // rather than store a shard rebuilt from damaged bytes.
    for (op, fault) in [
        (FaultOp::Set, Fault::Fail),
        (FaultOp::Get, Fault::Fail),
        (FaultOp::Get, Fault::FlipBit { byte: -2, bit: 6 }),
        (FaultOp::Get, Fault::Truncate { len: 40 }),
    ] {
        store.inject(FaultRule::new(op, fault).keys_containing("c/0/1"));
        let err = array.write_region(&inner, &update).unwrap_err();
        assert!(
            error_chain(&err).contains("`a/c/0/1`"),
            "{}",
            error_chain(&err)
        );
        store.clear();
        assert_eq!(
            reopen(&store).read_region::<u16>(&whole()).unwrap(),
            values(1)
        );
    }

    array.write_region(&inner, &update).unwrap();
    let read = reopen(&store).read_region::<u16>(&whole()).unwrap();
    assert_eq!(pick(&read, &inner), update);
    let mut expected = values(1);
    for (k, (i, j)) in (4..8)
        .flat_map(|i| (8..12).map(move |j| (i, j)))
        .enumerate()
    {
        expected[i * 16 + j] = update[k];
    }
    assert_eq!(read, expected);
}

#[test]
fn a_failed_metadata_write_leaves_the_document_as_it_was_and_a_retry_succeeds() {
    let (store, mut array) = setup(vec![bytes()]);
    array
        .set_attributes(json!({"generation": 1}).as_object().unwrap().clone())
        .unwrap();
    store.inject(FaultRule::new(FaultOp::Set, Fault::Fail).keys_containing("a/zarr.json"));
    let err = array
        .set_attributes(json!({"generation": 2}).as_object().unwrap().clone())
        .unwrap_err();
    assert!(
        error_chain(&err).contains("`a/zarr.json`"),
        "{}",
        error_chain(&err)
    );
    // The handle keeps what the store holds.
    assert_eq!(array.attributes()["generation"], 1);
    let err = array.resize(&[24, 24]).unwrap_err();
    assert!(
        error_chain(&err).contains("`a/zarr.json`"),
        "{}",
        error_chain(&err)
    );
    store.clear();
    let reopened = reopen(&store);
    assert_eq!(reopened.attributes()["generation"], 1);
    assert_eq!(reopened.shape(), SHAPE);
    assert_eq!(reopened.read_region::<u16>(&whole()).unwrap(), values(1));

    array
        .set_attributes(json!({"generation": 2}).as_object().unwrap().clone())
        .unwrap();
    let mut array = reopen(&store);
    array.resize(&[24, 24]).unwrap();
    let reopened = reopen(&store);
    assert_eq!(reopened.attributes()["generation"], 2);
    assert_eq!(reopened.shape(), [24, 24]);

    // A shrinking resize whose erase of the chunks now outside fails: the
    // document is written first, so the array opens at its new shape and
    // reads its elements; the chunk left outside the grid is what `check`
    // reports as `outside_grid`.
    let mut array = reopen(&store);
    store.inject(FaultRule::new(FaultOp::Erase, Fault::Fail));
    let result = array.resize(&[8, 8]);
    store.clear();
    let reopened = reopen(&store);
    match result {
        Err(err) => {
            assert!(
                error_chain(&err).contains("injected fault"),
                "{}",
                error_chain(&err)
            );
            assert!(reopened.shape() == [8, 8] || reopened.shape() == [24, 24]);
        }
        Ok(()) => assert_eq!(reopened.shape(), [8, 8]),
    }
    let corner = reopened
        .read_region::<u16>(&Region::new(vec![0, 0], vec![8, 8]))
        .unwrap();
    assert_eq!(
        corner,
        pick(&values(1), &Region::new(vec![0, 0], vec![8, 8]))
    );
}

#[test]
fn a_failed_consolidation_leaves_the_consolidated_metadata_as_it_was() {
    for format in [ZarrFormat::V3, ZarrFormat::V2] {
        let store = Arc::new(FaultStore::new(Arc::new(MemoryStore::new())));
        let dyn_store = Arc::clone(&store) as Arc<dyn Store>;
        Group::create_as(Arc::clone(&dyn_store), "/", format, Default::default()).unwrap();
        let mut child = Array::builder(&[4], DataType::UInt8, &[2])
            .format(format)
            .create(Arc::clone(&dyn_store), "x")
            .unwrap();
        child
            .set_attributes(json!({"generation": 1}).as_object().unwrap().clone())
            .unwrap();
        zarrkit::consolidate::consolidate(dyn_store.as_ref(), "/").unwrap();
        child
            .set_attributes(json!({"generation": 2}).as_object().unwrap().clone())
            .unwrap();

        let document = match format {
            ZarrFormat::V2 => ".zmetadata",
            _ => "zarr.json",
        };
        let before = store
            .inner()
            .get(&StoreKey::new(document).unwrap(), None)
            .unwrap()
            .unwrap();
        store.inject(FaultRule::new(FaultOp::Set, Fault::Fail).keys_containing(document));
        let err = zarrkit::consolidate::consolidate(dyn_store.as_ref(), "/").unwrap_err();
        assert!(
            error_chain(&err).contains(&format!("`{document}`")),
            "{}",
            error_chain(&err)
        );
        store.clear();
        // Byte for byte the document it was, and it still opens.
        let after = store
            .inner()
            .get(&StoreKey::new(document).unwrap(), None)
            .unwrap()
            .unwrap();
        assert_eq!(after, before, "{format:?}");
        let group = Group::open(Arc::clone(&dyn_store), "/").unwrap();
        assert!(group.is_consolidated(), "{format:?}");

        zarrkit::consolidate::consolidate(dyn_store.as_ref(), "/").unwrap();
        assert!(
            zarrkit::consolidate::check(dyn_store.as_ref(), "/")
                .unwrap()
                .is_empty(),
            "{format:?}"
        );
    }
}

#[test]
fn a_migration_whose_writes_fail_part_way_resumes_to_the_right_result() {
    use zarrkit::migrate::{self, MIGRATION_MARKER};
    let src: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::builder(&[40, 40], DataType::Int32, &[10, 10])
        .format(ZarrFormat::V2)
        .create(Arc::clone(&src), "/")
        .unwrap();
    let data: Vec<i32> = (0..1600).map(|i| i * 7 - 3).collect();
    array
        .write_region(&Region::whole(&[40, 40]), &data)
        .unwrap();

    let dst = Arc::new(FaultStore::new(Arc::new(MemoryStore::new())));
    let dyn_dst = Arc::clone(&dst) as Arc<dyn Store>;
    // The 7th write fails (a chunk: the migration keeps v2's `0.0` keys),
    // then the first document of the resumed run, then the erase of the
    // marker that ends it.
    for (step, rule) in [
        FaultRule::new(FaultOp::Set, Fault::Fail).when(Trigger::Nth(7)),
        FaultRule::new(FaultOp::Set, Fault::Fail)
            .keys_containing("zarr.json")
            .when(Trigger::Nth(1)),
        FaultRule::new(FaultOp::Erase, Fault::Fail).keys_containing(MIGRATION_MARKER),
    ]
    .into_iter()
    .enumerate()
    {
        dst.inject(rule);
        let plan = migrate::plan(Arc::clone(&src), Arc::clone(&dyn_dst), ZarrFormat::V3).unwrap();
        assert_eq!(plan.resumes(), step > 0, "step {step}");
        let err = migrate::migrate(&plan, &mut |_| {}).unwrap_err();
        assert!(
            error_chain(&err).contains("injected fault"),
            "step {step}: {}",
            error_chain(&err)
        );
        dst.clear();
        // Not taken for a finished array meanwhile.
        let err = migrate::check_finished(dyn_dst.as_ref()).unwrap_err();
        assert!(err.to_string().contains(MIGRATION_MARKER), "{err}");
    }
    let plan = migrate::plan(Arc::clone(&src), Arc::clone(&dyn_dst), ZarrFormat::V3).unwrap();
    assert!(plan.resumes());
    migrate::migrate(&plan, &mut |_| {}).unwrap();
    let migrated = Array::open(dyn_dst, "/").unwrap();
    assert_eq!(migrated.format(), ZarrFormat::V3);
    assert_eq!(
        migrated
            .read_region::<i32>(&Region::whole(&[40, 40]))
            .unwrap(),
        data
    );
}

#[test]
fn delays_change_nothing_but_the_time() {
    let (store, array) = setup(vec![sharded(vec![bytes(), crc32c()])]);
    store.inject(
        FaultRule::new(
            FaultOp::Get,
            Fault::Delay(std::time::Duration::from_millis(2)),
        )
        .when(Trigger::Every(3)),
    );
    store.inject(FaultRule::new(
        FaultOp::Set,
        Fault::Delay(std::time::Duration::from_millis(2)),
    ));
    let start = std::time::Instant::now();
    array
        .write_region(&Region::new(vec![2, 2], vec![10, 10]), &[7u16; 100])
        .unwrap();
    let read = reopen(&store).read_region::<u16>(&whole()).unwrap();
    assert!(start.elapsed() >= std::time::Duration::from_millis(2));
    assert!(store.injected() > 0);
    let mut expected = values(1);
    for i in 2..12 {
        for j in 2..12 {
            expected[i * 16 + j] = 7;
        }
    }
    assert_eq!(read, expected);
}
