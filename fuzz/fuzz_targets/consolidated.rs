//! Consolidated metadata: v3 `consolidated_metadata` in a root group's
//! `zarr.json`, or v2 `.zmetadata` beside a `.zgroup` (the selector byte's
//! low bit chooses), opened and walked. The second document is stored as
//! `a/zarr.json` or `a/.zarray` so that the consolidated entries can
//! disagree with a real document.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarrkit::Group;
use zarrkit_fuzz::{documents, exercise_node, store_with};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let docs = documents(rest);
    let child = docs.get(1).copied().unwrap_or_default();
    let store = if selector & 1 == 0 {
        store_with(&[("zarr.json", docs[0]), ("a/zarr.json", child)])
    } else {
        store_with(&[
            (".zgroup", br#"{"zarr_format":2}"#),
            (".zmetadata", docs[0]),
            ("a/.zarray", child),
        ])
    };
    if let Ok(mut group) = Group::open(store.clone(), "/") {
        let _ = group.warnings();
        let _ = group.children();
        if let Ok(nodes) = group.walk() {
            for node in nodes.iter().take(16) {
                let _ = node;
            }
        }
        let _ = group.node("a");
        let _ = group.open_node_checked("a");
    }
    let _ = zarrkit::consolidate::check(store.as_ref(), "/");
    exercise_node(store, "/");
});
