//! What is measured: the array, its values, the codec configurations and the
//! random regions. Shared by both implementations, so they do the same work.

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

/// The codec chain of the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codecs {
    /// `bytes` (little endian) + `zstd` (level 0, no checksum).
    Zstd,
    /// `bytes` (little endian) only.
    Raw,
    /// `sharding_indexed`: `SHARD`³ shards of `INNER`³ inner chunks, each
    /// `bytes` + `zstd` (level 0, no checksum); index `bytes` + `crc32c` at
    /// the end (issue #5's workload).
    Sharded,
}

impl Codecs {
    pub const ALL: [Codecs; 3] = [Codecs::Zstd, Codecs::Raw, Codecs::Sharded];

    pub fn name(self) -> &'static str {
        match self {
            Codecs::Zstd => "zstd",
            Codecs::Raw => "raw",
            Codecs::Sharded => "sharded",
        }
    }

    /// The edge length of the array's chunks (for `sharded`, its shards).
    pub fn chunk(self, side: u64) -> u64 {
        match self {
            Codecs::Zstd | Codecs::Raw => CHUNK,
            Codecs::Sharded => SHARD.min(side),
        }
    }
}

impl FromStr for Codecs {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("unknown codecs `{s}` (expected zstd, raw or sharded)"))
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
    /// Read `REGION_COUNT` random `REGION`³ regions, one call each.
    ReadRegions,
    /// Read every `INNER`³ block (for `sharded`, every inner chunk), one
    /// call each, in C order of the blocks.
    ReadInner,
    /// Not timed: read the whole array and check every value (the cross-check).
    Verify,
}

impl Workload {
    /// The timed workloads, in the order they run (reads need the write first).
    pub const TIMED: [Workload; 4] = [
        Workload::Write,
        Workload::ReadAll,
        Workload::ReadInner,
        Workload::ReadRegions,
    ];

    /// Whether the workload runs for `codecs` by default: reading inner
    /// chunks one by one is the sharded chain's workload.
    pub fn applies_to(self, codecs: Codecs) -> bool {
        self != Workload::ReadInner || codecs == Codecs::Sharded
    }

    pub fn name(self) -> &'static str {
        match self {
            Workload::Write => "write",
            Workload::ReadAll => "read_all",
            Workload::ReadRegions => "read_regions",
            Workload::ReadInner => "read_inner",
            Workload::Verify => "verify",
        }
    }

    /// The decoded bytes one repetition moves, for GB/s.
    pub fn decoded_bytes(self, side: u64) -> u64 {
        let element = std::mem::size_of::<u16>() as u64;
        match self {
            Workload::Write | Workload::ReadAll | Workload::ReadInner | Workload::Verify => {
                side.pow(3) * element
            }
            Workload::ReadRegions => REGION_COUNT as u64 * REGION.pow(3) * element,
        }
    }
}

impl FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [
            Workload::Write,
            Workload::ReadAll,
            Workload::ReadRegions,
            Workload::ReadInner,
            Workload::Verify,
        ]
        .into_iter()
        .find(|w| w.name() == s)
        .ok_or_else(|| {
            format!(
                "unknown workload `{s}` (expected write, read_all, read_inner, read_regions or verify)"
            )
        })
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The array's values: `v = (x + 2y + 3z) / 4` (integer division, wrapping
/// to 16 bits), with `x` the fastest-varying (last) index and `z` the
/// slowest. Smooth and compressible: rows repeat each other shifted.
pub struct Pattern {
    side: u64,
}

impl Pattern {
    pub fn new(side: u64) -> Self {
        Self { side }
    }

    fn value(z: u64, y: u64, x: u64) -> u16 {
        ((x + 2 * y + 3 * z) / 4) as u16
    }

    /// The values of `region`, in C order.
    pub fn generate(&self, region: &[Range<u64>; 3]) -> Vec<u16> {
        let len = region.iter().map(|r| r.end - r.start).product::<u64>() as usize;
        let mut out = Vec::with_capacity(len);
        for z in region[0].clone() {
            for y in region[1].clone() {
                out.extend(region[2].clone().map(|x| Self::value(z, y, x)));
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
                    let expected = Self::value(i0, i1, i2);
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
    let n = side / INNER;
    let block = |i: u64| i * INNER..(i + 1) * INNER;
    (0..n * n * n)
        .map(|i| [block(i / (n * n)), block(i / n % n), block(i % n)])
        .collect()
}

/// The splitmix64 generator: tiny, fixed, and the same everywhere.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
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
