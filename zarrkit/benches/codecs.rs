//! Codec throughput: `cargo bench -p zarrkit --bench codecs`.

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use zarrkit::codec::bytes::{BytesCodec, Endian};
use zarrkit::codec::{ArrayToBytesCodec, BytesToBytesCodec, ChunkRepr};
use zarrkit::metadata::{DataType, FillValue};

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [4 << 10, 64 << 10, 1 << 20];

/// Compressible but not trivial: slowly varying little-endian f32 values
/// with noise in the low bits, like many scientific arrays.
fn sample_bytes(len: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..len / 4)
        .flat_map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let value = (i as f32 / 64.0).sin() * 100.0 + (state % 16) as f32 / 64.0;
            value.to_le_bytes()
        })
        .collect()
}

fn float32_repr(shape: &[u64]) -> ChunkRepr {
    ChunkRepr {
        shape: shape.to_vec(),
        data_type: DataType::Float32,
        fill_value: FillValue::zero(&DataType::Float32),
    }
}

// Unused only in builds without any bytes-to-bytes codec.
#[cfg_attr(
    not(any(
        feature = "gzip",
        feature = "zstd",
        feature = "blosc",
        feature = "crc32c"
    )),
    allow(dead_code)
)]
fn bench_encode(bencher: Bencher, codec: &dyn BytesToBytesCodec, len: usize) {
    let data = sample_bytes(len);
    bencher
        .counter(BytesCount::new(len))
        .with_inputs(|| data.clone())
        .bench_values(|data| codec.encode(black_box(data)).unwrap());
}

#[cfg_attr(
    not(any(
        feature = "gzip",
        feature = "zstd",
        feature = "blosc",
        feature = "crc32c"
    )),
    allow(dead_code)
)]
fn bench_decode(bencher: Bencher, codec: &dyn BytesToBytesCodec, len: usize) {
    let encoded = codec.encode(sample_bytes(len)).unwrap();
    bencher
        .counter(BytesCount::new(len))
        .with_inputs(|| encoded.clone())
        .bench_values(|encoded| codec.decode(black_box(encoded), Some(len)).unwrap());
}

#[cfg(feature = "gzip")]
mod gzip {
    use super::*;
    use zarrkit::codec::gzip::GzipCodec;

    #[divan::bench(args = SIZES)]
    fn encode(bencher: Bencher, len: usize) {
        bench_encode(bencher, &GzipCodec::new(5).unwrap(), len);
    }

    #[divan::bench(args = SIZES)]
    fn decode(bencher: Bencher, len: usize) {
        bench_decode(bencher, &GzipCodec::new(5).unwrap(), len);
    }
}

#[cfg(feature = "zstd")]
mod zstd {
    use super::*;
    use zarrkit::codec::zstd::ZstdCodec;

    #[divan::bench(args = SIZES)]
    fn encode(bencher: Bencher, len: usize) {
        bench_encode(bencher, &ZstdCodec::new(3, false).unwrap(), len);
    }

    #[divan::bench(args = SIZES)]
    fn decode(bencher: Bencher, len: usize) {
        bench_decode(bencher, &ZstdCodec::new(3, false).unwrap(), len);
    }

    #[divan::bench(args = SIZES)]
    fn decode_with_checksum(bencher: Bencher, len: usize) {
        bench_decode(bencher, &ZstdCodec::new(3, true).unwrap(), len);
    }
}

#[cfg(feature = "blosc")]
mod blosc {
    use super::*;
    use zarrkit::codec::blosc::{BloscCodec, BloscCompressor, BloscShuffle};

    fn codec(cname: BloscCompressor) -> BloscCodec {
        BloscCodec::new(cname, 5, BloscShuffle::Shuffle, Some(4), 0).unwrap()
    }

    #[divan::bench(args = SIZES)]
    fn lz4_encode(bencher: Bencher, len: usize) {
        bench_encode(bencher, &codec(BloscCompressor::Lz4), len);
    }

    #[divan::bench(args = SIZES)]
    fn lz4_decode(bencher: Bencher, len: usize) {
        bench_decode(bencher, &codec(BloscCompressor::Lz4), len);
    }

    #[divan::bench(args = SIZES)]
    fn zstd_encode(bencher: Bencher, len: usize) {
        bench_encode(bencher, &codec(BloscCompressor::Zstd), len);
    }

    #[divan::bench(args = SIZES)]
    fn zstd_decode(bencher: Bencher, len: usize) {
        bench_decode(bencher, &codec(BloscCompressor::Zstd), len);
    }
}

#[cfg(feature = "crc32c")]
mod crc32c {
    use super::*;
    use zarrkit::codec::crc32c::Crc32cCodec;

    #[divan::bench(args = SIZES)]
    fn encode(bencher: Bencher, len: usize) {
        bench_encode(bencher, &Crc32cCodec::new(), len);
    }

    #[divan::bench(args = SIZES)]
    fn decode(bencher: Bencher, len: usize) {
        bench_decode(bencher, &Crc32cCodec::new(), len);
    }
}

mod transpose {
    use super::*;
    use zarrkit::codec::ArrayToArrayCodec;
    use zarrkit::codec::transpose::TransposeCodec;

    /// Float32 chunks of 4 KiB, 64 KiB and 1 MiB.
    const SHAPES_2D: [[u64; 2]; 3] = [[32, 32], [128, 128], [512, 512]];

    fn bench(bencher: Bencher, order: Vec<usize>, shape: &[u64]) {
        let codec = TransposeCodec::new(order).unwrap();
        let repr = float32_repr(shape);
        let len = repr.size_bytes().unwrap();
        let data = sample_bytes(len);
        bencher
            .counter(BytesCount::new(len))
            .with_inputs(|| data.clone())
            .bench_values(|data| codec.encode(black_box(data).into(), &repr).unwrap());
    }

    #[divan::bench(args = SHAPES_2D)]
    fn swap_2d(bencher: Bencher, shape: [u64; 2]) {
        bench(bencher, vec![1, 0], &shape);
    }

    /// Keeps the last axis, so whole rows are copied.
    #[divan::bench(args = [[4u64, 16, 16], [16, 32, 32], [64, 64, 64]])]
    fn outer_3d(bencher: Bencher, shape: [u64; 3]) {
        bench(bencher, vec![1, 0, 2], &shape);
    }

    #[divan::bench(args = [[4u64, 16, 16], [16, 32, 32], [64, 64, 64]])]
    fn reverse_3d(bencher: Bencher, shape: [u64; 3]) {
        bench(bencher, vec![2, 1, 0], &shape);
    }
}

mod bytes {
    use super::*;

    #[divan::bench(args = SIZES)]
    fn big_endian_encode(bencher: Bencher, len: usize) {
        let codec = BytesCodec::new(Some(Endian::Big));
        let repr = float32_repr(&[len as u64 / 4]);
        let data = sample_bytes(len);
        bencher
            .counter(BytesCount::new(len))
            .with_inputs(|| data.clone())
            .bench_values(|data| {
                ArrayToBytesCodec::encode(&codec, black_box(data).into(), &repr).unwrap()
            });
    }
}
