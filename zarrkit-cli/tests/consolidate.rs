//! End-to-end tests of `zarrkit consolidate`: writing, `--check` with exit
//! code 1 on a mismatch, refusals, and `tree` warning about consolidated
//! metadata it cannot use.

mod common;

use common::{open_store, zarrkit};
use serde_json::json;
use std::ffi::OsStr;
use std::path::Path;
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, JsonMap};
use zarrkit::store::Store;
use zarrkit::{Array, Group};

/// `/` with array `a` and group `g` holding array `b`.
fn store(root: &Path, format: ZarrFormat) -> Arc<dyn Store> {
    let store = open_store(root);
    Group::create_as(store.clone(), "/", format, JsonMap::new()).unwrap();
    Group::create_as(store.clone(), "/g", format, JsonMap::new()).unwrap();
    for path in ["/a", "/g/b"] {
        Array::builder(&[4], DataType::UInt8, &[2])
            .format(format)
            .create(store.clone(), path)
            .unwrap();
    }
    store
}

#[test]
fn consolidate_writes_and_check_agrees_in_v2_and_v3() {
    for (format, key) in [
        (ZarrFormat::V2, ".zmetadata"),
        (ZarrFormat::V3, "zarr.json"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        store(dir.path(), format);
        let run = zarrkit([OsStr::new("consolidate"), dir.path().as_os_str()]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains(&format!("to `{key}`")),
            "{}",
            run.stdout
        );
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(key)).unwrap()).unwrap();
        match format {
            ZarrFormat::V2 => assert_eq!(doc["zarr_consolidated_format"], 1),
            _ => assert_eq!(
                doc["consolidated_metadata"]["metadata"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .collect::<Vec<_>>(),
                ["a", "g", "g/b"]
            ),
        }
        let run = zarrkit([
            OsStr::new("consolidate"),
            OsStr::new("--check"),
            dir.path().as_os_str(),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("agrees"), "{}", run.stdout);
        // Written again, reported as JSON: the key and as many entries as
        // the document holds (v2: one per document, v3: one per node).
        let entries = match format {
            ZarrFormat::V2 => doc["metadata"].as_object().unwrap().len(),
            _ => doc["consolidated_metadata"]["metadata"]
                .as_object()
                .unwrap()
                .len(),
        };
        let run = zarrkit([
            OsStr::new("consolidate"),
            OsStr::new("--json"),
            dir.path().as_os_str(),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(report["key"], key, "{report}");
        assert_eq!(report["path"], "/");
        assert_eq!(report["entries"], entries, "{report}");
    }
}

#[test]
fn check_lists_every_mismatch_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), ZarrFormat::V3);
    zarrkit([OsStr::new("consolidate"), dir.path().as_os_str()]);
    Array::builder(&[1], DataType::UInt8, &[1])
        .create(store.clone(), "/late")
        .unwrap();
    std::fs::remove_file(dir.path().join("g/b/zarr.json")).unwrap();
    let run = zarrkit([
        OsStr::new("consolidate"),
        OsStr::new("--check"),
        dir.path().as_os_str(),
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("`g/b` is in the consolidated metadata but does not exist"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("`late` exists but is missing from the consolidated metadata"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("in 2 places"), "{}", run.stderr);
}

#[test]
fn consolidate_refuses_an_array_root_and_a_missing_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
    Array::builder(&[4], DataType::UInt8, &[2])
        .create(store, "/")
        .unwrap();
    let run = zarrkit([OsStr::new("consolidate"), dir.path().as_os_str()]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("not a group"), "{}", run.stderr);
    let run = zarrkit([
        OsStr::new("consolidate"),
        dir.path().join("missing").as_os_str(),
    ]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("does not exist"), "{}", run.stderr);
    let run = zarrkit(["consolidate"]);
    assert_eq!(run.code, 2);
}

#[test]
fn tree_answers_from_consolidated_metadata_and_warns_about_invalid_ones() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path(), ZarrFormat::V2);
    zarrkit([OsStr::new("consolidate"), dir.path().as_os_str()]);
    let run = zarrkit([OsStr::new("tree"), dir.path().as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert!(run.stdout.contains("a [4] uint8"), "{}", run.stdout);
    assert!(run.stdout.contains("2 groups, 2 arrays"), "{}", run.stdout);
    // Remove a's document: the consolidated metadata is stale, and the
    // tree shows the real documents with a warning (issue #15).
    std::fs::remove_file(dir.path().join("a/.zarray")).unwrap();
    let run = zarrkit([OsStr::new("tree"), dir.path().as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.starts_with(
            "warning: the consolidated metadata of `/` is stale (2 entries: `a/.zarray` is in \
             the consolidated metadata but does not exist; `a/.zattrs` is in the consolidated \
             metadata but does not exist); showing the real documents"
        ),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("a [4] uint8"), "{}", run.stdout);
    assert!(run.stdout.contains("2 groups, 1 array"), "{}", run.stdout);

    std::fs::write(dir.path().join(".zmetadata"), json!([1]).to_string()).unwrap();
    let run = zarrkit([OsStr::new("tree"), dir.path().as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("warning: `.zmetadata` is invalid"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("2 groups, 1 array"), "{}", run.stdout);
}

/// Issue #15: `consolidate` took only a store root while `info` and `tree`
/// take `STORE[/PATH]`, and `--check` had no JSON output. A group inside
/// the store is consolidated on its own, and `--check --json` reports
/// whether there is consolidated metadata, whether it agrees, and each
/// mismatch.
#[test]
fn consolidate_takes_a_group_path_and_check_prints_json() {
    for format in [ZarrFormat::V2, ZarrFormat::V3] {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path(), format);
        let check = |target: &Path| {
            let run = zarrkit([
                OsStr::new("consolidate"),
                OsStr::new("--check"),
                OsStr::new("--json"),
                target.as_os_str(),
            ]);
            let printed: serde_json::Value = serde_json::from_str(&run.stdout)
                .unwrap_or_else(|e| panic!("{format}: {e}: {}", run.stdout));
            (run.code, printed, run.stderr)
        };
        let (code, printed, stderr) = check(&dir.path().join("g"));
        assert_eq!(code, 1);
        assert_eq!(
            printed,
            json!({
                "store": dir.path().join("g").display().to_string(), "path": "/g",
                "consolidated": false, "agrees": false, "mismatches": []
            }),
            "{format}"
        );
        assert!(stderr.contains("has no consolidated metadata"), "{stderr}");

        let run = zarrkit([OsStr::new("consolidate"), dir.path().join("g").as_os_str()]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        // v2 gathers `.zgroup`, `.zattrs` and `.zarray` documents, v3 nodes.
        let expected = if format == ZarrFormat::V2 {
            "wrote consolidated metadata (v2, 4 entries) to `g/.zmetadata`"
        } else {
            "wrote consolidated metadata (v3, 1 entry) to `g/zarr.json`"
        };
        assert!(run.stdout.starts_with(expected), "{}", run.stdout);
        let (code, printed, _) = check(&dir.path().join("g"));
        assert_eq!(
            (code, &printed["agrees"], &printed["consolidated"]),
            (0, &json!(true), &json!(true))
        );
        // The root was not consolidated, only `/g`.
        let (code, printed, _) = check(dir.path());
        assert_eq!(
            (code, &printed["consolidated"]),
            (1, &json!(false)),
            "{format}"
        );

        // A new array below `/g` is missing from its consolidated metadata.
        Array::builder(&[2], DataType::UInt8, &[2])
            .format(format)
            .create(store.clone(), "/g/c")
            .unwrap();
        let (code, printed, stderr) = check(&dir.path().join("g"));
        assert_eq!(code, 1);
        let (mismatches, places) = if format == ZarrFormat::V2 {
            (
                json!([
                    { "kind": "missing", "key": "c/.zarray" },
                    { "kind": "missing", "key": "c/.zattrs" }
                ]),
                "2 places",
            )
        } else {
            (json!([{ "kind": "missing", "key": "c" }]), "1 place")
        };
        assert_eq!(printed["mismatches"], mismatches, "{format}");
        assert_eq!(printed["agrees"], false);
        assert!(
            stderr.contains(&format!("disagrees with the documents in {places}\n")),
            "{stderr}"
        );
    }
}
