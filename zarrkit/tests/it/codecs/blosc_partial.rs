//! Region reads of chunks coded `bytes` then `blosc` decode only the blosc
//! blocks the region needs: every region equals the data written, for
//! each shuffle, item size and byte order, and a corrupt block fails only
//! the reads that need it, naming the chunk.

use std::sync::Arc;
use zarrkit::store::{MemoryStore, Store, StoreKey};
use zarrkit::{Array, Region};

const SHAPE: [u64; 3] = [30, 30, 40];
const CHUNK: [u64; 3] = [20, 30, 40];

/// An array of `SHAPE` in chunks of `CHUNK` (the second chunk along the
/// first axis reaches past the edge), coded `bytes` with `endian` then
/// `blosc` with `blosc` (JSON), filled with `value(i)` for element `i`.
fn array(dtype: &str, endian: &str, blosc: &str) -> (Arc<dyn Store>, Array, Vec<u8>) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let document = format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":{SHAPE:?},"data_type":"{dtype}",
        "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":{CHUNK:?}}}}},
        "chunk_key_encoding":{{"name":"default","configuration":{{"separator":"/"}}}},
        "fill_value":0,"codecs":[{{"name":"bytes","configuration":{{"endian":"{endian}"}}}},
        {{"name":"blosc","configuration":{blosc}}}]}}"#
    );
    store
        .set(&StoreKey::new("a/zarr.json").unwrap(), document.as_bytes())
        .unwrap();
    let array = Array::open(Arc::clone(&store), "a").unwrap();
    let elem = array.data_type().size();
    let n = SHAPE.iter().product::<u64>() as usize;
    // A smooth field with some noise, in every byte of each element.
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
        let (_store, array, data) = array(dtype, endian, &blosc);
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

#[test]
fn a_corrupt_blosc_block_fails_only_the_reads_that_need_it() {
    let blosc = r#"{"cname":"zstd","clevel":5,"shuffle":"shuffle","typesize":2,"blocksize":4096}"#;
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
