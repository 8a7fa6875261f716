//! End-to-end tests of `zarrkit check`, `zarrkit diff` and `zarrkit stats`:
//! damage made on purpose and found, clean fixtures of every format
//! passing, differences found and summarised, and statistics checked
//! against NumPy.

mod common;

use common::{codec, open_store, python, zarrkit};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, JsonMap};
use zarrkit::store::Store;
use zarrkit::{Array, Group, Region};

/// Runs the binary with `args` and parses its stdout as JSON.
fn run_json(args: &[&OsStr]) -> (i32, Value, String) {
    let run = zarrkit(args);
    let printed = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    (run.code, printed, run.stderr)
}

fn check_json(target: &Path) -> (i32, Value, String) {
    run_json(&[
        OsStr::new("check"),
        OsStr::new("--json"),
        target.as_os_str(),
    ])
}

/// The problems of a `check --json` report as `[kind, node, key]`.
fn problems(report: &Value) -> BTreeSet<String> {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| json!([p["kind"], p["node"], p["key"]]).to_string())
        .collect()
}

/// `(kind, node, key)` triples as [`problems`] gives them.
fn expected(items: Vec<(String, Value, Value)>) -> BTreeSet<String> {
    items
        .into_iter()
        .map(|(kind, node, key)| json!([kind, node, key]).to_string())
        .collect()
}

/// A v3 hierarchy: `/` with `/a` (uint16 [6], chunks [2], zstd), group `/g`
/// with `/g/b` (float32 [4, 4], chunks [2, 2]), all chunks written.
fn hierarchy(root: &Path, format: ZarrFormat) -> Arc<dyn Store> {
    let store = open_store(root);
    Group::create_as(store.clone(), "/", format, JsonMap::new()).unwrap();
    Group::create_as(store.clone(), "/g", format, JsonMap::new()).unwrap();
    let a = Array::builder(&[6], DataType::UInt16, &[2])
        .format(format)
        .create(store.clone(), "/a")
        .unwrap();
    a.write_region(&Region::whole(a.shape()), &[1u16, 2, 3, 4, 5, 6])
        .unwrap();
    let b = Array::builder(&[4, 4], DataType::Float32, &[2, 2])
        .format(format)
        .create(store.clone(), "/g/b")
        .unwrap();
    let values: Vec<f32> = (1..=16).map(|i| i as f32).collect();
    b.write_region(&Region::whole(b.shape()), &values).unwrap();
    store
}

#[test]
fn check_passes_a_clean_hierarchy_with_totals() {
    for (format, chunk_key) in [(ZarrFormat::V3, "a/c/0"), (ZarrFormat::V2, "a/0")] {
        let dir = tempfile::tempdir().unwrap();
        hierarchy(dir.path(), format);
        let (code, report, stderr) = check_json(dir.path());
        assert_eq!(code, 0, "{format}: {report} {stderr}");
        assert_eq!(report["ok"], true);
        assert_eq!(report["format"], format.name());
        assert_eq!(report["listed"], true);
        assert_eq!(
            report["totals"],
            json!({"nodes": 4, "groups": 2, "arrays": 2, "chunks": 7, "chunks_decoded": 7,
                   "stored_bytes": report["totals"]["stored_bytes"], "problems": 0}),
            "{format}"
        );
        let size_a = std::fs::metadata(dir.path().join(chunk_key)).unwrap().len();
        assert!(report["totals"]["stored_bytes"].as_u64().unwrap() > 6 * size_a / 2);
        assert_eq!(report["problems"], json!([]));
        let run = zarrkit([OsStr::new("check"), dir.path().as_os_str()]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout
                .contains("4 nodes (2 groups, 2 arrays), 7 stored chunks (7 decoded"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.ends_with("no problems found\n"),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn check_finds_a_truncated_chunk() {
    let dir = tempfile::tempdir().unwrap();
    hierarchy(dir.path(), ZarrFormat::V3);
    let chunk = dir.path().join("g/b/c/1/0");
    let bytes = std::fs::read(&chunk).unwrap();
    std::fs::write(&chunk, &bytes[..bytes.len() / 2]).unwrap();
    let (code, report, stderr) = check_json(dir.path());
    assert_eq!(code, 1);
    assert_eq!(
        problems(&report),
        expected(vec![(
            "undecodable_chunk".to_string(),
            json!("/g/b"),
            json!("g/b/c/1/0")
        )])
    );
    let message = report["problems"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("cannot decode chunk `g/b/c/1/0`: "),
        "{message}"
    );
    assert_eq!(report["totals"]["chunks_decoded"], 6);
    assert!(stderr.contains("found 1 problem"), "{stderr}");
    // The text report names the key too; the data is left as it was.
    let run = zarrkit([OsStr::new("check"), dir.path().as_os_str()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("undecodable_chunk `g/b/c/1/0`: cannot decode chunk"),
        "{}",
        run.stdout
    );
    assert_eq!(std::fs::read(&chunk).unwrap().len(), bytes.len() / 2);
    // --metadata-only decodes nothing, so finds nothing here.
    let run = zarrkit([
        OsStr::new("check"),
        OsStr::new("--metadata-only"),
        dir.path().as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

#[test]
fn check_finds_a_flipped_byte_under_crc32c_and_in_a_shard_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
    Group::create(store.clone(), "/", JsonMap::new()).unwrap();
    let plain = Array::builder(&[8], DataType::Int32, &[4])
        .codecs_metadata(vec![
            codec("bytes", json!({"endian": "little"})),
            codec("crc32c", json!({})),
        ])
        .create(store.clone(), "/plain")
        .unwrap();
    plain
        .write_region(&Region::whole(plain.shape()), &[1i32, 2, 3, 4, 5, 6, 7, 8])
        .unwrap();
    let sharded = Array::builder(&[8], DataType::Int32, &[8])
        .codecs_metadata(vec![codec(
            "sharding_indexed",
            json!({
                "chunk_shape": [2],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "crc32c"}
                ],
            }),
        )])
        .create(store.clone(), "/sharded")
        .unwrap();
    sharded
        .write_region(
            &Region::whole(sharded.shape()),
            &[1i32, 2, 3, 4, 5, 6, 7, 8],
        )
        .unwrap();
    let (code, report, _) = check_json(dir.path());
    assert_eq!(code, 0, "{report}");

    // One bit of an element of `plain`'s second chunk, and one of the
    // shard index (the 16 bytes per inner chunk before the 4-byte checksum).
    let flip = |path: &Path, at_from_end: usize| {
        let mut bytes = std::fs::read(path).unwrap();
        let at = bytes.len() - at_from_end;
        bytes[at] ^= 0x01;
        std::fs::write(path, bytes).unwrap();
    };
    flip(&dir.path().join("plain/c/1"), 8);
    flip(&dir.path().join("sharded/c/0"), 10);
    let (code, report, _) = check_json(dir.path());
    assert_eq!(code, 1);
    assert_eq!(
        problems(&report),
        expected(vec![
            (
                "undecodable_chunk".to_string(),
                json!("/plain"),
                json!("plain/c/1")
            ),
            (
                "undecodable_chunk".to_string(),
                json!("/sharded"),
                json!("sharded/c/0")
            ),
        ])
    );
    for problem in report["problems"].as_array().unwrap() {
        let message = problem["message"].as_str().unwrap();
        assert!(message.contains("crc32c"), "{message}");
    }
}

#[test]
fn check_finds_orphans_chunks_outside_the_grid_and_a_wrong_chunk_count() {
    let dir = tempfile::tempdir().unwrap();
    let store = hierarchy(dir.path(), ZarrFormat::V3);
    // `/a` has 3 chunks; a shrinking resize by hand: chunks 3 and 4 stay.
    std::fs::write(
        dir.path().join("a/c/3"),
        std::fs::read(dir.path().join("a/c/0")).unwrap(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("a/c/4"),
        std::fs::read(dir.path().join("a/c/0")).unwrap(),
    )
    .unwrap();
    // A crashed writer's temporary file, a stray file at the root and one
    // in a group.
    std::fs::write(dir.path().join("a/c/0.tmp"), b"partial").unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"hello").unwrap();
    std::fs::write(dir.path().join("g/stray"), b"x").unwrap();
    let (code, report, _) = check_json(dir.path());
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        problems(&report),
        expected(vec![
            ("chunk_count".to_string(), json!("/a"), json!(null)),
            ("orphan_key".to_string(), json!("/a"), json!("a/c/0.tmp")),
            ("orphan_key".to_string(), json!(null), json!("g/stray")),
            ("orphan_key".to_string(), json!(null), json!("notes.txt")),
            ("outside_grid".to_string(), json!("/a"), json!("a/c/3")),
            ("outside_grid".to_string(), json!("/a"), json!("a/c/4")),
        ])
    );
    let count = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "chunk_count")
        .unwrap();
    assert_eq!(
        count["message"],
        "5 keys parse as chunks of array `/a`, but its grid has 3 chunks"
    );
    // The library's own listing skips them: the array still reads.
    let a = Array::open(store, "/a").unwrap();
    assert_eq!(a.stored_chunks().unwrap().len(), 3);
    assert_eq!(report["totals"]["chunks"], 7);

    // Checking below a node looks only there.
    let (code, report, _) = check_json(&dir.path().join("g"));
    assert_eq!(code, 1);
    assert_eq!(
        problems(&report),
        expected(vec![(
            "orphan_key".to_string(),
            json!(null),
            json!("g/stray")
        )])
    );
    assert_eq!(report["path"], "/g");
}

// Issue #17: a zarrkit writer killed part way leaves its temporary file
// (and, killed during a conditional write, a lock file); listings skip
// them, and `check` reports them, only under the node checked.
#[test]
fn check_reports_the_temporary_and_lock_files_of_killed_writers() {
    let dir = tempfile::tempdir().unwrap();
    hierarchy(dir.path(), ZarrFormat::V3);
    std::fs::write(dir.path().join("a/c/.zarrkit-tmp.4242.7"), b"partial").unwrap();
    std::fs::write(dir.path().join("g/b/.zarrkit-lock.zarr.json"), b"").unwrap();
    let (code, report, _) = check_json(dir.path());
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        problems(&report),
        expected(vec![
            (
                "leftover_file".to_string(),
                json!(null),
                json!("a/c/.zarrkit-tmp.4242.7")
            ),
            (
                "leftover_file".to_string(),
                json!(null),
                json!("g/b/.zarrkit-lock.zarr.json")
            ),
        ])
    );
    assert!(
        report["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("killed part way"),
        "{report}"
    );
    // Not a chunk: the chunks counted are the real ones.
    assert_eq!(report["totals"]["chunks"], 7);
    let (_, report, _) = check_json(&dir.path().join("g"));
    assert_eq!(
        problems(&report),
        expected(vec![(
            "leftover_file".to_string(),
            json!(null),
            json!("g/b/.zarrkit-lock.zarr.json")
        )])
    );
    zarrkit::store::FilesystemStore::open_existing(dir.path())
        .unwrap()
        .remove_leftover_files()
        .unwrap();
    let (code, report, _) = check_json(dir.path());
    assert_eq!(code, 0, "{report}");
}

#[test]
fn check_finds_stale_consolidated_metadata() {
    for format in [ZarrFormat::V2, ZarrFormat::V3] {
        let dir = tempfile::tempdir().unwrap();
        let store = hierarchy(dir.path(), format);
        let run = zarrkit([OsStr::new("consolidate"), dir.path().as_os_str()]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let (code, report, _) = check_json(dir.path());
        assert_eq!(code, 0, "{format}: {report}");
        Array::builder(&[2], DataType::UInt8, &[2])
            .format(format)
            .create(store.clone(), "/late")
            .unwrap();
        let (code, report, _) = check_json(dir.path());
        assert_eq!(code, 1);
        let wanted = match format {
            ZarrFormat::V2 => ["late/.zarray", "late/.zattrs"].as_slice(),
            _ => ["late"].as_slice(),
        }
        .iter()
        .map(|key| ("stale_consolidated".to_string(), json!("/"), json!(key)))
        .collect();
        assert_eq!(problems(&report), expected(wanted), "{format}");
        assert!(
            report["problems"][0]["message"]
                .as_str()
                .unwrap()
                .contains("exists but is missing from the consolidated metadata"),
            "{report}"
        );
    }
}

#[test]
fn check_finds_invalid_metadata_documents_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    hierarchy(dir.path(), ZarrFormat::V3);
    std::fs::write(dir.path().join("g/b/zarr.json"), b"{ not json").unwrap();
    // An unknown codec: the document parses, the codec chain does not.
    let path = dir.path().join("a/zarr.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    doc["codecs"] = json!([{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "no-such-codec"}]);
    std::fs::write(&path, doc.to_string()).unwrap();
    let (code, report, _) = check_json(dir.path());
    assert_eq!(code, 1);
    // Each broken node once; their chunks are not reported as orphans.
    assert_eq!(
        problems(&report),
        expected(vec![
            (
                "invalid_metadata".to_string(),
                json!("/a"),
                json!("a/zarr.json")
            ),
            (
                "invalid_metadata".to_string(),
                json!("/g/b"),
                json!("g/b/zarr.json")
            ),
        ])
    );
    let messages: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["message"].as_str().unwrap())
        .collect();
    assert!(
        messages.iter().any(|m| m.contains("no-such-codec")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("invalid metadata in `g/b/zarr.json`")),
        "{messages:?}"
    );
    // A v2 `.zarray` with an invalid data type.
    let dir = tempfile::tempdir().unwrap();
    hierarchy(dir.path(), ZarrFormat::V2);
    let path = dir.path().join("g/b/.zarray");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    doc["dtype"] = json!("<q9");
    std::fs::write(&path, doc.to_string()).unwrap();
    let (code, report, _) = check_json(dir.path());
    assert_eq!(code, 1);
    assert_eq!(
        problems(&report),
        expected(vec![(
            "invalid_metadata".to_string(),
            json!("/g/b"),
            json!("g/b/.zarray")
        )])
    );
}

#[test]
fn memory_budget_bounds_what_one_chunk_may_decode_to() {
    let dir = tempfile::tempdir().unwrap();
    hierarchy(dir.path(), ZarrFormat::V3);
    // `/a`'s chunks decode to 4 bytes, `/g/b`'s to 16.
    let (code, report, _) = run_json(&[
        OsStr::new("check"),
        OsStr::new("--json"),
        OsStr::new("--memory-budget"),
        OsStr::new("8"),
        dir.path().as_os_str(),
    ]);
    assert_eq!(code, 1);
    let expected_problems: Vec<_> = ["0/0", "0/1", "1/0", "1/1"]
        .iter()
        .map(|c| {
            (
                "too_large".to_string(),
                json!("/g/b"),
                json!(format!("g/b/c/{c}")),
            )
        })
        .collect();
    assert_eq!(problems(&report), expected(expected_problems));
    assert_eq!(report["totals"]["chunks_decoded"], 3);
    let run = zarrkit([
        OsStr::new("stats"),
        dir.path().as_os_str(),
        OsStr::new("/g/b"),
        OsStr::new("--memory-budget"),
        OsStr::new("8"),
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("array `/g/b` needs 16 bytes of memory, more than the budget of 8 bytes"),
        "{}",
        run.stderr
    );
    let (code, report, _) = stats_json(dir.path(), "/g/b", &["--memory-budget", "1K"]);
    assert_eq!(code, 0);
    assert_eq!(report["mean"], 8.5);
    assert_eq!(zarrkit(["check", "--memory-budget", "lots", "x"]).code, 2);
}

#[test]
fn check_refuses_what_is_not_a_store_and_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let run = zarrkit([OsStr::new("check"), dir.path().as_os_str()]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("no Zarr hierarchy"), "{}", run.stderr);
    assert_eq!(zarrkit(["check"]).code, 2);
    assert_eq!(zarrkit(["check", "--no-such-option", "x"]).code, 2);
}

/// The fixture stores of every format: testdata/fixtures.toml's stores.
fn fixture_stores() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let manifest = std::fs::read_to_string(root.join("fixtures.toml")).unwrap();
    let mut stores = BTreeSet::new();
    for line in manifest.lines() {
        if let Some(store) = line.strip_prefix("store = ") {
            stores.insert(root.join(store.trim_matches('"')));
        }
    }
    stores.into_iter().collect()
}

/// The zarr-python 2.x fixture of the shared test data (its README): one
/// v2 group holding every array zarr-python 2's format test wrote.
fn shared_zarr2_fixture() -> PathBuf {
    let beside =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/zarr-python-2-fixture");
    if beside.exists() {
        beside
    } else {
        PathBuf::from("/work/shared/testdata/zarr-python-2-fixture")
    }
}

#[test]
fn check_passes_the_fixtures_of_every_format() {
    let mut formats = BTreeSet::new();
    let mut checked = 0;
    for store in fixture_stores() {
        let name = store.display().to_string();
        // Stores without a root node have no hierarchy to check.
        if name.contains("fixtures/no-root") {
            continue;
        }
        let (code, report, stderr) = check_json(&store);
        // Known findings, each correct:
        if name.ends_with("v3-draft-2022/fallback-dtype.zarr") {
            // An array of a data type zarrkit reads only when asked to fall back.
            assert_eq!(code, 1, "{name}");
            assert_eq!(report["problems"][0]["kind"], "invalid_metadata", "{name}");
            continue;
        }
        assert_eq!(code, 0, "{name}: {report} {stderr}");
        assert_eq!(report["ok"], true);
        formats.insert(report["format"].as_str().unwrap().to_string());
        checked += 1;
    }
    assert!(checked > 30, "{checked}");

    // zarr-python 2's fixture: every array decodes; `nested_legacy` was
    // written by its NestedDirectoryStore, `0/0` under a `.zarray` without
    // `dimension_separator`, so the key it declares (`0.0`) is missing and
    // `0/0` is a stray (zarr-python 2 reads it only through that store class).
    let (code, report, _) = check_json(&shared_zarr2_fixture());
    assert_eq!(code, 1);
    assert_eq!(
        problems(&report),
        expected(vec![(
            "orphan_key".to_string(),
            json!("/nested_legacy"),
            json!("nested_legacy/0/0")
        )])
    );
    assert_eq!(report["totals"]["arrays"], 173);
    assert_eq!(report["totals"]["chunks_decoded"], 6997);
    assert_eq!(
        formats,
        BTreeSet::from(
            [
                "v1",
                "v2",
                "v3",
                "v3-draft-2019",
                "v3-draft-2019-json",
                "v3-draft-2019a",
                "v3-draft-2022"
            ]
            .map(String::from)
        )
    );
}

#[test]
fn check_reads_a_zip_archive() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarr");
    hierarchy(&src, ZarrFormat::V3);
    let zip = dir.path().join("copy.zip");
    let run = zarrkit([OsStr::new("migrate"), src.as_os_str(), zip.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (code, report, stderr) = check_json(&zip);
    assert_eq!(code, 0, "{report} {stderr}");
    assert_eq!(report["totals"]["chunks"], 7);
    assert_eq!(report["totals"]["chunks_decoded"], 7);
}

// ---------------------------------------------------------------------------
// diff
// ---------------------------------------------------------------------------

fn diff_json(a: &Path, b: &Path, extra: &[&str]) -> (i32, Value, String) {
    let mut args = vec![OsStr::new("diff"), OsStr::new("--json")];
    args.extend(extra.iter().map(OsStr::new));
    args.push(a.as_os_str());
    args.push(b.as_os_str());
    run_json(&args)
}

/// A float64 [5, 6] array in chunks [2, 4] at `/x` of a new v3 store.
fn float_array(root: &Path, chunks: &[u64], values: &[f64]) -> Array {
    let store = open_store(root);
    Group::create(store.clone(), "/", JsonMap::new()).unwrap();
    let array = Array::builder(&[5, 6], DataType::Float64, chunks)
        .fill_value(f64::NAN)
        .create(store, "/x")
        .unwrap();
    array
        .write_region(&Region::whole(array.shape()), values)
        .unwrap();
    array
}

fn ramp() -> Vec<f64> {
    (0..30).map(|i| f64::from(i) * 0.5).collect()
}

#[test]
fn diff_of_equal_stores_is_empty_and_a_changed_element_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.zarr"), dir.path().join("b.zarr"));
    float_array(&a, &[2, 4], &ramp());
    let array_b = float_array(&b, &[2, 4], &ramp());
    let (code, report, stderr) = diff_json(&a, &b, &[]);
    assert_eq!(code, 0, "{report} {stderr}");
    assert_eq!(report["same"], true);
    assert_eq!(report["totals"]["nodes"], 2);
    let x = &report["nodes"][1];
    assert_eq!(x["path"], "/x");
    assert_eq!(x["status"], "same");
    assert_eq!(x["values"]["differing"], 0);
    assert_eq!(x["values"]["elements"], 30);
    let run = zarrkit([OsStr::new("diff"), a.as_os_str(), b.as_os_str()]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout
            .ends_with("same: 2 nodes compared, no difference\n"),
        "{}",
        run.stdout
    );

    array_b
        .write_region(&Region::new(vec![3, 5], vec![1, 1]), &[99.25f64])
        .unwrap();
    let (code, report, stderr) = diff_json(&a, &b, &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains("differ"), "{stderr}");
    let x = &report["nodes"][1];
    assert_eq!(x["status"], "different");
    assert_eq!(x["metadata"], json!([]));
    assert_eq!(x["values"]["differing"], 1);
    assert_eq!(
        x["values"]["first"],
        json!([{"index": [3, 5], "a": 11.5, "b": 99.25}])
    );
    assert_eq!(report["totals"]["differing_elements"], 1);
    let run = zarrkit([OsStr::new("diff"), a.as_os_str(), b.as_os_str()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains(
            "/x: differs\n  values: 1 of 30 elements differ\n    [3,5]: A: 11.5 / B: 99.25\n"
        ),
        "{}",
        run.stdout
    );
    // The node inside each store, by STORE/PATH and by --node.
    let (code, report, _) = diff_json(&a.join("x"), &b.join("x"), &[]);
    assert_eq!((code, report["nodes"][0]["path"].clone()), (1, json!("/")));
    let (code, report, _) = diff_json(&a, &b, &["--node", "x"]);
    assert_eq!((code, report["a"]["path"].clone()), (1, json!("/x")));
}

#[test]
fn diff_reports_metadata_field_by_field_and_compares_values_across_chunkings() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.zarr"), dir.path().join("b.zarr"));
    float_array(&a, &[2, 4], &ramp());
    let mut array_b = float_array(&b, &[3, 5], &ramp());
    let mut attributes = JsonMap::new();
    attributes.insert("units".into(), json!("K"));
    array_b.set_attributes(attributes).unwrap();
    Group::create(open_store(&b), "/extra", JsonMap::new()).unwrap();

    let (code, report, _) = diff_json(&a, &b, &[]);
    assert_eq!(code, 1);
    let nodes = report["nodes"].as_array().unwrap();
    assert_eq!(nodes[1]["path"], "/extra");
    assert_eq!(nodes[1]["status"], "only_in_b");
    let x = &nodes[2];
    assert_eq!(
        x["metadata"],
        json!([
            {"field": "chunk_shape",
             "a": {"name": "regular", "configuration": {"chunk_shape": [2, 4]}},
             "b": {"name": "regular", "configuration": {"chunk_shape": [3, 5]}}},
            {"field": "attributes", "a": {}, "b": {"units": "K"}},
        ])
    );
    // Different chunkings, equal values.
    assert_eq!(x["values"]["compared"], true);
    assert_eq!(x["values"]["differing"], 0);
    assert_eq!(report["totals"]["only_in_b"], 1);

    let run = zarrkit([
        OsStr::new("diff"),
        OsStr::new("--metadata-only"),
        a.as_os_str(),
        b.as_os_str(),
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("/extra: only in B (group)\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("  attributes: A: {} / B: {\"units\":\"K\"}\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("values"), "{}", run.stdout);
}

#[test]
fn diff_treats_nan_as_equal_and_applies_tolerances() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.zarr"), dir.path().join("b.zarr"));
    let mut values = ramp();
    values[7] = f64::NAN;
    float_array(&a, &[2, 4], &values);
    let mut other = values.clone();
    other[2] = 1.0 + 1e-9; // 1.0 in A
    other[4] = 2.0 + 2e-3; // 2.0 in A
    other[8] = f64::NAN; // 4.0 in A
    float_array(&b, &[2, 4], &other);

    let (code, report, _) = diff_json(&a, &b, &[]);
    assert_eq!(code, 1);
    let values = &report["nodes"][1]["values"];
    assert_eq!(values["differing"], 3, "{values}");
    assert_eq!(
        values["first"][2],
        json!({"index": [1, 2], "a": 4.0, "b": "NaN"})
    );
    // NaN in both at [1, 1] is no difference; NaN against 4.0 stays one.
    let (_, report, _) = diff_json(&a, &b, &["--rtol", "1e-6"]);
    assert_eq!(report["nodes"][1]["values"]["differing"], 2);
    let (_, report, _) = diff_json(&a, &b, &["--atol", "0.01"]);
    let values = &report["nodes"][1]["values"];
    assert_eq!(values["differing"], 1);
    assert_eq!(values["first"][0]["index"], json!([1, 2]));
    let run = zarrkit(["diff", "--rtol=-1", "a", "b"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("`-1` is not a number >= 0"),
        "{}",
        run.stderr
    );
    assert_eq!(zarrkit(["diff", "--atol", "nan", "a", "b"]).code, 2);
}

#[test]
fn diff_of_a_v2_store_and_its_v3_migration_differs_only_in_format() {
    let dir = tempfile::tempdir().unwrap();
    let (v2, v3) = (dir.path().join("v2.zarr"), dir.path().join("v3.zarr"));
    hierarchy(&v2, ZarrFormat::V2);
    let run = zarrkit([OsStr::new("migrate"), v2.as_os_str(), v3.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (code, report, _) = diff_json(&v2, &v3, &[]);
    assert_eq!(code, 1);
    assert_eq!(report["a"]["format"], "v2");
    assert_eq!(report["b"]["format"], "v3");
    for node in report["nodes"].as_array().unwrap() {
        let fields: Vec<&str> = node["metadata"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["field"].as_str().unwrap())
            .collect();
        assert!(fields.contains(&"format"), "{node}");
        assert!(
            fields
                .iter()
                .all(|f| ["format", "chunk_key_encoding", "extra_fields"].contains(f)),
            "{node}"
        );
        if node["kind_a"] == "array" {
            assert_eq!(node["values"]["differing"], 0, "{node}");
        }
    }
    let (code, report, stderr) = diff_json(&v2, &v3, &["--ignore-format"]);
    assert_eq!(code, 0, "{report} {stderr}");
    assert_eq!(report["same"], true);
}

// ---------------------------------------------------------------------------
// stats
// ---------------------------------------------------------------------------

fn stats_json(root: &Path, node: &str, extra: &[&str]) -> (i32, Value, String) {
    let mut args = vec![
        OsStr::new("stats"),
        OsStr::new("--json"),
        root.as_os_str(),
        OsStr::new(node),
    ];
    args.extend(extra.iter().map(OsStr::new));
    run_json(&args)
}

/// What NumPy computes from the array zarr-python reads, for `selection`
/// (`()` for all) and `bins` over min..max.
fn numpy_stats(root: &Path, node: &str, selection: &str, bins: usize) -> Value {
    let python = python("ZARRKIT_PYTHON", "zarr 3.1")
        .expect("ZARRKIT_PYTHON must name zarr-python 3.1's venv (scripts/test.sh sets it)");
    let script = format!(
        r#"
import json, sys, numpy as np, zarr
a = np.asarray(zarr.open_array(sys.argv[1], path=sys.argv[2], mode="r")[...])[{selection}]
a = np.asarray(a, dtype="float64").ravel()
v = a[~np.isnan(a)]
counts, edges = np.histogram(v, bins={bins})
print(json.dumps({{"count": int(a.size), "nan": int(np.isnan(a).sum()),
    "min": float(v.min()), "max": float(v.max()), "mean": float(v.mean()),
    "std": float(v.std()), "counts": counts.tolist(), "edges": edges.tolist()}}))
"#
    );
    let output = std::process::Command::new(&python)
        .arg("-c")
        .arg(&script)
        .arg(root)
        .arg(node.trim_start_matches('/'))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn assert_close(actual: &Value, expected: &Value, what: &str) {
    let (x, y) = (actual.as_f64().unwrap(), expected.as_f64().unwrap());
    assert!(
        (x - y).abs() <= 1e-12 * y.abs().max(1.0),
        "{what}: {x} against NumPy's {y}"
    );
}

#[test]
fn stats_match_numpy_on_a_multi_chunk_array_with_missing_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
    Group::create(store.clone(), "/", JsonMap::new()).unwrap();
    // [9, 11] in chunks [4, 3]: 3 × 4 chunks; fill value -2.5.
    let array = Array::builder(&[9, 11], DataType::Float64, &[4, 3])
        .fill_value(-2.5f64)
        .create(store.clone(), "/t")
        .unwrap();
    // Rows 0..4 and 8 written; rows 4..8 stay missing (3 × 4 chunks hold
    // 4 missing ones), with some NaNs and large offsets.
    let values: Vec<f64> = (0..44)
        .map(|i| {
            if i % 13 == 5 {
                f64::NAN
            } else {
                1e6 + f64::from(i).sin() * 100.0
            }
        })
        .collect();
    array
        .write_region(&Region::new(vec![0, 0], vec![4, 11]), &values)
        .unwrap();
    let last: Vec<f64> = (0..11).map(|i| f64::from(i) * 3.0 - 7.0).collect();
    array
        .write_region(&Region::new(vec![8, 0], vec![1, 11]), &last)
        .unwrap();
    assert_eq!(array.stored_chunks().unwrap().len(), 8);

    let (code, report, stderr) = stats_json(dir.path(), "/t", &["--bins", "7"]);
    assert_eq!(code, 0, "{stderr}");
    let numpy = numpy_stats(dir.path(), "/t", "()", 7);
    assert_eq!(report["count"], 99);
    assert_eq!(report["count"], numpy["count"]);
    assert_eq!(report["nan_count"], numpy["nan"]);
    assert_eq!(report["nan_count"], 3);
    // 4 × 11 missing elements read as the fill value.
    assert_eq!(report["fill_value_count"], 44);
    for field in ["min", "max", "mean", "std"] {
        assert_close(&report[field], &numpy[field], field);
    }
    assert_eq!(report["histogram"]["counts"], numpy["counts"]);
    for (x, y) in report["histogram"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .zip(numpy["edges"].as_array().unwrap())
    {
        assert_close(x, y, "edge");
    }
    assert_eq!(
        report["storage"],
        json!({"chunks": 12, "stored_chunks": 8,
               "stored_bytes": report["storage"]["stored_bytes"],
               "decoded_bytes": 99 * 8,
               "compression_ratio": report["storage"]["compression_ratio"]})
    );

    // A selection: every other row backwards, columns 2..9.
    let (code, report, _) = stats_json(dir.path(), "/t", &["::-2, 2:9", "--bins", "5"]);
    assert_eq!(code, 0);
    let numpy = numpy_stats(dir.path(), "/t", "::-2, 2:9", 5);
    assert_eq!(report["count"], numpy["count"]);
    assert_eq!(report["count"], 35);
    assert_eq!(report["nan_count"], numpy["nan"]);
    for field in ["min", "max", "mean", "std"] {
        assert_close(&report[field], &numpy[field], field);
    }
    assert_eq!(report["histogram"]["counts"], numpy["counts"]);
    assert_eq!(report["selection"], "::-2, 2:9");
}

#[test]
fn stats_of_integers_are_exact_and_a_given_range_bins_in_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
    let array = Array::builder(&[10], DataType::Int64, &[3])
        .create(store, "/")
        .unwrap();
    let values = [i64::MAX, -3, 0, 5, 5, 7, -9, 0, 1, 2];
    array
        .write_region(&Region::whole(array.shape()), &values)
        .unwrap();
    let (code, report, _) = stats_json(dir.path(), "/", &["--range", "-10,10", "--bins", "4"]);
    assert_eq!(code, 0);
    assert_eq!(report["min"], -9);
    assert_eq!(report["max"], i64::MAX);
    assert_eq!(report["fill_value_count"], 2);
    assert_eq!(report["histogram"]["range"], json!([-10.0, 10.0]));
    // [-10,-5) [-5,0) [0,5) [5,10]; i64::MAX is out of range.
    assert_eq!(report["histogram"]["counts"], json!([1, 1, 4, 3]));
    let run = zarrkit([
        OsStr::new("stats"),
        dir.path().as_os_str(),
        OsStr::new("/"),
        OsStr::new("3:5"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("count:            2\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("mean:             5.0\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("stored chunks:    4 of 4\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn stats_of_strings_count_only_and_errors_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
    Group::create(store.clone(), "/", JsonMap::new()).unwrap();
    let array = Array::builder(&[3], DataType::String, &[2])
        .create(store.clone(), "/s")
        .unwrap();
    array
        .write_strings(&Region::whole(array.shape()), &["a", "bc", ""])
        .unwrap();
    let (code, report, _) = stats_json(dir.path(), "/s", &[]);
    assert_eq!(code, 0);
    assert_eq!(report["count"], 3);
    assert_eq!(report["values_of"], Value::Null);
    assert_eq!(report["mean"], Value::Null);
    assert_eq!(report["storage"]["decoded_bytes"], Value::Null);

    let (code, _, stderr) = {
        let run = zarrkit([
            OsStr::new("stats"),
            dir.path().as_os_str(),
            OsStr::new("/s"),
            OsStr::new("5"),
        ]);
        (run.code, run.stdout, run.stderr)
    };
    assert_eq!(code, 1);
    assert!(stderr.contains("`/s`"), "{stderr}");
    let run = zarrkit([
        OsStr::new("stats"),
        dir.path().as_os_str(),
        OsStr::new("/missing"),
    ]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("/missing"), "{}", run.stderr);
    let run = zarrkit([
        OsStr::new("stats"),
        dir.path().as_os_str(),
        OsStr::new("/s"),
        OsStr::new("--range"),
        OsStr::new("3,1"),
    ]);
    assert_eq!(run.code, 2);
}

// ---------------------------------------------------------------------------
// URLs (the test servers of scripts/servers.sh)
// ---------------------------------------------------------------------------

/// A name no other test run uses.
fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{name}-{}-{nanos}", std::process::id())
}

/// The three commands over HTTP (nginx serving a directory, read-only and
/// without listings): check finds a truncated chunk by URL, diff compares
/// a URL with a local copy, stats reads one.
#[test]
fn check_diff_and_stats_read_urls() {
    let (Some(url), Some(root)) = (
        zarrkit::store::testing::server_from_env("ZARRKIT_HTTP_URL"),
        zarrkit::store::testing::server_from_env("ZARRKIT_HTTP_ROOT"),
    ) else {
        return;
    };
    // Not a 0700 temporary directory: nginx's worker must read it.
    let name = unique("check");
    let dir = Path::new(&root).join(&name);
    std::fs::create_dir(&dir).unwrap();
    let served = dir.join("h.zarr");
    hierarchy(&served, ZarrFormat::V3);
    let local = tempfile::tempdir().unwrap();
    hierarchy(local.path(), ZarrFormat::V3);
    let store_url = format!("{url}/{name}/h.zarr");

    let check = || {
        run_json(&[
            OsStr::new("check"),
            OsStr::new("--json"),
            OsStr::new(&store_url),
        ])
    };
    // Nginx cannot list the children: only the root is checked, which is
    // said, and is no problem of the data.
    let (code, report, stderr) = check();
    assert_eq!(code, 0, "{report} {stderr}");
    assert_eq!(report["listed"], false);
    assert_eq!(report["totals"]["nodes"], 1);
    assert!(
        stderr.contains("warning: the store cannot list the children of group `/`"),
        "{stderr}"
    );
    assert_eq!(report["notes"].as_array().unwrap().len(), 1);
    // With consolidated metadata, it names the nodes to check.
    let run = zarrkit([OsStr::new("consolidate"), served.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (code, report, stderr) = check();
    assert_eq!(code, 0, "{report} {stderr}");
    assert_eq!(report["totals"]["nodes"], 4);
    assert_eq!(report["totals"]["chunks_decoded"], 7);
    assert_eq!(report["notes"], json!([]));

    let (code, report, stderr) = diff_json(local.path(), Path::new(&store_url), &[]);
    assert_eq!(code, 0, "{report} {stderr}");
    assert_eq!(report["nodes"][1]["values"]["elements"], 6);

    let (code, report, _) = stats_json(Path::new(&store_url), "/g/b", &[]);
    assert_eq!(code, 0);
    assert_eq!(report["mean"], 8.5);
    assert_eq!(report["max"], 16.0);

    let chunk = served.join("a/c/2");
    let bytes = std::fs::read(&chunk).unwrap();
    std::fs::write(&chunk, &bytes[..bytes.len() - 3]).unwrap();
    let (code, report, _) = run_json(&[
        OsStr::new("check"),
        OsStr::new("--json"),
        OsStr::new(&format!("{store_url}/a")),
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        problems(&report),
        expected(vec![(
            "undecodable_chunk".to_string(),
            json!("/a"),
            json!("a/c/2")
        )])
    );
    // diff cannot compare what does not decode: an error naming the chunk.
    let run = zarrkit([
        OsStr::new("diff"),
        local.path().as_os_str(),
        OsStr::new(&store_url),
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("cannot compare the values of `/a`: cannot decode chunk `a/c/2`"),
        "{}",
        run.stderr
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An empty array, a 0-d array, an array of NaNs only (its fill value) and
/// complex values (statistics of the modulus).
#[test]
fn stats_of_empty_scalar_all_nan_and_complex_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
    Group::create(store.clone(), "/", JsonMap::new()).unwrap();
    Array::builder(&[0], DataType::Float32, &[4])
        .create(store.clone(), "/empty")
        .unwrap();
    let scalar = Array::builder(&[], DataType::Float64, &[])
        .create(store.clone(), "/scalar")
        .unwrap();
    scalar.write_region(&Region::whole(&[]), &[2.5f64]).unwrap();
    Array::builder(&[4], DataType::Float32, &[2])
        .fill_value(f32::NAN)
        .create(store.clone(), "/nan")
        .unwrap();
    let complex = Array::builder(&[3], DataType::Complex128, &[2])
        .create(store.clone(), "/c")
        .unwrap();
    let parts = [1.0f64, 1.0, 3.0, -4.0, 0.0, 0.0];
    let bytes: Vec<u8> = parts.iter().flat_map(|p| p.to_ne_bytes()).collect();
    complex
        .write_region_bytes(&Region::whole(complex.shape()), &bytes)
        .unwrap();

    let (code, report, _) = stats_json(dir.path(), "/empty", &[]);
    assert_eq!(code, 0);
    assert_eq!(
        (
            &report["count"],
            &report["nan_count"],
            &report["mean"],
            &report["histogram"]
        ),
        (&json!(0), &json!(0), &Value::Null, &Value::Null)
    );
    let (_, report, _) = stats_json(dir.path(), "/scalar", &["--bins", "2"]);
    assert_eq!(
        (&report["count"], &report["mean"], &report["std"]),
        (&json!(1), &json!(2.5), &json!(0.0))
    );
    // One value: numpy's range is value ± 0.5.
    assert_eq!(report["histogram"]["range"], json!([2.0, 3.0]));
    assert_eq!(report["histogram"]["counts"], json!([0, 1]));
    let (_, report, _) = stats_json(dir.path(), "/nan", &[]);
    assert_eq!(
        (
            &report["nan_count"],
            &report["fill_value_count"],
            &report["min"]
        ),
        (&json!(4), &json!(4), &Value::Null)
    );
    let (_, report, _) = stats_json(dir.path(), "/c", &["--bins", "2"]);
    assert_eq!(report["values_of"], "modulus");
    assert_eq!((&report["min"], &report["max"]), (&json!(0.0), &json!(5.0)));
    assert_close(&report["mean"], &json!((2f64.sqrt() + 5.0) / 3.0), "mean");
    assert_eq!(report["histogram"]["counts"], json!([2, 1]));
}

/// check over S3 (SeaweedFS), which lists: a stray key and a chunk outside
/// the grid written there are found, and a truncated chunk.
#[test]
fn check_lists_an_s3_store_for_strays() {
    let Some(endpoint) = zarrkit::store::testing::server_from_env("ZARRKIT_S3_ENDPOINT") else {
        return;
    };
    let env = |var: &str, default: &str| std::env::var(var).unwrap_or_else(|_| default.into());
    let options = [
        ("aws_endpoint", endpoint),
        (
            "aws_access_key_id",
            env("AWS_ACCESS_KEY_ID", "zarrkit-test"),
        ),
        (
            "aws_secret_access_key",
            env("AWS_SECRET_ACCESS_KEY", "zarrkit-test-secret"),
        ),
        ("aws_region", env("AWS_REGION", "us-east-1")),
    ];
    let bucket = env("ZARRKIT_TEST_BUCKET", "zarrkit");
    let url = format!("s3://{bucket}/{}/h.zarr", unique("check"));
    let local = tempfile::tempdir().unwrap();
    hierarchy(local.path(), ZarrFormat::V2);
    let with = |args: &[&OsStr]| {
        let mut all: Vec<&OsStr> = Vec::new();
        let pairs: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for pair in &pairs {
            all.push(OsStr::new("--storage-option"));
            all.push(OsStr::new(pair));
        }
        all.extend_from_slice(args);
        zarrkit(all)
    };
    let run = with(&[
        OsStr::new("migrate"),
        OsStr::new("--to"),
        OsStr::new("v2"),
        local.path().as_os_str(),
        OsStr::new(&url),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = with(&[OsStr::new("check"), OsStr::new("--json"), OsStr::new(&url)]);
    assert_eq!(run.code, 0, "{} {}", run.stdout, run.stderr);

    let mut store_options = zarrkit::store::StoreOptions::new();
    for (key, value) in &options {
        store_options.set(key, value.clone());
    }
    let store = zarrkit::store::open(&url, &store_options).unwrap();
    let key = |k: &str| zarrkit::store::StoreKey::new(k).unwrap();
    store.set(&key("g/b/7.0"), b"left over").unwrap();
    store.set(&key("crash.tmp"), b"partial").unwrap();
    let chunk = store.get(&key("a/1"), None).unwrap().unwrap();
    store.set(&key("a/1"), &chunk[..chunk.len() - 2]).unwrap();
    let run = with(&[OsStr::new("check"), OsStr::new("--json"), OsStr::new(&url)]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["listed"], true);
    assert_eq!(
        problems(&report),
        expected(vec![
            // 4 chunks and the stray: more than the grid's 4.
            ("chunk_count".to_string(), json!("/g/b"), json!(null)),
            ("orphan_key".to_string(), json!(null), json!("crash.tmp")),
            ("outside_grid".to_string(), json!("/g/b"), json!("g/b/7.0")),
            ("undecodable_chunk".to_string(), json!("/a"), json!("a/1")),
        ])
    );
    store
        .erase_prefix(&zarrkit::store::StorePrefix::root())
        .unwrap();
}

/// Arrays of different numeric types compare by value; strings element by
/// element.
#[test]
fn diff_compares_across_numeric_types_and_strings() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.zarr"), dir.path().join("b.zarr"));
    for (root, floats) in [(&a, false), (&b, true)] {
        let store = open_store(root);
        Group::create(store.clone(), "/", JsonMap::new()).unwrap();
        if floats {
            let n = Array::builder(&[3], DataType::Float64, &[2])
                .create(store.clone(), "/n")
                .unwrap();
            n.write_region(&Region::whole(&[3]), &[1.0f64, 2.0, 3.5])
                .unwrap();
        } else {
            let n = Array::builder(&[3], DataType::Int32, &[2])
                .create(store.clone(), "/n")
                .unwrap();
            n.write_region(&Region::whole(&[3]), &[1i32, 2, 3]).unwrap();
        }
        let s = Array::builder(&[3], DataType::String, &[2])
            .create(store.clone(), "/s")
            .unwrap();
        let last = if floats { "cé" } else { "b" };
        s.write_strings(&Region::whole(&[3]), &["x", "", last])
            .unwrap();
    }
    let (code, report, _) = diff_json(&a, &b, &[]);
    assert_eq!(code, 1);
    let nodes = report["nodes"].as_array().unwrap();
    let n = &nodes[1];
    assert_eq!(
        n["metadata"][0],
        json!({"field": "data_type", "a": "int32", "b": "float64"})
    );
    assert_eq!(n["values"]["differing"], 1);
    assert_eq!(
        n["values"]["first"],
        json!([{"index": [2], "a": 3, "b": 3.5}])
    );
    let s = &nodes[2];
    assert_eq!(s["metadata"], json!([]));
    assert_eq!(
        s["values"]["first"],
        json!([{"index": [2], "a": "b", "b": "cé"}])
    );
}
