//! End-to-end tests of `zarrkit get` and `zarrkit set`: tables, every
//! output format, every data type, errors that leave data untouched, and
//! zarr-python reading the same values (the interop tests need
//! `ZARRKIT_PYTHON` / `ZARRKIT_PYTHON_ZARR2`, see `common::python`).

mod common;

use common::{open_store, python, zarrkit, zarrkit_bytes};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, TimeUnit};
use zarrkit::{Array, Group, Region};

/// A store with `/x`, int32 [4, 5, 6] holding 0..120 in [2, 2, 3] chunks,
/// and `/big`, float64 [40, 40] holding i / 4.
fn store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("data.zarr");
    let store = open_store(&root);
    Group::create(Arc::clone(&store), "/", Default::default()).unwrap();
    let x = Array::builder(&[4, 5, 6], DataType::Int32, &[2, 2, 3])
        .create(Arc::clone(&store), "/x")
        .unwrap();
    let values: Vec<i32> = (0..120).collect();
    x.write_region(&Region::whole(&[4, 5, 6]), &values).unwrap();
    let big = Array::builder(&[40, 40], DataType::Float64, &[8, 8])
        .create(Arc::clone(&store), "/big")
        .unwrap();
    let values: Vec<f64> = (0..1600).map(|i| f64::from(i) / 4.0).collect();
    big.write_region(&Region::whole(&[40, 40]), &values)
        .unwrap();
    (dir, root)
}

fn s(path: &Path) -> String {
    path.display().to_string()
}

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

#[test]
fn get_prints_numpy_style_tables() {
    let (_dir, root) = store();
    let x = s(&root.join("x"));
    let run = zarrkit(["get", &x, "1, :, ::-1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "[[35 34 33 32 31 30]\n [41 40 39 38 37 36]\n [47 46 45 44 43 42]\n [53 52 51 50 49 48]\n [59 58 57 56 55 54]]\n"
    );
    // The store root and the node as two arguments; a selection that
    // starts with `-` is a selection, not an option.
    let run = zarrkit(["get", &s(&root), "/x", "-1, -1, -2:"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "[118 119]\n");
    let run = zarrkit(["get", &s(&root), "x", "..., -1"]);
    assert_eq!(
        run.stdout,
        "[[  5  11  17  23  29]\n [ 35  41  47  53  59]\n [ 65  71  77  83  89]\n [ 95 101 107 113 119]]\n"
    );
    // More than two dimensions: 2-d slices under index headers.
    let run = zarrkit(["get", &x, ":2, :2, :2"]);
    assert_eq!(
        run.stdout,
        "[0, :, :]\n[[ 0  1]\n [ 6  7]]\n\n[1, :, :]\n[[30 31]\n [36 37]]\n"
    );
    // A 0-d result is the value alone; floats print as NumPy prints them.
    let run = zarrkit(["get", &s(&root.join("big")), "1, 1"]);
    assert_eq!(run.stdout, "10.25\n");
    let run = zarrkit(["get", &s(&root.join("big")), "0, :4"]);
    assert_eq!(run.stdout, "[0.   0.25 0.5  0.75]\n");
}

#[test]
fn large_tables_are_summarised_with_a_note() {
    let (_dir, root) = store();
    let big = s(&root.join("big"));
    let run = zarrkit(["get", &big]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 8, "{}", run.stdout);
    assert_eq!(lines[0], "[[  0.     0.25   0.5  ...   9.25   9.5    9.75]");
    assert_eq!(lines[3], " ...");
    assert_eq!(
        lines[6],
        " [390.   390.25 390.5  ... 399.25 399.5  399.75]]"
    );
    assert!(lines[7].contains("1600 elements of shape [40, 40], summarised; --full"));
    // A reversed, strided selection summarised the same way (read through
    // the composed selection of the elements shown).
    let run = zarrkit(["get", &big, "::-1, 1:"]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "[[390.25 390.5  390.75 ... 399.25 399.5  399.75]");
    assert_eq!(lines[5], " [ 10.25  10.5   10.75 ...  19.25  19.5   19.75]");
    assert!(lines[7].contains("1560 elements of shape [40, 39]"));
    // Only the 36 elements shown are read: the summary fits a budget of
    // 1 KiB that the whole array (12800 bytes) does not.
    let run = zarrkit(["get", "--memory-budget", "1K", &big]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("[[  0.     0.25   0.5  ..."),
        "{}",
        run.stdout
    );
    let run = zarrkit(["get", "--memory-budget", "1K", "--json", &big]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("needs 12800 bytes of memory, more than the budget of 1024 bytes"),
        "{}",
        run.stderr
    );
    let run = zarrkit(["get", "--full", &big]);
    // 40 rows (each opened by `[`, the first by `[[`), wrapped at 75 columns.
    assert_eq!(run.stdout.matches('[').count(), 41);
    assert_eq!(run.stdout.lines().count(), 160);
    assert!(
        run.stdout
            .lines()
            .all(|l| l.len() < 75 && !l.ends_with(' '))
    );
    assert!(!run.stdout.contains("..."));
}

#[test]
fn json_csv_npy_and_raw_hold_the_selection() {
    let (dir, root) = store();
    let x = s(&root.join("x"));
    let run = zarrkit(["get", "--json", &x, "0, ::2, [0, -1]"]);
    // NumPy: advanced indices apart (0 and the list) put their dimension first.
    assert_eq!(json_of(&run.stdout), json!([[0, 12, 24], [5, 17, 29]]));
    let run = zarrkit(["get", "--format", "csv", &x, "3, :2, 4:"]);
    assert_eq!(run.stdout, "94,95\n100,101\n");
    let run = zarrkit(["get", "-f", "csv", &x]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("csv holds at most 2 dimensions"),
        "{}",
        run.stderr
    );
    // npy on standard output when it is not a terminal.
    let (code, npy, stderr) = zarrkit_bytes(["get", "-f", "npy", &x, "1, 2"]);
    assert_eq!(code, 0, "{stderr}");
    let header = String::from_utf8_lossy(&npy[..npy.len() - 24]).to_string();
    assert!(
        header.contains("'descr': '<i4'") && header.contains("'shape': (6,)"),
        "{header}"
    );
    let data: Vec<i32> = npy[npy.len() - 24..]
        .chunks(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(data, [42, 43, 44, 45, 46, 47]);
    let (_, raw, _) = zarrkit_bytes(["get", "-f", "raw", &x, "[3, 0], 0, 0"]);
    assert_eq!(raw, [90, 0, 0, 0, 0, 0, 0, 0]);
    // --out: the format from the extension, a line saying what was written.
    let out = dir.path().join("sel.json");
    let run = zarrkit(["get", &x, "0, 0", "-o", &s(&out)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with(&format!(
        "wrote `{}`: /x[0, 0], shape [6], int32, json",
        s(&out)
    )));
    assert_eq!(
        json_of(&std::fs::read_to_string(&out).unwrap()),
        json!([0, 1, 2, 3, 4, 5])
    );
    // --out - is standard output.
    let run = zarrkit(["get", "--out", "-", "--format", "json", &x, "0, 0, 0"]);
    assert_eq!(run.stdout, "0\n");
}

#[test]
fn selection_modes_follow_zarr_python() {
    let (_dir, root) = store();
    let x = s(&root.join("x"));
    // oindex: an outer product of the lists.
    let run = zarrkit(["get", "--json", "--oindex", &x, "[0, 3], 1, [0, 5]"]);
    assert_eq!(json_of(&run.stdout), json!([[6, 11], [96, 101]]));
    // vindex: points.
    let run = zarrkit(["get", "--json", "--vindex", &x, "[0, 3], [1, 4], [0, 5]"]);
    assert_eq!(json_of(&run.stdout), json!([6, 119]));
    // blocks: the chunk at grid position [1, 2, 1].
    let run = zarrkit(["get", "--json", "--blocks", &x, "1, 2, 1"]);
    assert_eq!(
        json_of(&run.stdout),
        json!([[[87, 88, 89]], [[117, 118, 119]]])
    );
    // Two modes at once is a usage error.
    let run = zarrkit(["get", "--oindex", "--vindex", &x, "0"]);
    assert_eq!(run.code, 2);
}

#[test]
fn every_data_type_prints_as_json_and_text() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("types.zarr");
    let store = open_store(&root);
    Group::create(Arc::clone(&store), "/", Default::default()).unwrap();
    let make = |name: &str, data_type: DataType| {
        Array::builder(&[3], data_type, &[2])
            .create(Arc::clone(&store), name)
            .unwrap()
    };
    make("/b", DataType::Bool)
        .write_region(&Region::whole(&[3]), &[true, false, true])
        .unwrap();
    make("/u8", DataType::UInt64)
        .write_region(&Region::whole(&[3]), &[0u64, 7, u64::MAX])
        .unwrap();
    make("/i1", DataType::Int8)
        .write_region(&Region::whole(&[3]), &[-128i8, 0, 127])
        .unwrap();
    make("/f4", DataType::Float32)
        .write_region(&Region::whole(&[3]), &[0.1f32, f32::NAN, f32::NEG_INFINITY])
        .unwrap();
    make("/f8", DataType::Float64)
        .write_region(&Region::whole(&[3]), &[1.0f64, 1e300, f64::INFINITY])
        .unwrap();
    let c = make("/c8", DataType::Complex64);
    let bytes: Vec<u8> = [1.5f32, -2.0, 0.0, 1.0, 3.0, 0.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    c.write_region_bytes(&Region::whole(&[3]), &bytes).unwrap();
    make("/s", DataType::String)
        .write_strings(&Region::whole(&[3]), &["a", "héllo", "x,y"])
        .unwrap();
    make("/fs", DataType::FixedBytes(3))
        .write_byte_strings(&Region::whole(&[3]), &[b"ab".as_slice(), b"", b"xyz"])
        .unwrap();
    make("/u", DataType::FixedUtf32(12))
        .write_strings(&Region::whole(&[3]), &["déf", "", "z"])
        .unwrap();
    let dt = make(
        "/dt",
        DataType::NumpyDateTime64 {
            unit: TimeUnit::Second,
            scale_factor: 1,
        },
    );
    dt.write_region(&Region::whole(&[3]), &[0i64, 1_583_415_910, i64::MIN])
        .unwrap();
    let cases = [
        ("b", json!([true, false, true]), "[ True False  True]"),
        (
            "u8",
            json!([0, 7, u64::MAX]),
            "[                   0                    7 18446744073709551615]",
        ),
        ("i1", json!([-128, 0, 127]), "[-128    0  127]"),
        ("f4", json!([0.1, "NaN", "-Infinity"]), "[ 0.1  nan -inf]"),
        ("f8", json!([1.0, 1e300, "Infinity"]), "[   1. 1e300   inf]"),
        (
            "c8",
            json!([[1.5, -2.0], [0.0, 1.0], [3.0, 0.0]]),
            "[1.5-2.j  0.+1.j  3.+0.j]",
        ),
        ("s", json!(["a", "héllo", "x,y"]), "['a' 'héllo' 'x,y']"),
        ("fs", json!(["ab", "", "xyz"]), "[b'ab' b'' b'xyz']"),
        ("u", json!(["déf", "", "z"]), "['déf' '' 'z']"),
        (
            "dt",
            json!(["1970-01-01T00:00:00", "2020-03-05T13:45:10", "NaT"]),
            "[1970-01-01T00:00:00 2020-03-05T13:45:10                 NaT]",
        ),
    ];
    for (name, expected, table) in cases {
        let node = s(&root.join(name));
        let run = zarrkit(["get", "--json", &node]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert_eq!(json_of(&run.stdout), expected, "{name}");
        let run = zarrkit(["get", &node]);
        assert_eq!(run.stdout.trim_end(), table, "{name}");
    }
    // CSV quotes what needs it; strings go to .npy as `<U<n>`.
    let run = zarrkit(["get", "-f", "csv", &s(&root.join("s"))]);
    assert_eq!(run.stdout, "a\nhéllo\n\"x,y\"\n");
    let (_, npy, _) = zarrkit_bytes(["get", "-f", "npy", &s(&root.join("s"))]);
    assert!(String::from_utf8_lossy(&npy[..64]).contains("'descr': '<U5'"));
    // Raw bytes cannot hold variable-length elements.
    let run = zarrkit(["get", "-f", "raw", &s(&root.join("s"))]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("variable-length elements"),
        "{}",
        run.stderr
    );

    // `set --value` parses each data type, with range checks.
    for (name, value, expected) in [
        ("b", "false", json!([false, false, false])),
        ("i1", "-7", json!([-7, -7, -7])),
        ("f4", "-inf", json!(["-Infinity", "-Infinity", "-Infinity"])),
        // Text rounds to the nearest float32, which prints back as typed.
        ("f4", "0.1", json!([0.1, 0.1, 0.1])),
        ("c8", "1-2j", json!([[1.0, -2.0], [1.0, -2.0], [1.0, -2.0]])),
        ("s", "\"q r\"", json!(["q r", "q r", "q r"])),
        ("u", "abc", json!(["abc", "abc", "abc"])),
        (
            "dt",
            "2000-01-01",
            json!([
                "2000-01-01T00:00:00",
                "2000-01-01T00:00:00",
                "2000-01-01T00:00:00"
            ]),
        ),
    ] {
        let node = s(&root.join(name));
        let run = zarrkit(["set", &node, "--value", value]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let run = zarrkit(["get", "--json", &node]);
        assert_eq!(json_of(&run.stdout), expected, "{name}");
    }
    for (name, value, message) in [
        ("i1", "128", "128 is out of range for `int8` (-128..=127)"),
        ("u8", "-1", "-1 is out of range for `uint64`"),
        ("f4", "1e39", "is out of range for `float32`"),
        ("b", "maybe", "`maybe` is not a boolean"),
        ("u", "abcd", "has 4 characters, more than the 3"),
        (
            "dt",
            "2000-01-01T00:00:00.5",
            "finer than the array's unit `s`",
        ),
    ] {
        let node = s(&root.join(name));
        let before = zarrkit(["get", "--json", &node]).stdout;
        let run = zarrkit(["set", &node, "--value", value]);
        assert_eq!(run.code, 1, "{name}");
        assert!(run.stderr.contains(message), "{name}: {}", run.stderr);
        assert_eq!(zarrkit(["get", "--json", &node]).stdout, before, "{name}");
    }
}

/// A `.npy` file of `descr` and `shape` holding `data` (little endian).
fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let mut header = dict.into_bytes();
    let total = (10 + header.len() + 1).div_ceil(64) * 64;
    header.resize(total - 10 - 1, b' ');
    header.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&u16::try_from(header.len()).unwrap().to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    out
}

fn le<T: Copy, const N: usize>(values: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&v| f(v)).collect()
}

#[test]
fn set_from_npy_broadcasts_converts_and_checks_ranges() {
    let (dir, root) = store();
    let x = s(&root.join("x"));
    let file = |name: &str, bytes: Vec<u8>| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        s(&path)
    };
    // int16 [2, 1] broadcast over [2, 3]: converted exactly into int32.
    let column = file(
        "column.npy",
        npy("<i2", "(2, 1)", &le(&[-1i16, -2], i16::to_le_bytes)),
    );
    let run = zarrkit(["set", "--json", &x, "0, 1:3, ::-2", "--from", &column]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = json_of(&run.stdout);
    assert_eq!(report["shape"], json!([2, 3]));
    assert_eq!(report["elements"], 6);
    assert_eq!(report["source_dtype"], "<i2");
    // NumPy: `x[0, 1:3, ::-2] = [[-1], [-2]]` sets columns 5, 3 and 1 of rows 1 and 2.
    let run = zarrkit(["get", "--json", &x, "0, :4"]);
    assert_eq!(
        json_of(&run.stdout),
        json!([
            [0, 1, 2, 3, 4, 5],
            [6, -1, 8, -1, 10, -1],
            [12, -2, 14, -2, 16, -2],
            [18, 19, 20, 21, 22, 23]
        ])
    );
    // Big-endian float64 holding whole numbers converts exactly; 2.5 needs --cast.
    let whole = file(
        "whole.npy",
        npy(">f8", "(3,)", &le(&[1.0f64, 2.0, 3.0], f64::to_be_bytes)),
    );
    assert_eq!(zarrkit(["set", &x, "3, 4, :3", "--from", &whole]).code, 0);
    assert_eq!(
        json_of(&zarrkit(["get", "--json", &x, "3, 4, :3"]).stdout),
        json!([1, 2, 3])
    );
    let half = file(
        "half.npy",
        npy("<f8", "(3,)", &le(&[1.0f64, 2.5, 3.0], f64::to_le_bytes)),
    );
    let run = zarrkit(["set", &x, "3, 4, :3", "--from", &half]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("element [1]: 2.5 is not an integer (--cast truncates it)"),
        "{}",
        run.stderr
    );
    assert_eq!(
        json_of(&zarrkit(["get", "--json", &x, "3, 4, :3"]).stdout),
        json!([1, 2, 3])
    );
    assert_eq!(
        zarrkit(["set", "--cast", &x, "3, 4, :3", "--from", &half]).code,
        0
    );
    assert_eq!(
        json_of(&zarrkit(["get", "--json", &x, "3, 4, :3"]).stdout),
        json!([1, 2, 3])
    );
    let wide = file(
        "wide.npy",
        npy("<i8", "(2,)", &le(&[5i64, 1 << 40], i64::to_le_bytes)),
    );
    let run = zarrkit(["set", "--cast", &x, "3, 4, :2", "--from", &wide]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("1099511627776 is out of range for `int32`"),
        "{}",
        run.stderr
    );
    // A shape that does not broadcast, and a selection out of bounds.
    let run = zarrkit(["set", &x, "3, 4, :2", "--from", &whole]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("a value of shape [3] cannot be broadcast to the selection's shape [2]"),
        "{}",
        run.stderr
    );
    let run = zarrkit(["set", &x, "4", "--value", "1"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("`/x`") && run.stderr.contains("out of bounds"),
        "{}",
        run.stderr
    );
    let run = zarrkit(["set", &x, "0, 0, 0"]);
    assert_eq!(run.code, 2, "--value or --from is required");
    let run = zarrkit(["set", &x, "0", "--value", "1", "--from", &whole]);
    assert_eq!(run.code, 2);
    // Strings from a `<U` file into a `string` array, from standard input.
    let store = open_store(&root);
    Array::builder(&[2], DataType::String, &[2])
        .create(store, "/names")
        .unwrap();
    let names = npy(
        "<U3",
        "(2,)",
        &le(&['a', 'b', 'c', 'Z', 0 as char, 0 as char], |c| {
            u32::from(c).to_le_bytes()
        }),
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_zarrkit"))
        .args(["set", &s(&root.join("names")), "--from", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(&names).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        json_of(&zarrkit(["get", "--json", &s(&root.join("names"))]).stdout),
        json!(["abc", "Z"])
    );
}

/// zarr-python 3.1 writes float64 [6, 5, 4] (a NaN at [0, 0, 1]) in v3
/// and a sharded int16 array, `zarrkit get --json` prints for each
/// selection what zarr-python's indexing gives, and after `zarrkit set`
/// zarr-python reads the new values.
#[test]
fn zarr_python_indexes_as_get_prints_and_reads_what_set_writes() {
    let Some(python) = python("ZARRKIT_PYTHON", "zarr 3.1 (scripts/requirements.txt)") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("py.zarr");
    const WRITE: &str = r#"
import sys, numpy as np, zarr
g = zarr.open_group(sys.argv[1], mode="w")
a = g.create_array("a", shape=(6, 5, 4), chunks=(4, 2, 3), dtype="f8", fill_value=np.nan)
v = np.arange(120, dtype="f8").reshape(6, 5, 4) / 8
v[0, 0, 1] = np.nan
a[:] = v
s = g.create_array("s", shape=(9, 7), chunks=(6, 6), shards=(6, 6), dtype="i2", fill_value=-1)
s[:] = np.arange(63, dtype="i2").reshape(9, 7)
"#;
    common::python_script(&python, WRITE, &[&root]);
    // (node, mode, selection, zarr-python's expression)
    let cases = [
        // zarr-python refuses negative steps: NumPy on what it reads.
        ("a", "", "1, :, ::-1", "a[:][1, :, ::-1]"),
        ("a", "", "..., -1", "a[..., -1]"),
        ("a", "", "::-2, 1:4:2, -3", "a[:][::-2, 1:4:2, -3]"),
        ("a", "", "0, 0", "a[0, 0]"),
        ("a", "", "[4, 0, 4], 1:3", "a[[4, 0, 4], 1:3]"),
        // NumPy's rule for advanced indices apart: their dimensions first.
        ("a", "", "[1, 2], ::2, 0", "a[:][[1, 2], ::2, 0]"),
        ("a", "", "0, ::2, [0, -1]", "a[:][0, ::2, [0, -1]]"),
        (
            "a",
            "--oindex",
            "[0, 5], :, [3, 0]",
            "a.oindex[[0, 5], :, [3, 0]]",
        ),
        (
            "a",
            "--vindex",
            "[0, 5, 2], [0, 4, 1], [1, 3, 2]",
            "a.vindex[[0, 5, 2], [0, 4, 1], [1, 3, 2]]",
        ),
        ("s", "", "-1, ::-3", "s[:][-1, ::-3]"),
        (
            "s",
            "--oindex",
            "[8, 1], [6, 0]",
            "s.oindex[[8, 1], [6, 0]]",
        ),
        (
            "s",
            "--vindex",
            "[8, 1], [6, 0]",
            "s.vindex[[8, 1], [6, 0]]",
        ),
        ("s", "--blocks", "1, 0", "s.blocks[1, 0]"),
    ];
    const READ: &str = r#"
import sys, json, math, numpy as np, zarr
g = zarr.open_group(sys.argv[1], mode="r")
a, s = g["a"], g["s"]
def conv(x):
    if isinstance(x, list):
        return [conv(i) for i in x]
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    return x
print(json.dumps([conv(np.asarray(eval(e)).tolist()) for e in sys.argv[2:]]))
"#;
    let mut args: Vec<String> = vec![s(&root)];
    args.extend(cases.iter().map(|c| c.3.to_string()));
    let expected = json_of(&common::python_script(&python, READ, &args));
    for (i, (node, mode, selection, expression)) in cases.iter().enumerate() {
        let mut argv = vec!["get", "--json"];
        if !mode.is_empty() {
            argv.push(mode);
        }
        let path = s(&root.join(node));
        argv.extend([path.as_str(), selection]);
        let run = zarrkit(&argv);
        assert_eq!(run.code, 0, "{expression}: {}", run.stderr);
        assert_eq!(json_of(&run.stdout), expected[i], "{expression}");
    }
    // zarrkit writes; zarr-python reads.
    let a = s(&root.join("a"));
    let sharded = s(&root.join("s"));
    for argv in [
        vec!["set", a.as_str(), "1, ::-2, 0", "--value", "-0.5"],
        vec![
            "set",
            "--vindex",
            a.as_str(),
            "[5, 0], [4, 0], [3, 0]",
            "--value",
            "inf",
        ],
        vec![
            "set",
            "--oindex",
            sharded.as_str(),
            "[8, 0], [6, 0]",
            "--value",
            "-300",
        ],
    ] {
        let run = zarrkit(&argv);
        assert_eq!(run.code, 0, "{argv:?}: {}", run.stderr);
    }
    let run = zarrkit(["set", sharded.as_str(), "0", "--value", "40000"]);
    assert_eq!(run.code, 1, "out of range for int16");
    const CHECK: &str = r#"
import sys, json, math, numpy as np, zarr
def conv(x):
    if isinstance(x, list):
        return [conv(i) for i in x]
    if isinstance(x, float) and math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x
g = zarr.open_group(sys.argv[1], mode="r")
a, s = g["a"][:], g["s"][:]
print(json.dumps(conv([a[1, :, 0].tolist(), float(a[5, 4, 3]), float(a[0, 0, 0]), s[[8, 8, 0, 0], [6, 0, 6, 0]].tolist(), s[0, 1:3].tolist()])))
"#;
    let read = json_of(&common::python_script(&python, CHECK, &[&root]));
    // a[1, j, 0] = 2.5 + j / 2, and j = 4, 2, 0 set to -0.5.
    assert_eq!(read[0], json!([-0.5, 3.0, -0.5, 4.0, -0.5]));
    assert_eq!(read[1], json!("Infinity"));
    assert_eq!(read[2], json!("Infinity"));
    assert_eq!(read[3], json!([-300, -300, -300, -300]));
    assert_eq!(read[4], json!([1, 2]));
}

/// zarr-python 2.18's fixture arrays (v2, F order, `<U4`, bool) print as
/// zarr-python 2.18 reads them.
#[test]
fn get_reads_zarr_python_2_fixture_as_zarr_python_2_18() {
    let Some(python) = python(
        "ZARRKIT_PYTHON_ZARR2",
        "zarr 2.18 (scripts/requirements-zarr2.txt)",
    ) else {
        return;
    };
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/zarr-python-2-fixture");
    assert!(fixture.is_dir(), "{} is missing", fixture.display());
    let cases = [
        ("19/1", "::-37, [0, 99, 50]"),
        ("15/3", "5:9"),
        ("17/6", "-4:"),
        ("16/0", "::1111"),
        ("21/2", "-1, 3, ::4"),
    ];
    const READ: &str = r#"
import sys, json, math, numpy as np, zarr
def conv(x):
    if isinstance(x, list):
        return [conv(i) for i in x]
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    return x
out = []
for path, sel in zip(sys.argv[1::2], sys.argv[2::2]):
    a = zarr.open_array(path, mode="r")
    out.append(conv(np.asarray(eval("a[:][" + sel + "]")).tolist()))
print(json.dumps(out))
"#;
    let mut args = Vec::new();
    for (path, selection) in cases {
        args.push(s(&fixture.join(path)));
        args.push(selection.to_string());
    }
    let expected = json_of(&common::python_script(&python, READ, &args));
    for (i, (path, selection)) in cases.iter().enumerate() {
        let run = zarrkit(["get", "--json", &s(&fixture.join(path)), selection]);
        assert_eq!(run.code, 0, "{path}: {}", run.stderr);
        assert_eq!(json_of(&run.stdout), expected[i], "{path}[{selection}]");
    }
}

#[test]
fn get_reads_zip_archives_and_v2_stores() {
    let (dir, root) = store();
    // A v2 copy in a zip archive, through `migrate`.
    let zip = dir.path().join("data.zip");
    let run = zarrkit(["migrate", "--to", "v2", &s(&root), &s(&zip)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = zarrkit(["get", "--json", &s(&zip.join("x")), "-1, -1, ::-2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json_of(&run.stdout), json!([119, 117, 115]));
    let run = zarrkit(["get", "--json", &s(&zip), "/big", "39, -1"]);
    assert_eq!(json_of(&run.stdout), json!(399.75));
    // A zip archive is read-only here: `set` fails, naming the store.
    let run = zarrkit(["set", &s(&zip.join("x")), "0", "--value", "1"]);
    assert_eq!(run.code, 1);
    // A v2 directory store is written through `.zarray`'s codecs.
    let v2 = dir.path().join("v2.zarr");
    assert_eq!(
        zarrkit(["migrate", "--to", "v2", &s(&root), &s(&v2)]).code,
        0
    );
    let store = open_store(&v2);
    assert_eq!(
        Array::open(Arc::clone(&store), "/x").unwrap().format(),
        ZarrFormat::V2
    );
    assert_eq!(
        zarrkit(["set", &s(&v2.join("x")), "..., 0", "--value", "-9"]).code,
        0
    );
    let x = Array::open(store, "/x").unwrap();
    assert_eq!(
        x.read_region::<i32>(&Region::new(vec![3, 4, 0], vec![1, 1, 2]))
            .unwrap(),
        [-9, 115]
    );
}

#[test]
fn errors_name_the_array_and_exit_with_one() {
    let (_dir, root) = store();
    let x = s(&root.join("x"));
    let run = zarrkit(["get", &x, "4"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("`/x`")
            && run
                .stderr
                .contains("index 4 is out of bounds for dimension 0 of length 4"),
        "{}",
        run.stderr
    );
    let run = zarrkit(["get", &x, "0, 1:2:0"]);
    assert_eq!(run.code, 1);
    let run = zarrkit(["get", &x, "0, (("]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("cannot parse the selection `0, ((`"),
        "{}",
        run.stderr
    );
    let run = zarrkit(["get", &s(&root), "/"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("`/` is a group"), "{}", run.stderr);
    let run = zarrkit(["get", &s(&root), "/nothing"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("/nothing"), "{}", run.stderr);
    // A missing array named in the path is reported, not taken for a store
    // whose node is the selection.
    let run = zarrkit(["get", &s(&root.join("nothing")), "0"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("/nothing"), "{}", run.stderr);
}

#[test]
fn get_and_set_work_on_v1_and_the_drafts() {
    for format in [
        ZarrFormat::V1,
        ZarrFormat::V3Draft2022,
        ZarrFormat::V3Draft2019Json,
        ZarrFormat::V3Draft2019,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("old");
        let store = open_store(&root);
        // v1 holds one array at the root; the drafts hold it under a group.
        let path = if format == ZarrFormat::V1 {
            "/"
        } else {
            Group::create_as(Arc::clone(&store), "/", format, Default::default()).unwrap();
            "/a"
        };
        let array = Array::builder(&[6], DataType::Int16, &[4])
            .format(format)
            .create(Arc::clone(&store), path)
            .unwrap();
        let values: Vec<i16> = (10..16).collect();
        array.write_region(&Region::whole(&[6]), &values).unwrap();
        let node = s(&root);
        let args = |extra: &[&str]| -> Vec<String> {
            let mut argv: Vec<String> = extra.iter().map(ToString::to_string).collect();
            argv.push(node.clone());
            argv.push(path.to_string());
            argv
        };
        let mut argv = args(&["get", "--json"]);
        argv.push("::-2".into());
        let run = zarrkit(&argv);
        assert_eq!(run.code, 0, "{}: {}", format.name(), run.stderr);
        assert_eq!(
            json_of(&run.stdout),
            json!([15, 13, 11]),
            "{}",
            format.name()
        );
        let mut argv = args(&["set"]);
        argv.extend(["-1:".to_string(), "--value".into(), "-32768".into()]);
        let run = zarrkit(&argv);
        assert_eq!(run.code, 0, "{}: {}", format.name(), run.stderr);
        let array = Array::open(Arc::clone(&store), path).unwrap();
        assert_eq!(array.format(), format);
        assert_eq!(
            array.read_region::<i16>(&Region::whole(&[6])).unwrap(),
            [10, 11, 12, 13, 14, -32768],
            "{}",
            format.name()
        );
    }
}

/// `npy` and `raw` are binary: on a terminal (a pseudo-terminal made by
/// util-linux's `script`) they are refused unless `--out -` asks for them.
#[test]
fn binary_formats_are_refused_on_a_terminal() {
    let (_dir, root) = store();
    let on_terminal = |args: &str| {
        let command = format!("{} {args}", env!("CARGO_BIN_EXE_zarrkit"));
        let output = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .output()
            .expect("util-linux's `script` runs (it gives the command a terminal)");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let x = s(&root.join("x"));
    let (code, printed) = on_terminal(&format!("get -f npy {x} 0,0"));
    assert_eq!(code, Some(1), "{printed}");
    assert!(
        printed.contains("refusing to write .npy bytes to a terminal"),
        "{printed}"
    );
    let (code, printed) = on_terminal(&format!("get -f raw {x} 0,0"));
    assert_eq!(code, Some(1), "{printed}");
    let (code, printed) = on_terminal(&format!("get -f raw --out - {x} 0,0,1"));
    assert_eq!(code, Some(0), "{printed}");
    // A table on a terminal is what `get` is for.
    let (code, printed) = on_terminal(&format!("get {x} 0,0"));
    assert_eq!(code, Some(0));
    assert!(printed.contains("[0 1 2 3 4 5]"), "{printed}");
}

/// Many writers through the command line (issue #17): 16 `zarrkit set`
/// processes at once, each writing one row of a 16×16 array held in one
/// shard of 4×4 inner chunks, so every inner chunk is written in part by
/// four processes and the shard by all sixteen. Every row must hold its
/// writer's value afterwards, in every trial: no update is lost.
#[test]
fn concurrent_set_processes_writing_one_shard_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for trial in 0..3 {
        let root = s(&dir.path().join(format!("t{trial}.zarr")));
        let run = zarrkit([
            "create",
            &root,
            "/a",
            "--shape",
            "16,16",
            "--dtype",
            "uint16",
            "--shards",
            "16,16",
            "--chunks",
            "4,4",
            "--fill-value",
            "0",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let writers: Vec<_> = (0..16u16)
            .map(|row| {
                std::process::Command::new(env!("CARGO_BIN_EXE_zarrkit"))
                    .args(["set", &root, "/a", &row.to_string(), "--value"])
                    .arg((row + 100).to_string())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for writer in writers {
            let out = writer.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let run = zarrkit(["get", "--json", &root, "/a"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let rows = json_of(&run.stdout);
        for row in 0..16u64 {
            let want: Vec<Value> = vec![Value::from(row + 100); 16];
            assert_eq!(
                rows[row as usize].as_array().unwrap(),
                &want,
                "trial {trial}, row {row}"
            );
        }
    }
}
