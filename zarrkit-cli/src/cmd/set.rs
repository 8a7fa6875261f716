//! `zarrkit set`: write a selection of an array from a `.npy` file or one
//! value broadcast over it.

use super::get::{ModeArgs, Opened, open_selection};
use super::{format_shape, product};
use crate::npy;
use crate::values::{self, Casting};
use anyhow::{Context, bail};
use clap::Args;
use std::io::{Read, Write};
use std::path::PathBuf;
use zarrkit::Array;
use zarrkit::codec::data::VlenChunk;
use zarrkit::metadata::DataType;

/// The text after the options in `--help`.
pub const AFTER_LONG_HELP: &str = "\
SELECTION is NumPy's indexing syntax, as for `zarrkit get` (--oindex, \
--vindex and --blocks as there); default: the whole array. Where a \
selection names an element twice, the last value wins, as in NumPy.

--value V is one element, written into every selected element. It is read \
for the array's data type: integers (range-checked: 300 into uint8 is an \
error), floats (`1.5`, `nan`, `inf`, `-inf`, `Infinity`), booleans \
(`true`/`false`, `True`/`False`, `1`/`0`), complex numbers (`1+2j`, \
`[1, 2]`), strings as given (or a JSON string literal, `'\"a b\"'`), byte \
strings as their UTF-8 bytes, datetimes in ISO 8601 (`2020-03-05T13:45:10`) \
or as an integer count, `NaT`, timedeltas as integer counts, raw bits as \
`0x…` hex of the element's size, structs as a JSON object of their fields, \
object-array elements as JSON (a bare word that is not JSON is a string).

--from FILE.npy (`-` reads standard input) holds the values: its shape \
equals the selection's or broadcasts to it as NumPy broadcasts (trailing \
dimensions aligned, each equal or 1; leading dimensions of 1 dropped), in \
either byte order and C or Fortran order. Its dtype is converted to the \
array's data type value by value: a conversion that keeps every value \
exactly is made (int16 into int64, float64 holding 1.0 into int32, int64 \
holding 3 into uint8, `U` strings into `string`), a value out of the \
array's range is always refused, and one that would round, truncate or drop \
something (2.5 into an integer, a float64 that float32 cannot hold \
exactly, a complex number's imaginary part, 2 into bool) is refused unless \
--cast is given, which converts as NumPy's `astype` does (toward zero). \
The error names the first element that does not fit.

Nothing is written until every value has been converted and the \
selection checked against the array: an error (a selection out of bounds, \
a shape that does not broadcast, a value that does not fit) leaves the \
array untouched.

--json prints {\"path\", \"selection\", \"shape\" (the selection's), \
\"elements\" (written), \"source\" (\"value\" or the file), \"source_dtype\" \
(the .npy dtype, or null), \"data_type\" (the array's)}.

Examples:
  zarrkit set data.zarr/temperature '0, :, :' --value nan
  zarrkit set data.zarr /temperature '..., -1' --value 0
  zarrkit set data.zarr/temperature '10:20' --from block.npy
  zarrkit set data.zarr/labels --vindex '[0, 5], [1, 2]' --value 7
  zarrkit set data.zarr/names '0' --value 'Ada Lovelace'
  python -c 'import numpy, sys; numpy.save(sys.stdout.buffer, numpy.ones(5))' | zarrkit set data.zarr/a ':5' --from -";

/// Arguments of `zarrkit set`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true)))]
pub struct SetArgs {
    /// A store directory, URL or zip archive, or an array inside it such as
    /// `my.zarr/a/b`
    #[arg(value_name = "STORE[/PATH]")]
    pub target: PathBuf,

    /// The array inside the store (`/a/b`), then the selection in NumPy
    /// syntax (default: everything)
    #[arg(value_name = "NODE] [SELECTION", num_args = 0..=2)]
    pub rest: Vec<String>,

    #[command(flatten)]
    pub mode: ModeArgs,

    /// Write the values of this NumPy `.npy` file (`-`: standard input)
    #[arg(long, value_name = "FILE.npy", group = "source")]
    pub from: Option<PathBuf>,

    /// Write this one value into every selected element
    #[arg(long, value_name = "V", group = "source")]
    pub value: Option<String>,

    /// Convert values that do not fit exactly (rounding, truncating toward
    /// zero, dropping imaginary parts); out-of-range values are still refused
    #[arg(long)]
    pub cast: bool,

    /// Print what was written as JSON (described below)
    #[arg(long)]
    pub json: bool,

    /// The most memory the write may hold, such as `512MiB` or `2G` (default 8 GiB)
    #[arg(long, value_name = "BYTES", value_parser = super::export::parse_size)]
    pub memory_budget: Option<u64>,
}

/// The values to write, converted to the array's data type.
enum Data {
    Fixed(Vec<u8>),
    Vlen(VlenChunk),
}

/// Runs `zarrkit set`.
///
/// # Errors
/// If the store or array cannot be opened, the selection does not parse or
/// fit, the values do not fit the data type or broadcast to the selection,
/// or writing fails.
pub fn run(args: &SetArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let Opened {
        path,
        array,
        text,
        selection,
        shape,
    } = open_selection(
        &args.target,
        &args.rest,
        &args.mode,
        args.memory_budget,
        "writes",
    )?;
    let text = text.as_deref();
    let casting = if args.cast {
        Casting::Cast
    } else {
        Casting::Exact
    };
    let data_type = array.data_type().clone();
    let (data, data_shape, source, source_dtype) = if let Some(value) = &args.value {
        let scalar = values::parse_value(value, &data_type).with_context(|| {
            format!(
                "cannot write `{}` into `{path}` ({data_type})",
                value.trim()
            )
        })?;
        let data = if data_type.is_variable_length() {
            Data::Vlen(VlenChunk::from_items([values::encode_vlen(
                &scalar, &data_type,
            )?]))
        } else {
            let mut bytes = Vec::with_capacity(data_type.size());
            // Text rounds to the nearest value of a float type (`0.1`
            // into float32); integers were parsed exactly, and out of
            // range is refused either way.
            values::encode(&scalar, &data_type, Casting::Cast, &mut bytes)
                .with_context(|| format!("cannot write `{}` into `{path}`", value.trim()))?;
            Data::Fixed(bytes)
        };
        (data, Vec::new(), "value".to_string(), None)
    } else if let Some(file) = &args.from {
        let bytes = if super::sink::is_stdout(file) {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
            bytes
        } else {
            std::fs::read(file).with_context(|| format!("cannot read `{}`", file.display()))?
        };
        let name = file.display().to_string();
        let npy = npy::read(&bytes).with_context(|| format!("cannot read `{name}`"))?;
        check_broadcast(&npy.shape, &shape).with_context(|| {
            format!(
                "cannot write `{name}` into `{path}`[{}]",
                text.unwrap_or("...")
            )
        })?;
        let data = convert(&npy, &array, casting).with_context(|| {
            format!(
                "cannot write `{name}` ({}) into `{path}` ({data_type})",
                npy.dtype.text
            )
        })?;
        let dtype = npy.dtype.text.clone();
        (data, npy.shape, name, Some(dtype))
    } else {
        bail!("give --value or --from");
    };
    match &data {
        Data::Fixed(bytes) => array.write_selection_bytes_broadcast(&selection, bytes, &data_shape),
        Data::Vlen(chunk) => array.write_selection_vlen_broadcast(&selection, chunk, &data_shape),
    }
    .with_context(|| format!("cannot write `{path}`"))?;
    let elements = product(&shape).unwrap_or(u64::MAX);
    if args.json {
        let report = serde_json::json!({
            "path": path.as_str(),
            "selection": text.unwrap_or("..."),
            "shape": shape,
            "elements": elements,
            "source": source,
            "source_dtype": source_dtype,
            "data_type": data_type.to_string(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        writeln!(
            out,
            "wrote {} of `{path}`[{}] (shape {}) from {}",
            super::plural(elements, "element", "elements"),
            text.unwrap_or("..."),
            format_shape(&shape),
            if source == "value" {
                format!(
                    "the value `{}`",
                    args.value.as_deref().unwrap_or_default().trim()
                )
            } else {
                format!("`{source}`")
            }
        )?;
    }
    Ok(())
}

/// Checks NumPy's broadcasting of a value of `from` to `to`, before any
/// conversion, so that the error names the shapes.
fn check_broadcast(from: &[u64], to: &[u64]) -> anyhow::Result<()> {
    let extra = from.len().saturating_sub(to.len());
    let fits = from[..extra].iter().all(|&n| n == 1)
        && from[extra..]
            .iter()
            .rev()
            .zip(to.iter().rev())
            .all(|(&f, &t)| f == t || f == 1);
    if !fits {
        bail!(
            "a value of shape {} cannot be broadcast to the selection's shape {}",
            format_shape(from),
            format_shape(to)
        );
    }
    Ok(())
}

/// Converts the `.npy` elements into the array's data type (native byte
/// order), copying them when the types are the same.
fn convert(npy: &npy::NpyArray, array: &Array, casting: Casting) -> anyhow::Result<Data> {
    let target = array.data_type();
    let source = &npy.dtype.data_type;
    if !target.is_variable_length() && source == target {
        let mut bytes = Vec::with_capacity(npy.data.len());
        for i in 0..npy.len() {
            bytes.extend_from_slice(&npy.element(i));
        }
        return Ok(Data::Fixed(bytes));
    }
    if matches!(target, DataType::Struct(_) | DataType::VlenArray(_)) {
        bail!("`{target}` is written from --value only (a .npy file cannot hold it here)");
    }
    let mut fixed = Vec::with_capacity(npy.len() * target.size());
    let mut vlen = VlenChunk::with_capacity(npy.len());
    // Converting element by element is the slow part of a large file.
    let bar = super::progress::items(npy.len() as u64, 1 << 20, "elements converted");
    for i in 0..npy.len() {
        if let Some(bar) = &bar
            && i % 4096 == 0
        {
            bar.set_position(i as u64);
        }
        let value = values::decode(source, &npy.element(i));
        let result = if target.is_variable_length() {
            values::encode_vlen(&value, target).map(|b| vlen.push(&b))
        } else {
            values::encode(&value, target, casting, &mut fixed)
        };
        result.with_context(|| format!("element {}", element_index(&npy.shape, i)))?;
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(if target.is_variable_length() {
        Data::Vlen(vlen)
    } else {
        Data::Fixed(fixed)
    })
}

/// The index of the `i`-th element (C order) of an array of `shape`, as
/// `[1, 2]`.
fn element_index(shape: &[u64], i: usize) -> String {
    let mut index = vec![0u64; shape.len()];
    let mut rest = i as u64;
    for (d, &n) in shape.iter().enumerate().rev() {
        if n > 0 {
            index[d] = rest % n;
            rest /= n;
        }
    }
    format_shape(&index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_is_checked_as_numpy_does() {
        assert!(check_broadcast(&[], &[2, 3]).is_ok());
        assert!(check_broadcast(&[3], &[2, 3]).is_ok());
        assert!(check_broadcast(&[2, 1], &[2, 3]).is_ok());
        assert!(check_broadcast(&[1, 1, 3], &[2, 3]).is_ok());
        assert!(check_broadcast(&[2], &[2, 3]).is_err());
        assert!(check_broadcast(&[2, 2, 3], &[2, 3]).is_err());
    }

    #[test]
    fn element_indices_count_in_c_order() {
        assert_eq!(element_index(&[2, 3], 4), "[1, 1]");
        assert_eq!(element_index(&[], 0), "[]");
    }
}
