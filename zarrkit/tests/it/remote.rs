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

/// The test server `var` locates, or `None` (the test skips).
pub fn server(var: &str) -> Option<String> {
    zarrkit::store::testing::server_from_env(var)
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

/// SeaweedFS honours `If-None-Match: *` atomically: of writers creating
/// one key, or one array or group, at once exactly one wins. (s3s-fs
/// checks the condition too, but not atomically against a concurrent
/// `PUT`, so only its sequential behaviour is tested, by the suite.)
#[test]
fn racing_creators_on_seaweedfs_leave_one_winner() {
    use crate::support::{Racing, race_to_create};
    use zarrkit::format::ZarrFormat;
    let Some((store, _)) = s3_store("ZARRKIT_S3_ENDPOINT", "race") else {
        return;
    };
    assert!(store.capabilities().conditional_create);
    for _ in 0..5 {
        zarrkit::store::testing::check_racing_creates(&*store, 8);
    }
    for (i, format) in [ZarrFormat::V3, ZarrFormat::V2].into_iter().enumerate() {
        race_to_create(&store, format, &format!("/a{i}"), 8, Racing::Arrays);
        race_to_create(&store, format, &format!("/g{i}/h"), 8, Racing::Groups);
    }
    store
        .erase_prefix(&zarrkit::store::StorePrefix::root())
        .unwrap();
}

/// Azurite answers `If-None-Match: *` atomically too.
#[test]
fn racing_creators_on_azurite_leave_one_winner() {
    use crate::support::{Racing, race_to_create};
    use zarrkit::format::ZarrFormat;
    let Some(endpoint) = server("ZARRKIT_AZURE_ENDPOINT") else {
        return;
    };
    let url = format!("az://{}/{}", bucket(), unique("race"));
    let store = open(&url, &azure_options(&endpoint)).unwrap();
    assert!(store.capabilities().conditional_create);
    for _ in 0..5 {
        zarrkit::store::testing::check_racing_creates(&*store, 8);
    }
    race_to_create(&store, ZarrFormat::V3, "/a", 8, Racing::Arrays);
    race_to_create(&store, ZarrFormat::V3, "/g", 8, Racing::Groups);
    store
        .erase_prefix(&zarrkit::store::StorePrefix::root())
        .unwrap();
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

/// Values that do not compress, so that chunks have their full size.
fn noise(n: usize) -> Vec<u16> {
    (0..n as u64)
        .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as u16)
        .collect()
}

#[test]
fn arrays_round_trip_on_seaweedfs_whole_and_in_parts() {
    use zarrkit::metadata::DataType;
    use zarrkit::{Array, Region};
    let Some((store, _)) = s3_store("ZARRKIT_S3_ENDPOINT", "arrays") else {
        return;
    };
    let shape = [40u64, 50, 60];
    let array = Array::builder(&shape, DataType::UInt16, &[8, 16, 16])
        .create(Arc::clone(&store), "/a")
        .unwrap();
    let data = noise(40 * 50 * 60);
    array.write_region(&Region::whole(&shape), &data).unwrap();
    let array = Array::open(Arc::clone(&store), "/a").unwrap();
    assert_eq!(
        array.read_region::<u16>(&Region::whole(&shape)).unwrap(),
        data
    );
    // A region straddling chunks: a read-modify-write of each edge chunk.
    let region = Region::new(vec![5, 7, 9], vec![10, 20, 30]);
    let patch = vec![7u16; 10 * 20 * 30];
    array.write_region(&region, &patch).unwrap();
    assert_eq!(array.read_region::<u16>(&region).unwrap(), patch);
    assert_eq!(
        array
            .read_region::<u16>(&Region::new(vec![0, 0, 0], vec![1, 1, 4]))
            .unwrap(),
        data[..4]
    );
    store
        .erase_prefix(&zarrkit::store::StorePrefix::root())
        .unwrap();
}

#[cfg(all(feature = "zstd", feature = "crc32c"))]
#[test]
fn sharded_arrays_read_their_inner_chunks_by_ranges_on_seaweedfs() {
    use zarrkit::codec::sharding::ShardingCodec;
    use zarrkit::codec::{Codec, bytes::BytesCodec, zstd::ZstdCodec};
    use zarrkit::metadata::DataType;
    use zarrkit::{Array, Region};
    let Some((store, _)) = s3_store("ZARRKIT_S3_ENDPOINT", "sharding") else {
        return;
    };
    let zstd = Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()));
    let bytes = Codec::ArrayToBytes(Arc::new(BytesCodec::little()));
    let sharding = Codec::ArrayToBytes(Arc::new(ShardingCodec::new(&[8, 8], vec![bytes, zstd])));
    let shape = [64u64, 96];
    let array = Array::builder(&shape, DataType::UInt16, &[32, 32])
        .codecs(vec![sharding])
        .create(Arc::clone(&store), "/s")
        .unwrap();
    let data = noise(64 * 96);
    array.write_region(&Region::whole(&shape), &data).unwrap();
    let array = Array::open(Arc::clone(&store), "/s").unwrap();
    assert_eq!(
        array.read_region::<u16>(&Region::whole(&shape)).unwrap(),
        data
    );
    // Parts of shards: the index by a suffix range, then inner chunks.
    let region = Region::new(vec![3, 30], vec![40, 20]);
    let got: Vec<u16> = array.read_region(&region).unwrap();
    for (i, row) in got.chunks(20).enumerate() {
        let start = (3 + i) * 96 + 30;
        assert_eq!(row, &data[start..start + 20], "row {i}");
    }
    store
        .erase_prefix(&zarrkit::store::StorePrefix::root())
        .unwrap();
}

#[test]
fn groups_and_consolidated_metadata_work_on_seaweedfs() {
    use zarrkit::metadata::{DataType, JsonMap};
    use zarrkit::{Array, Group};
    let Some((store, _)) = s3_store("ZARRKIT_S3_ENDPOINT", "groups") else {
        return;
    };
    Group::create(Arc::clone(&store), "/", JsonMap::new()).unwrap();
    Group::create(Arc::clone(&store), "/g", JsonMap::new()).unwrap();
    for path in ["/g/a", "/g/b", "/c"] {
        Array::builder(&[10], DataType::Int32, &[5])
            .create(Arc::clone(&store), path)
            .unwrap();
    }
    let walked = |group: &Group| {
        let mut paths: Vec<String> = group
            .walk()
            .unwrap()
            .iter()
            .map(|n| n.path().to_string())
            .collect();
        paths.sort();
        paths
    };
    let plain = walked(&Group::open(Arc::clone(&store), "/").unwrap());
    assert_eq!(plain, ["/c", "/g", "/g/a", "/g/b"]);
    zarrkit::format::consolidate::consolidate(store.as_ref(), "/").unwrap();
    let root = Group::open(Arc::clone(&store), "/").unwrap();
    assert!(root.is_consolidated());
    assert_eq!(walked(&root), plain);
    store
        .erase_prefix(&zarrkit::store::StorePrefix::root())
        .unwrap();
}

#[cfg(all(feature = "gzip", feature = "zstd", feature = "crc32c"))]
#[test]
fn a_local_v2_hierarchy_migrates_to_seaweedfs_as_v3() {
    use zarrkit::format::ZarrFormat;
    use zarrkit::metadata::{DataType, JsonMap};
    use zarrkit::{Array, Region};
    let Some((dst, _)) = s3_store("ZARRKIT_S3_ENDPOINT", "migrate") else {
        return;
    };
    let src: Arc<dyn Store> = Arc::new(zarrkit::store::MemoryStore::new());
    zarrkit::Group::create_as(Arc::clone(&src), "/", ZarrFormat::V2, JsonMap::new()).unwrap();
    let array = Array::builder(&[30, 40], DataType::UInt16, &[8, 16])
        .format(ZarrFormat::V2)
        .create(Arc::clone(&src), "/a")
        .unwrap();
    let data = noise(30 * 40);
    array
        .write_region(&Region::whole(&[30, 40]), &data)
        .unwrap();
    let plan = zarrkit::migrate::plan_with(
        Arc::clone(&src),
        Arc::clone(&dst),
        ZarrFormat::V3,
        &zarrkit::migrate::PlanOptions::default(),
    )
    .unwrap();
    let report = zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
    assert_eq!(report.chunks, 12);
    let migrated = Array::open(Arc::clone(&dst), "/a").unwrap();
    assert_eq!(migrated.format(), ZarrFormat::V3);
    assert_eq!(
        migrated
            .read_region::<u16>(&Region::whole(&[30, 40]))
            .unwrap(),
        data
    );
    dst.erase_prefix(&zarrkit::store::StorePrefix::root())
        .unwrap();
}

#[test]
fn a_store_served_by_nginx_reads_over_http_and_refuses_writes() {
    use zarrkit::metadata::DataType;
    use zarrkit::{Array, Region};
    let (Some(url), Some(root)) = (server("ZARRKIT_HTTP_URL"), server("ZARRKIT_HTTP_ROOT")) else {
        return;
    };
    let name = unique("http");
    let dir = std::path::Path::new(&root).join(&name);
    let local: Arc<dyn Store> = Arc::new(zarrkit::store::FilesystemStore::new(&dir).unwrap());
    let array = Array::builder(&[20, 30], DataType::UInt16, &[8, 8])
        .create(Arc::clone(&local), "/a")
        .unwrap();
    let data = noise(20 * 30);
    array
        .write_region(&Region::whole(&[20, 30]), &data)
        .unwrap();

    let store = open(&format!("{url}/{name}"), &StoreOptions::new()).unwrap();
    zarrkit::store::testing::run_all(&*store);
    let array = Array::open(Arc::clone(&store), "/a").unwrap();
    assert_eq!(
        array.read_region::<u16>(&Region::whole(&[20, 30])).unwrap(),
        data
    );
    let err = store.set(&StoreKey::new("x").unwrap(), b"x").unwrap_err();
    assert!(matches!(err, StoreError::Unsupported { .. }), "{err:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_stopped_server_is_an_error_naming_the_key_and_store_after_retries() {
    // Nothing listens on port 1 of loopback: every attempt is refused.
    let url = format!("s3://{}/{}", bucket(), unique("stopped"));
    let options = s3_options("http://127.0.0.1:1")
        .with("max_retries", "1")
        .with("retry_timeout", "2");
    let store = open(&url, &options).unwrap();
    let err = store
        .get(&StoreKey::new("a/c/0/0").unwrap(), None)
        .unwrap_err();
    assert!(matches!(err, StoreError::Read { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("`a/c/0/0`"), "{message}");
    assert!(message.contains(&url), "{message}");
}

#[test]
fn large_values_go_up_in_multipart_uploads_on_seaweedfs() {
    let Some((store, _)) = s3_store("ZARRKIT_S3_ENDPOINT", "multipart") else {
        return;
    };
    // Over the 8 MiB threshold: three parts.
    let value: Vec<u8> = (0..(20usize << 20)).map(|i| (i % 253) as u8).collect();
    let key = StoreKey::new("shard/c/0").unwrap();
    store.set(&key, &value).unwrap();
    assert_eq!(store.size(&key).unwrap(), Some(value.len() as u64));
    assert_eq!(store.get(&key, None).unwrap().unwrap(), value);
    let tail = store
        .get(&key, Some(zarrkit::store::ByteRange::Suffix(16)))
        .unwrap()
        .unwrap();
    assert_eq!(tail, value[value.len() - 16..]);
    store.erase(&key).unwrap();
}

/// fake-gcs-server does not implement the XML API that `object_store`
/// writes through, so the store is uploaded with its JSON API (curl) and
/// only read through zarrkit.
#[test]
fn fake_gcs_serves_a_store_uploaded_through_its_json_api() {
    use zarrkit::metadata::DataType;
    use zarrkit::{Array, Region};
    let (Some(endpoint), Some(account)) = (
        server("ZARRKIT_GCS_ENDPOINT"),
        server("ZARRKIT_GCS_SERVICE_ACCOUNT"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn Store> = Arc::new(zarrkit::store::FilesystemStore::new(dir.path()).unwrap());
    let array = Array::builder(&[20, 30], DataType::UInt16, &[8, 8])
        .create(Arc::clone(&local), "/a")
        .unwrap();
    let data = noise(20 * 30);
    array
        .write_region(&Region::whole(&[20, 30]), &data)
        .unwrap();
    let prefix = unique("gcs");
    for key in local.list().unwrap() {
        let file = dir.path().join(key.as_str());
        let url = format!(
            "{endpoint}/upload/storage/v1/b/{}/o?uploadType=media&name={prefix}/{}",
            bucket(),
            key.as_str()
        );
        let status = std::process::Command::new("curl")
            .args(["-sf", "-o", "/dev/null", "-X", "POST", "--data-binary"])
            .arg(format!("@{}", file.display()))
            .arg(&url)
            .status()
            .expect("curl runs");
        assert!(status.success(), "uploading {key} to {url}");
    }
    let options = StoreOptions::new().with("google_service_account", account);
    let store = open(&format!("gs://{}/{prefix}", bucket()), &options).unwrap();
    let array = Array::open(Arc::clone(&store), "/a").unwrap();
    assert_eq!(
        array.read_region::<u16>(&Region::whole(&[20, 30])).unwrap(),
        data
    );
    let listed = store
        .list_dir(&zarrkit::store::StorePrefix::root())
        .unwrap();
    assert_eq!(listed.prefixes.len(), 1, "{listed:?}");
    let key = StoreKey::new("a/zarr.json").unwrap();
    let whole = store.get(&key, None).unwrap().unwrap();
    let suffix = store
        .get(&key, Some(zarrkit::store::ByteRange::Suffix(10)))
        .unwrap()
        .unwrap();
    assert_eq!(suffix, whole[whole.len() - 10..]);
}

/// Issue #13: a server that stops between two reads of an array gives an
/// error naming the key and the store once the retries are spent, never a
/// partial array. The test starts its own s3s-fs (the binary
/// `scripts/servers.sh` builds, `ZARRKIT_S3S_SERVER`), so that it can stop it.
#[test]
fn a_server_stopped_during_reads_is_an_error_naming_the_key_and_store() {
    use zarrkit::metadata::DataType;
    use zarrkit::{Array, Region};
    let Some(binary) = server("ZARRKIT_S3S_SERVER") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join(bucket())).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let options = s3_options(&format!("http://127.0.0.1:{port}"))
        .with("max_retries", "2")
        .with("retry_timeout", "5");
    let (access, secret) = (
        options.get("aws_access_key_id").unwrap().to_string(),
        options.get("aws_secret_access_key").unwrap().to_string(),
    );
    let mut child = std::process::Command::new(&binary)
        .arg(root.path())
        .arg(port.to_string())
        .args([&access, &secret])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the s3s-fs test server starts");
    let url = format!("s3://{}/stopped.zarr", bucket());
    let store = open(&url, &options).unwrap();
    // Wait until it answers.
    let key = StoreKey::new("probe").unwrap();
    let ready = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        store.get(&key, None).is_ok()
    });
    assert!(ready, "s3s-fs did not answer on port {port}");
    let shape = [32u64, 32];
    let array = Array::builder(&shape, DataType::UInt16, &[8, 8])
        .create(Arc::clone(&store), "/a")
        .unwrap();
    array
        .write_region(&Region::whole(&shape), &noise(32 * 32))
        .unwrap();
    let array = Array::open(Arc::clone(&store), "/a").unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let err = array
        .read_region::<u16>(&Region::whole(&shape))
        .unwrap_err();
    let message = format!("{err}");
    assert!(message.contains("`a/c/"), "{message}");
    assert!(message.contains(&url), "{message}");
}
