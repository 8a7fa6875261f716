//! The commands on remote stores (#13): URLs wherever a store is taken,
//! against the test servers `scripts/servers.sh` starts (SeaweedFS here).
//! Without `ZARRKIT_S3_ENDPOINT` a test skips, saying so on stderr, unless
//! `ZARRKIT_REQUIRE_SERVERS=1`, when it fails.

mod common;

use common::zarrkit;
use std::path::Path;

/// The test server `var` locates, or `None` (the test skips).
pub fn server(var: &str) -> Option<String> {
    zarrkit::store::testing::server_from_env(var)
}

fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{name}-{}-{nanos}", std::process::id())
}

/// The global options that point the S3 client at the test server.
fn s3_args(endpoint: &str) -> Vec<String> {
    let env = |var: &str, default: &str| std::env::var(var).unwrap_or_else(|_| default.into());
    [
        format!("aws_endpoint={endpoint}"),
        format!(
            "aws_access_key_id={}",
            env("AWS_ACCESS_KEY_ID", "zarrkit-test")
        ),
        format!(
            "aws_secret_access_key={}",
            env("AWS_SECRET_ACCESS_KEY", "zarrkit-test-secret")
        ),
        format!("aws_region={}", env("AWS_REGION", "us-east-1")),
    ]
    .into_iter()
    .flat_map(|option| ["--storage-option".to_string(), option])
    .collect()
}

fn sample() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/sample.zarr")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn migrate_to_s3_then_tree_info_export_and_consolidate_read_it_there() {
    let Some(endpoint) = server("ZARRKIT_S3_ENDPOINT") else {
        return;
    };
    let bucket = std::env::var("ZARRKIT_TEST_BUCKET").unwrap_or_else(|_| "zarrkit".into());
    let url = format!("s3://{bucket}/{}/sample.zarr", unique("cli"));
    let with = |args: &[&str]| {
        let mut all = s3_args(&endpoint);
        all.extend(args.iter().map(|a| (*a).to_string()));
        zarrkit(all)
    };
    let run = with(&["migrate", &sample(), &url]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("verification passed"), "{}", run.stdout);

    let local = zarrkit(["tree", &sample()]);
    let remote = with(&["tree", &url]);
    assert_eq!(remote.code, 0, "{}", remote.stderr);
    assert_eq!(remote.stdout, local.stdout);

    // A node inside the store, found by probing the URL's prefixes.
    let node = format!("{url}/weather/temperature");
    let info = with(&["info", &node]);
    assert_eq!(info.code, 0, "{}", info.stderr);
    assert!(
        info.stdout.contains("/weather/temperature"),
        "{}",
        info.stdout
    );

    let dir = tempfile::tempdir().unwrap();
    let (from_s3, from_disk) = (dir.path().join("s3.npy"), dir.path().join("disk.npy"));
    let export = with(&["export", &node, "--out", from_s3.to_str().unwrap()]);
    assert_eq!(export.code, 0, "{}", export.stderr);
    let local_node = format!("{}/weather/temperature", sample());
    let export = zarrkit(["export", &local_node, "--out", from_disk.to_str().unwrap()]);
    assert_eq!(export.code, 0, "{}", export.stderr);
    assert_eq!(
        std::fs::read(from_s3).unwrap(),
        std::fs::read(from_disk).unwrap()
    );

    let consolidate = with(&["consolidate", &url]);
    assert_eq!(consolidate.code, 0, "{}", consolidate.stderr);
    let check = with(&["consolidate", "--check", &url]);
    assert_eq!(check.code, 0, "{}", check.stderr);

    // Migrating into a prefix that is not empty is refused.
    let again = with(&["migrate", &sample(), &url]);
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("not empty"), "{}", again.stderr);
}

#[test]
fn malformed_urls_and_storage_options_are_usage_errors() {
    let run = zarrkit(["tree", "s3:///data.zarr"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no bucket"), "{}", run.stderr);
    let run = zarrkit(["tree", "ftp://host/data.zarr"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("`ftp://`"), "{}", run.stderr);
    let run = zarrkit([
        "tree",
        "--storage-option",
        "aws_no_such=1",
        "s3://bucket/data.zarr",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("`aws_no_such`"), "{}", run.stderr);
    let run = zarrkit(["tree", "--storage-option", "novalue", "s3://b/x"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn a_url_with_no_hierarchy_says_so() {
    let Some(endpoint) = server("ZARRKIT_S3_ENDPOINT") else {
        return;
    };
    let bucket = std::env::var("ZARRKIT_TEST_BUCKET").unwrap_or_else(|_| "zarrkit".into());
    let url = format!("s3://{bucket}/{}/nothing.zarr", unique("cli"));
    let mut args = s3_args(&endpoint);
    args.extend(["tree".to_string(), url.clone()]);
    let run = zarrkit(args);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains(&format!("no Zarr hierarchy at `{url}`")),
        "{}",
        run.stderr
    );
}

/// `--anonymous` sends unsigned requests: the test bucket is not public,
/// so the server refuses them, and the error says access was denied.
#[test]
fn anonymous_requests_to_a_private_bucket_are_denied() {
    let Some(endpoint) = server("ZARRKIT_S3_ENDPOINT") else {
        return;
    };
    let bucket = std::env::var("ZARRKIT_TEST_BUCKET").unwrap_or_else(|_| "zarrkit".into());
    let url = format!("s3://{bucket}/{}/data.zarr", unique("cli"));
    let mut args = s3_args(&endpoint);
    args.extend(["--anonymous".to_string(), "tree".to_string(), url]);
    let run = zarrkit(args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("denied"), "{}", run.stderr);
}

/// The requests nginx logged whose path holds `name`.
fn requests_naming(log: &str, name: &str) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.contains(&format!("/{name}/")))
        .map(ToString::to_string)
        .collect()
}

#[test]
fn tree_on_a_consolidated_store_over_http_makes_few_requests() {
    let (Some(url), Some(root), Some(log)) = (
        server("ZARRKIT_HTTP_URL"),
        server("ZARRKIT_HTTP_ROOT"),
        server("ZARRKIT_HTTP_ACCESS_LOG"),
    ) else {
        return;
    };
    // Not a 0700 temporary directory: nginx's worker must read it.
    let name = unique("tree");
    let dir = Path::new(&root).join(&name);
    std::fs::create_dir(&dir).unwrap();
    let store = dir.join("sample.zarr");
    let store = store.to_str().unwrap();
    let run = zarrkit(["migrate", &sample(), store]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = zarrkit(["consolidate", store]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let local = zarrkit(["tree", store]);
    let store_url = format!("{url}/{name}/sample.zarr");

    // Each command's requests: the lines it added to the log.
    let mut seen = requests_naming(&log, &name).len();
    let mut requests = |args: &[&str]| {
        let run = zarrkit(args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, local.stdout, "{args:?}");
        assert_eq!(run.stderr, "", "{args:?}");
        let lines = requests_naming(&log, &name);
        let new = lines[seen..].to_vec();
        seen = lines.len();
        new
    };
    // One batch of concurrent requests: locating the root probes
    // `sample.zarr` and its parent for every format's documents, the
    // attribute documents and the migration marker (14 requests); opening
    // the root then reuses what the probe read, and the root's `zarr.json`
    // holds the consolidated metadata the tree is drawn from (a store that
    // cannot list has no other way to find the nodes). Before #13's
    // change: the probe (8), the marker (1), the root's documents again
    // (6), 15 requests in 3 round trips, and then an error: checking the
    // consolidated metadata for staleness listed the store.
    let probe = requests(&["tree", &store_url]);
    eprintln!("tree URL: {} requests:\n{}", probe.len(), probe.join("\n"));
    assert_eq!(probe.len(), 14, "{probe:#?}");
    let marker = "zarrkit-migration-unfinished.json";
    assert_eq!(
        probe.iter().filter(|line| line.contains(marker)).count(),
        2,
        "the marker is asked once per candidate root, in the probe"
    );
    let root_document = "/sample.zarr/zarr.json ";
    assert_eq!(
        probe
            .iter()
            .filter(|line| line.contains(root_document))
            .count(),
        1,
        "{probe:#?}"
    );
    // With `--path` nothing is probed: the marker, then the root's
    // documents (7 requests in 2 round trips).
    let explicit = requests(&["tree", &store_url, "--path", "/"]);
    eprintln!(
        "tree URL --path /: {} requests:\n{}",
        explicit.len(),
        explicit.join("\n")
    );
    assert_eq!(explicit.len(), 7, "{explicit:#?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tree_over_http_refuses_an_unfinished_migration_found_by_the_probe() {
    let (Some(url), Some(root)) = (server("ZARRKIT_HTTP_URL"), server("ZARRKIT_HTTP_ROOT")) else {
        return;
    };
    // Not a 0700 temporary directory: nginx's worker must read it.
    let name = unique("marker");
    let dir = Path::new(&root).join(&name);
    std::fs::create_dir(&dir).unwrap();
    let store = dir.join("sample.zarr");
    let run = zarrkit(["migrate", &sample(), store.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    std::fs::write(store.join("zarrkit-migration-unfinished.json"), "{}").unwrap();
    let store_url = format!("{url}/{name}/sample.zarr");
    for args in [
        vec!["tree", store_url.as_str()],
        vec!["tree", store_url.as_str(), "--path", "/"],
    ] {
        let run = zarrkit(&args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stdout);
        assert!(
            run.stderr.contains("unfinished migration"),
            "{args:?}: {}",
            run.stderr
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
