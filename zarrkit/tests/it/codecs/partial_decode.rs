//! Region reads of chunks coded `bytes` then one compressor that decodes
//! part of a chunk (`CodecCapabilities::decodes_ranges`): `blosc` decodes
//! only the blocks the region needs, `zstd` only the blocks up to the last
//! byte it needs. Every region equals the data written, for each shuffle,
//! item size and byte order, and a corrupt block fails only the reads that
//! need it, naming the chunk.

use std::sync::Arc;
use zarrkit::store::{MemoryStore, Store, StoreKey};
use zarrkit::{Array, Region};

const SHAPE: [u64; 3] = [30, 30, 40];
const CHUNK: [u64; 3] = [20, 30, 40];

/// An array of `SHAPE` in chunks of `CHUNK` (the second chunk along the
/// first axis reaches past the edge), from its metadata `document` (at
/// `a/zarr.json` or `a/.zarray`), filled with a smooth field with some
/// noise in every byte of each element.
fn array_of(document_key: &str, document: &str) -> (Arc<dyn Store>, Array, Vec<u8>) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    store
        .set(&StoreKey::new(document_key).unwrap(), document.as_bytes())
        .unwrap();
    let array = Array::open(Arc::clone(&store), "a").unwrap();
    let elem = array.data_type().size();
    let n = SHAPE.iter().product::<u64>() as usize;
    let data: Vec<u8> = (0..n)
        .flat_map(|i| {
            let v = (i as u64 / 7).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40 ^ (i as u64 * 3);
            v.to_ne_bytes()[..elem].to_vec()
        })
        .collect();
    let whole = Region::new(vec![0; 3], SHAPE.to_vec());
    array.write_region_bytes(&whole, &data).unwrap();
    (store, array, data)
}

/// A v3 array coded `bytes` with `endian` then `compressor` (a codec's
/// JSON object).
fn array(dtype: &str, endian: &str, compressor: &str) -> (Arc<dyn Store>, Array, Vec<u8>) {
    let document = format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":{SHAPE:?},"data_type":"{dtype}",
        "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":{CHUNK:?}}}}},
        "chunk_key_encoding":{{"name":"default","configuration":{{"separator":"/"}}}},
        "fill_value":0,"codecs":[{{"name":"bytes","configuration":{{"endian":"{endian}"}}}},
        {compressor}]}}"#
    );
    array_of("a/zarr.json", &document)
}

/// The bytes of `region` of the C-order `data` of `SHAPE`.
fn expected(data: &[u8], elem: usize, region: &Region) -> Vec<u8> {
    let (s, n) = (region.start(), region.shape());
    let mut out = Vec::new();
    for z in s[0]..s[0] + n[0] {
        for y in s[1]..s[1] + n[1] {
            let row = ((z * SHAPE[1] + y) * SHAPE[2] + s[2]) as usize * elem;
            out.extend_from_slice(&data[row..row + n[2] as usize * elem]);
        }
    }
    out
}

/// 60 regions from a fixed generator: boxes within one chunk, across the
/// chunk boundary and the array's edge, single elements and whole rows.
fn regions() -> Vec<Region> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    let mut regions = vec![
        Region::new(vec![0, 0, 0], vec![1, 1, 1]),
        Region::new(vec![29, 29, 39], vec![1, 1, 1]),
        Region::new(vec![5, 0, 0], vec![1, 30, 40]),
        Region::new(vec![15, 3, 0], vec![10, 1, 40]),
    ];
    while regions.len() < 60 {
        let start: Vec<u64> = SHAPE.iter().map(|&n| next(n)).collect();
        let shape: Vec<u64> = SHAPE
            .iter()
            .zip(&start)
            .map(|(&n, &s)| 1 + next(n - s))
            .collect();
        regions.push(Region::new(start, shape));
    }
    regions
}

#[cfg(feature = "blosc")]
#[test]
fn region_reads_of_blosc_chunks_equal_the_data_for_every_shuffle_and_item_size() {
    // zstd keeps an explicit 4 KiB block (24 blocks in a 96 KB chunk of
    // uint32); blosclz and lz4 enlarge theirs.
    let cases = [
        ("uint8", "little", "noshuffle", "zstd", 1, 1024),
        ("uint16", "little", "bitshuffle", "blosclz", 2, 0),
        ("uint16", "big", "shuffle", "zstd", 2, 4096),
        ("uint32", "little", "shuffle", "zstd", 4, 4096),
        ("float32", "big", "bitshuffle", "lz4", 4, 4096),
        ("uint64", "little", "bitshuffle", "zstd", 8, 8192),
        ("int64", "big", "noshuffle", "lz4", 8, 0),
    ];
    for (dtype, endian, shuffle, cname, typesize, blocksize) in cases {
        let blosc = format!(
            r#"{{"cname":"{cname}","clevel":5,"shuffle":"{shuffle}","typesize":{typesize},"blocksize":{blocksize}}}"#
        );
        let compressor = format!(r#"{{"name":"blosc","configuration":{blosc}}}"#);
        let (_store, array, data) = array(dtype, endian, &compressor);
        assert!(array.codecs().capabilities().decodes_ranges, "{dtype}");
        let elem = array.data_type().size();
        for region in regions() {
            let got = array.read_region_bytes(&region).unwrap();
            assert!(
                got == expected(&data, elem, &region),
                "{dtype} {endian} {shuffle} {cname}: {region:?}"
            );
        }
    }
}

#[cfg(feature = "blosc")]
#[test]
fn a_corrupt_blosc_block_fails_only_the_reads_that_need_it() {
    let blosc = r#"{"name":"blosc","configuration":{"cname":"zstd","clevel":5,"shuffle":"shuffle","typesize":2,"blocksize":4096}}"#;
    let (store, array, data) = array("uint16", "little", blosc);
    let key = StoreKey::new("a/c/0/0/0").unwrap();
    let mut chunk = store.get(&key, None).unwrap().unwrap().to_vec();
    // Chunk 0 holds 48,000 bytes: blocks of 4096 bytes, 2 z-planes and a
    // bit each. Garble block 5 (bytes 20,480..24,576: planes 8 to 10).
    let start = u32::from_le_bytes(chunk[16 + 20..16 + 24].try_into().unwrap()) as usize;
    let end = u32::from_le_bytes(chunk[16 + 24..16 + 28].try_into().unwrap()) as usize;
    for byte in &mut chunk[start + 4..end] {
        *byte = !*byte;
    }
    store.set(&key, &chunk).unwrap();
    // Planes 0 to 7 and 11 to 19 do not touch block 5.
    for region in [
        Region::new(vec![0, 0, 0], vec![8, 30, 40]),
        Region::new(vec![11, 2, 3], vec![9, 20, 30]),
    ] {
        let got = array.read_region_bytes(&region).unwrap();
        assert!(got == expected(&data, 2, &region), "{region:?}");
    }
    for region in [
        Region::new(vec![9, 0, 0], vec![1, 1, 1]),
        Region::new(vec![0, 0, 0], vec![30, 30, 40]),
    ] {
        let err = array.read_region_bytes(&region).unwrap_err();
        let message = crate::support::error_chain(&err);
        assert!(message.contains("`a/c/0/0/0`"), "{message}");
        assert!(message.contains("blosc data is corrupt"), "{message}");
    }
}

#[cfg(feature = "zstd")]
#[test]
fn region_reads_of_zstd_chunks_equal_the_data_in_v2_and_v3() {
    // Chunks of 24,000 elements: one zstd block for `uint8`, several for
    // the wider types (blocks hold at most 128 KiB).
    let zstd = r#"{"name":"zstd","configuration":{"level":3,"checksum":true}}"#;
    let mut arrays = vec![
        array("uint8", "little", zstd),
        array("uint32", "big", zstd),
        array("float64", "little", zstd),
        array("int64", "big", zstd),
    ];
    let v2 = format!(
        r#"{{"zarr_format":2,"shape":{SHAPE:?},"chunks":{CHUNK:?},"dtype":">u8",
        "compressor":{{"id":"zstd","level":1}},"fill_value":0,"order":"C","filters":null}}"#
    );
    arrays.push(array_of("a/.zarray", &v2));
    for (_store, array, data) in arrays {
        assert!(array.codecs().capabilities().decodes_ranges);
        let elem = array.data_type().size();
        for region in regions() {
            let got = array.read_region_bytes(&region).unwrap();
            assert!(
                got == expected(&data, elem, &region),
                "{}: {region:?}",
                array.data_type()
            );
        }
    }
}

#[cfg(feature = "zstd")]
#[test]
fn a_corrupt_zstd_block_fails_only_the_reads_that_reach_it() {
    let zstd = r#"{"name":"zstd","configuration":{"level":3,"checksum":false}}"#;
    let (store, array, data) = array("uint64", "little", zstd);
    let key = StoreKey::new("a/c/0/0/0").unwrap();
    let mut chunk = store.get(&key, None).unwrap().unwrap().to_vec();
    // Chunk 0 holds 192,000 bytes, in at least two blocks, the last
    // starting at plane 13 at the latest (past 128 KiB). Zero the last
    // block after its header (RFC 8878, "Blocks": 3 bytes, the last block
    // flagged in bit 0 and compressed ones typed 2 in bits 1–2).
    // The frame header: magic, descriptor, window descriptor unless the
    // frame is a single segment, and the content size (no dictionary).
    let descriptor = chunk[4];
    assert_eq!(descriptor & 0b11, 0, "no dictionary");
    let single_segment = usize::from(descriptor & 0b10_0000 != 0);
    let content_size = [single_segment, 2, 4, 8][usize::from(descriptor >> 6)];
    let header = 5 + (1 - single_segment) + content_size;
    let mut at = header;
    let last = loop {
        let h = u32::from_le_bytes([chunk[at], chunk[at + 1], chunk[at + 2], 0]);
        let end = at + 3 + (h >> 3) as usize;
        if h & 1 == 1 {
            assert_eq!((h >> 1) & 3, 2, "a compressed last block");
            break at;
        }
        at = end;
    };
    assert!(last > header, "more than one block");
    chunk[last + 3..].fill(0);
    store.set(&key, &chunk).unwrap();
    // Planes 0 to 12 end before the last block; the corner of chunk 1
    // reads past the edge, a chunk the corruption does not touch.
    for region in [
        Region::new(vec![0, 0, 0], vec![13, 30, 40]),
        Region::new(vec![2, 5, 7], vec![1, 1, 1]),
        Region::new(vec![12, 29, 39], vec![1, 1, 1]),
        Region::new(vec![5, 0, 0], vec![25, 30, 40]),
    ] {
        let got = array.read_region_bytes(&region);
        if region.start()[0] == 5 {
            // Reaches plane 19 of chunk 0.
            let message = crate::support::error_chain(&got.unwrap_err());
            assert!(message.contains("`a/c/0/0/0`"), "{message}");
            assert!(message.contains("zstd data is corrupt"), "{message}");
        } else {
            assert!(got.unwrap() == expected(&data, 8, &region), "{region:?}");
        }
    }
    let whole = Region::new(vec![0; 3], SHAPE.to_vec());
    let message = crate::support::error_chain(&array.read_region_bytes(&whole).unwrap_err());
    assert!(message.contains("`a/c/0/0/0`"), "{message}");
}
