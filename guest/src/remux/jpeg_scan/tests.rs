//! The walk against JPEGs made here: whole ones (baseline, restart intervals, progressive) walk
//! clean and come out unchanged; the damage libjpeg-turbo warns about is found.

use image::{DynamicImage, RgbImage};

use crate::remux::{Canonical, canonical};
use crate::signature::ImageType;

fn photo_like(w: u32, h: u32) -> RgbImage {
    // Texture in every block, so the AC codes run long and the scans carry real data.
    RgbImage::from_fn(w, h, |x, y| {
        let v = (x * 7 + y * 13) ^ (x * y / 3);
        image::Rgb([(v % 251) as u8, ((v / 3) % 241) as u8, ((x + 2 * y) % 256) as u8])
    })
}

fn encoded(w: u32, h: u32, setup: impl FnOnce(&mut jpeg_encoder::Encoder<&mut Vec<u8>>)) -> Vec<u8> {
    let img = photo_like(w, h);
    let mut out = Vec::new();
    let mut encoder = jpeg_encoder::Encoder::new(&mut out, 85);
    setup(&mut encoder);
    encoder.encode(img.as_raw(), w as u16, h as u16, jpeg_encoder::ColorType::Rgb).unwrap();
    out
}

fn whole_files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("baseline 4:2:0", encoded(67, 45, |e| e.set_sampling_factor(jpeg_encoder::SamplingFactor::F_2_2))),
        ("baseline 4:4:4", encoded(40, 33, |_| {})),
        ("restart every 3 MCUs", encoded(70, 50, |e| e.set_restart_interval(3))),
        ("progressive", encoded(67, 45, |e| e.set_progressive(true))),
        (
            "progressive with restarts",
            encoded(67, 45, |e| {
                e.set_progressive(true);
                e.set_restart_interval(2)
            }),
        ),
        ("image crate", crate::test_images::encode(&crate::test_images::gradient(64, 48), image::ImageFormat::Jpeg)),
    ]
}

/// The index of the EOI that ends the file.
fn eoi(jpeg: &[u8]) -> usize {
    jpeg.len() - 2
}

#[test]
fn whole_jpegs_walk_clean_and_stay_unchanged() {
    for (name, jpeg) in whole_files() {
        let c = canonical(&jpeg, ImageType::Jpeg, false).unwrap_or_else(|e| panic!("{name}: {}", e.0));
        assert_eq!(c, Canonical::default(), "{name}");
    }
}

#[test]
fn the_benchmark_photo_walks_clean() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/bench/photo-12mp.jpg");
    let jpeg = std::fs::read(path).expect("tests/corpus/bench/photo-12mp.jpg");
    let c = canonical(&jpeg, ImageType::Jpeg, false).unwrap();
    assert_eq!(c.repair, None);
    assert!(!c.dropped.contains(&"stray-bytes"), "{:?}", c.dropped);
}

/// Bytes after a scan's last used bit (libjpeg: "extraneous bytes before marker 0xd9") are left
/// out; what remains is the original, byte for byte.
#[test]
fn bytes_after_the_last_used_bit_are_dropped() {
    for (name, jpeg) in whole_files() {
        let mut padded = jpeg[..eoi(&jpeg)].to_vec();
        padded.extend_from_slice(&[0x55, 0x12, 0x00, 0xFF, 0x00, 0x34]);
        padded.extend_from_slice(&[0xFF, 0xD9]);
        let c = canonical(&padded, ImageType::Jpeg, false).unwrap();
        assert_eq!(c.bytes.as_deref(), Some(&jpeg[..]), "{name}");
        assert_eq!(c.dropped, ["stray-bytes"], "{name}");
        assert_eq!(c.repair, None, "{name}");
    }
}

/// Scan data cut short (a marker where blocks remain): repaired, with the lost MCUs named for a
/// sequential image; the repaired bytes decode.
#[test]
fn scan_data_cut_short_is_repaired() {
    for (name, jpeg) in whole_files() {
        // The last scan loses its second half.
        let sos = jpeg.windows(2).rposition(|w| w == [0xFF, 0xDA]).unwrap();
        let keep = sos + (eoi(&jpeg) - sos) / 2;
        let mut cut = jpeg[..keep].to_vec();
        if cut.last() == Some(&0xFF) {
            cut.pop();
        }
        cut.extend_from_slice(&[0xFF, 0xD9]);
        let c = canonical(&cut, ImageType::Jpeg, false).unwrap();
        let repair = c.repair.unwrap_or_else(|| panic!("{name}: no repair"));
        assert!(repair.why.contains("premature end"), "{name}: {}", repair.why);
        assert_eq!(c.dropped, ["broken-scan"], "{name}");
        if !name.starts_with("progressive") && !name.contains("restart") {
            let (start, end) = repair.lost[0];
            assert!(
                start > 0 && end == repair.grid.mcus_x * jpeg_mcus_y(&jpeg, repair.grid.mcu_height),
                "{name}: {:?}",
                repair.lost
            );
        }
        image::load_from_memory(&c.bytes.unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

fn jpeg_mcus_y(jpeg: &[u8], mcu_height: u32) -> u32 {
    let sof = jpeg.windows(2).position(|w| w[0] == 0xFF && matches!(w[1], 0xC0 | 0xC2)).unwrap();
    u32::from(u16::from_be_bytes([jpeg[sof + 5], jpeg[sof + 6]])).div_ceil(mcu_height)
}

/// A file cut in the middle of its scan, no EOI: repaired from what it holds. Cut before any
/// scan, it is refused.
#[test]
fn a_file_cut_before_its_end_is_refused() {
    // libjpeg-turbo then asks for more data: Pillow and Chromium refuse it, djpeg and libvips warn.
    let jpeg = encoded(67, 45, |_| {});
    let sos = jpeg.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap();
    for cut in [sos - 3, sos + 40, jpeg.len() - 2, jpeg.len() - 1] {
        let err = canonical(&jpeg[..cut], ImageType::Jpeg, false).unwrap_err();
        assert!(err.0.contains("truncated"), "cut at {cut}: {}", err.0);
    }
}

/// Restart markers out of sequence: libjpeg-turbo warns and resynchronises; repaired.
#[test]
fn restart_markers_out_of_sequence_are_repaired() {
    let mut jpeg = encoded(70, 50, |e| e.set_restart_interval(3));
    let rst = jpeg.windows(2).position(|w| w == [0xFF, 0xD0]).unwrap();
    jpeg[rst + 1] = 0xD3;
    let c = canonical(&jpeg, ImageType::Jpeg, false).unwrap();
    assert!(c.repair.unwrap().why.contains("restart"));
}

/// The SOS segments of a progressive JPEG, with their data, in order.
fn scans(jpeg: &[u8]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut at = 2;
    loop {
        let marker = jpeg[at + 1];
        if marker == 0xD9 {
            return found;
        }
        let len = usize::from(u16::from_be_bytes([jpeg[at + 2], jpeg[at + 3]]));
        let mut end = at + 2 + len;
        if marker == 0xDA {
            end = crate::container::entropy_coded_end(jpeg, end).unwrap();
            found.push((at, end));
        }
        at = end;
    }
}

/// An AC scan before the DC scan of its component, and a refinement of coefficients never coded:
/// libjpeg-turbo's "inconsistent progression sequence". Chromium refuses the first (refused), and
/// decodes the second as Pillow does (repaired).
#[test]
fn an_ac_scan_before_its_dc_scan_is_refused_and_a_refinement_out_of_order_repaired() {
    let jpeg = encoded(32, 32, |e| e.set_progressive(true));
    let s = scans(&jpeg);
    // The first scan is the interleaved DC scan: move it last.
    let mut reordered = jpeg[..s[0].0].to_vec();
    reordered.extend_from_slice(&jpeg[s[0].1..s[s.len() - 1].1]);
    reordered.extend_from_slice(&jpeg[s[0].0..s[0].1]);
    reordered.extend_from_slice(&[0xFF, 0xD9]);
    let err = canonical(&reordered, ImageType::Jpeg, false).unwrap_err();
    assert!(err.0.contains("inconsistent progression sequence"), "{}", err.0);
    // An AC scan that refines (Ah = 1) coefficients no scan has coded yet.
    let mut refined = jpeg.clone();
    let (ac, _) = s[3];
    assert_eq!(refined[ac + 9], 0x00, "the first luma AC scan has Ah = Al = 0");
    refined[ac + 9] = 0x10;
    // libjpeg-turbo warns and decodes on, and so do Pillow and Chromium: repaired.
    let c = canonical(&refined, ImageType::Jpeg, false).unwrap();
    assert!(c.repair.as_ref().unwrap().why.contains("inconsistent progression sequence"), "{:?}", c.repair);
    assert!(c.dropped.contains(&"broken-scan"), "{:?}", c.dropped);
}

/// Parameters libjpeg-turbo stops on: a point transform past 13.
#[test]
fn invalid_progressive_parameters_are_refused() {
    let mut jpeg = encoded(32, 32, |e| e.set_progressive(true));
    let (sos, _) = scans(&jpeg)[0];
    let n = usize::from(jpeg[sos + 4]);
    jpeg[sos + 5 + 2 * n + 2] = 0x0E;
    let err = canonical(&jpeg, ImageType::Jpeg, false).unwrap_err();
    assert!(err.0.contains("invalid parameters"), "{}", err.0);
}

#[test]
fn repaired_pixels_are_grey_where_the_data_ran_out() {
    let img = DynamicImage::ImageRgb8(photo_like(64, 64));
    let jpeg = crate::test_images::encode(&img, image::ImageFormat::Jpeg);
    let sos = jpeg.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap();
    let mut cut = jpeg[..sos + (eoi(&jpeg) - sos) / 3].to_vec();
    if cut.last() == Some(&0xFF) {
        cut.pop();
    }
    // The scan ends early at the end-of-image marker (a file cut before it is refused).
    cut.extend_from_slice(&[0xFF, 0xD9]);
    let c = canonical(&cut, ImageType::Jpeg, false).unwrap();
    let src = c.bytes.unwrap();
    let header = crate::gate::decode::read_header(&src, ImageType::Jpeg).unwrap();
    let out =
        crate::gate::downsample::decode_repaired_jpeg(&src, &header, c.repair.as_ref().unwrap()).unwrap().to_rgb8();
    assert_eq!(out.get_pixel(63, 63).0, [128, 128, 128]);
    assert_ne!(out.get_pixel(1, 1).0, [128, 128, 128]);
}

/// More codes of one length than that length holds (the table of the corpus file that trapped the
/// gate: a 9-bit look-ahead index past its end): no table, as libjpeg stops with "Bogus Huffman
/// table definition"; a scan that uses it is refused.
#[test]
fn an_overfull_huffman_table_is_bogus_and_a_scan_using_it_refused() {
    let mut counts = [0u8; 16];
    counts[8] = 200; // 200 codes of 9 bits after none shorter: fine (512 fit).
    assert!(super::Huffman::new(&counts, &[0; 200], true).is_some());
    let mut counts = [0u8; 16];
    counts[1] = 3;
    counts[2] = 3; // 3 codes of 2 bits leave 2 of 3 bits: 3 do not fit.
    assert!(super::Huffman::new(&counts, &[0; 6], true).is_none());
    counts = [0; 16];
    counts[0] = 2; // both 1-bit codes: the all-ones code is not allowed.
    assert!(super::Huffman::new(&counts, &[0; 2], true).is_none());

    // The luma DC table of a whole file made overfull in place, its symbol count kept: two codes
    // of length 1 taken from a longer length.
    let jpeg = encoded(16, 16, |_| {});
    let dht = jpeg.windows(2).position(|w| w == [0xFF, 0xC4]).unwrap();
    assert_eq!(jpeg[dht + 4], 0x00, "the first table is DC 0");
    let mut bogus = jpeg.clone();
    let from = (dht + 6..dht + 21).find(|&i| bogus[i] >= 2).expect("a length with two codes");
    bogus[from] -= 2;
    bogus[dht + 5] += 2;
    let err = canonical(&bogus, ImageType::Jpeg, false).unwrap_err();
    assert!(err.0.contains("bogus Huffman table"), "{}", err.0);
}

/// What libjpeg-turbo's marker reader stops on, Pillow, libvips, Chromium and djpeg with it:
/// refused, wherever it stands. A marker below SOF0 after a damaged scan with restart markers is
/// what libjpeg skips as it resynchronises: stray bytes.
#[test]
fn markers_libjpeg_stops_on_are_refused() {
    let jpeg = encoded(16, 16, |_| {});
    let before_eoi = |extra: &[u8]| {
        let mut j = jpeg[..eoi(&jpeg)].to_vec();
        j.extend_from_slice(extra);
        j.extend_from_slice(&[0xFF, 0xD9]);
        j
    };
    for (extra, words) in [
        (&[0xFF, 0xAE, 0, 4, 0, 0][..], "does not know"),
        (&[0xFF, 0xF0, 0, 4, 0, 0][..], "does not know"),
        (&[0xFF, 0xC3, 0, 4, 0, 0][..], "lossless or hierarchical"),
        (&[0xFF, 0xC0, 0, 11, 8, 0, 16, 0, 16, 1, 1, 0x11, 0][..], "two frame headers"),
        (&[0xFF, 0xDD, 0, 5, 0, 0, 0][..], "wrong length"),
        (&[0xFF, 0xDB, 0, 1][..], "length under 2"),
        (&[0xFF, 0xC4, 0, 2][..], ""),
        (&[0xFF, 0xE5, 0, 1][..], ""),
        (&[0xFF, 0xFE, 0, 0][..], ""),
    ] {
        let made = canonical(&before_eoi(extra), ImageType::Jpeg, false);
        match words {
            // An empty DHT, an APPn or comment too short to hold anything: nothing to libjpeg.
            "" => assert!(made.is_ok(), "{extra:02X?}: {:?}", made.unwrap_err()),
            _ => assert!(made.as_ref().unwrap_err().0.contains(words), "{extra:02X?}: {:?}", made.map(|c| c.dropped)),
        }
    }
    let mut dqt = before_eoi(&[0xFF, 0xDB, 0, 67, 0x0A]);
    dqt.splice(dqt.len() - 2..dqt.len() - 2, [1u8; 64]);
    assert!(canonical(&dqt, ImageType::Jpeg, false).unwrap_err().0.contains("quantization table 10"));

    // Restart markers every MCU, the data of the second interval replaced by a marker below SOF0
    // and garbage: libjpeg resynchronises at the next restart marker.
    let restarts = encoded(64, 16, |e| e.set_restart_interval(1));
    let s = scans(&restarts);
    let data = &restarts[s[0].0..];
    let rst0 = data.windows(2).position(|w| w == [0xFF, 0xD0]).unwrap() + s[0].0;
    let rst1 = restarts[rst0 + 2..].windows(2).position(|w| w == [0xFF, 0xD1]).unwrap() + rst0 + 2;
    let mut resync = restarts[..rst0 + 2].to_vec();
    resync.extend_from_slice(&[0xFF, 0x3B, 0x12, 0x34]);
    resync.extend_from_slice(&restarts[rst1..]);
    let c = canonical(&resync, ImageType::Jpeg, false).unwrap();
    assert!(c.repair.is_some());
    assert!(c.dropped.contains(&"stray-bytes") && c.dropped.contains(&"broken-scan"), "{:?}", c.dropped);
}

/// The bit reader's eight-bytes-at-once path against the plain reading it shortcuts: data with a
/// stuffed 0xFF 0x00 at every offset from the window's start, then a marker, read in takes of
/// every width; each value and the premature end fall where byte-by-byte destuffing puts them.
#[test]
fn the_bit_reader_reads_stuffed_bytes_and_stops_at_a_marker_as_libjpeg() {
    use super::Bits;
    for stuffed_at in 0..12 {
        for width in 1..=16u32 {
            let mut raw: Vec<u8> = (0..24u8).map(|i| i.wrapping_mul(37) ^ 0x5A).filter(|&b| b != 0xFF).collect();
            raw.splice(stuffed_at..stuffed_at, [0xFF, 0x00]);
            let data: Vec<u8> = raw.iter().enumerate().filter(|&(i, _)| i != stuffed_at + 1).map(|(_, &b)| b).collect();
            raw.extend_from_slice(&[0xFF, 0xD9, 0x12, 0x34]);
            let bit = |n: usize| u32::from(data[n / 8] >> (7 - n % 8) & 1);
            let mut bits = Bits::new(&raw);
            let mut at = 0usize;
            while at + width as usize <= 8 * data.len() {
                let expected = (0..width as usize).fold(0, |v, i| v << 1 | bit(at + i));
                assert_eq!(bits.take(width), Ok(expected), "stuffed at {stuffed_at}, width {width}, bit {at}");
                at += width as usize;
            }
            assert_eq!(bits.take(width), Err(super::Damage::Premature), "stuffed at {stuffed_at}, width {width}");
            assert_eq!((bits.used_data_bytes(), bits.data_bytes()), (at.div_ceil(8), data.len()));
        }
    }
}

/// A sink that keeps a checksum of every block it is handed.
#[derive(Default)]
struct Checksum {
    blocks: u64,
    sum: i64,
}

impl super::BlockSink for Checksum {
    const VALUES: bool = true;
    fn block(&mut self, component: usize, x: u32, y: u32, natural: &[i16; 64], coded: usize) {
        assert!(super::NATURAL[coded.min(64)..].iter().all(|&at| natural[at] == 0), "nothing written past `coded`");
        self.blocks += 1;
        let at = (component as i64 + 1) * (i64::from(x) * 7919 + i64::from(y) * 104_729 + 1);
        self.sum =
            self.sum.wrapping_add(natural.iter().enumerate().map(|(k, &c)| i64::from(c) * (k as i64 + at)).sum());
    }
}

/// Each scan of `jpeg` walked plainly and with a sink: what each found (damage, trimmed bytes,
/// lost MCUs, refusal), and the sink's blocks.
fn walked_both_ways(jpeg: &[u8]) -> (Vec<String>, Vec<String>, Checksum) {
    let (mut plain, mut with_sink) = (super::Walker::default(), super::Walker::default());
    let (mut a, mut b, mut sink) = (Vec::new(), Vec::new(), Checksum::default());
    let mut at = 2;
    while let (Some(&0xFF), Some(&marker)) = (jpeg.get(at), jpeg.get(at + 1)) {
        if marker == 0xFF || matches!(marker, 0xD0..=0xD7 | 0x01) {
            at += if marker == 0xFF { 1 } else { 2 };
            continue;
        }
        if marker == 0xD9 {
            break;
        }
        let Some(len) = jpeg.get(at + 2..at + 4).map(|l| usize::from(u16::from_be_bytes([l[0], l[1]]))) else { break };
        let Some(payload) = jpeg.get(at + 4..at + 2 + len.max(2)) else { break };
        at += 2 + len.max(2);
        for w in [&mut plain, &mut with_sink] {
            match marker {
                0xC4 => w.dht(payload),
                0xDD => w.dri(payload),
                0xC0..=0xCF => w.sof(marker, payload),
                _ => {}
            }
        }
        if marker == 0xDA {
            let Ok(end) = crate::container::entropy_coded_end(jpeg, at) else { break };
            let show = |r: Result<super::ScanData, crate::container::Broken>| match r {
                Ok(d) => format!("{:?} {:?} {:?}", d.damage, d.trimmed, d.lost),
                Err(e) => e.0,
            };
            a.push(show(plain.scan(payload, &jpeg[at..end])));
            b.push(show(with_sink.scan_into(payload, &jpeg[at..end], &mut sink)));
            at = end;
        }
    }
    (a, b, sink)
}

/// Reading the values reads the same codes: every scan of the corpus JPEGs (damaged and
/// progressive ones among them) and of the files made here, whole, padded and cut, is judged
/// alike with a sink and without; a baseline one hands its blocks over.
#[test]
fn a_walk_that_hands_out_blocks_judges_as_the_plain_walk() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/conformance/jpeg");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    for (name, jpeg) in whole_files() {
        let mut cut = jpeg[..jpeg.len() * 3 / 4].to_vec();
        cut.extend_from_slice(&[0xFF, 0xD9]);
        let mut padded = jpeg[..eoi(&jpeg)].to_vec();
        padded.extend_from_slice(&[0x55, 0x12, 0xFF, 0xD9]);
        files.extend([(format!("{name}, cut"), cut), (format!("{name}, padded"), padded), (name.to_string(), jpeg)]);
    }
    let mut damaged = 0;
    for (name, jpeg) in &files {
        let (plain, with_sink, _) = walked_both_ways(jpeg);
        assert_eq!(plain, with_sink, "{name}");
        damaged += plain.iter().filter(|s| !s.starts_with("None")).count();
    }
    assert!(damaged >= 10, "{damaged} scans found damaged or refused: the comparison must cover some");
    let (.., sink) = walked_both_ways(&whole_files()[0].1);
    // 67x45 at 4:2:0: 5x3 MCUs of four Y blocks and two chroma ones.
    assert_eq!(sink.blocks, 5 * 3 * 6);
    assert_ne!(sink.sum, 0);
}

/// The whole-code table gives what the general step gives: the same symbol's run, the same value
/// and the same bits taken, for every look-ahead of a table with codes of every length
/// (JPEG's example AC table for luma, Annex K.3.2, whose codes run from 2 to 16 bits).
#[test]
fn a_whole_ac_code_reads_as_the_general_step() {
    let table = crate::gate::planar_jpeg::LUMA_AC;
    let table = super::Huffman::new(&table.counts, table.symbols, true).unwrap();
    let (mut whole_codes, mut ends) = (0, 0);
    let ahead = super::LOOKAHEAD;
    for look in 0u32..1 << ahead {
        // The look-ahead, then bits that make every longer code's extra bits non-zero (a 0xFF
        // data byte stuffed).
        let head = look << (16 - ahead) | 0x5555 >> ahead;
        let mut data = Vec::new();
        for byte in [(head >> 8) as u8, head as u8, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55] {
            data.push(byte);
            if byte == 0xFF {
                data.push(0x00);
            }
        }
        let (mut whole_bits, mut general_bits) = (super::Bits::new(&data), super::Bits::new(&data));
        let whole = whole_bits.whole_ac(&table);
        let (symbol, value) = general_bits.decode_value(&table).unwrap();
        if whole == 0 {
            assert_eq!(whole_bits.held, 64, "nothing taken at {look:b}");
            continue;
        }
        assert_eq!(whole_bits.held, general_bits.held, "bits taken at {look:b}");
        if whole & super::END_OF_BLOCK != 0 {
            assert_eq!(symbol, 0);
            ends += 1;
        } else {
            assert_eq!(((whole >> 4) & 15, whole >> 16), (i32::from(symbol >> 4), value), "at {look:b}");
            whole_codes += 1;
        }
    }
    // The table's short codes with their extra bits fill most of the look-ahead; its
    // end-of-block code is 4 bits long.
    assert!(whole_codes > 1 << (ahead - 1), "{whole_codes} whole codes");
    assert_eq!(ends, 1 << (ahead - 4));
}
