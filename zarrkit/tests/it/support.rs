//! Helpers shared by test modules: an error with its causes, and finding
//! and running the Python reference implementations of the interop tests
//! (`scripts/test.sh` installs them into virtualenvs and names their
//! interpreters with `ZARRKIT_PYTHON` (zarr-python 3.1, tensorstore,
//! xarray), `ZARRKIT_PYTHON_ZARR2` (zarr-python 2.18) and
//! `ZARRKIT_PYTHON_ZARR1` (zarr 1.1.0)).

// Some helpers are used only by modules gated on codec features.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use zarrkit::metadata::DataType;

/// The Python named by the environment variable `var`, or `None` to skip
/// (saying so on stderr); with `ZARRKIT_REQUIRE_INTEROP=1` a missing one
/// fails the test instead.
pub fn python(var: &str, what: &str) -> Option<PathBuf> {
    if let Some(python) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(python));
    }
    assert!(
        std::env::var("ZARRKIT_REQUIRE_INTEROP").as_deref() != Ok("1"),
        "ZARRKIT_REQUIRE_INTEROP=1 but {var} is unset (scripts/test.sh sets it)"
    );
    eprintln!("skipping: set {var} to a Python with {what}");
    None
}

/// zarr-python 2.18 (`ZARRKIT_PYTHON_ZARR2`), or `None` to skip.
pub fn zarr2_python() -> Option<PathBuf> {
    python(
        "ZARRKIT_PYTHON_ZARR2",
        "zarr 2.18 (scripts/requirements-zarr2.txt)",
    )
}

/// zarr-python 3.1 (`ZARRKIT_PYTHON`) and zarr-python 2.18
/// (`ZARRKIT_PYTHON_ZARR2`), or `None` to skip.
pub fn zarr3_and_zarr2() -> Option<(PathBuf, PathBuf)> {
    let zarr3 = python("ZARRKIT_PYTHON", "zarr 3.1, tensorstore and xarray");
    let zarr2 = python("ZARRKIT_PYTHON_ZARR2", "zarr 2.18");
    zarr3.zip(zarr2)
}

/// Runs `python` with `args` and the extra environment `envs`, asserts
/// that it succeeded, and returns its stdout.
pub fn run<S: AsRef<OsStr>>(python: &Path, args: &[S], envs: &[(&str, &str)]) -> String {
    let output = std::process::Command::new(python)
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{} {:?} failed: {}\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        python.display(),
        args.iter()
            .map(|a| a.as_ref().to_string_lossy())
            .collect::<Vec<_>>(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The path of a script in `testdata/generate/`.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/generate")
        .join(name)
}

/// The error and its sources, joined by `: `.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Native-endian elements (a whole number of them) to little-endian, in
/// place: each endian unit of `data_type` reversed on big-endian machines.
pub fn to_little_endian(bytes: &mut [u8], data_type: &DataType) {
    if cfg!(target_endian = "big") {
        let size = data_type.size();
        for element in bytes.chunks_exact_mut(size) {
            for (offset, unit) in data_type.endian_units() {
                element[offset..offset + unit].reverse();
            }
        }
    }
}

/// Whether to race to create arrays or groups in [`race_to_create`].
#[derive(Clone, Copy, Debug)]
pub enum Racing {
    /// `ArrayBuilder::create` with overwriting off.
    Arrays,
    /// `Group::create_as`.
    Groups,
}

/// Lets `writers` threads create a node at `path` of `store` in `format`
/// all at once, each with an attribute `writer` naming it (and an array
/// shape of its own), and checks that exactly one succeeds, that the
/// others get `Error::NodeExists` naming what is there, and that the node
/// is the winner's whole.
///
/// # Panics
/// When any of that does not hold.
pub fn race_to_create(
    store: &std::sync::Arc<dyn zarrkit::store::Store>,
    format: zarrkit::format::ZarrFormat,
    path: &str,
    writers: u64,
    racing: Racing,
) {
    use std::sync::{Arc, Barrier};
    use zarrkit::metadata::JsonMap;
    use zarrkit::{Array, Error, Group, NodeKind};
    let attributes = |writer: u64| {
        let mut map = JsonMap::new();
        map.insert("writer".into(), writer.into());
        map
    };
    let barrier = Barrier::new(usize::try_from(writers).unwrap());
    let results: Vec<Result<(), Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..writers)
            .map(|writer| {
                let (store, barrier) = (Arc::clone(store), &barrier);
                scope.spawn(move || {
                    let builder = Array::builder(&[10 + writer], DataType::Int32, &[5])
                        .format(format)
                        .attributes(attributes(writer));
                    barrier.wait();
                    match racing {
                        Racing::Arrays => builder.create(store, path).map(drop),
                        Racing::Groups => {
                            Group::create_as(store, path, format, attributes(writer)).map(drop)
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let winners: Vec<u64> = (0..writers)
        .filter(|&w| results[usize::try_from(w).unwrap()].is_ok())
        .collect();
    assert_eq!(
        winners.len(),
        1,
        "{racing:?} in {format} at `{path}` of {}: {writers} writers, winners {winners:?}: {:?}",
        store.name(),
        results
            .iter()
            .map(|r| r.as_ref().map_err(ToString::to_string))
            .collect::<Vec<_>>()
    );
    let expected_kind = match racing {
        Racing::Arrays => NodeKind::Array,
        Racing::Groups => NodeKind::Group,
    };
    for result in &results {
        match result {
            Ok(()) => {}
            Err(Error::NodeExists { found, .. }) => assert_eq!(*found, expected_kind),
            Err(err) => panic!("a losing writer failed otherwise: {err}"),
        }
    }
    let winner = winners[0];
    let stored = match racing {
        Racing::Arrays => {
            let array = Array::open(Arc::clone(store), path).unwrap();
            assert_eq!(array.shape(), [10 + winner], "the winner's shape");
            array.attributes().clone()
        }
        Racing::Groups => Group::open(Arc::clone(store), path)
            .unwrap()
            .attributes()
            .clone(),
    };
    assert_eq!(stored, attributes(winner), "the winner's attributes");
}
