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
    copy_into(root, &store);
    store
}

/// Copies a directory tree into `store`, key by key.
fn copy_into(root: &Path, store: &dyn Store) {
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

/// Issue #13: the corpus read from SeaweedFS (S3) and from nginx (HTTP),
/// every fixture at its own prefix: every format and every writer's
/// stores (zarr-python, tensorstore, zarr 1.x …), through the remote
/// backends.
#[cfg(feature = "s3")]
#[test]
fn every_fixture_reads_from_s3_and_over_http() {
    use crate::remote::{s3_store, server, unique};
    let text = std::fs::read_to_string(testdata().join("fixtures.toml")).unwrap();
    let manifest: Manifest = toml::from_str(&text).unwrap();
    let mut locations = Vec::new();
    let s3_options = server("ZARRKIT_S3_ENDPOINT").map(|e| crate::remote::s3_options(&e));
    let s3 = s3_store("ZARRKIT_S3_ENDPOINT", "corpus");
    if let (Some((store, url)), Some(options)) = (&s3, s3_options) {
        copy_into(&testdata().join("fixtures"), &*prefixed(store, "fixtures"));
        locations.push(("S3", url.clone(), options));
    }
    let mut http_copy = None;
    if let (Some(url), Some(root)) = (server("ZARRKIT_HTTP_URL"), server("ZARRKIT_HTTP_ROOT")) {
        let name = unique("corpus");
        let dir = Path::new(&root).join(&name);
        copy_dir(&testdata().join("fixtures"), &dir.join("fixtures"));
        http_copy = Some(dir);
        locations.push((
            "HTTP",
            format!("{url}/{name}"),
            zarrkit::store::StoreOptions::new(),
        ));
    }
    for (backend, base, options) in &locations {
        for fixture in &manifest.fixture {
            let context = format!("fixture `{}` through {backend}", fixture.name);
            let store = zarrkit::store::open(&format!("{base}/{}", fixture.store), options)
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            let array =
                Array::open(store, &fixture.node).unwrap_or_else(|e| panic!("{context}: {e:#?}"));
            assert_eq!(array.data_type().name(), fixture.data_type, "{context}");
            assert_eq!(array.shape(), fixture.shape.as_slice(), "{context}");
            assert_eq!(digest(&array), fixture.sha256, "{context}");
        }
    }
    if let Some((store, _)) = s3 {
        store
            .erase_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap();
    }
    if let Some(dir) = http_copy {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

/// `store` seen under `prefix`: a store whose keys get `prefix/` in front.
#[cfg(feature = "s3")]
fn prefixed(store: &Arc<dyn Store>, prefix: &str) -> Arc<dyn Store> {
    #[derive(Debug)]
    struct Prefixed(Arc<dyn Store>, String);
    impl Prefixed {
        fn key(&self, key: &StoreKey) -> StoreKey {
            StoreKey::new(format!("{}/{}", self.1, key.as_str())).unwrap()
        }
    }
    impl Store for Prefixed {
        fn name(&self) -> &'static str {
            self.0.name()
        }
        fn capabilities(&self) -> zarrkit::store::StoreCapabilities {
            self.0.capabilities()
        }
        fn get(
            &self,
            key: &StoreKey,
            range: Option<zarrkit::store::ByteRange>,
        ) -> Result<Option<Vec<u8>>, zarrkit::store::StoreError> {
            self.0.get(&self.key(key), range)
        }
        fn set(&self, key: &StoreKey, value: &[u8]) -> Result<(), zarrkit::store::StoreError> {
            self.0.set(&self.key(key), value)
        }
        fn set_partial_values(
            &self,
            _: &[(StoreKey, u64, Vec<u8>)],
        ) -> Result<(), zarrkit::store::StoreError> {
            unreachable!("the corpus copy writes whole values")
        }
        fn erase(&self, key: &StoreKey) -> Result<(), zarrkit::store::StoreError> {
            self.0.erase(&self.key(key))
        }
        fn erase_prefix(
            &self,
            _: &zarrkit::store::StorePrefix,
        ) -> Result<(), zarrkit::store::StoreError> {
            unreachable!("the corpus copy erases nothing")
        }
        fn list_prefix(
            &self,
            _: &zarrkit::store::StorePrefix,
        ) -> Result<Vec<StoreKey>, zarrkit::store::StoreError> {
            unreachable!("the corpus copy lists nothing")
        }
        fn list_dir(
            &self,
            _: &zarrkit::store::StorePrefix,
        ) -> Result<zarrkit::store::ListDir, zarrkit::store::StoreError> {
            unreachable!("the corpus copy lists nothing")
        }
    }
    Arc::new(Prefixed(Arc::clone(store), prefix.to_string()))
}

/// Copies a directory tree, for nginx to serve.
#[cfg(feature = "s3")]
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
