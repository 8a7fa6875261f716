//! Chunk-key parsing for each key encoding (v3 `default` and `v2`, with
//! `/` and `.`) and each format's key layout: a key that parses encodes
//! back to itself, and every chunk has one key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarrkit::format::{ZarrFormat, chunk_layout};
use zarrkit::metadata::{ChunkKeyEncoding, NodePath, Separator};
use zarrkit::store::StoreKey;

fuzz_target!(|data: &[u8]| {
    let Some((&ndim, rest)) = data.split_first() else {
        return;
    };
    let ndim = usize::from(ndim % 8);
    let Ok(suffix) = std::str::from_utf8(rest) else {
        return;
    };
    let encodings = [
        ChunkKeyEncoding::Default {
            separator: Separator::Slash,
        },
        ChunkKeyEncoding::Default {
            separator: Separator::Dot,
        },
        ChunkKeyEncoding::V2 {
            separator: Separator::Slash,
        },
        ChunkKeyEncoding::V2 {
            separator: Separator::Dot,
        },
    ];
    for encoding in &encodings {
        if let Some(coords) = encoding.decode(suffix, ndim) {
            assert_eq!(coords.len(), ndim);
            assert_eq!(encoding.encode(&coords), suffix, "{encoding:?}");
        }
    }
    let Ok(key) = StoreKey::new(format!("a/{suffix}")) else {
        return;
    };
    let path = NodePath::new("/a").expect("a valid path");
    for &format in ZarrFormat::ALL {
        for encoding in &encodings {
            let layout = chunk_layout(format, &path, encoding);
            if let Some(coords) = layout.parse_chunk_key(&key, ndim) {
                let again = layout.chunk_key(&coords).expect("a parsed key encodes");
                assert_eq!(again, key, "{format:?} {encoding:?}");
            }
        }
    }
});
