//! Selections with NumPy's semantics: the types, the textual parser
//! (`parse.rs`), resolving a selection against an array's shape into a
//! normalized form (`resolve.rs`), and grouping the selected coordinates by
//! chunk (`group.rs`). Pure: no store, no codec, no key; the executor is
//! `array/select.rs`.
//!
//! The normalized form ([`Resolved`]) is an outer product of *factors*:
//! each covers some of the array's dimensions and lists coordinates along
//! them (one dimension for an integer, a slice, an integer list or a mask
//! along one dimension; several for indices broadcast together). An
//! output element is one entry of each factor, and its offset in the
//! output is the sum of the factors' offsets (entry × the factor's output
//! stride), so the output's axis order (dropped dimensions, new axes, where
//! the broadcast dimensions go) is only a matter of strides.

mod group;
mod parse;
mod resolve;

pub(crate) use group::{CellGrid, Grouped, Task};
pub(crate) use resolve::{Entries, ResolveError, Resolved};

use std::fmt;

/// A slice `start:stop:step` of one dimension, with NumPy's rules: a
/// negative bound counts from the end, bounds past either end are clamped,
/// and a negative step walks backwards (its defaults are the last element
/// and "before the first"). The default, `::`, is the whole dimension.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Slice {
    /// The first index (`None`: the start, or the end for a negative step).
    pub start: Option<i64>,
    /// The index to stop before (`None`: past the end in the step's direction).
    pub stop: Option<i64>,
    /// The step (`None`: 1). Zero is an error when resolved.
    pub step: Option<i64>,
}

impl Slice {
    /// The slice `start:stop:step`.
    #[must_use]
    pub fn new(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Self {
        Self { start, stop, step }
    }
}

/// One item of a [`Selection`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SelectionItem {
    /// One index (negative counts from the end); its dimension is dropped
    /// (in a basic selection with index arrays, it is a 0-d index array).
    Index(i64),
    /// A slice of one dimension.
    Slice(Slice),
    /// `...`: as many whole dimensions as the other items leave.
    Ellipsis,
    /// `None` / `np.newaxis`: a new output axis of length 1.
    NewAxis,
    /// An integer index array of any shape, in C order (negative values
    /// count from the end).
    Indices {
        /// The index array's shape.
        shape: Vec<u64>,
        /// Its values, in C order.
        values: Vec<i64>,
    },
    /// A boolean mask of any shape, in C order, over as many dimensions as
    /// it has: the positions where it is `true`.
    Mask {
        /// The mask's shape.
        shape: Vec<u64>,
        /// Its values, in C order.
        values: Vec<bool>,
    },
}

impl SelectionItem {
    /// The whole dimension, `:`.
    #[must_use]
    pub fn full() -> Self {
        Self::Slice(Slice::default())
    }

    /// The slice `start:stop:step`.
    #[must_use]
    pub fn slice(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Self {
        Self::Slice(Slice::new(start, stop, step))
    }

    /// A 1-d index array.
    #[must_use]
    pub fn indices(values: Vec<i64>) -> Self {
        Self::Indices {
            shape: vec![values.len() as u64],
            values,
        }
    }

    /// A 1-d boolean mask.
    #[must_use]
    pub fn mask(values: Vec<bool>) -> Self {
        Self::Mask {
            shape: vec![values.len() as u64],
            values,
        }
    }
}

/// How a [`Selection`]'s items combine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SelectionMode {
    /// NumPy's indexing, `arr[...]`: integers, slices, ellipsis, new axes,
    /// and index arrays and masks with NumPy's advanced-indexing rules
    /// (they broadcast together, integers beside them are index arrays
    /// too, and the broadcast dimensions take the place of the first one
    /// when they are adjacent, else come first).
    #[default]
    Basic,
    /// zarr-python's `oindex`: per dimension an integer, a slice, a 1-d
    /// index list or a 1-d mask, combined as an outer product.
    Orthogonal,
    /// zarr-python's `vindex`: one index array (or integer) per dimension,
    /// broadcast together into points, or one mask of the array's shape.
    Vectorized,
    /// zarr-python's `blocks`: per dimension a chunk index or a step-1
    /// slice of chunk indices; the output is the chunks' elements.
    Blocks,
}

impl fmt::Display for SelectionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Basic => "basic",
            Self::Orthogonal => "orthogonal",
            Self::Vectorized => "vectorized",
            Self::Blocks => "block",
        })
    }
}

/// A selection of an array's elements with NumPy's semantics: a box, a
/// strided or reversed slice, index lists, masks, points or blocks of
/// chunks. Read with [`Array::read_selection`](crate::Array::read_selection)
/// and write with [`Array::write_selection`](crate::Array::write_selection).
///
/// ```
/// use zarrkit::{Selection, SelectionItem};
/// let parsed = Selection::parse("0:10, ::-2, 5")?;
/// assert_eq!(
///     parsed.items(),
///     [
///         SelectionItem::slice(Some(0), Some(10), None),
///         SelectionItem::slice(None, None, Some(-2)),
///         SelectionItem::Index(5),
///     ]
/// );
/// let points = Selection::parse_vectorized("[0, 2], [1, -1]")?;
/// assert_eq!(points.mode(), zarrkit::SelectionMode::Vectorized);
/// # Ok::<(), zarrkit::SelectionError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Selection {
    mode: SelectionMode,
    items: Vec<SelectionItem>,
}

impl Selection {
    /// A basic (NumPy) selection of `items`.
    #[must_use]
    pub fn new(items: Vec<SelectionItem>) -> Self {
        Self::with_mode(SelectionMode::Basic, items)
    }

    /// An orthogonal selection (zarr-python's `oindex`) of `items`.
    #[must_use]
    pub fn orthogonal(items: Vec<SelectionItem>) -> Self {
        Self::with_mode(SelectionMode::Orthogonal, items)
    }

    /// A vectorized selection (zarr-python's `vindex`) of `items`.
    #[must_use]
    pub fn vectorized(items: Vec<SelectionItem>) -> Self {
        Self::with_mode(SelectionMode::Vectorized, items)
    }

    /// A block selection (zarr-python's `blocks`) of `items`.
    #[must_use]
    pub fn blocks(items: Vec<SelectionItem>) -> Self {
        Self::with_mode(SelectionMode::Blocks, items)
    }

    /// A selection of `items` combined as `mode` says.
    #[must_use]
    pub fn with_mode(mode: SelectionMode, items: Vec<SelectionItem>) -> Self {
        Self { mode, items }
    }

    /// The whole array (`...`).
    #[must_use]
    pub fn all() -> Self {
        Self::new(vec![SelectionItem::Ellipsis])
    }

    /// The box `region` as a selection of step-1 slices.
    #[must_use]
    pub fn region(region: &crate::grid::Region) -> Self {
        let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        Self::new(
            region
                .start()
                .iter()
                .zip(region.shape())
                .map(|(&s, &n)| {
                    SelectionItem::slice(Some(clamp(s)), Some(clamp(s.saturating_add(n))), None)
                })
                .collect(),
        )
    }

    /// Parses NumPy's textual form of a basic selection: items separated
    /// by commas, each an integer (`-1`), a slice (`0:10`, `::-2`), `...`,
    /// `None` or `newaxis`, an integer list (`[1, -2, 3]`, nested for
    /// several dimensions) or a boolean list (`[True, False]`). An empty
    /// text, or `()`, selects everything.
    ///
    /// # Errors
    /// [`SelectionError::Parse`] naming the position and what is wrong.
    pub fn parse(text: &str) -> Result<Self, SelectionError> {
        Self::parse_with_mode(SelectionMode::Basic, text)
    }

    /// Parses an orthogonal selection (zarr-python's `oindex`); the syntax
    /// is [`Selection::parse`]'s.
    ///
    /// # Errors
    /// As [`Selection::parse`].
    pub fn parse_orthogonal(text: &str) -> Result<Self, SelectionError> {
        Self::parse_with_mode(SelectionMode::Orthogonal, text)
    }

    /// Parses a vectorized selection (zarr-python's `vindex`); the syntax
    /// is [`Selection::parse`]'s.
    ///
    /// # Errors
    /// As [`Selection::parse`].
    pub fn parse_vectorized(text: &str) -> Result<Self, SelectionError> {
        Self::parse_with_mode(SelectionMode::Vectorized, text)
    }

    /// Parses a block selection (zarr-python's `blocks`); the syntax is
    /// [`Selection::parse`]'s.
    ///
    /// # Errors
    /// As [`Selection::parse`].
    pub fn parse_blocks(text: &str) -> Result<Self, SelectionError> {
        Self::parse_with_mode(SelectionMode::Blocks, text)
    }

    /// Parses `text` as a selection of `mode`; the syntax is
    /// [`Selection::parse`]'s.
    ///
    /// # Errors
    /// As [`Selection::parse`].
    pub fn parse_with_mode(mode: SelectionMode, text: &str) -> Result<Self, SelectionError> {
        Ok(Self::with_mode(mode, parse::parse(text)?))
    }

    /// How the items combine.
    #[must_use]
    pub fn mode(&self) -> SelectionMode {
        self.mode
    }

    /// The items, in order.
    #[must_use]
    pub fn items(&self) -> &[SelectionItem] {
        &self.items
    }
}

impl std::str::FromStr for Selection {
    type Err = SelectionError;

    fn from_str(text: &str) -> Result<Self, SelectionError> {
        Self::parse(text)
    }
}

impl From<&crate::grid::Region> for Selection {
    fn from(region: &crate::grid::Region) -> Self {
        Self::region(region)
    }
}

/// Why a selection does not fit an array (or cannot be parsed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectionError {
    /// An index (of an integer, an index array or a block index) lies
    /// outside its dimension.
    #[error("index {index} is out of bounds for dimension {dim} of length {len}")]
    OutOfBounds {
        /// The index as given.
        index: i64,
        /// The array's dimension.
        dim: usize,
        /// The dimension's length (in chunks for a block selection).
        len: u64,
    },

    /// A slice has a step of zero.
    #[error("slice step cannot be zero (dimension {dim})")]
    ZeroStep {
        /// The array's dimension.
        dim: usize,
    },

    /// A boolean mask's shape differs from the dimensions it covers.
    #[error(
        "boolean mask of shape {got:?} does not match dimensions {first}..{} of shape {expected:?}",
        first + expected.len()
    )]
    MaskShape {
        /// The first dimension the mask covers.
        first: usize,
        /// The shape of the dimensions it covers.
        expected: Vec<u64>,
        /// The mask's shape.
        got: Vec<u64>,
    },

    /// Index arrays that do not broadcast together.
    #[error("index arrays of shapes {shapes:?} cannot be broadcast together")]
    Broadcast {
        /// The shapes of the index arrays.
        shapes: Vec<Vec<u64>>,
    },

    /// More indices than the array has dimensions.
    #[error("too many indices: {given} for an array of {ndim} dimensions")]
    TooManyIndices {
        /// The dimensions the selection indexes.
        given: usize,
        /// The array's dimensions.
        ndim: usize,
    },

    /// Fewer indices than a vectorized selection needs.
    #[error("a vectorized selection needs one index per dimension: {given} for {ndim} dimensions")]
    TooFewIndices {
        /// The indices given.
        given: usize,
        /// The array's dimensions.
        ndim: usize,
    },

    /// More than one `...`.
    #[error("a selection can have only one ellipsis")]
    MultipleEllipsis,

    /// An item that the selection's mode does not take.
    #[error("{mode} selections do not take {what} (item {item})")]
    NotInMode {
        /// The selection's mode.
        mode: SelectionMode,
        /// What the item is.
        what: &'static str,
        /// The item's position in the selection.
        item: usize,
    },

    /// A block slice with a step other than 1.
    #[error("a block selection takes only step-1 slices: step {step} in dimension {dim}")]
    BlockStep {
        /// The step given.
        step: i64,
        /// The array's dimension.
        dim: usize,
    },

    /// An index array or mask whose values do not fill its shape.
    #[error("an index array of shape {shape:?} has {len} values")]
    ArrayLength {
        /// The shape given.
        shape: Vec<u64>,
        /// The number of values.
        len: usize,
    },

    /// The selection's shape has more than 2^64 elements.
    #[error("the selection's shape {shape:?} has too many elements")]
    TooLarge {
        /// The shape of the result.
        shape: Vec<u64>,
    },

    /// The text is not a selection.
    #[error("cannot parse selection `{text}` at byte {position}: {reason}")]
    Parse {
        /// The text.
        text: String,
        /// Where the problem starts (a byte offset).
        position: usize,
        /// What is wrong.
        reason: String,
    },
}
