//! zarr-python's own backward-compatibility data:
//! `../shared/testdata/zarr-python-2-fixture/`, the v2 arrays that zarr 2.x
//! releases wrote once and every later 2.x release read back (its README).
//!
//! zarrkit opens every array there and compares every element, and the fill
//! value, with zarr-python 2.18's reading of the same files, which
//! `testdata/generate/zarr2_fixture_dump.py` dumps through
//! `ZARRKIT_PYTHON_ZARR2` at test time. Without that Python the test skips,
//! saying so, unless `ZARRKIT_REQUIRE_INTEROP=1`.

use crate::support::{error_chain, to_little_endian, zarr2_python};
use base64::Engine;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use zarrkit::store::{FilesystemStore, Store};
use zarrkit::{Array, Region};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn zarrkit_reads_every_array_of_zarr_python_2_fixture_as_zarr_python_2_18_does() {
    let Some(python) = zarr2_python() else {
        return;
    };
    let root = repo().join("../shared/testdata/zarr-python-2-fixture");
    assert!(root.is_dir(), "{} is missing", root.display());
    let out = tempfile::tempdir().unwrap();
    let script = repo().join("testdata/generate/zarr2_fixture_dump.py");
    let output = Command::new(&python)
        .arg(&script)
        .arg(&root)
        .arg(out.path())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        output.status.success(),
        "zarr2_fixture_dump.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out.path().join("manifest.json")).unwrap()).unwrap();
    let entries = manifest["arrays"].as_array().unwrap();
    // The README's list: 24 arrays × 7 compressors, plus flat, flat_legacy,
    // meta, nested and nested_legacy.
    assert_eq!(entries.len(), 24 * 7 + 5);
    let mut failures = Vec::new();
    let mut elements = 0usize;
    for entry in entries {
        let path = entry["path"].as_str().unwrap();
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(root.join(path)).unwrap());
        let array = match Array::open(store, "/") {
            Ok(array) => array,
            Err(e) => {
                failures.push(format!("{path}: cannot open: {}", error_chain(&e)));
                continue;
            }
        };
        let shape: Vec<u64> = serde_json::from_value(entry["shape"].clone()).unwrap();
        assert_eq!(array.shape(), shape, "{path}");
        let data_type = array.data_type().clone();
        let mut fill = array.fill_value().as_bytes().to_vec();
        to_little_endian(&mut fill, &data_type);
        let want_fill = base64::engine::general_purpose::STANDARD
            .decode(entry["fill_value"].as_str().unwrap())
            .unwrap();
        if fill != want_fill {
            failures.push(format!(
                "{path} ({}): fill value {fill:?}, zarr 2.18 {want_fill:?}",
                entry["dtype"]
            ));
        }
        let mut got = match array.read_region_bytes(&Region::whole(&shape)) {
            Ok(got) => got,
            Err(e) => {
                failures.push(format!("{path}: cannot read: {}", error_chain(&e)));
                continue;
            }
        };
        to_little_endian(&mut got, &data_type);
        let want = std::fs::read(out.path().join(entry["file"].as_str().unwrap())).unwrap();
        if got != want {
            let first = got.iter().zip(&want).position(|(a, b)| a != b);
            failures.push(format!(
                "{path} ({}): {} bytes, zarr 2.18 {}; first difference at byte {first:?}",
                entry["dtype"],
                got.len(),
                want.len()
            ));
        }
        elements += got.len() / data_type.size();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{} arrays, {elements} elements equal", entries.len());
}
