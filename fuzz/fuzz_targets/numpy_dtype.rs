//! NumPy dtype strings (`<f8`, `|S12`, `<U3`, `<M8[ns]`, …) and structured
//! dtypes (lists of fields): the v2 parser, the numcodecs codecs' parser,
//! and the v1 and draft parsers through `meta` documents' `dtype`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use zarrkit::codec::numpy_dtype::NumpyDtype;
use zarrkit::format::v2;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(dtype) = NumpyDtype::parse("fuzz", "dtype", text) {
            // What parses prints as a string that parses to the same.
            let again = NumpyDtype::parse("fuzz", "dtype", &dtype.to_type_string())
                .expect("a printed dtype parses");
            assert_eq!(again.to_type_string(), dtype.to_type_string());
        }
        let value = Value::String(text.to_owned());
        if let Ok((data_type, order)) = v2::numpy_dtype_from_json(&value) {
            let json = v2::dtype_to_json(&data_type, &order);
            v2::numpy_dtype_from_json(&json).expect("a printed dtype parses");
        }
        let _ = v2::dtype_from_json(&value);
    }
    // Structured dtypes and anything else JSON.
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        if let Ok((data_type, order)) = v2::numpy_dtype_from_json(&value) {
            let json = v2::dtype_to_json(&data_type, &order);
            v2::numpy_dtype_from_json(&json).expect("a printed dtype parses");
        }
        let _ = v2::dtype_from_json(&value);
    }
});
