//! JSON written as Python's `json.dumps` writes it, byte for byte: the
//! numcodecs `json2` codec's chunks and zarr 1.x's `meta` and `attrs`
//! documents. It lives in the model, below both `codec` and `format`,
//! which use it.

use serde_json::Value;
use std::fmt::Write as _;

/// Writes JSON as Python's `json.dumps` does with these options.
pub(crate) struct PythonJson<'a> {
    pub(crate) ensure_ascii: bool,
    pub(crate) sort_keys: bool,
    pub(crate) item_separator: &'a str,
    pub(crate) key_separator: &'a str,
    /// `indent=n`: each item of a non-empty list or object on its own line,
    /// indented by `n` spaces per level (`None`: all on one line).
    pub(crate) indent: Option<usize>,
    /// The top-level key under which the strings `"NaN"`, `"Infinity"` and
    /// `"-Infinity"` are written as the bare tokens `NaN`, `Infinity` and
    /// `-Infinity`, as `json.dumps` (with its default `allow_nan=True`)
    /// writes non-finite floats, which a `serde_json::Value` cannot hold.
    pub(crate) bare_non_finite_under: Option<&'a str>,
}

impl PythonJson<'_> {
    pub(crate) fn write(&self, value: &Value, out: &mut String) {
        self.write_at(value, 0, false, out);
    }

    /// Python's `newline_indent`: a newline and `depth` levels of indent.
    fn new_line(&self, depth: usize, out: &mut String) {
        if let Some(indent) = self.indent {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', indent * depth));
        }
    }

    fn write_at(&self, value: &Value, depth: usize, bare: bool, out: &mut String) {
        match value {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => {
                    let _ = write!(out, "{u}");
                }
                (None, Some(i), _) => {
                    let _ = write!(out, "{i}");
                }
                (None, None, Some(f)) => python_float_repr(f, out),
                // serde_json numbers are always one of the three.
                (None, None, None) => out.push_str("null"),
            },
            Value::String(s) if bare && matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity") => {
                out.push_str(s);
            }
            Value::String(s) => self.write_string(s, out),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(self.item_separator);
                    }
                    self.new_line(depth + 1, out);
                    self.write_at(item, depth + 1, bare, out);
                }
                if !items.is_empty() {
                    self.new_line(depth, out);
                }
                out.push(']');
            }
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                if self.sort_keys {
                    // Python sorts `str` keys by code point, which is the
                    // byte order of their UTF-8.
                    entries.sort_by(|a, b| a.0.cmp(b.0));
                }
                out.push('{');
                let empty = entries.is_empty();
                for (i, (key, item)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push_str(self.item_separator);
                    }
                    self.new_line(depth + 1, out);
                    self.write_string(key, out);
                    out.push_str(self.key_separator);
                    let bare =
                        bare || (depth == 0 && self.bare_non_finite_under == Some(key.as_str()));
                    self.write_at(item, depth + 1, bare, out);
                }
                if !empty {
                    self.new_line(depth, out);
                }
                out.push('}');
            }
        }
    }

    /// A string as Python's encoder quotes it: `\"`, `\\`, `\n`, `\r`,
    /// `\t`, `\b`, `\f`, other control characters as `\u00XX`, and with
    /// `ensure_ascii` everything outside printable ASCII as `\uXXXX`
    /// (UTF-16 surrogate pairs beyond the BMP), lowercase hex.
    fn write_string(&self, s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 || (self.ensure_ascii && !(' '..='~').contains(&c)) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        let _ = write!(out, "\\u{unit:04x}");
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

/// A finite `f64` as Python's `repr` writes it: the shortest digits that
/// read back as the same number, in positional notation when the decimal
/// exponent is in `-4..16` (always with a fractional part, `2.0`), and as
/// `1.5e+16`/`1e-05` otherwise.
pub(crate) fn python_float_repr(f: f64, out: &mut String) {
    // Rust's `{:e}` also gives the shortest round-tripping digits.
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    out.push_str(sign);
    if (-4..16).contains(&exponent) {
        if exponent >= 0 {
            let int_len = exponent as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(
            out,
            "e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.unsigned_abs()
        );
    }
}
