//! The v3 drafts (2019, 2019a, 2019 JSON as zarr-python 2.18 writes it, and
//! 2022): each parser on the first document, then a store with the entry
//! point (second document) and the node document under each draft's key,
//! opened and read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarrkit::format::ZarrFormat;
use zarrkit::format::draft_dtypes::{self, DraftReadOptions};
use zarrkit::format::{v3_draft2019, v3_draft2022};
use zarrkit::metadata::NodePath;
use zarrkit_fuzz::{documents, exercise_node, store_with};

const FORMATS: [ZarrFormat; 3] = [
    ZarrFormat::V3Draft2019,
    ZarrFormat::V3Draft2019a,
    ZarrFormat::V3Draft2019Json,
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let docs = documents(rest);
    let node = docs[0];
    let _ = v3_draft2022::parse_array(node);
    let _ = v3_draft2022::parse_group(node);
    for format in FORMATS {
        let _ = v3_draft2019::parse_node(node, true, format);
        let _ = v3_draft2019::parse_node(node, false, format);
    }
    let entry_point = docs.get(1).copied().unwrap_or_default();
    // Which key the node document goes under: the selector's low bits.
    let key = match selector % 6 {
        0 => "meta/a.array.json",
        1 => "meta/a.group.json",
        2 => "meta/root/a.array",
        3 => "meta/root/a.group",
        4 => "meta/root/a.array.json",
        _ => "meta/root/a.group.json",
    };
    let chunk = docs.get(2).copied().unwrap_or_default();
    let store = store_with(&[
        ("zarr.json", entry_point),
        (key, node),
        ("data/a/c0", chunk),
        ("data/root/a/c0", chunk),
        ("data/root/a/c0/0", chunk),
    ]);
    let path = NodePath::new("/a").expect("a valid path");
    for options in [
        DraftReadOptions::default(),
        DraftReadOptions::allowing_fallback(),
    ] {
        if let Err(error) = draft_dtypes::read_node(store.as_ref(), &path, options) {
            drop(error.to_string());
        }
    }
    exercise_node(store, "/a");
});
