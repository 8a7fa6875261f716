//! End-to-end tests of `zarrkit migrate`: the dry run's plan, a real run
//! whose result the library reads back, and refusals with exit code 1.

mod common;

use common::{codec, object, open_store, python, zarrkit};
use serde_json::json;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, JsonMap};
use zarrkit::{Array, Group, Region};

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
fn migrate_json_reports_what_was_copied() {
    let (dir, src) = v2_store();
    let dst = dir.path().join("new.zarr");
    let run = zarrkit([
        OsStr::new("migrate"),
        OsStr::new("--json"),
        src.as_os_str(),
        dst.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["format"], "v3");
    assert_eq!(report["resumed"], false);
    assert_eq!(report["groups"], 2);
    assert_eq!(report["arrays_copied"], 2);
    assert_eq!(report["arrays_reencoded"], json!([]));
    assert_eq!(report["chunks_written"], 4);
    assert_eq!(report["chunks_skipped"], 0);
    assert_eq!(report["chunks_verified"], 4);
    assert!(report["bytes_written"].as_u64().unwrap() > 0, "{report}");
    assert_eq!(
        Array::open(open_store(&dst), "/counts").unwrap().format(),
        ZarrFormat::V3
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

/// For each array of the v2 store `src`, whether zarr-python 3.1 and
/// tensorstore open the same array of the v3 store `dst` and read values
/// equal to zarr-python's reading of `src` (`"ok"`, `"differs"`, or
/// `"error"`).
const READERS_SCRIPT: &str = r#"
import json, os, sys, warnings
import numpy as np, tensorstore as ts, zarr
warnings.filterwarnings("ignore")
src, dst = sys.argv[1], sys.argv[2]
result = {}
for name in sorted(os.listdir(src)):
    if not os.path.isfile(os.path.join(src, name, ".zarray")):
        continue
    expected = zarr.open_array(os.path.join(src, name), mode="r")[...]
    def same(a):
        a = np.asarray(a)
        # v3 holds the byte order in the `bytes` codec: compare the types
        # without it.
        if a.dtype.newbyteorder("=") != expected.dtype.newbyteorder("=") or a.shape != expected.shape:
            return "differs"
        nan = a.dtype.kind in "fc"
        return "ok" if np.array_equal(a, expected, equal_nan=nan) else "differs"
    row = {}
    try:
        row["zarr"] = same(zarr.open_array(os.path.join(dst, name), mode="r")[...])
    except Exception:
        row["zarr"] = "error"
    try:
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": os.path.join(dst, name)}}
        row["tensorstore"] = same(ts.open(spec).result().read().result())
    except Exception:
        row["tensorstore"] = "error"
    result[name] = row
print(json.dumps(result))
"#;

/// Issue #15: a migration into v3 wrote `numcodecs.*` codecs, which
/// tensorstore cannot read, and the raw type `r24`, which neither
/// zarr-python 3.1 nor tensorstore reads, without a word. It now warns per
/// array and reader, and `--portable` re-encodes into core codecs. Checked
/// by reading the result with zarr-python 3.1.6 and tensorstore 0.1.86:
/// what they read equals zarr-python's reading of the v2 source, and what
/// they fail to read is exactly what was warned about.
#[test]
fn issue_15_migrate_warns_about_unreadable_results_and_portable_fixes_codecs() {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures/v2/zarr-python.zarr");
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.zarr");
    let portable = dir.path().join("portable.zarr");
    let run = zarrkit([OsStr::new("migrate"), src.as_os_str(), plain.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut warnings: Vec<&str> = run.stderr.lines().collect();
    warnings.sort_unstable();
    assert_eq!(
        warnings,
        [
            "warning: /complex128_big_lz4_slash: tensorstore cannot read the codec `numcodecs.lz4`",
            "warning: /float64_big_f_zlib_nan: tensorstore cannot read the codec `numcodecs.zlib`",
            "warning: /raw_v3_base64_fill_lzma: tensorstore cannot read the data type `r24` or the \
             codec `numcodecs.lzma`",
            "warning: /raw_v3_base64_fill_lzma: zarr-python 3.1 cannot read the data type `r24`",
            "warning: /uint64_max_fill_bz2: tensorstore cannot read the codec `numcodecs.bz2`",
        ]
    );
    let run = zarrkit([
        OsStr::new("migrate"),
        OsStr::new("--portable"),
        src.as_os_str(),
        portable.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning: /raw_v3_base64_fill_lzma: zarr-python 3.1 cannot read the data type `r24`\n\
         warning: /raw_v3_base64_fill_lzma: tensorstore cannot read the data type `r24`\n"
    );
    for (name, codec) in [
        ("complex128_big_lz4_slash", "numcodecs.lz4"),
        ("float64_big_f_zlib_nan", "numcodecs.zlib"),
        ("uint64_max_fill_bz2", "numcodecs.bz2"),
    ] {
        assert!(
            run.stdout.contains(&format!(
                "/{name}: re-encoded: --portable: not every v3 reader has the codec `{codec}`"
            )),
            "{}",
            run.stdout
        );
    }
    assert!(
        run.stdout
            .contains("(3 copied byte for byte, 4 re-encoded)"),
        "{}",
        run.stdout
    );
    // --portable is about v3 readers only.
    let run = zarrkit([
        OsStr::new("migrate"),
        OsStr::new("--portable"),
        OsStr::new("--to"),
        OsStr::new("v2"),
        src.as_os_str(),
        dir.path().join("v2.zarr").as_os_str(),
    ]);
    // A usage error (exit code 2), and nothing written.
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(!dir.path().join("v2.zarr").exists());
    assert!(
        run.stderr.contains("--portable applies to v3 only"),
        "{}",
        run.stderr
    );

    let Some(python) = python(
        "ZARRKIT_PYTHON",
        "zarr 3.1 and tensorstore (scripts/requirements.txt)",
    ) else {
        return;
    };
    let read = |dst: &Path| -> serde_json::Value {
        let output = Command::new(&python)
            .args([
                OsStr::new("-c"),
                OsStr::new(READERS_SCRIPT),
                src.as_os_str(),
                dst.as_os_str(),
            ])
            .output()
            .expect("ZARRKIT_PYTHON runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let both = json!({ "zarr": "ok", "tensorstore": "ok" });
    let zarr_only = json!({ "zarr": "ok", "tensorstore": "error" });
    let neither = json!({ "zarr": "error", "tensorstore": "error" });
    assert_eq!(
        read(&plain),
        json!({
            "bool_blosc_autoshuffle": both,
            "complex128_big_lz4_slash": zarr_only,
            "float16_zstd_scalar": both,
            "float64_big_f_zlib_nan": zarr_only,
            "int16_null_fill_gzip": both,
            "raw_v3_base64_fill_lzma": neither,
            "uint64_max_fill_bz2": zarr_only,
        })
    );
    assert_eq!(
        read(&portable),
        json!({
            "bool_blosc_autoshuffle": both,
            "complex128_big_lz4_slash": both,
            "float16_zstd_scalar": both,
            "float64_big_f_zlib_nan": both,
            "int16_null_fill_gzip": both,
            "raw_v3_base64_fill_lzma": neither,
            "uint64_max_fill_bz2": both,
        })
    );
}
