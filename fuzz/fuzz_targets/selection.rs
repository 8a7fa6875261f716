//! The selection parser (`Selection::parse` and each mode's), then the
//! selection resolved and read against a small array whose shape the first
//! bytes choose.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use zarrkit::metadata::DataType;
use zarrkit::store::MemoryStore;
use zarrkit::{Array, Selection, SelectionMode};

/// Arrays of 1 to 3 dimensions, small enough to read whole.
fn arrays() -> &'static [Array] {
    static ARRAYS: OnceLock<Vec<Array>> = OnceLock::new();
    ARRAYS.get_or_init(|| {
        let store = Arc::new(MemoryStore::new());
        let shapes: [(&[u64], &[u64]); 4] = [
            (&[10], &[3]),
            (&[6, 7], &[4, 3]),
            (&[4, 5, 3], &[2, 2, 2]),
            (&[], &[]),
        ];
        shapes
            .iter()
            .enumerate()
            .map(|(i, (shape, chunks))| {
                let array = Array::builder(shape, DataType::UInt16, chunks)
                    .create(store.clone(), &format!("/{i}"))
                    .expect("a valid array");
                let n: u64 = shape.iter().product();
                let values: Vec<u16> = (0..n as u16).collect();
                array
                    .write_region(&zarrkit::Region::whole(shape), &values)
                    .expect("a write");
                array
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let _ = Selection::parse(text);
    let mode = match selector >> 4 & 3 {
        0 => SelectionMode::Basic,
        1 => SelectionMode::Orthogonal,
        2 => SelectionMode::Vectorized,
        _ => SelectionMode::Blocks,
    };
    let Ok(selection) = Selection::parse_with_mode(mode, text) else {
        return;
    };
    let arrays = arrays();
    let array = &arrays[usize::from(selector & 3) % arrays.len()];
    if let Ok(shape) = array.selection_shape(&selection) {
        let n = shape.iter().try_fold(1u64, |a, &b| a.checked_mul(b));
        if n.is_some_and(|n| n <= zarrkit_fuzz::MAX_READ) {
            let values: Vec<u16> = array
                .read_selection(&selection)
                .expect("a resolved selection reads");
            assert_eq!(values.len() as u64, n.unwrap_or(0));
        }
    }
});
