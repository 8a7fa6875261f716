//! `zarrkit ls`, `zarrkit bench`, `zarrkit completions` and `zarrkit man`
//! end to end: on fixtures of every format, on stores the tests build (with
//! exact values), in zip archives and in S3 (SeaweedFS; without
//! `ZARRKIT_S3_ENDPOINT` those tests skip, saying so on stderr, unless
//! `ZARRKIT_REQUIRE_SERVERS=1`, when they fail).

mod common;

use common::{codec, object, open_store, zarrkit};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrkit::metadata::DataType;
use zarrkit::store::{FilesystemStore, Store, StoreOptions, StorePrefix};
use zarrkit::{Array, Group, NodeKind, Region};

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(path)
}

/// The stores written by other implementations that the shared test data
/// holds (`../shared/testdata`, see its README).
fn shared(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/testdata")
        .join(path)
}

fn sample() -> String {
    fixture("sample.zarr").to_string_lossy().into_owned()
}

fn json(run: &common::Run) -> Value {
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

/// One store of every format zarrkit reads: v1, the v3 drafts, v2 (the
/// project's fixtures and zarr-python 2's own), v3 (with sharding).
fn every_format() -> Vec<PathBuf> {
    vec![
        fixture("fixtures/v1/int64_big_blosc_noshuffle"),
        fixture("fixtures/v3-draft-2019/spec-text.zarr"),
        fixture("fixtures/v3-draft-2019a/spec-text.zarr"),
        fixture("fixtures/v3-draft-2022/spec-text.zarr"),
        fixture("fixtures/v3-draft-2019-json/zarr-python-2.18.zarr"),
        fixture("fixtures/v2/zarr-python.zarr"),
        shared("zarr-python-2-fixture"),
        fixture("fixtures/v3/zarr-python.zarr"),
        fixture("fixtures/v3/tensorstore.zarr"),
        fixture("sample.zarr"),
    ]
}

#[test]
fn ls_recursive_agrees_with_the_library_on_every_format() {
    for root in every_format() {
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::open_existing(&root).unwrap());
        let nodes = zarrkit::node::list_nodes(store.as_ref()).unwrap();
        assert!(!nodes.is_empty(), "{}", root.display());
        let listed = json(&zarrkit(["ls", "-R", "--json", root.to_str().unwrap()]));
        let entries = listed["entries"].as_array().unwrap();
        // A store whose root is an array lists that array; a group lists
        // every node below it, depth first, as the library walks them.
        let expected: Vec<_> = if nodes[0].1 == NodeKind::Array {
            nodes.clone()
        } else {
            nodes[1..].to_vec()
        };
        let paths: Vec<&str> = entries
            .iter()
            .map(|e| e["path"].as_str().unwrap())
            .collect();
        let want: Vec<&str> = expected.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(paths, want, "{}", root.display());
        let (mut chunks, mut bytes, mut arrays, mut groups) = (0, 0, 0, 0);
        for (entry, (path, kind, format)) in entries.iter().zip(&expected) {
            assert_eq!(entry["format"], format.name(), "{path}");
            match kind {
                NodeKind::Group => {
                    groups += 1;
                    assert_eq!(entry["node_type"], "group", "{path}");
                }
                NodeKind::Array => {
                    arrays += 1;
                    assert_eq!(entry["node_type"], "array", "{path}");
                    let array = Array::open(Arc::clone(&store), path.as_str()).unwrap();
                    let stored = array.stored_size().unwrap();
                    assert_eq!(entry["stored_chunks"], stored.chunks, "{path}");
                    assert_eq!(entry["stored_bytes"], stored.bytes, "{path}");
                    assert_eq!(entry["shape"], serde_json::json!(array.shape()), "{path}");
                    assert_eq!(entry["data_type"], array.data_type().to_string(), "{path}");
                    let grid: u64 = array.chunk_grid_shape().iter().product();
                    assert_eq!(entry["chunks"], grid, "{path}");
                    chunks += stored.chunks;
                    bytes += stored.bytes;
                }
            }
        }
        assert_eq!(listed["arrays"], arrays, "{}", root.display());
        assert_eq!(listed["groups"], groups, "{}", root.display());
        assert_eq!(listed["stored_chunks"], chunks, "{}", root.display());
        assert_eq!(listed["stored_bytes"], bytes, "{}", root.display());
        // Every stored chunk is counted somewhere: the text's total agrees.
        let text = zarrkit(["ls", "-R", "--bytes", root.to_str().unwrap()]);
        assert_eq!(text.code, 0, "{}", text.stderr);
        let total = format!(
            "total: {arrays} array{}, {groups} group{}, {chunks} stored chunk{}, {bytes} byte{}",
            if arrays == 1 { "" } else { "s" },
            if groups == 1 { "" } else { "s" },
            if chunks == 1 { "" } else { "s" },
            if bytes == 1 { "" } else { "s" },
        );
        assert_eq!(text.stdout.lines().last(), Some(total.as_str()));
    }
}

/// A v3 store with exactly known contents: `/a` uint8 [10, 10] in chunks
/// [5, 5] with two chunks written, and `/g/b` int32 [4] in chunks [2] with
/// both written, all uncompressed (25 and 8 bytes a chunk).
fn build_store(root: &Path) {
    let store = open_store(root);
    Group::create(Arc::clone(&store), "/", object(serde_json::json!({}))).unwrap();
    Group::create(Arc::clone(&store), "/g", object(serde_json::json!({}))).unwrap();
    let bytes = || vec![codec("bytes", serde_json::json!({"endian": "little"}))];
    let a = Array::builder(&[10, 10], DataType::UInt8, &[5, 5])
        .codecs_metadata(bytes())
        .create(Arc::clone(&store), "/a")
        .unwrap();
    a.write_region(&Region::new(vec![0, 0], vec![5, 10]), &[7u8; 50])
        .unwrap();
    let b = Array::builder(&[4], DataType::Int32, &[2])
        .codecs_metadata(bytes())
        .create(Arc::clone(&store), "/g/b")
        .unwrap();
    b.write_region(&Region::new(vec![0], vec![4]), &[1i32, 2, 3, 4])
        .unwrap();
}

#[test]
fn ls_prints_exact_columns_for_a_store_the_test_builds() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("built.zarr");
    build_store(&root);
    let root = root.to_str().unwrap();

    let run = zarrkit(["ls", root]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "\
KIND   SHAPE     DATA TYPE  CHUNKS  STORED  NAME
array  [10, 10]  uint8      2/4     50 B    a
group  -         -          -       -       g/

total: 1 array, 1 group, 2 stored chunks, 50 B
"
    );

    let run = zarrkit(["ls", "-R", "--bytes", root]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "\
KIND   SHAPE     DATA TYPE  CHUNKS  STORED  NAME
array  [10, 10]  uint8      2/4     50      a
group  -         -          -       -       g/
array  [4]       int32      2/2     16      g/b

total: 2 arrays, 1 group, 4 stored chunks, 66 bytes
"
    );

    // On an array: the array itself, as `ls file` lists the file.
    let run = zarrkit(["ls", "--json", &format!("{root}/g/b")]);
    let listed = json(&run);
    assert_eq!(listed["path"], "/g/b");
    assert_eq!(listed["node_type"], "array");
    assert_eq!(
        listed["entries"],
        serde_json::json!([{
            "name": "b",
            "path": "/g/b",
            "node_type": "array",
            "format": "v3",
            "shape": [4],
            "data_type": "int32",
            "chunk_shape": [2],
            "inner_chunk_shape": null,
            "chunks": 2,
            "stored_chunks": 2,
            "stored_bytes": 16,
        }])
    );

    // --path names the node when the first argument is the store root.
    let listed = json(&zarrkit(["ls", "--json", "-R", root, "--path", "/g"]));
    assert_eq!(listed["path"], "/g");
    assert_eq!(listed["recursive"], true);
    assert_eq!(listed["entries"].as_array().unwrap().len(), 1);
    assert_eq!(listed["entries"][0]["name"], "b");
    assert_eq!(listed["stored_bytes"], 16);
}

#[test]
fn ls_keys_lists_every_key_under_the_prefix_with_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("built.zarr");
    build_store(&root);
    let document = std::fs::metadata(root.join("g/b/zarr.json")).unwrap().len();
    let target = format!("{}/g", root.display());
    let listed = json(&zarrkit(["ls", "--keys", "--json", &target]));
    assert_eq!(listed["prefix"], "g/");
    let group_document = std::fs::metadata(root.join("g/zarr.json")).unwrap().len();
    assert_eq!(
        listed["keys"],
        serde_json::json!([
            {"key": "g/b/c/0", "size": 8},
            {"key": "g/b/c/1", "size": 8},
            {"key": "g/b/zarr.json", "size": document},
            {"key": "g/zarr.json", "size": group_document},
        ])
    );
    assert_eq!(listed["count"], 4);
    assert_eq!(listed["bytes"], 16 + document + group_document);

    // A prefix that is not a node: the chunk directory.
    let run = zarrkit([
        "ls",
        "--keys",
        "--bytes",
        &format!("{}/a/c", root.display()),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "SIZE  KEY\n  25  a/c/0/0\n  25  a/c/0/1\n\ntotal: 2 keys, 50 bytes\n"
    );
}

#[test]
fn ls_keys_on_fixtures_matches_the_files() {
    // The v2 fixture of zarr-python 2: every file under `0/0` and its size.
    let root = shared("zarr-python-2-fixture");
    let listed = json(&zarrkit([
        "ls",
        "--keys",
        "--json",
        root.join("0/0").to_str().unwrap(),
    ]));
    let mut files: Vec<(String, u64)> = std::fs::read_dir(root.join("0/0"))
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            (
                format!("0/0/{}", entry.file_name().to_str().unwrap()),
                entry.metadata().unwrap().len(),
            )
        })
        .collect();
    files.sort();
    let keys: Vec<(String, u64)> = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["key"].as_str().unwrap().to_string(),
                k["size"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(keys, files);
    assert!(keys.len() > 2);
}

#[test]
fn ls_marks_an_invalid_child_lists_the_rest_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("built.zarr");
    build_store(&root);
    std::fs::create_dir(root.join("broken")).unwrap();
    std::fs::write(root.join("broken/zarr.json"), "{not json").unwrap();
    let run = zarrkit(["ls", root.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("2/4     50 B    a\n"), "{}", run.stdout);
    assert!(run.stdout.contains("broken (invalid: "), "{}", run.stdout);
    assert!(run.stdout.contains("g/\n"), "{}", run.stdout);
    assert!(run.stderr.contains("broken/zarr.json"), "{}", run.stderr);
    let run = zarrkit(["ls", "--json", root.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    let listed: Value = serde_json::from_str(&run.stdout).unwrap();
    let broken = &listed["entries"][1];
    assert_eq!(broken["path"], "/broken");
    assert!(broken["error"].as_str().unwrap().contains("zarr.json"));
}

#[test]
fn ls_errors_name_the_path_and_usage_errors_exit_2() {
    let missing = format!("{}/no/such/node", sample());
    let run = zarrkit(["ls", &missing]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("/no/such/node"), "{}", run.stderr);
    let run = zarrkit(["ls", "--no-such-flag", &sample()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = zarrkit(["bench", "--reps", "0", &sample()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = zarrkit(["bench", "--scratch", "/tmp", &sample()]);
    assert_eq!(run.code, 2, "--scratch needs --write: {}", run.stderr);
    let run = zarrkit(["bench", &sample()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("is a group"), "{}", run.stderr);
}

#[test]
fn ls_reads_a_zip_archive_as_the_directory_it_was_made_from() {
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("sample.zip");
    let run = zarrkit(["migrate", "-q", &sample(), zip.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let from_zip = json(&zarrkit(["ls", "-R", "--json", zip.to_str().unwrap()]));
    let from_dir = json(&zarrkit(["ls", "-R", "--json", &sample()]));
    assert_eq!(from_zip["entries"], from_dir["entries"]);
    assert_eq!(from_zip["stored_bytes"], 51387);
    let node = format!("{}/weather/temperature", zip.display());
    let listed = json(&zarrkit(["ls", "--json", &node]));
    assert_eq!(listed["entries"][0]["stored_chunks"], 36);
    let keys = json(&zarrkit(["ls", "--keys", "--json", &node]));
    // 36 chunks and the document.
    assert_eq!(keys["count"], 37);
    let bench = json(&zarrkit(["bench", "--json", &node]));
    assert_eq!(bench["read"]["decoded_bytes"], 24 * 36 * 72 * 4);
}

fn bench_checks(bench: &Value, decoded: u64, chunks: u64, stored_bytes: u64, reps: usize) {
    assert_eq!(bench["decoded_bytes"], decoded);
    assert_eq!(bench["stored_chunks"], chunks);
    assert_eq!(bench["stored_bytes"], stored_bytes);
    assert_eq!(bench["reps"], reps);
    assert!(bench["threads"].as_u64().unwrap() >= 1);
    let read = &bench["read"];
    assert_eq!(read["decoded_bytes"], decoded);
    assert_eq!(read["chunks"], chunks);
    assert_eq!(read["stored_bytes"], stored_bytes);
    let seconds = read["seconds"].as_array().unwrap();
    assert_eq!(seconds.len(), reps);
    let (min, median, max) = (
        read["min_seconds"].as_f64().unwrap(),
        read["median_seconds"].as_f64().unwrap(),
        read["max_seconds"].as_f64().unwrap(),
    );
    assert!(min <= median && median <= max, "{read}");
    assert!(seconds.iter().all(|s| s.as_f64().unwrap() >= 0.0));
    // Memory is the process's: more than nothing, less than 4 GiB here.
    let peak = read["peak_memory_bytes"].as_u64().unwrap();
    assert!(peak > 0 && peak < 4 << 30, "{peak}");
}

#[test]
fn bench_reads_the_whole_array_and_reports_json() {
    let node = format!("{}/weather/temperature", sample());
    let store = open_store(&fixture("sample.zarr"));
    let stored = Array::open(store, "/weather/temperature")
        .unwrap()
        .stored_size()
        .unwrap();
    let bench = json(&zarrkit(["bench", "--json", "--reps", "3", &node]));
    bench_checks(&bench, 24 * 36 * 72 * 4, 36, stored.bytes, 3);
    assert_eq!(bench["path"], "/weather/temperature");
    assert_eq!(bench["shape"], serde_json::json!([24, 36, 72]));
    assert_eq!(bench["write"], Value::Null);
    // A budget far below the array's size: many slabs, the same bytes.
    let bench = json(&zarrkit([
        "bench",
        "--json",
        "--memory-budget",
        "8K",
        &sample(),
        "/weather/temperature",
    ]));
    bench_checks(&bench, 24 * 36 * 72 * 4, 36, stored.bytes, 1);
    // The text names the measurements.
    let run = zarrkit(["bench", &node]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for label in [
        "read:",
        "GB/s",
        "chunks/s",
        "MB/s",
        "peak memory",
        "wall time",
    ] {
        assert!(run.stdout.contains(label), "{label}: {}", run.stdout);
    }
}

#[test]
fn bench_on_fixtures_of_other_formats_reads_every_byte() {
    for (root, node) in [
        (
            fixture("fixtures/v2/zarr-python.zarr"),
            "/float64_big_f_zlib_nan",
        ),
        (fixture("fixtures/v3/zarr-python.zarr"), "/uint16_sharded"),
        (
            fixture("fixtures/v3-draft-2022/spec-text.zarr"),
            "/int32_gzip",
        ),
        (fixture("fixtures/v1/int64_big_blosc_noshuffle"), "/"),
    ] {
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::open_existing(&root).unwrap());
        let array = Array::open(store, node).unwrap();
        let stored = array.stored_size().unwrap();
        let decoded = array.shape().iter().product::<u64>() * array.data_type().size() as u64;
        let bench = json(&zarrkit([
            "bench",
            "--json",
            "--write",
            root.to_str().unwrap(),
            node,
        ]));
        bench_checks(&bench, decoded, stored.chunks, stored.bytes, 1);
        assert_eq!(bench["write"]["decoded_bytes"], decoded, "{node}");
    }
}

#[test]
fn bench_write_copies_into_a_scratch_store_and_leaves_nothing_behind() {
    let scratch = tempfile::tempdir().unwrap();
    let node = format!("{}/weather/temperature", sample());
    let bench = json(&zarrkit([
        "bench",
        "--json",
        "--write",
        "--reps",
        "2",
        "--scratch",
        scratch.path().to_str().unwrap(),
        &node,
    ]));
    let write = &bench["write"];
    assert_eq!(write["decoded_bytes"], 24 * 36 * 72 * 4);
    // The copy has the source's chunks, encoded the same way.
    assert_eq!(write["chunks"], 36);
    assert_eq!(write["stored_bytes"], bench["stored_bytes"]);
    assert_eq!(write["seconds"].as_array().unwrap().len(), 2);
    assert!(
        write["scratch"]
            .as_str()
            .unwrap()
            .starts_with(scratch.path().to_str().unwrap())
    );
    assert_eq!(
        std::fs::read_dir(scratch.path()).unwrap().count(),
        0,
        "the scratch copy is deleted"
    );
    // A scratch directory that does not exist is an error, and nothing is made.
    let missing = scratch.path().join("missing");
    let run = zarrkit([
        "bench",
        "--write",
        "--scratch",
        missing.to_str().unwrap(),
        &node,
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("missing"), "{}", run.stderr);
    assert!(!missing.exists());
}

#[test]
fn bench_writes_variable_length_strings() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("strings.zarr");
    let store = open_store(&root);
    let array = Array::builder(&[6], DataType::String, &[4])
        .create(Arc::clone(&store), "/")
        .unwrap();
    array
        .write_strings(
            &Region::new(vec![0], vec![6]),
            &["a", "bb", "ccc", "", "dddd", "e"],
        )
        .unwrap();
    let bench = json(&zarrkit([
        "bench",
        "--json",
        "--write",
        root.to_str().unwrap(),
    ]));
    // Variable-length: the size is only known by reading: 11 bytes of text.
    assert_eq!(bench["decoded_bytes"], Value::Null);
    assert_eq!(bench["read"]["decoded_bytes"], 11);
    assert_eq!(bench["write"]["decoded_bytes"], 11);
    assert_eq!(bench["write"]["chunks"], 2);
}

/// The names of the subcommands, as `zarrkit --help` lists them (so that a
/// command added later is checked too).
fn subcommands() -> Vec<String> {
    let run = zarrkit(["--help"]);
    assert_eq!(run.code, 0);
    let names: Vec<String> = run
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // A command's line is indented by two; a wrapped description by more.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(ToString::to_string))
        .filter(|name| name != "help")
        .collect();
    for name in [
        "info",
        "tree",
        "export",
        "ls",
        "bench",
        "completions",
        "man",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    names
}

#[test]
fn completions_cover_every_subcommand_in_every_shell() {
    let names = subcommands();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = zarrkit(["completions", shell]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.len() > 1000, "{shell}: {}", run.stdout);
        for name in &names {
            assert!(run.stdout.contains(name.as_str()), "{shell} lacks {name}");
        }
        // Options of the commands are completed too.
        assert!(run.stdout.contains("recursive"), "{shell}");
    }
    let run = zarrkit(["completions", "tcsh"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn the_bash_completion_script_is_valid_bash() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("zarrkit.bash");
    let run = zarrkit(["completions", "bash"]);
    std::fs::write(&script, run.stdout).unwrap();
    let status = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .status()
        .expect("bash runs");
    assert!(status.success());
    // Loading it defines the completion function and registers it.
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p zarrkit",
            script.display()
        ))
        .output()
        .expect("bash runs");
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("zarrkit"));
}

/// Checks a man page's roff: its title header, and with `man` on the
/// system, that `man -l` formats it.
fn check_man_page(page: &str, title: &str) -> String {
    assert!(page.contains(&format!(".TH {title} 1")), "{page}");
    assert!(page.contains(".SH NAME"), "{page}");
    assert!(page.contains(".SH SYNOPSIS"), "{page}");
    let man = std::process::Command::new("man").arg("--version").output();
    if man.is_err() {
        // No `man` here: the roff checks above are the test.
        return page.to_string();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("page.1");
    std::fs::write(&path, page).unwrap();
    let output = std::process::Command::new("man")
        .arg("-l")
        .arg(&path)
        .env("MANWIDTH", "100")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(text.contains("NAME"), "{text}");
    text
}

#[test]
fn the_man_page_names_every_subcommand_and_out_dir_writes_one_page_each() {
    let names = subcommands();
    let run = zarrkit(["man"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let formatted = check_man_page(&run.stdout, "zarrkit");
    // roff spells a hyphen `\-` (`create\-group`).
    let roff = run.stdout.replace("\\-", "-");
    for name in &names {
        assert!(roff.contains(name.as_str()), "main page lacks {name}");
        assert!(formatted.contains(name.as_str()), "formatted lacks {name}");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    let run = zarrkit(["man", "--out-dir", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // One page per command at every depth: the main page, each
    // subcommand, and `attrs`' own `get`, `set` and `del`.
    assert_eq!(
        run.stdout.lines().count(),
        names.len() + 1 + 3,
        "{}",
        run.stdout
    );
    for nested in ["get", "set", "del"] {
        let path = out.join(format!("zarrkit-attrs-{nested}.1"));
        let page =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        check_man_page(&page, &format!("zarrkit-attrs-{nested}"));
    }
    for name in &names {
        let path = out.join(format!("zarrkit-{name}.1"));
        let page =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        check_man_page(&page, &format!("zarrkit-{name}"));
        assert!(run.stdout.contains(path.to_str().unwrap()));
    }
    let ls = std::fs::read_to_string(out.join("zarrkit-ls.1")).unwrap();
    assert!(ls.contains("recursive"), "{ls}");
    check_man_page(
        &std::fs::read_to_string(out.join("zarrkit.1")).unwrap(),
        "zarrkit",
    );
}

/// The test server `var` locates, or `None` (the test skips).
fn server(var: &str) -> Option<String> {
    zarrkit::store::testing::server_from_env(var)
}

fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{name}-{}-{nanos}", std::process::id())
}

/// The S3 options as `KEY=VALUE` pairs for the test server.
fn s3_options(endpoint: &str) -> Vec<(String, String)> {
    let env = |var: &str, default: &str| std::env::var(var).unwrap_or_else(|_| default.into());
    vec![
        ("aws_endpoint".into(), endpoint.to_string()),
        (
            "aws_access_key_id".into(),
            env("AWS_ACCESS_KEY_ID", "zarrkit-test"),
        ),
        (
            "aws_secret_access_key".into(),
            env("AWS_SECRET_ACCESS_KEY", "zarrkit-test-secret"),
        ),
        ("aws_region".into(), env("AWS_REGION", "us-east-1")),
    ]
}

#[test]
fn ls_and_bench_on_s3_agree_with_the_local_copy() {
    let Some(endpoint) = server("ZARRKIT_S3_ENDPOINT") else {
        return;
    };
    let bucket = std::env::var("ZARRKIT_TEST_BUCKET").unwrap_or_else(|_| "zarrkit".into());
    let base = format!("s3://{bucket}/{}", unique("cli-ls"));
    let url = format!("{base}/sample.zarr");
    let options = s3_options(&endpoint);
    let with = |args: &[&str]| {
        let mut all: Vec<String> = options
            .iter()
            .flat_map(|(k, v)| ["--storage-option".to_string(), format!("{k}={v}")])
            .collect();
        all.extend(args.iter().map(|a| (*a).to_string()));
        zarrkit(all)
    };
    let run = with(&["migrate", "-q", &sample(), &url]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let remote = json(&with(&["ls", "-R", "--json", &url]));
    let local = json(&zarrkit(["ls", "-R", "--json", &sample()]));
    assert_eq!(remote["entries"], local["entries"]);
    assert_eq!(remote["stored_bytes"], 51387);
    let text = with(&["ls", &format!("{url}/weather")]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    let local_text = zarrkit(["ls", &format!("{}/weather", sample())]);
    assert_eq!(text.stdout, local_text.stdout);

    let node = format!("{url}/weather/temperature");
    let remote_keys = json(&with(&["ls", "--keys", "--json", &node]));
    let local_keys = json(&zarrkit([
        "ls",
        "--keys",
        "--json",
        &format!("{}/weather/temperature", sample()),
    ]));
    assert_eq!(remote_keys["count"], 37);
    let chunk_sizes = |listed: &Value| -> Vec<(String, u64)> {
        listed["keys"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| !k["key"].as_str().unwrap().ends_with("zarr.json"))
            .map(|k| {
                (
                    k["key"].as_str().unwrap().to_string(),
                    k["size"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(chunk_sizes(&remote_keys), chunk_sizes(&local_keys));

    let scratch = format!("{base}/scratch");
    let bench = json(&with(&[
        "bench",
        "--json",
        "--write",
        "--scratch",
        &scratch,
        &node,
    ]));
    bench_checks(&bench, 24 * 36 * 72 * 4, 36, 45714, 1);
    assert_eq!(bench["write"]["chunks"], 36);
    assert!(
        bench["write"]["scratch"]
            .as_str()
            .unwrap()
            .starts_with(&scratch)
    );
    // Nothing is left under the scratch prefix.
    let mut store_options = StoreOptions::new();
    for (key, value) in &options {
        store_options.set(key, value.clone());
    }
    let store = zarrkit::store::open(&base, &store_options).unwrap();
    let left = store
        .list_prefix(&StorePrefix::new("scratch/").unwrap())
        .unwrap();
    assert!(left.is_empty(), "{left:?}");
    store.erase_prefix(&StorePrefix::root()).unwrap();
}

#[test]
fn a_node_named_like_a_document_is_that_node() {
    // zarr-python 2's fixture has a v2 array called `meta` (the name of a
    // v1 document): it is listed itself, not its parent group.
    let meta = shared("zarr-python-2-fixture/meta");
    let listed = json(&zarrkit(["ls", "--json", meta.to_str().unwrap()]));
    assert_eq!(listed["path"], "/meta");
    assert_eq!(listed["node_type"], "array");
    assert_eq!(listed["entries"][0]["shape"], serde_json::json!([2, 2]));
    assert_eq!(listed["entries"][0]["stored_chunks"], 1);
}

#[test]
fn every_reporting_command_prints_json_and_shares_the_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("labels.npy");
    let labels = format!("{}/labels", sample());
    let dst = dir.path().join("migrated.zarr");
    let commands: Vec<Vec<String>> = vec![
        vec!["info".into(), labels.clone()],
        vec!["tree".into(), sample()],
        vec!["ls".into(), sample()],
        vec!["bench".into(), labels.clone()],
        vec![
            "export".into(),
            labels.clone(),
            "-o".into(),
            npy.to_str().unwrap().into(),
        ],
        vec![
            "migrate".into(),
            "--dry-run".into(),
            sample(),
            dst.to_str().unwrap().into(),
        ],
    ];
    for command in &commands {
        let mut args = command.clone();
        args.insert(1, "--json".into());
        let printed = json(&zarrkit(&args));
        assert!(printed.is_object(), "{command:?}: {printed}");
    }
    assert_eq!(
        json(&zarrkit([
            "export",
            "--json",
            &labels,
            "-o",
            npy.to_str().unwrap()
        ]))["written"][0]["bytes"],
        std::fs::metadata(&npy).unwrap().len()
    );
    // consolidate --check --json on a store without consolidated metadata:
    // the JSON says so, and the exit code is 1.
    let v2 = fixture("fixtures/v2/zarr-python.zarr");
    let run = zarrkit(["consolidate", "--check", "--json", v2.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let printed: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(printed["consolidated"], false);

    // A node that does not exist: exit code 1, the message names it, and
    // nothing is printed on standard output.
    let missing = format!("{}/no_such_array", sample());
    for name in ["info", "ls", "bench", "tree"] {
        let run = zarrkit([name, "--json", &missing]);
        assert_eq!(run.code, 1, "{name}: {}", run.stderr);
        assert!(run.stderr.starts_with("error: "), "{name}: {}", run.stderr);
        assert!(
            run.stderr.contains("no_such_array"),
            "{name}: {}",
            run.stderr
        );
        assert_eq!(run.stdout, "", "{name}");
    }
    // Usage errors: exit code 2.
    for name in [
        "info",
        "tree",
        "ls",
        "bench",
        "export",
        "migrate",
        "consolidate",
    ] {
        let run = zarrkit([name, "--no-such-option", &sample()]);
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
    }
}

#[test]
fn the_output_shown_in_ls_help_is_what_ls_prints() {
    let help = zarrkit(["ls", "--help"]);
    assert_eq!(help.code, 0);
    let shown: String = help
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Output of the first:"))
        .skip(1)
        .take_while(|l| !l.starts_with("--json"))
        .map(|l| format!("{}\n", l.strip_prefix("  ").unwrap_or(l)))
        .collect();
    let run = zarrkit(["ls", &sample()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(shown.trim_end(), run.stdout.trim_end());
}

#[test]
fn ls_over_http_lists_from_the_consolidated_metadata() {
    let (Some(url), Some(root)) = (server("ZARRKIT_HTTP_URL"), server("ZARRKIT_HTTP_ROOT")) else {
        return;
    };
    // Not a 0700 temporary directory: nginx's worker must read it.
    let name = unique("cli-ls");
    let dir = Path::new(&root).join(&name);
    std::fs::create_dir(&dir).unwrap();
    let store = dir.join("sample.zarr");
    let store = store.to_str().unwrap();
    let run = zarrkit(["migrate", "-q", &sample(), store]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = zarrkit(["consolidate", store]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let store_url = format!("{url}/{name}/sample.zarr");
    let remote = json(&zarrkit(["ls", "-R", "--json", &store_url]));
    let local = json(&zarrkit(["ls", "-R", "--json", store]));
    assert_eq!(remote["entries"], local["entries"]);
    assert_eq!(remote["stored_bytes"], 51387);
    let bench = json(&zarrkit([
        "bench",
        "--json",
        &format!("{store_url}/weather/temperature"),
    ]));
    bench_checks(&bench, 24 * 36 * 72 * 4, 36, 45714, 1);
    // HTTP cannot list keys: an error that says so.
    let run = zarrkit(["ls", "--keys", &store_url]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("cannot list the keys of the store"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("listing"), "{}", run.stderr);
    std::fs::remove_dir_all(&dir).unwrap();
}
