//! `zarrkit cp`: copying nodes and hierarchies between stores and formats,
//! re-chunked, re-sharded, re-encoded and converted, resumed after a kill,
//! verified, and read back by zarr-python and tensorstore.

mod common;

use common::{open_store, python, zarrkit};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::metadata::DataType;
use zarrkit::store::Store;
use zarrkit::{Array, ArrayBuilder, Group, NodeKind, Region};

fn project(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Asserts that every node of `src` below `src_node` is in `dst` (at the
/// same path below the root), with the same attributes and, for arrays,
/// the same shape, data type and values.
fn assert_same_hierarchy(src: &Arc<dyn Store>, src_node: &str, dst: &Arc<dyn Store>) {
    let root = zarrkit::NodePath::new(src_node).unwrap();
    let nodes = zarrkit::node::list_nodes(src.as_ref()).unwrap();
    let mut arrays = 0;
    for (path, kind, _) in nodes {
        let Some(rest) = path
            .as_str()
            .strip_prefix(root.as_str().trim_end_matches('/'))
        else {
            continue;
        };
        if !rest.is_empty() && !rest.starts_with('/') && !root.is_root() {
            continue;
        }
        let below = if rest.is_empty() { "/" } else { rest };
        match kind {
            NodeKind::Group => {
                let a = Group::open(Arc::clone(src), path.as_str()).unwrap();
                let b = Group::open(Arc::clone(dst), below).unwrap();
                assert_eq!(a.attributes(), b.attributes(), "{path}");
            }
            NodeKind::Array => {
                let a = Array::open(Arc::clone(src), path.as_str()).unwrap();
                let b = Array::open(Arc::clone(dst), below).unwrap();
                assert_same_values(&a, &b);
                arrays += 1;
            }
        }
    }
    assert!(arrays > 0, "no array under {src_node}");
}

fn assert_same_values(a: &Array, b: &Array) {
    assert_eq!(a.shape(), b.shape(), "{}", a.path());
    assert_eq!(a.data_type(), b.data_type(), "{}", a.path());
    let whole = Region::whole(a.shape());
    if a.data_type().is_variable_length() {
        assert_eq!(a.read_vlen(&whole).unwrap(), b.read_vlen(&whole).unwrap());
    } else {
        assert_eq!(
            a.read_region_bytes(&whole).unwrap(),
            b.read_region_bytes(&whole).unwrap(),
            "{}",
            a.path()
        );
    }
}

/// A 3-d `uint16` array at `/volume` of `root` (a new directory store),
/// zstd, with values that differ everywhere.
fn volume(root: &Path, shape: &[u64], chunks: &[u64]) -> Vec<u16> {
    let store = open_store(root);
    Group::create(Arc::clone(&store), "/", zarrkit::metadata::JsonMap::new()).unwrap();
    let array = ArrayBuilder::new(shape, DataType::UInt16, chunks)
        .attributes(common::object(json!({"units": "counts"})))
        .create(store, "/volume")
        .unwrap();
    let n: u64 = shape.iter().product();
    #[allow(clippy::cast_possible_truncation)]
    let values: Vec<u16> = (0..n).map(|i| ((i * 7919) % 65_521) as u16).collect();
    array.write_region(&Region::whole(shape), &values).unwrap();
    values
}

#[test]
fn copies_between_formats_keep_every_value_and_attribute() {
    let dir = tempfile::tempdir().unwrap();
    // v3 and v2 hierarchies (zarr-python 3.1's and 2.18's), v1 arrays.
    for (i, (src, node, formats)) in [
        ("testdata/sample.zarr", "", &["v3", "v2"][..]),
        ("testdata/fixtures/v3/zarr-python.zarr", "", &["v3"][..]),
        (
            "testdata/fixtures/v2/zarr-python.zarr",
            "/float64_big_f_zlib_nan",
            &["v3", "v2", "v1"][..],
        ),
        (
            "testdata/fixtures/v1/spec_example_int32_zlib",
            "",
            &["v3", "v2"][..],
        ),
        (
            "../shared/testdata/zarr-python-2-fixture/4/3",
            "",
            &["v3"][..],
        ),
        (
            "testdata/fixtures/v3-draft-2022/spec-text.zarr",
            "",
            &["v3"][..],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        for format in formats {
            let dst = dir.path().join(format!("{i}-{format}.zarr"));
            let source = format!("{}{node}", s(&project(src)));
            let run = zarrkit(["cp", &source, s(&dst), "--format", format]);
            assert_eq!(run.code, 0, "{source} → {format}: {}", run.stderr);
            assert!(
                run.stdout.contains(&format!("to {format} in")) || *format == "v3",
                "{}",
                run.stdout
            );
            assert_same_hierarchy(
                &open_store(&project(src)),
                if node.is_empty() { "/" } else { node },
                &open_store(&dst),
            );
            assert!(!dst.join(zarrkit::migrate::MIGRATION_MARKER).exists());
        }
    }

    // zarr-python 3.1 reads the v3 and v2 copies of the sample hierarchy
    // as it reads the source: every array's values and attributes.
    let Some(python) = python("ZARRKIT_PYTHON", "zarr 3.1") else {
        return;
    };
    let script = r#"
import json, sys
import numpy as np, zarr
source = zarr.open_group(sys.argv[1], mode="r")
result = {}
for copy in sys.argv[2:]:
    group = zarr.open_group(copy, mode="r")
    result[copy[-7:]] = sorted(
        n for n, _ in source.arrays()) == sorted(n for n, _ in group.arrays())
    for path in ["weather/temperature", "weather/elevation"]:
        a, b = source[path], group[path]
        # v2 keeps dimension names in `_ARRAY_DIMENSIONS`, as xarray does.
        attrs = {k: v for k, v in b.attrs.items() if k != "_ARRAY_DIMENSIONS"}
        result[copy[-7:] + ":" + path] = bool(np.array_equal(a[...], b[...], equal_nan=True)) and dict(a.attrs) == attrs
print(json.dumps(result, sort_keys=True))
"#;
    let output = std::process::Command::new(&python)
        .args(["-c", script])
        .arg(project("testdata/sample.zarr"))
        .arg(dir.path().join("0-v3.zarr"))
        .arg(dir.path().join("0-v2.zarr"))
        .output()
        .expect("ZARRKIT_PYTHON runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        read,
        json!({
            "v2.zarr": true, "v2.zarr:weather/elevation": true, "v2.zarr:weather/temperature": true,
            "v3.zarr": true, "v3.zarr:weather/elevation": true, "v3.zarr:weather/temperature": true,
        })
    );
}

#[test]
fn rechunking_into_shards_streams_in_a_small_budget_and_reads_back_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarr");
    let shape = [96u64, 80, 64];
    let values = volume(&src, &shape, &[30, 20, 64]);
    let dst = dir.path().join("sharded.zarr");
    let run = zarrkit([
        "cp",
        &format!("{}/volume", s(&src)),
        s(&dst),
        "--chunks",
        "8,8,16",
        "--shards",
        "24,40,32",
        "--memory-budget",
        "64K",
        "--verify",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    // 4 × 2 × 2 shards, every one written and compared.
    assert_eq!(report["chunks_written"], 16);
    assert_eq!(report["chunks_skipped"], 0);
    let stored = |root: &Path| -> u64 { walk_bytes(root) };
    assert_eq!(report["bytes_read"], stored(&src.join("volume/c")));
    assert_eq!(report["bytes_written"], stored(&dst.join("c")));
    assert_eq!(report["verified"], true);
    assert_eq!(report["chunks_verified"], 16);
    assert_eq!(report["format"], "v3");
    assert_eq!(report["arrays"][0]["path"], "/");
    assert_eq!(report["arrays"][0]["source_path"], "/volume");
    assert_eq!(report["arrays"][0]["action"], "rewrite");
    assert!(
        report["arrays"][0]["changes"]
            .as_str()
            .unwrap()
            .contains("chunk grid [30, 20, 64] → [24, 40, 32]"),
        "{report}"
    );

    let copy = Array::open(open_store(&dst), "/").unwrap();
    assert_eq!(copy.chunk_shape(), [24, 40, 32]);
    assert_eq!(copy.inner_chunk_shape(), Some(vec![8, 8, 16]));
    assert_eq!(copy.attributes()["units"], "counts");
    assert_eq!(
        copy.read_region::<u16>(&Region::whole(&shape)).unwrap(),
        values
    );
    assert_eq!(copy.stored_chunks().unwrap().len(), 16);

    let Some(python) = python("ZARRKIT_PYTHON", "zarr 3.1 and tensorstore") else {
        return;
    };
    let npy = dir.path().join("expected.npy");
    let export = zarrkit(["export", &format!("{}/volume", s(&src)), "--out", s(&npy)]);
    assert_eq!(export.code, 0, "{}", export.stderr);
    let script = r#"
import json, sys
import numpy as np, zarr, tensorstore as ts
expected = np.load(sys.argv[2])
z = zarr.open_array(sys.argv[1], mode="r")[...]
t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": sys.argv[1]}}).result().read().result()
print(json.dumps({"zarr": bool(np.array_equal(z, expected)), "tensorstore": bool(np.array_equal(t, expected)),
                  "dtype": str(z.dtype), "shards": list(zarr.open_array(sys.argv[1], mode="r").shards)}))
"#;
    let output = std::process::Command::new(&python)
        .args(["-c", script, s(&dst), s(&npy)])
        .output()
        .expect("ZARRKIT_PYTHON runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        read,
        json!({"zarr": true, "tensorstore": true, "dtype": "uint16", "shards": [24, 40, 32]})
    );
}

#[test]
fn a_value_that_does_not_fit_the_new_data_type_is_an_error_unless_cast() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarr");
    let store = open_store(&src);
    let array = ArrayBuilder::new(&[6, 4], DataType::Int32, &[3, 2])
        .fill_value(-1i32)
        .create(store, "/")
        .unwrap();
    let mut values: Vec<i32> = (0..24).collect();
    values[17] = 300; // element [4, 1], source chunk [1, 0]
    values[3] = -2; // element [0, 3], source chunk [0, 1]
    array
        .write_region(&Region::whole(&[6, 4]), &values)
        .unwrap();

    let dst = dir.path().join("u8.zarr");
    // The fill value -1 does not fit uint8: refused before anything is written.
    let run = zarrkit(["cp", s(&src), s(&dst), "--dtype", "uint8"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("its fill value -1 does not fit `uint8`"),
        "{}",
        run.stderr
    );
    assert!(!dst.exists());

    let run = zarrkit([
        "cp",
        s(&src),
        s(&dst),
        "--dtype",
        "uint8",
        "--fill-value",
        "0",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "array `/`: the value -2 at [0, 3] (source chunk [0, 1]) does not fit `uint8`"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--cast clamp"), "{}", run.stderr);
    // The unfinished destination is marked, and refused without --resume.
    assert!(dst.join(zarrkit::migrate::MIGRATION_MARKER).is_file());
    let info = zarrkit(["info", s(&dst)]);
    assert_eq!(info.code, 1, "{}", info.stderr);
    let again = zarrkit([
        "cp",
        s(&src),
        s(&dst),
        "--dtype",
        "uint8",
        "--fill-value",
        "0",
    ]);
    assert_eq!(again.code, 1);
    assert!(
        again.stderr.contains("--resume continues it"),
        "{}",
        again.stderr
    );

    for (cast, at_17, at_3) in [("clamp", 255u8, 0u8), ("wrap", 44, 254)] {
        let run = zarrkit([
            "cp",
            s(&src),
            s(&dst),
            "--dtype",
            "uint8",
            "--fill-value",
            "7",
            "--cast",
            cast,
            "--overwrite",
            "--verify",
        ]);
        assert_eq!(run.code, 0, "{cast}: {}", run.stderr);
        let copy = Array::open(open_store(&dst), "/").unwrap();
        assert_eq!(copy.data_type(), &DataType::UInt8);
        assert_eq!(copy.fill_value().as_bytes(), [7]);
        let read: Vec<u8> = copy.read_region(&Region::whole(&[6, 4])).unwrap();
        assert_eq!((read[17], read[3], read[5]), (at_17, at_3, 5), "{cast}");
    }
}

#[test]
fn strings_and_draft_hierarchies_are_rewritten_in_a_new_layout() {
    let dir = tempfile::tempdir().unwrap();
    // Variable-length strings, re-chunked write unit by write unit.
    let strings = project("testdata/fixtures/v2/objects/objects.zarr");
    let dst = dir.path().join("strings.zarr");
    let source_node = format!("{}/categorize", s(&strings));
    let run = zarrkit(["cp", &source_node, s(&dst), "--chunks", "4", "--verify"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("/: rewritten: chunk grid [3] → [4]"),
        "{}",
        run.stdout
    );
    let source = Array::open(open_store(&strings), "/categorize").unwrap();
    let copy = Array::open(open_store(&dst), "/").unwrap();
    assert_eq!(copy.chunk_shape(), [4]);
    assert_same_values(&source, &copy);
    // A 2022-draft hierarchy (0-d to 2-d arrays, sharded ones, implicit
    // groups) with a new compressor everywhere.
    let draft = project("testdata/fixtures/v3-draft-2022/spec-text.zarr");
    let dst = dir.path().join("draft.zarr");
    let run = zarrkit([
        "cp",
        s(&draft),
        s(&dst),
        "--compressor",
        "gzip:1",
        "--verify",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(" rewritten)"), "{}", run.stdout);
    assert_same_hierarchy(&open_store(&draft), "/", &open_store(&dst));
    let bool_scalar = Array::open(open_store(&dst), "/bool_scalar").unwrap();
    assert_eq!(
        bool_scalar
            .codecs()
            .codecs()
            .last()
            .unwrap()
            .metadata()
            .name,
        "gzip"
    );
}

#[test]
fn a_group_is_copied_with_its_attributes_into_a_zip_archive() {
    let dir = tempfile::tempdir().unwrap();
    let sample = project("testdata/sample.zarr");
    // One group of the hierarchy becomes the archive's root.
    let zip = dir.path().join("weather.zip");
    let run = zarrkit([
        "cp",
        &format!("{}/weather", s(&sample)),
        s(&zip),
        "--compressor",
        "gzip:1",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let archive = zarrkit::store::open(s(&zip), &zarrkit::store::StoreOptions::new()).unwrap();
    assert_same_hierarchy(&open_store(&sample), "/weather", &archive);
    let temperature = Array::open(archive, "/temperature").unwrap();
    assert_eq!(
        temperature
            .codecs()
            .codecs()
            .last()
            .unwrap()
            .metadata()
            .name,
        "gzip"
    );
    let tree = zarrkit(["tree", s(&zip)]);
    assert_eq!(tree.code, 0, "{}", tree.stderr);
    assert!(tree.stdout.contains("temperature"), "{}", tree.stdout);
    // An existing archive is replaced only with --overwrite.
    let again = zarrkit(["cp", &format!("{}/weather", s(&sample)), s(&zip)]);
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("--overwrite"), "{}", again.stderr);
    let again = zarrkit(["cp", "--overwrite", s(&sample), s(&zip)]);
    assert_eq!(again.code, 0, "{}", again.stderr);
}

#[test]
fn destinations_inside_the_source_and_bad_options_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarr");
    volume(&src, &[4, 4, 4], &[2, 2, 2]);
    let run = zarrkit(["cp", s(&src), s(&src.join("inner"))]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("is inside the source") && run.stderr.contains("copy into"),
        "{}",
        run.stderr
    );
    // A chunk shape of the wrong length names the array; nothing is written.
    let dst = dir.path().join("dst.zarr");
    let run = zarrkit(["cp", s(&src), s(&dst), "--chunks", "2,2"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("/volume") && run.stderr.contains("--chunks 2,2"),
        "{}",
        run.stderr
    );
    assert!(!dst.exists());
    // Usage errors: exit code 2.
    let run = zarrkit(["cp", s(&src), s(&dst), "--cast", "clamp"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = zarrkit(["cp", s(&src), s(&dst), "--memory-budget", "lots"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = zarrkit(["convert", s(&src), s(&dst), "--dry-run"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("plan: copy"), "{}", run.stdout);
    assert!(!dst.exists());
}

#[test]
fn verify_catches_a_difference() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarr");
    volume(&src, &[8, 8, 8], &[4, 4, 4]);
    let dst = dir.path().join("dst.zarr");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_zarrkit"))
        .args(["cp", s(&src), s(&dst), "--chunks", "2,8,8", "--verify"])
        .env("ZARRKIT_TEST_DAMAGE_BEFORE_VERIFY", "/volume")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "verification failed: array `/volume` reads back differently from the source in chunk [0, 0, 0]"
        ),
        "{stderr}"
    );
    // Left marked unfinished; --resume rewrites the damaged chunk.
    assert!(dst.join(zarrkit::migrate::MIGRATION_MARKER).is_file());
    let run = zarrkit([
        "cp",
        "--resume",
        s(&src),
        s(&dst),
        "--chunks",
        "2,8,8",
        "--verify",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("resumed: 3 chunks already written and matching the source kept"),
        "{}",
        run.stdout
    );
    assert_same_hierarchy(&open_store(&src), "/", &open_store(&dst));
}

/// Every key and its bytes under `root`, but the marker.
fn contents(root: &Path) -> Vec<(String, Vec<u8>)> {
    let store = open_store(root);
    let mut keys = store.list().unwrap();
    keys.sort();
    keys.into_iter()
        .map(|key| {
            let bytes = store.get(&key, None).unwrap().unwrap();
            (key.as_str().to_string(), bytes)
        })
        .collect()
}

#[test]
fn a_killed_copy_resumes_to_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarr");
    volume(&src, &[1024, 1024, 1], &[512, 512, 1]);
    let args = |dst: &Path| -> Vec<String> {
        [
            "--threads",
            "1",
            "cp",
            &format!("{}/volume", s(&src)),
            s(dst),
            "--chunks",
            "16,16,1",
        ]
        .iter()
        .map(ToString::to_string)
        .collect()
    };
    // The reference: one uninterrupted copy.
    let whole = dir.path().join("whole.zarr");
    let run = zarrkit(args(&whole));
    assert_eq!(run.code, 0, "{}", run.stderr);

    let dst = dir.path().join("killed.zarr");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_zarrkit"))
        .args(args(&dst))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once some chunks are written (4096 in all).
    let chunks = dst.join("c");
    let written = || walk_count(&chunks);
    let start = std::time::Instant::now();
    while written() < 100 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the copy finished before it could be killed"
        );
        assert!(start.elapsed().as_secs() < 120, "no chunk written");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = written();
    assert!((100..4096).contains(&before), "{before}");
    assert!(dst.join(zarrkit::migrate::MIGRATION_MARKER).is_file());

    // Other options are not the same copy.
    let mut other = args(&dst);
    other[6] = "32,32,1".into();
    other.push("--resume".into());
    let run = zarrkit(other);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("other options"), "{}", run.stderr);

    let mut resume = args(&dst);
    resume.push("--resume".into());
    resume.push("--verify".into());
    let run = zarrkit(resume);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let kept: u64 = run
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix("resumed: "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        kept + 2 >= before as u64 && kept < 4096,
        "{kept} of {before}"
    );
    assert_eq!(contents(&dst), contents(&whole));
}

/// The bytes of the files under `dir`.
fn walk_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                walk_bytes(&e.path())
            } else {
                meta.len()
            }
        })
        .sum()
}

fn walk_count(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            if e.path().is_dir() {
                walk_count(&e.path())
            } else {
                usize::from(!e.file_name().to_string_lossy().starts_with('.'))
            }
        })
        .sum()
}

#[test]
fn copies_to_and_from_s3() {
    let Some(endpoint) = zarrkit::store::testing::server_from_env("ZARRKIT_S3_ENDPOINT") else {
        return;
    };
    let env = |var: &str, default: &str| std::env::var(var).unwrap_or_else(|_| default.into());
    let mut options = Vec::new();
    for option in [
        format!("aws_endpoint={endpoint}"),
        format!(
            "aws_access_key_id={}",
            env("AWS_ACCESS_KEY_ID", "zarrkit-test")
        ),
        format!(
            "aws_secret_access_key={}",
            env("AWS_SECRET_ACCESS_KEY", "zarrkit-test-secret")
        ),
        format!("aws_region={}", env("AWS_REGION", "us-east-1")),
    ] {
        options.push("--storage-option".to_string());
        options.push(option);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let bucket = env("ZARRKIT_TEST_BUCKET", "zarrkit");
    let url = format!(
        "s3://{bucket}/cp-{}-{nanos}/volume.zarr",
        std::process::id()
    );
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarr");
    volume(&src, &[40, 30, 20], &[10, 10, 10]);
    let with = |args: &[&str]| {
        let mut all = options.clone();
        all.extend(args.iter().map(ToString::to_string));
        zarrkit(all)
    };
    let run = with(&["cp", s(&src), &url, "--shards", "20,30,20", "--verify"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("verification passed"), "{}", run.stdout);
    // And back, as v2.
    let back = dir.path().join("back.zarr");
    let run = with(&[
        "cp",
        &format!("{url}/volume"),
        s(&back),
        "--format",
        "v2",
        "--shards",
        "none",
        "--chunks",
        "7,7,7",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let copy = Array::open(open_store(&back), "/").unwrap();
    assert_eq!(copy.format(), zarrkit::format::ZarrFormat::V2);
    assert_eq!(copy.chunk_shape(), [7, 7, 7]);
    assert_same_values(&Array::open(open_store(&src), "/volume").unwrap(), &copy);
    // The prefix is not empty now: refused, then replaced with --overwrite.
    let again = with(&["cp", s(&src), &url]);
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("not empty"), "{}", again.stderr);
    let again = with(&["cp", "--overwrite", s(&src), &url]);
    assert_eq!(again.code, 0, "{}", again.stderr);
}
