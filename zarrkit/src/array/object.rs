//! JSON access to v2 object arrays ([`DataType::Object`], numcodecs'
//! `json2` and `msgpack2` object codecs): each element is a
//! [`serde_json::Value`].
//!
//! Elements go through the variable-length path of [`Array::read_vlen`]
//! and [`Array::write_vlen`] as their compact JSON text; an empty element
//! (the default fill value, for chunks that are not stored) reads as
//! `null`. `msgpack2` arrays hold MessagePack values, which the codec maps
//! to JSON (see the `codec::msgpack2` module, with the default `msgpack`
//! feature, for binary and extension values).

use super::{Array, Region};
use crate::codec::vlen::VlenChunk;
use crate::error::Error;
use crate::metadata::DataType;
use serde_json::Value;

impl Array {
    fn object_only(&self) -> Result<(), Error> {
        if *self.data_type() == DataType::Object {
            Ok(())
        } else {
            Err(Error::DataTypeMismatch {
                path: self.path.clone(),
                data_type: self.data_type().clone(),
                requested: "serde_json::Value",
            })
        }
    }

    /// Reads `region` of an object array (a v2 `|O` array with the `json2`
    /// or `msgpack2` object codec): one JSON value per element, in C order.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use serde_json::json;
    /// # use zarrkit::{Array, Region, metadata::{DataType, ExtensionObject}};
    /// # use zarrkit::store::MemoryStore;
    /// let array = Array::builder(&[3], DataType::Object, &[2])
    ///     .codecs_metadata(vec![ExtensionObject::new("json2")])
    ///     .create(Arc::new(MemoryStore::new()), "/objects")?;
    /// let all = Region::new(vec![0], vec![3]);
    /// array.write_json(&all, &[json!({"a": [1, 2]}), json!("text"), json!(2.5)])?;
    /// assert_eq!(array.read_json(&all)?, [json!({"a": [1, 2]}), json!("text"), json!(2.5)]);
    /// // Elements never written read as `null`.
    /// let more = Array::builder(&[2], DataType::Object, &[2])
    ///     .codecs_metadata(vec![ExtensionObject::new("json2")])
    ///     .create(Arc::new(MemoryStore::new()), "/empty")?;
    /// assert_eq!(more.read_json(&Region::new(vec![0], vec![2]))?, [json!(null), json!(null)]);
    /// # Ok::<(), zarrkit::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] for an array that is not `object`,
    /// [`Error::InvalidValue`] for an element that is not JSON text, and
    /// the errors of [`Array::read_vlen`].
    pub fn read_json(&self, region: &Region) -> Result<Vec<Value>, Error> {
        self.object_only()?;
        self.read_vlen(region)?
            .iter()
            .enumerate()
            .map(|(i, text)| {
                if text.is_empty() {
                    return Ok(Value::Null);
                }
                serde_json::from_slice(text).map_err(|e| Error::InvalidValue {
                    path: self.path.clone(),
                    data_type: DataType::Object,
                    reason: format!("element {i} of the region is not JSON: {e}"),
                })
            })
            .collect()
    }

    /// Writes one JSON value per element of `region` (C order) into an
    /// object array; see [`Array::read_json`].
    ///
    /// # Errors
    /// [`Error::DataTypeMismatch`] for an array that is not `object`, and
    /// the errors of [`Array::write_vlen`] (including a value the codec
    /// cannot store, such as a `msgpack2` map with a `$bin` key whose value
    /// is not base64).
    pub fn write_json(&self, region: &Region, data: &[Value]) -> Result<(), Error> {
        self.object_only()?;
        let chunk = VlenChunk::from_items(data.iter().map(Value::to_string));
        self.write_vlen(region, &chunk)
    }
}
