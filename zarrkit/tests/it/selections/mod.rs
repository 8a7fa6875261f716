//! Selections with NumPy's semantics: random selections of every mode on
//! random arrays (regular, rectilinear and sharded grids; fixed-size and
//! string elements) against a plain reference model (`model.rs`), NumPy's
//! documented edge cases, and the errors users read.

mod model;
mod tables;

use proptest::prelude::*;
use serde_json::json;
use std::sync::Arc;
use zarrkit::metadata::{ChunkGrid, DataType, ExtensionObject};
use zarrkit::store::MemoryStore;
use zarrkit::{Array, Region, Selection, SelectionItem, SelectionMode};

/// A small deterministic generator (SplitMix64), so one proptest seed
/// builds a whole case of dependent choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// How the test array is chunked.
#[derive(Clone, Copy, Debug)]
enum Grid {
    Regular,
    Rectilinear,
    Sharded,
}

/// A test array: its shape, the chunk edge lengths per dimension (for the
/// model's block selections), and the array.
struct Case {
    shape: Vec<u64>,
    edges: Vec<Vec<u64>>,
    array: Array,
}

fn make_array(rng: &mut Rng, grid: Grid, data_type: DataType) -> Case {
    let ndim = rng.below(4) as usize;
    let shape: Vec<u64> = (0..ndim)
        .map(|_| {
            if rng.chance(8) {
                0
            } else {
                rng.range(1, 7) as u64
            }
        })
        .collect();
    let store = Arc::new(MemoryStore::new());
    let strings = data_type == DataType::String;
    let element_codec = if strings {
        json!({"name": "vlen-utf8"})
    } else {
        json!({"name": "bytes", "configuration": {"endian": "little"}})
    };
    let (builder, edges, codecs) = match grid {
        Grid::Regular | Grid::Sharded => {
            let sharded = matches!(grid, Grid::Sharded);
            // Shards of 2 × the inner chunks, inner chunks of 1..=2.
            let inner: Vec<u64> = (0..ndim).map(|_| rng.range(1, 2) as u64).collect();
            let chunk: Vec<u64> = if sharded {
                inner.iter().map(|i| i * 2).collect()
            } else {
                (0..ndim).map(|_| rng.range(1, 4) as u64).collect()
            };
            let edges = chunk
                .iter()
                .zip(&shape)
                .map(|(&c, &n)| vec![c; n.div_ceil(c).max(1) as usize])
                .collect();
            let codecs = if sharded {
                vec![json!({"name": "sharding_indexed", "configuration": {
                    "chunk_shape": inner,
                    "codecs": [element_codec],
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                }})]
            } else {
                vec![element_codec]
            };
            (Array::builder(&shape, data_type, &chunk), edges, codecs)
        }
        Grid::Rectilinear => {
            let edges: Vec<Vec<u64>> = shape
                .iter()
                .map(|&n| {
                    let mut e = Vec::new();
                    let mut total = 0;
                    while total < n.max(1) {
                        let len = rng.range(1, 4) as u64;
                        e.push(len);
                        total += len;
                    }
                    e
                })
                .collect();
            let grid = ChunkGrid::rectilinear(&edges).unwrap();
            let builder = Array::builder(&shape, data_type, &[]).chunk_grid(grid);
            (builder, edges, vec![element_codec])
        }
    };
    let codecs: Vec<ExtensionObject> = codecs
        .into_iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap().to_string();
            match c.get("configuration") {
                Some(serde_json::Value::Object(config)) => {
                    ExtensionObject::with_configuration(name, config.clone().into_iter().collect())
                }
                _ => ExtensionObject::new(name),
            }
        })
        .collect();
    let builder = builder.codecs_metadata(codecs);
    let builder = if strings {
        builder
    } else {
        builder.fill_value(7u16)
    };
    let array = builder.create(store, "/a").unwrap();
    Case {
        shape,
        edges,
        array,
    }
}

fn index_values(rng: &mut Rng, len: u64, n: usize) -> Vec<i64> {
    (0..n)
        .map(|_| {
            if len == 0 || rng.chance(3) {
                // Sometimes out of bounds: both sides must refuse it.
                rng.range(-(len as i64) - 2, len as i64 + 1)
            } else {
                rng.range(-(len as i64), len as i64 - 1)
            }
        })
        .collect()
}

fn random_slice(rng: &mut Rng, len: u64) -> SelectionItem {
    let len = len as i64;
    let bound = |rng: &mut Rng| rng.chance(70).then(|| rng.range(-len - 3, len + 3));
    let start = bound(rng);
    let stop = bound(rng);
    let step = rng.chance(70).then(|| {
        let s = rng.range(1, 3);
        if rng.chance(50) { -s } else { s }
    });
    SelectionItem::slice(start, stop, step)
}

/// A random selection of `mode` for an array of `shape`, mostly valid.
fn random_selection(rng: &mut Rng, mode: SelectionMode, shape: &[u64]) -> Selection {
    let ndim = shape.len();
    let broadcast_len = rng.range(0, 3) as u64;
    let array_shape = |rng: &mut Rng| -> Vec<u64> {
        match rng.below(5) {
            0 => vec![1],
            1 => vec![],
            2 => vec![2, broadcast_len],
            3 => vec![2, 1],
            _ => vec![broadcast_len],
        }
    };
    match mode {
        SelectionMode::Basic | SelectionMode::Orthogonal => {
            let given = rng.below(ndim as u64 + 2) as usize;
            let mut items = Vec::new();
            let mut d = 0;
            let ellipsis_at = rng.chance(40).then(|| rng.below(given as u64 + 1) as usize);
            for k in 0..given {
                if ellipsis_at == Some(k) {
                    items.push(SelectionItem::Ellipsis);
                }
                if mode == SelectionMode::Basic && rng.chance(10) {
                    items.push(SelectionItem::NewAxis);
                }
                let len = shape.get(d).copied().unwrap_or(3);
                let item = match rng.below(5) {
                    0 => SelectionItem::Index(index_values(rng, len, 1)[0]),
                    1 | 2 => random_slice(rng, len),
                    3 => {
                        let s = if mode == SelectionMode::Orthogonal {
                            vec![rng.below(4)]
                        } else {
                            array_shape(rng)
                        };
                        let n = s.iter().product::<u64>() as usize;
                        SelectionItem::Indices {
                            values: index_values(rng, len, n),
                            shape: s,
                        }
                    }
                    _ => {
                        // A mask over one dimension, sometimes two, sometimes the wrong length.
                        let dims = if mode == SelectionMode::Basic && d + 1 < ndim && rng.chance(30)
                        {
                            2
                        } else {
                            1
                        };
                        let mut s: Vec<u64> = (0..dims)
                            .map(|j| shape.get(d + j).copied().unwrap_or(2))
                            .collect();
                        if rng.chance(5) {
                            s[0] += 1;
                        }
                        let n = s.iter().product::<u64>() as usize;
                        let values = (0..n).map(|_| rng.chance(50)).collect();
                        d += dims - 1;
                        SelectionItem::Mask { shape: s, values }
                    }
                };
                items.push(item);
                d += 1;
            }
            if ellipsis_at == Some(given) {
                items.push(SelectionItem::Ellipsis);
            }
            Selection::with_mode(mode, items)
        }
        SelectionMode::Vectorized => {
            if ndim > 0 && rng.chance(20) {
                let n = shape.iter().product::<u64>() as usize;
                return Selection::vectorized(vec![SelectionItem::Mask {
                    shape: shape.to_vec(),
                    values: (0..n).map(|_| rng.chance(40)).collect(),
                }]);
            }
            let given = if rng.chance(90) {
                ndim
            } else {
                rng.below(ndim as u64 + 2) as usize
            };
            Selection::vectorized(
                (0..given)
                    .map(|d| {
                        let len = shape.get(d).copied().unwrap_or(3);
                        if rng.chance(20) {
                            SelectionItem::Index(index_values(rng, len, 1)[0])
                        } else {
                            let s = array_shape(rng);
                            let n = s.iter().product::<u64>() as usize;
                            SelectionItem::Indices {
                                values: index_values(rng, len, n),
                                shape: s,
                            }
                        }
                    })
                    .collect(),
            )
        }
        SelectionMode::Blocks => {
            let given = rng.below(ndim as u64 + 1) as usize;
            let mut items: Vec<SelectionItem> = (0..given)
                .map(|_| {
                    if rng.chance(50) {
                        SelectionItem::Index(rng.range(-3, 3))
                    } else {
                        let b = |rng: &mut Rng| rng.chance(60).then(|| rng.range(-4, 4));
                        SelectionItem::slice(b(rng), b(rng), None)
                    }
                })
                .collect();
            if rng.chance(30) {
                items.insert(
                    rng.below(given as u64 + 1) as usize,
                    SelectionItem::Ellipsis,
                );
            }
            Selection::blocks(items)
        }
    }
}

fn flat(coords: &[u64], shape: &[u64]) -> usize {
    coords
        .iter()
        .zip(shape)
        .fold(0, |acc, (&c, &n)| acc * n as usize + c as usize)
}

const MODES: [SelectionMode; 4] = [
    SelectionMode::Basic,
    SelectionMode::Orthogonal,
    SelectionMode::Vectorized,
    SelectionMode::Blocks,
];
const GRIDS: [Grid; 3] = [Grid::Regular, Grid::Rectilinear, Grid::Sharded];

/// One random case: fill an array, read a random selection and compare
/// with the model, write random values through another and compare the
/// whole array with the model's.
fn check_case(seed: u64, strings: bool) {
    let mut rng = Rng(seed);
    let grid = GRIDS[rng.below(3) as usize];
    let data_type = if strings {
        DataType::String
    } else {
        DataType::UInt16
    };
    let Case {
        shape,
        edges,
        array,
    } = make_array(&mut rng, grid, data_type);
    let n: u64 = shape.iter().product();
    let whole = Region::whole(&shape);
    // Some chunks stay missing (the fill value).
    let mut model: Vec<u16> = (0..n).map(|i| i as u16 + 100).collect();
    if n > 0 {
        let written = Region::new(
            vec![0; shape.len()],
            shape.iter().map(|&s| s.div_ceil(2).max(1).min(s)).collect(),
        );
        let values: Vec<u16> = zarrkit_values(&shape, &written, &model);
        write(&array, &written, &values, strings);
        let fill = if strings { 0 } else { 7 };
        for (i, m) in model.iter_mut().enumerate() {
            if !inside(i, &shape, &written) {
                *m = fill;
            }
        }
    }
    let to_string = |v: u16| {
        if v == 0 && strings {
            String::new()
        } else {
            v.to_string()
        }
    };
    for _ in 0..3 {
        let mode = MODES[rng.below(4) as usize];
        let selection = random_selection(&mut rng, mode, &shape);
        let expected = model::select(&selection, &shape, &edges);
        let context = format!("seed {seed} grid {grid:?} shape {shape:?} {selection:?}");
        let Some((out_shape, coords)) = expected else {
            assert!(
                array.selection_shape(&selection).is_err(),
                "{context}: should fail"
            );
            continue;
        };
        assert_eq!(
            array.selection_shape(&selection).unwrap(),
            out_shape,
            "{context}"
        );
        let want: Vec<u16> = coords.iter().map(|c| model[flat(c, &shape)]).collect();
        if strings {
            let got = array.read_selection_strings(&selection).unwrap();
            let want: Vec<String> = want.iter().map(|&v| to_string(v)).collect();
            assert_eq!(got, want, "{context}");
        } else {
            assert_eq!(
                array.read_selection::<u16>(&selection).unwrap(),
                want,
                "{context}"
            );
        }
        // Write new values through the selection; duplicates keep the last.
        let values: Vec<u16> = (0..coords.len())
            .map(|_| rng.range(1000, 2000) as u16)
            .collect();
        if strings {
            let v: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            array.write_selection_strings(&selection, &v).unwrap();
        } else {
            array.write_selection(&selection, &values).unwrap();
        }
        for (c, &v) in coords.iter().zip(&values) {
            model[flat(c, &shape)] = v;
        }
        if strings {
            let got = array.read_strings(&whole).unwrap();
            let want: Vec<String> = model.iter().map(|&v| to_string(v)).collect();
            assert_eq!(got, want, "{context} after writing {values:?}");
        } else {
            assert_eq!(
                array.read_region::<u16>(&whole).unwrap(),
                model,
                "{context} after writing {values:?}"
            );
        }
    }
}

fn inside(i: usize, shape: &[u64], region: &Region) -> bool {
    let mut rest = i as u64;
    for d in (0..shape.len()).rev() {
        let c = rest % shape[d];
        rest /= shape[d];
        if c < region.start()[d] || c >= region.start()[d] + region.shape()[d] {
            return false;
        }
    }
    true
}

fn zarrkit_values(shape: &[u64], region: &Region, model: &[u16]) -> Vec<u16> {
    (0..model.len())
        .filter(|&i| inside(i, shape, region))
        .map(|i| model[i])
        .collect()
}

fn write(array: &Array, region: &Region, values: &[u16], strings: bool) {
    if strings {
        let v: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        array.write_strings(region, &v).unwrap();
    } else {
        array.write_region(region, values).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Every mode, every grid, fixed-size elements: reads and writes agree
    /// with the model.
    #[test]
    fn selections_match_the_model(seed in any::<u64>()) {
        check_case(seed, false);
    }

    /// The same with variable-length strings.
    #[test]
    fn string_selections_match_the_model(seed in any::<u64>()) {
        check_case(seed, true);
    }
}
