//! NumPy's documented edge cases, with the values NumPy 2 gives (copied
//! from its output, not computed here), the errors users read, and the
//! engine's promises: one fetch per chunk, broadcasting, last write wins.

use std::sync::Arc;
use zarrkit::metadata::DataType;
use zarrkit::store::MemoryStore;
use zarrkit::{Array, Error, Region, Selection, SelectionError, SelectionItem};

/// An array of `shape` holding 0, 1, 2, … in chunks of `chunks`.
fn arange(shape: &[u64], chunks: &[u64]) -> Array {
    let array = Array::builder(shape, DataType::Int32, chunks)
        .create(Arc::new(MemoryStore::new()), "/x")
        .unwrap();
    let n: u64 = shape.iter().product();
    let values: Vec<i32> = (0..n as i32).collect();
    array.write_region(&Region::whole(shape), &values).unwrap();
    array
}

#[test]
fn one_dimensional_slices_clamp_as_numpy_does() {
    // `np.arange(10)[text]` in NumPy 2.
    let cases: &[(&str, &[i32])] = &[
        ("-1:-11:-1", &[9, 8, 7, 6, 5, 4, 3, 2, 1, 0]),
        ("::-1", &[9, 8, 7, 6, 5, 4, 3, 2, 1, 0]),
        ("8:100:-1", &[]),
        ("100::-3", &[9, 6, 3, 0]),
        ("-100:5", &[0, 1, 2, 3, 4]),
        ("5:-100:-1", &[5, 4, 3, 2, 1, 0]),
        ("1:7:2", &[1, 3, 5]),
        ("-3:", &[7, 8, 9]),
        ("::3", &[0, 3, 6, 9]),
        ("9:2:-3", &[9, 6, 3]),
        ("20:", &[]),
        ("-20:-15", &[]),
        ("3:3", &[]),
        ("5:2", &[]),
        ("::-4", &[9, 5, 1]),
        ("-1", &[9]),
        ("-10", &[0]),
    ];
    let array = arange(&[10], &[3]);
    for &(text, expected) in cases {
        let selection = Selection::parse(text).unwrap();
        let got = array.read_selection::<i32>(&selection).unwrap();
        assert_eq!(got, expected, "{text}");
        let shape = array.selection_shape(&selection).unwrap();
        if text.contains(':') {
            assert_eq!(shape, [expected.len() as u64], "{text}");
        } else {
            assert!(shape.is_empty(), "{text}: an integer drops the dimension");
        }
    }
    // `x[::-1]` of an empty array is empty.
    let empty = arange(&[0], &[3]);
    let selection = Selection::parse("::-1").unwrap();
    assert_eq!(empty.selection_shape(&selection).unwrap(), [0]);
    assert!(empty.read_selection::<i32>(&selection).unwrap().is_empty());
}

#[test]
fn advanced_indexing_places_broadcast_dimensions_as_numpy_does() {
    // `x = np.arange(35).reshape(5, 7)`, `y = np.arange(24).reshape(2, 3, 4)`;
    // shapes and values from NumPy 2.
    let cases: &[(&str, &str, &[u64], &[i32])] = &[
        ("x", "[0, 2, 4], [0, 1, 2]", &[3], &[0, 15, 30]),
        ("x", "[0, 2, 4], 1", &[3], &[1, 15, 29]),
        ("x", "1:5:2, ::3", &[2, 3], &[7, 10, 13, 21, 24, 27]),
        (
            "x",
            "[[0, 1], [2, 3]], ::-3",
            &[2, 2, 3],
            &[6, 3, 0, 13, 10, 7, 20, 17, 14, 27, 24, 21],
        ),
        (
            "x",
            "..., [-1, 0]",
            &[5, 2],
            &[6, 0, 13, 7, 20, 14, 27, 21, 34, 28],
        ),
        ("x", "None, 1, ::-2", &[1, 4], &[13, 11, 9, 7]),
        ("x", "4:0:-2, [6]", &[2, 1], &[34, 20]),
        ("y", "[0, 1], :, [0, 1]", &[2, 3], &[0, 4, 8, 13, 17, 21]),
        ("y", ":, [0, 1], [1, 2]", &[2, 2], &[1, 6, 13, 18]),
        ("y", "0, :, [1, 2]", &[2, 3], &[1, 5, 9, 2, 6, 10]),
        (
            "y",
            "[True, False], ..., [3, 0]",
            &[2, 3],
            &[3, 7, 11, 0, 4, 8],
        ),
        (
            "y",
            "[[True, False, True], [False, True, False]]",
            &[3, 4],
            &[0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19],
        ),
        (
            "y",
            "1, [[2], [0]], None, [1, 3]",
            &[2, 2, 1],
            &[21, 23, 13, 15],
        ),
        ("y", "[1], None, [2]", &[1, 1, 4], &[20, 21, 22, 23]),
        (
            "y",
            "::-1, ::-2, ::-3",
            &[2, 2, 2],
            &[23, 20, 15, 12, 11, 8, 3, 0],
        ),
    ];
    let x = arange(&[5, 7], &[2, 3]);
    let y = arange(&[2, 3, 4], &[1, 2, 3]);
    for &(name, text, shape, expected) in cases {
        let array = if name == "x" { &x } else { &y };
        let selection = Selection::parse(text).unwrap();
        assert_eq!(array.selection_shape(&selection).unwrap(), shape, "{text}");
        assert_eq!(
            array.read_selection::<i32>(&selection).unwrap(),
            expected,
            "{text}"
        );
    }
}

#[test]
fn orthogonal_vectorized_and_block_selections_read_what_zarr_python_reads() {
    let x = arange(&[5, 7], &[2, 3]);
    // `z.oindex[[0, 2], [True, False, True, False, False, False, True]]`
    let outer =
        Selection::parse_orthogonal("[0, 2], [True, False, True, False, False, False, True]")
            .unwrap();
    assert_eq!(x.selection_shape(&outer).unwrap(), [2, 3]);
    assert_eq!(
        x.read_selection::<i32>(&outer).unwrap(),
        [0, 2, 6, 14, 16, 20]
    );
    // `z.vindex[[[0], [4]], [1, -1]]`: points broadcast to (2, 2).
    let points = Selection::parse_vectorized("[[0], [4]], [1, -1]").unwrap();
    assert_eq!(x.selection_shape(&points).unwrap(), [2, 2]);
    assert_eq!(x.read_selection::<i32>(&points).unwrap(), [1, 6, 29, 34]);
    // `z.blocks[-1, 1:]`: the last chunk row (row 4), chunk columns 1 and 2.
    let blocks = Selection::parse_blocks("-1, 1:").unwrap();
    assert_eq!(x.selection_shape(&blocks).unwrap(), [1, 4]);
    assert_eq!(x.read_selection::<i32>(&blocks).unwrap(), [31, 32, 33, 34]);
    // Into a caller's buffer, which must hold exactly the selection.
    let mut out = [0i32; 4];
    x.read_selection_into(&points, &mut out).unwrap();
    assert_eq!(out, [1, 6, 29, 34]);
    let err = x.read_selection_into(&points, &mut [0i32; 3]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::BufferLength {
                expected: 16,
                actual: 12,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn writes_broadcast_and_keep_the_last_of_duplicate_coordinates() {
    let x = arange(&[3, 4], &[2, 3]);
    // NumPy: `x[[0, 0, 2], ::-3] = [[1, 2], [3, 4], [5, 6]]` keeps row 0 = [4, ., ., 3].
    x.write_selection(
        &Selection::parse("[0, 0, 2], ::-3").unwrap(),
        &[1, 2, 3, 4, 5, 6],
    )
    .unwrap();
    // Broadcasting a row of 2 over rows [1] and columns 1:3.
    x.write_selection_broadcast(&Selection::parse("1:2, 1:3").unwrap(), &[-1, -2], &[2])
        .unwrap();
    x.write_selection_scalar(&Selection::parse_vectorized("[2], [1]").unwrap(), 99)
        .unwrap();
    assert_eq!(
        x.read_region::<i32>(&Region::whole(&[3, 4])).unwrap(),
        [4, 1, 2, 3, 4, -1, -2, 7, 6, 99, 10, 5]
    );
    let err = x
        .write_selection_broadcast(&Selection::parse(":, 0").unwrap(), &[1, 2], &[2])
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("shape [2] cannot be broadcast to the selection's shape [3]"),
        "{err}"
    );
    let err = x
        .write_selection(&Selection::parse("0").unwrap(), &[1, 2])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::BufferLength {
                expected: 16,
                actual: 8,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn strings_are_selected_and_written_with_the_same_rules() {
    let array = Array::builder(&[2, 3], DataType::String, &[1, 2])
        .create(Arc::new(MemoryStore::new()), "/s")
        .unwrap();
    array
        .write_strings(&Region::whole(&[2, 3]), &["a", "b", "c", "d", "e", "f"])
        .unwrap();
    let selection = Selection::parse("::-1, [2, 0]").unwrap();
    assert_eq!(
        array.read_selection_strings(&selection).unwrap(),
        ["f", "d", "c", "a"]
    );
    array
        .write_selection_strings(
            &Selection::parse_vectorized("[1, 0], [1, 1]").unwrap(),
            &["x", "y"],
        )
        .unwrap();
    assert_eq!(
        array.read_strings(&Region::whole(&[2, 3])).unwrap(),
        ["a", "y", "c", "d", "x", "f"]
    );
    let err = array.read_selection::<u8>(&selection).unwrap_err();
    assert!(matches!(err, Error::DataTypeMismatch { .. }), "{err}");
}

/// The error's message and its cause's, as `{err:#}` prints them.
fn messages(err: &Error) -> String {
    let source = std::error::Error::source(err).map_or(String::new(), ToString::to_string);
    format!("{err}: {source}")
}

#[test]
fn bad_selections_are_errors_naming_the_dimension_and_the_bound() {
    let x = arange(&[10, 4], &[3, 3]);
    let cases: &[(Selection, &str)] = &[
        (
            Selection::parse("-11").unwrap(),
            "index -11 is out of bounds for dimension 0 of length 10",
        ),
        (
            Selection::parse(":, [0, 4]").unwrap(),
            "index 4 is out of bounds for dimension 1 of length 4",
        ),
        (
            Selection::parse("::0").unwrap(),
            "slice step cannot be zero (dimension 0)",
        ),
        (
            Selection::parse(":, [True, False]").unwrap(),
            "boolean mask of shape [2] does not match dimensions 1..2 of shape [4]",
        ),
        (
            Selection::parse("[0, 1, 2], [0, 1]").unwrap(),
            "index arrays of shapes [[3], [2]] cannot be broadcast together",
        ),
        (
            Selection::parse("0, 0, 0").unwrap(),
            "too many indices: 3 for an array of 2 dimensions",
        ),
        (
            Selection::parse("..., 0, ...").unwrap(),
            "a selection can have only one ellipsis",
        ),
        (
            Selection::parse_vectorized("[0]").unwrap(),
            "a vectorized selection needs one index per dimension: 1 for 2 dimensions",
        ),
        (
            Selection::parse_vectorized("[0], 1:2").unwrap(),
            "vectorized selections do not take a slice (item 1)",
        ),
        (
            Selection::parse_orthogonal("[[0]]").unwrap(),
            "orthogonal selections do not take an index array of more than 1 dimension (item 0)",
        ),
        (
            Selection::parse_blocks("4").unwrap(),
            "index 4 is out of bounds for dimension 0 of length 4",
        ),
        (
            Selection::parse_blocks("0:2:2").unwrap(),
            "a block selection takes only step-1 slices: step 2 in dimension 0",
        ),
    ];
    for (selection, message) in cases {
        let err = x.read_selection::<i32>(selection).unwrap_err();
        assert!(matches!(err, Error::Selection { .. }), "{err:?}");
        assert_eq!(
            messages(&err),
            format!("invalid selection for array `/x`: {message}"),
        );
        assert!(x.write_selection_scalar(selection, 0).is_err());
    }
}

#[test]
fn untrusted_selections_never_panic_or_allocate_unbounded() {
    let x = arange(&[10, 4], &[3, 3]);
    // Parsed integers past i64 are parse errors.
    let err = Selection::parse("99999999999999999999:").unwrap_err();
    assert!(
        err.to_string().contains("does not fit a 64-bit integer"),
        "{err}"
    );
    // Extreme bounds and steps clamp.
    let selection = Selection::parse(&format!(
        "{}:{}:{}, ::{}",
        i64::MIN,
        i64::MAX,
        i64::MAX,
        i64::MIN
    ))
    .unwrap();
    assert_eq!(x.read_selection::<i32>(&selection).unwrap(), [3]);
    // A broadcast of two index arrays to 10^12 points is refused before
    // any allocation, as is an output past the memory budget.
    let a: Vec<i64> = vec![0; 1_000_000];
    let huge = Selection::new(vec![
        zarrkit::SelectionItem::Indices {
            shape: vec![1_000_000, 1],
            values: a.clone(),
        },
        zarrkit::SelectionItem::Indices {
            shape: vec![1, 1_000_000],
            values: a,
        },
    ]);
    let err = x.read_selection::<i32>(&huge).unwrap_err();
    assert!(matches!(err, Error::MemoryBudget { .. }), "{err}");
    let mut small = x.clone();
    small.set_memory_budget(100);
    let err = small
        .read_selection::<i32>(&Selection::parse("::2, [0, 0, 0, 0, 0]").unwrap())
        .unwrap_err();
    assert!(matches!(err, Error::MemoryBudget { .. }), "{err}");
    // An index array whose values do not fill its shape.
    let bad = Selection::new(vec![zarrkit::SelectionItem::Indices {
        shape: vec![3],
        values: vec![0],
    }]);
    let err = x.read_selection::<i32>(&bad).unwrap_err();
    assert!(
        messages(&err).contains("an index array of shape [3] has 1 values"),
        "{err:#}"
    );
    assert!(matches!(
        Selection::parse("[1, 2").unwrap_err(),
        SelectionError::Parse { position: 5, .. }
    ));
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_reads_have_the_selection_shape_and_writes_broadcast() {
    let x = arange(&[3, 4], &[2, 2]);
    let got = x
        .read_selection_ndarray::<i32>(&Selection::parse("::-1, None, [1, 2]").unwrap())
        .unwrap();
    assert_eq!(got.shape(), [3, 1, 2]);
    assert_eq!(got.iter().copied().collect::<Vec<_>>(), [9, 10, 5, 6, 1, 2]);
    let column = ndarray::arr2(&[[-1], [-2], [-3]]).into_dyn();
    x.write_selection_ndarray(&Selection::parse(":, ::3").unwrap(), column.view())
        .unwrap();
    assert_eq!(
        x.read_region::<i32>(&Region::whole(&[3, 4])).unwrap(),
        [-1, 1, 2, -1, -2, 5, 6, -2, -3, 9, 10, -3]
    );
}

/// Every chunk a coordinate selection touches is fetched once, however
/// many points fall in it; a sharded array reads only the inner chunks
/// touched.
#[cfg(all(feature = "zstd", feature = "crc32c"))]
#[test]
fn each_chunk_touched_is_fetched_once() {
    use crate::sharding::CountingStore;
    let store = Arc::new(CountingStore::default());
    let array = Array::builder(&[100, 100], DataType::UInt16, &[10, 10])
        .create(store.clone(), "/p")
        .unwrap();
    let values: Vec<u16> = (0..10_000).map(|i| i as u16).collect();
    array
        .write_region(&Region::whole(&[100, 100]), &values)
        .unwrap();
    // 300 points in 3 chunks: (0, 0), (5, 5) and (9, 0).
    let rows: Vec<i64> = (0..300)
        .map(|i| [3, 55, 95][i % 3] + (i as i64 / 3) % 5)
        .collect();
    let cols: Vec<i64> = (0..300)
        .map(|i| [1, 52, 8][i % 3] + (i as i64 / 7) % 2)
        .collect();
    let points = Selection::vectorized(vec![
        zarrkit::SelectionItem::indices(rows.clone()),
        zarrkit::SelectionItem::indices(cols.clone()),
    ]);
    store.reset();
    let got = array.read_selection::<u16>(&points).unwrap();
    let expected: Vec<u16> = rows
        .iter()
        .zip(&cols)
        .map(|(r, c)| (r * 100 + c) as u16)
        .collect();
    assert_eq!(got, expected);
    assert_eq!(store.reads().1, 3, "one request per chunk touched");
}

/// A coordinate read of a sharded array reads the shard's index and the
/// inner chunks its points fall in, not the shard.
#[cfg(all(feature = "zstd", feature = "crc32c"))]
#[test]
fn points_in_a_shard_read_only_their_inner_chunks() {
    use crate::sharding::CountingStore;
    use zarrkit::codec::sharding::ShardingCodec;
    use zarrkit::codec::{Codec, bytes::BytesCodec};
    let store = Arc::new(CountingStore::default());
    let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
    let array = Array::builder(&[64, 64], DataType::UInt16, &[64, 64])
        .codecs(vec![Codec::ArrayToBytes(Arc::new(ShardingCodec::new(
            &[8, 8],
            vec![bytes],
        )))])
        .create(store.clone(), "/s")
        .unwrap();
    let values: Vec<u16> = (0..4096).map(|i| i as u16).collect();
    array
        .write_region(&Region::whole(&[64, 64]), &values)
        .unwrap();
    store.reset();
    let points = Selection::parse_vectorized("[1, 2, 40, 63], [1, 3, 20, 0]").unwrap();
    assert_eq!(
        array.read_selection::<u16>(&points).unwrap(),
        [65, 131, 2580, 4032]
    );
    // The shard is 8 KiB of elements and a 1 KiB index; the index and
    // three inner chunks of 128 bytes (two points share one) are read,
    // with the gaps the sharding codec coalesces between near ones.
    let (_, _, read) = store.reads();
    assert!(read <= 1100 + 16 * 128, "read {read} bytes");
    // Writing the points back rewrites the shard without losing others.
    array.write_selection(&points, &[1u16, 2, 3, 4]).unwrap();
    let mut expected = values.clone();
    for (i, v) in [(65, 1), (131, 2), (2580, 3), (4032, 4)] {
        expected[i] = v;
    }
    assert_eq!(
        array.read_region::<u16>(&Region::whole(&[64, 64])).unwrap(),
        expected
    );
}

/// Threads writing interleaved points of the same chunks and shards (each
/// a read-modify-write of the chunk) lose none of each other's elements.
#[test]
fn concurrent_point_writes_to_shared_chunks_lose_nothing() {
    for sharded in [false, true] {
        let mut builder = Array::builder(&[16, 16], DataType::UInt32, &[8, 8]);
        if sharded {
            builder = builder.codecs_metadata(vec![
                zarrkit::metadata::ExtensionObject::with_configuration(
                    "sharding_indexed",
                    serde_json::from_value(serde_json::json!({
                        "chunk_shape": [4, 4],
                        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                    }))
                    .unwrap(),
                ),
            ]);
        }
        let array = builder.create(Arc::new(MemoryStore::new()), "/c").unwrap();
        const THREADS: i64 = 4;
        std::thread::scope(|scope| {
            for t in 0..THREADS {
                let array = &array;
                scope.spawn(move || {
                    // Thread t owns the elements whose flat index is t mod THREADS.
                    let flat: Vec<i64> = (0..256).filter(|i| i % THREADS == t).collect();
                    for chunk in flat.chunks(8) {
                        let rows = chunk.iter().map(|i| i / 16).collect();
                        let cols = chunk.iter().map(|i| i % 16).collect();
                        let selection = Selection::vectorized(vec![
                            zarrkit::SelectionItem::indices(rows),
                            zarrkit::SelectionItem::indices(cols),
                        ]);
                        let values: Vec<u32> = chunk.iter().map(|&i| i as u32 + 1).collect();
                        array.write_selection(&selection, &values).unwrap();
                    }
                });
            }
        });
        let expected: Vec<u32> = (1..=256).collect();
        assert_eq!(
            array.read_region::<u32>(&Region::whole(&[16, 16])).unwrap(),
            expected,
            "sharded: {sharded}"
        );
    }
}

/// Selections of an array of 2^62 rows: strides, points and reversed
/// slices near the end work; one too large for memory is an error.
#[test]
fn huge_arrays_are_selected_without_overflow() {
    let array = Array::builder(&[1 << 62, 4], DataType::Int32, &[1 << 20, 4])
        .fill_value(-1i32)
        .create(Arc::new(MemoryStore::new()), "/h")
        .unwrap();
    let last = (1i64 << 62) - 1;
    array
        .write_selection(
            &Selection::parse(&format!("[{last}, 0], ::-3")).unwrap(),
            &[1, 2, 3, 4],
        )
        .unwrap();
    let stride = Selection::parse(&format!("::-{}, 0", 1i64 << 60)).unwrap();
    assert_eq!(array.selection_shape(&stride).unwrap(), [4]);
    assert_eq!(
        array.read_selection::<i32>(&stride).unwrap(),
        [2, -1, -1, -1]
    );
    let points = Selection::parse_vectorized("[-1, 0, -1], [0, 3, -1]").unwrap();
    assert_eq!(array.read_selection::<i32>(&points).unwrap(), [2, 3, 1]);
    let err = array
        .read_selection::<i32>(&Selection::parse("::2, 0").unwrap())
        .unwrap_err();
    assert!(matches!(err, Error::MemoryBudget { .. }), "{err}");
    let err = array
        .read_selection::<i32>(&Selection::parse(&format!("{}", i64::MIN)).unwrap())
        .unwrap_err();
    assert!(
        messages(&err).contains(&format!(
            "index {} is out of bounds for dimension 0 of length {}",
            i64::MIN,
            1u64 << 62
        )),
        "{err:#}"
    );
}

/// Masks larger than one piece of the parallel scan (a 3-d one, and a
/// 1-d one longer than a row of the scan), basic and vectorized, plain
/// and sharded; points in a grid too large for a table or a counting
/// sort, and in one whose keys overflow: every grouping path gives the
/// `true` positions (or the points) in C order.
#[test]
fn large_masks_and_sparse_points_are_grouped_exactly() {
    // A hash decides each position (about 1 % true), so that no piece,
    // row or block is special.
    let hashed = |n: u64| -> Vec<bool> {
        (0..n)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) % 97 == 0)
            .collect()
    };
    for (shape, chunks, inner) in [
        (vec![67u64, 129, 130], vec![16u64, 32, 64], None),
        (
            vec![67, 129, 130],
            vec![32, 64, 64],
            Some(vec![8u64, 16, 32]),
        ),
        (vec![300_001], vec![4096], None),
        (vec![300_001], vec![65_536], Some(vec![1024])),
    ] {
        let mut builder = Array::builder(&shape, DataType::Int32, &chunks);
        if let Some(inner) = &inner {
            builder =
                builder.codecs_metadata(
                    vec![zarrkit::metadata::ExtensionObject::with_configuration(
                "sharding_indexed",
                serde_json::json!({
                    "chunk_shape": inner,
                    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                })
                .as_object()
                .unwrap()
                .clone(),
            )],
                );
        }
        let array = builder.create(Arc::new(MemoryStore::new()), "/m").unwrap();
        let n: u64 = shape.iter().product();
        let values: Vec<i32> = (0..n as i32).collect();
        array.write_region(&Region::whole(&shape), &values).unwrap();
        let mask = hashed(n);
        let expected: Vec<i32> = (0..n as i32).filter(|&i| mask[i as usize]).collect();
        assert!(expected.len() > 1000, "{shape:?}");
        let item = SelectionItem::Mask {
            shape: shape.clone(),
            values: mask,
        };
        for selection in [
            Selection::vectorized(vec![item.clone()]),
            Selection::new(vec![item.clone()]),
        ] {
            let got = array.read_selection::<i32>(&selection).unwrap();
            assert_eq!(got.len(), expected.len(), "{shape:?} {inner:?}");
            assert!(got == expected, "{shape:?} {inner:?}: values differ");
            // Writing the negated values there and reading the whole
            // array back changes exactly the masked elements.
            let negated: Vec<i32> = expected.iter().map(|v| -v).collect();
            array.write_selection(&selection, &negated).unwrap();
            let whole = array.read_region::<i32>(&Region::whole(&shape)).unwrap();
            let SelectionItem::Mask { values: mask, .. } = &item else {
                unreachable!()
            };
            for (i, (&v, &m)) in whole.iter().zip(mask).enumerate() {
                assert_eq!(
                    v,
                    if m { -(i as i32) } else { i as i32 },
                    "{shape:?} element {i}"
                );
            }
            array.write_region(&Region::whole(&shape), &values).unwrap();
        }
    }
    // Keys past a counting sort (2^42 chunks), and past a u64 (2^124).
    for (shape, chunks) in [
        (vec![1u64 << 62, 8], vec![1u64 << 20, 8]),
        (vec![1u64 << 62, 1 << 62], vec![1, 1]),
    ] {
        let array = Array::builder(&shape, DataType::Int32, &chunks)
            .fill_value(-1i32)
            .create(Arc::new(MemoryStore::new()), "/p")
            .unwrap();
        let rows = [(1i64 << 62) - 1, 0, 1 << 40, 0, (1 << 40) + 1];
        let cols = [7i64, 1, 5, 1, 2];
        let text = format!("{rows:?}, {cols:?}");
        let points = Selection::parse_vectorized(&text).unwrap();
        // The duplicate (0, 1) keeps the last value written, 13.
        array
            .write_selection(&points, &[10, 11, 12, 13, 14])
            .unwrap();
        assert_eq!(
            array.read_selection::<i32>(&points).unwrap(),
            [10, 13, 12, 13, 14],
            "{shape:?}"
        );
        let other =
            Selection::parse_vectorized(&format!("[0, {}], [2, 7]", (1i64 << 62) - 1)).unwrap();
        assert_eq!(array.read_selection::<i32>(&other).unwrap(), [-1, 10]);
    }
}

#[test]
fn element_bytes_and_strings_broadcast_as_numpy_does() {
    // NumPy: `x = np.zeros((2, 3), 'u2'); x[:, ::-1] = [[7], [8]]` gives
    // [[7, 7, 7], [8, 8, 8]]; `x[1, 1:] = [5, 6]` then [[7, 7, 7], [8, 5, 6]].
    let x = Array::builder(&[2, 3], DataType::UInt16, &[2, 2])
        .create(Arc::new(MemoryStore::new()), "/x")
        .unwrap();
    let bytes = |v: &[u16]| -> Vec<u8> { v.iter().flat_map(|e| e.to_ne_bytes()).collect() };
    x.write_selection_bytes_broadcast(
        &Selection::parse(":, ::-1").unwrap(),
        &bytes(&[7, 8]),
        &[2, 1],
    )
    .unwrap();
    x.write_selection_bytes_broadcast(&Selection::parse("1, 1:").unwrap(), &bytes(&[5, 6]), &[2])
        .unwrap();
    assert_eq!(
        x.read_selection::<u16>(&Selection::all()).unwrap(),
        [7, 7, 7, 8, 5, 6]
    );
    let err = x
        .write_selection_bytes_broadcast(&Selection::all(), &bytes(&[1, 2]), &[2])
        .unwrap_err();
    assert!(err.to_string().contains("cannot be broadcast"), "{err}");
    // A length that does not fill the shape is refused before anything is written.
    assert!(matches!(
        x.write_selection_bytes_broadcast(&Selection::all(), &bytes(&[1, 2]), &[3]),
        Err(Error::BufferLength { .. })
    ));
    assert_eq!(
        x.read_selection::<u16>(&Selection::all()).unwrap(),
        [7, 7, 7, 8, 5, 6]
    );

    let s = Array::builder(&[2, 2], DataType::String, &[1, 2])
        .create(Arc::new(MemoryStore::new()), "/s")
        .unwrap();
    let row = zarrkit::codec::data::VlenChunk::from_items(["ab", "c"].map(str::as_bytes));
    s.write_selection_vlen_broadcast(&Selection::parse("::-1").unwrap(), &row, &[2])
        .unwrap();
    let one = zarrkit::codec::data::VlenChunk::from_items(["z".as_bytes()]);
    s.write_selection_vlen_broadcast(&Selection::parse_vectorized("[1], [0]").unwrap(), &one, &[])
        .unwrap();
    assert_eq!(
        s.read_selection_strings(&Selection::all()).unwrap(),
        ["ab", "c", "z", "c"]
    );
}
