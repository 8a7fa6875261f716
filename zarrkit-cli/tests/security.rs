//! The command line cannot be made to read, write or remove outside a
//! store's root by its arguments, by links inside a store, or by a crafted
//! zip archive; and huge sparse grids cost only their stored chunks
//! (issue #17, "Security" and "Resource limits").

mod common;

use common::zarrkit;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

const SECRET: &[u8] = b"sentinel: never read, never changed";

const ARRAY: &str = r#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8",
"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},
"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
"fill_value":0,"codecs":[{"name":"bytes"}]}"#;
const GROUP: &str = r#"{"zarr_format":3,"node_type":"group"}"#;

/// `store/` (a group holding the array `a`) beside `outside/` (a secret
/// and a hierarchy `outside/victim`, an array whose chunk is `7 7 7 7`).
struct Sandbox {
    dir: tempfile::TempDir,
    before: BTreeMap<String, Vec<u8>>,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        fs::create_dir_all(outside.join("victim/c")).unwrap();
        fs::write(outside.join("secret"), SECRET).unwrap();
        fs::write(outside.join("zarr.json"), GROUP).unwrap();
        fs::write(outside.join("victim/zarr.json"), ARRAY).unwrap();
        fs::write(outside.join("victim/c/0"), [7u8; 4]).unwrap();
        let store = dir.path().join("store");
        fs::create_dir_all(store.join("a/c")).unwrap();
        fs::write(store.join("zarr.json"), GROUP).unwrap();
        fs::write(store.join("a/zarr.json"), ARRAY).unwrap();
        fs::write(store.join("a/c/0"), [1u8, 2, 3, 4]).unwrap();
        let before = files(&outside);
        Self { dir, before }
    }

    fn store(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    #[track_caller]
    fn assert_outside_untouched(&self) {
        assert_eq!(files(&self.outside()), self.before, "outside/ changed");
    }
}

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
            if entry.file_type().unwrap().is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(root, &path, out);
            } else {
                out.insert(rel, fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn run<S: AsRef<OsStr>>(args: &[S]) -> common::Run {
    zarrkit(args.iter().map(AsRef::as_ref))
}

#[test]
fn node_arguments_that_climb_out_of_the_store_are_refused() {
    let sandbox = Sandbox::new();
    let store = sandbox.store();
    let store = store.to_str().unwrap();
    for node in [
        "../outside/victim",
        "a/../../outside/victim",
        "..",
        "..\\outside",
    ] {
        for args in [
            vec!["get", store, node],
            vec!["rm", store, node],
            vec!["info", store, "--path", node],
            vec!["ls", store, "--path", node],
            vec!["check", store, "--path", node],
            vec!["stats", store, node],
        ] {
            let out = run(&args);
            assert_ne!(out.code, 0, "{args:?} succeeded: {}", out.stdout);
            assert!(
                out.stderr
                    .contains(&format!("invalid node path `{}`", node.escape_debug())),
                "{args:?}: {}",
                out.stderr
            );
            assert!(
                !out.stdout.contains("[7 7 7 7]"),
                "{args:?}: {}",
                out.stdout
            );
        }
    }
    sandbox.assert_outside_untouched();
    assert!(store_file(&sandbox, "a/c/0").is_some());
}

fn store_file(sandbox: &Sandbox, rel: &str) -> Option<Vec<u8>> {
    fs::read(sandbox.store().join(rel)).ok()
}

#[cfg(unix)]
#[test]
fn a_path_through_a_link_out_of_the_store_is_refused() {
    use std::os::unix::fs::symlink;
    let sandbox = Sandbox::new();
    let store = sandbox.store();
    // `store/ext` leads out of the store, to a hierarchy of its own.
    symlink("../outside", store.join("ext")).unwrap();
    let through = store.join("ext/victim");
    for args in [
        vec![OsStr::new("rm"), through.as_os_str()],
        vec![OsStr::new("get"), through.as_os_str()],
        vec![OsStr::new("info"), through.as_os_str()],
        vec![
            OsStr::new("set"),
            through.as_os_str(),
            OsStr::new("0"),
            OsStr::new("--value"),
            OsStr::new("9"),
        ],
    ] {
        let out = run(&args);
        assert_eq!(out.code, 1, "{args:?}: {}", out.stdout);
        assert!(
            out.stderr.contains(
                "`ext` in filesystem store leads through a symbolic link outside the store root"
            ),
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("hint: --follow-links-outside-root"),
            "{}",
            out.stderr
        );
        assert!(!out.stdout.contains('7'), "{args:?}: {}", out.stdout);
    }
    // Through the store's own listing and removal: the link is skipped,
    // and removing the whole store removes the link, not its target.
    let out = run(&[OsStr::new("ls"), OsStr::new("--keys"), store.as_os_str()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stdout.contains("victim") && !out.stdout.contains("secret"),
        "{}",
        out.stdout
    );
    let out = run(&[OsStr::new("rm"), OsStr::new("--root"), store.as_os_str()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!store.join("ext").exists());
    sandbox.assert_outside_untouched();

    // Opting in follows the link, as it says.
    symlink("../outside", store.join("ext")).unwrap();
    let out = run(&[
        OsStr::new("get"),
        OsStr::new("--follow-links-outside-root"),
        through.as_os_str(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("[7 7 7 7]"), "{}", out.stdout);
}

#[test]
fn copying_a_crafted_zip_writes_only_inside_the_destination() {
    let sandbox = Sandbox::new();
    let archive = sandbox.dir.path().join("evil.zip");
    let members: Vec<(&[u8], &[u8])> = vec![
        (b"zarr.json", GROUP.as_bytes()),
        (b"a/zarr.json", ARRAY.as_bytes()),
        (b"a/c/0", &[5, 5, 5, 5]),
        (b"../outside/secret", b"overwritten"),
        (b"../outside/victim/c/0", &[0, 0, 0, 0]),
        (b"a/../../outside/secret", b"overwritten"),
        (b"/tmp/evil", b"overwritten"),
        (b"..\\outside\\secret", b"overwritten"),
        (b"a\0b", b"overwritten"),
    ];
    fs::write(&archive, zarrkit::store::testing::crafted_zip(&members)).unwrap();
    let dst = sandbox.dir.path().join("copy.zarr");
    let out = run(&[OsStr::new("cp"), archive.as_os_str(), dst.as_os_str()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(&[OsStr::new("get"), dst.join("a").as_os_str()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("[5 5 5 5]"), "{}", out.stdout);
    let copied: Vec<String> = files(&dst).into_keys().collect();
    assert_eq!(copied, ["a/", "a/c/", "a/c/0", "a/zarr.json", "zarr.json"]);
    let out = run(&[OsStr::new("ls"), OsStr::new("--keys"), archive.as_os_str()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("outside"), "{}", out.stdout);
    sandbox.assert_outside_untouched();
    assert!(!Path::new("/tmp/evil").exists());
}

#[test]
fn ls_check_and_stats_on_a_trillion_chunk_array_touch_only_stored_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("big.zarr");
    let document = r#"{"zarr_format":3,"node_type":"array","shape":[1000000,1000000],
        "data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[1,1]}},
        "chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
        "fill_value":0,"codecs":[{"name":"bytes"}]}"#;
    fs::create_dir_all(store.join("c/0")).unwrap();
    fs::create_dir_all(store.join("c/999999")).unwrap();
    fs::write(store.join("zarr.json"), document).unwrap();
    fs::write(store.join("c/0/0"), [1u8]).unwrap();
    fs::write(store.join("c/0/5"), [2u8]).unwrap();
    fs::write(store.join("c/999999/999999"), [3u8]).unwrap();
    let store = store.to_str().unwrap();

    let out = run(&["ls", store, "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let listing: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let text = listing.to_string();
    assert!(text.contains("1000000000000"), "{text}");
    assert!(text.contains(r#""stored_chunks":3"#), "{text}");

    let out = run(&["check", store, "--json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(
        report.to_string().contains(r#""chunks_decoded":3"#),
        "{report}"
    );

    let out = run(&["stats", store, "/", "0:1, 0:10", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let stats: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(stats["count"], 10, "{stats}");
    assert_eq!(stats["max"], 2, "{stats}");
    assert_eq!(stats["storage"]["stored_chunks"], 3, "{stats}");
    assert_eq!(stats["storage"]["chunks"], 1_000_000_000_000u64, "{stats}");
}

/// 2^80 chunks: more than `u64` counts. The commands work on the stored
/// chunks and print the count as unknown (`null`) rather than wrap.
#[test]
fn ls_check_and_stats_on_a_grid_past_u64_chunks_say_the_count_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("huge.zarr");
    let document = r#"{"zarr_format":3,"node_type":"array","shape":[1099511627776,1099511627776],
        "data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[1,1]}},
        "chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
        "fill_value":0,"codecs":[{"name":"bytes"}]}"#;
    fs::create_dir_all(store.join("c/5")).unwrap();
    fs::write(store.join("zarr.json"), document).unwrap();
    fs::write(store.join("c/5/6"), [7u8]).unwrap();
    let store = store.to_str().unwrap();

    let out = run(&["ls", store, "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let listing: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        listing["entries"][0]["chunks"],
        serde_json::Value::Null,
        "{listing}"
    );
    assert_eq!(listing["stored_chunks"], 1, "{listing}");

    let out = run(&["check", store]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("1 stored chunk (1 decoded"),
        "{}",
        out.stdout
    );

    let out = run(&["stats", store, "/", "5:6, 0:10", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let stats: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(stats["count"], 10, "{stats}");
    assert_eq!(stats["max"], 7, "{stats}");
    assert_eq!(
        stats["storage"]["chunks"],
        serde_json::Value::Null,
        "{stats}"
    );
    assert_eq!(stats["storage"]["stored_chunks"], 1, "{stats}");
}
