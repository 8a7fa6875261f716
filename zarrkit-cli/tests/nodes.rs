//! End-to-end tests of `zarrkit attrs`, `zarrkit rm` and `zarrkit resize`:
//! every format's documents, consolidated metadata kept true, errors with
//! exit codes, and zarr-python reading the result (`ZARRKIT_PYTHON`, see
//! `common::python`).

mod common;

use common::{object, open_store, python, zarrkit};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::DataType;
use zarrkit::{Array, Group, Node, Region};

fn s(path: &Path) -> String {
    path.display().to_string()
}

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// A hierarchy in `format`: a root group with `/a` (int32 [5, 4] in [2, 3]
/// chunks, 0..20 written), `/ab` (a sibling whose name starts the same) and
/// `/g/b`.
fn hierarchy(format: ZarrFormat) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("h.zarr");
    let store = open_store(&root);
    Group::create_as(
        Arc::clone(&store),
        "/",
        format,
        object(json!({"title": "t"})),
    )
    .unwrap();
    Group::create_as(Arc::clone(&store), "/g", format, Default::default()).unwrap();
    for path in ["/a", "/ab", "/g/b"] {
        let array = Array::builder(&[5, 4], DataType::Int32, &[2, 3])
            .format(format)
            .create(Arc::clone(&store), path)
            .unwrap();
        let values: Vec<i32> = (0..20).collect();
        array
            .write_region(&Region::whole(&[5, 4]), &values)
            .unwrap();
    }
    (dir, root)
}

#[test]
fn attrs_round_trip_in_every_format_with_groups() {
    for format in [
        ZarrFormat::V3,
        ZarrFormat::V2,
        ZarrFormat::V3Draft2022,
        ZarrFormat::V3Draft2019Json,
        ZarrFormat::V3Draft2019,
    ] {
        let (_dir, root) = hierarchy(format);
        let a = s(&root.join("a"));
        let name = format.name();
        assert_eq!(
            zarrkit(["attrs", "set", &a, "units", "m/s"]).code,
            0,
            "{name}"
        );
        let run = zarrkit(["attrs", "set", &s(&root), "/a", "range", "[0, 5]"]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert_eq!(run.stdout, "set 1 attribute of `/a`\n");
        let run = zarrkit(["attrs", "set", &a, "--json", r#"{"n": 1, "flag": true}"#]);
        assert_eq!(run.stdout, "set 2 attributes of `/a`\n", "{name}");
        let run = zarrkit(["attrs", "get", &a]);
        assert_eq!(
            json_of(&run.stdout),
            json!({"units": "m/s", "range": [0, 5], "n": 1, "flag": true}),
            "{name}"
        );
        assert_eq!(
            json_of(&zarrkit(["attrs", "get", &a, "range"]).stdout),
            json!([0, 5])
        );
        assert_eq!(zarrkit(["attrs", "del", &a, "n"]).code, 0);
        let run = zarrkit(["attrs", "del", &a, "n"]);
        assert_eq!(run.code, 1, "{name}");
        assert!(
            run.stderr.contains("`/a` has no attribute `n`"),
            "{name}: {}",
            run.stderr
        );
        // The library reads what was written, and the data is untouched.
        let store = open_store(&root);
        let array = Array::open(Arc::clone(&store), "/a").unwrap();
        assert_eq!(array.format(), format);
        assert_eq!(
            Value::Object(array.attributes().clone()),
            json!({"units": "m/s", "range": [0, 5], "flag": true}),
            "{name}"
        );
        assert_eq!(
            array
                .read_region::<i32>(&Region::new(vec![4, 3], vec![1, 1]))
                .unwrap(),
            [19]
        );
        // A group, and --replace.
        let run = zarrkit([
            "attrs",
            "set",
            &s(&root),
            "--json",
            r#"{"only": "this"}"#,
            "--replace",
        ]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let group = Group::open(store, "/").unwrap();
        assert_eq!(
            Value::Object(group.attributes().clone()),
            json!({"only": "this"}),
            "{name}"
        );
    }
}

#[test]
fn attrs_write_each_formats_own_document() {
    let (_dir, root) = hierarchy(ZarrFormat::V2);
    assert_eq!(
        zarrkit(["attrs", "set", &s(&root.join("a")), "k", "v"]).code,
        0
    );
    let zattrs: Value =
        serde_json::from_slice(&std::fs::read(root.join("a/.zattrs")).unwrap()).unwrap();
    assert_eq!(zattrs, json!({"k": "v"}));
    // v1: a single array at the root, attributes in `attrs`.
    let dir = tempfile::tempdir().unwrap();
    let v1 = dir.path().join("v1");
    Array::builder(&[4], DataType::UInt8, &[2])
        .format(ZarrFormat::V1)
        .create(open_store(&v1), "/")
        .unwrap();
    let run = zarrkit(["attrs", "set", &s(&v1), "answer", "42"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let attrs: Value = serde_json::from_slice(&std::fs::read(v1.join("attrs")).unwrap()).unwrap();
    assert_eq!(attrs, json!({"answer": 42}));
    assert_eq!(
        json_of(&zarrkit(["attrs", "get", &s(&v1), "answer"]).stdout),
        json!(42)
    );
    // v3: `attributes` of zarr.json, every other field kept.
    let (_dir3, root3) = hierarchy(ZarrFormat::V3);
    let before: Value =
        serde_json::from_slice(&std::fs::read(root3.join("a/zarr.json")).unwrap()).unwrap();
    assert_eq!(
        zarrkit(["attrs", "set", &s(&root3.join("a")), "k", "true"]).code,
        0
    );
    let mut after: Value =
        serde_json::from_slice(&std::fs::read(root3.join("a/zarr.json")).unwrap()).unwrap();
    assert_eq!(after["attributes"], json!({"k": true}));
    after.as_object_mut().unwrap().remove("attributes");
    let mut before = before;
    before.as_object_mut().unwrap().remove("attributes");
    assert_eq!(after, before);
    // Errors: a missing node, a bad --json, a missing key.
    let run = zarrkit(["attrs", "get", &s(&root3), "/nothing"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("/nothing"), "{}", run.stderr);
    let run = zarrkit(["attrs", "set", &s(&root3.join("a")), "--json", "[1]"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("is not a JSON object"),
        "{}",
        run.stderr
    );
    let run = zarrkit(["attrs", "get", &s(&root3.join("a")), "missing"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("`/a` has no attribute `missing`"),
        "{}",
        run.stderr
    );
    let run = zarrkit(["attrs", "frobnicate", &s(&root3)]);
    assert_eq!(run.code, 2);
}

#[test]
fn edits_keep_consolidated_metadata_true() {
    for format in [ZarrFormat::V3, ZarrFormat::V2] {
        let (_dir, root) = hierarchy(format);
        let name = format.name();
        assert_eq!(zarrkit(["consolidate", &s(&root)]).code, 0);
        let run = zarrkit(["attrs", "set", &s(&root.join("g/b")), "units", "K"]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert!(
            run.stdout
                .contains("updated the consolidated metadata of `/`"),
            "{}",
            run.stdout
        );
        let run = zarrkit(["resize", "--json", &s(&root.join("a")), "--shape", "3,4"]);
        assert_eq!(
            json_of(&run.stdout)["consolidated_updated"],
            json!(["/"]),
            "{name}"
        );
        let run = zarrkit(["rm", &s(&root), "/ab"]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let run = zarrkit(["consolidate", "--check", &s(&root)]);
        assert_eq!(run.code, 0, "{name}: {}{}", run.stdout, run.stderr);
        // Readers that trust the consolidated metadata see the edits.
        let group = Group::open(open_store(&root), "/").unwrap();
        assert!(group.is_consolidated(), "{name}");
        let children: Vec<String> = group
            .children()
            .unwrap()
            .iter()
            .map(|n| n.path().to_string())
            .collect();
        assert_eq!(children, ["/a", "/g"], "{name}");
        let Node::Array(b) = group.node("g/b").unwrap() else {
            panic!("an array")
        };
        assert_eq!(Value::Object(b.attributes().clone()), json!({"units": "K"}));
        let Node::Array(a) = group.node("a").unwrap() else {
            panic!("an array")
        };
        assert_eq!(a.shape(), [3, 4]);
    }
}

#[test]
fn rm_removes_a_node_and_what_is_below_it() {
    let (_dir, root) = hierarchy(ZarrFormat::V3);
    // --dry-run lists and removes nothing.
    let run = zarrkit(["rm", "--dry-run", &s(&root.join("g"))]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    assert_eq!(lines[0], "would remove /g (group)");
    assert!(
        lines[1].starts_with("would remove /g/b (array, 6 stored chunks, "),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("would remove `/g`: 2 nodes, 6 stored chunks"),
        "{}",
        lines[2]
    );
    assert!(root.join("g/b/zarr.json").exists());
    let run = zarrkit(["rm", "--dry-run", "--json", &s(&root), "/g"]);
    let report = json_of(&run.stdout);
    assert_eq!(report["dry_run"], true);
    assert_eq!(report["nodes"], 2);
    assert_eq!(report["stored_chunks"], 6);
    assert_eq!(report["removed"][1]["path"], "/g/b");
    assert_eq!(report["removed"][1]["node_type"], "array");
    assert_eq!(report["removed"][0]["node_type"], "group");
    // Removing `/a` leaves `/ab`, whose name starts the same.
    let run = zarrkit(["rm", "--json", &s(&root.join("a"))]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = json_of(&run.stdout);
    assert_eq!(
        (report["dry_run"].clone(), report["stored_chunks"].clone()),
        (json!(false), json!(6))
    );
    assert!(!root.join("a").exists());
    assert!(root.join("ab/zarr.json").exists() && root.join("ab/c/0/0").exists());
    let run = zarrkit(["rm", &s(&root), "/a"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("there is no node at `/a`"),
        "{}",
        run.stderr
    );
    // The root only with --root.
    let run = zarrkit(["rm", &s(&root)]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("pass --root"), "{}", run.stderr);
    assert!(root.join("zarr.json").exists());
    let run = zarrkit(["rm", "--root", &s(&root)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!root.join("zarr.json").exists() && !root.join("ab").exists());
    // A draft's group goes with its `meta/` and `data/` keys.
    let (_dir, draft) = hierarchy(ZarrFormat::V3Draft2019Json);
    assert_eq!(zarrkit(["rm", &s(&draft), "/g"]).code, 0);
    let store = open_store(&draft);
    assert!(
        zarrkit::node::exists(store.as_ref(), "/g/b")
            .unwrap()
            .is_none()
    );
    assert!(
        zarrkit::node::exists(store.as_ref(), "/ab")
            .unwrap()
            .is_some()
    );
}

#[test]
fn resize_shrinks_erases_and_grows() {
    let (_dir, root) = hierarchy(ZarrFormat::V2);
    let a = s(&root.join("a"));
    // [5, 4] in [2, 3] chunks: 3 × 2 chunks; [2, 2] keeps chunk (0, 0) only.
    let run = zarrkit(["resize", "--json", &a, "--shape", "2,2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        json_of(&run.stdout),
        json!({"path": "/a", "old_shape": [5, 4], "new_shape": [2, 2],
               "stored_chunks_before": 6, "stored_chunks_after": 1, "consolidated_updated": []})
    );
    assert!(
        root.join("a/0.0").exists() && !root.join("a/0.1").exists() && !root.join("a/2.0").exists()
    );
    // Growing reads the fill value where chunks were erased, and the old
    // values past the edge of the cut chunk (as zarr-python keeps them).
    let run = zarrkit(["resize", &root.to_string_lossy(), "/a", "--shape", "[3, 4]"]);
    assert_eq!(run.stdout, "resized `/a` from [2, 2] to [3, 4]\n");
    let run = zarrkit(["get", "--json", &a]);
    assert_eq!(
        json_of(&run.stdout),
        json!([[0, 1, 2, 0], [4, 5, 6, 0], [0, 0, 0, 0]])
    );
    // --clear-cut resets them first.
    assert_eq!(
        zarrkit(["resize", "--clear-cut", &a, "--shape", "1x1"]).code,
        0
    );
    assert_eq!(zarrkit(["resize", &a, "--shape", "3x4"]).code, 0);
    let run = zarrkit(["get", "--json", &a]);
    assert_eq!(
        json_of(&run.stdout),
        json!([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    );
    // Errors: the wrong number of dimensions (exit 1), a bad shape (usage, 2), a group.
    let run = zarrkit(["resize", &a, "--shape", "3"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("`/a` has 2 dimensions"),
        "{}",
        run.stderr
    );
    assert_eq!(zarrkit(["resize", &a, "--shape", "3,x"]).code, 2);
    assert_eq!(zarrkit(["resize", &a]).code, 2);
    let run = zarrkit(["resize", &s(&root.join("g")), "--shape", "3"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("`/g` is a group"), "{}", run.stderr);
}

/// zarr-python 3.1 reads what attrs, rm and resize leave behind,
/// through consolidated metadata.
#[test]
fn zarr_python_reads_the_edited_hierarchy() {
    let Some(python) = python("ZARRKIT_PYTHON", "zarr 3.1 (scripts/requirements.txt)") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("py.zarr");
    const WRITE: &str = r#"
import sys, numpy as np, zarr
g = zarr.open_group(sys.argv[1], mode="w")
a = g.create_array("a", shape=(6, 4), chunks=(4, 4), dtype="u2")
a[:] = np.arange(24).reshape(6, 4)
g.create_group("old").create_array("x", shape=(2,), dtype="f4")
zarr.consolidate_metadata(sys.argv[1])
"#;
    common::python_script(&python, WRITE, &[&root]);
    assert_eq!(
        zarrkit(["attrs", "set", &s(&root.join("a")), "units", "m"]).code,
        0
    );
    assert_eq!(
        zarrkit(["resize", &s(&root.join("a")), "--shape", "3,4"]).code,
        0
    );
    assert_eq!(zarrkit(["rm", &s(&root.join("old"))]).code, 0);
    const READ: &str = r#"
import sys, json, zarr
g = zarr.open_consolidated(sys.argv[1], mode="r")
a = g["a"]
print(json.dumps({"children": sorted(g.keys()), "attrs": dict(a.attrs), "shape": list(a.shape), "values": a[:].tolist()}))
"#;
    let read = json_of(&common::python_script(&python, READ, &[&root]));
    assert_eq!(
        read,
        json!({"children": ["a"], "attrs": {"units": "m"}, "shape": [3, 4],
               "values": [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]})
    );
}
