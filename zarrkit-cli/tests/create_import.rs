//! `zarrkit create`, `create-group` and `import`: every format, sharding,
//! each compressor, the data type spellings, the errors, and zarr-python
//! 3.1 and tensorstore reading what they wrote.

mod common;

use common::{open_store, python, zarrkit};
use serde_json::{Value, json};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use zarrkit::format::ZarrFormat;
use zarrkit::{Array, NodeKind, Region};

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn ok(args: &[&str]) -> String {
    let run = zarrkit(args);
    assert_eq!(run.code, 0, "zarrkit {args:?}: {}", run.stderr);
    run.stdout
}

/// A `.npy` file of `shape` with `descr` holding `data`, written here
/// (not by NumPy) so that these tests need no Python.
fn write_npy(path: &Path, descr: &str, fortran: bool, shape: &[u64], data: &[u8]) {
    // `(4,6,)`: a tuple, as Python spells one of any length.
    let shape: String = shape.iter().map(|n| format!("{n},")).collect();
    let shape = format!("({shape})");
    let order = if fortran { "True" } else { "False" };
    let mut dict = format!("{{'descr': {descr}, 'fortran_order': {order}, 'shape': {shape}, }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&u16::try_from(dict.len()).unwrap().to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

fn read_all<T: zarrkit::Element>(store: &Path, node: &str) -> Vec<T> {
    let array = Array::open(open_store(store), node).unwrap();
    array.read_region(&Region::whole(array.shape())).unwrap()
}

#[test]
fn create_writes_a_v3_array_with_every_layout_option() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("new.zarr");
    let s = store.to_str().unwrap();
    let out = ok(&[
        "create",
        s,
        "/a/b",
        "--shape",
        "100,200",
        "--dtype",
        "int16",
        "--chunks",
        "10,20",
        "--fill-value",
        "-7",
        "--dimension-names",
        "y,x",
        "--attrs",
        r#"{"units": "K"}"#,
        "--compressor",
        "gzip:4",
        "--chunk-key-encoding",
        "default:.",
    ]);
    assert!(out.contains("created group `/` in"), "{out}");
    assert!(out.contains("created group `/a` in"), "{out}");
    assert!(out.contains("created array `/a/b`"), "{out}");
    let doc = read_json(&store.join("a/b/zarr.json"));
    assert_eq!(doc["shape"], json!([100, 200]));
    assert_eq!(doc["data_type"], "int16");
    assert_eq!(
        doc["chunk_grid"]["configuration"]["chunk_shape"],
        json!([10, 20])
    );
    assert_eq!(doc["fill_value"], -7);
    assert_eq!(doc["dimension_names"], json!(["y", "x"]));
    assert_eq!(doc["attributes"], json!({"units": "K"}));
    assert_eq!(
        doc["chunk_key_encoding"],
        json!({"name": "default", "configuration": {"separator": "."}})
    );
    assert_eq!(
        doc["codecs"],
        json!([
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "gzip", "configuration": {"level": 4}}])
    );
    assert_eq!(read_json(&store.join("a/zarr.json"))["node_type"], "group");
    assert_eq!(read_json(&store.join("zarr.json"))["node_type"], "group");
    // Unwritten, the array reads as its fill value.
    assert!(read_all::<i16>(&store, "/a/b").iter().all(|&v| v == -7));
}

#[test]
fn create_defaults_follow_zarr_python() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("d.zarr");
    let s = s.to_str().unwrap();
    let out = ok(&[
        "create",
        s,
        "/x",
        "--shape",
        "1000,1000",
        "--dtype",
        "float64",
        "--json",
    ]);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["path"], "/x");
    assert_eq!(json["node_type"], "array");
    assert_eq!(json["format"], "v3");
    assert_eq!(json["created_groups"], json!(["/"]));
    let doc = &json["metadata"];
    // zarr-python 3.1.6's `_guess_chunks((1000, 1000), 8)` and default zstd.
    assert_eq!(
        doc["chunk_grid"]["configuration"]["chunk_shape"],
        json!([250, 250])
    );
    assert_eq!(
        doc["codecs"][1],
        json!({"name": "zstd", "configuration": {"level": 0, "checksum": false}})
    );
    assert_eq!(doc["fill_value"], 0.0);
    // What --json printed is what was stored.
    assert_eq!(doc, &read_json(&dir.path().join("d.zarr/x/zarr.json")));
}

#[test]
fn create_writes_v2_with_its_compressor_and_type_string() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("v2.zarr");
    let s = store.to_str().unwrap();
    let out = ok(&[
        "create",
        "--format",
        "v2",
        s,
        "/g/counts",
        "--shape",
        "1000",
        "--dtype",
        ">i8",
        "--chunks",
        "100",
        "--compressor",
        "zlib:5",
        "--attrs",
        r#"{"a": 1}"#,
        "--json",
    ]);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["format"], "v2");
    assert_eq!(json["created_groups"], json!(["/", "/g"]));
    let zarray = read_json(&store.join("g/counts/.zarray"));
    assert_eq!(json["metadata"][".zarray"], zarray);
    assert_eq!(zarray["compressor"], json!({"id": "zlib", "level": 5}));
    assert_eq!(zarray["dtype"], ">i8");
    assert_eq!(zarray["chunks"], json!([100]));
    assert_eq!(zarray["dimension_separator"], ".");
    assert_eq!(read_json(&store.join("g/counts/.zattrs")), json!({"a": 1}));
    assert_eq!(
        read_json(&store.join("g/.zgroup")),
        json!({"zarr_format": 2})
    );
    // The store's format is the default for the next node; another is refused.
    ok(&["create", s, "/g/more", "--shape", "5", "--dtype", "u1"]);
    assert!(store.join("g/more/.zarray").is_file());
    let run = zarrkit([
        "create", "--format", "v3", s, "/h", "--shape", "5", "--dtype", "u1",
    ]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("the root of"), "{}", run.stderr);
    assert!(run.stderr.contains("is v2"), "{}", run.stderr);
}

#[test]
fn create_writes_v1_and_the_v3_drafts() {
    let dir = tempfile::tempdir().unwrap();
    // v1 compresses with zlib, bz2, lzma or blosc, not gzip.
    for (format, node, compressor, codec) in [
        ("v1", "/", "zlib:1", "zlib"),
        ("v3-draft-2022", "/a/b", "gzip:1", "gzip"),
        ("v3-draft-2019-json", "/a/b", "gzip:1", "gzip"),
        ("v3-draft-2019", "/a/b", "gzip:1", "gzip"),
        ("v3-draft-2019a", "/a/b", "gzip:1", "gzip"),
    ] {
        let store = dir.path().join(format);
        let s = store.to_str().unwrap();
        ok(&[
            "create",
            "--format",
            format,
            s,
            node,
            "--shape",
            "6,4",
            "--dtype",
            "<i4",
            "--chunks",
            "3,2",
            "--fill-value",
            "9",
            "--compressor",
            compressor,
        ]);
        let opened = open_store(&store);
        let expected = ZarrFormat::ALL.iter().find(|f| f.name() == format).copied();
        assert_eq!(
            zarrkit::node::exists(opened.as_ref(), node).unwrap(),
            Some((expected.unwrap(), NodeKind::Array)),
            "{format}"
        );
        let run = zarrkit([
            "info",
            "--json",
            &format!("{s}{}", node.trim_end_matches('/')),
        ]);
        assert_eq!(run.code, 0, "{format}: {}", run.stderr);
        assert!(run.stdout.contains(codec), "{format}: {}", run.stdout);
        assert!(
            run.stdout.contains("\"fill_value\": 9"),
            "{format}: {}",
            run.stdout
        );
    }
    // v1 has no groups.
    let s = dir.path().join("v1b");
    let run = zarrkit([
        "create",
        "--format",
        "v1",
        s.to_str().unwrap(),
        "/a",
        "--shape",
        "3",
        "--dtype",
        "u1",
    ]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("v1 has no groups"), "{}", run.stderr);
}

#[test]
fn create_group_makes_parents_and_takes_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("g.zarr");
    let s = store.to_str().unwrap();
    let out = ok(&[
        "create-group",
        s,
        "/a/b",
        "--attrs",
        r#"{"x": [1, 2]}"#,
        "--json",
    ]);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["node_type"], "group");
    assert_eq!(json["created_groups"], json!(["/", "/a"]));
    assert_eq!(
        read_json(&store.join("a/b/zarr.json")),
        json!({"zarr_format": 3, "node_type": "group", "attributes": {"x": [1, 2]}})
    );
    let run = zarrkit(["create-group", s, "/a/b"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("a group already exists at `/a/b`"),
        "{}",
        run.stderr
    );
    ok(&[
        "create-group",
        "--format",
        "v2",
        dir.path().join("v2").to_str().unwrap(),
        "/q",
    ]);
    assert!(dir.path().join("v2/q/.zgroup").is_file());
}

#[test]
fn sharded_arrays_hold_inner_chunks_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("a.npy");
    let values: Vec<u32> = (0..64 * 48).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    write_npy(&npy, "'<u4'", false, &[64, 48], &data);
    let store = dir.path().join("s.zarr");
    let s = store.to_str().unwrap();
    ok(&[
        "import",
        npy.to_str().unwrap(),
        s,
        "/s",
        "--chunks",
        "8,8",
        "--shards",
        "32,24",
        "--compressor",
        "zstd:3",
        "--memory-budget",
        "4K",
    ]);
    let doc = read_json(&store.join("s/zarr.json"));
    assert_eq!(
        doc["chunk_grid"]["configuration"]["chunk_shape"],
        json!([32, 24])
    );
    let sharding = &doc["codecs"][0];
    assert_eq!(sharding["name"], "sharding_indexed");
    assert_eq!(sharding["configuration"]["chunk_shape"], json!([8, 8]));
    assert_eq!(
        sharding["configuration"]["codecs"][1],
        json!({"name": "zstd", "configuration": {"level": 3, "checksum": false}})
    );
    assert_eq!(read_all::<u32>(&store, "/s"), values);
    // Four shards, each a file.
    let shards = std::fs::read_dir(store.join("s/c/0")).unwrap().count()
        + std::fs::read_dir(store.join("s/c/1")).unwrap().count();
    assert_eq!(shards, 4);
}

#[test]
fn every_compressor_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("a.npy");
    let values: Vec<f64> = (0..500).map(|i| f64::from(i) * 0.25).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    write_npy(&npy, "'<f8'", false, &[20, 25], &data);
    let store = dir.path().join("c.zarr");
    let s = store.to_str().unwrap();
    for (i, (compressor, codec)) in [
        ("zstd:3", Some("zstd")),
        ("gzip:9", Some("gzip")),
        ("zlib:1", Some("numcodecs.zlib")),
        ("bz2:9", Some("numcodecs.bz2")),
        ("lzma", Some("numcodecs.lzma")),
        ("lz4", Some("numcodecs.lz4")),
        ("blosc", Some("blosc")),
        ("blosc:lz4:5:bitshuffle", Some("blosc")),
        ("none", None),
    ]
    .into_iter()
    .enumerate()
    {
        for format in ["v3", "v2"] {
            let node = format!("/{format}_{i}");
            let s = format!("{s}_{format}");
            ok(&[
                "import",
                "--format",
                format,
                npy.to_str().unwrap(),
                &s,
                &node,
                "--chunks",
                "7,10",
                "--compressor",
                compressor,
            ]);
            assert_eq!(
                read_all::<f64>(Path::new(&s), &node),
                values,
                "{compressor} {format}"
            );
            let array = Array::open(open_store(Path::new(&s)), &node).unwrap();
            let names: Vec<&str> = array
                .metadata()
                .codecs
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            assert_eq!(names[1..].first().copied(), codec, "{compressor} {format}");
        }
    }
}

#[test]
fn data_types_take_v3_names_and_numpy_strings() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("t.zarr");
    let s = store.to_str().unwrap();
    for (i, (dtype, name, endian)) in [
        ("uint16", json!("uint16"), Some("little")),
        ("<u2", json!("uint16"), Some("little")),
        (">u2", json!("uint16"), Some("big")),
        ("float32", json!("float32"), Some("little")),
        (
            "|S10",
            json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 10}}),
            None,
        ),
        ("bool", json!("bool"), None),
        (
            "M8[ns]",
            json!({"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}),
            Some("little"),
        ),
        ("string", json!("string"), None),
    ]
    .into_iter()
    .enumerate()
    {
        let node = format!("/t{i}");
        ok(&["create", s, &node, "--shape", "4", "--dtype", dtype]);
        let doc = read_json(&store.join(format!("t{i}/zarr.json")));
        assert_eq!(doc["data_type"], name, "{dtype}");
        let first = &doc["codecs"][0];
        match endian {
            Some(endian) => assert_eq!(first["configuration"]["endian"], endian, "{dtype}"),
            None => assert!(
                first["configuration"].get("endian").is_none(),
                "{dtype}: {first}"
            ),
        }
    }
    // `<U5` is five UTF-32 code units.
    ok(&["create", s, "/u", "--shape", "4", "--dtype", "<U5"]);
    let doc = read_json(&store.join("u/zarr.json"));
    assert_eq!(doc["data_type"]["name"], "fixed_length_utf32");
    assert_eq!(doc["data_type"]["configuration"]["length_bytes"], 20);
    let run = zarrkit(["create", s, "/bad", "--shape", "4", "--dtype", "float128x"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown data type `float128x`"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_options_are_errors_that_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("e.zarr");
    let s = store.to_str().unwrap();
    let base = ["create", s, "/a", "--dtype", "uint8"];
    let run_with = |extra: &[&str]| {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        zarrkit(args)
    };
    // Usage errors (exit code 2): a malformed shape, an unknown codec or compressor.
    let run = run_with(&["--shape", "4,x"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("`x` is not a length"), "{}", run.stderr);
    let run = run_with(&["--shape", "4", "--codecs", r#"["bytes", "snappy"]"#]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("unknown codec `snappy`; known codecs: bytes,"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("zstd"), "{}", run.stderr);
    let run = run_with(&["--shape", "4", "--compressor", "snappy"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(
            "unknown compressor `snappy`; one of: zstd, gzip, zlib, bz2, lzma, lz4, blosc, none"
        ),
        "{}",
        run.stderr
    );
    // Errors (exit code 1): layouts that do not fit.
    let run = run_with(&[
        "--shape", "256,256", "--chunks", "64,60", "--shards", "128,128",
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("the chunk shape 64,60 does not divide the shard shape 128,128: in dimension 1, 128 is not a multiple of 60"),
        "{}",
        run.stderr
    );
    let run = run_with(&["--shape", "256,256", "--chunks", "64"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("--chunks 64 has 1 dimension for an array of 2 dimensions"),
        "{}",
        run.stderr
    );
    let run = run_with(&["--shape", "4", "--fill-value", "300"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("--fill-value `300` is not a value of the data type `uint8`"),
        "{}",
        run.stderr
    );
    let run = run_with(&["--shape", "4", "--format", "v2", "--shards", "4"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("no sharding"), "{}", run.stderr);
    // None of them created the store.
    assert!(!store.exists());
}

#[test]
fn an_existing_node_is_untouched_without_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("o.zarr");
    let s = store.to_str().unwrap();
    let npy = dir.path().join("a.npy");
    write_npy(&npy, "'|u1'", false, &[4], &[1, 2, 3, 4]);
    ok(&["import", npy.to_str().unwrap(), s, "/a", "--chunks", "2"]);
    let doc = std::fs::read(store.join("a/zarr.json")).unwrap();
    let chunk = std::fs::read(store.join("a/c/0")).unwrap();
    for args in [
        vec!["create", s, "/a", "--shape", "9", "--dtype", "f8"],
        vec!["import", npy.to_str().unwrap(), s, "/a"],
    ] {
        let run = zarrkit(&args);
        assert_eq!(run.code, 1, "{args:?}");
        assert!(
            run.stderr.contains("an array already exists at `/a`")
                && run.stderr.contains("--overwrite"),
            "{}",
            run.stderr
        );
        assert_eq!(std::fs::read(store.join("a/zarr.json")).unwrap(), doc);
        assert_eq!(std::fs::read(store.join("a/c/0")).unwrap(), chunk);
    }
    assert_eq!(read_all::<u8>(&store, "/a"), [1, 2, 3, 4]);
    // A parent that is an array.
    let run = zarrkit(["create", s, "/a/b", "--shape", "2", "--dtype", "u1"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("its parent `/a` is an array"),
        "{}",
        run.stderr
    );
    // --overwrite replaces it, chunks and all.
    ok(&[
        "create",
        s,
        "/a",
        "--shape",
        "9",
        "--dtype",
        "f8",
        "--overwrite",
    ]);
    assert_eq!(
        read_json(&store.join("a/zarr.json"))["data_type"],
        "float64"
    );
    assert!(!store.join("a/c/0").exists());
}

#[test]
fn import_refuses_a_file_that_does_not_match_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("m.zarr");
    let s = store.to_str().unwrap();
    let npy = dir.path().join("short.npy");
    write_npy(&npy, "'<f4'", false, &[10, 10], &[0; 396]);
    let run = zarrkit(["import", npy.to_str().unwrap(), s, "/a"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("holds 396 bytes of data, but [10, 10] elements of `float32` (4 bytes each) make 400: the file does not match its header"),
        "{}",
        run.stderr
    );
    assert!(!store.exists());
    let raw = dir.path().join("r.raw");
    std::fs::write(&raw, [0u8; 30]).unwrap();
    let run = zarrkit([
        "import",
        raw.to_str().unwrap(),
        s,
        "/a",
        "--dtype",
        "u2",
        "--shape",
        "4,4",
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("does not match --dtype and --shape"),
        "{}",
        run.stderr
    );
    let run = zarrkit(["import", raw.to_str().unwrap(), s, "/a"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("give --dtype and --shape"),
        "{}",
        run.stderr
    );
    let run = zarrkit(["import", raw.to_str().unwrap(), s, "/a", "--dtype", "u2"]);
    assert_eq!(run.code, 2);
    assert!(!store.exists());
}

#[test]
fn a_failed_import_erases_the_new_array() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("f.zarr");
    let s = store.to_str().unwrap();
    ok(&["create-group", s, "/"]);
    // A directory where the second chunk's file must go: that write fails.
    std::fs::create_dir_all(store.join("a/c/1/keep")).unwrap();
    let npy = dir.path().join("a.npy");
    write_npy(&npy, "'|u1'", false, &[4], &[1, 2, 3, 4]);
    let run = zarrkit(["import", npy.to_str().unwrap(), s, "/a", "--chunks", "2"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains("`/a` was erased again"),
        "{}",
        run.stderr
    );
    assert!(!store.join("a/zarr.json").exists());
    assert!(!store.join("a/c/0").exists());
    assert!(store.join("zarr.json").is_file());
}

#[test]
fn import_reads_raw_files_in_either_order_and_byte_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("r.zarr");
    let s = store.to_str().unwrap();
    // 3×4 values 0..12, written big-endian in Fortran order.
    let mut data = Vec::new();
    for col in 0..4u16 {
        for row in 0..3u16 {
            data.extend_from_slice(&(row * 4 + col).to_be_bytes());
        }
    }
    let raw = dir.path().join("f.raw");
    std::fs::write(&raw, &data).unwrap();
    ok(&[
        "import",
        raw.to_str().unwrap(),
        s,
        "/f",
        "--dtype",
        "uint16",
        "--shape",
        "3,4",
        "--byte-order",
        "big",
        "--order",
        "F",
        "--chunks",
        "2,3",
    ]);
    assert_eq!(read_all::<u16>(&store, "/f"), (0..12).collect::<Vec<u16>>());
    // `>u2` says big-endian by itself.
    ok(&[
        "import",
        raw.to_str().unwrap(),
        s,
        "/g",
        "--dtype",
        ">u2",
        "--shape",
        "3,4",
        "--order",
        "F",
    ]);
    assert_eq!(read_all::<u16>(&store, "/g"), (0..12).collect::<Vec<u16>>());
    // Stored little-endian whatever the file's order.
    assert_eq!(
        read_json(&store.join("g/zarr.json"))["codecs"][0]["configuration"]["endian"],
        "little"
    );
}

#[test]
fn import_into_a_new_zip_archive() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("a.npy");
    let data: Vec<u8> = (0..24).collect();
    write_npy(&npy, "'|u1'", false, &[4, 6], &data);
    let zip = dir.path().join("out.zip");
    let z = zip.to_str().unwrap();
    ok(&[
        "import",
        npy.to_str().unwrap(),
        z,
        "/x/y",
        "--chunks",
        "2,3",
    ]);
    let (code, npy_out, stderr) =
        common::zarrkit_bytes(["export", &format!("{z}/x/y"), "--out", "-"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(&npy_out[npy_out.len() - 24..], &data[..]);
    // Archives are written once: a second write is refused, naming why.
    let run = zarrkit(["create", z, "/z", "--shape", "1", "--dtype", "u1"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("written once"), "{}", run.stderr);
}

/// Writes `.npy` files with NumPy, imports them as v3, v2 and sharded v3,
/// and reads each result with zarr-python and tensorstore: every value
/// must equal `np.load` of the file.
const WRITE_SCRIPT: &str = r#"
import sys, numpy as np
d = sys.argv[1]
base = np.arange(37 * 23, dtype="<f8").reshape(37, 23) * 1.5 - 100
np.save(f"{d}/c.npy", base)
np.save(f"{d}/fortran.npy", np.asfortranarray(base.astype("<i4")))
np.save(f"{d}/big.npy", base.astype(">u2"))
np.save(f"{d}/bigf.npy", np.asfortranarray(base.astype(">f4")))
np.save(f"{d}/cube.npy", np.arange(10 * 12 * 14, dtype="<i2").reshape(10, 12, 14))
"#;

const READ_SCRIPT: &str = r#"
import json, sys, warnings
import numpy as np, tensorstore as ts, zarr
warnings.filterwarnings("ignore")
store, d = sys.argv[1], sys.argv[2]
result = {}
for spec in sys.argv[3:]:
    node, npy, driver = spec.split(":")
    expected = np.load(f"{d}/{npy}")
    def same(a):
        a = np.asarray(a)
        if a.shape != expected.shape or a.dtype.newbyteorder("=") != expected.dtype.newbyteorder("="):
            return f"differs: {a.dtype} {a.shape}"
        return "ok" if np.array_equal(a, expected) else "differs"
    row = {}
    try:
        row["zarr"] = same(zarr.open_array(f"{store}/{node}", mode="r")[...])
    except Exception as e:
        row["zarr"] = f"error: {e}"
    try:
        spec = {"driver": driver, "kvstore": {"driver": "file", "path": f"{store}/{node}"}}
        row["tensorstore"] = same(ts.open(spec).result().read().result())
    except Exception as e:
        row["tensorstore"] = f"error: {e}"
    result[node] = row
print(json.dumps(result))
"#;

#[test]
fn zarr_python_and_tensorstore_read_what_import_wrote() {
    let Some(python) = python(
        "ZARRKIT_PYTHON",
        "zarr 3.1 and tensorstore (scripts/requirements.txt)",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let status = Command::new(&python)
        .args([OsStr::new("-c"), OsStr::new(WRITE_SCRIPT), d.as_os_str()])
        .status()
        .unwrap();
    assert!(status.success());
    let npy = |name: &str| d.join(name).to_str().unwrap().to_string();
    let v3: PathBuf = d.join("v3.zarr");
    let v2: PathBuf = d.join("v2.zarr");
    let (v3s, v2s) = (v3.to_str().unwrap(), v2.to_str().unwrap());
    let mut specs3 = Vec::new();
    let mut specs2 = Vec::new();
    for file in ["c.npy", "fortran.npy", "big.npy", "bigf.npy"] {
        let node = file.trim_end_matches(".npy");
        ok(&[
            "import",
            &npy(file),
            v3s,
            node,
            "--chunks",
            "8,5",
            "--memory-budget",
            "1K",
        ]);
        let sharded = format!("{node}_sharded");
        ok(&[
            "import",
            &npy(file),
            v3s,
            &sharded,
            "--chunks",
            "4,5",
            "--shards",
            "8,10",
            "--compressor",
            "blosc:lz4:5:shuffle",
        ]);
        ok(&[
            "import",
            "--format",
            "v2",
            &npy(file),
            v2s,
            node,
            "--chunks",
            "8,5",
            "--compressor",
            "zlib:3",
        ]);
        specs3.push(format!("{node}:{file}:zarr3"));
        specs3.push(format!("{sharded}:{file}:zarr3"));
        specs2.push(format!("{node}:{file}:zarr"));
    }
    ok(&[
        "import",
        &npy("cube.npy"),
        v3s,
        "/deep/cube",
        "--chunks",
        "3,4,5",
        "--shards",
        "6,12,5",
        "--memory-budget",
        "2K",
    ]);
    specs3.push("deep/cube:cube.npy:zarr3".to_string());
    ok(&[
        "import",
        "--format",
        "v2",
        &npy("cube.npy"),
        v2s,
        "/deep/cube",
        "--chunks",
        "3,4,5",
        "--compressor",
        "gzip:1",
    ]);
    specs2.push("deep/cube:cube.npy:zarr".to_string());
    for (store, specs) in [(v3s, &specs3), (v2s, &specs2)] {
        let mut args = vec![
            "-c".to_string(),
            READ_SCRIPT.to_string(),
            store.to_string(),
            d.to_str().unwrap().to_string(),
        ];
        args.extend(specs.iter().cloned());
        let output = Command::new(&python).args(&args).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let result: Value = serde_json::from_slice(&output.stdout).unwrap();
        let nodes = result.as_object().unwrap();
        assert_eq!(nodes.len(), specs.len());
        for (node, row) in nodes {
            assert_eq!(
                row,
                &json!({"zarr": "ok", "tensorstore": "ok"}),
                "{store} {node}"
            );
        }
    }
}

/// Writes one `.npy` file per NumPy type (C and Fortran order, both byte
/// orders, structured types with fields in different byte orders), named
/// by a key, and lists the keys.
const TYPES_SCRIPT: &str = r#"
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
shape = (5, 7)
def ints(dt):
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=np.dtype(dt).newbyteorder("="), endpoint=True).astype(dt)
arrays = {
    "bool": rng.integers(0, 2, size=shape).astype("|b1"),
    "i1": ints("|i1"), "u1": ints("|u1"),
    "i2be": ints(">i2"), "u4": ints("<u4"), "i8be": ints(">i8"), "u8": ints("<u8"),
    "f2": rng.standard_normal(shape).astype("<f2"),
    "f4be": rng.standard_normal(shape).astype(">f4"),
    "f8": np.where(rng.random(shape) < 0.2, np.nan, rng.standard_normal(shape)).astype("<f8"),
    "c8be": (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(">c8"),
    "c16": (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype("<c16"),
    "S4": np.array([b"", b"a", b"bc", b"def", b"ghij"] * 7, dtype="|S4").reshape(shape),
    "U3be": np.array(["", "x", "\u00e9\u00e8", "\U0001f600ab", "zz"] * 7, dtype=">U3").reshape(shape),
    "V3": np.frombuffer(rng.bytes(3 * 35), dtype="|V3").reshape(shape),
    "M8ns": rng.integers(-10**15, 10**15, size=shape).astype("<M8[ns]"),
    "m8sbe": rng.integers(-10**6, 10**6, size=shape).astype(">m8[s]"),
    "struct": np.array([(i, -i * 1.5, i + 1) for i in range(35)],
                       dtype=[("a", "<i4"), ("b", ">f8"), ("c", ">u2")]).reshape(shape),
    # v2 only: v3 `struct` fields are scalars.
    "structsub": np.array([(i, (i, i + 1)) for i in range(35)],
                          dtype=[("a", "<i4"), ("c", ">u2", (2,))]).reshape(shape),
}
for key, a in list(arrays.items()):
    arrays[key + "_F"] = np.asfortranarray(a)
for key, a in arrays.items():
    np.save(f"{d}/{key}.npy", a)
print(" ".join(arrays))
"#;

/// For each key, whether the `.npy` zarrkit exported equals the one NumPy
/// wrote (values, NaN in place, and the type up to byte order).
const COMPARE_SCRIPT: &str = r#"
import json, sys, numpy as np
d = sys.argv[1]
result = {}
for key in sys.argv[2:]:
    a, b = np.load(f"{d}/{key}.npy"), np.load(f"{d}/{key}.out.npy")
    def plain(dt):
        if dt.names:
            return [(n, plain(dt.fields[n][0])) for n in dt.names]
        return dt.newbyteorder("=").str if dt.kind not in "SV" else dt.str
    same = a.shape == b.shape and plain(a.dtype) == plain(b.dtype)
    if same:
        if a.dtype.names:
            same = all(np.array_equal(a[n], b[n]) for n in a.dtype.names)
        else:
            same = np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    result[key] = "ok" if same else f"differs: {a.dtype} {b.dtype} {a.shape} {b.shape}"
print(json.dumps(result))
"#;

#[test]
fn every_numpy_type_imports_as_numpy_wrote_it() {
    let Some(python) = python("ZARRKIT_PYTHON", "NumPy (scripts/requirements.txt)") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let output = Command::new(&python)
        .args(["-c", TYPES_SCRIPT, d])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let keys: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect();
    assert_eq!(keys.len(), 38);
    for format in ["v3", "v2"] {
        let store = format!("{d}/{format}.zarr");
        let keys: Vec<&String> = keys
            .iter()
            .filter(|key| format == "v2" || !key.starts_with("structsub"))
            .collect();
        for key in &keys {
            let file = format!("{d}/{key}.npy");
            ok(&[
                "import", "--format", format, &file, &store, key, "--chunks", "2,3",
            ]);
            let out = format!("{d}/{key}.out.npy");
            ok(&["export", &format!("{store}/{key}"), "--out", &out]);
        }
        let mut args = vec!["-c".to_string(), COMPARE_SCRIPT.to_string(), d.to_string()];
        args.extend(keys.iter().map(|key| (*key).clone()));
        let output = Command::new(&python).args(&args).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let result: Value = serde_json::from_slice(&output.stdout).unwrap();
        for key in &keys {
            assert_eq!(result[key.as_str()], "ok", "{format} {key}");
        }
    }
    // Into v3, a subarray field is refused before anything is written.
    let run = zarrkit([
        "import",
        &format!("{d}/structsub.npy"),
        &format!("{d}/v3.zarr"),
        "structsub",
    ]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("fields are scalars"), "{}", run.stderr);
    assert!(!dir.path().join("v3.zarr/structsub").exists());
}

#[test]
fn create_and_import_write_to_s3() {
    let Some(endpoint) = zarrkit::store::testing::server_from_env("ZARRKIT_S3_ENDPOINT") else {
        return;
    };
    // Credentials and region come from the environment (`AWS_*`).
    let endpoint = format!("aws_endpoint={endpoint}");
    let bucket = std::env::var("ZARRKIT_TEST_BUCKET").unwrap_or_else(|_| "zarrkit".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let url = format!(
        "s3://{bucket}/create-import-{}-{nanos}/d.zarr",
        std::process::id()
    );
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("a.npy");
    let values: Vec<i32> = (0..30).map(|i| i * 7 - 50).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    write_npy(&npy, "'<i4'", false, &[5, 6], &data);
    let with = |args: &[&str]| {
        let mut all = vec!["--storage-option", endpoint.as_str()];
        all.extend_from_slice(args);
        zarrkit(all)
    };
    let run = with(&[
        "import",
        npy.to_str().unwrap(),
        &url,
        "/g/a",
        "--chunks",
        "2,4",
        "--shards",
        "4,4",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("created group `/g`"), "{}", run.stdout);
    // The node exists now: a second create is refused and changes nothing.
    let run = with(&["create", &url, "/g/a", "--shape", "3", "--dtype", "u1"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("an array already exists at `/g/a`"),
        "{}",
        run.stderr
    );
    let out = dir.path().join("back.npy");
    let run = with(&[
        "export",
        &format!("{url}/g/a"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let back = std::fs::read(&out).unwrap();
    assert_eq!(&back[back.len() - data.len()..], &data[..]);
    let run = with(&["create-group", &url, "/h", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["created_groups"], json!([]));
    assert_eq!(json["metadata"]["node_type"], "group");
}
