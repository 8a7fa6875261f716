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
