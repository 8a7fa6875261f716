//! The v1 parsers: `meta` and `attrs`, on their own and as a store (the
//! documents are `meta`, `attrs` and the first chunk).
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarrkit::format::v1;
use zarrkit_fuzz::{documents, exercise_node, store_with};

fuzz_target!(|data: &[u8]| {
    let docs = documents(data);
    let meta = docs[0];
    let _ = v1::parse_attributes(meta);
    if let Ok(array) = v1::parse_array(meta, serde_json::Map::new()) {
        // A parsed `meta` serialises, and what it serialises to parses.
        let node = zarrkit::metadata::NodeMetadata::Array(array);
        if let Ok(bytes) = v1::serialize_node(&node) {
            v1::parse_array(&bytes, serde_json::Map::new()).expect("a serialised meta parses");
        }
    }
    let mut entries = vec![("meta", meta)];
    if let Some(attrs) = docs.get(1) {
        entries.push(("attrs", attrs));
    }
    if let Some(chunk) = docs.get(2) {
        entries.extend([("0", *chunk), ("0.0", *chunk)]);
    }
    exercise_node(store_with(&entries), "/");
});
