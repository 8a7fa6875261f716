//! Creating many nodes at once (`create_hierarchy`, issue #14): the same
//! documents as creating each node alone, implicit parent groups, the
//! existence check across formats, overwriting, errors naming the node,
//! zarr-python reading the result, and an S3 server.

use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, JsonMap};
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StoreKey};
use zarrkit::{
    Array, Error, Group, HierarchyProblem, NewNode, Node, NodeKind, Region, create_hierarchy,
};

fn attributes(json: &str) -> JsonMap {
    serde_json::from_str(json).unwrap()
}

/// Every key of `store` with its value, sorted by key.
fn contents(store: &dyn Store) -> Vec<(String, Vec<u8>)> {
    store
        .list()
        .unwrap()
        .into_iter()
        .map(|key| {
            let value = store.get(&key, None).unwrap().unwrap();
            (key.as_str().to_string(), value)
        })
        .collect()
}

fn put(store: &dyn Store, key: &str, value: &[u8]) {
    store.set(&StoreKey::new(key).unwrap(), value).unwrap();
}

/// The arrays of the comparisons: several data types, options and depths.
fn builders(format: ZarrFormat) -> Vec<(&'static str, zarrkit::ArrayBuilder)> {
    let mut with_names = Array::builder(&[10, 7], DataType::Float32, &[4, 4])
        .fill_value(f32::NAN)
        .attributes(attributes(r#"{"units": "K", "n": [1, 2]}"#));
    if format == ZarrFormat::V3 {
        with_names = with_names.dimension_names(["y", "x"]);
    }
    vec![
        ("/a", Array::builder(&[64, 64], DataType::UInt16, &[32, 32])),
        ("/g/b", with_names),
        ("/g/h/c", Array::builder(&[5], DataType::Int64, &[5])),
        ("/z", Array::builder(&[], DataType::Bool, &[])),
    ]
    .into_iter()
    .map(|(path, builder)| (path, builder.format(format)))
    .collect()
}

/// The batch writes, byte for byte, what creating each node alone writes
/// (`Group::create_as` and `ArrayBuilder::create`), on the filesystem
/// (listing, parallel writes) and in memory, in v3 and v2.
#[test]
fn batch_documents_equal_those_of_creating_each_node() {
    for format in [ZarrFormat::V3, ZarrFormat::V2] {
        let one_by_one = tempfile::tempdir().unwrap();
        let single: Arc<dyn Store> = Arc::new(FilesystemStore::new(one_by_one.path()).unwrap());
        let root_attributes = attributes(r#"{"title": "batch ✓"}"#);
        Group::create_as(single.clone(), "/", format, root_attributes.clone()).unwrap();
        Group::create_as(single.clone(), "/g", format, JsonMap::new()).unwrap();
        Group::create_as(single.clone(), "/g/h", format, JsonMap::new()).unwrap();
        for (path, builder) in builders(format) {
            builder.create(single.clone(), path).unwrap();
        }

        let group = |attributes| NewNode::Group { format, attributes };
        let mut nodes = vec![("/".to_string(), group(root_attributes.clone()))];
        // `/g` and `/g/h` are left for the batch to add.
        nodes.extend(
            builders(format)
                .into_iter()
                .map(|(path, builder)| (path.to_string(), NewNode::from(builder))),
        );
        let batch_dir = tempfile::tempdir().unwrap();
        let batch: Arc<dyn Store> = Arc::new(FilesystemStore::new(batch_dir.path()).unwrap());
        let created = create_hierarchy(batch.clone(), nodes.clone(), false).unwrap();
        let summary: Vec<_> = created
            .iter()
            .map(|n| (n.path().to_string(), n.kind(), n.format()))
            .collect();
        let (a, g) = (NodeKind::Array, NodeKind::Group);
        assert_eq!(
            summary,
            [
                ("/".to_string(), g, format),
                ("/a".to_string(), a, format),
                ("/g".to_string(), g, format),
                ("/g/b".to_string(), a, format),
                ("/g/h".to_string(), g, format),
                ("/g/h/c".to_string(), a, format),
                ("/z".to_string(), a, format),
            ]
        );
        let expected = contents(single.as_ref());
        assert_eq!(
            expected.len(),
            // v2: `.zattrs` beside each `.zgroup` and `.zarray`.
            if format == ZarrFormat::V3 { 7 } else { 14 }
        );
        assert_eq!(contents(batch.as_ref()), expected, "{format:?}");

        let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
        create_hierarchy(memory.clone(), nodes, false).unwrap();
        assert_eq!(contents(memory.as_ref()), expected, "{format:?} in memory");

        // The handles returned work: write and read through one.
        let Node::Array(array) = &created[1] else {
            panic!("not an array")
        };
        let values: Vec<u16> = (0..64 * 64).collect();
        array
            .write_region(&Region::whole(&[64, 64]), &values)
            .unwrap();
        let reopened = Array::open(batch, "/a").unwrap();
        let read: Vec<u16> = reopened.read_region(&Region::whole(&[64, 64])).unwrap();
        assert_eq!(read, values);
    }
}

/// Parents no node names become groups; groups already there stay as they
/// are (their attributes kept, not written again); an empty batch writes
/// nothing.
#[test]
fn missing_parents_are_created_and_existing_groups_kept() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    assert!(
        create_hierarchy(store.clone(), Vec::<(&str, NewNode)>::new(), false)
            .unwrap()
            .is_empty()
    );
    assert!(store.list().unwrap().is_empty());
    let array = || NewNode::from(Array::builder(&[2], DataType::UInt8, &[2]));
    let created = create_hierarchy(
        store.clone(),
        [
            ("a/b/c", array()),
            ("x", NewNode::group(attributes(r#"{"v": 1}"#))),
        ],
        false,
    )
    .unwrap();
    let paths: Vec<_> = created.iter().map(|n| n.path().to_string()).collect();
    assert_eq!(paths, ["/", "/a", "/a/b", "/a/b/c", "/x"]);
    let b = Group::open(store.clone(), "/a/b").unwrap();
    assert!(b.attributes().is_empty());
    assert_eq!(b.children().unwrap()[0].path().as_str(), "/a/b/c");
    assert_eq!(
        Group::open(store.clone(), "/x").unwrap().attributes()["v"],
        1
    );

    let mut root = Group::open(store.clone(), "/").unwrap();
    root.set_attributes(attributes(r#"{"keep": true}"#))
        .unwrap();
    let created =
        create_hierarchy(store.clone(), [("a/d", array()), ("e/f", array())], false).unwrap();
    let paths: Vec<_> = created.iter().map(|n| n.path().to_string()).collect();
    assert_eq!(paths, ["/a/d", "/e", "/e/f"]);
    assert_eq!(
        Group::open(store.clone(), "/").unwrap().attributes()["keep"],
        true
    );
    let names: Vec<_> = Group::open(store, "/a")
        .unwrap()
        .children()
        .unwrap()
        .iter()
        .map(|n| n.path().to_string())
        .collect();
    assert_eq!(names, ["/a/b", "/a/d"]);
}

/// A node of any format at a path given (v3, v2 array or group, a
/// document that does not read, a v1 root array, a v3 draft's array)
/// refuses the whole batch with `NodeExists` naming it, and nothing is
/// written; directories holding no node do not.
#[test]
fn a_node_of_any_format_in_the_way_refuses_the_batch_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    Group::create(store.clone(), "/", JsonMap::new()).unwrap();
    put(
        store.as_ref(),
        "v2a/.zarray",
        br#"{"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "|u1", "compressor": null, "fill_value": 0, "order": "C", "filters": null}"#,
    );
    put(store.as_ref(), "g/v2g/.zgroup", br#"{"zarr_format": 2}"#);
    put(store.as_ref(), "broken/zarr.json", b"{ not json");
    put(store.as_ref(), "stray/c/0", b"\x01");
    Array::builder(&[1], DataType::UInt8, &[1])
        .create(store.clone(), "/g/v3a")
        .unwrap();
    let before = contents(store.as_ref());
    let array = || NewNode::from(Array::builder(&[4], DataType::Int32, &[2]));
    for (path, message) in [
        ("/v2a", "`/v2a` already exists (an array)"),
        ("/g/v2g", "`/g/v2g` already exists (a group)"),
        ("/broken", "`/broken` already exists (an array)"),
        ("/g/v3a", "`/g/v3a` already exists (an array)"),
        // An array where a parent group would be added.
        ("/g/v3a/inner", "`/g/v3a` already exists (an array)"),
    ] {
        let nodes = (0..20)
            .map(|i| (format!("/new/n{i}"), array()))
            .chain([(path.to_string(), array()), ("/zz".to_string(), array())]);
        let err = create_hierarchy(store.clone(), nodes, false).unwrap_err();
        assert!(matches!(err, Error::NodeExists { .. }), "{path}: {err}");
        assert_eq!(err.to_string(), message);
        assert_eq!(contents(store.as_ref()), before, "{path} wrote something");
    }
    // Directories that hold no node are no obstacle (`/g`, which holds
    // nodes but no document of its own, becomes a group), nor are groups
    // on the way (`/g/v2g`: kept, not rewritten).
    let created = create_hierarchy(
        store.clone(),
        [("/stray", array()), ("/g/v2g/x", array())],
        false,
    )
    .unwrap();
    let paths: Vec<_> = created.iter().map(|n| n.path().to_string()).collect();
    assert_eq!(paths, ["/g", "/g/v2g/x", "/stray"]);

    // v1: a single array at the root, `meta` and `attrs`.
    let v1: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Array::builder(&[4], DataType::UInt8, &[2])
        .format(ZarrFormat::V1)
        .create(v1.clone(), "/")
        .unwrap();
    let before = contents(v1.as_ref());
    let err = create_hierarchy(v1.clone(), [("/a", array())], false).unwrap_err();
    assert_eq!(err.to_string(), "`/` already exists (an array)");
    assert_eq!(contents(v1.as_ref()), before);

    // A v3 draft: documents under `meta/`, found by probing every path.
    #[cfg(feature = "gzip")]
    {
        let draft: Arc<dyn Store> = Arc::new(MemoryStore::new());
        Array::builder(&[4], DataType::UInt8, &[2])
            .format(ZarrFormat::V3Draft2022)
            .create(draft.clone(), "/d/e")
            .unwrap();
        let before = contents(draft.as_ref());
        let err = create_hierarchy(draft.clone(), [("/d/x", array()), ("/d/e", array())], false)
            .unwrap_err();
        assert_eq!(err.to_string(), "`/d/e` already exists (an array)");
        assert_eq!(contents(draft.as_ref()), before);
    }
}

/// The existence check lists each parent directory that exists once and
/// probes only the names a listing shows (the root's too), however many
/// nodes the batch holds: a directory its parent's listing lacks is not
/// listed, and nodes that exist are not written again.
#[test]
fn the_check_lists_each_parent_once_and_probes_only_listed_names() {
    use zarrkit::store::testing::{FaultOp, FaultStore};
    let store = Arc::new(FaultStore::new(Arc::new(MemoryStore::new())));
    let dyn_store: Arc<dyn Store> = store.clone();
    Group::create(dyn_store.clone(), "/", JsonMap::new()).unwrap();
    Group::create(dyn_store.clone(), "/g", JsonMap::new()).unwrap();
    let array = || NewNode::from(Array::builder(&[4], DataType::UInt8, &[2]));
    array_at(&dyn_store, "/g/x");
    store.reset_counts();
    let nodes = (0..100).map(|i| (format!("/n{i:03}"), array())).chain([
        ("/g/y".to_string(), array()),
        ("/deep/a/b/c".to_string(), array()),
    ]);
    let created = create_hierarchy(dyn_store.clone(), nodes, false).unwrap();
    // 102 given, and `/deep`, `/deep/a`, `/deep/a/b` added; `/` and `/g`
    // are there.
    assert_eq!(created.len(), 105);
    assert_eq!(store.calls(FaultOp::Set), 105);
    // `/` and `/g`; not `/deep` and below, which the root's listing lacks.
    assert_eq!(store.calls(FaultOp::List), 2);
    // The documents of `/` and `/g` (and the root's, for the drafts), not
    // 5 per node as probing each path would read.
    let reads = store.calls(FaultOp::Get);
    assert!(reads <= 12, "{reads} reads");
}

fn array_at(store: &Arc<dyn Store>, path: &str) {
    Array::builder(&[4], DataType::UInt8, &[2])
        .create(store.clone(), path)
        .unwrap();
}

/// With `overwrite`, each node given replaces what is there, with
/// everything below it (its chunks, its children), as zarr-python's
/// `create_hierarchy(overwrite=True)` does; a parent group found under an
/// erased node is written again; an array where a parent group would be
/// added still refuses the batch.
#[test]
fn overwrite_replaces_the_nodes_given() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    Group::create(store.clone(), "/", JsonMap::new()).unwrap();
    let old = Array::builder(&[4], DataType::UInt8, &[2])
        .create(store.clone(), "/a")
        .unwrap();
    old.write_region(&Region::whole(&[4]), &[1u8, 2, 3, 4])
        .unwrap();
    Group::create(store.clone(), "/g", attributes(r#"{"v": 1}"#)).unwrap();
    Group::create(store.clone(), "/g/sub", JsonMap::new()).unwrap();
    Group::create(store.clone(), "/g-x", JsonMap::new()).unwrap();
    Array::builder(&[1], DataType::UInt8, &[1])
        .create(store.clone(), "/g/sub/old")
        .unwrap();
    let array = || NewNode::from(Array::builder(&[3], DataType::Float64, &[3]));

    let err = create_hierarchy(
        store.clone(),
        [("/a", NewNode::group(JsonMap::new()))],
        false,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "`/a` already exists (an array)");

    let created = create_hierarchy(
        store.clone(),
        [
            ("/a", NewNode::group(attributes(r#"{"now": "group"}"#))),
            ("/g", NewNode::group(attributes(r#"{"v": 2}"#))),
            ("/g/sub/new", array()),
            // `/g-x` sorts between `/g` and `/g/sub`; kept, not erased.
            ("/g-x/k", array()),
        ],
        true,
    )
    .unwrap();
    let paths: Vec<_> = created.iter().map(|n| n.path().to_string()).collect();
    assert_eq!(paths, ["/a", "/g", "/g-x/k", "/g/sub", "/g/sub/new"]);
    let a = Group::open(store.clone(), "/a").unwrap();
    assert_eq!(a.attributes()["now"], "group");
    assert_eq!(
        Group::open(store.clone(), "/g").unwrap().attributes()["v"],
        2
    );
    let keys: Vec<String> = store
        .list()
        .unwrap()
        .iter()
        .map(|k| k.as_str().to_string())
        .collect();
    assert_eq!(
        keys,
        [
            "a/zarr.json",
            "g-x/k/zarr.json",
            "g-x/zarr.json",
            "g/sub/new/zarr.json",
            "g/sub/zarr.json",
            "g/zarr.json",
            "zarr.json"
        ]
    );

    let before = contents(store.as_ref());
    let err = create_hierarchy(store.clone(), [("/g/sub/new/x", array())], true).unwrap_err();
    assert_eq!(err.to_string(), "`/g/sub/new` already exists (an array)");
    assert_eq!(contents(store.as_ref()), before);
}

/// Batches that are not a hierarchy, or hold an invalid node, are refused
/// before the store is touched, naming the node.
#[test]
fn invalid_batches_name_the_node_and_write_nothing() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = || NewNode::from(Array::builder(&[4], DataType::UInt8, &[2]));
    let cases: Vec<(Vec<(&str, NewNode)>, &str)> = vec![
        (
            vec![("a", array()), ("/b", array()), ("/a/", array())],
            "cannot create `/a` in one hierarchy: it is given more than once",
        ),
        (
            vec![("/a", array()), ("/a/b/c", array())],
            "cannot create `/a` in one hierarchy: it is an array, and `/a/b/c` would lie below it",
        ),
        (
            vec![
                ("/a", array()),
                (
                    "/b",
                    NewNode::from(
                        Array::builder(&[4], DataType::UInt8, &[2]).format(ZarrFormat::V2),
                    ),
                ),
            ],
            "cannot create `/b` in one hierarchy: it is v2 while the other nodes are v3 (one batch writes one format)",
        ),
        (
            vec![
                ("/a", array()),
                (
                    "/bad",
                    NewNode::from(Array::builder(&[4, 4], DataType::UInt8, &[2])),
                ),
            ],
            "invalid metadata for `/bad`",
        ),
        (
            vec![("/a", array()), ("/__b", array())],
            "invalid node path `/__b`",
        ),
    ];
    for (nodes, message) in cases {
        let err = create_hierarchy(store.clone(), nodes, false).unwrap_err();
        assert!(
            err.to_string().starts_with(message),
            "{err} does not start with {message}"
        );
        assert!(store.list().unwrap().is_empty());
    }
    let err =
        create_hierarchy(store.clone(), [("/a", array()), ("/a", array())], false).unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidHierarchy {
            problem: HierarchyProblem::Duplicate,
            ..
        }
    ));
}

/// A document that cannot be written fails the batch naming its key; the
/// documents written before it are whole and open.
#[test]
fn a_failed_write_names_the_node_and_leaves_whole_documents() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    // A file where the directory of `/a05` would go.
    put(store.as_ref(), "a05", b"not a directory");
    let nodes = (0..10).map(|i| {
        let array = Array::builder(&[4], DataType::UInt8, &[2]);
        (format!("/a{i:02}"), NewNode::from(array))
    });
    let err = create_hierarchy(store.clone(), nodes, false).unwrap_err();
    let message = crate::support::error_chain(&err);
    assert!(message.contains("`a05/zarr.json`"), "{message}");
    // The root went first; the rest of its level may or may not have been
    // written, but what was is whole.
    let documents: Vec<_> = store
        .list()
        .unwrap()
        .into_iter()
        .filter(|k| k.name() == "zarr.json")
        .collect();
    assert!(
        documents.iter().any(|k| k.as_str() == "zarr.json"),
        "{documents:?}"
    );
    assert!(!documents.iter().any(|k| k.as_str() == "a05/zarr.json"));
    for key in documents {
        let path = key.as_str().trim_end_matches("zarr.json");
        Node::open(store.clone(), &format!("/{path}")).unwrap();
    }
}

/// zarr-python 3 opens what the batch wrote: the tree, the attributes,
/// and the values written through a returned handle.
#[test]
fn zarr_python_reads_a_created_hierarchy() {
    let Some(python) = crate::support::python("ZARRKIT_PYTHON", "zarr 3.1") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    let nodes = (0..3)
        .map(|i| {
            let array = Array::builder(&[6], DataType::Int16, &[4])
                .attributes(attributes(&format!(r#"{{"i": {i}}}"#)));
            (format!("/data/a{i}"), NewNode::from(array))
        })
        .chain([(
            "/meta".to_string(),
            NewNode::group(attributes(r#"{"title": "t"}"#)),
        )]);
    let created = create_hierarchy(store.clone(), nodes, false).unwrap();
    let Some(Node::Array(a1)) = created.iter().find(|n| n.path().as_str() == "/data/a1") else {
        panic!("no /data/a1")
    };
    a1.write_region(&Region::whole(&[6]), &[1i16, -2, 3, -4, 5, -6])
        .unwrap();
    let script = r#"
import sys, zarr
root = zarr.open_group(sys.argv[1], mode="r")
for name, node in sorted(root.members(max_depth=None)):
    kind = "array" if isinstance(node, zarr.Array) else "group"
    print(name, kind, dict(node.attrs))
print(root["data/a1"][:].tolist())
"#;
    let out = crate::support::run(&python, &["-c", script, dir.path().to_str().unwrap()], &[]);
    assert_eq!(
        out,
        "data group {}\n\
         data/a0 array {'i': 0}\n\
         data/a1 array {'i': 1}\n\
         data/a2 array {'i': 2}\n\
         meta group {'title': 't'}\n\
         [1, -2, 3, -4, 5, -6]\n"
    );
}

/// On SeaweedFS: the batch (listings and conditional creates, many in
/// flight) writes the hierarchy, and a second batch with one node in the
/// way is refused naming it, writing nothing.
#[cfg(feature = "s3")]
#[test]
fn a_hierarchy_is_created_on_an_s3_server() {
    let Some((store, _)) = crate::remote::s3_store("ZARRKIT_S3_ENDPOINT", "hierarchy") else {
        return;
    };
    let nodes = (0..40).map(|i| {
        let array = Array::builder(&[8, 8], DataType::UInt16, &[4, 4]);
        (format!("/g{}/a{i:02}", i % 4), NewNode::from(array))
    });
    let created = create_hierarchy(store.clone(), nodes, false).unwrap();
    assert_eq!(created.len(), 45);
    let root = Group::open(store.clone(), "/").unwrap();
    let walked = root.walk().unwrap();
    assert_eq!(walked.len(), 44);
    assert_eq!(
        walked
            .iter()
            .filter(|n| n.kind() == NodeKind::Array)
            .count(),
        40
    );
    let before = contents(store.as_ref());
    assert_eq!(before.len(), 45);
    let nodes = [
        ("/g5/new", Array::builder(&[1], DataType::UInt8, &[1])),
        ("/g2/a06", Array::builder(&[1], DataType::UInt8, &[1])),
    ];
    let err = create_hierarchy(
        store.clone(),
        nodes.map(|(p, b)| (p, NewNode::from(b))),
        false,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "`/g2/a06` already exists (an array)");
    assert_eq!(contents(store.as_ref()), before);
    zarrkit::node::erase(store.as_ref(), "/").unwrap();
}
