//! Issue #17, "Crashes": a writer killed with `SIGKILL` at random moments
//! while it writes chunks, partial shards, metadata, consolidated metadata
//! or a migration leaves every chunk and document either the old value or
//! the new one (never torn), a later open works, temporary files are never
//! listed as keys (and `remove_leftover_files` cleans them), and a killed
//! migration resumes to the right result. On the filesystem store and on S3
//! (SeaweedFS).
//!
//! Each test runs as the parent, and, re-run with `ZARRKIT_IT_ROLE` set, as
//! the child writer it kills. The child writes generation after
//! generation until it is killed; each generation's values say which
//! generation and which element they are, so a mix shows. The number of
//! kills per scenario is `ZARRKIT_CRASH_KILLS` (default below), the moments
//! come from `ZARRKIT_CRASH_SEED` (printed, default the clock).

use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use zarrkit::codec::sharding::ShardingCodec;
use zarrkit::codec::{Codec, bytes::BytesCodec, crc32c::Crc32cCodec, zstd::ZstdCodec};
use zarrkit::format::ZarrFormat;
use zarrkit::metadata::DataType;
use zarrkit::store::{FilesystemStore, Store};
use zarrkit::{Array, Group, Region};

/// The environment variables that make this test binary a child.
pub const ROLE: &str = "ZARRKIT_IT_ROLE";
pub const STORE: &str = "ZARRKIT_IT_STORE";

/// Runs this test binary as a child running the test `test` (its full
/// name) with `role` and `store` in its environment, its stdout piped.
pub fn spawn_child(test: &str, role: &str, store: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(STORE, store)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The role this process was started with, if it is a child.
pub fn child_role() -> Option<(String, String)> {
    Some((std::env::var(ROLE).ok()?, std::env::var(STORE).ok()?))
}

/// What a child prints when it is about to write.
const READY: &str = "zarrkit-child-ready";

/// Tells the parent the child is about to write (a line on stdout).
pub fn say_ready() {
    use std::io::Write;
    let mut out = std::io::stdout();
    // On a line of its own: the test harness has printed `test … ` with
    // no newline before the test body runs.
    writeln!(out, "\n{READY}").unwrap();
    out.flush().unwrap();
}

/// Waits for the child's `ready`.
pub fn wait_ready(child: &mut Child) {
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    let mut reader = BufReader::new(stdout);
    loop {
        line.clear();
        let n = reader.read_line(&mut line).unwrap();
        assert!(n > 0, "the child ended before it was ready");
        if line.trim() == READY {
            break;
        }
    }
    // Keep the pipe open (a closed one would fail the child's writes).
    child.stdout = Some(reader.into_inner());
}

/// A store as a child names it: `file:<path>`, `s3:<url>` on the
/// SeaweedFS of `ZARRKIT_S3_ENDPOINT`, or `az:<url>` on the Azurite of
/// `ZARRKIT_AZURE_ENDPOINT`.
pub fn open_spec(spec: &str) -> Arc<dyn Store> {
    if let Some(path) = spec.strip_prefix("file:") {
        return Arc::new(FilesystemStore::new(path).unwrap());
    }
    #[cfg(feature = "s3")]
    if let Some(url) = spec.strip_prefix("s3:") {
        let endpoint = std::env::var("ZARRKIT_S3_ENDPOINT").unwrap();
        return zarrkit::store::open(url, &crate::remote::s3_options(&endpoint)).unwrap();
    }
    #[cfg(all(feature = "s3", feature = "azure"))]
    if let Some(url) = spec.strip_prefix("az:") {
        let endpoint = std::env::var("ZARRKIT_AZURE_ENDPOINT").unwrap();
        return zarrkit::store::open(url, &crate::remote::azure_options(&endpoint)).unwrap();
    }
    panic!("unknown store `{spec}`")
}

/// A small random number generator (xorshift), seeded and printed so that a
/// failing run can be repeated.
pub struct Rng(u64);

impl Rng {
    pub fn from_env() -> Self {
        let seed = std::env::var("ZARRKIT_CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("ZARRKIT_CRASH_SEED={seed}");
        Self(seed | 1)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn kills(default: u32) -> u32 {
    std::env::var("ZARRKIT_CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// What the kills of one scenario found.
#[derive(Debug, Default)]
struct Outcome {
    kills: u32,
    /// Children that finished before the kill (a migration that completed).
    finished: u32,
    /// The distinct generations found over the checks: more than one shows
    /// that the kills fell while generations were being written.
    generations: std::collections::BTreeSet<u64>,
    /// Checks that found a chunk between two generations (must stay 0).
    torn: u32,
}

/// The values of a 32×32 `u32` array in generation `g`: element `k` (in C
/// order) is `g * 4096 + k`, so each value says its generation and place.
const SHAPE: [u64; 2] = [32, 32];

fn generation_values(g: u64, region: &Region) -> Vec<u32> {
    let mut out = Vec::new();
    for i in region.start()[0]..region.start()[0] + region.shape()[0] {
        for j in region.start()[1]..region.start()[1] + region.shape()[1] {
            out.push((g * 4096 + i * SHAPE[1] + j) as u32);
        }
    }
    out
}

/// The generation the elements of `region` (read as `data`) hold, all of
/// them; an error when they mix generations or hold foreign values.
fn generation_of(data: &[u32], region: &Region) -> Result<u64, String> {
    let g = u64::from(data[0]) / 4096;
    if data != generation_values(g, region).as_slice() {
        return Err(format!(
            "{region:?} is torn: its first element says generation {g}, but it holds {data:?}"
        ));
    }
    Ok(g)
}

fn zstd() -> Codec {
    Codec::BytesToBytes(Arc::new(ZstdCodec::new(0, false).unwrap()))
}

fn bytes() -> Codec {
    Codec::ArrayToBytes(Arc::new(BytesCodec::little()))
}

/// The regions every check looks at: the 8×8 chunks of `chunks`, the 4×4
/// inner chunks of `shards`.
fn boxes(edge: u64) -> Vec<Region> {
    (0..SHAPE[0] / edge)
        .flat_map(|i| {
            (0..SHAPE[1] / edge)
                .map(move |j| Region::new(vec![i * edge, j * edge], vec![edge, edge]))
        })
        .collect()
}

/// The scenarios, each a setup (generation 0), a child's endless writer
/// from generation `base` on, and a check after a kill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    /// Whole chunks (zstd + crc32c), the whole array per generation.
    Chunks,
    /// Inner chunks of shards, one partial shard write each.
    Shards,
    /// Attribute updates and resizes of an array's document.
    Metadata,
    /// Attribute updates of three arrays and consolidation of their group.
    Consolidated,
    /// One chunk of 9 MiB, above the remote store's multipart threshold
    /// (8 MiB): each generation fills it with its number.
    Large,
}

/// The shape of the `Large` scenario's array, one chunk of 9 MiB of `u32`.
const LARGE: [u64; 2] = [1536, 1536];

impl Scenario {
    fn parse(name: &str) -> Self {
        match name {
            "chunks" => Self::Chunks,
            "shards" => Self::Shards,
            "metadata" => Self::Metadata,
            "consolidated" => Self::Consolidated,
            "large" => Self::Large,
            _ => panic!("unknown scenario `{name}`"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Chunks => "chunks",
            Self::Shards => "shards",
            Self::Metadata => "metadata",
            Self::Consolidated => "consolidated",
            Self::Large => "large",
        }
    }

    fn setup(self, store: &Arc<dyn Store>) {
        match self {
            Self::Chunks => {
                let array = Array::builder(&SHAPE, DataType::UInt32, &[8, 8])
                    .codecs(vec![
                        bytes(),
                        zstd(),
                        Codec::BytesToBytes(Arc::new(Crc32cCodec::new())),
                    ])
                    .create(Arc::clone(store), "a")
                    .unwrap();
                array
                    .write_region(
                        &Region::whole(&SHAPE),
                        &generation_values(0, &Region::whole(&SHAPE)),
                    )
                    .unwrap();
            }
            Self::Shards => {
                let sharding = ShardingCodec::new(&[4, 4], vec![bytes(), zstd()]);
                let array = Array::builder(&SHAPE, DataType::UInt32, &[16, 16])
                    .codecs(vec![Codec::ArrayToBytes(Arc::new(sharding))])
                    .create(Arc::clone(store), "a")
                    .unwrap();
                array
                    .write_region(
                        &Region::whole(&SHAPE),
                        &generation_values(0, &Region::whole(&SHAPE)),
                    )
                    .unwrap();
            }
            Self::Metadata => {
                let mut array = Array::builder(&SHAPE, DataType::UInt32, &[8, 8])
                    .create(Arc::clone(store), "a")
                    .unwrap();
                array
                    .write_region(
                        &Region::whole(&SHAPE),
                        &generation_values(0, &Region::whole(&SHAPE)),
                    )
                    .unwrap();
                array.set_attributes(attributes(0)).unwrap();
            }
            Self::Consolidated => {
                Group::create(Arc::clone(store), "/", Default::default()).unwrap();
                for name in ["x", "y", "z"] {
                    let mut array = Array::builder(&[4], DataType::UInt8, &[2])
                        .create(Arc::clone(store), name)
                        .unwrap();
                    array.set_attributes(attributes(0)).unwrap();
                }
                zarrkit::consolidate::consolidate(store.as_ref(), "/").unwrap();
            }
            Self::Large => {
                let array = Array::builder(&LARGE, DataType::UInt32, &LARGE)
                    .create(Arc::clone(store), "a")
                    .unwrap();
                array
                    .write_region(&Region::whole(&LARGE), &vec![7u32; 1536 * 1536])
                    .unwrap();
            }
        }
    }

    /// Writes generations `base`, `base + 1`, … until killed (or `limit`).
    fn write(self, store: &Arc<dyn Store>, base: u64, limit: u64) {
        match self {
            Self::Chunks => {
                let array = Array::open(Arc::clone(store), "a").unwrap();
                say_ready();
                for g in base..base + limit {
                    let whole = Region::whole(&SHAPE);
                    array
                        .write_region(&whole, &generation_values(g, &whole))
                        .unwrap();
                }
            }
            Self::Shards => {
                let array = Array::open(Arc::clone(store), "a").unwrap();
                say_ready();
                let inner = boxes(4);
                for g in base..base + limit {
                    // An order that differs between generations.
                    for k in 0..inner.len() {
                        let region = &inner[(k * 5 + g as usize) % inner.len()];
                        array
                            .write_region(region, &generation_values(g, region))
                            .unwrap();
                    }
                }
            }
            Self::Metadata => {
                let mut array = Array::open(Arc::clone(store), "a").unwrap();
                say_ready();
                for g in base..base + limit {
                    array.set_attributes(attributes(g)).unwrap();
                    let rows = if g % 2 == 0 { 40 } else { 32 };
                    array.resize(&[rows, SHAPE[1]]).unwrap();
                }
            }
            Self::Consolidated => {
                let mut arrays: Vec<Array> = ["x", "y", "z"]
                    .iter()
                    .map(|name| Array::open(Arc::clone(store), name).unwrap())
                    .collect();
                say_ready();
                for g in base..base + limit {
                    arrays[(g % 3) as usize]
                        .set_attributes(attributes(g))
                        .unwrap();
                    zarrkit::consolidate::consolidate(store.as_ref(), "/").unwrap();
                }
            }
            Self::Large => {
                let array = Array::open(Arc::clone(store), "a").unwrap();
                say_ready();
                for g in base..base + limit {
                    let value = vec![g as u32; 1536 * 1536];
                    array.write_region(&Region::whole(&LARGE), &value).unwrap();
                }
            }
        }
    }

    /// Checks the store after a kill; returns the generations it found.
    fn check(self, store: &Arc<dyn Store>) -> Result<Vec<u64>, String> {
        let fail = |what: &str, err: &dyn std::fmt::Display| format!("{what}: {err}");
        match self {
            Self::Chunks | Self::Shards => {
                let array = Array::open(Arc::clone(store), "a").map_err(|e| fail("open", &e))?;
                let edge = if self == Self::Chunks { 8 } else { 4 };
                let mut found = Vec::new();
                for region in boxes(edge) {
                    let data = array
                        .read_region::<u32>(&region)
                        .map_err(|e| fail(&format!("read {region:?}"), &e))?;
                    found.push(generation_of(&data, &region)?);
                }
                // And the whole array in one read (whole shards).
                let all = array
                    .read_region::<u32>(&Region::whole(&SHAPE))
                    .map_err(|e| fail("read all", &e))?;
                for region in boxes(edge) {
                    let mut data = Vec::new();
                    for i in region.start()[0]..region.start()[0] + edge {
                        for j in region.start()[1]..region.start()[1] + edge {
                            data.push(all[(i * SHAPE[1] + j) as usize]);
                        }
                    }
                    generation_of(&data, &region)?;
                }
                Ok(found)
            }
            Self::Metadata => {
                let array = Array::open(Arc::clone(store), "a").map_err(|e| fail("open", &e))?;
                let g = generation_in(array.attributes())?;
                let rows = array.shape()[0];
                if array.shape() != [32, 32] && array.shape() != [40, 32] {
                    return Err(format!("shape {:?} was never written", array.shape()));
                }
                // The elements of generation 0 stay; rows past 32 hold the fill value.
                let data = array
                    .read_region::<u32>(&Region::whole(&[rows, 32]))
                    .map_err(|e| fail("read", &e))?;
                let whole = Region::whole(&SHAPE);
                if data[..1024] != generation_values(0, &whole)[..]
                    || data[1024..].iter().any(|&v| v != 0)
                {
                    return Err(format!(
                        "the data changed under resizes (shape {:?})",
                        array.shape()
                    ));
                }
                Ok(vec![g])
            }
            Self::Consolidated => {
                let group = Group::open(Arc::clone(store), "/").map_err(|e| fail("open", &e))?;
                if !group.is_consolidated() {
                    return Err("the consolidated metadata is gone".into());
                }
                let mut found = Vec::new();
                for name in ["x", "y", "z"] {
                    // Through the consolidated metadata, then the document.
                    let node = group.node(name).map_err(|e| fail(name, &e))?;
                    found.push(generation_in(node.attributes())?);
                    let array = Array::open(Arc::clone(store), name).map_err(|e| fail(name, &e))?;
                    found.push(generation_in(array.attributes())?);
                }
                zarrkit::consolidate::check(store.as_ref(), "/").map_err(|e| fail("check", &e))?;
                Ok(found)
            }
            Self::Large => {
                let array = Array::open(Arc::clone(store), "a").map_err(|e| fail("open", &e))?;
                let data = array
                    .read_region::<u32>(&Region::whole(&LARGE))
                    .map_err(|e| fail("read", &e))?;
                let g = data[0];
                if let Some(at) = data.iter().position(|&v| v != g) {
                    return Err(format!(
                        "the large chunk is torn: element 0 is {g}, element {at} is {}",
                        data[at]
                    ));
                }
                Ok(vec![u64::from(g)])
            }
        }
    }
}

/// Attributes of generation `g`: a payload large enough that a torn
/// document would show, each value saying its generation.
fn attributes(g: u64) -> serde_json::Map<String, serde_json::Value> {
    json!({"generation": g, "payload": vec![g; 2000]})
        .as_object()
        .unwrap()
        .clone()
}

fn generation_in(attributes: &serde_json::Map<String, serde_json::Value>) -> Result<u64, String> {
    let g = attributes["generation"].as_u64().ok_or("no generation")?;
    let payload = attributes["payload"].as_array().ok_or("no payload")?;
    if payload.len() != 2000 || payload.iter().any(|v| v.as_u64() != Some(g)) {
        return Err(format!("the attributes of generation {g} are torn"));
    }
    Ok(g)
}

/// The child's side of a scenario test: `<scenario> <base>`.
fn run_child(role: &str, spec: &str) {
    let mut words = role.split(' ');
    let scenario = Scenario::parse(words.next().unwrap());
    let base: u64 = words.next().unwrap().parse().unwrap();
    // A bound, should the parent never kill it.
    scenario.write(&open_spec(spec), base, 100_000);
}

/// Kills a writer of `scenario` `kills` times, each after a random delay
/// below `max_delay` once it is ready, and checks the store after each.
fn kill_writers(
    test: &str,
    scenario: Scenario,
    spec: &str,
    kills: u32,
    max_delay: Duration,
) -> Outcome {
    let store = open_spec(spec);
    scenario.setup(&store);
    let mut rng = Rng::from_env();
    let mut outcome = Outcome::default();
    for kill in 0..kills {
        let base = u64::from(kill + 1) * 100_000;
        let mut child = spawn_child(test, &format!("{} {base}", scenario.name()), spec);
        wait_ready(&mut child);
        let delay = rng.below(max_delay.as_micros() as u64);
        std::thread::sleep(Duration::from_micros(delay));
        if child.try_wait().unwrap().is_some() {
            outcome.finished += 1;
        }
        // `Child::kill` sends SIGKILL on Unix.
        let _ = child.kill();
        let status = child.wait().unwrap();
        assert!(!status.success() || outcome.finished > 0, "{status}");
        outcome.kills += 1;
        match scenario.check(&store) {
            Ok(found) => outcome.generations.extend(found),
            Err(err) => {
                outcome.torn += 1;
                eprintln!("{} kill {kill} (after {delay} µs): {err}", scenario.name());
            }
        }
    }
    eprintln!(
        "{} on {}: {} kills, {} distinct generations found, {} torn, {} finished first",
        scenario.name(),
        spec.split(':').next().unwrap(),
        outcome.kills,
        outcome.generations.len(),
        outcome.torn,
        outcome.finished
    );
    outcome
}

/// The temporary and lock files under `dir`.
fn leftover_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            found.extend(leftover_files(&entry.path()));
        } else if entry.file_name().to_string_lossy().starts_with(".zarrkit-") {
            found.push(entry.path());
        }
    }
    found
}

fn filesystem_scenario(test: &str, scenario: Scenario) {
    if let Some((role, spec)) = child_role() {
        run_child(&role, &spec);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let spec = format!("file:{}", root.display());
    let outcome = kill_writers(test, scenario, &spec, kills(30), Duration::from_millis(40));
    assert_eq!(outcome.torn, 0, "{outcome:?}");
    assert!(
        outcome.generations.len() > 1,
        "no kill fell after a write: {outcome:?}"
    );

    // Temporary files are never listed as keys; the cleanup removes them.
    let store = FilesystemStore::open_existing(&root).unwrap();
    let keys = store.list().unwrap();
    assert!(
        keys.iter().all(|k| !k.as_str().contains(".zarrkit")),
        "{keys:?}"
    );
    let left = leftover_files(&root);
    eprintln!(
        "{}: {} temporary or lock files left by the kills",
        scenario.name(),
        left.len()
    );
    assert_eq!(store.remove_leftover_files().unwrap(), left.len() as u64);
    assert_eq!(leftover_files(&root), Vec::<PathBuf>::new());
    assert_eq!(store.list().unwrap(), keys);
    scenario
        .check(&(Arc::new(store) as Arc<dyn Store>))
        .unwrap();
}

#[test]
fn killed_chunk_writers_on_the_filesystem_leave_old_or_new_chunks() {
    filesystem_scenario(
        "crash::killed_chunk_writers_on_the_filesystem_leave_old_or_new_chunks",
        Scenario::Chunks,
    );
}

#[test]
fn killed_partial_shard_writers_on_the_filesystem_leave_old_or_new_inner_chunks() {
    filesystem_scenario(
        "crash::killed_partial_shard_writers_on_the_filesystem_leave_old_or_new_inner_chunks",
        Scenario::Shards,
    );
}

#[test]
fn killed_metadata_writers_on_the_filesystem_leave_old_or_new_documents() {
    filesystem_scenario(
        "crash::killed_metadata_writers_on_the_filesystem_leave_old_or_new_documents",
        Scenario::Metadata,
    );
}

#[test]
fn killed_consolidation_on_the_filesystem_leaves_old_or_new_consolidated_metadata() {
    filesystem_scenario(
        "crash::killed_consolidation_on_the_filesystem_leaves_old_or_new_consolidated_metadata",
        Scenario::Consolidated,
    );
}

/// The shape of the migration tests' array.
const MIGRATED: [u64; 2] = [128, 128];

/// The source of the migration tests: a v2 array of 256 chunks.
fn migration_source(root: &Path) -> Vec<i32> {
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(root).unwrap());
    let array = Array::builder(&MIGRATED, DataType::Int32, &[8, 8])
        .format(ZarrFormat::V2)
        .create(store, "/")
        .unwrap();
    let data: Vec<i32> = (0..128 * 128).map(|i| i * 31 - 7).collect();
    array
        .write_region(&Region::whole(&MIGRATED), &data)
        .unwrap();
    data
}

/// The child of a migration test: migrates `<source dir>` to the store,
/// resuming what an earlier child began.
fn migrate_child(role: &str, spec: &str) {
    let source = role.strip_prefix("migrate ").unwrap();
    let src: Arc<dyn Store> = Arc::new(FilesystemStore::open_existing(source).unwrap());
    let plan = zarrkit::migrate::plan(src, open_spec(spec), ZarrFormat::V3).unwrap();
    say_ready();
    zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
}

/// Kills migrations part way, checking after each that the destination is
/// refused as unfinished (or is the finished copy), then resumes.
fn kill_migrations(test: &str, spec: &str, kills: u32, max_delay: Duration) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    let data = migration_source(&source);
    let dst = open_spec(spec);
    let mut rng = Rng::from_env();
    let mut outcome = Outcome::default();
    let check_finished = |dst: &Arc<dyn Store>| {
        let array = Array::open(Arc::clone(dst), "/").unwrap();
        assert_eq!(array.format(), ZarrFormat::V3);
        assert_eq!(
            array.read_region::<i32>(&Region::whole(&MIGRATED)).unwrap(),
            data
        );
    };
    let restart = |dst: &Arc<dyn Store>| {
        dst.erase_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap();
    };
    for kill in 0..kills {
        let mut child = spawn_child(test, &format!("migrate {}", source.display()), spec);
        wait_ready(&mut child);
        std::thread::sleep(Duration::from_micros(
            rng.below(max_delay.as_micros() as u64),
        ));
        let _ = child.kill();
        let status = child.wait().unwrap();
        outcome.kills += 1;
        if status.success() {
            // It finished before the kill: the copy is whole; start over.
            outcome.finished += 1;
            check_finished(&dst);
            restart(&dst);
            continue;
        }
        // Killed: refused as unfinished by `check_finished` (which the
        // `zarrkit` commands run before opening; `Array::open` does not
        // look for the marker, as documented), or killed after it
        // finished, when the copy is whole.
        match zarrkit::migrate::check_finished(dst.as_ref()) {
            Err(zarrkit::Error::UnfinishedMigration { .. }) => {
                outcome.generations.insert(u64::from(kill));
                continue;
            }
            Err(err) => panic!("kill {kill}: {err}"),
            Ok(()) => {}
        }
        let read = Array::open(Arc::clone(&dst), "/")
            .and_then(|array| array.read_region::<i32>(&Region::whole(&MIGRATED)));
        match read {
            // Nothing written yet (the marker goes first, so only before it).
            Err(zarrkit::Error::NodeNotFound { .. }) if dst.list().unwrap().is_empty() => {}
            Ok(read) if read == data => {
                outcome.finished += 1;
                restart(&dst);
            }
            Ok(_) => {
                outcome.torn += 1;
                eprintln!("kill {kill}: a migration passed as finished reads other values");
            }
            Err(err) => {
                outcome.torn += 1;
                eprintln!("kill {kill}: {err}");
            }
        }
    }
    // The last resume, in this process, to the end.
    let src: Arc<dyn Store> = Arc::new(FilesystemStore::open_existing(&source).unwrap());
    let plan = zarrkit::migrate::plan(src, Arc::clone(&dst), ZarrFormat::V3).unwrap();
    zarrkit::migrate::migrate(&plan, &mut |_| {}).unwrap();
    check_finished(&dst);
    eprintln!(
        "migrate to {}: {} kills, {} left it unfinished (refused on open), {} came after it finished, {} wrong",
        spec.split(':').next().unwrap(),
        outcome.kills,
        outcome.generations.len(),
        outcome.finished,
        outcome.torn
    );
    outcome
}

#[test]
fn a_migration_killed_on_the_filesystem_is_refused_then_resumes_to_the_right_result() {
    const TEST: &str =
        "crash::a_migration_killed_on_the_filesystem_is_refused_then_resumes_to_the_right_result";
    if let Some((role, spec)) = child_role() {
        migrate_child(&role, &spec);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("dst");
    let spec = format!("file:{}", root.display());
    let outcome = kill_migrations(TEST, &spec, kills(25), Duration::from_millis(30));
    assert_eq!(outcome.torn, 0, "{outcome:?}");
    assert!(
        !outcome.generations.is_empty(),
        "no kill fell mid-migration: {outcome:?}"
    );
    let store = FilesystemStore::open_existing(&root).unwrap();
    assert!(
        store
            .list()
            .unwrap()
            .iter()
            .all(|k| !k.as_str().contains(".zarrkit"))
    );
    store.remove_leftover_files().unwrap();
    assert_eq!(leftover_files(&root), Vec::<PathBuf>::new());
}

#[cfg(feature = "s3")]
mod s3 {
    use super::*;

    fn s3_scenario(test: &str, scenario: Scenario) {
        if let Some((role, spec)) = child_role() {
            run_child(&role, &spec);
            return;
        }
        let Some((_, url)) = crate::remote::s3_store("ZARRKIT_S3_ENDPOINT", "crash") else {
            return;
        };
        let spec = format!("s3:{url}");
        let start = Instant::now();
        let outcome = kill_writers(test, scenario, &spec, kills(12), Duration::from_millis(250));
        eprintln!("{} on S3 took {:?}", scenario.name(), start.elapsed());
        assert_eq!(outcome.torn, 0, "{outcome:?}");
        assert!(
            outcome.generations.len() > 1,
            "no kill fell after a write: {outcome:?}"
        );
        open_spec(&spec)
            .erase_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap();
    }

    #[test]
    fn killed_chunk_writers_on_s3_leave_old_or_new_chunks() {
        s3_scenario(
            "crash::s3::killed_chunk_writers_on_s3_leave_old_or_new_chunks",
            Scenario::Chunks,
        );
    }

    #[test]
    fn killed_partial_shard_writers_on_s3_leave_old_or_new_inner_chunks() {
        s3_scenario(
            "crash::s3::killed_partial_shard_writers_on_s3_leave_old_or_new_inner_chunks",
            Scenario::Shards,
        );
    }

    #[test]
    fn killed_metadata_writers_on_s3_leave_old_or_new_documents() {
        s3_scenario(
            "crash::s3::killed_metadata_writers_on_s3_leave_old_or_new_documents",
            Scenario::Metadata,
        );
    }

    #[test]
    fn killed_consolidation_on_s3_leaves_old_or_new_consolidated_metadata() {
        s3_scenario(
            "crash::s3::killed_consolidation_on_s3_leaves_old_or_new_consolidated_metadata",
            Scenario::Consolidated,
        );
    }

    // A 9 MiB chunk goes up as a multipart upload: a killed upload leaves
    // the old object (an unfinished upload is no object).
    #[test]
    fn killed_multipart_uploads_on_s3_leave_old_or_new_chunks() {
        const TEST: &str = "crash::s3::killed_multipart_uploads_on_s3_leave_old_or_new_chunks";
        if let Some((role, spec)) = child_role() {
            run_child(&role, &spec);
            return;
        }
        let Some((_, url)) = crate::remote::s3_store("ZARRKIT_S3_ENDPOINT", "crash-large") else {
            return;
        };
        let spec = format!("s3:{url}");
        let outcome = kill_writers(
            TEST,
            Scenario::Large,
            &spec,
            kills(8),
            Duration::from_millis(1500),
        );
        assert_eq!(outcome.torn, 0, "{outcome:?}");
        assert!(
            outcome.generations.len() > 1,
            "no kill fell after a write: {outcome:?}"
        );
        open_spec(&spec)
            .erase_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap();
    }

    #[test]
    fn a_migration_killed_on_s3_is_refused_then_resumes_to_the_right_result() {
        const TEST: &str =
            "crash::s3::a_migration_killed_on_s3_is_refused_then_resumes_to_the_right_result";
        if let Some((role, spec)) = child_role() {
            migrate_child(&role, &spec);
            return;
        }
        let Some((_, url)) = crate::remote::s3_store("ZARRKIT_S3_ENDPOINT", "crash-migrate") else {
            return;
        };
        let spec = format!("s3:{url}");
        let outcome = kill_migrations(TEST, &spec, kills(10), Duration::from_millis(400));
        assert_eq!(outcome.torn, 0, "{outcome:?}");
        assert!(
            !outcome.generations.is_empty(),
            "no kill fell mid-migration: {outcome:?}"
        );
        open_spec(&spec)
            .erase_prefix(&zarrkit::store::StorePrefix::root())
            .unwrap();
    }
}
