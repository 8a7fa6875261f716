//! The fixture corpus: every entry of `testdata/fixtures.toml`, opened
//! through every store backend, checked for data type, shape and a digest of
//! the values.

use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StoreKey};
use zarrkit::{Array, Region};

#[derive(Debug, Deserialize)]
struct Manifest {
    fixture: Vec<Fixture>,
}

#[derive(Debug, Deserialize)]
struct Fixture {
    name: String,
    store: String,
    node: String,
    data_type: String,
    shape: Vec<u64>,
    sha256: String,
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

/// Copies a directory tree into a `MemoryStore`, key by key.
fn memory_copy(root: &Path) -> MemoryStore {
    let store = MemoryStore::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .replace('\\', "/");
                store
                    .set(&StoreKey::new(rel).unwrap(), &std::fs::read(&path).unwrap())
                    .unwrap();
            }
        }
    }
    store
}

/// The SHA-256 of the values as little-endian C-order bytes, as the
/// generator computed it.
fn digest(array: &Array) -> String {
    let mut bytes = array
        .read_region_bytes(&Region::whole(array.shape()))
        .unwrap();
    if cfg!(target_endian = "big") {
        let unit = match array.data_type().name().as_str() {
            "complex64" => 4,
            "complex128" => 8,
            _ => array.data_type().size(),
        };
        bytes.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
    }
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn every_fixture_reads_through_every_store_backend() {
    let text = std::fs::read_to_string(testdata().join("fixtures.toml")).unwrap();
    let manifest: Manifest = toml::from_str(&text).unwrap();
    assert!(
        manifest.fixture.len() >= 8,
        "the manifest lists the v3 fixtures"
    );
    for fixture in &manifest.fixture {
        let root = testdata().join(&fixture.store);
        let backends: Vec<(&str, Arc<dyn Store>)> = vec![
            ("filesystem", Arc::new(FilesystemStore::new(&root).unwrap())),
            ("memory", Arc::new(memory_copy(&root))),
        ];
        for (backend, store) in backends {
            let context = format!("fixture `{}` through the {backend} store", fixture.name);
            let array =
                Array::open(store, &fixture.node).unwrap_or_else(|e| panic!("{context}: {e:#?}"));
            assert_eq!(array.data_type().name(), fixture.data_type, "{context}");
            assert_eq!(array.shape(), fixture.shape.as_slice(), "{context}");
            assert_eq!(digest(&array), fixture.sha256, "{context}");
        }
    }
}
