//! `zarrkit.migrate`: the library's whole-hierarchy migration
//! ([`zarrkit::migrate`]), reporting what it did (or, for a dry run, what
//! it would do) as `zarrkit migrate --json` prints it.

use super::{Store_, invalid, message, py_err, raise, store_options};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;
use zarrkit::format::ZarrFormat;
use zarrkit::migrate::{self as lib, MigrateError, PlanOptions};
use zarrkit::store::{MemoryStore, Store};

/// The Python exception of a migration error.
fn migrate_err(error: MigrateError) -> PyErr {
    match error {
        MigrateError::Zarr(e) => py_err(e),
        MigrateError::DestinationNotEmpty { .. } => raise("NodeExistsError", message(&error)),
        MigrateError::NotRepresentable { .. } => raise("InvalidValueError", message(&error)),
        other => raise("ZarrkitError", message(&other)),
    }
}

/// The target format named `to` (`"v3"`, `"v2"`, a draft's name; `3`
/// and `2` as numbers are taken too).
fn target_format(to: &str) -> PyResult<ZarrFormat> {
    let name = match to {
        "3" => "v3",
        "2" => "v2",
        other => other,
    };
    ZarrFormat::ALL
        .iter()
        .copied()
        .find(|f| f.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = ZarrFormat::ALL.iter().map(|f| f.name()).collect();
            invalid(format!(
                "unknown format `{to}`; one of: {}",
                names.join(", ")
            ))
        })
}

/// Migrates the hierarchy of `src` into `dst` (a location, created if
/// missing; it must be empty or hold an unfinished migration of `src` to
/// resume) in the format `to`, verifies it, and returns the report as
/// JSON text: `zarrkit migrate --json`'s object. With `dry_run`, nothing is
/// written and the plan is returned (`--dry-run --json`'s object); `dst`
/// may then be `None` (planned against an empty store).
#[pyfunction]
#[pyo3(signature = (src, dst, to, dry_run, portable, dst_storage_options=None))]
pub(crate) fn migrate(
    py: Python<'_>,
    src: &Bound<'_, Store_>,
    dst: Option<String>,
    to: &str,
    dry_run: bool,
    portable: bool,
    dst_storage_options: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let format = target_format(to)?;
    if portable && !format.is_v3() {
        return Err(invalid(format!(
            "portable applies to v3 only (it chooses codecs every v3 reader has), not `{}`",
            format.name()
        )));
    }
    let options = store_options(dst_storage_options)?;
    let source = Arc::clone(&src.get().store);
    let src_location = src.get().location.clone();
    let plan_options = PlanOptions::default().portable(portable);
    let result = py.detach(move || -> Result<serde_json::Value, PyErrText> {
        let local_missing = |loc: &str| !loc.contains("://") && !std::path::Path::new(loc).exists();
        let destination: Arc<dyn Store> = match &dst {
            // A dry run creates nothing: a destination not there yet is
            // planned as an empty store.
            None => Arc::new(MemoryStore::new()),
            Some(loc) if dry_run && local_missing(loc) => Arc::new(MemoryStore::new()),
            Some(loc) if dry_run => zarrkit::store::open(loc, &options).map_err(store_text)?,
            Some(loc) => zarrkit::store::open_or_create(loc, &options).map_err(store_text)?,
        };
        if dst.is_none() && !dry_run {
            return Err(PyErrText::Invalid(
                "migrate needs a destination (`dst`) unless `dry_run` is true".into(),
            ));
        }
        let plan = lib::plan_with(source, Arc::clone(&destination), format, &plan_options)
            .map_err(PyErrText::Migrate)?;
        if dry_run {
            return Ok(plan.to_json(&src_location, dst.as_deref()));
        }
        let resumed = plan.resumes();
        let report = lib::migrate(&plan, &mut |_| {}).map_err(PyErrText::Migrate)?;
        // A zip archive is written now, whole (other stores wrote through).
        destination.finish().map_err(store_text)?;
        let destination = dst.as_deref().unwrap_or_default();
        Ok(report.to_json(&plan, &src_location, destination, resumed))
    });
    match result {
        Ok(value) => Ok(value.to_string()),
        Err(PyErrText::Migrate(e)) => Err(migrate_err(e)),
        Err(PyErrText::Store(e)) => Err(py_err(zarrkit::Error::Store(e))),
        Err(PyErrText::Invalid(text)) => Err(invalid(text)),
    }
}

/// What fails inside the GIL-free part, turned into a Python exception
/// once the GIL is held again.
enum PyErrText {
    Migrate(MigrateError),
    Store(zarrkit::store::StoreError),
    Invalid(String),
}

fn store_text(e: zarrkit::store::StoreError) -> PyErrText {
    PyErrText::Store(e)
}
