//! The harness the CLI integration tests share: running the built binary,
//! building codec and attribute JSON, opening a store, and finding the
//! reference Pythons.
//!
//! Each test file is its own crate and uses a part of this module, so the
//! rest is dead code in that crate.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use zarrkit::metadata::{ExtensionObject, JsonMap};
use zarrkit::store::{FilesystemStore, Store};

/// What one run of the binary printed and its exit code.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the binary with `args`; stdout and stderr must be UTF-8.
pub fn zarrkit<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let (code, stdout, stderr) = zarrkit_bytes(args);
    Run {
        code,
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr,
    }
}

/// Runs the binary and returns its exit code and raw stdout (a `.npy`
/// written to `-` is not UTF-8).
pub fn zarrkit_bytes<I, S>(args: I) -> (i32, Vec<u8>, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let output = Command::new(env!("CARGO_BIN_EXE_zarrkit"))
        .args(args)
        .output()
        .expect("the zarrkit binary runs");
    (
        output.status.code().expect("zarrkit exits with a code"),
        output.stdout,
        String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    )
}

/// The JSON object `value` (a test's literal), as attributes or a codec
/// configuration.
pub fn object(value: serde_json::Value) -> JsonMap {
    match value {
        serde_json::Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// The codec `name` with `configuration`.
pub fn codec(name: &str, configuration: serde_json::Value) -> ExtensionObject {
    ExtensionObject::with_configuration(name, object(configuration))
}

/// The filesystem store at `root`.
pub fn open_store(root: &Path) -> Arc<dyn Store> {
    Arc::new(FilesystemStore::new(root).unwrap())
}

/// The library's interop helpers, shared rather than copied: `python()`
/// finds the Python named by an environment variable, or skips saying so;
/// with `ZARRKIT_REQUIRE_INTEROP=1` a missing one fails the test instead,
/// as the library's interop tests do.
#[path = "../../../zarrkit/tests/it/support.rs"]
mod support;
#[allow(unused_imports)] // consolidate.rs runs no Python.
pub use support::python;

/// Runs `script` with `python -c` and its arguments after it, asserts
/// that it succeeded, and returns its stdout.
pub fn python_script<S: AsRef<OsStr>>(python: &Path, script: &str, args: &[S]) -> String {
    let mut argv: Vec<&OsStr> = vec![OsStr::new("-c"), OsStr::new(script)];
    argv.extend(args.iter().map(AsRef::as_ref));
    support::run(python, &argv, &[])
}
