//! Untrusted keys, node paths, consolidated metadata, zip member names,
//! URLs and symbolic links cannot make zarrkit read or write outside a
//! store's root (issue #17, "Security").
//!
//! Each test puts a sentinel beside the store root (`outside/`: a secret
//! file and a whole array whose chunk an escape would read or overwrite)
//! and checks that it is neither read nor changed, and that the error
//! names the key or path and the rule it breaks.

use crate::support::error_chain;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::metadata::{DataType, JsonMap};
use zarrkit::store::{FilesystemStore, Store, StoreError, StoreKey, StorePrefix};
use zarrkit::{Array, Group, Region};

const SECRET: &[u8] = b"sentinel: never read, never changed";

/// A v3 `uint8` array of 4 elements in one chunk, as JSON.
const ARRAY_DOCUMENT: &str = r#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8",
"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},
"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
"fill_value":0,"codecs":[{"name":"bytes"}]}"#;

/// A temporary directory holding the store root `store/` and, beside it,
/// `outside/`: the file `secret` and the array `victim` (chunk `7 7 7 7`),
/// so that an escape by `../outside/victim` would find a real array.
struct Sandbox {
    dir: tempfile::TempDir,
    store: FilesystemStore,
    before: BTreeMap<String, Vec<u8>>,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        fs::create_dir_all(outside.join("victim/c")).unwrap();
        fs::write(outside.join("secret"), SECRET).unwrap();
        fs::write(outside.join("victim/zarr.json"), ARRAY_DOCUMENT).unwrap();
        fs::write(outside.join("victim/c/0"), [7u8; 4]).unwrap();
        let store = FilesystemStore::new(dir.path().join("store")).unwrap();
        let before = files(&outside);
        Self { dir, store, before }
    }

    fn root(&self) -> &Path {
        self.store.root()
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    fn arc(&self) -> Arc<dyn Store> {
        Arc::new(self.store.clone())
    }

    /// Asserts that nothing outside the root changed: the same files with
    /// the same bytes, and nothing new beside `store` and `outside`.
    #[track_caller]
    fn assert_outside_untouched(&self) {
        assert_eq!(files(&self.outside()), self.before, "outside/ changed");
        let mut names: Vec<String> = fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["outside", "store"],
            "something appeared beside the root"
        );
    }
}

/// Every file under `dir` (not following links), relative, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(root, &path, out);
            } else if kind.is_symlink() {
                let target = fs::read_link(&path).unwrap();
                out.insert(
                    format!("{rel} ->"),
                    target.to_string_lossy().into_owned().into(),
                );
            } else {
                out.insert(rel, fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

/// Strings that would name a path outside the root, or another path than
/// they seem, if joined onto it: each with the words of the rule it breaks.
const ESCAPING: &[(&str, &str)] = &[
    ("..", "`.` or `..` segment"),
    ("../outside/secret", "`.` or `..` segment"),
    ("a/../../outside/secret", "`.` or `..` segment"),
    ("a/..", "`.` or `..` segment"),
    ("./a", "`.` or `..` segment"),
    ("/etc/passwd", "absolute path"),
    ("/outside/secret", "absolute path"),
    ("a//b", "empty segment"),
    ("a/", "empty segment"),
    ("..\\outside\\secret", "backslash"),
    ("a\\b", "backslash"),
    ("a\0b", "NUL"),
    ("../outside/secret\0.json", "`.` or `..` segment"),
];

#[test]
fn keys_that_could_escape_are_refused_naming_the_key_and_the_rule() {
    let sandbox = Sandbox::new();
    for (bad, rule) in ESCAPING {
        let err = StoreKey::new(*bad).unwrap_err();
        let message = err.to_string();
        assert!(
            matches!(err, StoreError::InvalidKey { .. }),
            "{bad:?}: {err:?}"
        );
        assert!(
            message.contains(&format!("`{}`", bad.escape_debug())),
            "{bad:?}: {message}"
        );
        assert!(message.contains(rule), "{bad:?}: {message}");
        // As a prefix, and joined onto a valid prefix, too.
        if !bad.ends_with('/') {
            assert!(StorePrefix::new(format!("{bad}/")).is_err(), "{bad:?}/");
        }
        assert!(
            StorePrefix::new("a/").unwrap().key(bad).is_err(),
            "a/{bad:?}"
        );
        assert!(
            StorePrefix::new("a/").unwrap().child(bad).is_err(),
            "a/{bad:?}/"
        );
    }
    assert!(StoreKey::new("").is_err());
    sandbox.assert_outside_untouched();
}

#[test]
fn percent_encodings_and_dots_in_names_stay_literal_names_inside_the_root() {
    let sandbox = Sandbox::new();
    // Keys are not URLs: `%2e%2e` is a name of six characters, `%2F` no
    // separator, and `...` or `.x` plain names.
    let literal = [
        "%2e%2e/outside/secret",
        "%2E%2E%2Foutside%2Fsecret",
        "a%2F..%2F..%2Foutside/secret",
        ".../secret",
        "..a/.b/c..",
        "~/secret",
        "$HOME/secret",
    ];
    for name in literal {
        sandbox.store.set(&key(name), b"inside").unwrap();
        let path = name
            .split('/')
            .fold(sandbox.root().to_path_buf(), |p, s| p.join(s));
        assert_eq!(fs::read(&path).unwrap(), b"inside", "{name}");
        assert_eq!(
            sandbox.store.get(&key(name), None).unwrap().unwrap(),
            b"inside"
        );
    }
    let mut listed: Vec<String> = sandbox
        .store
        .list()
        .unwrap()
        .iter()
        .map(|k| k.as_str().to_string())
        .collect();
    listed.sort();
    let mut expected: Vec<String> = literal.iter().map(|s| (*s).to_string()).collect();
    expected.sort();
    assert_eq!(listed, expected);
    for name in literal {
        sandbox.store.erase(&key(name)).unwrap();
    }
    assert!(sandbox.store.list().unwrap().is_empty());
    sandbox.assert_outside_untouched();
}

#[test]
fn node_paths_that_could_escape_are_refused_naming_the_path() {
    let sandbox = Sandbox::new();
    let store = sandbox.arc();
    Group::create(Arc::clone(&store), "/", JsonMap::new()).unwrap();
    Group::create(Arc::clone(&store), "g", JsonMap::new()).unwrap();
    let escaping = [
        "..",
        "../outside/victim",
        "/../outside/victim",
        "g/../../outside/victim",
        "g/..",
        ".",
        "...",
        "..\\outside\\victim",
        "g\0victim",
        "g//victim",
    ];
    for path in escaping {
        let check = |what: &str, err: zarrkit::Error| {
            let message = error_chain(&err);
            assert!(
                message.contains(&format!("invalid node path `{}`", path.escape_debug()))
                    || message.contains("invalid node path `/g/"),
                "{what} {path:?}: {message}"
            );
        };
        check(
            "Array::open",
            Array::open(Arc::clone(&store), path).unwrap_err(),
        );
        check(
            "Group::open",
            Group::open(Arc::clone(&store), path).unwrap_err(),
        );
        check(
            "Group::create",
            Group::create(Arc::clone(&store), path, JsonMap::new()).unwrap_err(),
        );
        check(
            "Array create",
            Array::builder(&[4], DataType::UInt8, &[4])
                .create(Arc::clone(&store), path)
                .unwrap_err(),
        );
        check(
            "node::erase",
            zarrkit::node::erase(&sandbox.store, path).unwrap_err(),
        );
        check(
            "node::exists",
            zarrkit::node::exists(&sandbox.store, path).unwrap_err(),
        );
        // From a group, a relative path cannot climb out of it either.
        let group = Group::open(Arc::clone(&store), "g").unwrap();
        assert!(group.node(path).is_err(), "g.node({path:?})");
        assert!(group.erase_child(path).is_err(), "g.erase_child({path:?})");
    }
    // A leading `/` names the root of the store, not of the filesystem.
    let array = Array::builder(&[4], DataType::UInt8, &[4])
        .create(Arc::clone(&store), "/outside/victim")
        .unwrap();
    array
        .write_region(&Region::new(vec![0], vec![4]), &[1u8, 2, 3, 4])
        .unwrap();
    assert!(sandbox.root().join("outside/victim/zarr.json").is_file());
    assert!(sandbox.root().join("outside/victim/c/0").is_file());
    let reopened = Array::open(Arc::clone(&store), "outside/victim").unwrap();
    assert_eq!(
        reopened
            .read_region::<u8>(&Region::new(vec![0], vec![4]))
            .unwrap(),
        [1, 2, 3, 4]
    );
    sandbox.assert_outside_untouched();
}

/// The victim's document, as a consolidated-metadata entry.
fn victim_entry() -> serde_json::Value {
    serde_json::from_str(ARRAY_DOCUMENT).unwrap()
}

#[test]
fn v3_consolidated_entries_naming_paths_outside_the_root_are_ignored() {
    for bad in [
        "../outside/victim",
        "a/../../outside/victim",
        "/../outside/victim",
        "..\\outside\\victim",
        "a\u{0}b",
    ] {
        let sandbox = Sandbox::new();
        let store = sandbox.arc();
        let mut metadata = serde_json::Map::new();
        metadata.insert(bad.to_string(), victim_entry());
        let document = serde_json::json!({
            "zarr_format": 3,
            "node_type": "group",
            "attributes": {},
            "consolidated_metadata": {
                "kind": "inline",
                "must_understand": false,
                "metadata": metadata,
            },
        });
        store
            .set(&key("zarr.json"), document.to_string().as_bytes())
            .unwrap();
        let group = Group::open(Arc::clone(&store), "/").unwrap();
        // The consolidated metadata is refused as a whole, with a warning
        // naming the entry and the rule; the real documents are used.
        assert!(!group.is_consolidated(), "{bad:?}");
        let warnings = group.warnings().join("\n");
        // The entry is named as the node path it would be (`/` joined on).
        let named = format!("`/{}`", bad.escape_debug());
        assert!(
            warnings.contains("consolidated metadata of `/` has an invalid key")
                && warnings.contains(&named),
            "{bad:?}: {warnings}"
        );
        assert!(group.children().unwrap().is_empty(), "{bad:?}");
        assert!(group.node(bad).is_err(), "{bad:?}");
        sandbox.assert_outside_untouched();
    }
}

#[test]
fn v2_consolidated_entries_naming_paths_outside_the_root_are_ignored() {
    let array = r#"{"zarr_format":2,"shape":[4],"chunks":[4],"dtype":"|u1","compressor":null,
        "fill_value":0,"order":"C","filters":null}"#;
    for bad in [
        "../outside/victim/.zarray",
        "a/../../outside/victim/.zarray",
        "/../outside/victim/.zarray",
        "..\\outside\\victim/.zarray",
    ] {
        let sandbox = Sandbox::new();
        // The victim as a v2 array too, so that following the entry would find one.
        fs::write(sandbox.outside().join("victim/.zarray"), array).unwrap();
        let sandbox = Sandbox {
            before: files(&sandbox.outside()),
            ..sandbox
        };
        let store = sandbox.arc();
        store.set(&key(".zgroup"), br#"{"zarr_format":2}"#).unwrap();
        let zmetadata = serde_json::json!({
            "zarr_consolidated_format": 1,
            "metadata": {
                ".zgroup": {"zarr_format": 2},
                bad: serde_json::from_str::<serde_json::Value>(array).unwrap(),
            },
        });
        store
            .set(&key(".zmetadata"), zmetadata.to_string().as_bytes())
            .unwrap();
        let group = Group::open(Arc::clone(&store), "/").unwrap();
        assert!(!group.is_consolidated(), "{bad:?}");
        let warnings = group.warnings().join("\n");
        assert!(warnings.contains("invalid"), "{bad:?}: {warnings}");
        assert!(group.children().unwrap().is_empty(), "{bad:?}");
        sandbox.assert_outside_untouched();
    }
}

#[cfg(feature = "zip")]
mod zip_members {
    use super::*;
    use zarrkit::store::ZipStore;

    pub(crate) use zarrkit::store::testing::crafted_zip;

    /// Member names that must never become keys, each with its rule.
    pub(crate) const EVIL_MEMBERS: &[(&[u8], &str)] = &[
        (b"../outside/secret", "`.` or `..` segment"),
        (b"/abs/secret", "absolute path"),
        (b"a/../../outside/secret", "`.` or `..` segment"),
        (b"..\\outside\\secret", "backslash"),
        (b"a\\b", "backslash"),
        (b"a\0b", "NUL"),
        (b"C:/Windows/secret", "drive letter"),
        (b"./zarr.json", "`.` or `..` segment"),
        (b"a//b", "empty segment"),
    ];

    #[test]
    fn zip_members_with_escaping_names_are_never_served() {
        let sandbox = Sandbox::new();
        let mut members: Vec<(&[u8], &[u8])> = vec![(b"zarr.json", b"{}")];
        for (name, _) in EVIL_MEMBERS {
            members.push((name, b"evil"));
        }
        let archive = sandbox.dir.path().join("store/evil.zip");
        fs::write(&archive, crafted_zip(&members)).unwrap();
        let zip = ZipStore::open_path(&archive).unwrap();
        assert_eq!(zip.list().unwrap(), [key("zarr.json")]);
        let skipped = zip.skipped_members();
        assert_eq!(skipped.len(), EVIL_MEMBERS.len(), "{skipped:?}");
        for ((name, rule), member) in EVIL_MEMBERS.iter().zip(skipped) {
            let shown = String::from_utf8_lossy(name).escape_debug().to_string();
            assert_eq!(member.name, shown);
            assert!(member.reason.contains(rule), "{shown}: {}", member.reason);
        }
        // The archive is read-only, and copying it into a directory writes
        // the valid keys only, under the destination.
        let dst = FilesystemStore::new(sandbox.root().join("copy")).unwrap();
        for k in zip.list().unwrap() {
            dst.set(&k, &zip.get(&k, None).unwrap().unwrap()).unwrap();
        }
        assert_eq!(dst.list().unwrap(), [key("zarr.json")]);
        assert!(matches!(
            zip.set(&key("x"), b"1").unwrap_err(),
            StoreError::Unsupported { .. }
        ));
        sandbox.assert_outside_untouched();
    }
}

#[cfg(unix)]
mod symlinks {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A sandbox whose store holds `ext -> ../outside` (a directory link
    /// out), `a/c/0 -> ../../../outside/secret` (a file link out), the
    /// array `a` and the array `outside/victim` reached as `ext/victim`.
    fn linked() -> Sandbox {
        let sandbox = Sandbox::new();
        fs::write(
            sandbox.root().join("zarr.json"),
            r#"{"zarr_format":3,"node_type":"group"}"#,
        )
        .unwrap();
        fs::create_dir_all(sandbox.root().join("a/c")).unwrap();
        fs::write(sandbox.root().join("a/zarr.json"), ARRAY_DOCUMENT).unwrap();
        symlink("../outside", sandbox.root().join("ext")).unwrap();
        symlink(
            sandbox.outside().join("secret"),
            sandbox.root().join("a/c/0"),
        )
        .unwrap();
        sandbox
    }

    #[track_caller]
    fn assert_outside_error(err: &StoreError, key: &str) {
        let message = err.to_string();
        assert!(
            matches!(err, StoreError::LinkOutsideRoot { .. }),
            "{key}: {err:?}"
        );
        assert!(message.contains(&format!("`{key}`")), "{message}");
        assert!(message.contains("outside the store root"), "{message}");
    }

    #[test]
    fn reads_through_links_out_of_the_root_are_refused() {
        let sandbox = linked();
        let store = &sandbox.store;
        for k in [
            "a/c/0",
            "ext/secret",
            "ext/victim/c/0",
            "ext/victim/zarr.json",
        ] {
            assert_outside_error(&store.get(&key(k), None).unwrap_err(), k);
            let ranged = Some(zarrkit::store::ByteRange::new(0, 4));
            assert_outside_error(&store.get(&key(k), ranged).unwrap_err(), k);
            assert_outside_error(&store.get_partial_values(&[(key(k), None)]).unwrap_err(), k);
            assert_outside_error(&store.snapshot(&key(k)).err().unwrap(), k);
            assert!(store.size(&key(k)).is_err(), "{k}");
        }
        // Listings do not follow them, and say so.
        let listed = store.list().unwrap();
        assert_eq!(listed, [key("a/zarr.json"), key("zarr.json")]);
        let prefix = StorePrefix::new("ext/").unwrap();
        assert_outside_error(&store.list_prefix(&prefix).unwrap_err(), "ext/");
        let skipped: Vec<String> = store
            .skipped_links()
            .iter()
            .map(|l| l.path.clone())
            .collect();
        assert_eq!(skipped, ["a/c/0", "ext"]);
        // Through the array API: the chunk's key and the reason.
        let array = Array::open(sandbox.arc(), "a").unwrap();
        let err = array
            .read_region::<u8>(&Region::new(vec![0], vec![4]))
            .unwrap_err();
        let message = error_chain(&err);
        assert!(message.contains("`a/c/0`"), "{message}");
        assert!(message.contains("outside the store root"), "{message}");
        assert!(!message.contains("sentinel"), "{message}");
        assert!(Array::open(sandbox.arc(), "ext/victim").is_err());
        sandbox.assert_outside_untouched();
    }

    #[test]
    fn writes_and_erases_never_go_through_links_out_of_the_root() {
        let sandbox = linked();
        let store = &sandbox.store;
        for k in [
            "ext/secret",
            "ext/new",
            "ext/victim/c/0",
            "ext/deep/new/key",
        ] {
            assert_outside_error(&store.set(&key(k), b"overwritten").unwrap_err(), k);
            assert_outside_error(&store.set_if_absent(&key(k), b"x").unwrap_err(), k);
            assert_outside_error(&store.erase(&key(k)).unwrap_err(), k);
            let snapshot = store.snapshot(&key("zarr.json")).unwrap();
            let version = snapshot.version().unwrap();
            assert!(
                store
                    .set_if_unchanged(&key(k), Some(b"x"), &version)
                    .is_err(),
                "{k}"
            );
        }
        for k in ["a/c/0", "ext/secret", "ext/victim/c/0"] {
            let items = [(key(k), 0u64, b"overwrite".to_vec())];
            assert_outside_error(&store.set_partial_values(&items).unwrap_err(), k);
        }
        assert_outside_error(
            &store
                .erase_prefix(&StorePrefix::new("ext/victim/").unwrap())
                .unwrap_err(),
            "ext/victim/",
        );
        // Through the array API: writing or erasing the linked chunk.
        let mut array = Array::open(sandbox.arc(), "a").unwrap();
        array.set_write_empty_chunks(true);
        let region = Region::new(vec![0], vec![4]);
        // A whole-chunk write replaces the link itself (a rename over it),
        // which leaves its target alone.
        array.write_region(&region, &[9u8; 4]).unwrap();
        let chunk = sandbox.root().join("a/c/0");
        assert!(fs::symlink_metadata(&chunk).unwrap().is_file());
        assert_eq!(fs::read(&chunk).unwrap(), [9u8; 4]);
        sandbox.assert_outside_untouched();
        let victim = Array::builder(&[4], DataType::UInt8, &[4])
            .create(sandbox.arc(), "ext/victim")
            .unwrap_err();
        let message = error_chain(&victim);
        assert!(message.contains("outside the store root"), "{message}");
        sandbox.assert_outside_untouched();

        // Erasing the links removes the links, never their targets.
        store.erase(&key("a/c/0")).ok();
        store
            .erase_prefix(&StorePrefix::new("ext/").unwrap())
            .unwrap();
        assert!(!sandbox.root().join("ext").exists());
        zarrkit::node::erase(store, "a").unwrap();
        store.erase_prefix(&StorePrefix::root()).unwrap();
        assert!(fs::read_dir(sandbox.root()).unwrap().next().is_none());
        sandbox.assert_outside_untouched();
    }

    #[test]
    fn links_inside_the_root_are_followed_and_following_out_is_an_opt_in() {
        let sandbox = linked();
        // A link that stays inside the root is an ordinary alias.
        symlink("a", sandbox.root().join("alias")).unwrap();
        fs::write(sandbox.root().join("a/c/1"), [5u8; 4]).unwrap();
        assert_eq!(
            sandbox.store.get(&key("alias/c/1"), None).unwrap().unwrap(),
            [5u8; 4]
        );
        // Opting in (a store assembled out of links) reads through links out.
        let follow = sandbox.store.clone().follow_links_outside_root(true);
        assert_eq!(follow.get(&key("a/c/0"), None).unwrap().unwrap(), SECRET);
        assert_eq!(
            follow.get(&key("ext/victim/c/0"), None).unwrap().unwrap(),
            [7u8; 4]
        );
        // The default store is not changed by its clone's option.
        assert!(sandbox.store.get(&key("a/c/0"), None).is_err());
        sandbox.assert_outside_untouched();
    }

    #[test]
    fn a_link_swapped_in_for_a_directory_after_opening_is_still_refused() {
        // The check is made on every access, not once at open: a directory
        // replaced by a link out (another process, or an archive extracted
        // meanwhile) is caught at the next read and write.
        let sandbox = Sandbox::new();
        let store = &sandbox.store;
        store.set(&key("d/x"), b"1").unwrap();
        fs::remove_dir_all(sandbox.root().join("d")).unwrap();
        symlink(sandbox.outside(), sandbox.root().join("d")).unwrap();
        assert_outside_error(&store.get(&key("d/secret"), None).unwrap_err(), "d/secret");
        assert_outside_error(&store.set(&key("d/secret"), b"2").unwrap_err(), "d/secret");
        assert_outside_error(&store.erase(&key("d/secret")).unwrap_err(), "d/secret");
        sandbox.assert_outside_untouched();
    }
}

mod urls {
    use super::*;
    use zarrkit::store::{StoreOptions, open, open_or_create};

    #[test]
    fn file_urls_take_their_path_literally() {
        let sandbox = Sandbox::new();
        // `%2e%2e` and `%2F` in a file URL are characters of a directory
        // name, as fsspec's local file system takes them: the URL cannot
        // name a different directory than it shows.
        let dir = sandbox.root().join("x%2F%2e%2e");
        let url = format!("file://{}", dir.display());
        let store = open_or_create(&url, &StoreOptions::new()).unwrap();
        store.set(&key("zarr.json"), b"{}").unwrap();
        assert!(dir.join("zarr.json").is_file());
        let err = open("file://relative/path", &StoreOptions::new())
            .err()
            .unwrap();
        assert!(err.to_string().contains("absolute path"), "{err}");
        sandbox.assert_outside_untouched();
    }

    /// On S3 (SeaweedFS), keys that look like escapes once percent-decoded
    /// are literal object names under the store's prefix: nothing is
    /// written beside it.
    #[cfg(feature = "s3")]
    #[test]
    fn remote_keys_stay_under_the_store_prefix() {
        use crate::remote::{s3_options, s3_store, server};
        let Some((parent, url)) = s3_store("ZARRKIT_S3_ENDPOINT", "security") else {
            return;
        };
        let endpoint = server("ZARRKIT_S3_ENDPOINT").unwrap();
        parent.set(&key("sentinel"), SECRET).unwrap();
        let child = open(&format!("{url}/root"), &s3_options(&endpoint)).unwrap();
        let names = [
            "%2e%2e/sentinel",
            "%2E%2E%2Fsentinel",
            "a%2F..%2F..%2Fsentinel",
            "..a/b",
        ];
        for name in names {
            child.set(&key(name), b"inside").unwrap();
            assert_eq!(child.get(&key(name), None).unwrap().unwrap(), b"inside");
        }
        let mut listed: Vec<String> = parent
            .list()
            .unwrap()
            .iter()
            .map(|k| k.as_str().to_string())
            .collect();
        listed.sort();
        let mut expected: Vec<String> = names.iter().map(|n| format!("root/{n}")).collect();
        expected.push("sentinel".to_string());
        expected.sort();
        assert_eq!(listed, expected);
        assert_eq!(parent.get(&key("sentinel"), None).unwrap().unwrap(), SECRET);
        parent.erase_prefix(&StorePrefix::root()).unwrap();
    }

    #[cfg(feature = "s3")]
    #[test]
    fn remote_url_prefixes_with_dot_segments_are_refused() {
        let options = StoreOptions::new()
            .with("aws_access_key_id", "x")
            .with("aws_secret_access_key", "y")
            .with("aws_region", "us-east-1")
            .with("aws_endpoint", "http://127.0.0.1:9");
        for url in [
            "s3://bucket/root/../other",
            "s3://bucket/root/%2e%2e/other",
            "s3://bucket/root/%2E%2E/other",
            "s3://bucket/./root",
            "s3://bucket/root//x",
        ] {
            let err = open(url, &options)
                .err()
                .unwrap_or_else(|| panic!("{url} opened"));
            let message = error_chain(&err);
            assert!(
                message.contains(url) || message.contains(".."),
                "{url}: {message}"
            );
        }
    }
}
