//! What is measured: the array, its values, the codec configurations and the
//! random regions. Shared by every implementation, so they all do the same work.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

/// The chunk edge length (chunks are `CHUNK`³).
pub const CHUNK: u64 = 64;
/// The shard edge length of the `sharded` chain (shards are `SHARD`³).
pub const SHARD: u64 = 256;
/// The inner chunk edge length of the `sharded` chain, and the block edge
/// of the `read_inner` workload.
pub const INNER: u64 = 32;
/// The edge length of each random region read (regions are `REGION`³).
pub const REGION: u64 = 32;
/// How many random regions one `read_regions` repetition reads.
pub const REGION_COUNT: usize = 64;
/// The seed of the region generator: the same regions for both implementations.
pub const REGION_SEED: u64 = 0x5EED_2A22_u64;

/// How many arrays the `hierarchy` chain's group holds.
pub const HIERARCHY_ARRAYS: usize = 1000;

/// The format and codec chain of the array (issue #14's workloads), or the
/// 1000-array hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codecs {
    /// v3, `CHUNK`³ chunks, `bytes` (little endian) + `zstd` (level 3, no
    /// checksum; libzstd's level 0 is its default, 3, so the stores are the
    /// same as the earlier runs' level 0).
    Zstd,
    /// v3, `CHUNK`³ chunks, `bytes` (little endian) only.
    Raw,
    /// v3 `sharding_indexed`: `SHARD`³ shards of `INNER`³ inner chunks,
    /// each `bytes` + `zstd` (level 3, no checksum); index `bytes` +
    /// `crc32c` at the end (issue #5's workload).
    Sharded,
    /// As `Sharded`, the inner chunks `bytes` + `blosc` (lz4 5, byte shuffle).
    ShardedBlosc,
    /// v2, `CHUNK`³ chunks, compressor `zlib` level 1.
    V2Zlib,
    /// v2, `CHUNK`³ chunks, compressor `blosc` (lz4 5, byte shuffle).
    V2Blosc,
    /// v3, `SHARD`³ chunks, `bytes` + `blosc` (blosclz 9, bit shuffle).
    Blosc256,
    /// A group of `HIERARCHY_ARRAYS` small arrays (metadata only).
    Hierarchy,
}

impl Codecs {
    pub const ALL: [Codecs; 8] = [
        Codecs::Zstd,
        Codecs::Raw,
        Codecs::Sharded,
        Codecs::ShardedBlosc,
        Codecs::V2Zlib,
        Codecs::V2Blosc,
        Codecs::Blosc256,
        Codecs::Hierarchy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Codecs::Zstd => "zstd",
            Codecs::Raw => "raw",
            Codecs::Sharded => "sharded",
            Codecs::ShardedBlosc => "sharded_blosc",
            Codecs::V2Zlib => "v2_zlib",
            Codecs::V2Blosc => "v2_blosc",
            Codecs::Blosc256 => "blosc256",
            Codecs::Hierarchy => "hierarchy",
        }
    }

    /// How the table names the chain.
    pub fn label(self) -> String {
        match self {
            Codecs::Zstd => format!("v3 {CHUNK}³ zstd 3"),
            Codecs::Raw => format!("v3 {CHUNK}³ raw"),
            Codecs::Sharded => format!("v3 shards {SHARD}³/{INNER}³ zstd 3"),
            Codecs::ShardedBlosc => format!("v3 shards {SHARD}³/{INNER}³ blosc lz4 5"),
            Codecs::V2Zlib => format!("v2 {CHUNK}³ zlib 1"),
            Codecs::V2Blosc => format!("v2 {CHUNK}³ blosc lz4 5 shuffle"),
            Codecs::Blosc256 => format!("v3 {SHARD}³ blosc blosclz 9 bitshuffle"),
            Codecs::Hierarchy => format!("v3 {HIERARCHY_ARRAYS}-array hierarchy"),
        }
    }

    /// The edge length of the array's chunks (for the sharded chains, its shards).
    pub fn chunk(self, side: u64) -> u64 {
        match self {
            Codecs::Zstd | Codecs::Raw | Codecs::V2Zlib | Codecs::V2Blosc => CHUNK,
            Codecs::Sharded | Codecs::ShardedBlosc | Codecs::Blosc256 => SHARD.min(side),
            Codecs::Hierarchy => 0,
        }
    }

    /// The array's metadata document: its file name under the array's
    /// directory and its text. Every implementation's store gets the same
    /// one (written by the harness), so they encode the same chunks the
    /// same way. `None` for the hierarchy, which each implementation creates.
    pub fn metadata(self, side: u64) -> Option<(&'static str, String)> {
        use serde_json::json;
        let chunk = self.chunk(side);
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        let zstd = json!({"name": "zstd", "configuration": {"level": 3, "checksum": false}});
        let blosc_lz4 = json!({"name": "blosc", "configuration": {
            "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}});
        let sharding = |inner: serde_json::Value| {
            json!({"name": "sharding_indexed", "configuration": {
                "chunk_shape": [INNER, INNER, INNER],
                "codecs": [bytes, inner],
                "index_codecs": [bytes, {"name": "crc32c"}],
                "index_location": "end"}})
        };
        let v2 = |compressor: serde_json::Value| {
            json!({"zarr_format": 2, "shape": [side, side, side], "chunks": [chunk, chunk, chunk],
                "dtype": "<u2", "compressor": compressor, "fill_value": 0, "order": "C",
                "filters": null})
        };
        let codecs = match self {
            Codecs::Zstd => json!([bytes, zstd]),
            Codecs::Raw => json!([bytes]),
            Codecs::Sharded => json!([sharding(zstd)]),
            Codecs::ShardedBlosc => json!([sharding(blosc_lz4)]),
            Codecs::Blosc256 => json!([bytes, {"name": "blosc", "configuration": {
                "cname": "blosclz", "clevel": 9, "shuffle": "bitshuffle", "typesize": 2,
                "blocksize": 0}}]),
            Codecs::V2Zlib => {
                return Some((".zarray", v2(json!({"id": "zlib", "level": 1})).to_string()));
            }
            Codecs::V2Blosc => {
                let blosc = json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1,
                    "blocksize": 0});
                return Some((".zarray", v2(blosc).to_string()));
            }
            Codecs::Hierarchy => return None,
        };
        let document = json!({
            "zarr_format": 3, "node_type": "array", "shape": [side, side, side],
            "data_type": "uint16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk, chunk, chunk]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0, "codecs": codecs, "attributes": {}});
        Some(("zarr.json", document.to_string()))
    }
}

impl FromStr for Codecs {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|c| c.name()).collect();
                format!(
                    "unknown codecs `{s}` (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

impl fmt::Display for Codecs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One measured operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Write the whole array in one call.
    Write,
    /// Read the whole array in one call.
    ReadAll,
    /// Read every `INNER`³ block (for `sharded`, every inner chunk), one
    /// call each, in C order of the blocks.
    ReadInner,
    /// Read `REGION_COUNT` random `REGION`³ regions, one call each.
    ReadRegions,
    /// Create the hierarchy: a group and `HIERARCHY_ARRAYS` arrays.
    Create,
    /// Open the hierarchy's group, list it and open every array.
    List,
    /// Not timed: read the whole array and check every value (the cross-check).
    Verify,
}

impl Workload {
    /// The timed workloads, in the order they run (reads need the write first).
    pub const TIMED: [Workload; 6] = [
        Workload::Write,
        Workload::ReadAll,
        Workload::ReadInner,
        Workload::ReadRegions,
        Workload::Create,
        Workload::List,
    ];

    /// Whether the workload runs for `codecs`: reading inner chunks one by
    /// one is the sharded chains' workload (the zstd one only, to keep the
    /// run short), creating and listing the hierarchy's.
    pub fn applies_to(self, codecs: Codecs) -> bool {
        match self {
            Workload::ReadInner => codecs == Codecs::Sharded,
            Workload::Create | Workload::List => codecs == Codecs::Hierarchy,
            _ => codecs != Codecs::Hierarchy,
        }
    }

    /// Whether the workload also runs from a cold page cache.
    pub fn has_cold(self) -> bool {
        matches!(self, Workload::ReadAll | Workload::ReadRegions)
    }

    pub fn name(self) -> &'static str {
        match self {
            Workload::Write => "write",
            Workload::ReadAll => "read_all",
            Workload::ReadRegions => "read_regions",
            Workload::ReadInner => "read_inner",
            Workload::Create => "create",
            Workload::List => "list",
            Workload::Verify => "verify",
        }
    }

    /// The decoded bytes one repetition moves, for GB/s (0 for the hierarchy).
    pub fn decoded_bytes(self, side: u64) -> u64 {
        let element = std::mem::size_of::<u16>() as u64;
        match self {
            Workload::Write | Workload::ReadAll | Workload::ReadInner | Workload::Verify => {
                side.pow(3) * element
            }
            Workload::ReadRegions => REGION_COUNT as u64 * REGION.pow(3) * element,
            Workload::Create | Workload::List => 0,
        }
    }
}

impl FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::TIMED
            .into_iter()
            .chain([Workload::Verify])
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown workload `{s}` (expected write, read_all, read_inner, read_regions, \
                     create, list or verify)"
                )
            })
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The environment variable that carries `--noise` to the children.
pub const NOISE_VAR: &str = "BENCH_COMPARE_NOISE_BITS";

/// The array's values: `v = (x + 2y + 3z) / 4 + n` (integer division,
/// wrapping to 16 bits), with `x` the fastest-varying (last) index and `z`
/// the slowest, and `n` the top `noise_bits` bits of the splitmix64
/// finaliser of the element's C-order index `(z·side + y)·side + x` (0
/// without noise, the default). Without noise the field is smooth and very
/// compressible (rows repeat each other shifted); each noise bit makes it
/// less so, closer to measured data.
pub struct Pattern {
    side: u64,
    noise_bits: u32,
}

impl Pattern {
    /// The pattern of a `side`³ array, with the noise bits the parent
    /// passed in `NOISE_VAR` (none if unset).
    pub fn new(side: u64) -> Self {
        let noise_bits = std::env::var(NOISE_VAR)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        Self::with_noise(side, noise_bits)
    }

    pub fn with_noise(side: u64, noise_bits: u32) -> Self {
        Self {
            side,
            noise_bits: noise_bits.min(16),
        }
    }

    pub fn value(&self, z: u64, y: u64, x: u64) -> u16 {
        let smooth = ((x + 2 * y + 3 * z) / 4) as u16;
        if self.noise_bits == 0 {
            return smooth;
        }
        let index = (z * self.side + y) * self.side + x;
        smooth.wrapping_add((mix64(index) >> (64 - self.noise_bits)) as u16)
    }

    /// The values of `region`, in C order.
    pub fn generate(&self, region: &[Range<u64>; 3]) -> Vec<u16> {
        let len = region.iter().map(|r| r.end - r.start).product::<u64>() as usize;
        let mut out = Vec::with_capacity(len);
        for z in region[0].clone() {
            for y in region[1].clone() {
                out.extend(region[2].clone().map(|x| self.value(z, y, x)));
            }
        }
        out
    }

    /// The whole array.
    pub fn whole(&self) -> [Range<u64>; 3] {
        [0..self.side, 0..self.side, 0..self.side]
    }

    /// Checks that `data` holds the values of `region` in C order.
    pub fn check(&self, region: &[Range<u64>; 3], data: &[u16]) -> Result<(), String> {
        let len = region.iter().map(|r| r.end - r.start).product::<u64>();
        if data.len() as u64 != len {
            return Err(format!(
                "region {region:?}: {} elements, expected {len}",
                data.len()
            ));
        }
        let mut values = data.iter();
        for i0 in region[0].clone() {
            for i1 in region[1].clone() {
                for i2 in region[2].clone() {
                    let got = *values.next().expect("length checked above");
                    let expected = self.value(i0, i1, i2);
                    if got != expected {
                        return Err(format!(
                            "element [{i0}, {i1}, {i2}] is {got}, expected {expected}"
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// `REGION_COUNT` regions of `REGION`³ inside an array of `side`³, from a
/// fixed seed; most straddle chunk boundaries.
pub fn random_regions(side: u64) -> Vec<[Range<u64>; 3]> {
    let mut state = REGION_SEED;
    let span = side - REGION + 1;
    (0..REGION_COUNT)
        .map(|_| {
            std::array::from_fn(|_| {
                let start = splitmix64(&mut state) % span;
                start..start + REGION
            })
        })
        .collect()
}

/// Every `INNER`³ block of an array of `side`³, in C order of the blocks.
pub fn inner_blocks(side: u64) -> Vec<[Range<u64>; 3]> {
    blocks(side, INNER)
}

/// Every `edge`³ block of an array of `side`³ (the last ones cut at the
/// array's edge), in C order of the blocks.
pub fn blocks(side: u64, edge: u64) -> Vec<[Range<u64>; 3]> {
    let n = side.div_ceil(edge);
    let block = |i: u64| i * edge..((i + 1) * edge).min(side);
    (0..n * n * n)
        .map(|i| [block(i / (n * n)), block(i / n % n), block(i % n)])
        .collect()
}

/// The splitmix64 generator: tiny, fixed, and the same everywhere.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mix64(*state)
}

/// splitmix64's finaliser: a fixed 64-bit hash (peer.py has the same).
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_values_pass_their_own_check_and_a_changed_one_fails() {
        let pattern = Pattern::new(70);
        let region = [3..40, 60..70, 0..70];
        let mut data = pattern.generate(&region);
        assert_eq!(pattern.check(&region, &data), Ok(()));
        data[1234] = data[1234].wrapping_add(1);
        assert!(pattern.check(&region, &data).is_err());
    }

    #[test]
    fn regions_are_fixed_in_bounds_and_mostly_straddle_chunks() {
        let a = random_regions(512);
        assert_eq!(a, random_regions(512));
        assert_eq!(a.len(), REGION_COUNT);
        let mut straddling = 0;
        for region in &a {
            for range in region {
                assert!(range.end <= 512 && range.end - range.start == REGION);
            }
            if region
                .iter()
                .any(|r| r.start / CHUNK != (r.end - 1) / CHUNK)
            {
                straddling += 1;
            }
        }
        assert!(straddling > REGION_COUNT / 2, "{straddling} straddle");
        // peers/peer.py generates the same regions: pinned on both sides.
        assert_eq!(a[0], [478..510, 355..387, 8..40]);
        assert_eq!(a[1], [342..374, 159..191, 267..299]);
    }

    #[test]
    fn noise_changes_the_low_bits_and_is_pinned() {
        let smooth = Pattern::with_noise(64, 0).generate(&[0..1, 0..1, 0..4]);
        let noisy = Pattern::with_noise(64, 4).generate(&[0..1, 0..1, 0..4]);
        assert_eq!(smooth, [0, 0, 0, 0]);
        // peers/peer.py's `plane` gives the same values (pinned on both sides).
        assert_eq!(noisy, [0, 5, 13, 1]);
        let region = [5..9, 60..64, 1..30];
        let pattern = Pattern::with_noise(64, 4);
        assert_eq!(pattern.check(&region, &pattern.generate(&region)), Ok(()));
    }

    #[test]
    fn pattern_is_not_constant_within_a_chunk() {
        let pattern = Pattern::new(64);
        let data = pattern.generate(&pattern.whole());
        let distinct: std::collections::BTreeSet<u16> = data.iter().copied().collect();
        assert_eq!(distinct.len(), (63 + 2 * 63 + 3 * 63) / 4 + 1);
        assert_eq!(data[64 * 64 * 64 - 1], 94);
        // z = 1, y = 2, x = 3: (3 + 4 + 3) / 4.
        assert_eq!(data[64 * 64 + 2 * 64 + 3], 2);
    }
}
