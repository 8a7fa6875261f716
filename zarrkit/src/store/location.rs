//! One function from a location (a path or a URL) to a store: [`open`].

use super::{FilesystemStore, MemoryStore, Store, StoreError};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How [`open`] opens a store: storage options for the remote backends and
/// zarrkit's own settings.
///
/// Options are `object_store`'s configuration keys, spelled as its builders
/// parse them (`aws_endpoint`, `aws_region`, `aws_access_key_id`,
/// `aws_secret_access_key`, `aws_skip_signature`, `google_service_account`,
/// `google_base_url`, `azure_storage_account_name`,
/// `azure_storage_account_key`, `azure_storage_use_emulator`, `allow_http`,
/// `timeout`, …), plus these, read by zarrkit itself:
///
/// | key | meaning | default |
/// | --- | --- | --- |
/// | `concurrency` | requests kept in flight | 64 |
/// | `max_retries` | retries of a failed request | 10 |
/// | `retry_timeout` | seconds to keep retrying one request | 180 |
///
/// Options given here win over the environment variables the backends read
/// (`AWS_*`, `GOOGLE_*`, `AZURE_*`), which win over the defaults.
///
/// ```
/// let options = zarrkit::store::StoreOptions::new()
///     .with("aws_region", "eu-west-1")
///     .anonymous(true);
/// assert_eq!(options.get("aws_region"), Some("eu-west-1"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct StoreOptions {
    options: BTreeMap<String, String>,
    anonymous: bool,
}

impl StoreOptions {
    /// No options: the environment and the defaults decide.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets option `key` (case-insensitive) to `value`.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<String>) -> Self {
        self.set(key, value);
        self
    }

    /// Sets option `key` (case-insensitive) to `value`.
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.options.insert(key.to_ascii_lowercase(), value.into());
    }

    /// The value of option `key`, if set.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&str> {
        self.options
            .get(&key.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// Opens remote stores without credentials (unsigned requests), as
    /// public buckets allow.
    #[must_use]
    pub fn anonymous(mut self, anonymous: bool) -> Self {
        self.anonymous = anonymous;
        self
    }

    /// Whether requests go unsigned.
    #[must_use]
    pub fn is_anonymous(&self) -> bool {
        self.anonymous
    }

    /// Every option, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.options.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// The URL scheme of `location`, if it is a URL (`scheme://…`).
fn scheme(location: &str) -> Option<&str> {
    let (scheme, _) = location.split_once("://")?;
    let valid = !scheme.is_empty()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// Whether `location` names a zip archive (`zip://…`, or a path or URL
/// whose last name ends in `.zip`, or `.ozx` as zipped OME-Zarr does).
fn is_zip(location: &str) -> bool {
    if scheme(location).is_some_and(|s| s.eq_ignore_ascii_case("zip")) {
        return true;
    }
    let name = location.trim_end_matches('/').to_ascii_lowercase();
    let named = name.ends_with(".zip") || name.ends_with(".ozx");
    // A local directory named `x.zip` is an ordinary store.
    named && (scheme(location).is_some() || !std::path::Path::new(location).is_dir())
}

/// Opens the store at `location`, which must exist when it is a directory:
///
/// | location | store |
/// | --- | --- |
/// | `path/to/data.zarr`, `file:///abs/path` | [`FilesystemStore`] (an existing directory) |
/// | `memory://` | a new, empty [`MemoryStore`] |
/// | `s3://bucket/prefix` (also `s3a://`) | S3 (feature `s3`) |
/// | `gs://bucket/prefix` | Google Cloud Storage (feature `gcs`) |
/// | `az://container/prefix`, `azure://…`, `abfs://…`, `abfss://…`, `adl://…` | Azure Blob Storage (feature `azure`) |
/// | `http://host/path`, `https://…` | HTTP, read-only (feature `http`) |
/// | `data.zip`, `zip://data.zip`, `s3://bucket/image.ome.zip`, `….ozx` | a zip archive (feature `zip`): `ZipStore` reads a local file or a value in any of the stores above by ranges; [`open_or_create`] of a missing archive gives a `ZipStoreWriter`, whose archive appears at [`Store::finish`] |
///
/// Remote stores read `options` and then the environment variables their
/// backends know (see [`StoreOptions`]); they open without a request, so a
/// wrong endpoint or credential shows at the first read.
///
/// # Errors
/// [`StoreError::InvalidLocation`] for a malformed URL,
/// [`StoreError::UnsupportedLocation`] for a scheme this build leaves out,
/// [`StoreError::InvalidOption`] for an option the backend does not know,
/// or [`StoreError::Open`] for a directory that cannot be opened.
pub fn open(location: &str, options: &StoreOptions) -> Result<Arc<dyn Store>, StoreError> {
    open_with(location, options, false)
}

/// As [`open`], but creates a local directory (and its parents) that does
/// not exist yet; for remote stores, the same as [`open`].
///
/// # Errors
/// As [`open`].
pub fn open_or_create(
    location: &str,
    options: &StoreOptions,
) -> Result<Arc<dyn Store>, StoreError> {
    open_with(location, options, true)
}

fn open_with(
    location: &str,
    options: &StoreOptions,
    create: bool,
) -> Result<Arc<dyn Store>, StoreError> {
    if is_zip(location) {
        return open_zip(location, options, create);
    }
    let Some(scheme) = scheme(location) else {
        return open_local(location, create);
    };
    match scheme.to_ascii_lowercase().as_str() {
        "file" => {
            let path = location["file://".len()..].to_string();
            if !path.starts_with('/') {
                return Err(StoreError::InvalidLocation {
                    location: location.to_string(),
                    reason: "a file URL needs an absolute path (`file:///dir/data.zarr`)"
                        .to_string(),
                });
            }
            open_local(&path, create)
        }
        "memory" => Ok(Arc::new(MemoryStore::new())),
        "s3" | "s3a" | "gs" | "az" | "azure" | "abfs" | "abfss" | "adl" | "http" | "https" => {
            check_no_dot_segments(location)?;
            open_remote(location, options)
        }
        other => Err(StoreError::InvalidLocation {
            location: location.to_string(),
            reason: format!(
                "unknown scheme `{other}://` (expected a path, file://, memory://, s3://, gs://, az://, http:// or https://)"
            ),
        }),
    }
}

/// Refuses a URL whose path has a `.` or `..` segment, also
/// percent-encoded (`%2e%2e`): the URL standard resolves them, so
/// `s3://bucket/public/%2e%2e/private` would name `private`, outside the
/// prefix it seems to be under. Store keys refuse such segments too.
fn check_no_dot_segments(location: &str) -> Result<(), StoreError> {
    let after_scheme = location
        .split_once("://")
        .map_or(location, |(_, rest)| rest);
    let path = after_scheme.split(['?', '#']).next().unwrap_or_default();
    // The first segment is the bucket, container or host.
    for segment in path.split('/').skip(1) {
        let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
        if decoded == "." || decoded == ".." {
            return Err(StoreError::InvalidLocation {
                location: location.to_string(),
                reason: format!(
                    "its path has the segment `{segment}`, which would climb out of the prefix it seems to name; write the path without `.` and `..`"
                ),
            });
        }
    }
    Ok(())
}

/// Opens the zip archive `location` names (`zip://` is optional): a
/// local file, or a value in any other store (`s3://bucket/image.ome.zip`,
/// read by ranges). A missing archive is created when `create` is set, as
/// a [`ZipStoreWriter`](super::ZipStoreWriter) whose archive appears when
/// the store is finished ([`Store::finish`]).
#[cfg(feature = "zip")]
fn open_zip(
    location: &str,
    options: &StoreOptions,
    create: bool,
) -> Result<Arc<dyn Store>, StoreError> {
    use super::{StoreKey, ZipStore, ZipStoreWriter};
    let archive = match scheme(location) {
        Some(s) if s.eq_ignore_ascii_case("zip") => &location["zip://".len()..],
        _ => location,
    };
    let archive = archive.trim_end_matches('/');
    let local = match scheme(archive) {
        None => Some(archive),
        Some(s) if s.eq_ignore_ascii_case("file") => Some(&archive["file://".len()..]),
        Some(_) => None,
    };
    let missing = |path: &str| StoreError::Open {
        store: "zip store",
        path: path.to_string(),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such zip archive"),
    };
    if let Some(path) = local {
        if path.is_empty() {
            return Err(StoreError::InvalidLocation {
                location: location.to_string(),
                reason: "a zip location needs the archive's path (`zip://data.zip`)".to_string(),
            });
        }
        return match std::path::Path::new(path).try_exists() {
            Ok(true) => Ok(Arc::new(ZipStore::open_path(path)?)),
            Ok(false) if create => Ok(Arc::new(ZipStoreWriter::create(path)?)),
            Ok(false) => Err(missing(path)),
            Err(source) => Err(StoreError::Open {
                store: "zip store",
                path: path.to_string(),
                source,
            }),
        };
    }
    // A zip inside a remote store: the store of the folder holding it,
    // and the archive's name as a key there.
    let invalid = || StoreError::InvalidLocation {
        location: location.to_string(),
        reason: "a zip URL names the archive inside a bucket or folder (`s3://bucket/data.zip`)"
            .to_string(),
    };
    let (_, path) = archive.split_once("://").ok_or_else(invalid)?;
    let (_, within) = path.split_once('/').ok_or_else(invalid)?;
    let (folder, name) = match archive.rsplit_once('/') {
        Some((folder, name)) if !within.is_empty() && !name.is_empty() => (folder, name),
        _ => return Err(invalid()),
    };
    let parent = open_with(folder, options, false)?;
    let key = StoreKey::new(name)?;
    if parent.size(&key)?.is_some() {
        Ok(Arc::new(ZipStore::open(parent, key)?))
    } else if create {
        Ok(Arc::new(ZipStoreWriter::create_in(parent, key)?))
    } else {
        Err(missing(archive))
    }
}

#[cfg(not(feature = "zip"))]
fn open_zip(
    location: &str,
    _options: &StoreOptions,
    _create: bool,
) -> Result<Arc<dyn Store>, StoreError> {
    Err(StoreError::UnsupportedLocation {
        location: location.to_string(),
        reason: "this build of zarrkit leaves out the cargo feature `zip`".to_string(),
    })
}

fn open_local(path: &str, create: bool) -> Result<Arc<dyn Store>, StoreError> {
    Ok(Arc::new(if create {
        FilesystemStore::new(path)?
    } else {
        FilesystemStore::open_existing(path)?
    }))
}

#[cfg(not(feature = "remote"))]
fn open_remote(location: &str, _options: &StoreOptions) -> Result<Arc<dyn Store>, StoreError> {
    Err(StoreError::UnsupportedLocation {
        location: location.to_string(),
        reason: "this build of zarrkit has no remote stores (cargo features `s3`, `gcs`, `azure`, `http`)".to_string(),
    })
}

#[cfg(feature = "remote")]
fn open_remote(location: &str, options: &StoreOptions) -> Result<Arc<dyn Store>, StoreError> {
    remote::open(location, options)
}

#[cfg(feature = "remote")]
mod remote {
    use super::super::object::{Backend, RemoteStore};
    use super::{Store, StoreError, StoreOptions};
    use object_store::{ObjectStore, ObjectStoreScheme, RetryConfig};
    use std::sync::Arc;
    use std::time::Duration;

    /// The options zarrkit reads itself, not passed to the backend.
    const OWN: &[&str] = &["concurrency", "max_retries", "retry_timeout"];

    fn invalid(location: &str, reason: impl Into<String>) -> StoreError {
        StoreError::InvalidLocation {
            location: location.to_string(),
            reason: reason.into(),
        }
    }

    #[cfg(not(all(feature = "s3", feature = "gcs", feature = "azure", feature = "http")))]
    fn unsupported(location: &str, feature: &str) -> StoreError {
        StoreError::UnsupportedLocation {
            location: location.to_string(),
            reason: format!("this build of zarrkit leaves out the cargo feature `{feature}`"),
        }
    }

    fn number<T: std::str::FromStr>(
        options: &StoreOptions,
        backend: Backend,
        key: &str,
    ) -> Result<Option<T>, StoreError> {
        options
            .get(key)
            .map(|v| {
                v.trim().parse().map_err(|_| StoreError::InvalidOption {
                    backend: backend.name(),
                    key: key.to_string(),
                    reason: format!("`{v}` is not a number"),
                })
            })
            .transpose()
    }

    fn retry(options: &StoreOptions, backend: Backend) -> Result<RetryConfig, StoreError> {
        let mut retry = RetryConfig::default();
        if let Some(n) = number(options, backend, "max_retries")? {
            retry.max_retries = n;
        }
        if let Some(seconds) = number::<f64>(options, backend, "retry_timeout")? {
            retry.retry_timeout =
                Duration::try_from_secs_f64(seconds).map_err(|_| StoreError::InvalidOption {
                    backend: backend.name(),
                    key: "retry_timeout".to_string(),
                    reason: format!("`{seconds}` is not a duration in seconds"),
                })?;
        }
        Ok(retry)
    }

    /// Applies every option not in [`OWN`] to a builder through its
    /// `with_config`, after parsing the key with the backend's key type.
    macro_rules! configure {
        ($builder:expr, $key:ty, $options:expr, $backend:expr) => {{
            let mut builder = $builder;
            for (key, value) in $options.iter() {
                if OWN.contains(&key) {
                    continue;
                }
                let parsed: $key = key.parse().map_err(|_| StoreError::InvalidOption {
                    backend: $backend.name(),
                    key: key.to_string(),
                    reason: "not an option of this backend".to_string(),
                })?;
                builder = builder.with_config(parsed, value);
            }
            builder
        }};
    }

    fn build_error(location: &str, backend: Backend, err: object_store::Error) -> StoreError {
        match err {
            object_store::Error::UnknownConfigurationKey { key, .. } => StoreError::InvalidOption {
                backend: backend.name(),
                key,
                reason: "not an option of this backend".to_string(),
            },
            err => invalid(location, err.to_string()),
        }
    }

    pub(super) fn open(
        location: &str,
        options: &StoreOptions,
    ) -> Result<Arc<dyn Store>, StoreError> {
        let url = url::Url::parse(location).map_err(|err| invalid(location, err.to_string()))?;
        if url.host_str().is_none_or(str::is_empty) {
            return Err(invalid(
                location,
                "no bucket, container or host after the scheme",
            ));
        }
        let (scheme, prefix) =
            ObjectStoreScheme::parse(&url).map_err(|err| invalid(location, err.to_string()))?;
        let (backend, inner): (Backend, Arc<dyn ObjectStore>) = match scheme {
            ObjectStoreScheme::AmazonS3 => (Backend::S3, s3(location, &url, options)?),
            ObjectStoreScheme::GoogleCloudStorage => (Backend::Gcs, gcs(location, &url, options)?),
            ObjectStoreScheme::MicrosoftAzure => (Backend::Azure, azure(location, &url, options)?),
            ObjectStoreScheme::Http => (Backend::Http, http(location, &url, options)?),
            _ => return Err(invalid(location, "not a remote store URL")),
        };
        let mut store = RemoteStore::new(inner, prefix.as_ref(), backend)?.with_location(location);
        if let Some(n) = number(options, backend, "concurrency")? {
            store = store.with_concurrency(n);
        }
        Ok(Arc::new(store))
    }

    /// Finishes a builder: anonymous access, retries, then `build`.
    #[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
    macro_rules! finish {
        ($builder:expr, $options:expr, $backend:expr, $location:expr) => {{
            let mut builder = $builder;
            if $options.is_anonymous() {
                builder = builder.with_skip_signature(true);
            }
            let store = builder
                .with_retry(retry($options, $backend)?)
                .build()
                .map_err(|err| build_error($location, $backend, err))?;
            Ok(Arc::new(store))
        }};
    }

    /// Whether the configured endpoint is plain HTTP (a local test server,
    /// MinIO) and no option says whether to allow it: without
    /// `allow_http`, the client would refuse it with a message about TLS.
    #[cfg(any(feature = "s3", feature = "azure"))]
    fn plain_http(endpoint: Option<String>, options: &StoreOptions) -> bool {
        endpoint.is_some_and(|e| e.starts_with("http://"))
            && options.get("allow_http").is_none()
            && options.get("aws_allow_http").is_none()
    }

    #[cfg(feature = "s3")]
    fn s3(
        location: &str,
        url: &url::Url,
        options: &StoreOptions,
    ) -> Result<Arc<dyn ObjectStore>, StoreError> {
        use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
        let backend = Backend::S3;
        let builder = AmazonS3Builder::from_env().with_url(url.as_str());
        let mut builder = configure!(builder, AmazonS3ConfigKey, options, backend);
        if plain_http(
            builder.get_config_value(&AmazonS3ConfigKey::Endpoint),
            options,
        ) {
            builder = builder.with_allow_http(true);
        }
        finish!(builder, options, backend, location)
    }

    #[cfg(feature = "gcs")]
    fn gcs(
        location: &str,
        url: &url::Url,
        options: &StoreOptions,
    ) -> Result<Arc<dyn ObjectStore>, StoreError> {
        use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
        let backend = Backend::Gcs;
        let builder = GoogleCloudStorageBuilder::from_env().with_url(url.as_str());
        let builder = configure!(builder, GoogleConfigKey, options, backend);
        finish!(builder, options, backend, location)
    }

    #[cfg(feature = "azure")]
    fn azure(
        location: &str,
        url: &url::Url,
        options: &StoreOptions,
    ) -> Result<Arc<dyn ObjectStore>, StoreError> {
        use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
        let backend = Backend::Azure;
        let builder = MicrosoftAzureBuilder::from_env().with_url(url.as_str());
        let mut builder = configure!(builder, AzureConfigKey, options, backend);
        if plain_http(builder.get_config_value(&AzureConfigKey::Endpoint), options) {
            builder = builder.with_allow_http(true);
        }
        finish!(builder, options, backend, location)
    }

    #[cfg(feature = "http")]
    fn http(
        location: &str,
        url: &url::Url,
        options: &StoreOptions,
    ) -> Result<Arc<dyn ObjectStore>, StoreError> {
        use object_store::ClientConfigKey;
        use object_store::http::HttpBuilder;
        let backend = Backend::Http;
        // The URL's path is the store's prefix, as for the other backends.
        let base = &url[..url::Position::BeforePath];
        let builder = HttpBuilder::new().with_url(base);
        let mut builder = configure!(builder, ClientConfigKey, options, backend);
        if url.scheme() == "http" && options.get("allow_http").is_none() {
            builder = builder.with_config(ClientConfigKey::AllowHttp, "true");
        }
        let store = builder
            .with_retry(retry(options, backend)?)
            .build()
            .map_err(|err| build_error(location, backend, err))?;
        Ok(Arc::new(store))
    }

    /// A backend this build leaves out.
    #[cfg(not(all(feature = "s3", feature = "gcs", feature = "azure", feature = "http")))]
    fn missing(location: &str, feature: &str) -> Result<Arc<dyn ObjectStore>, StoreError> {
        Err(unsupported(location, feature))
    }

    #[cfg(not(feature = "s3"))]
    fn s3(
        location: &str,
        _: &url::Url,
        _: &StoreOptions,
    ) -> Result<Arc<dyn ObjectStore>, StoreError> {
        missing(location, "s3")
    }

    #[cfg(not(feature = "gcs"))]
    fn gcs(
        location: &str,
        _: &url::Url,
        _: &StoreOptions,
    ) -> Result<Arc<dyn ObjectStore>, StoreError> {
        missing(location, "gcs")
    }

    #[cfg(not(feature = "azure"))]
    fn azure(
        location: &str,
        _: &url::Url,
        _: &StoreOptions,
    ) -> Result<Arc<dyn ObjectStore>, StoreError> {
        missing(location, "azure")
    }

    #[cfg(not(feature = "http"))]
    fn http(
        location: &str,
        _: &url::Url,
        _: &StoreOptions,
    ) -> Result<Arc<dyn ObjectStore>, StoreError> {
        missing(location, "http")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_schemes_are_invalid_locations_naming_the_scheme() {
        let err = open("ftp://host/data.zarr", &StoreOptions::new()).unwrap_err();
        assert!(matches!(err, StoreError::InvalidLocation { .. }), "{err:?}");
        assert!(err.to_string().contains("`ftp://`"), "{err}");
    }

    #[test]
    #[cfg(feature = "zip")]
    fn zip_locations_open_zip_stores_and_create_missing_ones() {
        use crate::store::StoreKey;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.zip");
        let path = path.to_str().unwrap();
        let options = StoreOptions::new();
        let missing = open(path, &options).unwrap_err();
        assert!(
            matches!(&missing, StoreError::Open { path: p, .. } if p == path),
            "{missing:?}"
        );
        let key = StoreKey::new("a/zarr.json").unwrap();
        let writer = open_or_create(path, &options).unwrap();
        assert!(writer.capabilities().write);
        writer.set(&key, b"{}").unwrap();
        assert!(
            !std::path::Path::new(path).exists(),
            "written before finish"
        );
        writer.finish().unwrap();
        for location in [
            path.to_string(),
            format!("zip://{path}"),
            format!("file://{path}"),
        ] {
            let store = open(&location, &options).unwrap();
            assert!(!store.capabilities().write, "{location}");
            assert_eq!(store.get(&key, None).unwrap().as_deref(), Some(&b"{}"[..]));
        }
        // An existing archive opens for reading even with `open_or_create`.
        assert!(!open_or_create(path, &options).unwrap().capabilities().write);
        // A directory named like an archive is an ordinary store.
        let folder = dir.path().join("folder.zip");
        std::fs::create_dir(&folder).unwrap();
        assert!(
            open(folder.to_str().unwrap(), &options)
                .unwrap()
                .capabilities()
                .write
        );
        assert!(matches!(
            open("zip://", &options).unwrap_err(),
            StoreError::InvalidLocation { .. }
        ));
    }

    #[test]
    fn memory_locations_open_an_empty_memory_store() {
        let store = open("memory://", &StoreOptions::new()).unwrap();
        assert_eq!(store.name(), "memory store");
    }

    #[test]
    fn local_paths_and_file_urls_open_existing_directories() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap();
        open(path, &StoreOptions::new()).unwrap();
        open(&format!("file://{path}"), &StoreOptions::new()).unwrap();
        let missing = format!("{path}/missing");
        assert!(open(&missing, &StoreOptions::new()).is_err());
        open_or_create(&missing, &StoreOptions::new()).unwrap();
    }

    #[cfg(feature = "s3")]
    #[test]
    fn malformed_and_incomplete_urls_are_invalid_locations() {
        for location in ["s3://", "s3:///prefix", "https://"] {
            let err = open(location, &StoreOptions::new()).unwrap_err();
            assert!(
                matches!(err, StoreError::InvalidLocation { .. }),
                "{location}: {err:?}"
            );
        }
    }

    #[cfg(feature = "s3")]
    #[test]
    fn unknown_options_name_the_key() {
        let options = StoreOptions::new().with("aws_no_such_option", "1");
        let err = open("s3://bucket/x", &options).unwrap_err();
        assert!(err.to_string().contains("`aws_no_such_option`"), "{err}");
    }
}
