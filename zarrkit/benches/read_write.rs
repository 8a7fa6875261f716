//! Region reads and writes through `MemoryStore` and `FilesystemStore`.
//!
//! A `uint16` array of 128³ in 32³ chunks with `bytes` + `zstd` (the
//! builder's defaults) and with `bytes` alone: write all, read all, and read
//! one 32³ region that straddles eight chunks.

use std::sync::Arc;
use zarrkit::metadata::{DataType, ExtensionObject};
use zarrkit::store::{FilesystemStore, MemoryStore, Store};
use zarrkit::{Array, Region};

fn main() {
    divan::main();
}

const SIDE: u64 = 128;
const CHUNK: u64 = 32;

fn data() -> Vec<u16> {
    let n = (SIDE * SIDE * SIDE) as usize;
    (0..n)
        .map(|i| {
            let (x, y, z) = (i % 128, (i / 128) % 128, i / (128 * 128));
            ((x + 2 * y + 3 * z) / 4) as u16
        })
        .collect()
}

#[derive(Clone, Copy, Debug)]
enum Backend {
    Memory,
    Filesystem,
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Memory => "memory",
            Self::Filesystem => "filesystem",
        })
    }
}

const CASES: [(Backend, bool); 4] = [
    (Backend::Memory, true),
    (Backend::Memory, false),
    (Backend::Filesystem, true),
    (Backend::Filesystem, false),
];

fn setup(backend: Backend, zstd: bool, dir: &tempfile::TempDir) -> Array {
    let store: Arc<dyn Store> = match backend {
        Backend::Memory => Arc::new(MemoryStore::new()),
        Backend::Filesystem => {
            Arc::new(FilesystemStore::new(dir.path()).expect("temporary directory"))
        }
    };
    let mut builder = Array::builder(&[SIDE; 3], DataType::UInt16, &[CHUNK; 3]);
    if !zstd {
        let bytes: ExtensionObject = ExtensionObject::with_configuration(
            "bytes",
            serde_json::from_str(r#"{"endian": "little"}"#).expect("valid JSON"),
        );
        builder = builder.codecs_metadata(vec![bytes]);
    }
    builder
        .overwrite(true)
        .create(store, "/bench")
        .expect("create array")
}

fn label(case: (Backend, bool)) -> String {
    format!("{}/{}", case.0, if case.1 { "zstd" } else { "raw" })
}

#[divan::bench(args = CASES.map(label), sample_count = 10)]
fn write_all(bencher: divan::Bencher, case: &str) {
    let (backend, zstd) = CASES[CASES.map(label).iter().position(|c| c == case).unwrap_or(0)];
    let dir = tempfile::tempdir().expect("temporary directory");
    let array = setup(backend, zstd, &dir);
    let data = data();
    let region = Region::whole(&[SIDE; 3]);
    bencher
        .counter(divan::counter::BytesCount::new(data.len() * 2))
        .bench_local(|| {
            array
                .write_region(&region, divan::black_box(&data))
                .expect("write")
        });
}

#[divan::bench(args = CASES.map(label), sample_count = 10)]
fn read_all(bencher: divan::Bencher, case: &str) {
    let (backend, zstd) = CASES[CASES.map(label).iter().position(|c| c == case).unwrap_or(0)];
    let dir = tempfile::tempdir().expect("temporary directory");
    let array = setup(backend, zstd, &dir);
    let data = data();
    let region = Region::whole(&[SIDE; 3]);
    array.write_region(&region, &data).expect("write");
    bencher
        .counter(divan::counter::BytesCount::new(data.len() * 2))
        .bench_local(|| {
            array
                .read_region::<u16>(divan::black_box(&region))
                .expect("read")
        });
}

#[divan::bench(args = CASES.map(label), sample_count = 20)]
fn read_straddling_region(bencher: divan::Bencher, case: &str) {
    let (backend, zstd) = CASES[CASES.map(label).iter().position(|c| c == case).unwrap_or(0)];
    let dir = tempfile::tempdir().expect("temporary directory");
    let array = setup(backend, zstd, &dir);
    array
        .write_region(&Region::whole(&[SIDE; 3]), &data())
        .expect("write");
    let region = Region::new(vec![16, 16, 16], vec![CHUNK; 3]);
    bencher
        .counter(divan::counter::BytesCount::new(
            (CHUNK * CHUNK * CHUNK * 2) as usize,
        ))
        .bench_local(|| {
            array
                .read_region::<u16>(divan::black_box(&region))
                .expect("read")
        });
}
