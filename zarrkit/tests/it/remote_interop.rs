//! Interop with zarr-python 3.1 over real servers (#13): zarr-python
//! (through `zarr.storage.ObjectStore` and `obstore`) writes v2, v3 and
//! sharded v3 arrays to SeaweedFS and into the directory nginx serves, and
//! zarrkit reads them element for element over S3 and HTTP; zarrkit writes
//! the same arrays there and zarr-python reads them.
//!
//! Both sides compute each array's values from the element's index, so
//! nothing but the store travels between them;
//! `testdata/generate/remote_interop.py` is the Python side and holds the
//! same list of arrays as `CASES` below.

use crate::remote::{bucket, s3_options, server, unique};
use crate::support;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::{DataType, ExtensionObject};
use zarrkit::store::{FilesystemStore, Store, StoreOptions, StorePrefix, open};
use zarrkit::{Array, Region};

/// An array both sides write and read.
struct Case {
    name: &'static str,
    format: ZarrFormat,
    data_type: DataType,
    shape: [u64; 2],
    /// The chunk shape, or the inner chunk shape of a sharded array.
    chunks: [u64; 2],
    shards: Option<[u64; 2]>,
}

const CASES: [Case; 3] = [
    Case {
        name: "v2_float64",
        format: ZarrFormat::V2,
        data_type: DataType::Float64,
        shape: [37, 23],
        chunks: [10, 8],
        shards: None,
    },
    Case {
        name: "v3_uint16",
        format: ZarrFormat::V3,
        data_type: DataType::UInt16,
        shape: [37, 23],
        chunks: [10, 8],
        shards: None,
    },
    Case {
        name: "v3_sharded_int32",
        format: ZarrFormat::V3,
        data_type: DataType::Int32,
        shape: [40, 30],
        chunks: [5, 5],
        shards: Some([20, 15]),
    },
];

impl Case {
    /// The chunk grid's cell: the shard shape of a sharded array.
    fn outer(&self) -> [u64; 2] {
        self.shards.unwrap_or(self.chunks)
    }

    /// Whether the element at `[i, j]` lies in the last chunk (shard),
    /// which no side writes.
    fn in_last_chunk(&self, i: u64, j: u64) -> bool {
        let [n0, n1] = self.shape;
        let [c0, c1] = self.outer();
        i >= (n0 - 1) / c0 * c0 && j >= (n1 - 1) / c1 * c1
    }

    /// The values, native-endian: `remote_interop.py`'s `expected`.
    fn expected(&self) -> Vec<u8> {
        let [n0, n1] = self.shape;
        let mut out = Vec::new();
        for i in 0..n0 {
            for j in 0..n1 {
                let index = i * n1 + j;
                let zero = self.in_last_chunk(i, j);
                #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
                match self.data_type {
                    DataType::Float64 => {
                        let v = if zero {
                            0.0
                        } else {
                            index as f64 * 0.5 - 100.0
                        };
                        out.extend_from_slice(&v.to_ne_bytes());
                    }
                    DataType::UInt16 => {
                        let v = if zero {
                            0
                        } else {
                            ((index * 7 + 3) % 65536) as u16
                        };
                        out.extend_from_slice(&v.to_ne_bytes());
                    }
                    DataType::Int32 => {
                        let v = if zero { 0 } else { index as i32 * 3 - 1000 };
                        out.extend_from_slice(&v.to_ne_bytes());
                    }
                    _ => unreachable!("no case has {:?}", self.data_type),
                }
            }
        }
        out
    }

    /// Writes the array with zarrkit as zarr-python does: zstd, and for
    /// a sharded array zarr-python's default index (`bytes` and
    /// `crc32c`); every chunk (shard) but the last.
    fn write(&self, store: &Arc<dyn Store>) {
        let mut builder =
            Array::builder(&self.shape, self.data_type.clone(), &self.outer()).format(self.format);
        if let Some(shards) = self.shards {
            let sharding = json!({
                "chunk_shape": self.chunks,
                "codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "zstd", "configuration": {"level": 0, "checksum": false}},
                ],
                "index_codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "crc32c"},
                ],
                "index_location": "end",
            });
            assert_eq!(shards, self.outer());
            builder = builder.codecs_metadata(vec![ExtensionObject::with_configuration(
                "sharding_indexed",
                sharding.as_object().unwrap().clone(),
            )]);
        }
        let array = builder
            .create(Arc::clone(store), &format!("/{}", self.name))
            .unwrap_or_else(|e| panic!("{}: {}", self.name, support::error_chain(&e)));
        let expected = self.expected();
        let grid = array.chunk_grid_shape();
        let size = self.data_type.size();
        for g0 in 0..grid[0] {
            for g1 in 0..grid[1] {
                if (g0, g1) == (grid[0] - 1, grid[1] - 1) {
                    continue;
                }
                let region = array.chunk_region(&[g0, g1]);
                let (start, end) = (region.start(), region.end().unwrap());
                let mut data = Vec::new();
                for i in start[0]..end[0] {
                    let row = usize::try_from(i * self.shape[1]).unwrap();
                    let from = (row + usize::try_from(start[1]).unwrap()) * size;
                    let to = (row + usize::try_from(end[1]).unwrap()) * size;
                    data.extend_from_slice(&expected[from..to]);
                }
                array
                    .write_region_bytes(&region, &data)
                    .unwrap_or_else(|e| panic!("{}: {}", self.name, support::error_chain(&e)));
            }
        }
    }

    /// Reads the array with zarrkit and checks its format and every
    /// element.
    fn check(&self, store: &Arc<dyn Store>, url: &str) {
        let array = Array::open(Arc::clone(store), &format!("/{}", self.name))
            .unwrap_or_else(|e| panic!("{url} {}: {}", self.name, support::error_chain(&e)));
        assert_eq!(array.format(), self.format, "{url} {}", self.name);
        assert_eq!(array.data_type(), &self.data_type, "{url} {}", self.name);
        assert_eq!(array.shape(), self.shape, "{url} {}", self.name);
        assert_eq!(array.chunk_grid_shape().len(), 2);
        assert_eq!(
            array.regular_chunk_shape(),
            Some(&self.outer()[..]),
            "{url} {}",
            self.name
        );
        let codecs: Vec<String> = array
            .metadata()
            .codecs
            .iter()
            .map(|codec| codec.name.clone())
            .collect();
        assert_eq!(
            codecs.iter().any(|name| name == "sharding_indexed"),
            self.shards.is_some(),
            "{url} {}: {codecs:?}",
            self.name
        );
        let got = array
            .read_region_bytes(&Region::whole(&self.shape))
            .unwrap_or_else(|e| panic!("{url} {}: {}", self.name, support::error_chain(&e)));
        assert!(got == self.expected(), "{url} {}: values differ", self.name);
    }
}

fn run_python(python: &Path, mode: &str, url: &str) {
    let script = support::script("remote_interop.py");
    let args = [script.to_str().unwrap(), mode, url];
    support::run(python, &args, &[]);
}

/// A new S3 prefix on SeaweedFS, its zarrkit store and its URL.
fn seaweedfs() -> Option<(Arc<dyn Store>, String)> {
    let endpoint = server("ZARRKIT_S3_ENDPOINT")?;
    let url = format!("s3://{}/{}", bucket(), unique("interop"));
    let store = open(&url, &s3_options(&endpoint)).unwrap();
    Some((store, url))
}

fn zarr_python() -> Option<std::path::PathBuf> {
    support::python("ZARRKIT_PYTHON", "zarr 3.1 and obstore")
}

#[test]
fn zarrkit_reads_exactly_what_zarr_python_writes_to_seaweedfs() {
    let Some((store, url)) = seaweedfs() else {
        return;
    };
    let Some(python) = zarr_python() else {
        return;
    };
    run_python(&python, "write", &url);
    for case in &CASES {
        case.check(&store, &url);
    }
    store.erase_prefix(&StorePrefix::root()).unwrap();
}

#[test]
fn zarr_python_reads_exactly_what_zarrkit_writes_to_seaweedfs() {
    let Some((store, url)) = seaweedfs() else {
        return;
    };
    let Some(python) = zarr_python() else {
        return;
    };
    for case in &CASES {
        case.write(&store);
    }
    run_python(&python, "read", &url);
    store.erase_prefix(&StorePrefix::root()).unwrap();
}

/// A new directory that nginx serves, and its URL. A plain `create_dir`
/// (not a 0700 temporary directory): nginx's worker must read it.
fn nginx() -> Option<(std::path::PathBuf, String)> {
    let (url, root) = (server("ZARRKIT_HTTP_URL")?, server("ZARRKIT_HTTP_ROOT")?);
    let name = unique("interop");
    let dir = Path::new(&root).join(&name);
    std::fs::create_dir(&dir).unwrap();
    Some((dir, format!("{url}/{name}")))
}

#[test]
fn zarrkit_reads_exactly_over_http_what_zarr_python_writes() {
    let Some((dir, url)) = nginx() else {
        return;
    };
    let Some(python) = zarr_python() else {
        return;
    };
    run_python(&python, "write", dir.to_str().unwrap());
    let store = open(&url, &StoreOptions::new()).unwrap();
    for case in &CASES {
        case.check(&store, &url);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn zarr_python_reads_exactly_over_http_what_zarrkit_writes() {
    let Some((dir, url)) = nginx() else {
        return;
    };
    let Some(python) = zarr_python() else {
        return;
    };
    let local: Arc<dyn Store> = Arc::new(FilesystemStore::new(&dir).unwrap());
    for case in &CASES {
        case.write(&local);
    }
    run_python(&python, "read", &url);
    std::fs::remove_dir_all(&dir).unwrap();
}
