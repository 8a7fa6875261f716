//! Selection reads through `MemoryStore`: a `uint16` array of 128³ in 32³
//! chunks with `bytes` + `zstd` (the builder's defaults), and its sharded
//! form (one 128³ shard of 32³ inner chunks): the whole array (a box: the
//! region path, for comparison), a strided read
//! (`::2, ::2, ::2`), a negative-step read of one plane (`5, ::-1, ::-1`),
//! 10,000 random points (`vindex`), an orthogonal selection of 32 × 32 × 32
//! random indices, and a boolean mask of 1 % density.

use std::sync::Arc;
use zarrkit::metadata::DataType;
use zarrkit::store::MemoryStore;
use zarrkit::{Array, Region, Selection, SelectionItem};

fn main() {
    divan::main();
}

const SIDE: u64 = 128;
const CHUNK: u64 = 32;
const N: usize = (SIDE * SIDE * SIDE) as usize;

/// A deterministic generator (SplitMix64) for indices.
fn random(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn setup(sharded: bool) -> Array {
    let mut builder = Array::builder(&[SIDE; 3], DataType::UInt16, &[CHUNK; 3]);
    if sharded {
        let sharding = zarrkit::metadata::ExtensionObject::with_configuration(
            "sharding_indexed",
            serde_json::from_str(
                r#"{"chunk_shape": [32, 32, 32],
                    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                               {"name": "zstd", "configuration": {"level": 0, "checksum": false}}],
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}"#,
            )
            .expect("valid JSON"),
        );
        builder = Array::builder(&[SIDE; 3], DataType::UInt16, &[SIDE; 3])
            .codecs_metadata(vec![sharding]);
    }
    let array = builder
        .create(Arc::new(MemoryStore::new()), "/bench")
        .expect("create array");
    let data: Vec<u16> = (0..N).map(|i| (i % 65_521) as u16).collect();
    array
        .write_region(&Region::whole(&[SIDE; 3]), &data)
        .expect("write");
    array
}

fn selection(name: &str) -> Selection {
    let mut seed = 7;
    let mut indices =
        |n: usize| -> Vec<i64> { (0..n).map(|_| (random(&mut seed) % SIDE) as i64).collect() };
    match name {
        "whole" => Selection::all(),
        "strided" => Selection::parse("::2, ::2, ::2").expect("valid"),
        "reversed_plane" => Selection::parse("5, ::-1, ::-1").expect("valid"),
        "points" => Selection::vectorized(vec![
            SelectionItem::indices(indices(10_000)),
            SelectionItem::indices(indices(10_000)),
            SelectionItem::indices(indices(10_000)),
        ]),
        "orthogonal" => Selection::orthogonal(vec![
            SelectionItem::indices(indices(32)),
            SelectionItem::indices(indices(32)),
            SelectionItem::indices(indices(32)),
        ]),
        _ => Selection::new(vec![SelectionItem::Mask {
            shape: vec![SIDE; 3],
            values: (0..N)
                .map(|_| random(&mut seed).is_multiple_of(100))
                .collect(),
        }]),
    }
}

const NAMES: [&str; 6] = [
    "whole",
    "strided",
    "reversed_plane",
    "points",
    "orthogonal",
    "mask",
];

#[divan::bench(args = NAMES)]
fn read_selection(bencher: divan::Bencher, name: &str) {
    let array = setup(false);
    let selection = selection(name);
    bencher.bench(|| {
        array
            .read_selection::<u16>(divan::black_box(&selection))
            .expect("read")
    });
}

#[divan::bench(args = NAMES)]
fn read_selection_sharded(bencher: divan::Bencher, name: &str) {
    let array = setup(true);
    let selection = selection(name);
    bencher.bench(|| {
        array
            .read_selection::<u16>(divan::black_box(&selection))
            .expect("read")
    });
}
