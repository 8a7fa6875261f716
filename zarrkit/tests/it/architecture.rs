//! The library's layering: which top-level module may import which.
//!
//! `STYLE.md`, "The data path": "The layers import downwards only:
//! `store` ← `metadata` ← `format`, `codec` ← `array` ← `group` ← `migrate`
//! ← CLI". This test reads every file under `zarrkit/src/`, collects the
//! top-level modules each one names through `crate::…` paths (in `use`
//! declarations and in expressions; comments are skipped, so intra-doc links
//! do not count), and checks every edge against [`LAYERS`]: a module may
//! name only modules of a lower layer. A new import cycle between top-level
//! modules needs an upward or sideways edge, so it fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library's top-level modules, lowest layer first; a module may import
/// only modules of a lower layer. `grid` (the box type, grid walk and pure
/// planner) depends only on the model, so both `codec` (sharding's inner
/// chunks) and `array` plan with it. `error` wraps the store, model and codec
/// errors, and `format` returns it, so it sits between `codec` and
/// `format`. `node` (opening and listing any node) reads documents through
/// `format`; consolidated metadata lives in `format/consolidate.rs`.
const LAYERS: &[&[&str]] = &[
    &["store"],
    &["metadata"],
    &["grid"],
    &["codec"],
    &["error"],
    &["format"],
    &["node"],
    &["array"],
    &["group"],
    &["copy"],
    &["migrate"],
];

/// Edges against [`LAYERS`] that exist and are accepted for now, each with
/// the reason. Empty: every cycle found when this check was written
/// (`codec` ↔ `format`, `error` ↔ `node`, `format` ↔ `node`, `format` ↔
/// `array`) has been removed. An edge listed here that no longer exists
/// fails the test too, so the list cannot go stale.
const KNOWN_EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// The files of `format/` that still import `codec`. `format` sits above
/// `codec` in [`LAYERS`] (it returns `Error`, which wraps `CodecError`), so
/// these are downward edges, not cycles, but STYLE.md draws `format` and
/// `codec` as peers. What they use: `v3_draft/sharding.rs` the sharding
/// codec's configuration (`ShardingConfig`, `IndexLocation`), which moves
/// with the sharding split of issue #11; `v2.rs` the `vlen-utf8`,
/// `vlen-bytes` and `zarrkit.struct_bytes` names and the latter's
/// configuration (`struct_bytes::metadata`, `unit_orders`), and a codec
/// chain in a unit test. A new file importing `codec` from `format/` fails
/// the test.
const FORMAT_FILES_USING_CODEC: &[&str] = &["format/v2.rs", "format/v3_draft/sharding.rs"];

/// Items re-exported at the crate root, and the module each comes from.
const ROOT_ITEMS: &[(&str, &str)] = &[
    ("Array", "array"),
    ("ArrayBuilder", "array"),
    ("DEFAULT_MEMORY_BUDGET", "array"),
    ("Element", "array"),
    ("Region", "array"),
    ("Selection", "grid"),
    ("SelectionError", "grid"),
    ("SelectionItem", "grid"),
    ("SelectionMode", "grid"),
    ("Slice", "grid"),
    ("Error", "error"),
    ("HierarchyProblem", "error"),
    ("NodeKind", "error"),
    ("Group", "group"),
    ("NewNode", "group"),
    ("Node", "group"),
    ("create_hierarchy", "group"),
    ("NodePath", "node"),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Every `.rs` file under `dir`, as paths relative to `src`.
fn rust_files(src: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(src, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(src).unwrap().to_path_buf());
        }
    }
}

/// The source without `//` comments (line and doc comments). A `//` inside
/// a string literal cuts the rest of its line too, which can only hide a
/// path, never invent one.
fn strip_comments(source: &str) -> String {
    source
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segment of each path after `crate::`, following one level of
/// `crate::{a, b::c}` groups (nested groups name their first segment too).
fn crate_paths(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("crate::") {
        // Skip identifiers that merely end in `crate`, such as `subcrate::`.
        let preceded_by_ident = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        rest = &rest[at + "crate::".len()..];
        if preceded_by_ident {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut segment_start = true;
            let mut current = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        segment_start = true;
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                if segment_start {
                    if c.is_alphanumeric() || c == '_' {
                        current.push(c);
                    } else if !current.is_empty() {
                        found.push(std::mem::take(&mut current));
                        segment_start = false;
                    }
                }
            }
            if !current.is_empty() {
                found.push(current);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push(name);
        }
    }
    found
}

/// (importing module, imported module) → the files with such an import.
fn module_edges() -> BTreeMap<(String, String), BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &src, &mut files);
    assert!(
        files.len() > 50,
        "found only {} files under {src:?}",
        files.len()
    );
    let mut edges: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.to_string_lossy().replace('\\', "/");
        let top = relative
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        if layer_of(&top).is_none() {
            // `lib.rs`: the crate root re-exports every layer.
            continue;
        }
        let source = strip_comments(&std::fs::read_to_string(src.join(&file)).unwrap());
        for name in crate_paths(&source) {
            let target = ROOT_ITEMS
                .iter()
                .find(|(item, _)| *item == name)
                .map_or(name.as_str(), |(_, module)| module);
            if target != top && layer_of(target).is_some() {
                edges
                    .entry((top.clone(), target.to_string()))
                    .or_default()
                    .insert(relative.clone());
            }
        }
    }
    edges
}

#[test]
fn the_parser_finds_grouped_and_root_paths() {
    let source = strip_comments(
        "use crate::{codec::{A, B}, metadata::C, Error};\n\
         // crate::array in a comment\n\
         let x = crate::store::get(); subcrate::format::f();",
    );
    assert_eq!(
        crate_paths(&source),
        ["codec", "metadata", "Error", "store"]
    );
}

#[test]
fn top_level_modules_import_only_lower_layers() {
    let edges = module_edges();
    // The check sees the edges that must exist, so it is reading the code.
    for expected in [
        ("array", "codec"),
        ("format", "metadata"),
        ("codec", "store"),
    ] {
        assert!(
            edges.contains_key(&(expected.0.to_string(), expected.1.to_string())),
            "no edge {expected:?} found: the parser is broken"
        );
    }
    let mut violations = Vec::new();
    let mut excepted = BTreeSet::new();
    for ((from, to), files) in &edges {
        let (Some(from_layer), Some(to_layer)) = (layer_of(from), layer_of(to)) else {
            continue;
        };
        if to_layer < from_layer {
            continue;
        }
        if let Some(exception) = KNOWN_EXCEPTIONS
            .iter()
            .find(|(f, t, _)| f == from && t == to)
        {
            excepted.insert((exception.0, exception.1));
            continue;
        }
        violations.push(format!("`{from}` imports `{to}` in {files:?}"));
    }
    assert!(
        violations.is_empty(),
        "imports against the layering (a lower or equal layer naming a higher one; \
         move the shared type down instead):\n{}",
        violations.join("\n")
    );
    for (from, to, why) in KNOWN_EXCEPTIONS {
        assert!(
            excepted.contains(&(*from, *to)),
            "known exception `{from}` → `{to}` ({why}) no longer exists: remove it from the list"
        );
    }
}

#[test]
fn format_imports_codec_only_in_the_known_files() {
    let edges = module_edges();
    let files: Vec<&str> = edges
        .get(&("format".to_string(), "codec".to_string()))
        .map(|files| files.iter().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(files, FORMAT_FILES_USING_CODEC);
}

/// The codec files that name the registry (`codec_from_metadata`,
/// `registry::`): the chain, and the codecs whose configuration holds
/// codecs of their own, which resolve them by name as zarrs' and
/// zarr-python's do. Every other codec takes its shared machinery
/// (`Codec`, `parse_configuration`) from `codec/mod.rs`, so the registry
/// importing every codec is not a cycle back through them. The registry
/// itself and `codec/mod.rs` (which re-exports it) are not listed.
const CODEC_FILES_USING_REGISTRY: &[&str] = &[
    "codec/chain.rs",
    "codec/core/sharding/mod.rs",
    "codec/ext/conditional.rs",
    "codec/ext/n5_default.rs",
    "codec/object/pickle.rs",
];

#[test]
fn codecs_name_the_registry_only_when_they_hold_nested_codecs() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &src.join("codec"), &mut files);
    let mut using: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let name = file.to_string_lossy().replace('\\', "/");
            if name == "codec/registry.rs" || name == "codec/mod.rs" {
                return None;
            }
            let source = strip_comments(&std::fs::read_to_string(src.join(file)).unwrap());
            (source.contains("codec_from_metadata") || source.contains("registry::"))
                .then_some(name)
        })
        .collect();
    using.sort();
    assert_eq!(using, CODEC_FILES_USING_REGISTRY);
}
