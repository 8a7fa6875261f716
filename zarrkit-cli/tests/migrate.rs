//! End-to-end tests of `zarrkit migrate`: the dry run's plan, a real run
//! whose result the library reads back, and refusals with exit code 1.

use serde_json::json;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, ExtensionObject, JsonMap};
use zarrkit::store::{FilesystemStore, Store};
use zarrkit::{Array, Group, Region};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn zarrkit<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let output = Command::new(env!("CARGO_BIN_EXE_zarrkit"))
        .args(args)
        .output()
        .expect("the zarrkit binary runs");
    Run {
        code: output.status.code().expect("zarrkit exits with a code"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

fn object(value: serde_json::Value) -> JsonMap {
    match value {
        serde_json::Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn codec(name: &str, configuration: serde_json::Value) -> ExtensionObject {
    ExtensionObject::with_configuration(name, object(configuration))
}

fn open_store(root: &Path) -> Arc<dyn Store> {
    Arc::new(FilesystemStore::new(root).unwrap())
}

/// A v2 store: a root group with attributes, `/counts` [5, 4] int32 in
/// [2, 4] chunks with zlib (rows 0..4 written) and `/sub/flags` bool.
fn v2_store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("old.zarr");
    let store = open_store(&root);
    Group::create_as(
        Arc::clone(&store),
        "/",
        ZarrFormat::V2,
        object(json!({"title": "old"})),
    )
    .unwrap();
    let counts = Array::builder(&[5, 4], DataType::Int32, &[2, 4])
        .format(ZarrFormat::V2)
        .codecs_metadata(vec![
            codec("bytes", json!({"endian": "little"})),
            codec("zstd", json!({"level": 1, "checksum": false})),
        ])
        .attributes(object(json!({"units": "m"})))
        .create(Arc::clone(&store), "/counts")
        .unwrap();
    let values: Vec<i32> = (0..16).collect();
    counts
        .write_region(&Region::new(vec![0, 0], vec![4, 4]), &values)
        .unwrap();
    let flags = Array::builder(&[3], DataType::Bool, &[2])
        .format(ZarrFormat::V2)
        .create(Arc::clone(&store), "/sub/flags")
        .unwrap();
    flags
        .write_region(&Region::whole(&[3]), &[true, false, true])
        .unwrap();
    (dir, root)
}

#[test]
fn dry_run_prints_the_plan_and_writes_nothing() {
    let (dir, src) = v2_store();
    let dst = dir.path().join("new.zarr");
    let run = zarrkit([
        OsStr::new("migrate"),
        src.as_os_str(),
        dst.as_os_str(),
        OsStr::new("--dry-run"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines[0].starts_with("plan: migrate `"), "{}", run.stdout);
    assert!(lines[0].contains("` to v3 in `"), "{}", run.stdout);
    let line = |path: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(path))
            .unwrap_or_else(|| panic!("no line for {path} in\n{}", run.stdout))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(line("/"), "/ group create from v2");
    assert_eq!(line("/sub"), "/sub group create from v2");
    assert!(
        line("/counts").starts_with("/counts array copy from v2, 2 chunks, "),
        "{}",
        run.stdout
    );
    assert!(
        line("/sub/flags").starts_with("/sub/flags array copy from v2, 2 chunks, "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "total: 4 nodes, 2 arrays (2 copied byte for byte, 0 re-encoded), 4 chunks, "
        ),
        "{}",
        run.stdout
    );
    assert_eq!(lines.last(), Some(&"dry run: nothing written"));
    assert!(!dst.exists());
}

#[test]
fn migrate_writes_a_v3_store_that_reads_the_same() {
    let (dir, src) = v2_store();
    let dst = dir.path().join("new.zarr");
    let run = zarrkit([OsStr::new("migrate"), src.as_os_str(), dst.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("2 groups, 2 arrays (2 copied byte for byte, 0 re-encoded), 4 chunks, "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .trim_end()
            .ends_with("verification passed (4 chunk regions)"),
        "{}",
        run.stdout
    );
    let store = open_store(&dst);
    let root = Group::open(Arc::clone(&store), "/").unwrap();
    assert_eq!(root.format(), ZarrFormat::V3);
    assert_eq!(root.attributes()["title"], json!("old"));
    let counts = Array::open(Arc::clone(&store), "/counts").unwrap();
    assert_eq!(counts.format(), ZarrFormat::V3);
    assert_eq!(counts.attributes()["units"], json!("m"));
    let mut expected: Vec<i32> = (0..16).collect();
    expected.extend([0; 4]);
    assert_eq!(
        counts.read_region::<i32>(&Region::whole(&[5, 4])).unwrap(),
        expected
    );
    let flags = Array::open(store, "/sub/flags").unwrap();
    assert_eq!(
        flags.read_region::<bool>(&Region::whole(&[3])).unwrap(),
        [true, false, true]
    );
}

#[test]
fn migrating_to_v2_reports_re_encoded_arrays_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("v3.zarr");
    let array = Array::builder(&[6], DataType::UInt8, &[3])
        .codecs_metadata(vec![
            codec("bytes", json!({})),
            codec("gzip", json!({"level": 1})),
            codec("crc32c", json!({})),
        ])
        .create(open_store(&src), "/")
        .unwrap();
    array
        .write_region(&Region::whole(&[6]), &[1u8, 2, 3, 4, 5, 6])
        .unwrap();
    let dst = dir.path().join("v2.zarr");
    let run = zarrkit([
        OsStr::new("migrate"),
        src.as_os_str(),
        dst.as_os_str(),
        OsStr::new("--to"),
        OsStr::new("v2"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        // v2 holds a checksum as its compressor, not a compressor before it.
        run.stdout.contains("/: re-encoded: ")
            && run.stdout.contains("`gzip` before the compressor"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("0 groups, 1 array (0 copied byte for byte, 1 re-encoded), 2 chunks"),
        "{}",
        run.stdout
    );
    let migrated = Array::open(open_store(&dst), "/").unwrap();
    assert_eq!(migrated.format(), ZarrFormat::V2);
    assert_eq!(
        migrated.read_region::<u8>(&Region::whole(&[6])).unwrap(),
        [1, 2, 3, 4, 5, 6]
    );
}

#[test]
fn what_the_target_cannot_hold_is_refused_with_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("v3.zarr");
    let store = open_store(&src);
    Group::create(Arc::clone(&store), "/", JsonMap::new()).unwrap();
    Array::builder(&[2, 2], DataType::Int8, &[2, 2])
        .dimension_names_opt(vec![None, Some("x".into())])
        .create(store, "/grid")
        .unwrap();
    let dst = dir.path().join("v2.zarr");
    let run = zarrkit([
        OsStr::new("migrate"),
        src.as_os_str(),
        dst.as_os_str(),
        OsStr::new("--to"),
        OsStr::new("v2"),
    ]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.starts_with("error: cannot migrate `")
            && run.stderr.contains("`/grid` cannot be migrated to v2")
            && run.stderr.contains("unnamed"),
        "{}",
        run.stderr
    );
    // Refused before anything is written: not even the directory.
    assert!(!dst.exists());
}

#[test]
fn a_destination_that_is_not_empty_is_refused_with_exit_code_1() {
    let (dir, src) = v2_store();
    let dst = dir.path().join("busy");
    std::fs::create_dir(&dst).unwrap();
    std::fs::write(dst.join("notes.txt"), "mine").unwrap();
    let run = zarrkit([OsStr::new("migrate"), src.as_os_str(), dst.as_os_str()]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("is not empty"), "{}", run.stderr);
    assert_eq!(std::fs::read_dir(&dst).unwrap().count(), 1);
}

#[test]
fn an_unknown_target_format_is_a_usage_error() {
    let (dir, src) = v2_store();
    let dst = dir.path().join("new.zarr");
    let run = zarrkit([
        OsStr::new("migrate"),
        src.as_os_str(),
        dst.as_os_str(),
        OsStr::new("--to"),
        OsStr::new("v4"),
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("unknown format `v4`"), "{}", run.stderr);
    assert!(run.stderr.contains("v3-draft-2022"), "{}", run.stderr);
}
