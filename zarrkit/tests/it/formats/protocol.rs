//! The storage protocol operations the v3 drafts spell out, for every
//! format on both stores: create groups and arrays, decide whether a node
//! exists (implicit groups in the drafts), discover all nodes, erase an
//! array, erase an explicit or implicit group, erase the root.

use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use zarrkit::format::{self, ZarrFormat};
use zarrkit::metadata::{ChunkKeyEncoding, DataType, JsonMap, Separator};
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StoreKey};
use zarrkit::{Array, Error, Group, Node, NodeKind, NodePath, Region, node};

/// Every format with a hierarchy (v1 has its own test).
const HIERARCHICAL: [ZarrFormat; 6] = [
    ZarrFormat::V3,
    ZarrFormat::V2,
    ZarrFormat::V3Draft2022,
    ZarrFormat::V3Draft2019Json,
    ZarrFormat::V3Draft2019,
    ZarrFormat::V3Draft2019a,
];

fn stores(dir: &Path) -> Vec<(&'static str, Arc<dyn Store>)> {
    vec![
        ("memory", Arc::new(MemoryStore::new())),
        ("filesystem", Arc::new(FilesystemStore::new(dir).unwrap())),
    ]
}

fn path(s: &str) -> NodePath {
    NodePath::new(s).unwrap()
}

/// Creates a 4×4 int32 array at `at` with 2×2 chunks, all four written,
/// holding `base + i`.
fn int_array(store: &Arc<dyn Store>, format: ZarrFormat, at: &str, base: i32) -> Array {
    // The 2019 drafts join chunk indices as v2 does.
    let encoding = match format {
        ZarrFormat::V3Draft2019 | ZarrFormat::V3Draft2019a => ChunkKeyEncoding::V2 {
            separator: Separator::Slash,
        },
        _ => format::default_chunk_key_encoding(format),
    };
    let array = Array::builder(&[4, 4], DataType::Int32, &[2, 2])
        .chunk_key_encoding(encoding)
        .format(format)
        .create(Arc::clone(store), at)
        .unwrap();
    array
        .write_region(&Region::whole(&[4, 4]), &values(base))
        .unwrap();
    array
}

fn values(base: i32) -> Vec<i32> {
    (0..16).map(|i| base + i).collect()
}

/// The keys under the chunk prefix of the array at `at`.
fn chunk_keys(store: &dyn Store, format: ZarrFormat, at: &str) -> Vec<String> {
    let layout = format::chunk_layout(
        format,
        &path(at),
        &format::default_chunk_key_encoding(format),
    );
    store
        .list_prefix(layout.prefix())
        .unwrap()
        .into_iter()
        .filter(|k| layout.parse_chunk_key(k, 2).is_some())
        .map(|k| k.as_str().to_string())
        .collect()
}

/// Builds `/` (group, attributes), `/g` (explicit group), `/g/a` and
/// `/g/ab` (arrays whose names share a prefix), `/g/sub` (group) with
/// `/g/sub/x` (array); in the drafts also `/imp/deep/y`, an array below two
/// implicit groups.
fn build(store: &Arc<dyn Store>, format: ZarrFormat) {
    let mut title = JsonMap::new();
    title.insert("title".into(), json!("protocol"));
    Group::create_as(Arc::clone(store), "/", format, title).unwrap();
    Group::create_as(Arc::clone(store), "/g", format, JsonMap::new()).unwrap();
    int_array(store, format, "/g/a", 0);
    int_array(store, format, "/g/ab", 100);
    Group::create_as(Arc::clone(store), "/g/sub", format, JsonMap::new()).unwrap();
    int_array(store, format, "/g/sub/x", 200);
    if format.is_v3_draft() {
        int_array(store, format, "/imp/deep/y", 300);
    }
}

fn exists(store: &Arc<dyn Store>, at: &str) -> Option<(ZarrFormat, NodeKind)> {
    node::exists(store.as_ref(), at).unwrap()
}

fn listed(store: &Arc<dyn Store>) -> Vec<(String, NodeKind, ZarrFormat)> {
    node::list_nodes(store.as_ref())
        .unwrap()
        .into_iter()
        .map(|(p, k, f)| (p.to_string(), k, f))
        .collect()
}

fn read(store: &Arc<dyn Store>, at: &str) -> Vec<i32> {
    Array::open(Arc::clone(store), at)
        .unwrap()
        .read_region::<i32>(&Region::whole(&[4, 4]))
        .unwrap()
}

#[test]
fn exists_tells_arrays_explicit_and_implicit_groups_and_missing_paths_apart() {
    for format in HIERARCHICAL {
        let dir = tempfile::tempdir().unwrap();
        for (backend, store) in stores(dir.path()) {
            let context = format!("{format} on the {backend} store");
            build(&store, format);
            let group = Some((format, NodeKind::Group));
            let array = Some((format, NodeKind::Array));
            assert_eq!(exists(&store, "/"), group, "{context}");
            assert_eq!(exists(&store, "/g"), group, "{context}");
            assert_eq!(exists(&store, "/g/sub"), group, "{context}");
            assert_eq!(exists(&store, "/g/a"), array, "{context}");
            assert_eq!(exists(&store, "/g/ab"), array, "{context}");
            assert_eq!(exists(&store, "/g/sub/x"), array, "{context}");
            assert_eq!(exists(&store, "/missing"), None, "{context}");
            assert_eq!(exists(&store, "/g/b"), None, "{context}");
            // A name that is only the start of a sibling's is no node.
            assert_eq!(exists(&store, "/g/su"), None, "{context}");
            if format.is_v3_draft() {
                // Drafts, "implicit groups": a group exists when something below it does.
                assert_eq!(exists(&store, "/imp"), group, "{context}");
                assert_eq!(exists(&store, "/imp/deep"), group, "{context}");
                assert_eq!(exists(&store, "/imp/deep/y"), array, "{context}");
            } else {
                assert_eq!(exists(&store, "/imp"), None, "{context}");
            }
            // Chunk directories of an array are not nodes.
            assert_eq!(exists(&store, "/g/a/c"), None, "{context}");
            assert_eq!(exists(&store, "/g/a/0"), None, "{context}");
        }
    }
}

#[test]
fn list_nodes_finds_every_node_from_the_root_in_order() {
    for format in HIERARCHICAL {
        let dir = tempfile::tempdir().unwrap();
        for (backend, store) in stores(dir.path()) {
            let context = format!("{format} on the {backend} store");
            build(&store, format);
            let (g, a) = (NodeKind::Group, NodeKind::Array);
            let mut expected = vec![
                ("/".to_string(), g, format),
                ("/g".into(), g, format),
                ("/g/a".into(), a, format),
                ("/g/ab".into(), a, format),
                ("/g/sub".into(), g, format),
                ("/g/sub/x".into(), a, format),
            ];
            if format.is_v3_draft() {
                expected.extend([
                    ("/imp".to_string(), g, format),
                    ("/imp/deep".into(), g, format),
                    ("/imp/deep/y".into(), a, format),
                ]);
            }
            assert_eq!(listed(&store), expected, "{context}");
            // The same nodes as walking the root group.
            let walked: Vec<String> = Group::open(Arc::clone(&store), "/")
                .unwrap()
                .walk()
                .unwrap()
                .iter()
                .map(|n| n.path().to_string())
                .collect();
            let listed_paths: Vec<String> =
                expected.iter().skip(1).map(|(p, _, _)| p.clone()).collect();
            assert_eq!(walked, listed_paths, "{context}");
        }
    }
}

#[test]
fn list_nodes_of_an_empty_store_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, store) in stores(dir.path()) {
        assert_eq!(listed(&store), Vec::new(), "{backend}");
    }
}

#[test]
fn erasing_an_array_removes_its_chunks_and_keeps_siblings_and_parent() {
    for format in HIERARCHICAL {
        let dir = tempfile::tempdir().unwrap();
        for (backend, store) in stores(dir.path()) {
            let context = format!("{format} on the {backend} store");
            build(&store, format);
            assert_eq!(
                chunk_keys(store.as_ref(), format, "/g/a").len(),
                4,
                "{context}: four chunks before"
            );
            let keys_before = store.list().unwrap().len();
            Node::open(Arc::clone(&store), "/g/a")
                .unwrap()
                .erase()
                .unwrap();
            assert_eq!(exists(&store, "/g/a"), None, "{context}");
            assert_eq!(
                chunk_keys(store.as_ref(), format, "/g/a"),
                Vec::<String>::new(),
                "{context}: chunks gone"
            );
            assert!(
                matches!(
                    Array::open(Arc::clone(&store), "/g/a"),
                    Err(Error::NodeNotFound { .. })
                ),
                "{context}"
            );
            // The sibling whose name starts with `a` keeps its document and chunks.
            assert_eq!(read(&store, "/g/ab"), values(100), "{context}");
            assert_eq!(
                chunk_keys(store.as_ref(), format, "/g/ab").len(),
                4,
                "{context}"
            );
            assert_eq!(
                exists(&store, "/g"),
                Some((format, NodeKind::Group)),
                "{context}: parent still there"
            );
            // Only the array's document(s) and its four chunks went
            // (v2 also has `.zattrs`).
            let removed = keys_before - store.list().unwrap().len();
            let expected = if format == ZarrFormat::V2 { 6 } else { 5 };
            assert_eq!(removed, expected, "{context}");
            let names: Vec<String> = Group::open(Arc::clone(&store), "/g")
                .unwrap()
                .children()
                .unwrap()
                .iter()
                .map(|n| n.path().to_string())
                .collect();
            assert_eq!(names, ["/g/ab", "/g/sub"], "{context}");

            // Erasing it again: nothing is there.
            let err = format::erase_node(store.as_ref(), &path("/g/a"), format).unwrap_err();
            assert!(
                matches!(&err, Error::NodeNotFound { path } if path.as_str() == "/g/a"),
                "{context}: {err}"
            );
            assert!(err.to_string().contains("/g/a"), "{context}: {err}");
        }
    }
}

#[test]
fn erasing_a_group_removes_its_descendants_only() {
    for format in HIERARCHICAL {
        let dir = tempfile::tempdir().unwrap();
        for (backend, store) in stores(dir.path()) {
            let context = format!("{format} on the {backend} store");
            build(&store, format);
            // A group whose name shares a prefix with `sub`.
            Group::create_as(Arc::clone(&store), "/g/subway", format, JsonMap::new()).unwrap();
            int_array(&store, format, "/g/subway/z", 400);

            let g = Group::open(Arc::clone(&store), "/g").unwrap();
            g.erase_child("sub").unwrap();
            assert_eq!(exists(&store, "/g/sub"), None, "{context}");
            assert_eq!(exists(&store, "/g/sub/x"), None, "{context}");
            assert_eq!(
                chunk_keys(store.as_ref(), format, "/g/sub/x"),
                Vec::<String>::new()
            );
            assert_eq!(read(&store, "/g/subway/z"), values(400), "{context}");
            assert!(
                matches!(g.erase_child("sub"), Err(Error::NodeNotFound { .. })),
                "{context}"
            );
            assert!(
                matches!(g.erase_child("a/b"), Err(Error::NodePath(_))),
                "{context}"
            );

            // Erase `/g` as a whole: every node below it goes, the root stays.
            assert_eq!(
                node::erase(store.as_ref(), "/g").unwrap(),
                format,
                "{context}"
            );
            let mut expected = vec![("/".to_string(), NodeKind::Group, format)];
            if format.is_v3_draft() {
                expected.extend([
                    ("/imp".to_string(), NodeKind::Group, format),
                    ("/imp/deep".into(), NodeKind::Group, format),
                    ("/imp/deep/y".into(), NodeKind::Array, format),
                ]);
            }
            assert_eq!(listed(&store), expected, "{context}");
            let leftover: Vec<String> = store
                .list()
                .unwrap()
                .into_iter()
                .map(|k| k.as_str().to_string())
                .filter(|k| k.contains("g/") && !k.contains("imp/"))
                .collect();
            assert_eq!(leftover, Vec::<String>::new(), "{context}");
        }
    }
}

#[test]
fn erasing_an_implicit_group_in_the_drafts_removes_what_is_below_it() {
    for format in HIERARCHICAL.into_iter().filter(|f| f.is_v3_draft()) {
        let dir = tempfile::tempdir().unwrap();
        for (backend, store) in stores(dir.path()) {
            let context = format!("{format} on the {backend} store");
            build(&store, format);
            // `/imp` has no document: it exists only through `/imp/deep/y`.
            assert_eq!(
                node::erase(store.as_ref(), "/imp").unwrap(),
                format,
                "{context}"
            );
            assert_eq!(exists(&store, "/imp"), None, "{context}");
            assert_eq!(exists(&store, "/imp/deep/y"), None, "{context}");
            assert_eq!(
                chunk_keys(store.as_ref(), format, "/imp/deep/y"),
                Vec::<String>::new()
            );
            assert_eq!(read(&store, "/g/a"), values(0), "{context}");
            assert!(
                store
                    .list()
                    .unwrap()
                    .iter()
                    .all(|k| !k.as_str().contains("imp")),
                "{context}"
            );
            assert!(
                matches!(
                    node::erase(store.as_ref(), "/imp"),
                    Err(Error::NodeNotFound { .. })
                ),
                "{context}"
            );
        }
    }
}

#[test]
fn erasing_the_root_empties_the_store() {
    for format in HIERARCHICAL {
        let dir = tempfile::tempdir().unwrap();
        for (backend, store) in stores(dir.path()) {
            let context = format!("{format} on the {backend} store");
            build(&store, format);
            Node::open(Arc::clone(&store), "/")
                .unwrap()
                .erase()
                .unwrap();
            assert_eq!(store.list().unwrap(), Vec::new(), "{context}");
            assert_eq!(exists(&store, "/"), None, "{context}");
            assert_eq!(listed(&store), Vec::new(), "{context}");
            assert!(
                matches!(
                    node::erase(store.as_ref(), "/"),
                    Err(Error::NodeNotFound { .. })
                ),
                "{context}"
            );
            // A new hierarchy of the same format can be written again.
            Group::create_as(Arc::clone(&store), "/", format, JsonMap::new()).unwrap();
            assert_eq!(
                exists(&store, "/"),
                Some((format, NodeKind::Group)),
                "{context}"
            );
        }
    }
}

#[test]
fn erase_in_another_format_than_the_store_s_finds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, store) in stores(dir.path()) {
        build(&store, ZarrFormat::V3);
        for other in [
            ZarrFormat::V2,
            ZarrFormat::V1,
            ZarrFormat::V3Draft2022,
            ZarrFormat::V3Draft2019,
        ] {
            for at in ["/", "/g", "/g/a"] {
                assert!(
                    matches!(
                        format::erase_node(store.as_ref(), &path(at), other),
                        Err(Error::NodeNotFound { .. })
                    ),
                    "{other} {at} on the {backend} store"
                );
            }
        }
        assert_eq!(read(&store, "/g/a"), values(0), "{backend}");
    }
    // A draft entry point at the root is not a v3 root node.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    build(&store, ZarrFormat::V3Draft2022);
    assert!(matches!(
        format::erase_node(store.as_ref(), &NodePath::root(), ZarrFormat::V3),
        Err(Error::NodeNotFound { .. })
    ));
    assert!(
        store
            .size(&StoreKey::new("zarr.json").unwrap())
            .unwrap()
            .is_some()
    );
}

#[test]
fn v1_store_is_one_array_that_exists_lists_and_erases() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, store) in stores(dir.path()) {
        let context = format!("v1 on the {backend} store");
        let array = Array::builder(&[4, 4], DataType::Int32, &[2, 2])
            .format(ZarrFormat::V1)
            .create(Arc::clone(&store), "/")
            .unwrap();
        array
            .write_region(&Region::whole(&[4, 4]), &values(7))
            .unwrap();
        assert_eq!(
            exists(&store, "/"),
            Some((ZarrFormat::V1, NodeKind::Array)),
            "{context}"
        );
        assert_eq!(exists(&store, "/x"), None, "{context}");
        assert_eq!(
            listed(&store),
            vec![("/".to_string(), NodeKind::Array, ZarrFormat::V1)],
            "{context}"
        );
        // meta, attrs and four chunks `i.j`.
        assert_eq!(store.list().unwrap().len(), 6, "{context}");
        assert!(
            matches!(
                format::erase_node(store.as_ref(), &path("/x"), ZarrFormat::V1),
                Err(Error::NodeNotFound { .. })
            ),
            "{context}"
        );
        Node::open(Arc::clone(&store), "/")
            .unwrap()
            .erase()
            .unwrap();
        assert_eq!(store.list().unwrap(), Vec::new(), "{context}");
        assert_eq!(exists(&store, "/"), None, "{context}");
        assert!(
            matches!(
                node::erase(store.as_ref(), "/"),
                Err(Error::NodeNotFound { .. })
            ),
            "{context}"
        );
    }
}

#[test]
fn erase_and_exists_reject_invalid_paths() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    assert!(matches!(
        node::exists(store.as_ref(), "a//b"),
        Err(Error::NodePath(_))
    ));
    assert!(matches!(
        node::erase(store.as_ref(), "/__x"),
        Err(Error::NodePath(_))
    ));
    assert!(matches!(
        node::erase(store.as_ref(), "/nothing"),
        Err(Error::NodeNotFound { .. })
    ));
}

#[test]
fn a_node_with_an_invalid_document_cannot_be_opened_but_can_be_erased() {
    for format in [ZarrFormat::V3, ZarrFormat::V2, ZarrFormat::V3Draft2022] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        build(&store, format);
        let document = format::metadata_key(format, &path("/g/a")).unwrap();
        store.set(&document, b"{not json").unwrap();
        let err = node::exists(store.as_ref(), "/g/a").unwrap_err();
        assert!(
            matches!(&err, Error::Metadata { key, .. } if key == &document),
            "{format}: {err}"
        );
        assert_eq!(
            node::erase(store.as_ref(), "/g/a").unwrap(),
            format,
            "{format}"
        );
        assert_eq!(exists(&store, "/g/a"), None, "{format}");
        assert_eq!(
            chunk_keys(store.as_ref(), format, "/g/a"),
            Vec::<String>::new()
        );
        assert_eq!(read(&store, "/g/ab"), values(100), "{format}");
    }
}

/// A v3 group's children are the directories below it that hold a
/// `zarr.json`, each read once: a directory without one (a stray
/// directory, a v2 node) is no child, and a child whose document is
/// invalid fails the listing, naming its key, on both stores.
#[test]
fn v3_children_are_the_directories_holding_a_document() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, store) in stores(dir.path()) {
        let root = Group::create(Arc::clone(&store), "/", JsonMap::new()).unwrap();
        int_array(&store, ZarrFormat::V3, "/b", 0);
        Group::create(Arc::clone(&store), "/a", JsonMap::new()).unwrap();
        Array::builder(&[3], DataType::UInt8, &[3])
            .format(ZarrFormat::V2)
            .create(Arc::clone(&store), "/c/v2")
            .unwrap();
        store
            .set(&StoreKey::new("d/notes.txt").unwrap(), b"not a node")
            .unwrap();
        let children: Vec<(String, NodeKind, ZarrFormat)> = root
            .children()
            .unwrap()
            .iter()
            .map(|n| (n.path().to_string(), n.kind(), n.format()))
            .collect();
        assert_eq!(
            children,
            [
                ("/a".to_string(), NodeKind::Group, ZarrFormat::V3),
                ("/b".to_string(), NodeKind::Array, ZarrFormat::V3),
            ],
            "{backend}"
        );
        let Node::Array(b) = &root.children().unwrap()[1] else {
            panic!("{backend}: /b is not an array");
        };
        assert_eq!(
            b.read_region::<i32>(&Region::whole(&[4, 4])).unwrap().len(),
            16
        );
        store
            .set(
                &StoreKey::new("e/zarr.json").unwrap(),
                b"{\"zarr_format\": 3}",
            )
            .unwrap();
        let err = root.children().unwrap_err();
        assert!(matches!(err, Error::Metadata { .. }), "{backend}: {err:?}");
        assert!(err.to_string().contains("e/zarr.json"), "{backend}: {err}");
    }
}
