//! The `pickle` object codec, refused.
//!
//! Spec: <https://numcodecs.readthedocs.io/en/stable/other/pickles.html>
//! Names: v2 object codec id `pickle` (also `numcodecs.pickle`).
//!
//! numcodecs' `Pickle` stores a chunk of a v2 object array as a Python
//! pickle. Reading a pickle means running the instructions it contains,
//! which can call any Python function: a chunk from an untrusted store
//! could do anything. zarrkit does not implement it; the error says how to
//! convert such an array to an object codec that stores only data.
//!
//! ```
//! use zarrkit::codec::{CodecError, codec_from_metadata};
//! use zarrkit::metadata::ExtensionObject;
//! let err = codec_from_metadata(&ExtensionObject::new("pickle")).unwrap_err();
//! assert!(matches!(err, CodecError::Refused { .. }));
//! ```

use crate::codec::{Codec, CodecError};
use crate::metadata::ExtensionObject;

/// The numcodecs id.
pub const NAME: &str = "pickle";
/// zarr-python 3.1's name for it.
pub const NUMCODECS_NAME: &str = "numcodecs.pickle";

/// Why `pickle` is refused, and what to do instead.
pub const REASON: &str = "unpickling runs arbitrary Python code, so reading a pickled chunk could \
    execute whatever its writer put there; zarrkit never unpickles. To read the data, convert it \
    in Python from a copy you trust: read the array with zarr-python and write it again with an \
    object codec that stores only data, `object_codec=numcodecs.VLenUTF8()` for strings, \
    `numcodecs.VLenBytes()` for bytes, `numcodecs.VLenArray(dtype)` for ragged numeric arrays, or \
    `numcodecs.JSON()` / `numcodecs.MsgPack()` for other objects (or use a fixed-size dtype)";

/// Always fails: `pickle` is refused (see the module documentation).
///
/// # Errors
/// Always [`CodecError::Refused`], naming the codec and explaining how to
/// convert the data.
pub fn create(metadata: &ExtensionObject) -> Result<Codec, CodecError> {
    Err(CodecError::Refused {
        name: metadata.name.clone(),
        reason: REASON,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::codec_from_metadata;

    #[test]
    fn pickle_is_refused_with_the_reason_and_a_way_out() {
        for name in [NAME, NUMCODECS_NAME] {
            let mut configuration = crate::metadata::JsonMap::new();
            configuration.insert("protocol".into(), 5.into());
            let err =
                codec_from_metadata(&ExtensionObject::with_configuration(name, configuration))
                    .unwrap_err();
            let message = err.to_string();
            assert!(
                message.starts_with(&format!(
                    "codec `{name}` is refused: unpickling runs arbitrary Python code"
                )),
                "{message}"
            );
            assert!(
                message.contains("object_codec=numcodecs.VLenUTF8()"),
                "{message}"
            );
            assert!(message.contains("numcodecs.JSON()"), "{message}");
        }
    }
}
