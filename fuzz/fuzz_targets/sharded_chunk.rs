//! A whole shard (`sharding_indexed`) from arbitrary bytes: its index (at
//! the start or the end, with or without `crc32c`) and its inner chunks,
//! read whole, by inner chunk and element by element. The first byte
//! chooses the configuration.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use zarrkit::Region;
use zarrkit::metadata::DataType;
use zarrkit_fuzz::{OneChunkArrays, codec};

const SHAPE: [u64; 2] = [16, 16];

fn configurations() -> Vec<(DataType, Value)> {
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let crc = json!({"name": "crc32c"});
    let zstd = json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}});
    let gzip = json!({"name": "gzip", "configuration": {"level": 1}});
    let mut out = Vec::new();
    for location in ["end", "start"] {
        for index_codecs in [json!([bytes, crc]), json!([bytes])] {
            out.push((DataType::UInt16, json!({"chunk_shape": [4, 4], "codecs": [bytes], "index_codecs": index_codecs, "index_location": location})));
            out.push((DataType::Float32, json!({"chunk_shape": [8, 4], "codecs": [bytes, zstd], "index_codecs": index_codecs, "index_location": location})));
            out.push((DataType::String, json!({"chunk_shape": [4, 8], "codecs": [{"name": "vlen-utf8"}, gzip], "index_codecs": index_codecs, "index_location": location})));
            // Nested sharding: shards of shards.
            out.push((DataType::UInt8, json!({"chunk_shape": [8, 8], "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 4], "codecs": [bytes], "index_codecs": [bytes, crc], "index_location": "end"}}], "index_codecs": index_codecs, "index_location": location})));
        }
    }
    out
}

fn arrays() -> &'static OneChunkArrays {
    static ARRAYS: OnceLock<OneChunkArrays> = OnceLock::new();
    ARRAYS.get_or_init(|| {
        let chains = configurations()
            .into_iter()
            .map(|(data_type, configuration)| {
                (data_type, vec![codec("sharding_indexed", configuration)])
            })
            .collect();
        OneChunkArrays::new(&SHAPE, chains)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, shard)) = data.split_first() else {
        return;
    };
    let array = arrays().with_chunk(selector, shard);
    let regions = [
        Region::whole(&SHAPE),
        Region::new(vec![0, 0], vec![4, 4]),
        Region::new(vec![3, 5], vec![9, 7]),
        Region::new(vec![15, 15], vec![1, 1]),
    ];
    for region in &regions {
        if array.data_type().is_variable_length() {
            let _ = array.read_vlen(region);
        } else {
            let _ = array.read_region_bytes(region);
        }
    }
    if let Some(grid) = array.inner_chunk_grid_shape() {
        let last: Vec<u64> = grid.iter().map(|&n| n.saturating_sub(1)).collect();
        let _ = array.inner_chunk_region(&last);
        if !array.data_type().is_variable_length() {
            let _ = array.read_inner_chunk::<u8>(&last);
        }
    }
    let _ = array.stored_chunks();
});
