//! The v3 `zarr.json` parser, then the node it describes opened from a
//! store and its first chunk read (the second document, if any, is chunk
//! `c/0…` under both chunk key encodings).
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarrkit::format::v3;
use zarrkit_fuzz::{documents, exercise_node, store_with};

fuzz_target!(|data: &[u8]| {
    let docs = documents(data);
    let document = docs[0];
    if let Ok(node) = v3::parse_node(document) {
        // A parsed document serialises, and what it serialises to parses.
        if let Ok(bytes) = v3::serialize_node_checked(&node) {
            v3::parse_node(&bytes).expect("a serialised document parses");
        }
    }
    let chunk = docs.get(1).copied().unwrap_or_default();
    let store = store_with(&[
        ("a/zarr.json", document),
        ("a/c/0", chunk),
        ("a/c/0/0", chunk),
        ("a/0", chunk),
        ("a/0.0", chunk),
    ]);
    exercise_node(store, "/a");
});
