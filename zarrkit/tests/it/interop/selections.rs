//! Selections against zarr-python 3.1 and NumPy on the same store:
//! `testdata/generate/interop_selections.py` writes a plain and a sharded
//! array with zarr-python and applies each selection string through
//! zarr-python (`z[...]`, `oindex`, `vindex`, `blocks`) and through NumPy on
//! the whole array; zarrkit applies the same strings and must agree with
//! zarr-python where it answers (and agrees with NumPy), with NumPy for the
//! forms zarr-python lacks (negative steps, mixed advanced indexing), and
//! refuse what both refuse.

use crate::support;
use serde_json::{Value, json};
use std::sync::Arc;
use zarrkit::store::FilesystemStore;
use zarrkit::{Array, Selection, SelectionMode};

/// The selections, as (mode, NumPy's text).
fn cases() -> Vec<(&'static str, String)> {
    let mut cases: Vec<(&str, String)> = [
        ("basic", "1:10:3, 2:9, 5"),
        ("basic", "1:10:3, ::-2, 5"),
        ("basic", "..., -1"),
        ("basic", "None, 0, :, None"),
        ("basic", "::-1, 3, ::-3"),
        ("basic", "-1:-14:-4, [10, 0, 5], None"),
        ("basic", "[1, -2, 3]"),
        ("basic", "[[0, 12], [5, 6]], 2, ::2"),
        ("basic", "0, [1, 2], [3, 4]"),
        ("basic", "[0, 1], :, [2, 3]"),
        ("basic", "2, 3, 4"),
        ("basic", "5:2, :, :"),
        ("basic", "100:, 1"),
        ("basic", "13"),
        ("basic", "::0"),
        ("basic", "0, 0, 0, 0"),
        ("orthogonal", "[0, 5, 12], [True, False, True, True, False, False, False, False, False, False, True], 1:6:2"),
        ("orthogonal", "2, [3, 1], ::-1"),
        ("orthogonal", "..., [6, 0]"),
        ("orthogonal", "[12, 0, 12], 4:, 0"),
        ("orthogonal", "[0, 13]"),
        ("vectorized", "[0, 5, 12], [1, 2, 3], [0, 6, 1]"),
        ("vectorized", "[[0], [12]], [1, 10], 3"),
        ("vectorized", "[-1, -13], [0, 0], [6, -7]"),
        ("vectorized", "[0, 1], [0, 1, 2], [0, 1]"),
        ("blocks", "1, :, -1"),
        ("blocks", "1:3"),
        ("blocks", "..., 0"),
        ("blocks", "-1, 0:2, ..."),
    ]
    .into_iter()
    .map(|(m, t)| (m, t.to_string()))
    .collect();
    // A mask of the array's shape, and one of the first two dimensions.
    let mask = |n: usize, every: usize| {
        (0..n)
            .map(|i| if i % every == 0 { "True" } else { "False" })
            .collect::<Vec<_>>()
    };
    let nested = |flat: Vec<&str>, shape: &[usize]| -> String {
        fn go(flat: &[&str], shape: &[usize]) -> String {
            match shape.split_first() {
                None => flat[0].to_string(),
                Some((&n, rest)) => {
                    let step = rest.iter().product::<usize>();
                    let parts: Vec<String> = (0..n).map(|i| go(&flat[i * step..], rest)).collect();
                    format!("[{}]", parts.join(", "))
                }
            }
        }
        go(&flat, shape)
    };
    cases.push(("vectorized", nested(mask(13 * 11 * 7, 7), &[13, 11, 7])));
    cases.push((
        "basic",
        format!("{}, ::-2", nested(mask(13 * 11, 5), &[13, 11])),
    ));
    cases.push(("basic", nested(mask(13 * 11 * 7, 3), &[13, 11, 7])));
    cases
}

/// zarrkit's result of a case, as the script prints one.
fn zarrkit_result(array: &Array, mode: &str, text: &str) -> Value {
    let mode = match mode {
        "basic" => SelectionMode::Basic,
        "orthogonal" => SelectionMode::Orthogonal,
        "vectorized" => SelectionMode::Vectorized,
        _ => SelectionMode::Blocks,
    };
    let selection = Selection::parse_with_mode(mode, text).unwrap();
    match array
        .selection_shape(&selection)
        .and_then(|shape| Ok((shape, array.read_selection::<i32>(&selection)?)))
    {
        Ok((shape, values)) => json!({"shape": shape, "values": values}),
        Err(err) => json!({"error": support::error_chain(&err)}),
    }
}

#[test]
fn selections_agree_with_zarr_python_and_numpy() {
    let Some(python) = support::python("ZARRKIT_PYTHON", "zarr 3.1 and NumPy") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases = cases();
    let cases_path = dir.path().join("cases.json");
    let listed: Vec<Value> = cases
        .iter()
        .map(|(mode, text)| json!({"mode": mode, "text": text}))
        .collect();
    std::fs::write(&cases_path, serde_json::to_string(&listed).unwrap()).unwrap();
    let store_path = dir.path().join("store");
    let stdout = support::run(
        &python,
        &[
            support::script("interop_selections.py").as_os_str(),
            store_path.as_os_str(),
            cases_path.as_os_str(),
        ],
        &[],
    );
    let store = Arc::new(FilesystemStore::new(&store_path).unwrap());
    let arrays = [
        Array::open(store.clone(), "/plain").unwrap(),
        Array::open(store, "/sharded").unwrap(),
    ];
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), cases.len() * 2, "{stdout}");
    let (mut with_zarr, mut with_numpy) = (0, 0);
    for (i, line) in lines.iter().enumerate() {
        let (mode, text) = &cases[i / 2];
        let array = &arrays[i % 2];
        assert_eq!(line["array"], ["plain", "sharded"][i % 2]);
        let ours = zarrkit_result(array, mode, text);
        let context = format!("{mode} `{text}` on {}", line["array"]);
        let (zarr, numpy) = (&line["zarr"], &line["numpy"]);
        let answered = |v: &Value| v.get("values").is_some();
        // zarr-python's basic selection routes index arrays to its own
        // vindex/oindex rules; it counts where it agrees with NumPy.
        let zarr_counts = answered(zarr) && (*mode != "basic" || zarr == numpy);
        if zarr_counts {
            assert_eq!(ours, *zarr, "{context}: zarr-python differs");
            with_zarr += 1;
        }
        if answered(numpy) {
            assert_eq!(ours, *numpy, "{context}: NumPy differs");
            with_numpy += 1;
        }
        if !answered(zarr) && !answered(numpy) {
            assert!(
                ours.get("error").is_some(),
                "{context}: both refuse, zarrkit gave {ours}"
            );
        }
    }
    assert!(
        with_zarr >= 30 && with_numpy >= 40,
        "{with_zarr} {with_numpy}"
    );
}
