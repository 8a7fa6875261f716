//! Writes the small sample store shipped at `testdata/sample.zarr`.
//!
//! ```text
//! cargo run -p zarrkit --example make_sample -- testdata/sample.zarr
//! ```
//!
//! The store is a Zarr v3 hierarchy with one compressor of each kind:
//!
//! ```text
//! /
//! ├── labels [36, 72] uint8 chunks [18, 36]              (blosc)
//! └── weather/
//!     ├── elevation [36, 72] int16 chunks [18, 36]       (gzip)
//!     └── temperature [24, 36, 72] float32 chunks [6, 12, 24] (zstd)
//! ```
//!
//! Every value is computed from its coordinates, so running the program
//! again writes the same bytes. An existing store at the destination is
//! replaced; any other existing directory is left alone.

use std::f64::consts::PI;
use std::path::Path;
use std::sync::Arc;
use zarrkit::metadata::{DataType, ExtensionObject, JsonMap};
use zarrkit::store::{FilesystemStore, Store};
use zarrkit::{Array, Group, Region};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(dest) = std::env::args_os().nth(1) else {
        return Err("usage: make_sample DEST (for example testdata/sample.zarr)".into());
    };
    let dest = Path::new(&dest);
    if dest.exists() {
        if !dest.join("zarr.json").is_file() {
            return Err(format!(
                "`{}` exists and is not a Zarr store; not replacing it",
                dest.display()
            )
            .into());
        }
        std::fs::remove_dir_all(dest)?;
    }
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dest)?);

    Group::create(
        Arc::clone(&store),
        "/",
        attributes(serde_json::json!({
            "title": "zarrkit sample store",
            "description": "A small synthetic Zarr v3 hierarchy for trying the zarrkit CLI.",
            "created_by": "zarrkit/examples/make_sample.rs"
        })),
    )?;
    Group::create(
        Arc::clone(&store),
        "/weather",
        attributes(serde_json::json!({
            "source": "synthetic",
            "grid": "5 degree regular latitude/longitude, 24 hourly steps"
        })),
    )?;

    let (lat, lon) = (36u64, 72u64);
    let lat_deg = |i: u64| -87.5 + 5.0 * i as f64;
    let lon_deg = |j: u64| -177.5 + 5.0 * j as f64;
    // Elevation in metres: two smooth "continents" over a sea floor.
    let elevation = |i: u64, j: u64| -> i16 {
        let (y, x) = (lat_deg(i).to_radians(), lon_deg(j).to_radians());
        let hills = 2500.0 * (2.0 * x).sin() * y.cos().powi(2) + 900.0 * (3.0 * y + x).cos();
        (hills - 400.0).round().clamp(-6000.0, 6000.0) as i16
    };

    let temperature = Array::builder(&[24, lat, lon], DataType::Float32, &[6, 12, 24])
        .codecs_metadata(vec![
            codec("bytes", serde_json::json!({ "endian": "little" })),
            codec("zstd", serde_json::json!({ "level": 9, "checksum": false })),
        ])
        .fill_value(f32::NAN)
        .dimension_names(["time", "lat", "lon"])
        .attributes(attributes(serde_json::json!({
            "units": "degC",
            "long_name": "air temperature at 2 m"
        })))
        .create(Arc::clone(&store), "/weather/temperature")?;
    let mut values = Vec::with_capacity((24 * lat * lon) as usize);
    for t in 0..24u64 {
        let hour = 2.0 * PI * t as f64 / 24.0;
        for i in 0..lat {
            for j in 0..lon {
                let base = 30.0 * lat_deg(i).to_radians().cos() - 5.0;
                let daily = 6.0 * (hour + lon_deg(j).to_radians()).sin();
                let lapse = -0.0065 * f64::from(elevation(i, j).max(0));
                // Quarter degrees: realistic precision, and it compresses well.
                values.push(((base + daily + lapse) * 4.0).round() as f32 / 4.0);
            }
        }
    }
    temperature.write_region(&Region::whole(temperature.shape()), &values)?;

    let elevation_array = Array::builder(&[lat, lon], DataType::Int16, &[18, 36])
        .codecs_metadata(vec![
            codec("bytes", serde_json::json!({ "endian": "little" })),
            codec("gzip", serde_json::json!({ "level": 6 })),
        ])
        .dimension_names(["lat", "lon"])
        .attributes(attributes(serde_json::json!({ "units": "m" })))
        .create(Arc::clone(&store), "/weather/elevation")?;
    let heights: Vec<i16> = (0..lat)
        .flat_map(|i| (0..lon).map(move |j| elevation(i, j)))
        .collect();
    elevation_array.write_region(&Region::whole(elevation_array.shape()), &heights)?;

    let classes = ["sea", "coast", "land", "mountain"];
    let labels = Array::builder(&[lat, lon], DataType::UInt8, &[18, 36])
        .codecs_metadata(vec![
            codec("bytes", serde_json::json!({})),
            codec(
                "blosc",
                serde_json::json!({
                    "cname": "lz4",
                    "clevel": 5,
                    "shuffle": "noshuffle",
                    "typesize": 1,
                    "blocksize": 0
                }),
            ),
        ])
        .dimension_names(["lat", "lon"])
        .attributes(attributes(serde_json::json!({ "classes": classes })))
        .create(Arc::clone(&store), "/labels")?;
    let label_values: Vec<u8> = heights
        .iter()
        .map(|&h| match h {
            ..-200 => 0,
            -200..=0 => 1,
            1..=1500 => 2,
            _ => 3,
        })
        .collect();
    labels.write_region(&Region::whole(labels.shape()), &label_values)?;

    println!("wrote {}", dest.display());
    Ok(())
}

fn attributes(value: serde_json::Value) -> JsonMap {
    match value {
        serde_json::Value::Object(map) => map,
        _ => JsonMap::new(),
    }
}

fn codec(name: &str, configuration: serde_json::Value) -> ExtensionObject {
    ExtensionObject::with_configuration(name, attributes(configuration))
}
