//! Admits one file N times natively (default options) and prints the median wall time of a call,
//! and of the canonical re-mux alone: the native figures of BENCHMARKS.md's planar JPEG fit, run
//! on this commit and on the one before the change.
//!
//!     cargo build --release --locked -p mediagate-guest --example admit_timed
//!     target/release/examples/admit_timed tests/corpus/bench/photo-12mp.jpg image/jpeg 9

use std::time::{Duration, Instant};

fn median(n: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[n / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(file), Some(mime)) = (args.next(), args.next()) else { panic!("usage: admit_timed FILE MIME [N]") };
    let n: usize = args.next().map_or(9, |n| n.parse().expect("N is a number")).max(1);
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let t = mediagate_guest::signature::ImageType::from_mime(&mime).expect("an image type the gate knows");
    let options = mediagate_guest::Options::default();
    let mut out = 0;
    let admit = median(n, || {
        let admitted = mediagate_guest::admit_image(&bytes, &mime, &options).expect("admitted");
        out = admitted.bytes(&bytes).len();
    });
    let remux = median(n, || {
        mediagate_guest::remux::canonical(&bytes, t, false).expect("re-muxed");
    });
    println!(
        "{file}: admit {:.1} ms ({out} bytes out), the re-mux alone {:.1} ms (medians of {n})",
        ms(admit),
        ms(remux)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
