//! The v2 parsers: `.zarray`, `.zgroup`, `.zattrs` and `.zmetadata`, each
//! on its own and together in a store (the first document is a `.zarray` or,
//! if it has no `shape`, a `.zgroup`; then `.zattrs`, `.zmetadata` and the
//! first chunk).
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarrkit::format::v2;
use zarrkit_fuzz::{documents, exercise_node, store_with};

fuzz_target!(|data: &[u8]| {
    let docs = documents(data);
    let node = docs[0];
    let attrs = docs.get(1).copied();
    let _ = v2::parse_array(node, None);
    let _ = v2::parse_group(node, None);
    let _ = v2::parse_attributes(node);
    let _ = v2::quote_non_finite_tokens(node);
    if let Ok(array) = v2::parse_array(node, None) {
        // A parsed `.zarray` serialises, and what it serialises to parses.
        if let Ok(json) = v2::array_to_json(&array) {
            v2::parse_array(&v2::to_bytes(&json), None).expect("a serialised .zarray parses");
        }
    }
    let is_array = node.windows(7).any(|w| w == b"\"shape\"");
    let mut entries = vec![(if is_array { "a/.zarray" } else { "a/.zgroup" }, node)];
    if let Some(attrs) = attrs {
        entries.push(("a/.zattrs", attrs));
    }
    if let Some(zmetadata) = docs.get(2) {
        entries.push(("a/.zmetadata", zmetadata));
    }
    if let Some(chunk) = docs.get(3) {
        entries.extend([("a/0", *chunk), ("a/0.0", *chunk), ("a/0/0", *chunk)]);
    }
    exercise_node(store_with(&entries), "/a");
});
