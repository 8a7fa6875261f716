//! The textual form of a selection, as NumPy users write it between the
//! brackets: `0:10, ::-2, 5`, `..., -1`, `None`, `[1, -2, 3]`,
//! `[[0, 1], [1, 0]]`, `[True, False, True]`.

use super::{SelectionError, SelectionItem, Slice};

/// A list literal before it is known to be integers or booleans.
enum Literal {
    Int(i64),
    Bool(bool),
    List(Vec<Literal>),
}

struct Parser<'t> {
    text: &'t str,
    pos: usize,
    /// How many list literals are open here.
    depth: usize,
}

/// The deepest nesting of list literals: NumPy's 64 dimensions. Deeper text
/// is refused rather than parsed by recursing once per `[` (a long enough
/// run of `[` would overflow the stack).
const MAX_LIST_DEPTH: usize = 64;

/// Parses the items of a selection.
pub(super) fn parse(text: &str) -> Result<Vec<SelectionItem>, SelectionError> {
    let mut parser = Parser {
        text,
        pos: 0,
        depth: 0,
    };
    parser.skip_ws();
    // A tuple in parentheses, as `arr[(0, 1)]` or `arr[()]` write it.
    let trimmed = text.trim();
    let parenthesized = trimmed.starts_with('(') && trimmed.ends_with(')');
    let end = if parenthesized {
        parser.pos += 1;
        text.rfind(')').unwrap_or(text.len())
    } else {
        text.len()
    };
    let mut items = Vec::new();
    loop {
        parser.skip_ws();
        if parser.pos >= end {
            break;
        }
        items.push(parser.item()?);
        parser.skip_ws();
        if parser.pos >= end {
            break;
        }
        parser.expect(',')?;
    }
    if parser.pos != end {
        return Err(parser.error("unexpected text"));
    }
    Ok(items)
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip_ws(&mut self) {
        // By the character's length: Unicode has multi-byte whitespace
        // (U+3000), and `pos` must stay on a character boundary.
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.pos += c.len_utf8();
        }
    }

    fn error(&self, reason: impl Into<String>) -> SelectionError {
        SelectionError::Parse {
            text: self.text.to_string(),
            position: self.pos,
            reason: reason.into(),
        }
    }

    fn expect(&mut self, c: char) -> Result<(), SelectionError> {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            Ok(())
        } else {
            Err(self.error(format!("expected `{c}`")))
        }
    }

    /// Consumes `word` if the text continues with it as a whole word.
    fn keyword(&mut self, word: &str) -> bool {
        // `strip_prefix`, not slicing at `word.len()`: that byte may fall
        // inside a multi-byte character of the rest.
        let Some(after) = self.rest().strip_prefix(word) else {
            return false;
        };
        if !after
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn item(&mut self) -> Result<SelectionItem, SelectionError> {
        if self.rest().starts_with("...") {
            self.pos += 3;
            return Ok(SelectionItem::Ellipsis);
        }
        if self.keyword("Ellipsis") {
            return Ok(SelectionItem::Ellipsis);
        }
        if ["None", "newaxis", "np.newaxis", "numpy.newaxis"]
            .iter()
            .any(|w| self.keyword(w))
        {
            return Ok(SelectionItem::NewAxis);
        }
        if self.peek() == Some('[') {
            let start = self.pos;
            let literal = self.list()?;
            return self.array(literal, start);
        }
        if self.keyword("True") || self.keyword("False") {
            return Err(self.error("a boolean scalar is not an index (use a list: `[True]`)"));
        }
        let start = self.integer()?;
        self.skip_ws();
        if self.peek() != Some(':') {
            return start.map(SelectionItem::Index).ok_or_else(|| {
                self.error("expected an integer, a slice, `...`, `None` or a list")
            });
        }
        self.pos += 1;
        self.skip_ws();
        let stop = self.integer()?;
        self.skip_ws();
        let mut step = None;
        if self.peek() == Some(':') {
            self.pos += 1;
            self.skip_ws();
            step = self.integer()?;
        }
        Ok(SelectionItem::Slice(Slice { start, stop, step }))
    }

    /// An optional integer.
    fn integer(&mut self) -> Result<Option<i64>, SelectionError> {
        let start = self.pos;
        let rest = self.rest();
        let sign = usize::from(rest.starts_with(['-', '+']));
        let digits = rest[sign..]
            .char_indices()
            .find(|(_, c)| !c.is_ascii_digit() && *c != '_')
            .map_or(rest.len() - sign, |(i, _)| i);
        if digits == 0 {
            if sign == 1 {
                return Err(self.error("expected digits after the sign"));
            }
            return Ok(None);
        }
        let literal: String = rest[..sign + digits]
            .chars()
            .filter(|&c| c != '_')
            .collect();
        self.pos += sign + digits;
        literal
            .parse::<i64>()
            .map(Some)
            .map_err(|_| SelectionError::Parse {
                text: self.text.to_string(),
                position: start,
                reason: format!("`{literal}` does not fit a 64-bit integer"),
            })
    }

    fn list(&mut self) -> Result<Literal, SelectionError> {
        if self.depth == MAX_LIST_DEPTH {
            return Err(self.error(format!("lists nested more than {MAX_LIST_DEPTH} deep")));
        }
        self.depth += 1;
        let list = self.list_elements();
        self.depth -= 1;
        list
    }

    fn list_elements(&mut self) -> Result<Literal, SelectionError> {
        self.expect('[')?;
        let mut elements = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(']') {
                self.pos += 1;
                return Ok(Literal::List(elements));
            }
            elements.push(if self.peek() == Some('[') {
                self.list()?
            } else if self.keyword("True") {
                Literal::Bool(true)
            } else if self.keyword("False") {
                Literal::Bool(false)
            } else {
                match self.integer()? {
                    Some(i) => Literal::Int(i),
                    None => return Err(self.error("expected an integer, a boolean or a list")),
                }
            });
            self.skip_ws();
            if self.peek() == Some(',') {
                self.pos += 1;
            } else if self.peek() != Some(']') {
                return Err(self.error("expected `,` or `]`"));
            }
        }
    }

    /// The index array or mask of a list literal that began at `start`.
    fn array(&self, literal: Literal, start: usize) -> Result<SelectionItem, SelectionError> {
        let error = |reason: &str| SelectionError::Parse {
            text: self.text.to_string(),
            position: start,
            reason: reason.to_string(),
        };
        // The shape is the lengths along the first elements' nesting.
        let mut shape = Vec::new();
        let mut node = &literal;
        while let Literal::List(elements) = node {
            shape.push(elements.len() as u64);
            match elements.first() {
                Some(first) => node = first,
                None => break,
            }
        }
        let mut ints = Vec::new();
        let mut bools = Vec::new();
        flatten(&literal, &shape, &mut ints, &mut bools)
            .map_err(|()| error("the nested lists are ragged"))?;
        match (ints.is_empty(), bools.is_empty()) {
            (_, true) => Ok(SelectionItem::Indices {
                shape,
                values: ints,
            }),
            (true, false) => Ok(SelectionItem::Mask {
                shape,
                values: bools,
            }),
            (false, false) => Err(error("a list mixes integers and booleans")),
        }
    }
}

/// Appends the leaves of `literal`, which must have `shape`.
fn flatten(
    literal: &Literal,
    shape: &[u64],
    ints: &mut Vec<i64>,
    bools: &mut Vec<bool>,
) -> Result<(), ()> {
    match (literal, shape.split_first()) {
        (Literal::Int(i), None) => ints.push(*i),
        (Literal::Bool(b), None) => bools.push(*b),
        (Literal::List(elements), Some((&n, rest))) if elements.len() as u64 == n => {
            for e in elements {
                flatten(e, rest, ints, bools)?;
            }
        }
        _ => return Err(()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str) -> Vec<SelectionItem> {
        parse(text).unwrap()
    }

    #[test]
    fn slices_integers_and_markers_parse() {
        assert_eq!(
            items(" 0:10 , ::-2,5, -1: , :"),
            [
                SelectionItem::slice(Some(0), Some(10), None),
                SelectionItem::slice(None, None, Some(-2)),
                SelectionItem::Index(5),
                SelectionItem::slice(Some(-1), None, None),
                SelectionItem::full(),
            ]
        );
        assert_eq!(
            items("..., None, newaxis, np.newaxis, Ellipsis"),
            [
                SelectionItem::Ellipsis,
                SelectionItem::NewAxis,
                SelectionItem::NewAxis,
                SelectionItem::NewAxis,
                SelectionItem::Ellipsis,
            ]
        );
        assert_eq!(items(""), []);
        assert_eq!(items("()"), []);
        assert_eq!(
            items("(1, 2)"),
            [SelectionItem::Index(1), SelectionItem::Index(2)]
        );
        assert_eq!(items("3,"), [SelectionItem::Index(3)]);
    }

    #[test]
    fn lists_parse_as_index_arrays_and_masks() {
        assert_eq!(
            items("[1, -2, 3]"),
            [SelectionItem::indices(vec![1, -2, 3])]
        );
        assert_eq!(
            items("[[0, 1], [1, 0], [2, 2]]"),
            [SelectionItem::Indices {
                shape: vec![3, 2],
                values: vec![0, 1, 1, 0, 2, 2]
            }]
        );
        assert_eq!(
            items("[True, False]"),
            [SelectionItem::mask(vec![true, false])]
        );
        assert_eq!(items("[]"), [SelectionItem::indices(vec![])]);
    }

    #[test]
    fn bad_text_is_an_error_naming_the_position() {
        for (text, position, reason) in [
            ("0:1:2:3", 5, "expected `,`"),
            ("[1, [2]]", 0, "ragged"),
            ("[1, True]", 0, "mixes"),
            ("99999999999999999999", 0, "does not fit a 64-bit integer"),
            ("1, , 2", 3, "expected an integer"),
            ("True", 4, "boolean scalar"),
            ("[1, 2", 5, "expected `,` or `]`"),
            ("-", 0, "expected digits"),
        ] {
            let err = parse(text).unwrap_err();
            let SelectionError::Parse {
                position: p,
                reason: r,
                ..
            } = &err
            else {
                panic!("{err:?}");
            };
            assert_eq!(*p, position, "{text}: {err}");
            assert!(r.contains(reason), "{text}: {err}");
        }
    }
}
