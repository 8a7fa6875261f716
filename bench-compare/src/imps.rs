//! The implementations: zarrkit and zarrs in this binary (behind one small
//! interface: open an array in a filesystem store, write a region, read a
//! region; create and list the hierarchy), and the Python peers, which run
//! `peers/peer.py` in the peers' virtualenv.

use crate::workload::HIERARCHY_ARRAYS;
use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The array's path in its store, for every implementation.
pub const ARRAY_PATH: &str = "/array";

/// Which implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Imp {
    Zarrkit,
    Zarrs,
    Tensorstore,
    /// zarr-python with its own codec pipeline.
    ZarrPython,
    /// zarr-python with the `zarrs` codec pipeline (zarrs-python).
    ZarrPythonZarrs,
}

impl Imp {
    pub const ALL: [Imp; 5] = [
        Imp::Zarrkit,
        Imp::Zarrs,
        Imp::Tensorstore,
        Imp::ZarrPython,
        Imp::ZarrPythonZarrs,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Imp::Zarrkit => "zarrkit",
            Imp::Zarrs => "zarrs",
            Imp::Tensorstore => "tensorstore",
            Imp::ZarrPython => "zarr-python",
            Imp::ZarrPythonZarrs => "zarr-python-zarrs",
        }
    }

    /// A short name for table headers.
    pub fn short(self) -> &'static str {
        match self {
            Imp::Zarrkit => "zarrkit",
            Imp::Zarrs => "zarrs",
            Imp::Tensorstore => "ts",
            Imp::ZarrPython => "zp",
            Imp::ZarrPythonZarrs => "zp+zarrs",
        }
    }

    /// Whether it runs as `peers/peer.py` in Python.
    pub fn is_python(self) -> bool {
        !matches!(self, Imp::Zarrkit | Imp::Zarrs)
    }
}

impl FromStr for Imp {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|i| i.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|i| i.name()).collect();
                format!(
                    "unknown implementation `{s}` (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

impl fmt::Display for Imp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An open `uint16` array of one of the Rust implementations.
pub enum Handle {
    Zarrkit(Box<zarrkit::Array>),
    Zarrs(Box<zarrs::array::Array<zarrs::filesystem::FilesystemStore>>),
}

impl Handle {
    /// Opens the array in `dir` (its metadata written by the harness, or
    /// by whichever implementation wrote it).
    pub fn open(imp: Imp, dir: &Path) -> Result<Self, BoxError> {
        match imp {
            Imp::Zarrkit => Ok(Handle::Zarrkit(Box::new(zarrkit::Array::open(
                zarrkit_store(dir)?,
                ARRAY_PATH,
            )?))),
            Imp::Zarrs => {
                let store = Arc::new(zarrs::filesystem::FilesystemStore::new(dir)?);
                Ok(Handle::Zarrs(Box::new(zarrs::array::Array::open(
                    store, ARRAY_PATH,
                )?)))
            }
            _ => Err(format!("{imp} is not a Rust implementation").into()),
        }
    }

    /// Writes `data` (C order) into `region`.
    pub fn write(&self, region: &[Range<u64>; 3], data: &[u16]) -> Result<(), BoxError> {
        match self {
            Handle::Zarrkit(array) => {
                array.write_region(&zarrkit::Region::from_ranges(region), data)?;
            }
            Handle::Zarrs(array) => {
                array.store_array_subset(region, data)?;
            }
        }
        Ok(())
    }

    /// Reads `region` into a new vector, in C order.
    pub fn read(&self, region: &[Range<u64>; 3]) -> Result<Vec<u16>, BoxError> {
        Ok(match self {
            Handle::Zarrkit(array) => {
                array.read_region::<u16>(&zarrkit::Region::from_ranges(region))?
            }
            Handle::Zarrs(array) => array.retrieve_array_subset::<Vec<u16>>(region)?,
        })
    }
}

/// Creates the hierarchy in `dir` (which must not exist): a root group and
/// `HIERARCHY_ARRAYS` arrays of 64² `uint16` in 32² chunks, metadata only.
pub fn create_hierarchy(imp: Imp, dir: &Path) -> Result<(), BoxError> {
    std::fs::create_dir_all(dir)?;
    match imp {
        Imp::Zarrkit => {
            // zarrkit's batch API (zarr-python 3 has the same,
            // `zarr.create_hierarchy`): one listing checks that no node is
            // at any path, and the documents are written in parallel.
            let root = ("/".to_string(), zarrkit::NewNode::group(Default::default()));
            let arrays = (0..HIERARCHY_ARRAYS).map(|i| {
                let array = zarrkit::Array::builder(
                    &[64, 64],
                    zarrkit::metadata::DataType::UInt16,
                    &[32, 32],
                );
                (format!("/a{i:04}"), zarrkit::NewNode::from(array))
            });
            let created = zarrkit::create_hierarchy(
                zarrkit_store(dir)?,
                std::iter::once(root).chain(arrays),
                false,
            )?;
            if created.len() != HIERARCHY_ARRAYS + 1 {
                return Err(format!("created {} nodes", created.len()).into());
            }
        }
        Imp::Zarrs => {
            let store = Arc::new(zarrs::filesystem::FilesystemStore::new(dir)?);
            zarrs::group::GroupBuilder::new()
                .build(Arc::clone(&store), "/")?
                .store_metadata()?;
            for i in 0..HIERARCHY_ARRAYS {
                zarrs::array::ArrayBuilder::new(
                    vec![64, 64],
                    vec![32, 32],
                    zarrs::array::data_type::uint16(),
                    0u16,
                )
                .build(Arc::clone(&store), &format!("/a{i:04}"))?
                .store_metadata()?;
            }
        }
        _ => return Err(format!("{imp} is not a Rust implementation").into()),
    }
    Ok(())
}

/// Opens the hierarchy's root group, lists it and opens every child;
/// returns how many arrays it found.
pub fn list_hierarchy(imp: Imp, dir: &Path) -> Result<usize, BoxError> {
    Ok(match imp {
        Imp::Zarrkit => {
            let group = zarrkit::Group::open(zarrkit_store(dir)?, "/")?;
            group
                .children()?
                .iter()
                .filter(|n| matches!(n, zarrkit::Node::Array(_)))
                .count()
        }
        Imp::Zarrs => {
            let store = Arc::new(zarrs::filesystem::FilesystemStore::new(dir)?);
            let group = zarrs::group::Group::open(store, "/")?;
            group
                .children(false)?
                .iter()
                .filter(|n| matches!(n.metadata(), zarrs::node::NodeMetadata::Array(_)))
                .count()
        }
        _ => return Err(format!("{imp} is not a Rust implementation").into()),
    })
}

fn zarrkit_store(dir: &Path) -> Result<Arc<dyn zarrkit::store::Store>, BoxError> {
    Ok(Arc::new(zarrkit::store::FilesystemStore::new(dir)?))
}
