//! The subcommands, and what they share: finding the store and the node a
//! path names, opening the store, and formatting values.

pub mod attrs;
pub mod bench;
pub mod check;
pub mod completions;
pub mod consolidate;
pub mod cp;
pub mod create;
pub mod diff;
pub mod export;
pub mod get;
pub mod import;
pub mod info;
pub mod layout;
pub mod ls;
pub mod migrate;
pub mod node_arg;
pub mod progress;
pub mod resize;
pub mod rm;
pub mod set;
pub mod sink;
pub mod stats;
pub mod tree;

use crate::prefetched::Prefetched;
use anyhow::{Context, bail};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use zarrkit::NodePath;
use zarrkit::store::{
    ByteRange, FilesystemStore, SkipReason, Store, StoreError, StoreKey, StoreOptions,
};

/// The names of node documents in every format read (v3 `zarr.json`, v2
/// `.zarray` and `.zgroup`, v1 `meta`), as the library lists them.
const NODE_DOCUMENTS: &[&str] = zarrkit::format::NODE_DOCUMENT_NAMES;

/// The name of a v3 node document, which the library lists first.
const NODE_DOCUMENT: &str = NODE_DOCUMENTS[0];

/// Whether `dir` holds a node document of any format.
fn is_node_dir(dir: &Path) -> bool {
    NODE_DOCUMENTS.iter().any(|name| dir.join(name).is_file())
}

/// The help text, shared by `info` and `tree`, on how `STORE[/PATH]` is split.
pub const LOCATE_HELP: &str = "\
How STORE[/PATH] is split: the directories holding a `zarr.json` (or, for \
Zarr v2, a `.zarray` or `.zgroup`; for v1, a `meta` file) that contain the given path, from the deepest upward, are nodes of one hierarchy, \
and the topmost of them is the store root; the rest of the path is the node \
inside it. So `data/my.zarr/a/b` opens node `/a/b` of store `data/my.zarr` \
when `data/my.zarr/zarr.json`, `data/my.zarr/a/zarr.json` and \
`data/my.zarr/a/b/zarr.json` exist and `data/zarr.json` does not. A path \
below a node that does not exist still finds the store (and then reports \
that the node is missing). With `--path`, no search is made: the first \
argument is the store root and `--path` names the node.

A URL (`s3://bucket/data.zarr/a/b`, `gs://…`, `az://…`, `https://…`) is \
split the same way, by looking for the node documents under each prefix \
of its path (all in one batch of requests).

A zip archive (`data.zip`, `image.ozx`, or one inside a URL: `s3://bucket/image.ome.zip`) is a store whose root is the archive's root: `data.zip/a/b` opens node `/a/b` of the archive `data.zip`.";

/// A store root on the filesystem and a node inside it.
#[derive(Debug)]
pub struct Location {
    /// The store's root directory.
    pub root: PathBuf,
    /// The node inside the store.
    pub node: NodePath,
    /// What a remote store's probe read, keyed from the store root, when
    /// it found no [`zarrkit::migrate::MIGRATION_MARKER`] there (the probe
    /// asks for it in the same batch): [`open_located`] then neither asks
    /// for the marker again nor reads these keys again.
    pub probed: Option<HashMap<StoreKey, Option<Vec<u8>>>>,
}

/// Splits `target` into a store root and a node, as [`LOCATE_HELP`] says,
/// or takes `target` as the root when `explicit_node` names the node.
///
/// # Errors
/// If the target does not exist, no hierarchy contains it, a path component
/// is not valid UTF-8, or the node path is invalid.
pub fn locate(target: &Path, explicit_node: Option<&str>) -> anyhow::Result<Location> {
    if let Some((archive, rest)) = zip_archive(target) {
        // A zip archive's root is its store root (as zarr-python's
        // `ZipStore` and zipped OME-Zarr have it); the rest names the node.
        let node = match explicit_node {
            Some(node) => node.to_string(),
            None => rest.join("/"),
        };
        return Ok(Location {
            root: archive,
            node: NodePath::new(&node)?,
            probed: None,
        });
    }
    if let Some(url) = url_of(target) {
        return locate_remote(url, explicit_node);
    }
    if let Some(node) = explicit_node {
        check_store_dir(target)?;
        return Ok(Location {
            root: target.to_path_buf(),
            node: NodePath::new(node)?,
            probed: None,
        });
    }
    // `STORE/a/zarr.json` (or `.zarray`, `.zgroup`) means the node `STORE/a`;
    // a directory of such a name (a v2 node called `meta`) is itself a node.
    let target = if target
        .file_name()
        .is_some_and(|n| NODE_DOCUMENTS.iter().any(|d| n == *d))
        && !target.is_dir()
    {
        target.parent().unwrap_or(Path::new("."))
    } else {
        target
    };
    check_no_link_out_of_hierarchy(target)?;
    let (existing, rest) = split_existing(target);
    let Some(existing) = existing else {
        bail!("`{}` does not exist", target.display());
    };
    // Resolve `..`, `.` and symbolic links in the part that exists, so that
    // walking upward walks real parent directories.
    let mut full = std::fs::canonicalize(&existing)
        .with_context(|| format!("cannot resolve `{}`", existing.display()))?;
    for name in &rest {
        full.push(name);
    }
    let mut root = None;
    for dir in full.ancestors() {
        if is_node_dir(dir) {
            root = Some(dir);
        } else if root.is_some() {
            break;
        }
    }
    let Some(root) = root else {
        if rest.is_empty() {
            bail!(
                "no Zarr hierarchy at `{}`: neither it nor a parent directory holds `{NODE_DOCUMENT}`, `.zarray`, `.zgroup` or a v1 `meta`",
                target.display()
            );
        }
        bail!("`{}` does not exist", target.display());
    };
    let mut names = Vec::new();
    for component in full
        .strip_prefix(root)
        .unwrap_or(Path::new(""))
        .components()
    {
        let name = component.as_os_str().to_str().with_context(|| {
            format!(
                "the path `{}` is not valid UTF-8, so it cannot name a node",
                target.display()
            )
        })?;
        names.push(name);
    }
    Ok(Location {
        root: root.to_path_buf(),
        node: NodePath::new(&names.join("/"))?,
        probed: None,
    })
}

/// Whether `root` (a located store root) is a directory of the local
/// filesystem: not a URL, not a zip archive.
pub fn is_local_dir(root: &Path) -> bool {
    url_of(root).is_none() && zip_archive(root).is_none() && root.is_dir()
}

/// Refuses a `target` that reaches, from inside a hierarchy, through a
/// symbolic link that leads out of it: `data.zarr/ext/victim` with
/// `data.zarr/ext -> /elsewhere` would otherwise locate (and let `rm`
/// remove) the node `/elsewhere/victim`, as the store refuses to read or
/// write through such a link (unless `--follow-links-outside-root`).
/// Links in the path to the hierarchy itself are followed.
///
/// # Errors
/// [`StoreError::LinkOutsideRoot`] naming the path from the hierarchy's
/// root through the link, and where the link leads.
fn check_no_link_out_of_hierarchy(target: &Path) -> anyhow::Result<()> {
    if FOLLOW_LINKS_OUTSIDE_ROOT.load(Ordering::Relaxed) {
        return Ok(());
    }
    let Ok(absolute) = std::path::absolute(target) else {
        return Ok(());
    };
    let mut walked = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                // `..` after a link leaves from where the link leads.
                walked = std::fs::canonicalize(&walked).unwrap_or(walked);
                walked.pop();
                continue;
            }
            Component::CurDir => continue,
            Component::Normal(_) => {}
            _ => {
                walked.push(component);
                continue;
            }
        }
        walked.push(component);
        let is_link = std::fs::symlink_metadata(&walked).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            continue;
        }
        // The hierarchy the link sits in: from the nearest node directory
        // above it (a chunk directory holds no document), the topmost of
        // the node directories above that without a break.
        let Some(parent) = walked.parent() else {
            continue;
        };
        let Some(root) = parent
            .ancestors()
            .skip_while(|dir| !is_node_dir(dir))
            .take_while(|dir| is_node_dir(dir))
            .last()
        else {
            continue;
        };
        let (Ok(root_canonical), Ok(leads_to)) =
            (std::fs::canonicalize(root), std::fs::canonicalize(&walked))
        else {
            continue;
        };
        if !leads_to.starts_with(&root_canonical) {
            let key = walked
                .strip_prefix(root)
                .unwrap_or(&walked)
                .to_string_lossy()
                .replace(std::path::MAIN_SEPARATOR, "/");
            return Err(StoreError::LinkOutsideRoot {
                store: "filesystem store",
                key,
                target: leads_to.display().to_string(),
            })
            .with_context(|| format!("cannot locate `{}`", target.display()));
        }
    }
    Ok(())
}

/// The URL `target` is (`s3://…`, `https://…`), or `None` for a local path.
pub fn url_of(target: &Path) -> Option<&str> {
    let text = target.to_str()?;
    let (scheme, _) = text.split_once("://")?;
    let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    is_scheme.then_some(text)
}

/// [`locate`] for a URL: probes every prefix of the URL's path for the
/// node documents of every format, in one batch, and takes the topmost of
/// the prefixes holding one (that contain the target) as the store root.
/// The same batch asks each prefix for the migration marker and the
/// attribute documents that opening a node reads, so that opening the
/// store and the node found costs no second round trip (#13).
fn locate_remote(url: &str, explicit_node: Option<&str>) -> anyhow::Result<Location> {
    let (scheme, rest) = url.split_once("://").unwrap_or((url, ""));
    let rest = rest.trim_end_matches('/');
    let url = format!("{scheme}://{rest}");
    if let Some(node) = explicit_node {
        return Ok(Location {
            root: PathBuf::from(url),
            node: NodePath::new(node)?,
            probed: None,
        });
    }
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let base = format!("{scheme}://{host}");
    let mut names: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    // `…/a/zarr.json` (or `.zarray`, `.zgroup`) means the node `…/a`.
    if names.last().is_some_and(|n| NODE_DOCUMENTS.contains(n)) {
        names.pop();
    }
    let store = open_url(&base)?;
    let mut requests = Vec::new();
    // What opening a node reads besides its document: v2's and v1's
    // attributes.
    let documents: Vec<&str> = NODE_DOCUMENTS
        .iter()
        .copied()
        .chain([".zattrs", "attrs"])
        .collect();
    for depth in 0..=names.len() {
        for document in &documents {
            let mut key = names[..depth].join("/");
            if !key.is_empty() {
                key.push('/');
            }
            key.push_str(document);
            requests.push((StoreKey::new(key)?, None));
        }
    }
    // Each candidate root's migration marker; an empty suffix asks whether
    // it exists without reading it, as `check_finished` does.
    let markers = requests.len();
    for depth in 0..=names.len() {
        let mut key = names[..depth].join("/");
        if !key.is_empty() {
            key.push('/');
        }
        key.push_str(zarrkit::migrate::MIGRATION_MARKER);
        requests.push((StoreKey::new(key)?, Some(ByteRange::Suffix(0))));
    }
    let found = store
        .get_partial_values(&requests)
        .with_context(|| format!("cannot look for a Zarr hierarchy at `{url}`"))?;
    let is_node = |depth: usize| {
        found[depth * documents.len()..][..NODE_DOCUMENTS.len()]
            .iter()
            .any(Option::is_some)
    };
    let mut root = None;
    for depth in (0..=names.len()).rev() {
        if is_node(depth) {
            root = Some(depth);
        } else if root.is_some() {
            break;
        }
    }
    let Some(root) = root else {
        bail!(
            "no Zarr hierarchy at `{url}`: neither it nor a prefix above it holds `{NODE_DOCUMENT}`, `.zarray`, `.zgroup` or a v1 `meta`"
        );
    };
    let mut root_url = base;
    for name in &names[..root] {
        root_url.push('/');
        root_url.push_str(name);
    }
    Ok(Location {
        root: PathBuf::from(root_url),
        node: NodePath::new(&names[root..].join("/"))?,
        // With a marker, `open_located` asks again and reports it.
        probed: found[markers + root].is_none().then(|| {
            let at_root = if root == 0 {
                0
            } else {
                names[..root].join("/").len() + 1
            };
            requests[root * documents.len()..markers]
                .iter()
                .zip(&found[root * documents.len()..markers])
                .filter_map(|((key, _), value)| {
                    let key = StoreKey::new(&key.as_str()[at_root..]).ok()?;
                    Some((key, value.clone()))
                })
                .collect()
        }),
    })
}

/// The options of every store opened from now on (`--anonymous`,
/// `--storage-option`), set once by `main`.
static STORE_OPTIONS: OnceLock<StoreOptions> = OnceLock::new();

/// Sets the options remote stores are opened with.
pub fn set_store_options(options: StoreOptions) {
    let _ = STORE_OPTIONS.set(options);
}

/// Opens the remote store or zip archive at `url` with the command line's options.
///
/// # Errors
/// If the URL is malformed or names a store this build cannot open.
pub fn open_url(url: &str) -> anyhow::Result<Arc<dyn Store>> {
    zarrkit::store::open(url, &store_options())
        .with_context(|| format!("cannot open store `{url}`"))
}

/// The options of the command line (`--anonymous`, `--storage-option`).
pub fn store_options() -> StoreOptions {
    STORE_OPTIONS.get().cloned().unwrap_or_default()
}

/// Whether `err` is a malformed location or storage option, which the
/// command line reports as a usage error (exit code 2).
pub fn is_usage_error(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<StoreError>(),
            Some(StoreError::InvalidLocation { .. } | StoreError::InvalidOption { .. })
        )
    })
}

/// `path` made absolute with `..`, `.` and symbolic links resolved in the
/// part of it that exists (the rest, which does not exist yet, appended).
///
/// # Errors
/// If the existing part cannot be resolved.
pub fn resolve(path: &Path) -> anyhow::Result<PathBuf> {
    let (existing, rest) = split_existing(path);
    let existing = existing.with_context(|| format!("cannot resolve `{}`", path.display()))?;
    let mut full = std::fs::canonicalize(&existing)
        .with_context(|| format!("cannot resolve `{}`", existing.display()))?;
    for name in &rest {
        full.push(name);
    }
    Ok(full)
}

/// The longest prefix of `path` that exists, and the names after it.
fn split_existing(path: &Path) -> (Option<PathBuf>, Vec<std::ffi::OsString>) {
    let mut rest = Vec::new();
    let mut current = path.to_path_buf();
    let existing = loop {
        if current.as_os_str().is_empty() {
            // A relative path whose first name does not exist: it lies in `.`.
            break Some(PathBuf::from("."));
        }
        if current.exists() {
            break Some(current);
        }
        match current.components().next_back() {
            Some(Component::Normal(name)) => {
                rest.push(name.to_os_string());
                current.pop();
            }
            // `..`, a root or a prefix that does not exist: nothing to walk up to.
            _ => break None,
        }
    };
    rest.reverse();
    (existing, rest)
}

/// Whether `name` is a zip archive's name (`.zip`, or zipped OME-Zarr's `.ozx`).
fn is_zip_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.ends_with(".zip") || name.ends_with(".ozx")
}

/// The zip archive `target` lies in, and the names after it: the first
/// component named `*.zip` (or `*.ozx`) that is, locally, not a directory
/// (a directory named `x.zip` is an ordinary store), or, in a URL, any
/// (`s3://bucket/image.ome.zip/0`). `None` when it lies in none.
pub fn zip_archive(target: &Path) -> Option<(PathBuf, Vec<String>)> {
    if let Some(url) = url_of(target) {
        let (scheme, rest) = url.split_once("://")?;
        let names: Vec<&str> = rest.split('/').collect();
        // The first name is the bucket or host, never the archive.
        let at = names.iter().skip(1).position(|n| is_zip_name(n))? + 1;
        let archive = format!("{scheme}://{}", names[..=at].join("/"));
        let rest = names[at + 1..]
            .iter()
            .filter(|n| !n.is_empty())
            .map(ToString::to_string)
            .collect();
        return Some((PathBuf::from(archive), rest));
    }
    let mut prefix = PathBuf::new();
    let mut components = target.components();
    for component in components.by_ref() {
        prefix.push(component);
        let is_zip = component.as_os_str().to_str().is_some_and(is_zip_name);
        if is_zip && !prefix.is_dir() {
            let rest = components
                .filter_map(|c| match c {
                    Component::Normal(name) => name.to_str().map(ToString::to_string),
                    _ => None,
                })
                .collect();
            return Some((prefix, rest));
        }
    }
    None
}

/// Checks that `root` is a directory, so that opening a store never creates one.
///
/// # Errors
/// If it does not exist or is not a directory (URLs and zip archives pass).
pub fn check_store_dir(root: &Path) -> anyhow::Result<()> {
    if url_of(root).is_some() || zip_archive(root).is_some() {
        return Ok(());
    }
    match std::fs::metadata(root) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => bail!("store `{}` is not a directory", root.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!("store `{}` does not exist", root.display())
        }
        Err(e) => Err(e).with_context(|| format!("cannot open store `{}`", root.display())),
    }
}

/// Whether stores follow symbolic links out of their root
/// (`--follow-links-outside-root`), set once by `main`.
static FOLLOW_LINKS_OUTSIDE_ROOT: AtomicBool = AtomicBool::new(false);

/// The stores this run opened, to report the links their listings skipped.
static OPENED: Mutex<Vec<FilesystemStore>> = Mutex::new(Vec::new());

/// Makes every store opened from now on follow links out of its root.
pub fn follow_links_outside_root(follow: bool) {
    FOLLOW_LINKS_OUTSIDE_ROOT.store(follow, Ordering::Relaxed);
}

/// Opens the store `location` names, as [`open_store`] does, without
/// asking again for the migration marker or the documents when locating
/// already read them.
///
/// # Errors
/// As [`open_store`].
pub fn open_located(location: &Location) -> anyhow::Result<Arc<dyn Store>> {
    match (&location.probed, url_of(&location.root)) {
        (Some(probed), Some(url)) if zip_archive(&location.root).is_none() => {
            Ok(Arc::new(Prefetched::new(open_url(url)?, probed.clone())))
        }
        _ => open_store(&location.root),
    }
}

/// Opens the store at `root`: a URL, or an existing directory.
///
/// # Errors
/// If `root` is not a directory or the store cannot be opened.
pub fn open_store(root: &Path) -> anyhow::Result<Arc<dyn Store>> {
    if zip_archive(root).is_some() {
        let location = root
            .to_str()
            .context("a zip archive's path must be UTF-8")?;
        let store = open_url(location)?;
        zarrkit::migrate::check_finished(store.as_ref())
            .with_context(|| format!("cannot open store `{location}`"))?;
        return Ok(store);
    }
    if let Some(url) = url_of(root) {
        let store = open_url(url)?;
        zarrkit::migrate::check_finished(store.as_ref())
            .with_context(|| format!("cannot open store `{url}`"))?;
        return Ok(store);
    }
    check_store_dir(root)?;
    let store = FilesystemStore::open_existing(root)
        .with_context(|| format!("cannot open store `{}`", root.display()))?
        .follow_links_outside_root(FOLLOW_LINKS_OUTSIDE_ROOT.load(Ordering::Relaxed));
    // A clone shares the record of skipped links.
    OPENED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(store.clone());
    // The destination of an interrupted `migrate` opens like a complete
    // store, but reads its missing chunks as the fill value: refuse it.
    zarrkit::migrate::check_finished(&store)
        .with_context(|| format!("cannot open store `{}`", root.display()))?;
    Ok(Arc::new(store))
}

/// Warnings about the consolidated metadata that a read of `node` would
/// otherwise pass over in silence: the root group's consolidated metadata
/// is invalid, disagrees with the root's own document, or disagrees with
/// `node`'s real document (the commands read the real documents; the README
/// promises a warning). Each is printed on stderr as `warning: …`. Cheap:
/// it reads the root's documents and `node`'s, not the whole hierarchy.
pub fn warn_stale_consolidated(store: &Arc<dyn Store>, node: &NodePath) {
    // A store without a root group (an array at `/`, v1, tensorstore's
    // stores) has no consolidated metadata to go stale.
    let Ok(mut root) = zarrkit::Group::open(Arc::clone(store), "/") else {
        return;
    };
    if root.is_consolidated() && !node.is_root() {
        // Records a warning when the entry and the document disagree.
        let _ = root.open_node_checked(node.as_str());
    }
    for warning in root.warnings() {
        eprintln!("warning: {warning}");
    }
}

/// Runs `work` (parallel work that reads from `store`) on a pool with a
/// thread per request in flight when the store is remote (at most 32:
/// each thread holds one chunk), where rayon's global pool (`--threads`,
/// one thread per core) would keep one or two requests in flight; on
/// rayon's global pool otherwise.
pub fn on_io_pool<T: Send>(store: &dyn Store, work: impl FnOnce() -> T + Send) -> T {
    let threads = store.concurrency().min(32);
    if threads > 1
        && let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(threads).build()
    {
        return pool.install(work);
    }
    work()
}

/// `n` and the noun in the right number: `1 group`, `2 groups`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The warnings for the symbolic links that listings of the stores opened
/// so far skipped (loops, links out of the root, unresolvable links).
pub fn skipped_link_warnings() -> Vec<String> {
    let opened = OPENED.lock().unwrap_or_else(PoisonError::into_inner);
    let mut warnings: Vec<String> = opened
        .iter()
        .flat_map(|store| {
            store.skipped_links().into_iter().map(move |link| {
                let hint = if link.reason == SkipReason::OutsideRoot {
                    " (--follow-links-outside-root follows it)"
                } else {
                    ""
                };
                format!(
                    "store `{}`: skipped symbolic link {link}{hint}",
                    store.root().display()
                )
            })
        })
        .collect();
    warnings.dedup();
    warnings
}

/// Whether `err` is a store refusing a link out of its root.
pub fn is_link_outside_root(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<StoreError>(),
            Some(StoreError::LinkOutsideRoot { .. })
        ) || matches!(
            cause.downcast_ref::<zarrkit::Error>(),
            Some(zarrkit::Error::Store(StoreError::LinkOutsideRoot { .. }))
        )
    })
}

/// A shape or chunk shape as `[365, 720, 1440]`.
pub fn format_shape(shape: &[u64]) -> String {
    format!("{shape:?}")
}

/// A byte count with a binary-prefixed size after it when that helps:
/// `1536 bytes (1.5 KiB)`.
pub fn format_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    #[allow(clippy::cast_precision_loss)] // A display value only.
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{n} bytes ({value:.1} {})", UNITS[unit])
}

/// The product of `values`, or `None` on overflow.
pub fn product(values: &[u64]) -> Option<u64> {
    values.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_show_binary_prefixes() {
        assert_eq!(format_bytes(1000), "1000 bytes");
        assert_eq!(format_bytes(1536), "1536 bytes (1.5 KiB)");
        assert_eq!(format_bytes(3 << 20), "3145728 bytes (3.0 MiB)");
    }

    #[test]
    fn split_existing_keeps_the_missing_names() {
        let dir = tempfile::tempdir().unwrap();
        let (existing, rest) = split_existing(&dir.path().join("a/b"));
        assert_eq!(existing.as_deref(), Some(dir.path()));
        assert_eq!(rest, ["a", "b"]);
    }
}
