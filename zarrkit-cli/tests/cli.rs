//! End-to-end tests of the `zarrkit` binary: each runs the built binary
//! against a temporary store written through the library, and checks
//! stdout, stderr and the exit code (0 ok, 1 error, 2 usage).

mod common;

use common::{Run, codec, object, open_store, python, zarrkit, zarrkit_bytes};
use serde_json::json;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use zarrkit::metadata::{DataType, FillValue, JsonMap};
use zarrkit::store::Store;
use zarrkit::{Array, Group, Region};

/// A store with:
///
/// ```text
/// /                       {"title": "test"}
/// ├── counts [10, 7] int32 chunks [4, 4]   gzip, fill -1, rows 0..4 written
/// └── sub/                {"kind": "group"}
///     ├── empty/
///     └── flags [5] bool chunks [2]
/// ```
fn sample_store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("test.zarr");
    let store = open_store(&root);
    Group::create(Arc::clone(&store), "/", object(json!({ "title": "test" }))).unwrap();
    let counts = Array::builder(&[10, 7], DataType::Int32, &[4, 4])
        .codecs_metadata(vec![
            codec("bytes", json!({ "endian": "little" })),
            codec("gzip", json!({ "level": 5 })),
        ])
        .fill_value(-1i32)
        .dimension_names(["y", "x"])
        .attributes(object(json!({ "units": "K", "scale": [1, 2] })))
        .create(Arc::clone(&store), "/counts")
        .unwrap();
    let values: Vec<i32> = (0..28).collect();
    counts
        .write_region(&Region::new(vec![0, 0], vec![4, 7]), &values)
        .unwrap();
    Group::create(
        Arc::clone(&store),
        "/sub",
        object(json!({ "kind": "group" })),
    )
    .unwrap();
    Group::create(Arc::clone(&store), "/sub/empty", JsonMap::new()).unwrap();
    let flags = Array::builder(&[5], DataType::Bool, &[2])
        .create(Arc::clone(&store), "/sub/flags")
        .unwrap();
    flags
        .write_region(&Region::whole(&[5]), &[true, false, true, true, false])
        .unwrap();
    (dir, root)
}

/// The total size of the files under `dir`.
fn tree_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                tree_size(&entry.path())
            } else {
                meta.len()
            }
        })
        .sum()
}

#[test]
fn info_on_an_array_shows_its_metadata_and_storage() {
    let (_dir, root) = sample_store();
    let chunk_bytes = tree_size(&root.join("counts/c"));
    let expected = format!(
        "\
path:               /counts
format:             v3
node type:          array
shape:              [10, 7]
data type:          int32
chunk shape:        [4, 4]
chunk grid:         [3, 2] (6 chunks)
chunk key encoding: default (separator \"/\")
fill value:         -1
codecs:
  bytes {{\"endian\":\"little\"}}
  gzip {{\"level\":5}}
dimension names:    [\"y\", \"x\"]
stored chunks:      2 of 6, {chunk_bytes} bytes
decoded size:       280 bytes
attributes:
  {{
    \"units\": \"K\",
    \"scale\": [
      1,
      2
    ]
  }}
"
    );
    let run = zarrkit([OsStr::new("info"), root.join("counts").as_os_str()]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(run.stdout, expected);
}

#[test]
fn info_on_a_group_lists_children_and_attributes() {
    let (_dir, root) = sample_store();
    let run = zarrkit([OsStr::new("info"), root.as_os_str()]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "\
path:               /
format:             v3
node type:          group
children:
  counts  array [10, 7] int32
  sub/    group
attributes:
  {
    \"title\": \"test\"
  }
"
    );
    let run = zarrkit([OsStr::new("info"), root.join("sub/empty").as_os_str()]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stdout.starts_with("path:               /sub/empty\n"));
    assert!(run.stdout.contains("\nchildren:           (none)\n"));
    assert!(run.stdout.ends_with("\nattributes:         {}\n"));
}

#[test]
fn info_finds_the_store_root_above_a_node_path_or_takes_path_option() {
    let (_dir, root) = sample_store();
    let by_suffix = zarrkit([OsStr::new("info"), root.join("sub/flags").as_os_str()]);
    let by_option = zarrkit([
        OsStr::new("info"),
        root.as_os_str(),
        OsStr::new("--path"),
        OsStr::new("sub/flags"),
    ]);
    // `STORE/a/zarr.json` names the node `/a` too.
    let by_document = zarrkit([
        OsStr::new("info"),
        root.join("sub/flags/zarr.json").as_os_str(),
    ]);
    for run in [&by_suffix, &by_option, &by_document] {
        assert_eq!(run.code, 0, "stderr: {}", run.stderr);
        assert!(
            run.stdout.starts_with("path:               /sub/flags\n"),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains("\nshape:              [5]\n"));
        assert!(run.stdout.contains("\ndata type:          bool\n"));
        assert!(run.stdout.contains("\nfill value:         false\n"));
        // The last chunk holds one `false`, equal to the fill value, so it is not stored.
        assert!(run.stdout.contains("\nstored chunks:      2 of 3, "));
        assert!(run.stdout.contains("\ndimension names:    (none)\n"));
    }
    assert_eq!(by_suffix.stdout, by_option.stdout);
    assert_eq!(by_suffix.stdout, by_document.stdout);
}

#[test]
fn info_and_tree_show_a_rectilinear_grid() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures/v3/rectilinear.zarr/readme_example");
    let run = zarrkit([OsStr::new("info"), fixture.as_os_str()]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // The edge lengths in their compact form, then the chunks inside the
    // array (the third chunk of `[4, 4, 4]` lies past it).
    assert!(
        run.stdout.contains(
            "\nchunk shape:        rectilinear [4,[1,2,3],[[4,2]],[[1,3],3],[[4,3]]]\n\
             chunk grid:         [2, 3, 2, 4, 2] (96 chunks)\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("\nstored chunks:      95 of 96, "),
        "{}",
        run.stdout
    );
    let tree = zarrkit([OsStr::new("tree"), fixture.parent().unwrap().as_os_str()]);
    assert_eq!(tree.code, 0, "stderr: {}", tree.stderr);
    assert!(
        tree.stdout
            .contains("readme_indexing [26, 38] int32 chunks rectilinear"),
        "{}",
        tree.stdout
    );
}

#[test]
fn info_json_prints_the_stored_document() {
    let (_dir, root) = sample_store();
    for node in ["counts", "sub", "sub/flags"] {
        let run = zarrkit([
            OsStr::new("info"),
            OsStr::new("--json"),
            root.join(node).as_os_str(),
        ]);
        assert_eq!(run.code, 0, "stderr: {}", run.stderr);
        let printed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let stored: serde_json::Value =
            serde_json::from_slice(&std::fs::read(root.join(node).join("zarr.json")).unwrap())
                .unwrap();
        // The document sits beside the summary (issue #15).
        assert_eq!(printed["document"], stored, "{node}");
        // Pretty: one field per line.
        assert!(
            run.stdout.contains("\n    \"zarr_format\": 3,\n"),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn info_on_a_missing_node_names_its_path() {
    let (_dir, root) = sample_store();
    let run = zarrkit([OsStr::new("info"), root.join("missing").as_os_str()]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "error: no array or group at `/missing`\n");

    let run = zarrkit([
        OsStr::new("info"),
        root.as_os_str(),
        OsStr::new("--path"),
        OsStr::new("/sub/nothing/here"),
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: no array or group at `/sub/nothing/here`\n"
    );
}

#[test]
fn commands_on_a_nonexistent_store_fail_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.zarr");
    let shown = missing.display().to_string();
    for args in [
        vec![OsStr::new("info"), missing.as_os_str()],
        vec![OsStr::new("tree"), missing.as_os_str()],
        vec![
            OsStr::new("export"),
            missing.as_os_str(),
            OsStr::new("/a"),
            OsStr::new("--attrs"),
            dir.path().join("a.json").as_os_str(),
        ],
    ] {
        let run = zarrkit(&args);
        assert_eq!(run.code, 1, "{args:?}");
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
        assert!(run.stderr.contains(&format!("`{shown}`")), "{}", run.stderr);
        assert!(run.stderr.contains("does not exist"), "{}", run.stderr);
    }
    // Nothing was created.
    assert!(!missing.exists());
    assert!(!dir.path().join("a.json").exists());
}

#[test]
fn a_directory_without_a_hierarchy_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let run = zarrkit([OsStr::new("info"), dir.path().as_os_str()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("no Zarr hierarchy at"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("`zarr.json`"), "{}", run.stderr);
}

#[test]
fn tree_shows_the_hierarchy_sorted_by_name() {
    let (_dir, root) = sample_store();
    let run = zarrkit([OsStr::new("tree"), root.as_os_str()]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        "\
/
├── counts [10, 7] int32 chunks [4, 4]
└── sub/
    ├── empty/
    └── flags [5] bool chunks [2]

3 groups, 2 arrays
"
    );
    let run = zarrkit([OsStr::new("tree"), root.join("sub").as_os_str()]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "/sub/\n├── empty/\n└── flags [5] bool chunks [2]\n\n2 groups, 1 array\n"
    );
    let run = zarrkit([OsStr::new("tree"), root.join("counts").as_os_str()]);
    assert_eq!(run.stdout, "/counts [10, 7] int32 chunks [4, 4]\n");
}

#[test]
fn tree_marks_an_invalid_node_and_fails() {
    let (_dir, root) = sample_store();
    std::fs::create_dir(root.join("broken")).unwrap();
    std::fs::write(root.join("broken/zarr.json"), b"{ not json").unwrap();
    let run = zarrkit([OsStr::new("tree"), root.as_os_str()]);
    assert_eq!(run.code, 1);
    // The siblings are still shown.
    assert!(
        run.stdout.starts_with("/\n├── broken (invalid: "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("├── counts [10, 7] int32 chunks [4, 4]\n")
    );
    assert!(run.stdout.contains("    └── flags [5] bool chunks [2]\n"));
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(run.stderr.contains("broken/zarr.json"), "{}", run.stderr);
}

// --- export ------------------------------------------------------------------

/// A parsed `.npy` file.
struct Npy {
    descr: String,
    shape: Vec<u64>,
    data: Vec<u8>,
}

/// A small `.npy` reader: checks the magic, version, alignment and dict
/// layout, and returns the type string, shape and data bytes.
fn read_npy(path: &Path) -> Npy {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY", "magic");
    let (header_start, header_len) = match (bytes[6], bytes[7]) {
        (1, 0) => (10, usize::from(u16::from_le_bytes([bytes[8], bytes[9]]))),
        (2, 0) => (
            12,
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
        ),
        version => panic!("unexpected version {version:?}"),
    };
    let data_start = header_start + header_len;
    assert_eq!(data_start % 64, 0, "data is aligned to 64 bytes");
    let header = std::str::from_utf8(&bytes[header_start..data_start]).unwrap();
    assert!(header.ends_with('\n'));
    let header = header.trim_end();
    let rest = header
        .strip_prefix("{'descr': '")
        .unwrap_or_else(|| panic!("header {header:?}"));
    let (descr, rest) = rest.split_once('\'').unwrap();
    let rest = rest
        .strip_prefix(", 'fortran_order': False, 'shape': (")
        .unwrap_or_else(|| panic!("header {header:?}"));
    let (shape, rest) = rest.split_once(')').unwrap();
    assert_eq!(rest, ", }");
    let shape: Vec<u64> = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    Npy {
        descr: descr.to_string(),
        shape,
        data: bytes[data_start..].to_vec(),
    }
}

/// Element `k` of a test array of `data_type`, as little-endian bytes.
fn element_le(data_type: &DataType, k: u64) -> Vec<u8> {
    let k8 = k as u8;
    match data_type {
        DataType::Bool => vec![u8::from(k.is_multiple_of(3))],
        DataType::Int8 => (-(k as i8) * 3).to_le_bytes().to_vec(),
        DataType::UInt8 => (k8.wrapping_mul(7)).to_le_bytes().to_vec(),
        DataType::Int16 => (-300 * k as i16).to_le_bytes().to_vec(),
        DataType::UInt16 => (1000 * k as u16 + 1).to_le_bytes().to_vec(),
        DataType::Int32 => (-70_000 * k as i32).to_le_bytes().to_vec(),
        DataType::UInt32 => (0x0102_0304 * k as u32).to_le_bytes().to_vec(),
        DataType::Int64 => (-(1i64 << 40) * k as i64 + 5).to_le_bytes().to_vec(),
        DataType::UInt64 => ((1u64 << 50) * k + 9).to_le_bytes().to_vec(),
        // Half-precision bit patterns of small integers: 0x3c00 is 1.0; the
        // low bits make every element differ.
        DataType::Float16 => (0x3c00u16 + k as u16).to_le_bytes().to_vec(),
        DataType::Float32 => (k as f32 * 0.5 - 3.25).to_le_bytes().to_vec(),
        DataType::Float64 => (k as f64 * -1.125 + 1e10).to_le_bytes().to_vec(),
        DataType::Complex64 => {
            let mut b = (k as f32 + 0.25).to_le_bytes().to_vec();
            b.extend_from_slice(&(-(k as f32)).to_le_bytes());
            b
        }
        DataType::Complex128 => {
            let mut b = (k as f64 * 3.0).to_le_bytes().to_vec();
            b.extend_from_slice(&(k as f64 - 0.5).to_le_bytes());
            b
        }
        DataType::RawBits(bits) => (0..bits / 8)
            .map(|i| k8.wrapping_mul(11) ^ i as u8)
            .collect(),
        other => panic!("no test values for {other}"),
    }
}

fn le_to_native(bytes: &mut [u8], unit: usize) {
    if cfg!(target_endian = "big") && unit > 1 {
        for e in bytes.chunks_exact_mut(unit) {
            e.reverse();
        }
    }
}

/// Checks with NumPy that it reads `npy` as `descr`, `shape` and `data`,
/// when `ZARRKIT_PYTHON` names a Python with NumPy.
fn check_with_numpy(npy: &Path, descr: &str, shape: &[u64], data: &[u8]) -> bool {
    let Some(python) = python("ZARRKIT_PYTHON", "numpy") else {
        return false;
    };
    let script = "import numpy, sys\n\
        a = numpy.load(sys.argv[1])\n\
        b = a.astype(a.dtype.newbyteorder('<')) if a.dtype.byteorder not in '<|=' else a\n\
        print(a.dtype.str, list(a.shape), b.tobytes().hex())";
    let output = Command::new(python)
        .args([OsStr::new("-c"), OsStr::new(script), npy.as_os_str()])
        .output()
        .expect("ZARRKIT_PYTHON runs");
    assert!(
        output.status.success(),
        "numpy failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
    let shape: Vec<String> = shape.iter().map(u64::to_string).collect();
    assert_eq!(
        String::from_utf8(output.stdout).unwrap().trim_end(),
        format!("{descr} [{}] {hex}", shape.join(", ")),
        "numpy reads {}",
        npy.display()
    );
    true
}

fn note_numpy_skipped(checked: bool) {
    if !checked {
        eprintln!("skipping the NumPy check: set ZARRKIT_PYTHON to a Python with numpy to run it");
    }
}

#[test]
fn export_writes_every_data_type_as_npy() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("types.zarr");
    let store = open_store(&root);
    Group::create(Arc::clone(&store), "/", JsonMap::new()).unwrap();
    let cases = [
        (DataType::Bool, "|b1"),
        (DataType::Int8, "|i1"),
        (DataType::Int16, "<i2"),
        (DataType::Int32, "<i4"),
        (DataType::Int64, "<i8"),
        (DataType::UInt8, "|u1"),
        (DataType::UInt16, "<u2"),
        (DataType::UInt32, "<u4"),
        (DataType::UInt64, "<u8"),
        (DataType::Float16, "<f2"),
        (DataType::Float32, "<f4"),
        (DataType::Float64, "<f8"),
        (DataType::Complex64, "<c8"),
        (DataType::Complex128, "<c16"),
        (DataType::RawBits(8), "|V1"),
        (DataType::RawBits(24), "|V3"),
    ];
    let shape = [5u64, 3];
    let mut numpy_checked = false;
    for (data_type, descr) in cases.clone() {
        let name = data_type.name();
        // Chunks of 2 x 2 leave partial chunks at both edges.
        let array = Array::builder(&shape, data_type.clone(), &[2, 2])
            .create(Arc::clone(&store), &format!("/{name}"))
            .unwrap();
        let expected: Vec<u8> = (0..15).flat_map(|k| element_le(&data_type, k)).collect();
        let mut native = expected.clone();
        le_to_native(&mut native, data_type.endian_unit());
        array
            .write_region_bytes(&Region::whole(&shape), &native)
            .unwrap();

        let out = dir.path().join(format!("{name}.npy"));
        let run = zarrkit([
            OsStr::new("export"),
            root.as_os_str(),
            OsStr::new(&name),
            OsStr::new("--out"),
            out.as_os_str(),
        ]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert_eq!(run.stderr, "");
        assert!(
            run.stdout.starts_with(&format!(
                "wrote `{}`: /{name}, shape [5, 3], {name}, ",
                out.display()
            )),
            "{}",
            run.stdout
        );
        let npy = read_npy(&out);
        assert_eq!(npy.descr, descr, "{name}");
        assert_eq!(npy.shape, shape, "{name}");
        assert_eq!(
            npy.data, expected,
            "{name}: every value, little endian, C order"
        );
        numpy_checked |= check_with_numpy(&out, descr, &shape, &expected);
    }
    note_numpy_skipped(numpy_checked);
    // Only the exported files and the store: no temporary files are left.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), cases.len() + 1, "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.ends_with(".npy") || n == "types.zarr"),
        "{names:?}"
    );
}

#[test]
fn export_fills_unwritten_chunks_and_handles_0d_and_1d_shapes() {
    let (dir, root) = sample_store();
    // Rows 4..10 of `counts` were never written: they read as the fill value -1.
    let out = dir.path().join("counts.npy");
    let run = zarrkit([
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new("/counts"),
        OsStr::new("-o"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let npy = read_npy(&out);
    assert_eq!(
        (npy.descr.as_str(), npy.shape.as_slice()),
        ("<i4", &[10u64, 7][..])
    );
    let values: Vec<i32> = npy
        .data
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let expected: Vec<i32> = (0..70).map(|k| if k < 28 { k } else { -1 }).collect();
    assert_eq!(values, expected);

    let store = open_store(&root);
    let scalar = Array::builder(&[], DataType::Float64, &[])
        .fill_value_bytes(FillValue::new(2.5f64.to_ne_bytes().to_vec()))
        .create(Arc::clone(&store), "/scalar")
        .unwrap();
    let out = dir.path().join("scalar.npy");
    let run = zarrkit([
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new("scalar"),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let npy = read_npy(&out);
    assert_eq!(npy.descr, "<f8");
    assert!(npy.shape.is_empty());
    assert_eq!(npy.data, 2.5f64.to_le_bytes());
    let header = std::fs::read(&out).unwrap();
    assert!(String::from_utf8_lossy(&header).contains("'shape': (), }"));
    drop(scalar);

    let out = dir.path().join("flags.npy");
    let run = zarrkit([
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new("/sub/flags"),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let npy = read_npy(&out);
    assert_eq!(npy.descr, "|b1");
    assert_eq!(npy.shape, [5]);
    assert_eq!(npy.data, [1, 0, 1, 1, 0]);
    assert!(String::from_utf8_lossy(&std::fs::read(&out).unwrap()).contains("'shape': (5,), }"));
    let checked = check_with_numpy(&out, "|b1", &[5], &[1, 0, 1, 1, 0]);
    note_numpy_skipped(checked);
}

#[test]
fn export_writes_attributes_as_pretty_json() {
    let (dir, root) = sample_store();
    let group_attrs = dir.path().join("sub.json");
    let run = zarrkit([
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new("/sub"),
        OsStr::new("--attrs"),
        group_attrs.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!("wrote `{}`: attributes of /sub\n", group_attrs.display())
    );
    assert_eq!(
        std::fs::read_to_string(&group_attrs).unwrap(),
        "{\n  \"kind\": \"group\"\n}\n"
    );

    let array_attrs = dir.path().join("counts.json");
    let npy = dir.path().join("counts.npy");
    let run = zarrkit([
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new("counts"),
        OsStr::new("--attrs"),
        array_attrs.as_os_str(),
        OsStr::new("--out"),
        npy.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let attrs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&array_attrs).unwrap()).unwrap();
    assert_eq!(attrs, json!({ "units": "K", "scale": [1, 2] }));
    assert_eq!(read_npy(&npy).shape, [10, 7]);
}

#[test]
fn export_of_a_group_with_out_fails_naming_the_group() {
    let (dir, root) = sample_store();
    let out = dir.path().join("sub.npy");
    let attrs = dir.path().join("sub.json");
    let run = zarrkit([
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new("/sub"),
        OsStr::new("--out"),
        out.as_os_str(),
        OsStr::new("--attrs"),
        attrs.as_os_str(),
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with("error: `/sub` is a group"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--attrs"), "{}", run.stderr);
    // Nothing is written when the request cannot be carried out in full.
    assert!(!out.exists() && !attrs.exists());
}

#[test]
fn export_of_a_missing_node_fails_naming_it() {
    let (dir, root) = sample_store();
    let out = dir.path().join("x.npy");
    let run = zarrkit([
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new("/sub/missing"),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, "error: no array or group at `/sub/missing`\n");
    assert!(!out.exists());
}

#[test]
fn usage_errors_exit_with_2() {
    let (_dir, root) = sample_store();
    for args in [
        // Neither --out nor --attrs.
        vec![
            OsStr::new("export"),
            root.as_os_str(),
            OsStr::new("/counts"),
        ],
        vec![OsStr::new("export"), root.as_os_str()],
        vec![OsStr::new("info")],
        vec![OsStr::new("info"), root.as_os_str(), OsStr::new("--bogus")],
        vec![OsStr::new("frobnicate")],
        vec![],
    ] {
        let run = zarrkit(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "");
        assert!(run.stderr.contains("Usage:"), "{}", run.stderr);
    }
    let run = zarrkit([
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new("/counts"),
    ]);
    assert!(run.stderr.contains("--out"), "{}", run.stderr);
    assert!(run.stderr.contains("--attrs"), "{}", run.stderr);
    // No threads at all, and not a number.
    for threads in ["--threads=0", "--threads=two"] {
        let run = zarrkit([OsStr::new(threads), OsStr::new("info"), root.as_os_str()]);
        assert_eq!(run.code, 2, "{threads}: {}", run.stderr);
        assert!(run.stderr.contains("invalid value"), "{}", run.stderr);
        assert!(run.stderr.contains("--threads <N>"), "{}", run.stderr);
    }
}

#[test]
fn global_threads_and_quiet_apply_to_every_command() {
    let (_dir, root) = sample_store();
    let plain = zarrkit([OsStr::new("tree"), root.as_os_str()]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    // Before or after the subcommand, the output is the same.
    for args in [
        vec![
            OsStr::new("--threads"),
            OsStr::new("1"),
            OsStr::new("-q"),
            OsStr::new("tree"),
            root.as_os_str(),
        ],
        vec![
            OsStr::new("tree"),
            root.as_os_str(),
            OsStr::new("--quiet"),
            OsStr::new("--threads=3"),
        ],
    ] {
        let run = zarrkit(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, plain.stdout);
        assert_eq!(run.stderr, "");
    }
}

#[test]
fn invalid_node_paths_are_errors_naming_the_path() {
    let (dir, root) = sample_store();
    let run = zarrkit([
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new("/a/../b"),
        OsStr::new("--attrs"),
        dir.path().join("x.json").as_os_str(),
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("error: invalid node path `/a/../b`"),
        "{}",
        run.stderr
    );
}

#[test]
fn help_documents_every_command_with_examples() {
    let run = zarrkit(["--help"]);
    assert_eq!(run.code, 0);
    for command in ["info", "tree", "export"] {
        assert!(run.stdout.contains(command), "{}", run.stdout);
        let run = zarrkit([command, "--help"]);
        assert_eq!(run.code, 0);
        assert!(
            run.stdout.contains("Examples:"),
            "{command}: {}",
            run.stdout
        );
        assert!(
            run.stdout
                .contains(&format!("zarrkit {command} testdata/sample.zarr"))
        );
    }
    let run = zarrkit(["info", "--help"]);
    assert!(run.stdout.contains("topmost"), "{}", run.stdout);
    assert!(run.stdout.contains("--path"));
    assert!(run.stdout.contains("--json"));
}

#[test]
fn the_shipped_sample_store_opens() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/sample.zarr");
    let run = zarrkit([OsStr::new("tree"), sample.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "\
/
├── labels [36, 72] uint8 chunks [18, 36]
└── weather/
    ├── elevation [36, 72] int16 chunks [18, 36]
    └── temperature [24, 36, 72] float32 chunks [6, 12, 24]

2 groups, 3 arrays
"
    );
    let run = zarrkit([
        OsStr::new("info"),
        sample.join("weather/temperature").as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for expected in [
        "\nfill value:         \"NaN\"\n",
        "\ncodecs:\n  bytes {\"endian\":\"little\"}\n  zstd {\"level\":9,\"checksum\":false}\n",
        "\ndimension names:    [\"time\", \"lat\", \"lon\"]\n",
        "\nstored chunks:      36 of 36, ",
        "\ndecoded size:       248832 bytes (243.0 KiB)\n",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected:?} in\n{}",
            run.stdout
        );
    }
}

#[test]
fn info_and_tree_show_v2_arrays_with_their_dtype_and_compressor() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("v2.zarr");
    let store = open_store(&root);
    Group::create_as(
        store.clone(),
        "/",
        zarrkit::format::ZarrFormat::V2,
        object(json!({"title": "v2"})),
    )
    .unwrap();
    Array::builder(&[6], DataType::Float64, &[4])
        .format(zarrkit::format::ZarrFormat::V2)
        .codecs_metadata(vec![
            codec("bytes", json!({"endian": "big"})),
            codec("numcodecs.zlib", json!({"level": 1})),
        ])
        .create(store, "/g/temps")
        .unwrap();
    let run = zarrkit([OsStr::new("info"), root.join("g/temps").as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("format:             v2\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("v2 dtype:           \">f8\"\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("v2 compressor:      {\"id\":\"zlib\",\"level\":1}\n"),
        "{}",
        run.stdout
    );
    let run = zarrkit([
        OsStr::new("info"),
        OsStr::new("--json"),
        root.join("g/temps/.zarray").as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let printed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let document = &printed["document"];
    assert_eq!(document[".zarray"]["dtype"], ">f8");
    assert_eq!(document[".zattrs"], json!({}));
    let run = zarrkit([OsStr::new("tree"), root.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("g/"), "{}", run.stdout);
    assert!(run.stdout.contains("temps [6] float64"), "{}", run.stdout);
}

#[test]
fn info_finds_and_shows_the_format_of_v3_draft_stores() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures");
    let run = zarrkit([
        OsStr::new("info"),
        fixtures
            .join("v3-draft-2019-json/zarr-python-2.18.zarr")
            .as_os_str(),
        OsStr::new("--path"),
        OsStr::new("/int16_gzip"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("format:             v3-draft-2019-json\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("keys such as `data/root/int16_gzip/c0/0`"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("stored chunks:      9 of 9"),
        "{}",
        run.stdout
    );
    let run = zarrkit([
        OsStr::new("info"),
        fixtures.join("v3-draft-2022/spec-text.zarr").as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("format:             v3-draft-2022\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("implicit/"), "{}", run.stdout);
    let run = zarrkit([
        OsStr::new("info"),
        OsStr::new("--json"),
        fixtures.join("v3-draft-2019/spec-text.zarr").as_os_str(),
        OsStr::new("--path"),
        OsStr::new("/a/int32_big_gzip"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let printed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let document = &printed["document"];
    assert_eq!(document["data_type"], json!(">i4"));
    assert_eq!(document["compressor"]["configuration"], json!({"level": 1}));
}

#[test]
fn info_and_tree_show_a_v1_array_with_its_meta_fields() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("v1.zarr");
    let store = open_store(&root);
    let array = Array::builder(&[6, 4], DataType::UInt16, &[4, 4])
        .format(zarrkit::format::ZarrFormat::V1)
        .codecs_metadata(vec![
            codec("transpose", json!({"order": [1, 0]})),
            codec("bytes", json!({"endian": "big"})),
            codec("numcodecs.bz2", json!({"level": 9})),
        ])
        .attributes(object(json!({"title": "v1"})))
        .create(store, "/")
        .unwrap();
    array
        .write_region(&Region::new(vec![0, 0], vec![4, 4]), &[3u16; 16])
        .unwrap();
    let run = zarrkit([OsStr::new("info"), root.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for expected in [
        "format:             v1\n",
        "v1 dtype:           \">u2\"\n",
        "v1 order:           \"F\"\n",
        "v1 compression:     \"bz2\", compression_opts 9\n",
        "chunk key encoding: v2 (separator \".\")\n",
        "stored chunks:      1 of 2, ",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected:?} in\n{}",
            run.stdout
        );
    }
    // `STORE/meta` names the store too.
    let run = zarrkit([
        OsStr::new("info"),
        OsStr::new("--json"),
        root.join("meta").as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let printed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let document = &printed["document"];
    assert_eq!(document["meta"]["zarr_format"], 1);
    assert_eq!(document["meta"]["compression"], "bz2");
    assert_eq!(document["attrs"], json!({"title": "v1"}));
    let run = zarrkit([OsStr::new("tree"), root.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("/ [6, 4] uint16"), "{}", run.stdout);
}

/// Writes a v2 `.zarray` (through zarrkit's v2 reader and writer) at `path`.
fn create_v2(
    store: &Arc<dyn Store>,
    path: &str,
    shape: &[u64],
    dtype: serde_json::Value,
    filters: serde_json::Value,
) -> Array {
    let chunks = vec![2u64; shape.len()];
    let doc = json!({"zarr_format": 2, "shape": shape, "chunks": chunks,
        "dtype": dtype, "compressor": {"id": "zlib", "level": 1}, "fill_value": null,
        "order": "F", "filters": filters, "dimension_separator": "/"});
    let metadata = zarrkit::format::v2::parse_array(doc.to_string().as_bytes(), None).unwrap();
    zarrkit::format::write_node(
        store.as_ref(),
        &zarrkit::NodePath::new(path).unwrap(),
        zarrkit::format::ZarrFormat::V2,
        &zarrkit::metadata::NodeMetadata::Array(metadata),
    )
    .unwrap();
    Array::open(store.clone(), path).unwrap()
}

/// What NumPy (`ZARRKIT_PYTHON`) loads from `npy`, without pickle: the
/// dtype's descr and field offsets, the shape, the little-endian bytes and,
/// for strings, the elements.
fn numpy_load(npy: &Path) -> Option<serde_json::Value> {
    let python = python("ZARRKIT_PYTHON", "numpy")?;
    let script = "import json, numpy, sys\n\
        a = numpy.load(sys.argv[1], allow_pickle=False)\n\
        d = a.dtype\n\
        out = {'descr': d.descr, 'shape': list(a.shape),\n\
               'offsets': [d.fields[n][1] for n in d.names] if d.names else None,\n\
               'hex': a.astype(d.newbyteorder('<')).tobytes().hex()}\n\
        if d.kind in 'US': out['values'] = [x if isinstance(x, str) else x.decode('latin1') for x in a.reshape(-1).tolist()]\n\
        print(json.dumps(out))";
    let output = Command::new(python)
        .args([OsStr::new("-c"), OsStr::new(script), npy.as_os_str()])
        .output()
        .expect("ZARRKIT_PYTHON runs");
    assert!(
        output.status.success(),
        "numpy failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).unwrap())
}

fn export_to(root: &Path, node: &str, dest: &Path) {
    let run = zarrkit([
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new(node),
        OsStr::new("--out"),
        dest.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{node}: {}", run.stderr);
}

#[test]
fn export_writes_v2_strings_and_structs_as_npy_that_numpy_loads_without_pickle() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("strings.zarr");
    let store = open_store(&root);
    let whole = Region::whole(&[2, 3]);

    let utf8 = create_v2(
        &store,
        "/utf8",
        &[2, 3],
        json!("|O"),
        json!([{"id": "vlen-utf8"}]),
    );
    let texts = ["", "h\u{e9}llo\u{1f600}", "a", "ab'c", "\u{4e2d}", "xyz"];
    utf8.write_strings(&whole, &texts).unwrap();
    let bytes = create_v2(
        &store,
        "/bytes",
        &[2, 3],
        json!("|O"),
        json!([{"id": "vlen-bytes"}]),
    );
    let blobs: [&[u8]; 6] = [b"", b"ab\0c", b"\xff", b"q", b"zz", b"\x01\x02"];
    bytes.write_byte_strings(&whole, &blobs).unwrap();
    let fixed_u = create_v2(&store, "/u", &[2, 3], json!(">U3"), json!(null));
    fixed_u
        .write_strings(&whole, &["", "\u{e9}", "abc", "d", "\u{1f600}x", "zz"])
        .unwrap();
    let fixed_s = create_v2(&store, "/s", &[2, 3], json!("|S3"), json!(null));
    fixed_s
        .write_byte_strings(&whole, &[&b""[..], b"a", b"abc", b"\x01", b"xy", b"q"])
        .unwrap();
    let dtype = json!([
        ["a", "<i4"],
        ["b", ">f8"],
        ["d", "<i2", [2]],
        ["e", [["x", "|u1"], ["y", ">u2"]]]
    ]);
    let records = create_v2(&store, "/records", &[2, 3], dtype, json!(null));
    let size = records.data_type().size();
    assert_eq!(size, 4 + 8 + 4 + 3);
    let record_bytes: Vec<u8> = (0..6 * size).map(|i| (i * 7 + 3) as u8).collect();
    records.write_region_bytes(&whole, &record_bytes).unwrap();

    let times = create_v2(&store, "/times", &[2, 3], json!(">M8[10s]"), json!(null));
    let counts: Vec<i64> = vec![0, 1, -1, i64::MIN, 1_700_000_000, 42];
    times.write_region(&whole, &counts).unwrap();
    let npy = dir.path().join("times.npy");
    export_to(&root, "/times", &npy);
    if let Some(loaded) = numpy_load(&npy) {
        assert_eq!(loaded["descr"], json!([["", "<M8[10s]"]]));
        let hex: String = counts
            .iter()
            .flat_map(|c| c.to_le_bytes())
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(loaded["hex"], hex);
    }

    let mut checked = false;
    for (node, descr, values) in [
        (
            "/utf8",
            json!([["", "<U6"]]),
            Some(texts.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
        ),
        (
            "/bytes",
            json!([["", "|S4"]]),
            Some(
                blobs
                    .iter()
                    .map(|b| b.iter().map(|&c| char::from(c)).collect())
                    .collect(),
            ),
        ),
        (
            "/u",
            json!([["", "<U3"]]),
            Some(
                ["", "\u{e9}", "abc", "d", "\u{1f600}x", "zz"]
                    .map(String::from)
                    .to_vec(),
            ),
        ),
        (
            "/s",
            json!([["", "|S3"]]),
            Some(
                ["", "a", "abc", "\u{1}", "xy", "q"]
                    .map(String::from)
                    .to_vec(),
            ),
        ),
        (
            "/records",
            json!([
                ["a", "<i4"],
                ["b", "<f8"],
                ["d", "<i2", [2]],
                ["e", [["x", "|u1"], ["y", "<u2"]]]
            ]),
            None,
        ),
    ] {
        let npy = dir.path().join(format!("{}.npy", &node[1..]));
        export_to(&root, node, &npy);
        let Some(loaded) = numpy_load(&npy) else {
            continue;
        };
        checked = true;
        assert_eq!(loaded["descr"], descr, "{node}");
        assert_eq!(loaded["shape"], json!([2, 3]), "{node}");
        match values {
            // NumPy drops trailing zero bytes of `S` elements; b"ab\0c" keeps its inner zero.
            Some(values) => assert_eq!(loaded["values"], json!(values), "{node}"),
            None => {
                assert_eq!(loaded["offsets"], json!([0, 4, 12, 16]));
                let mut le = record_bytes.clone();
                if cfg!(target_endian = "big") {
                    for record in le.chunks_exact_mut(size) {
                        for (offset, unit) in records.data_type().endian_units() {
                            record[offset..offset + unit].reverse();
                        }
                    }
                }
                let hex: String = le.iter().map(|b| format!("{b:02x}")).collect();
                assert_eq!(loaded["hex"], hex, "{node}");
            }
        }
    }
    note_numpy_skipped(checked);
}

#[test]
fn info_and_tree_show_v2_string_struct_and_object_dtypes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("v2s.zarr");
    let store = open_store(&root);
    Group::create_as(
        store.clone(),
        "/",
        zarrkit::format::ZarrFormat::V2,
        JsonMap::new(),
    )
    .unwrap();
    create_v2(
        &store,
        "/names",
        &[4],
        json!("|O"),
        json!([{"id": "vlen-utf8"}, {"id": "crc32"}]),
    );
    create_v2(
        &store,
        "/rec",
        &[4],
        json!([["a", ">i4"], ["s", "|S2"]]),
        json!(null),
    );
    let run = zarrkit([OsStr::new("info"), root.join("names").as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("data type:          string\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("v2 dtype:           \"|O\"\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("v2 filters:         [{\"id\":\"vlen-utf8\"},{\"id\":\"crc32\"}]\n"),
        "{}",
        run.stdout
    );
    let run = zarrkit([OsStr::new("info"), root.join("rec").as_os_str()]);
    assert!(
        run.stdout
            .contains("v2 dtype:           [[\"a\",\">i4\"],[\"s\",\"|S2\"]]\n"),
        "{}",
        run.stdout
    );
    let run = zarrkit([OsStr::new("tree"), root.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "names [4] string chunks [2] (v2 dtype \"|O\", filters vlen-utf8,crc32, compressor zlib)"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "(v2 dtype [[\"a\",\">i4\"],[\"s\",\"|S2\"]], filters none, compressor zlib)"
        ),
        "{}",
        run.stdout
    );
}

/// Runs the binary with its address space limited to `limit_mib` MiB
/// (`ulimit -v` in a shell), so that an allocation sized from a document
/// that a regression lets through fails in that process (an abort, seen
/// here as exit code 128 + SIGABRT) rather than exhausting the machine.
#[cfg(unix)]
fn zarrkit_limited<I, S>(limit_mib: u64, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    use std::os::unix::process::ExitStatusExt;
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {} && exec \"$0\" \"$@\"",
            limit_mib * 1024
        ))
        .arg(env!("CARGO_BIN_EXE_zarrkit"))
        .args(args)
        .output()
        .expect("sh runs the zarrkit binary");
    Run {
        code: output
            .status
            .code()
            .or_else(|| output.status.signal().map(|s| 128 + s))
            .expect("zarrkit exits with a code or a signal"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The arguments of `export ROOT NODE -o OUT`, then `extra`.
fn export_args<'a>(
    root: &'a Path,
    node: &'a str,
    out: &'a Path,
    extra: &[&'a str],
) -> Vec<&'a OsStr> {
    let mut args = vec![
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new(node),
        OsStr::new("-o"),
        out.as_os_str(),
    ];
    args.extend(extra.iter().map(|arg| OsStr::new(*arg)));
    args
}

/// Writes `files` (path relative to `root`, contents) under `root`.
fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (path, contents) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

fn v3_uint8_document(shape: &str, chunk_shape: &str, codecs: &str) -> String {
    format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":{shape},"data_type":"uint8",
        "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":{chunk_shape}}}}},
        "chunk_key_encoding":{{"name":"default"}},"fill_value":0,"codecs":{codecs}}}"#
    )
}

// Issue #10: `export` built the list of every slab before reading any, and
// a slab was a whole row of chunks, so a `shape` edited to 10^15 (v3), to
// 2^63 (v1 `meta`) or a row of 10^12 one-byte chunks made it allocate
// until the process aborted ("memory allocation of N bytes failed"),
// leaving its empty temporary file behind. Export now refuses a file over
// 64 GiB without --force, saying how large it would be, and streams its
// slabs one at a time.
#[cfg(unix)]
#[test]
fn issue_10_export_of_a_declared_petabyte_is_refused_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = r#"[{"name":"bytes"}]"#;
    let cases = [
        (
            "v3",
            vec![(
                "zarr.json",
                v3_uint8_document("[1000000000000000]", "[1]", bytes),
            )],
            "1000000000000000 bytes (909.5 TiB)",
        ),
        (
            "v3-rows",
            vec![(
                "zarr.json",
                v3_uint8_document("[1000, 1000000000000]", "[1, 1]", bytes),
            )],
            "1000000000000000 bytes (909.5 TiB)",
        ),
        (
            "v1",
            vec![
                (
                    "meta",
                    r#"{"chunks":[1],"compression":"none","compression_opts":null,"dtype":"|u1",
                    "fill_value":0,"order":"C","shape":[9223372036854775808],"zarr_format":1}"#
                        .to_string(),
                ),
                ("attrs", "{}".to_string()),
            ],
            "9223372036854775808 bytes (8.0 EiB)",
        ),
    ];
    for (name, files, size) in cases {
        let root = dir.path().join(name);
        let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
        write_files(&root, &files);
        let out = dir.path().join(format!("{name}.npy"));
        let run = zarrkit_limited(1024, export_args(&root, "/", &out, &[]));
        assert_eq!(run.code, 1, "{name}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("would export {size}")),
            "{name}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("64.0 GiB"), "{name}: {}", run.stderr);
        assert!(run.stderr.contains("--force"), "{name}: {}", run.stderr);
    }
    // No `.npy`, and no temporary file left behind.
    assert_eq!(names_in(dir.path()), ["v1", "v3", "v3-rows"]);
}

// Issue #10: the shard decoder allocated the whole declared shard before it
// read the index, so a 10-byte shard under an edited chunk shape of 10^11
// aborted `export --force`; so did the 2 GiB slab of a draft array with
// `chunks_per_shard` 2^31 under a memory limit. Now the index is checked
// first, slabs within the memory budget read only what they need, and a
// buffer the allocator refuses is an error naming the array.
#[cfg(unix)]
#[test]
fn issue_10_export_of_a_declared_huge_shard_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let sharded = v3_uint8_document(
        "[100000000000]",
        "[100000000000]",
        r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[10],
        "codecs":[{"name":"bytes"}],
        "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}}]"#,
    );
    let v3 = dir.path().join("v3");
    write_files(&v3, &[("zarr.json", &sharded), ("c/0", "0123456789")]);
    let out = dir.path().join("v3.npy");
    let run = zarrkit_limited(1024, export_args(&v3, "/", &out, &["--force"]));
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("cannot decode chunk `c/0`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("the shard index has 10 bytes, expected 160000000000"),
        "{}",
        run.stderr
    );

    // The v3 draft (zarr-python 2.x "meta/root" layout) with a
    // `chunks_per_shard` of 2^31: the shard is 2 GiB of one-byte chunks.
    let draft = dir.path().join("draft");
    write_files(
        &draft,
        &[
            (
                "zarr.json",
                r#"{"extensions":[],"metadata_encoding":"https://purl.org/zarr/spec/protocol/core/3.0",
                "metadata_key_suffix":".json","zarr_format":"https://purl.org/zarr/spec/protocol/core/3.0"}"#,
            ),
            (
                "meta/root/x.array.json",
                r#"{"attributes":{},"chunk_grid":{"chunk_shape":[1],"separator":"/","type":"regular"},
                "chunk_memory_layout":"C","compressor":null,"data_type":"|u1","extensions":[],
                "fill_value":0,"shape":[4294967296],"storage_transformers":[{"configuration":
                {"chunks_per_shard":[2147483648]},"extension":
                "https://purl.org/zarr/spec/storage_transformers/sharding/1.0","type":"indexed"}]}"#,
            ),
            ("data/root/x/c0", "0123456789"),
        ],
    );
    let out = dir.path().join("draft.npy");
    let export = |extra: &[&str]| zarrkit_limited(1024, export_args(&draft, "/x", &out, extra));
    // Within the default budget a slab is the whole 2 GiB shard, which this
    // process's 1 GiB of address space cannot hold: a clean error.
    let run = export(&[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("cannot allocate 2147483648 bytes for the region's bytes of array `/x`"),
        "{}",
        run.stderr
    );
    // Under a smaller budget, slabs cut through the shard and read its
    // index, which the 10 stored bytes cannot hold.
    let run = export(&["--memory-budget", "256MiB"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("`data/root/x/c0`"), "{}", run.stderr);
    assert_eq!(names_in(dir.path()), ["draft", "v3"]);
}

#[test]
fn export_under_a_small_memory_budget_writes_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store.zarr");
    let store = open_store(&root);
    // Rows of chunks of 16 x 1000 x 4 = 64000 bytes: more than half of a
    // 64 KiB budget, so slabs of 8 rows cut through every chunk.
    let array = Array::builder(&[64, 1000], DataType::Int32, &[16, 100])
        .fill_value(-5i32)
        .create(Arc::clone(&store), "/a")
        .unwrap();
    let values: Vec<i32> = (0..40 * 1000).collect();
    array
        .write_region(&Region::new(vec![0, 0], vec![40, 1000]), &values)
        .unwrap();
    let whole = dir.path().join("whole.npy");
    export_to(&root, "/a", &whole);
    let cut = dir.path().join("cut.npy");
    let run = zarrkit(export_args(
        &root,
        "/a",
        &cut,
        &["--memory-budget", "64KiB"],
    ));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (whole_npy, cut_npy) = (read_npy(&whole), read_npy(&cut));
    assert_eq!(cut_npy.shape, [64, 1000]);
    assert_eq!(cut_npy.data, whole_npy.data);
    let data = &cut_npy.data;
    let last = i32::from_le_bytes(data[data.len() - 4..].try_into().unwrap());
    assert_eq!(last, -5);
    let at = |row: usize, col: usize| {
        let i = (row * 1000 + col) * 4;
        i32::from_le_bytes(data[i..i + 4].try_into().unwrap())
    };
    assert_eq!(at(39, 999), 39_999);
    assert_eq!(at(9, 123), 9123);

    let run = zarrkit(export_args(&root, "/a", &cut, &["--memory-budget", "lots"]));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("`lots`"), "{}", run.stderr);
}

/// Runs the binary, killing it (and failing) if it runs longer than
/// `seconds`: what used to never end must now end.
fn zarrkit_within<I, S>(seconds: u64, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_zarrkit"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the zarrkit binary runs");
    // Drain the pipes meanwhile, so a long output cannot block the child.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = Vec::new();
        stdout.read_to_end(&mut text).map(|_| text)
    });
    let err = std::thread::spawn(move || {
        let mut text = Vec::new();
        stderr.read_to_end(&mut text).map(|_| text)
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("zarrkit did not finish within {seconds} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Run {
        code: status.code().expect("zarrkit exits with a code"),
        stdout: String::from_utf8_lossy(&out.join().unwrap().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err.join().unwrap().unwrap()).into_owned(),
    }
}

/// Copies the directory `from` to `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

// Issue #10: the v3 drafts make every directory an implicit group, and the
// filesystem store listed a directory link as a prefix whatever it led
// to, so `tree` descended `meta/root/l1 -> ../root` forever and walked
// the whole filesystem through `meta/root/evil -> /`; in v3 a link to
// itself failed the command with "Too many levels of symbolic links".
// Listings now skip such links, and the CLI warns about each one.
#[cfg(unix)]
#[test]
fn issue_10_tree_skips_symlink_loops_and_warns() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let draft = dir.path().join("draft.zarr");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures/v3-draft-2019-json/zarr-python-2.18-ext.zarr");
    copy_dir(&fixture, &draft);
    // Without its consolidated group, `tree` lists every directory.
    std::fs::remove_dir_all(draft.join("meta/root/consolidated")).unwrap();
    std::fs::remove_file(draft.join("meta/root/consolidated.group.json")).unwrap();
    let before = zarrkit_within(60, [OsStr::new("tree"), draft.as_os_str()]);
    assert_eq!(before.code, 0, "{}", before.stderr);
    assert!(before.stdout.contains(" arrays\n"), "{}", before.stdout);
    symlink("../root", draft.join("meta/root/l1")).unwrap();
    symlink("/", draft.join("meta/root/evil")).unwrap();
    let run = zarrkit_within(60, [OsStr::new("tree"), draft.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The same tree as without the links.
    assert_eq!(run.stdout, before.stdout);
    assert!(
        run.stderr.contains(&format!(
            "warning: store `{}`: skipped symbolic link `meta/root/l1`: a link to `",
            draft.display()
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("skipped symbolic link `meta/root/evil`: a link to `/`"),
        "{}",
        run.stderr
    );

    let (_dir, root) = sample_store();
    symlink("me", root.join("me")).unwrap();
    symlink("..", root.join("sub/up")).unwrap();
    let run = zarrkit_within(60, [OsStr::new("tree"), root.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("3 groups, 2 arrays"), "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "skipped symbolic link `me`: a link that cannot be resolved: Too many levels of symbolic links"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("skipped symbolic link `sub/up`"),
        "{}",
        run.stderr
    );

    // The same in v2, where the link to itself failed the root's listing.
    let v2 = dir.path().join("v2.zarr");
    write_files(
        &v2,
        &[
            (".zgroup", r#"{"zarr_format":2}"#),
            ("g/.zgroup", r#"{"zarr_format":2}"#),
        ],
    );
    symlink("me", v2.join("me")).unwrap();
    symlink("..", v2.join("g/up")).unwrap();
    let run = zarrkit_within(60, [OsStr::new("tree"), v2.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "/\n└── g/\n\n2 groups, 0 arrays\n");
    assert!(
        run.stderr.contains("skipped symbolic link `me`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("skipped symbolic link `g/up`"),
        "{}",
        run.stderr
    );
}

// Issue #10: a chunk that is a symbolic link to a file outside the store
// (`/etc/passwd`) was read and exported like any other. Links out of the
// root are now followed only with --follow-links-outside-root; otherwise
// the key is refused by name.
#[cfg(unix)]
#[test]
fn issue_10_export_refuses_a_chunk_linked_outside_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    write_files(
        &root,
        &[(
            "zarr.json",
            &v3_uint8_document("[6]", "[6]", r#"[{"name":"bytes"}]"#),
        )],
    );
    let secret = dir.path().join("secret");
    std::fs::write(&secret, b"hidden").unwrap();
    std::fs::create_dir(root.join("c")).unwrap();
    std::os::unix::fs::symlink(&secret, root.join("c/0")).unwrap();
    let out = dir.path().join("x.npy");
    let run = zarrkit(export_args(&root, "/", &out, &[]));
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "`c/0` in filesystem store leads through a symbolic link outside the store root"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("(to `{}`)", secret.display())),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: --follow-links-outside-root"),
        "{}",
        run.stderr
    );
    assert_eq!(names_in(dir.path()), ["secret", "store"]);

    // The flag is global: it may also come after the subcommand.
    let run = zarrkit(export_args(
        &root,
        "/",
        &out,
        &["--follow-links-outside-root"],
    ));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(read_npy(&out).data, b"hidden");
}

/// Issue #9: `zarrkit migrate` on tensorstore's store with arrays at `/a`
/// and `/b/c` and no group documents stopped with ``no array or group at
/// `/` ``, as it walked down from the root. It now migrates both arrays,
/// creates the groups `/` and `/b`, and says so.
#[test]
fn issue_9_migrate_creates_and_reports_the_groups_a_store_without_a_root_lacks() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures/no-root/v3.zarr");
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join("out.zarr");
    let run = zarrkit([
        OsStr::new("migrate"),
        src.as_os_str(),
        dst.as_os_str(),
        OsStr::new("--to"),
        OsStr::new("v2"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for path in ["/", "/b"] {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{path}: created: the source has no group here"))),
            "{}",
            run.stdout
        );
    }
    assert!(
        run.stdout.contains(": 2 groups, 2 arrays"),
        "{}",
        run.stdout
    );
    assert!(dst.join(".zgroup").is_file() && dst.join("b/.zgroup").is_file());
    let read = |root: &Path| -> Vec<f64> {
        Array::open(open_store(root), "/b/c")
            .unwrap()
            .read_region(&Region::whole(&[10]))
            .unwrap()
    };
    assert_eq!(read(&dst), read(&src));
}

/// A v2 hierarchy large enough that migrating it takes a while: `/a`
/// int32 in 1,600 zstd chunks, `/g` with attributes, `/g/b` float64 in 625
/// gzip chunks, `/g/c` uint8 with no
/// compressor (some chunks left at the fill value).
fn large_v2_store(root: &Path) {
    use zarrkit::format::ZarrFormat;
    let store = open_store(root);
    Group::create_as(
        Arc::clone(&store),
        "/",
        ZarrFormat::V2,
        object(json!({ "title": "large" })),
    )
    .unwrap();
    let a = Array::builder(&[400, 400], DataType::Int32, &[10, 10])
        .format(ZarrFormat::V2)
        .codecs_metadata(vec![
            codec("bytes", json!({ "endian": "little" })),
            codec("zstd", json!({ "level": 1, "checksum": false })),
        ])
        .create(Arc::clone(&store), "/a")
        .unwrap();
    let values: Vec<i32> = (0..160_000).map(|i| i * 7 - 3).collect();
    a.write_region(&Region::whole(&[400, 400]), &values)
        .unwrap();
    Group::create_as(
        Arc::clone(&store),
        "/g",
        ZarrFormat::V2,
        object(json!({ "kind": "inner" })),
    )
    .unwrap();
    let b = Array::builder(&[200, 200], DataType::Float64, &[8, 8])
        .format(ZarrFormat::V2)
        .codecs_metadata(vec![
            codec("bytes", json!({ "endian": "little" })),
            codec("gzip", json!({ "level": 1 })),
        ])
        .create(Arc::clone(&store), "/g/b")
        .unwrap();
    let values: Vec<f64> = (0..40_000).map(|i| f64::from(i) / 3.0).collect();
    b.write_region(&Region::whole(&[200, 200]), &values)
        .unwrap();
    let c = Array::builder(&[100, 100], DataType::UInt8, &[10, 10])
        .format(ZarrFormat::V2)
        .codecs_metadata(vec![codec("bytes", json!({}))])
        .create(Arc::clone(&store), "/g/c")
        .unwrap();
    let values: Vec<u8> = (0..5_000u32).map(|i| (i % 251) as u8 + 1).collect();
    c.write_region(&Region::new(vec![0, 0], vec![50, 100]), &values)
        .unwrap();
}

/// The arrays of [`large_v2_store`].
const LARGE_ARRAYS: [&str; 3] = ["/a", "/g/b", "/g/c"];

/// Asserts that `dst` holds `src`'s hierarchy: every array's values and
/// attributes, and the groups' attributes.
fn assert_same_hierarchy(src: &Path, dst: &Path) {
    let (src, dst) = (open_store(src), open_store(dst));
    for path in LARGE_ARRAYS {
        let a = Array::open(Arc::clone(&src), path).unwrap();
        let b = Array::open(Arc::clone(&dst), path).unwrap();
        let whole = Region::whole(a.shape());
        assert_eq!(
            a.read_region_bytes(&whole).unwrap(),
            b.read_region_bytes(&whole).unwrap(),
            "{path}"
        );
        assert_eq!(a.attributes(), b.attributes(), "{path}");
    }
    for path in ["/", "/g"] {
        let a = Group::open(Arc::clone(&src), path).unwrap();
        let b = Group::open(Arc::clone(&dst), path).unwrap();
        assert_eq!(a.attributes(), b.attributes(), "{path}");
    }
}

// Issue #10, item 5. `migrate` wrote the root document first and chunks
// after it, with nothing marking the destination unfinished: a migration
// killed part way left a store that `info`, `tree` and `export` opened
// without complaint, exporting the fill value for every chunk not yet
// copied, and running `migrate` again refused the non-empty destination.
// The destination now holds `zarrkit-migration-unfinished.json` from the
// first write until verification passes; zarrkit refuses to open it, and
// running `migrate` again resumes. Each trial kills a real migration with
// SIGKILL at a random moment within the time a whole migration takes.
#[cfg(unix)]
#[test]
fn issue_10_a_killed_migration_is_marked_unfinished_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarr");
    large_v2_store(&src);
    let marker_name = zarrkit::migrate::MIGRATION_MARKER;

    // How long a whole migration takes here, to spread the kills over it.
    let timed = dir.path().join("timed.zarr");
    let start = std::time::Instant::now();
    let run = zarrkit([OsStr::new("migrate"), src.as_os_str(), timed.as_os_str()]);
    let full = start.elapsed();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!timed.join(marker_name).exists());
    assert_same_hierarchy(&src, &timed);

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let mut state = u64::from(seed) | 1;
    let trials = std::env::var("ZARRKIT_MIGRATE_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let mut interrupted = 0;
    // Kills spread over the time a migration takes; a run that finished
    // before its kill shows that the machine is faster than that now.
    let mut horizon = full;
    for trial in 0..trials {
        // xorshift: a kill time between 5% and 95% of a whole migration.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let fraction = 0.05 + 0.9 * (state % 1000) as f64 / 1000.0;
        let at = horizon.mul_f64(fraction);
        let dst = dir.path().join(format!("dst{trial}.zarr"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_zarrkit"))
            .args([OsStr::new("migrate"), src.as_os_str(), dst.as_os_str()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        // `Child::kill` sends SIGKILL on Unix: no cleanup runs. A child that
        // exited by itself, before or while the kill was sent, has an exit
        // code; one that the kill ended has none (asking before the kill
        // raced with a migration finishing in between).
        child.kill().ok();
        let finished = child.wait().unwrap().code().is_some();
        let marked = dst.join(marker_name).is_file();
        eprintln!(
            "trial {trial} (seed {seed}): killed at {at:?} of {horizon:?}: {}",
            if finished {
                "had finished"
            } else if marked {
                "unfinished, marked"
            } else {
                "nothing written yet"
            }
        );
        if finished {
            horizon = at;
        }
        if marked {
            interrupted += 1;
            // Every command that opens the destination refuses it, naming
            // the marker and what to do.
            let out = dir.path().join("out.npy");
            for args in [
                vec![OsStr::new("info"), dst.as_os_str()],
                vec![OsStr::new("tree"), dst.as_os_str()],
                vec![
                    OsStr::new("export"),
                    dst.as_os_str(),
                    OsStr::new("/a"),
                    OsStr::new("--out"),
                    out.as_os_str(),
                ],
            ] {
                let run = zarrkit(&args);
                assert_eq!(run.code, 1, "{args:?}: {}{}", run.stdout, run.stderr);
                assert!(
                    run.stderr.contains(&format!("`{marker_name}`"))
                        && run.stderr.contains("unfinished migration")
                        && run.stderr.contains("again to resume"),
                    "{args:?}: {}",
                    run.stderr
                );
            }
            assert!(!out.exists());
            let err = zarrkit::migrate::check_finished(open_store(&dst).as_ref()).unwrap_err();
            assert!(
                matches!(err, zarrkit::Error::UnfinishedMigration { .. }),
                "{err:?}"
            );
        } else if !finished {
            // Killed before the marker was written: nothing but an empty
            // directory (or none) can be there, except the store's own
            // temporary file of the marker when the kill landed while it
            // was being written (`Store::set` writes `.zarrkit-tmp.*`, then
            // renames it; listings skip it and `remove_leftover_files`
            // removes it).
            let entries: Vec<String> = if dst.exists() {
                std::fs::read_dir(&dst)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            } else {
                Vec::new()
            };
            assert!(
                entries.iter().all(|name| name.starts_with(".zarrkit-tmp.")),
                "killed before the marker, yet `{}` holds {entries:?}",
                dst.display()
            );
        }
        // Running the same command again finishes the job.
        let run = zarrkit([OsStr::new("migrate"), src.as_os_str(), dst.as_os_str()]);
        if finished {
            // A complete destination is not empty and not marked: refused.
            assert_eq!(run.code, 1, "{}", run.stderr);
            assert!(run.stderr.contains("is not empty"), "{}", run.stderr);
        } else {
            assert_eq!(run.code, 0, "{}", run.stderr);
            assert_eq!(
                run.stdout.contains("resuming the unfinished migration"),
                marked
            );
            if let Some(line) = run.stdout.lines().find(|l| l.starts_with("resumed:")) {
                eprintln!("trial {trial}: {line}");
            }
        }
        assert!(!dst.join(marker_name).exists());
        assert_same_hierarchy(&src, &dst);
        // The killed run's temporary files are gone too.
        let mut dirs = vec![dst.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let entry = entry.unwrap();
                let name = entry.file_name().into_string().unwrap();
                assert!(!name.starts_with(".zarrkit-"), "left behind: {name}");
                if entry.file_type().unwrap().is_dir() {
                    dirs.push(entry.path());
                }
            }
        }
    }
    eprintln!("{interrupted} of {trials} migrations were killed part way and resumed");
    assert!(interrupted > 0, "no trial was killed part way");
}

/// Zip archives are stores (#13): `migrate` writes one whole, every
/// command reads one by its path (`data.zip/sub/flags` names a node inside
/// it), and what a zip cannot do (be written again, be resumed) is refused
/// by name. Before, a zip given as the store said "does not exist" or "no
/// Zarr hierarchy" (#15), then "not supported yet".
#[test]
fn zip_archives_are_stores_for_every_command() {
    let (dir, root) = sample_store();
    let zip = dir.path().join("data.zip");
    let run = zarrkit([OsStr::new("migrate"), root.as_os_str(), zip.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("verification passed"), "{}", run.stdout);
    assert_eq!(&std::fs::read(&zip).unwrap()[..2], b"PK");
    // The same tree as the directory it came from.
    let from_dir = zarrkit([OsStr::new("tree"), root.as_os_str()]);
    let from_zip = zarrkit([OsStr::new("tree"), zip.as_os_str()]);
    assert_eq!(from_zip.code, 0, "{}", from_zip.stderr);
    assert_eq!(from_zip.stdout, from_dir.stdout);
    // A node inside the archive, by path or with --path.
    let node = zip.join("sub/flags");
    let info = zarrkit([OsStr::new("info"), node.as_os_str(), OsStr::new("--json")]);
    assert_eq!(info.code, 0, "{}", info.stderr);
    let info: serde_json::Value = serde_json::from_str(&info.stdout).unwrap();
    assert_eq!(info["path"], "/sub/flags");
    assert_eq!(info["summary"]["shape"], json!([5]));
    let with_path = zarrkit([
        OsStr::new("info"),
        zip.as_os_str(),
        OsStr::new("--path"),
        OsStr::new("/counts"),
    ]);
    assert_eq!(with_path.code, 0, "{}", with_path.stderr);
    assert!(with_path.stdout.contains("[10, 7]"), "{}", with_path.stdout);
    // Exported values equal the directory's.
    let npy_dir = dir.path().join("dir.npy");
    let npy_zip = dir.path().join("zip.npy");
    for (store, npy) in [(&root, &npy_dir), (&zip, &npy_zip)] {
        let run = zarrkit([
            OsStr::new("export"),
            store.as_os_str(),
            OsStr::new("/counts"),
            OsStr::new("--out"),
            npy.as_os_str(),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    assert_eq!(
        std::fs::read(&npy_dir).unwrap(),
        std::fs::read(&npy_zip).unwrap()
    );
    // Back out of the zip, into another format.
    let back = dir.path().join("back.zarr");
    let run = zarrkit([
        OsStr::new("migrate"),
        zip.as_os_str(),
        back.as_os_str(),
        OsStr::new("--to"),
        OsStr::new("v2"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(back.join(".zgroup").is_file());
    // What a zip cannot do is refused by name, and the archive is untouched.
    let before = std::fs::read(&zip).unwrap();
    let again = zarrkit([OsStr::new("migrate"), root.as_os_str(), zip.as_os_str()]);
    assert_eq!(again.code, 1);
    assert!(
        again.stderr.contains("exists (migrate into a new archive)"),
        "{}",
        again.stderr
    );
    let consolidate = zarrkit([OsStr::new("consolidate"), zip.as_os_str()]);
    assert_eq!(consolidate.code, 1);
    assert!(
        consolidate.stderr.contains("does not support writes"),
        "{}",
        consolidate.stderr
    );
    assert_eq!(std::fs::read(&zip).unwrap(), before);
    // A dry run into a new archive creates nothing.
    let new = dir.path().join("new.zip");
    let dry = zarrkit([
        OsStr::new("migrate"),
        OsStr::new("--dry-run"),
        root.as_os_str(),
        new.as_os_str(),
    ]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(!new.exists());
    // A file that is no zip archive says so, naming it.
    let bad = dir.path().join("bad.zip");
    std::fs::write(&bad, b"PK\x05\x06").unwrap();
    let run = zarrkit([OsStr::new("tree"), bad.as_os_str()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(&format!("{}", bad.display())),
        "{}",
        run.stderr
    );
    // A directory whose name ends in `.zip` is an ordinary store.
    let store_dir = dir.path().join("dir.zip");
    Group::create(open_store(&store_dir), "/", JsonMap::new()).unwrap();
    let run = zarrkit([OsStr::new("tree"), store_dir.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// Issue #15: `migrate a.zarr a.zarr/sub` wrote a copy of the source into
/// the source, as only "DST is empty" was checked. A destination inside
/// the source, or a source inside the destination (also through `..` or a
/// symbolic link), is now refused before anything is written.
#[test]
fn issue_15_migrate_refuses_a_destination_inside_the_source_and_vice_versa() {
    let (dir, root) = sample_store();
    let before = tree_size(&root);
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&root, &link).unwrap();
    for dst in [
        root.join("sub/new"),
        root.join("copy.zarr"),
        link.join("copy.zarr"),
        root.join("../test.zarr/x"),
        root.clone(),
    ] {
        let run = zarrkit([OsStr::new("migrate"), root.as_os_str(), dst.as_os_str()]);
        assert_eq!(run.code, 1, "{}: {}", dst.display(), run.stdout);
        assert_eq!(
            run.stderr,
            format!(
                "error: the destination `{}` is inside the source `{}`: migrate into a \
                 directory outside it\n",
                dst.display(),
                root.display()
            )
        );
    }
    assert!(!root.join("sub/new").exists() && !root.join("copy.zarr").exists());
    assert_eq!(tree_size(&root), before);
    // The source inside the destination: DST is the store's parent.
    let outer = dir.path().join("outer");
    std::fs::create_dir(&outer).unwrap();
    let inner = outer.join("src.zarr");
    Group::create(open_store(&inner), "/", JsonMap::new()).unwrap();
    let run = zarrkit([OsStr::new("migrate"), inner.as_os_str(), outer.as_os_str()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(&format!(
            "the source `{}` is inside the destination `{}`",
            inner.display(),
            outer.display()
        )),
        "{}",
        run.stderr
    );
    // A sibling whose name starts the same is not inside.
    let sibling = dir.path().join("test.zarr2");
    let run = zarrkit([OsStr::new("migrate"), root.as_os_str(), sibling.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// Issue #15: `tree` counted the groups below the top node and `migrate`
/// every group written, so the same store had "1 group" in one and "2
/// groups" in the other; and counts of one were printed as "1 groups",
/// "1 arrays", "(1 chunks)". Both now count the top group, in the right
/// number.
#[test]
fn issue_15_tree_and_migrate_count_groups_alike_and_in_the_right_number() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("one.zarr");
    let store = open_store(&root);
    Group::create(Arc::clone(&store), "/", JsonMap::new()).unwrap();
    let array = Array::builder(&[3], DataType::UInt8, &[3])
        .create(Arc::clone(&store), "/a")
        .unwrap();
    array
        .write_region(&Region::whole(&[3]), &[1u8, 2, 3])
        .unwrap();
    let run = zarrkit([OsStr::new("tree"), root.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.ends_with("\n\n1 group, 1 array\n"),
        "{}",
        run.stdout
    );
    let run = zarrkit([OsStr::new("info"), root.join("a").as_os_str()]);
    assert!(
        run.stdout.contains("\nchunk grid:         [1] (1 chunk)\n"),
        "{}",
        run.stdout
    );
    let dst = dir.path().join("out.zarr");
    let run = zarrkit([
        OsStr::new("migrate"),
        OsStr::new("--dry-run"),
        root.as_os_str(),
        dst.as_os_str(),
    ]);
    assert!(
        run.stdout
            .contains("total: 2 nodes, 1 array (1 copied byte for byte, 0 re-encoded), 1 chunk, "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("/a  array  copy       from v3, 1 chunk, "),
        "{}",
        run.stdout
    );
    let run = zarrkit([OsStr::new("migrate"), root.as_os_str(), dst.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains(": 1 group, 1 array (1 copied byte for byte, 0 re-encoded), 1 chunk, ")
            && run.stdout.contains("verification passed (1 chunk region)"),
        "{}",
        run.stdout
    );
}

/// Issue #15: `consolidate --check` on a store without consolidated
/// metadata listed every node as "missing from the consolidated metadata",
/// as `consolidate::check` compares against an empty set. It now says that
/// there is none.
#[test]
fn issue_15_consolidate_check_says_when_there_is_no_consolidated_metadata() {
    let (_dir, root) = sample_store();
    let run = zarrkit([
        OsStr::new("consolidate"),
        OsStr::new("--check"),
        root.as_os_str(),
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        format!(
            "error: `{0}` has no consolidated metadata (write it with `zarrkit consolidate {0}`)\n",
            root.display()
        )
    );
}

/// Issue #15: `info` read a node's real document and said nothing when the
/// root's consolidated metadata disagreed with it, although the README
/// promises a warning. It now warns, and shows the real document.
#[test]
fn issue_15_info_warns_about_stale_consolidated_metadata() {
    let (_dir, root) = sample_store();
    let run = zarrkit([OsStr::new("consolidate"), root.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = zarrkit([OsStr::new("info"), root.join("counts").as_os_str()]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let mut counts = Array::open(open_store(&root), "/counts").unwrap();
    let mut attributes = counts.attributes().clone();
    attributes.insert("units".into(), json!("degC"));
    counts.set_attributes(attributes).unwrap();
    let run = zarrkit([OsStr::new("info"), root.join("counts").as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning: the consolidated metadata of `/` disagrees with the document of `/counts`; \
         reading the real documents\n"
    );
    assert!(run.stdout.contains("\"units\": \"degC\""), "{}", run.stdout);
}

/// Issue #15: `info` on a sharded array labelled the shard shape "chunk
/// shape" (the grid's chunks are shards) with the inner chunk shape only
/// inside the codec JSON; on a v2 object array it showed the fill value `0`
/// as `[48]` (the model's encoded bytes spelt as v3 raw bytes); on
/// variable-length elements "decoded size: 0 bytes" (their size in the
/// model is 0). It now says shard and inner chunk shape, the document's
/// fill value, and how many variable-length elements there are.
#[test]
fn issue_15_info_shows_shards_object_fill_values_and_variable_length_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s.zarr");
    let store = open_store(&root);
    Group::create(Arc::clone(&store), "/", JsonMap::new()).unwrap();
    let sharded = Array::builder(&[8, 6], DataType::UInt16, &[4, 6])
        .codecs_metadata(vec![codec(
            "sharding_indexed",
            json!({
                "chunk_shape": [2, 3],
                "codecs": [{ "name": "bytes", "configuration": { "endian": "little" } }],
                "index_codecs": [{ "name": "bytes", "configuration": { "endian": "little" } }],
                "index_location": "end"
            }),
        )])
        .create(Arc::clone(&store), "/sharded")
        .unwrap();
    let values: Vec<u16> = (0..48).collect();
    sharded
        .write_region(&Region::whole(&[8, 6]), &values)
        .unwrap();
    let names = Array::builder(&[5], DataType::String, &[2])
        .create(Arc::clone(&store), "/names")
        .unwrap();
    names
        .write_strings(&Region::whole(&[5]), &["a", "b", "c", "d", "e"])
        .unwrap();

    let run = zarrkit([OsStr::new("info"), root.join("sharded").as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "\nshard shape:        [4, 6]\ninner chunk shape:  [2, 3]\n\
             chunk grid:         [2, 1] (2 shards)\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("\nstored shards:      2 of 2, "),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("chunk shape:        [4, 6]"),
        "{}",
        run.stdout
    );
    let run = zarrkit([OsStr::new("tree"), root.as_os_str()]);
    assert!(
        run.stdout
            .contains("sharded [8, 6] uint16 shards [4, 6] of chunks [2, 3]\n"),
        "{}",
        run.stdout
    );

    let run = zarrkit([OsStr::new("info"), root.join("names").as_os_str()]);
    assert!(
        run.stdout.contains(
            "\ndecoded size:       not known without reading every chunk (5 elements of \
             variable length)\n"
        ),
        "{}",
        run.stdout
    );

    // zarr-python 2.18's json2 object array, `"fill_value": 0`.
    let objects =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures/v2/objects/objects.zarr");
    let run = zarrkit([OsStr::new("info"), objects.join("json").as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("\nfill value:         0\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("\ndecoded size:       not known"),
        "{}",
        run.stdout
    );
}

/// Issue #15: `info --json` printed only the metadata document, so a script
/// wanting the stored chunks, bytes or inner chunk shape parsed the text.
/// It now prints the summary beside the document.
#[test]
fn issue_15_info_json_has_the_summary_beside_the_document() {
    let (_dir, root) = sample_store();
    let chunk_bytes = tree_size(&root.join("counts/c"));
    let run = zarrkit([
        OsStr::new("info"),
        OsStr::new("--json"),
        root.join("counts").as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let printed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(printed["path"], "/counts");
    assert_eq!(printed["format"], "v3");
    assert_eq!(printed["node_type"], "array");
    let summary = &printed["summary"];
    // [10, 7] int32 in [4, 4] chunks, rows 0..4 written: chunks (0, 0), (0, 1).
    assert_eq!(
        summary,
        &json!({
            "shape": [10, 7],
            "data_type": "int32",
            "chunk_shape": [4, 4],
            "inner_chunk_shape": null,
            "chunk_grid_shape": [3, 2],
            "chunks": 6,
            "stored_chunks": 2,
            "stored_bytes": chunk_bytes,
            "decoded_bytes": 280,
            "storage_ratio": 280.0 / chunk_bytes as f64,
            "fill_value": -1,
            "codecs": ["bytes", "gzip"],
            "dimension_names": ["y", "x"],
        })
    );
    assert_eq!(printed["document"]["fill_value"], -1);

    let run = zarrkit([
        OsStr::new("info"),
        OsStr::new("--json"),
        root.join("sub").as_os_str(),
    ]);
    let printed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(printed["node_type"], "group");
    assert_eq!(
        printed["summary"],
        json!({ "children": [
            { "name": "empty", "node_type": "group" },
            { "name": "flags", "node_type": "array" },
        ] })
    );
    // An invalid child is listed with its error, and the exit status is 1.
    std::fs::create_dir(root.join("sub/broken")).unwrap();
    std::fs::write(root.join("sub/broken/zarr.json"), b"{ not json").unwrap();
    let run = zarrkit([
        OsStr::new("info"),
        OsStr::new("--json"),
        root.join("sub").as_os_str(),
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: `/sub` has 1 child that cannot be opened\n"
    );
    let printed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let broken = &printed["summary"]["children"][0];
    assert_eq!(broken["name"], "broken");
    assert!(
        broken["error"]
            .as_str()
            .is_some_and(|e| e.contains("broken/zarr.json")),
        "{broken}"
    );
}

/// Issue #15: `tree --json`, the hierarchy for scripts, parsed here and
/// compared field by field with what the sample store was made of.
#[test]
fn tree_json_describes_every_node() {
    let (_dir, root) = sample_store();
    std::fs::create_dir(root.join("broken")).unwrap();
    std::fs::write(root.join("broken/zarr.json"), b"{ not json").unwrap();
    let run = zarrkit([OsStr::new("tree"), OsStr::new("--json"), root.as_os_str()]);
    // The invalid node is in the output, and the exit status says so.
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("broken/zarr.json"), "{}", run.stderr);
    let mut printed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let broken = printed["tree"]["children"][0]["error"].take();
    assert!(
        broken
            .as_str()
            .is_some_and(|e| e.contains("broken/zarr.json")),
        "{broken}"
    );
    assert_eq!(
        printed,
        json!({
            "tree": {
                "name": "", "path": "/", "node_type": "group", "format": "v3",
                "children": [
                    { "name": "broken", "path": "/broken", "error": null },
                    {
                        "name": "counts", "path": "/counts", "node_type": "array",
                        "format": "v3", "shape": [10, 7], "data_type": "int32",
                        "chunk_shape": [4, 4], "inner_chunk_shape": null
                    },
                    {
                        "name": "sub", "path": "/sub", "node_type": "group", "format": "v3",
                        "children": [
                            {
                                "name": "empty", "path": "/sub/empty", "node_type": "group",
                                "format": "v3", "children": []
                            },
                            {
                                "name": "flags", "path": "/sub/flags", "node_type": "array",
                                "format": "v3", "shape": [5], "data_type": "bool",
                                "chunk_shape": [2], "inner_chunk_shape": null
                            }
                        ]
                    }
                ]
            },
            "groups": 3,
            "arrays": 2
        })
    );
    let run = zarrkit([
        OsStr::new("tree"),
        OsStr::new("--json"),
        root.join("sub/flags").as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let printed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(printed["tree"]["path"], "/sub/flags");
    assert_eq!(
        (printed["groups"].clone(), printed["arrays"].clone()),
        (json!(0), json!(1))
    );
}

/// The number of files under `dir`.
fn file_count(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            if entry.metadata().unwrap().is_dir() {
                file_count(&entry.path())
            } else {
                1
            }
        })
        .sum()
}

/// Issue #15: `migrate --dry-run --json` (the plan for scripts) and the
/// `--to` values listed in `migrate --help`.
#[test]
fn migrate_dry_run_json_prints_the_plan() {
    let (dir, root) = sample_store();
    let dst = dir.path().join("out.zarr");
    let run = zarrkit([
        OsStr::new("migrate"),
        OsStr::new("--dry-run"),
        OsStr::new("--json"),
        OsStr::new("--to"),
        OsStr::new("v2"),
        root.as_os_str(),
        dst.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!dst.exists());
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(plan["to"], "v2");
    assert_eq!(plan["source"], root.display().to_string());
    assert_eq!(plan["destination"], dst.display().to_string());
    assert_eq!(plan["writes_consolidated"], false);
    let paths: Vec<&str> = plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["/", "/counts", "/sub", "/sub/empty", "/sub/flags"]);
    let counts = &plan["nodes"][1];
    assert_eq!(counts["node_type"], "array");
    assert_eq!(counts["source_format"], "v3");
    assert_eq!(counts["chunks"], file_count(&root.join("counts/c")));
    assert_eq!(counts["bytes"], tree_size(&root.join("counts/c")));
    // v3's `default` keys become v2's, with a note; gzip is v2's compressor.
    assert_eq!(counts["action"], "copy");
    assert_eq!(counts["reason"], serde_json::Value::Null);
    assert!(
        counts["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("chunk key encoding `default`"),
        "{counts}"
    );
    assert_eq!(plan["nodes"][0]["node_type"], "group");
    assert_eq!(plan["nodes"][0]["action"], "create");
    let chunks = file_count(&root.join("counts/c")) + file_count(&root.join("sub/flags/c"));
    let bytes = tree_size(&root.join("counts/c")) + tree_size(&root.join("sub/flags/c"));
    assert_eq!(
        plan["total"],
        json!({
            "nodes": 5, "groups": 3, "arrays": 2, "reencoded": 0,
            "chunks": chunks, "bytes": bytes
        })
    );
    // --json without --dry-run migrates, then reports what it did.
    let run = zarrkit([
        OsStr::new("migrate"),
        OsStr::new("--json"),
        root.as_os_str(),
        dst.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["groups"], 3);
    assert_eq!(report["arrays_copied"], 2);
    assert_eq!(report["chunks_written"], chunks);
    assert!(dst.join("zarr.json").is_file());
    // The help lists every target format.
    let run = zarrkit(["migrate", "--help"]);
    for name in [
        "v3",
        "v2",
        "v1",
        "v3-draft-2022",
        "v3-draft-2019-json",
        "v3-draft-2019",
        "v3-draft-2019a",
    ] {
        assert!(
            run.stdout.contains(&format!("- {name}:")),
            "{name}: {}",
            run.stdout
        );
    }
}

/// Issue #15: the top-level help said "Zarr v3 and v2" although every
/// command reads (and `migrate` writes) seven formats.
#[test]
fn issue_15_top_level_help_names_every_format() {
    let run = zarrkit(["--help"]);
    assert_eq!(run.code, 0);
    assert!(!run.stdout.contains("v3 and v2"), "{}", run.stdout);
    for name in [
        "v3 (3.0, 3.1)",
        "v2",
        "v1",
        "`v3-draft-2022`",
        "`v3-draft-2019`",
        "`v3-draft-2019a`",
        "`v3-draft-2019-json`",
    ] {
        assert!(run.stdout.contains(name), "{name}: {}", run.stdout);
    }
}

/// Issue #15: `export -o PATH` wrote a temporary file and renamed it over
/// PATH, whatever PATH was: as root `-o /dev/full` turned the device into
/// a regular file, and a symbolic link or a FIFO at PATH was replaced
/// rather than written through. A special file is now written directly,
/// `-` is standard output, a link is followed to the regular file it
/// names (which is replaced; the link stays) and a link to nothing is
/// refused; `-o x.npy --attrs x.npy` is a usage error.
#[cfg(unix)]
#[test]
fn issue_15_export_writes_through_special_files_and_links_never_replacing_them() {
    use std::os::unix::fs::{FileTypeExt, symlink};
    let (dir, root) = sample_store();
    let counts = root.join("counts");
    // The reference: an export to a new regular file, which the export
    // tests above check against NumPy.
    let reference_path = dir.path().join("reference.npy");
    let run = zarrkit([
        OsStr::new("export"),
        counts.as_os_str(),
        OsStr::new("-o"),
        reference_path.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let reference = std::fs::read(&reference_path).unwrap();
    assert_eq!(read_npy(&reference_path).shape, [10, 7]);

    // `-`: the `.npy` on stdout, the report on stderr.
    let (code, stdout, stderr) = zarrkit_bytes([
        OsStr::new("export"),
        counts.as_os_str(),
        OsStr::new("-o"),
        OsStr::new("-"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, reference);
    assert!(
        stderr.starts_with("wrote `-`: /counts, shape [10, 7], int32, "),
        "{stderr}"
    );
    let (code, stdout, _) = zarrkit_bytes([
        OsStr::new("export"),
        counts.as_os_str(),
        OsStr::new("--attrs"),
        OsStr::new("-"),
    ]);
    assert_eq!(code, 0);
    let attributes: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(attributes, json!({ "units": "K", "scale": [1, 2] }));

    // A FIFO is written through, and stays a FIFO.
    let fifo = dir.path().join("pipe.npy");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let run = zarrkit([
        OsStr::new("export"),
        counts.as_os_str(),
        OsStr::new("-o"),
        fifo.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(reader.join().unwrap(), reference);
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // A link to a regular file: the file is replaced, the link stays.
    let target = dir.path().join("target.npy");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.npy");
    symlink("target.npy", &link).unwrap();
    let run = zarrkit([
        OsStr::new("export"),
        counts.as_os_str(),
        OsStr::new("-o"),
        link.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&target).unwrap(), reference);

    // A link to nothing is refused, and nothing is created.
    let dangling = dir.path().join("dangling.npy");
    symlink("missing/x.npy", &dangling).unwrap();
    let run = zarrkit([
        OsStr::new("export"),
        counts.as_os_str(),
        OsStr::new("-o"),
        dangling.as_os_str(),
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(&format!(
            "`{}` is a symbolic link to `missing/x.npy`, which cannot be resolved",
            dangling.display()
        )),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("missing").exists());

    // A device is written directly: `/dev/full` fails with its own error.
    // Only where `/dev` is not writable, so that this test cannot replace
    // the device if the bug came back and the tests ran as root.
    let dev_writable = tempfile::tempfile_in("/dev").is_ok();
    if Path::new("/dev/full").exists() && !dev_writable {
        let run = zarrkit([
            OsStr::new("export"),
            counts.as_os_str(),
            OsStr::new("-o"),
            OsStr::new("/dev/full"),
        ]);
        assert_eq!(run.code, 1);
        assert!(
            run.stderr
                .contains("cannot write `/dev/full`: No space left on device"),
            "{}",
            run.stderr
        );
    }
    // /dev/null takes everything and stays a device (as root too: the
    // writable-/dev check above guards only the old behaviour's rename).
    if !dev_writable {
        let run = zarrkit([
            OsStr::new("export"),
            counts.as_os_str(),
            OsStr::new("-o"),
            OsStr::new("/dev/null"),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    for device in ["/dev/full", "/dev/null"] {
        if let Ok(meta) = std::fs::metadata(device) {
            assert!(meta.file_type().is_char_device(), "{device}");
        }
    }

    // The same file twice is a usage error, also through a link or `-`.
    let same = dir.path().join("x.npy");
    for (npy, attrs) in [
        (same.clone(), same.clone()),
        (same.clone(), dir.path().join("sub/../x.npy")),
        (target.clone(), link.clone()),
        (PathBuf::from("-"), PathBuf::from("-")),
    ] {
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        let run = zarrkit([
            OsStr::new("export"),
            counts.as_os_str(),
            OsStr::new("-o"),
            npy.as_os_str(),
            OsStr::new("--attrs"),
            attrs.as_os_str(),
        ]);
        assert_eq!(run.code, 2, "{npy:?} {attrs:?}");
        assert!(
            run.stderr.starts_with(&format!(
                "error: --out and --attrs name the same file `{}`; give each its own",
                npy.display()
            )),
            "{}",
            run.stderr
        );
        assert_eq!(run.stdout, "");
    }
    assert!(!same.exists());
    assert_eq!(std::fs::read(&target).unwrap(), reference);
}

/// Issue #15: `export` alone required `STORE NODE`, while the other
/// commands take `STORE[/PATH]`. Both forms now work, alike.
#[test]
fn issue_15_export_takes_store_and_path_in_one_argument() {
    let (dir, root) = sample_store();
    let one = dir.path().join("one.npy");
    let two = dir.path().join("two.npy");
    let run = zarrkit([
        OsStr::new("export"),
        root.join("sub/flags").as_os_str(),
        OsStr::new("-o"),
        one.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with(&format!(
            "wrote `{}`: /sub/flags, shape [5], bool",
            one.display()
        )),
        "{}",
        run.stdout
    );
    let run = zarrkit([
        OsStr::new("export"),
        root.as_os_str(),
        OsStr::new("/sub/flags"),
        OsStr::new("-o"),
        two.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let npy = read_npy(&one);
    assert_eq!(
        (npy.descr.as_str(), npy.shape.as_slice()),
        ("|b1", &[5u64][..])
    );
    assert_eq!(npy.data, [1, 0, 1, 1, 0]);
    assert_eq!(std::fs::read(&one).unwrap(), std::fs::read(&two).unwrap());
}
