//! The two implementations behind one small interface: create or open an
//! array in a filesystem store, write a region, read a region.

use crate::workload::{Codecs, INNER};
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
                            &[codecs.chunk(side); 3],
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
                let zstd: Arc<dyn zarrs::array::BytesToBytesCodecTraits> =
                    Arc::new(zarrs::array::codec::ZstdCodec::new(0, false));
                let bytes = Arc::new(zarrs::array::codec::BytesCodec::little());
                let mut builder = zarrs::array::ArrayBuilder::new(
                    vec![side; 3],
                    vec![codecs.chunk(side); 3],
                    zarrs::array::data_type::uint16(),
                    0u16,
                );
                match codecs {
                    Codecs::Zstd => {
                        builder
                            .array_to_bytes_codec(bytes)
                            .bytes_to_bytes_codecs(vec![zstd]);
                    }
                    Codecs::Raw => {
                        builder.array_to_bytes_codec(bytes);
                    }
                    Codecs::Sharded => {
                        // zarrs's default index codecs are bytes + crc32c,
                        // its default index location the end: as zarrkit's (the index
                        // `bytes` codec is made little endian explicitly).
                        let inner = std::num::NonZeroU64::new(INNER).expect("non-zero");
                        let mut sharding = zarrs::array::codec::ShardingCodecBuilder::new(
                            vec![inner; 3].into(),
                            &zarrs::array::data_type::uint16(),
                        );
                        sharding.index_array_to_bytes_codec(Arc::new(
                            zarrs::array::codec::BytesCodec::little(),
                        ));
                        sharding
                            .array_to_bytes_codec(bytes)
                            .bytes_to_bytes_codecs(vec![zstd]);
                        builder.array_to_bytes_codec(Arc::new(sharding.build()));
                    }
                }
                let array = builder.build(store, ARRAY_PATH)?;
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
    let bytes = ExtensionObject::with_configuration("bytes", bytes);
    let mut zstd = JsonMap::new();
    zstd.insert("level".into(), 0.into());
    zstd.insert("checksum".into(), false.into());
    let zstd = ExtensionObject::with_configuration("zstd", zstd);
    match codecs {
        Codecs::Zstd => vec![bytes, zstd],
        Codecs::Raw => vec![bytes],
        Codecs::Sharded => {
            let to_json = zarrkit::format::v3::extension_to_json;
            let mut sharding = JsonMap::new();
            sharding.insert("chunk_shape".into(), vec![INNER; 3].into());
            sharding.insert(
                "codecs".into(),
                vec![to_json(&bytes), to_json(&zstd)].into(),
            );
            sharding.insert(
                "index_codecs".into(),
                vec![to_json(&bytes), serde_json::json!({"name": "crc32c"})].into(),
            );
            sharding.insert("index_location".into(), "end".into());
            vec![ExtensionObject::with_configuration(
                "sharding_indexed",
                sharding,
            )]
        }
    }
}
