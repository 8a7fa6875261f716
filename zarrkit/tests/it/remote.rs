//! Remote stores against real servers on 127.0.0.1 (#13).
//!
//! `scripts/servers.sh` starts the servers and exports where they are:
//! `ZARRKIT_S3_ENDPOINT` (SeaweedFS), `ZARRKIT_S3S_ENDPOINT` (s3s-fs),
//! `ZARRKIT_HTTP_URL` with `ZARRKIT_HTTP_ROOT` (nginx), `ZARRKIT_AZURE_ENDPOINT`
//! (Azurite), `ZARRKIT_GCS_ENDPOINT` (fake-gcs-server), the test
//! credentials, and `ZARRKIT_TEST_BUCKET` (a bucket or container that
//! exists on each). Without a variable a test skips, saying so on stderr,
//! unless `ZARRKIT_REQUIRE_SERVERS=1`, when it fails.
//!
//! Every test works under a prefix of its own, so tests run in parallel
//! and a test run leaves the servers as it found them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use zarrkit::store::{Store, StoreError, StoreKey, StoreOptions, open};

/// The value of `var`, or `None` after saying on stderr that the test
/// skips; a panic instead when `ZARRKIT_REQUIRE_SERVERS=1`.
pub fn server(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(value) if !value.is_empty() => Some(value),
        _ => {
            assert!(
                std::env::var("ZARRKIT_REQUIRE_SERVERS").as_deref() != Ok("1"),
                "{var} is not set and ZARRKIT_REQUIRE_SERVERS=1: start the test servers (scripts/servers.sh)"
            );
            eprintln!("skipped: {var} is not set (scripts/servers.sh starts the test servers)");
            None
        }
    }
}

/// The bucket (container) that exists on every test server.
pub fn bucket() -> String {
    std::env::var("ZARRKIT_TEST_BUCKET").unwrap_or_else(|_| "zarrkit".to_string())
}

/// A prefix no other test (in this run or an earlier one) uses.
pub fn unique(name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{name}-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn env_or(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_string())
}

/// The options of an S3 test server at `endpoint`: explicit credentials
/// (never the instance metadata service) and few, quick retries.
pub fn s3_options(endpoint: &str) -> StoreOptions {
    StoreOptions::new()
        .with("aws_endpoint", endpoint)
        .with(
            "aws_access_key_id",
            env_or("AWS_ACCESS_KEY_ID", "zarrkit-test"),
        )
        .with(
            "aws_secret_access_key",
            env_or("AWS_SECRET_ACCESS_KEY", "zarrkit-test-secret"),
        )
        .with("aws_region", env_or("AWS_REGION", "us-east-1"))
        .with("max_retries", "2")
        .with("retry_timeout", "10")
}

/// A new, empty S3 store on the server `endpoint_var` names, and its URL.
pub fn s3_store(endpoint_var: &str, name: &str) -> Option<(Arc<dyn Store>, String)> {
    let endpoint = server(endpoint_var)?;
    let url = format!("s3://{}/{}", bucket(), unique(name));
    let store = open(&url, &s3_options(&endpoint)).unwrap_or_else(|err| panic!("{url}: {err}"));
    Some((store, url))
}

/// The options of Azurite at `endpoint` with its development account.
pub fn azure_options(endpoint: &str) -> StoreOptions {
    StoreOptions::new()
        .with("azure_storage_endpoint", endpoint)
        .with(
            "azure_storage_account_name",
            env_or("AZURE_STORAGE_ACCOUNT_NAME", "devstoreaccount1"),
        )
        .with(
            "azure_storage_account_key",
            env_or(
                "AZURE_STORAGE_ACCOUNT_KEY",
                "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
            ),
        )
        .with("max_retries", "2")
        .with("retry_timeout", "10")
}

#[test]
fn seaweedfs_passes_the_conformance_suite() {
    let Some((store, _)) = s3_store("ZARRKIT_S3_ENDPOINT", "conformance") else {
        return;
    };
    // SeaweedFS lists an emptied "directory" for a while after its last
    // object is erased; s3s-fs below checks that it disappears at once.
    zarrkit::store::testing::run_all_allowing_empty_prefixes(&*store);
}

#[test]
fn s3s_fs_passes_the_conformance_suite() {
    let Some((store, _)) = s3_store("ZARRKIT_S3S_ENDPOINT", "conformance") else {
        return;
    };
    zarrkit::store::testing::run_all(&*store);
}

#[test]
fn azurite_passes_the_conformance_suite() {
    let Some(endpoint) = server("ZARRKIT_AZURE_ENDPOINT") else {
        return;
    };
    let url = format!("az://{}/{}", bucket(), unique("conformance"));
    let store = open(&url, &azure_options(&endpoint)).unwrap();
    zarrkit::store::testing::run_all(&*store);
}

#[test]
fn s3_reads_of_a_missing_key_are_none_and_name_nothing_else() {
    let Some((store, _)) = s3_store("ZARRKIT_S3_ENDPOINT", "missing") else {
        return;
    };
    let key = StoreKey::new("no/such/key").unwrap();
    assert_eq!(store.get(&key, None).unwrap(), None);
    assert_eq!(store.size(&key).unwrap(), None);
}

#[test]
fn a_missing_bucket_is_its_own_error() {
    let Some(endpoint) = server("ZARRKIT_S3_ENDPOINT") else {
        return;
    };
    let url = format!("s3://{}/data.zarr", unique("no-such-bucket"));
    let store = open(&url, &s3_options(&endpoint)).unwrap();
    let err = store
        .list_dir(&zarrkit::store::StorePrefix::root())
        .unwrap_err();
    assert!(matches!(err, StoreError::NoSuchBucket { .. }), "{err:?}");
    assert!(err.to_string().contains(&url), "{err}");
}

#[test]
fn a_wrong_secret_is_access_denied_naming_the_key() {
    let Some(endpoint) = server("ZARRKIT_S3_ENDPOINT") else {
        return;
    };
    let url = format!("s3://{}/{}", bucket(), unique("denied"));
    let options = s3_options(&endpoint).with("aws_secret_access_key", "wrong-secret");
    let store = open(&url, &options).unwrap();
    let err = store
        .get(&StoreKey::new("zarr.json").unwrap(), None)
        .unwrap_err();
    assert!(matches!(err, StoreError::AccessDenied { .. }), "{err:?}");
    assert!(err.to_string().contains("`zarr.json`"), "{err}");
}
