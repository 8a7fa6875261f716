//! The two implementations behind one small interface: create or open an
//! array in a filesystem store, write a region, read a region.

use crate::workload::{CHUNK, Codecs};
use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The array's path in its store, for both implementations.
const ARRAY_PATH: &str = "/array";

/// Which implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Imp {
    Zarrkit,
    Zarrs,
}

impl Imp {
    pub const ALL: [Imp; 2] = [Imp::Zarrkit, Imp::Zarrs];

    pub fn name(self) -> &'static str {
        match self {
            Imp::Zarrkit => "zarrkit",
            Imp::Zarrs => "zarrs",
        }
    }
}

impl FromStr for Imp {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|i| i.name() == s)
            .ok_or_else(|| format!("unknown implementation `{s}` (expected zarrkit or zarrs)"))
    }
}

impl fmt::Display for Imp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An open `uint16` array of either implementation.
pub enum Handle {
    Zarrkit(Box<zarrkit::Array>),
    Zarrs(Box<zarrs::array::Array<zarrs::filesystem::FilesystemStore>>),
}

impl Handle {
    /// Opens the array in `dir`, creating it (metadata only) first if it is
    /// not there. An existing array keeps its chunks, so a write repetition
    /// overwrites the chunk files of the one before.
    pub fn open_or_create(
        imp: Imp,
        dir: &Path,
        side: u64,
        codecs: Codecs,
    ) -> Result<Self, BoxError> {
        std::fs::create_dir_all(dir)?;
        match imp {
            Imp::Zarrkit => {
                let store = zarrkit_store(dir)?;
                match zarrkit::Array::open(Arc::clone(&store), ARRAY_PATH) {
                    Ok(array) => Ok(Handle::Zarrkit(Box::new(array))),
                    Err(zarrkit::Error::NodeNotFound { .. }) => {
                        let array = zarrkit::Array::builder(
                            &[side; 3],
                            zarrkit::metadata::DataType::UInt16,
                            &[CHUNK; 3],
                        )
                        .codecs_metadata(zarrkit_codecs(codecs))
                        .create(store, ARRAY_PATH)?;
                        Ok(Handle::Zarrkit(Box::new(array)))
                    }
                    Err(e) => Err(e.into()),
                }
            }
            Imp::Zarrs => {
                let store = Arc::new(zarrs::filesystem::FilesystemStore::new(dir)?);
                let bytes_to_bytes: Vec<Arc<dyn zarrs::array::BytesToBytesCodecTraits>> =
                    match codecs {
                        Codecs::Zstd => {
                            vec![Arc::new(zarrs::array::codec::ZstdCodec::new(0, false))]
                        }
                        Codecs::Raw => vec![],
                    };
                let array = zarrs::array::ArrayBuilder::new(
                    vec![side; 3],
                    vec![CHUNK; 3],
                    zarrs::array::data_type::uint16(),
                    0u16,
                )
                .array_to_bytes_codec(Arc::new(zarrs::array::codec::BytesCodec::little()))
                .bytes_to_bytes_codecs(bytes_to_bytes)
                .build(store, ARRAY_PATH)?;
                array.store_metadata()?;
                Ok(Handle::Zarrs(Box::new(array)))
            }
        }
    }

    /// Opens the array in `dir`, whichever implementation wrote it.
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

fn zarrkit_store(dir: &Path) -> Result<Arc<dyn zarrkit::store::Store>, BoxError> {
    Ok(Arc::new(zarrkit::store::FilesystemStore::new(dir)?))
}

fn zarrkit_codecs(codecs: Codecs) -> Vec<zarrkit::metadata::ExtensionObject> {
    use zarrkit::metadata::{ExtensionObject, JsonMap};
    let mut bytes = JsonMap::new();
    bytes.insert("endian".into(), "little".into());
    let mut chain = vec![ExtensionObject::with_configuration("bytes", bytes)];
    if codecs == Codecs::Zstd {
        let mut zstd = JsonMap::new();
        zstd.insert("level".into(), 0.into());
        zstd.insert("checksum".into(), false.into());
        chain.push(ExtensionObject::with_configuration("zstd", zstd));
    }
    chain
}
