use image::{DynamicImage, ImageFormat};

use super::*;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");

/// The fixtures `tests/corpus/jpeg-arithmetic/make.sh` makes: `<name>.ari.jpg` and its
/// `jpegtran -optimize` twin `<name>.huffman.jpg`.
const FIXTURES: [&str; 10] = [
    "peacock-420",
    "peacock-1x3",
    "peacock-422-progressive",
    "peacock-420-restart",
    "peacock-420-progressive-restart",
    "peacock-420-per-component",
    "grey-2x2",
    "grey-progressive",
    "cmyk",
    "cmyk-progressive",
];

fn read(path: &str) -> Vec<u8> {
    std::fs::read(format!("{CORPUS}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every arithmetic file with its Huffman twin, testimgari.jpg (with a DAC segment) among them.
fn pairs() -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let mut pairs: Vec<_> = FIXTURES
        .iter()
        .map(|name| {
            let dir = "jpeg-arithmetic";
            (name.to_string(), read(&format!("{dir}/{name}.ari.jpg")), read(&format!("{dir}/{name}.huffman.jpg")))
        })
        .collect();
    pairs.push((
        "testimgari".into(),
        read("conformance/jpeg/testimgari.jpg"),
        read("jpeg-arithmetic/testimgari.huffman.jpg"),
    ));
    pairs
}

fn decoded(bytes: &[u8]) -> DynamicImage {
    image::load_from_memory_with_format(bytes, ImageFormat::Jpeg).expect("decodes")
}

fn transcoded(bytes: &[u8]) -> Vec<u8> {
    to_huffman(bytes).expect("transcodes").expect("is arithmetic-coded")
}

/// The entropy-coded data of a sequential file's scans, and their headers.
fn scans(jpeg: &[u8]) -> Vec<u8> {
    let at = jpeg.windows(2).position(|w| w == [0xFF, 0xDA]).expect("a scan");
    jpeg[at..].to_vec()
}

#[test]
fn transcoded_files_decode_to_the_pixels_of_jpegtrans_huffman_twins() {
    for (name, ari, twin) in pairs() {
        let ours = decoded(&transcoded(&ari));
        let theirs = decoded(&twin);
        assert_eq!(ours.color(), theirs.color(), "{name}");
        assert_eq!((ours.width(), ours.height()), (theirs.width(), theirs.height()), "{name}");
        assert!(ours.as_bytes() == theirs.as_bytes(), "{name}: the pixels differ");
    }
}

#[test]
fn sequential_files_transcode_to_jpegtrans_scan_bytes() {
    // jpegtran -optimize writes a sequential input as one scan with libjpeg's optimal tables,
    // which this module computes the same way: the same coefficients give the same bytes. (It
    // keeps no restart interval, the scan layout of a per-component input, and gives CMYK's four
    // components one set of tables where this module gives the first its own.)
    for (name, ari, twin) in pairs() {
        let skip = ["per-component", "restart", "cmyk"].iter().any(|s| name.ends_with(s));
        if skip || ari.windows(2).any(|w| w == [0xFF, 0xCA]) {
            continue;
        }
        let ours = transcoded(&ari);
        assert!(scans(&ours) == scans(&twin), "{name}: the scans differ from jpegtran's");
    }
}

#[test]
fn transcoded_files_are_sequential_huffman_with_the_input_segments() {
    let ari = read("jpeg-arithmetic/peacock-420-restart.ari.jpg");
    let ours = transcoded(&ari);
    assert_eq!(&ours[..2], &[0xFF, 0xD8]);
    assert!(ours.ends_with(&[0xFF, 0xD9]));
    assert!(ours.windows(2).any(|w| w == [0xFF, 0xC0]), "baseline");
    assert!(!ours.windows(2).any(|w| w == [0xFF, 0xC9] || w == [0xFF, 0xCC]), "no arithmetic frame or DAC");
    // The restart interval (a row of 7 MCUs) is kept, and a restart marker follows each of the
    // five rows but the last.
    assert!(ours.windows(4).any(|w| w == [0xFF, 0xDD, 0, 4]));
    let restarts: Vec<u8> =
        ours.windows(2).filter(|w| w[0] == 0xFF && (0xD0..=0xD7).contains(&w[1])).map(|w| w[1]).collect();
    assert_eq!(restarts, [0xD0, 0xD1, 0xD2, 0xD3]);
    // The JFIF APP0 and the quantisation tables come across in order, ahead of the frame.
    let app0 = ours.windows(2).position(|w| w == [0xFF, 0xE0]).expect("JFIF");
    let dqt = ours.windows(2).position(|w| w == [0xFF, 0xDB]).expect("DQT");
    let sof = ours.windows(2).position(|w| w == [0xFF, 0xC0]).expect("SOF0");
    assert!(app0 == 2 && dqt < sof);
}

#[test]
fn a_huffman_jpeg_is_not_transcoded() {
    for path in [
        "conformance/jpeg/peacock.default.jpeg",
        "conformance/jpeg/peacock.progressive.jpeg",
        "conformance/jpeg/testimgint.jpg",
        "jpeg-arithmetic/testimgari.huffman.jpg",
    ] {
        assert_eq!(to_huffman(&read(path)), Ok(None), "{path}");
    }
    assert_eq!(to_huffman(b"\xFF\xD8"), Ok(None));
    assert_eq!(to_huffman(b""), Ok(None));
}

#[test]
fn cut_and_flipped_files_never_panic() {
    for (name, ari, _) in pairs() {
        for len in (0..ari.len()).step_by(97) {
            let _ = to_huffman(&ari[..len]);
        }
        for at in (0..ari.len()).step_by(7) {
            for bit in [0x01, 0x10, 0x80] {
                let mut flipped = ari.clone();
                flipped[at] ^= bit;
                if let Ok(Some(made)) = to_huffman(&flipped) {
                    assert!(made.ends_with(&[0xFF, 0xD9]), "{name} flipped at {at}");
                }
            }
        }
    }
}

#[test]
fn a_file_cut_inside_its_scan_is_refused_as_truncated() {
    let ari = read("jpeg-arithmetic/peacock-420.ari.jpg");
    let cut = &ari[..ari.len() - 300];
    let why = to_huffman(cut).expect_err("refused").0;
    assert!(why.contains("arithmetic-coded JPEG") && why.contains("truncated"), "{why}");
}

#[test]
fn a_marker_inside_the_data_reads_as_zeros_to_the_end_of_the_scan() {
    // EOI early in the scan: libjpeg decodes zero bits to the end and shows the file. What
    // zeros decode to may lie outside what Huffman coding holds (libjpeg clamps the pixels): that
    // is refused in words.
    let ari = read("jpeg-arithmetic/peacock-420.ari.jpg");
    let sos = ari.windows(2).position(|w| w == [0xFF, 0xDA]).expect("a scan");
    let whole = decoded(&transcoded(&ari));
    let mut shown = 0;
    for cut in (sos + 14..ari.len() - 2).step_by(50) {
        let mut early = ari[..cut].to_vec();
        early.extend_from_slice(&[0xFF, 0xD9]);
        match to_huffman(&early) {
            Ok(made) => {
                let part = decoded(&made.expect("arithmetic"));
                assert_eq!((part.width(), part.height()), (whole.width(), whole.height()));
                assert!(part.as_bytes() != whole.as_bytes(), "cut at {cut}");
                shown += 1;
            }
            Err(Broken(why)) => assert!(why.contains("out of 8-bit range"), "cut at {cut}: {why}"),
        }
    }
    assert!(shown > 20, "{shown}");
}

/// An SOF9 frame of `width` by `height` with one component, a scan and EOI.
fn arithmetic_frame(width: u16, height: u16) -> Vec<u8> {
    let mut jpeg = vec![0xFF, 0xD8];
    push_segment(&mut jpeg, 0xDB, &[&[0u8][..], &[1; 64]].concat());
    let mut sof = vec![8];
    sof.extend_from_slice(&height.to_be_bytes());
    sof.extend_from_slice(&width.to_be_bytes());
    sof.extend_from_slice(&[1, 1, 0x11, 0]);
    push_segment(&mut jpeg, 0xC9, &sof);
    push_segment(&mut jpeg, 0xDA, &[1, 1, 0x00, 0, 63, 0]);
    jpeg.extend_from_slice(&[0, 0, 0xFF, 0xD9]);
    jpeg
}

#[test]
fn a_frame_over_the_pixel_limit_is_refused_in_words() {
    let why = to_huffman(&arithmetic_frame(30_000, 30_000)).expect_err("refused").0;
    assert!(why.contains("30000x30000") && why.contains("over the limit"), "{why}");
    let made = transcoded(&arithmetic_frame(16, 8));
    assert_eq!((decoded(&made).width(), decoded(&made).height()), (16, 8));
}

#[test]
fn bad_conditioning_and_progressions_are_refused_in_words() {
    let mut dac = arithmetic_frame(8, 8);
    let at = dac.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap();
    dac.splice(at..at, [0xFF, 0xCC, 0, 4, 0, 0x12]); // L=2 > U=1
    assert!(to_huffman(&dac).expect_err("refused").0.contains("DAC"));
    let mut progressive = arithmetic_frame(8, 8);
    let at = progressive.windows(2).position(|w| w == [0xFF, 0xC9]).unwrap();
    progressive[at + 1] = 0xCA;
    let sos = progressive.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap();
    // Ss=0 with Se=63 is no progressive scan.
    assert!(to_huffman(&progressive).expect_err("refused").0.contains("progressive scan"));
    progressive[sos + 8] = 0; // Se=0: a DC scan
    assert!(to_huffman(&progressive).expect("transcodes").is_some());
}

#[test]
fn optimal_tables_keep_codes_within_16_bits() {
    // Frequencies that grow as Fibonacci numbers make a Huffman code as deep as there are
    // symbols; the limit folds it to 16 bits and the reserved all-ones code stays out.
    let mut freq = [0u64; 257];
    let (mut a, mut b) = (1u64, 1u64);
    for f in freq.iter_mut().take(40) {
        *f = a;
        (a, b) = (b, a + b);
    }
    let table = optimal_table(&freq);
    assert_eq!(table.symbols.len(), 40);
    assert_eq!(table.counts.iter().map(|&c| usize::from(c)).sum::<usize>(), 40);
    let codes = codes(&table);
    assert!(codes.iter().take(40).all(|&(code, len)| (1..=16).contains(&len) && code != (1 << len) - 1));
}
