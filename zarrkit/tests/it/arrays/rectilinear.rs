//! The registered `rectilinear` chunk grid extension
//! (`extensions/chunk-grids/rectilinear`): every spelling of the edge
//! lengths, the compact form written, reads and writes crossing irregular
//! chunk boundaries, sharding inside irregular chunks, resizing, and the
//! formats that cannot hold the grid refusing it.
//!
//! No interop test: neither zarr-python 3.1.6 (`zarr.core.chunk_grids` has
//! only `RegularChunkGrid`) nor tensorstore 0.1.86 implements the grid. The
//! fixtures in `testdata/fixtures/v3/rectilinear.zarr` are instead written
//! independently with numpy from the README's two examples
//! (`testdata/generate/rectilinear_fixtures.py`; the corpus test checks
//! their values), and the property tests below compare random writes and
//! reads on random irregular grids with an in-memory model, over both
//! `MemoryStore` and `FilesystemStore`. zarrs 0.23 does implement the grid;
//! it was checked by hand in both directions (zarrs reads these fixtures and
//! zarrkit-written plain and sharded rectilinear arrays, zarrkit reads a
//! zarrs-written one), but the test command never builds zarrs, so that
//! check is not repeated here.

use proptest::prelude::*;
use serde_json::{Value, json};
use std::num::NonZeroU64;
use std::path::Path;
use std::sync::Arc;
use zarrkit::codec::sharding::ShardingCodec;
use zarrkit::codec::{Codec, bytes::BytesCodec, zstd::ZstdCodec};
use zarrkit::format::{ZarrFormat, v3};
use zarrkit::metadata::{
    ChunkEdgeLengths, ChunkGrid, DataType, EdgeRun, ExtensionObject, NodeMetadata,
};
use zarrkit::migrate::{self, MigrateError};
use zarrkit::store::{FilesystemStore, MemoryStore, Store, StoreKey};
use zarrkit::{Array, Error, Group, Region};

fn fixture_store() -> Arc<dyn Store> {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures/v3/rectilinear.zarr");
    Arc::new(FilesystemStore::new(root).unwrap())
}

/// A `MemoryStore` holding a copy of the fixture store, to write into.
fn fixture_copy() -> Arc<dyn Store> {
    let src = fixture_store();
    let dst = MemoryStore::new();
    for key in src.list().unwrap() {
        dst.set(&key, &src.get(&key, None).unwrap().unwrap())
            .unwrap();
    }
    Arc::new(dst)
}

fn run(length: u64, count: u64) -> EdgeRun {
    EdgeRun {
        length: NonZeroU64::new(length).unwrap(),
        count: NonZeroU64::new(count).unwrap(),
    }
}

/// The README's "Example" document, with its comments removed.
fn readme_example_document() -> Value {
    json!({
        "zarr_format": 3, "node_type": "array",
        "shape": [6, 6, 6, 6, 6], "data_type": "uint8",
        "chunk_grid": {"name": "rectilinear", "configuration": {
            "kind": "inline",
            "chunk_shapes": [4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]
        }},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}]
    })
}

fn parse(doc: &Value) -> Result<NodeMetadata, zarrkit::metadata::MetadataError> {
    v3::parse_node(&serde_json::to_vec(doc).unwrap())
}

#[test]
fn readme_example_reads_every_spelling_of_edge_lengths() {
    let NodeMetadata::Array(array) = parse(&readme_example_document()).unwrap() else {
        panic!("an array");
    };
    let ChunkGrid::Rectilinear { chunk_shapes } = &array.chunk_grid else {
        panic!("a rectilinear grid: {:?}", array.chunk_grid);
    };
    assert_eq!(
        chunk_shapes,
        &[
            ChunkEdgeLengths::Regular(NonZeroU64::new(4).unwrap()),
            ChunkEdgeLengths::Runs(vec![run(1, 1), run(2, 1), run(3, 1)]),
            ChunkEdgeLengths::Runs(vec![run(4, 2)]),
            ChunkEdgeLengths::Runs(vec![run(1, 3), run(3, 1)]),
            ChunkEdgeLengths::Runs(vec![run(4, 3)]),
        ]
    );
    let array = Array::open(fixture_store(), "/readme_example").unwrap();
    // "[4, 4, 4] // explicit list with overflow chunks": the third chunk
    // starts past the array and is not counted.
    assert_eq!(array.chunk_grid_shape(), [2, 3, 2, 4, 2]);
    assert_eq!(array.regular_chunk_shape(), None);
    assert_eq!(
        array.chunk_shape_at(&[1, 2, 1, 3, 2]),
        Some(vec![4, 3, 4, 3, 4])
    );
    assert_eq!(array.chunk_shape_at(&[0, 3, 0, 0, 0]), None);
    assert_eq!(
        array.chunk_region(&[1, 1, 0, 3, 1]),
        Region::new(vec![4, 1, 0, 3, 4], vec![2, 2, 4, 3, 2])
    );
}

#[test]
fn readme_indexing_example_resolves_index_20_15() {
    // README "Indexing": edge lengths [[16, 10], [24, 14]]; "the array index
    // (20, 15) resolves to the chunk grid index (1, 0) and the chunk index
    // (4, 15)". The fixture holds `i * 38 + j` at (i, j).
    let array = Array::open(fixture_store(), "/readme_indexing").unwrap();
    assert_eq!(array.chunk_grid_shape(), [2, 2]);
    assert_eq!(
        array.chunk_region(&[1, 0]),
        Region::new(vec![16, 0], vec![10, 24])
    );
    let chunk = array.read_chunk_bytes(&[1, 0]).unwrap().unwrap();
    let chunk: Vec<i32> = chunk
        .chunks_exact(4)
        .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(chunk.len(), 10 * 24);
    assert_eq!(chunk[4 * 24 + 15], 20 * 38 + 15);
    let one: Vec<i32> = array
        .read_region(&Region::new(vec![20, 15], vec![1, 1]))
        .unwrap();
    assert_eq!(one, [20 * 38 + 15]);
}

#[test]
fn reads_and_writes_cross_irregular_chunk_boundaries_in_the_fixture() {
    let store = fixture_copy();
    let array = Array::open(Arc::clone(&store), "/readme_indexing").unwrap();
    // Rows 14..18 and columns 22..27 touch all four chunks.
    let region = Region::new(vec![14, 22], vec![4, 5]);
    let expected: Vec<i32> = (14..18)
        .flat_map(|i| (22..27).map(move |j| i * 38 + j))
        .collect();
    assert_eq!(array.read_region::<i32>(&region).unwrap(), expected);
    let written: Vec<i32> = (0..20).map(|v| -100 - v).collect();
    array.write_region(&region, &written).unwrap();
    let all: Vec<i32> = array.read_region(&Region::whole(&[26, 38])).unwrap();
    for i in 0..26i32 {
        for j in 0..38i32 {
            let inside = (14..18).contains(&i) && (22..27).contains(&j);
            let want = if inside {
                -100 - ((i - 14) * 5 + (j - 22))
            } else {
                i * 38 + j
            };
            assert_eq!(all[(i * 38 + j) as usize], want, "({i}, {j})");
        }
    }
    // The 5-d README example: a region across every kind of dimension,
    // including the partly-outside overflow chunk of the last one.
    let array = Array::open(Arc::clone(&store), "/readme_example").unwrap();
    let region = Region::new(vec![2, 0, 3, 2, 3], vec![3, 4, 2, 3, 3]);
    let before: Vec<u16> = array.read_region(&region).unwrap();
    let update: Vec<u16> = (0..before.len() as u16).collect();
    array.write_region(&region, &update).unwrap();
    assert_eq!(array.read_region::<u16>(&region).unwrap(), update);
}

#[test]
fn rectilinear_grid_is_written_compactly() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let grid = ChunkGrid::Rectilinear {
        chunk_shapes: vec![
            ChunkEdgeLengths::explicit(&[1, 1, 1, 3]).unwrap(),
            ChunkEdgeLengths::explicit(&[4, 4, 4]).unwrap(),
            ChunkEdgeLengths::Regular(NonZeroU64::new(5).unwrap()),
            ChunkEdgeLengths::explicit(&[2, 3]).unwrap(),
        ],
    };
    Array::builder(&[6, 6, 6, 5], DataType::UInt8, &[])
        .chunk_grid(grid.clone())
        .create(Arc::clone(&store), "/a")
        .unwrap();
    let doc: Value = serde_json::from_slice(
        &store
            .get(&StoreKey::new("a/zarr.json").unwrap(), None)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        doc["chunk_grid"],
        json!({"name": "rectilinear", "configuration": {
            "kind": "inline",
            "chunk_shapes": [[[1, 3], 3], [[4, 3]], 5, [2, 3]]
        }})
    );
    assert_eq!(Array::open(store, "/a").unwrap().chunk_grid(), &grid);
}

/// An edit of a document.
type DocChange = Box<dyn Fn(&mut Value)>;

#[test]
fn invalid_rectilinear_documents_are_refused_naming_the_field() {
    let cases: Vec<(Value, &str)> = vec![
        (
            json!([0, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]),
            "chunk_shapes[0]",
        ),
        (
            json!([4, [1, 0, 5], [[4, 2]], [[1, 3], 3], [4, 4, 4]]),
            "chunk_shapes[1]",
        ),
        (
            json!([4, [1, 2, 3], [[4, 0]], [[1, 3], 3], [4, 4, 4]]),
            "chunk_shapes[2]",
        ),
        (
            json!([4, [1, 2, 3], [[4, 2, 1]], [[1, 3], 3], [4, 4, 4]]),
            "chunk_shapes[2]",
        ),
        (
            json!([4, [1, 2, 3], [[4]], [[1, 3], 3], [4, 4, 4]]),
            "chunk_shapes[2]",
        ),
        (
            json!([4, [1, 2, 3], [[4, 2]], [[1, 3], "3"], [4, 4, 4]]),
            "chunk_shapes[3]",
        ),
        (
            json!([4, [1, 2, 3], [[4, 2]], [[1, 3], 3], -4]),
            "chunk_shapes[4]",
        ),
        (
            json!([4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [[4, 1.5]]]),
            "chunk_shapes[4]",
        ),
        (json!({"a": 1}), "chunk_shapes"),
    ];
    for (chunk_shapes, field) in cases {
        let mut doc = readme_example_document();
        doc["chunk_grid"]["configuration"]["chunk_shapes"] = chunk_shapes.clone();
        let err = parse(&doc)
            .expect_err(&chunk_shapes.to_string())
            .to_string();
        assert!(err.contains(field), "{chunk_shapes}: {err}");
    }
    // Sums short of the shape, the wrong number of dimensions, an unknown
    // kind or member, a missing field, and edge sums past 2^64.
    let cases: Vec<(DocChange, &str)> = vec![
        (
            Box::new(|d| d["chunk_grid"]["configuration"]["chunk_shapes"][1] = json!([1, 2, 2])),
            "dimension 1 sum to `5`, less than its length `6`",
        ),
        (
            Box::new(|d| d["chunk_grid"]["configuration"]["chunk_shapes"][0] = json!([])),
            "dimension 0 sum to `0`",
        ),
        (
            Box::new(|d| d["chunk_grid"]["configuration"]["chunk_shapes"] = json!([4, 4])),
            "`chunk_grid` has 2 dimensions but `shape` has 5",
        ),
        (
            Box::new(|d| d["chunk_grid"]["configuration"]["kind"] = json!("external")),
            "`chunk_grid.configuration.kind`",
        ),
        (
            Box::new(|d| {
                d["chunk_grid"]["configuration"]
                    .as_object_mut()
                    .unwrap()
                    .remove("kind");
            }),
            "`chunk_grid.configuration.kind`",
        ),
        (
            Box::new(|d| d["chunk_grid"]["configuration"]["chunk_shape"] = json!([1])),
            "`chunk_grid.configuration.chunk_shape`",
        ),
        (
            Box::new(|d| {
                d["chunk_grid"]["configuration"]["chunk_shapes"][0] = json!([[u64::MAX, 2], 1]);
            }),
            "sum past 2^64",
        ),
        (
            Box::new(|d| {
                d["chunk_grid"]["configuration"]["chunk_shapes"][0] =
                    json!([[1, u64::MAX], [1, 1]]);
            }),
            "overflows",
        ),
    ];
    for (change, message) in cases {
        let mut doc = readme_example_document();
        change(&mut doc);
        let result = parse(&doc).and_then(|node| match node {
            NodeMetadata::Array(a) => a.validate(),
            NodeMetadata::Group(_) => Ok(()),
        });
        let err = result.expect_err(message).to_string();
        assert!(err.contains(message), "{message}: {err}");
    }
}

#[test]
fn huge_run_length_grids_are_never_expanded() {
    // 10^15 chunks of one element: expanding them would need petabytes.
    let n = 1_000_000_000_000_000u64;
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let grid = ChunkGrid::Rectilinear {
        chunk_shapes: vec![ChunkEdgeLengths::from_runs([run(1, n), run(3, 2)]).unwrap()],
    };
    let array = Array::builder(&[n + 5], DataType::UInt32, &[])
        .chunk_grid(grid)
        .create(store, "/huge")
        .unwrap();
    assert_eq!(array.chunk_grid_shape(), [n + 2]);
    // The last three one-element chunks and the first three-element chunk.
    let region = Region::new(vec![n - 3], vec![5]);
    array.write_region(&region, &[1u32, 2, 3, 4, 5]).unwrap();
    assert_eq!(array.read_region::<u32>(&region).unwrap(), [1, 2, 3, 4, 5]);
    assert_eq!(array.chunk_region(&[n]), Region::new(vec![n], vec![3]));
    assert_eq!(
        array.chunk_region(&[n + 1]),
        Region::new(vec![n + 3], vec![2])
    );
}

/// A sharded codec chain: inner chunks of `inner`, `bytes` + `zstd`.
fn sharding(inner: &[u64]) -> Codec {
    let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
    let zstd = Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()));
    Codec::ArrayToBytes(Arc::new(ShardingCodec::new(inner, vec![bytes, zstd])))
}

#[test]
fn shards_of_irregular_shapes_read_and_write_across_boundaries() {
    // Shards 4, 8, 2 rows by 6, 3 columns, each divisible by 2x3 inner chunks.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let grid = ChunkGrid::rectilinear(&[vec![4, 8, 2], vec![6, 3]]).unwrap();
    let array = Array::builder(&[13, 9], DataType::Int16, &[])
        .chunk_grid(grid)
        .fill_value(-1i16)
        .codecs(vec![sharding(&[2, 3])])
        .create(Arc::clone(&store), "/s")
        .unwrap();
    let mut model = vec![-1i16; 13 * 9];
    let writes = [
        Region::new(vec![3, 2], vec![7, 5]),
        Region::new(vec![0, 0], vec![13, 9]),
        Region::new(vec![11, 5], vec![2, 3]),
        Region::new(vec![1, 1], vec![1, 1]),
    ];
    for (k, region) in writes.iter().enumerate() {
        let data: Vec<i16> = (0..region.num_elements().unwrap() as i16)
            .map(|v| v * 3 + k as i16)
            .collect();
        array.write_region(region, &data).unwrap();
        write_model(&mut model, &[13, 9], region, &data);
        assert_eq!(
            array.read_region::<i16>(&Region::whole(&[13, 9])).unwrap(),
            model,
            "after write {k}"
        );
    }
    assert_eq!(array.inner_chunk_grid_shape(), Some(vec![7, 3]));
    let inner: Vec<i16> = array.read_inner_chunk(&[6, 1]).unwrap();
    assert_eq!(
        inner,
        read_model(&model, &[13, 9], &Region::new(vec![12, 3], vec![1, 3]))
    );
    // A shard edge length that the inner chunks do not divide is refused
    // when the array is opened or created, naming the codec.
    let grid = ChunkGrid::rectilinear(&[vec![4, 5, 4], vec![6, 3]]).unwrap();
    let err = Array::builder(&[13, 9], DataType::Int16, &[])
        .chunk_grid(grid)
        .codecs(vec![sharding(&[2, 3])])
        .create(store, "/bad")
        .unwrap_err();
    assert!(matches!(err, Error::Codecs { .. }), "{err:?}");
    let source = std::error::Error::source(&err).unwrap().to_string();
    assert!(
        source.contains(
            "shard of shape [5, 6]: it is not a multiple of the inner chunk_shape [2, 3]"
        ),
        "{source}"
    );
}

#[test]
fn formats_without_rectilinear_grids_refuse_them_by_name() {
    let grid = ChunkGrid::rectilinear(&[vec![2, 3]]).unwrap();
    for format in [
        ZarrFormat::V2,
        ZarrFormat::V1,
        ZarrFormat::V3Draft2022,
        ZarrFormat::V3Draft2019,
    ] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let err = Array::builder(&[5], DataType::UInt8, &[])
            .chunk_grid(grid.clone())
            .codecs_metadata(vec![ExtensionObject::new("bytes")])
            .format(format)
            .create(Arc::clone(&store), "/")
            .unwrap_err();
        let text = format!("{err} {:?}", std::error::Error::source(&err));
        assert!(text.contains("rectilinear"), "{format}: {text}");
        assert_eq!(store.list().unwrap(), [], "{format}: nothing written");
    }
}

#[test]
fn migrating_a_rectilinear_array_to_v2_is_refused_and_to_v3_keeps_the_grid() {
    let src = fixture_store();
    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    match migrate::plan(Arc::clone(&src), Arc::clone(&dst), ZarrFormat::V2) {
        Err(MigrateError::NotRepresentable { path, what, .. }) => {
            assert!(path.as_str().starts_with("/readme_"), "{path}");
            assert!(what.contains("`rectilinear` chunk grid"), "{what}");
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
    assert_eq!(dst.list().unwrap(), []);
    let plan = migrate::plan(Arc::clone(&src), Arc::clone(&dst), ZarrFormat::V3).unwrap();
    migrate::migrate(&plan, &mut |_| {}).unwrap();
    for node in ["/readme_indexing", "/readme_example"] {
        let (a, b) = (
            Array::open(Arc::clone(&src), node).unwrap(),
            Array::open(Arc::clone(&dst), node).unwrap(),
        );
        assert_eq!(a.chunk_grid(), b.chunk_grid(), "{node}");
        let whole = Region::whole(a.shape());
        assert_eq!(
            a.read_region_bytes(&whole).unwrap(),
            b.read_region_bytes(&whole).unwrap()
        );
    }
}

#[test]
fn resize_keeps_explicit_edges_and_grows_integer_dimensions() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let grid = ChunkGrid::Rectilinear {
        chunk_shapes: vec![
            ChunkEdgeLengths::explicit(&[3, 1, 4]).unwrap(),
            ChunkEdgeLengths::Regular(NonZeroU64::new(2).unwrap()),
        ],
    };
    let mut array = Array::builder(&[7, 3], DataType::UInt8, &[])
        .chunk_grid(grid)
        .codecs_metadata(vec![ExtensionObject::new("bytes")])
        .create(Arc::clone(&store), "/r")
        .unwrap();
    array
        .write_region(&Region::whole(&[7, 3]), &[9u8; 21])
        .unwrap();
    assert_eq!(array.chunk_grid_shape(), [3, 2]);
    let stored = || {
        let mut keys: Vec<String> = store
            .list_prefix(&zarrkit::store::StorePrefix::new("r/c/").unwrap())
            .unwrap()
            .into_iter()
            .map(|k| k.as_str().to_string())
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(stored().len(), 6);
    // Shrinking to 4 rows keeps chunk rows 0 (0..3) and 1 (3..4) only.
    array.resize(&[4, 3]).unwrap();
    assert_eq!(stored(), ["r/c/0/0", "r/c/0/1", "r/c/1/0", "r/c/1/1"]);
    // Growing within the declared edges (3 + 1 + 4 = 8 rows) works; the
    // integer dimension grows without limit.
    array.resize(&[8, 11]).unwrap();
    assert_eq!(array.chunk_grid_shape(), [3, 6]);
    let reopened = Array::open(Arc::clone(&store), "/r").unwrap();
    assert_eq!(reopened.shape(), [8, 11]);
    let col: Vec<u8> = reopened
        .read_region(&Region::new(vec![0, 2], vec![8, 1]))
        .unwrap();
    assert_eq!(col, [9, 9, 9, 9, 0, 0, 0, 0]);
    // Past the explicit edges: refused, naming the dimension; nothing changes.
    let err = array.resize(&[9, 11]).unwrap_err();
    assert!(matches!(err, Error::InvalidMetadata { .. }), "{err:?}");
    let text = format!("{err} {:?}", std::error::Error::source(&err));
    assert!(
        text.contains("dimension 0 sum to `8`, less than its length `9`"),
        "{text}"
    );
    assert_eq!(array.shape(), [8, 11]);
    assert_eq!(
        Array::open(Arc::clone(&store), "/r").unwrap().shape(),
        [8, 11]
    );
}

#[test]
fn strings_cross_irregular_chunk_boundaries() {
    // The variable-length path plans the same pieces, each with its own
    // chunk shape: rows in chunks of 1 and 4, columns of 2, 3 and 2.
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<Arc<dyn Store>> = vec![
        Arc::new(MemoryStore::new()),
        Arc::new(FilesystemStore::new(dir.path()).unwrap()),
    ];
    for store in stores {
        let grid = ChunkGrid::rectilinear(&[vec![1, 4], vec![2, 3, 2]]).unwrap();
        let array = Array::builder(&[5, 7], DataType::String, &[])
            .chunk_grid(grid)
            .fill_value_bytes(zarrkit::metadata::FillValue::new(b"-".to_vec()))
            .create(Arc::clone(&store), "/s")
            .unwrap();
        let mut model: Vec<String> = vec!["-".into(); 35];
        for (k, region) in [
            Region::new(vec![0, 1], vec![3, 5]),
            Region::new(vec![2, 0], vec![3, 7]),
            Region::new(vec![4, 4], vec![1, 1]),
        ]
        .iter()
        .enumerate()
        {
            let values: Vec<String> = (0..region.num_elements().unwrap())
                .map(|i| format!("{k}é{i}{}", "x".repeat(i as usize % 4)))
                .collect();
            array.write_strings(region, &values).unwrap();
            for (value, index) in values.iter().zip(region_indices(region)) {
                model[flat(&[5, 7], &index)] = value.clone();
            }
            assert_eq!(
                array.read_strings(&Region::whole(&[5, 7])).unwrap(),
                model,
                "after write {k}"
            );
        }
        let region = Region::new(vec![0, 1], vec![2, 4]);
        assert_eq!(
            array.read_strings(&region).unwrap(),
            read_model(&model, &[5, 7], &region)
        );
    }
}

fn write_model(model: &mut [i16], shape: &[u64], region: &Region, data: &[i16]) {
    for (k, index) in region_indices(region).into_iter().enumerate() {
        model[flat(shape, &index)] = data[k];
    }
}

fn read_model<T: Clone>(model: &[T], shape: &[u64], region: &Region) -> Vec<T> {
    region_indices(region)
        .into_iter()
        .map(|index| model[flat(shape, &index)].clone())
        .collect()
}

fn flat(shape: &[u64], index: &[u64]) -> usize {
    index
        .iter()
        .zip(shape)
        .fold(0u64, |acc, (&i, &n)| acc * n + i) as usize
}

/// The indices of `region` in C order.
fn region_indices(region: &Region) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new()];
    for d in 0..region.ndim() {
        let (s, n) = (region.start()[d], region.shape()[d]);
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (s..s + n).map(move |i| {
                    let mut v = prefix.clone();
                    v.push(i);
                    v
                })
            })
            .collect();
    }
    out
}

/// A random grid and shape: per dimension, either one integer or 1..5
/// explicit edge lengths, and a length the edges cover (possibly with
/// overflow chunks past it).
fn grid_and_shape() -> impl Strategy<Value = (ChunkGrid, Vec<u64>)> {
    prop::collection::vec(
        prop_oneof![
            (1u64..5, 0u64..12).prop_map(|(step, len)| (
                ChunkEdgeLengths::Regular(NonZeroU64::new(step).unwrap()),
                len
            )),
            (
                prop::collection::vec(1u64..5, 1..5),
                any::<prop::sample::Index>()
            )
                .prop_map(|(edges, cut)| {
                    let total: u64 = edges.iter().sum();
                    let len = cut.index(total as usize + 1) as u64;
                    (ChunkEdgeLengths::explicit(&edges).unwrap(), len)
                }),
        ],
        1..4,
    )
    .prop_map(|dims| {
        let (chunk_shapes, shape) = dims.into_iter().unzip();
        (ChunkGrid::Rectilinear { chunk_shapes }, shape)
    })
}

/// A region inside `shape`, from two random fractions per dimension.
fn region_in(shape: &[u64], picks: &[(prop::sample::Index, prop::sample::Index)]) -> Region {
    let (start, len) = shape
        .iter()
        .zip(picks)
        .map(|(&n, (a, b))| {
            let start = a.index(n as usize + 1) as u64;
            let len = b.index((n - start) as usize + 1) as u64;
            (start, len)
        })
        .unzip();
    Region::new(start, len)
}

type Picks = Vec<(prop::sample::Index, prop::sample::Index)>;

fn picks() -> impl Strategy<Value = Picks> {
    prop::collection::vec(
        (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
        3,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Writes of random regions on random irregular grids, then reads of
    /// random regions, agree with an in-memory model on both store
    /// backends, with a compressed chain (whole-chunk reads) and an
    /// uncompressed one (partial reads of chunks).
    #[test]
    fn random_writes_then_reads_match_a_model(
        (grid, shape) in grid_and_shape(),
        writes in prop::collection::vec(picks(), 1..5),
        reads in prop::collection::vec(picks(), 1..4),
        compressed in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let stores: Vec<Arc<dyn Store>> = vec![
            Arc::new(MemoryStore::new()),
            Arc::new(FilesystemStore::new(dir.path()).unwrap()),
        ];
        let ndim = shape.len();
        for store in stores {
            let mut builder = Array::builder(&shape, DataType::Int16, &[])
                .chunk_grid(grid.clone())
                .fill_value(-7i16);
            if !compressed {
                builder = builder.codecs(vec![Codec::ArrayToBytes(Arc::new(BytesCodec::little()))]);
            }
            let array = builder.create(Arc::clone(&store), "/p").unwrap();
            let total: usize = shape.iter().product::<u64>() as usize;
            let mut model = vec![-7i16; total];
            for (k, pick) in writes.iter().enumerate() {
                let region = region_in(&shape, &pick[..ndim]);
                let n = region.num_elements().unwrap() as usize;
                // Some writes are all fill value, so chunks get erased too.
                let data: Vec<i16> = if k % 3 == 2 {
                    vec![-7; n]
                } else {
                    (0..n).map(|v| (v as i16).wrapping_mul(31).wrapping_add(k as i16)).collect()
                };
                array.write_region(&region, &data).unwrap();
                write_model(&mut model, &shape, &region, &data);
            }
            let array = Array::open(Arc::clone(&store), "/p").unwrap();
            prop_assert_eq!(array.chunk_grid(), &grid);
            for pick in &reads {
                let region = region_in(&shape, &pick[..ndim]);
                prop_assert_eq!(
                    array.read_region::<i16>(&region).unwrap(),
                    read_model(&model, &shape, &region),
                    "region {}", region
                );
            }
            prop_assert_eq!(
                array.read_region::<i16>(&Region::whole(&shape)).unwrap(),
                model
            );
        }
    }

    /// Model → `zarr.json` → model is the identity for rectilinear grids.
    #[test]
    fn rectilinear_metadata_round_trips((grid, shape) in grid_and_shape()) {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        Group::create(Arc::clone(&store), "/", Default::default()).unwrap();
        let array = Array::builder(&shape, DataType::UInt8, &[])
            .chunk_grid(grid.clone())
            .create(Arc::clone(&store), "/g")
            .unwrap();
        let document = v3::serialize_node(&NodeMetadata::Array(array.metadata().clone()));
        let NodeMetadata::Array(parsed) = v3::parse_node(&document).unwrap() else {
            panic!("an array");
        };
        prop_assert_eq!(&parsed, array.metadata());
        prop_assert_eq!(parsed.chunk_grid, grid);
    }
}

#[test]
fn consolidated_metadata_keeps_the_rectilinear_grid() {
    let store = fixture_copy();
    zarrkit::consolidate::consolidate(store.as_ref(), "/").unwrap();
    assert!(
        zarrkit::consolidate::check(store.as_ref(), "/")
            .unwrap()
            .is_empty()
    );
    let group = Group::open(Arc::clone(&store), "/").unwrap();
    let zarrkit::Node::Array(array) = group.node("readme_example").unwrap() else {
        panic!("an array");
    };
    let direct = Array::open(fixture_store(), "/readme_example").unwrap();
    assert_eq!(array.chunk_grid(), direct.chunk_grid());
    assert_eq!(array.chunk_grid_shape(), [2, 3, 2, 4, 2]);
}
