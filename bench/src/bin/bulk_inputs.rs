//! Writes the inputs of the bulk benchmarks (bench/bulk.sh), the same bytes every run (a fixed
//! seed):
//!   bulk_inputs images DIR COUNT              a tree of mixed images: screenshots (PNG), photos
//!                                             (JPEG), oversized ones the gate fits, SVGs named
//!                                             .png and cut PNGs it refuses; 100 a folder
//!   bulk_inputs batch FILE API LINES BYTES    a Batch API file (API openai: JSON lines of Chat
//!                                             requests; anthropic: JSON lines of Messages params)
//!                                             of LINES requests, about BYTES in all: each with an
//!                                             inline image (1 in 50 an SVG claimed as PNG, refused),
//!                                             every tenth text only, text padding to the size

use std::io::Write;
use std::path::Path;

use base64::Engine as _;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};

/// A small deterministic generator (xorshift64*): the same inputs on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const SVG: &[u8] =
    b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"64\" height=\"64\"><rect width=\"64\" height=\"64\"/></svg>";

/// A screenshot-like image: flat panels and a few lines of "text" (dark runs), which PNG compresses
/// as it does real screenshots.
fn screenshot(w: u32, h: u32, rng: &mut Rng) -> DynamicImage {
    let background = [240, 240, 240 - rng.below(40) as u8];
    let mut img = RgbImage::from_pixel(w, h, Rgb(background));
    for row in (20..h.saturating_sub(20)).step_by(18) {
        let mut x = 16;
        while x + 40 < w {
            let len = 8 + rng.below(40) as u32;
            for dx in 0..len.min(w - x) {
                for dy in 0..9 {
                    img.put_pixel(x + dx, row + dy, Rgb([30, 30, 30]));
                }
            }
            x += len + 6;
        }
    }
    DynamicImage::ImageRgb8(img)
}

/// A photo-like image: smooth gradients with grain, which JPEG compresses as it does photos.
fn photo(w: u32, h: u32, rng: &mut Rng) -> DynamicImage {
    let seed = rng.next();
    let img = RgbImage::from_fn(w, h, |x, y| {
        let n = ((x.wrapping_mul(7919) ^ y.wrapping_mul(104_729) ^ seed as u32) % 23) as u8;
        Rgb([(x * 255 / w) as u8 / 2 + n, (y * 255 / h) as u8 / 2 + n, ((x + y) % 256) as u8 / 2 + n])
    });
    DynamicImage::ImageRgb8(img)
}

fn encode(img: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, format).expect("encoding to memory");
    out.into_inner()
}

fn images(dir: &Path, count: u64) {
    let mut rng = Rng(0x6d65_6469_6167_6174);
    for i in 0..count {
        let folder = dir.join(format!("{:03}", i / 100));
        std::fs::create_dir_all(&folder).expect("creating the folder");
        let kind = rng.below(100);
        let (name, bytes) = match kind {
            0..=54 => {
                let (w, h) = (320 + rng.below(480) as u32, 240 + rng.below(360) as u32);
                (format!("shot-{i}.png"), encode(&screenshot(w, h, &mut rng), ImageFormat::Png))
            }
            55..=84 => {
                let (w, h) = (480 + rng.below(640) as u32, 360 + rng.below(480) as u32);
                (format!("photo-{i}.jpg"), encode(&photo(w, h, &mut rng), ImageFormat::Jpeg))
            }
            85..=89 => (format!("big-{i}.png"), encode(&screenshot(2400, 1500, &mut rng), ImageFormat::Png)),
            90..=94 => (format!("diagram-{i}.png"), SVG.to_vec()),
            _ => {
                let png = encode(&screenshot(400, 300, &mut rng), ImageFormat::Png);
                (format!("cut-{i}.png"), png[..png.len() / 2].to_vec())
            }
        };
        std::fs::write(folder.join(name), bytes).expect("writing the image");
    }
}

fn batch(file: &Path, api: &str, lines: u64, bytes: u64) {
    let mut rng = Rng(0x6261_7463_6866_696c);
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    // A few images, encoded once: the file's size is in its lines, not in making them.
    let pngs: Vec<String> = (0..8).map(|_| b64(&encode(&screenshot(200, 120, &mut rng), ImageFormat::Png))).collect();
    let jpegs: Vec<String> = (0..8).map(|_| b64(&encode(&photo(240, 160, &mut rng), ImageFormat::Jpeg))).collect();
    let svg = b64(SVG);
    let per_line = (bytes / lines.max(1)) as usize;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(file).expect("creating the file"));
    for n in 0..lines {
        let pick = rng.below(50);
        let (mime, data) = match pick {
            0 => ("image/png", &svg),
            1..=25 => ("image/png", &pngs[rng.below(8) as usize]),
            _ => ("image/jpeg", &jpegs[rng.below(8) as usize]),
        };
        let text_only = n % 10 == 9;
        let image = match api {
            "openai" => {
                serde_json::json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data}")}})
            }
            _ => serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}),
        };
        let mut content = vec![serde_json::json!({"type": "text", "text": "Describe the image."})];
        if !text_only {
            content.push(image);
        }
        let body = serde_json::json!({"model": "vision-model", "max_tokens": 200,
            "messages": [{"role": "user", "content": content}]});
        let mut line = match api {
            "openai" => serde_json::json!({"custom_id": format!("req-{n}"), "method": "POST",
                "url": "/v1/chat/completions", "body": body}),
            _ => serde_json::json!({"custom_id": format!("req-{n}"), "params": body}),
        }
        .to_string();
        // Pad with a text block so the file reaches its size (a long prompt, as batch jobs have).
        if line.len() + 64 < per_line {
            let pad = "lorem ipsum ".repeat((per_line - line.len() - 64) / 12);
            let mut v: serde_json::Value = serde_json::from_str(&line).unwrap();
            let body = if api == "openai" { &mut v["body"] } else { &mut v["params"] };
            body["messages"][0]["content"]
                .as_array_mut()
                .unwrap()
                .insert(0, serde_json::json!({"type": "text", "text": pad}));
            line = v.to_string();
        }
        out.write_all(line.as_bytes()).and_then(|()| out.write_all(b"\n")).expect("writing the file");
    }
    out.flush().expect("writing the file");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: bulk_inputs images DIR COUNT | bulk_inputs batch FILE openai|anthropic LINES BYTES";
    match args.get(1).map(String::as_str) {
        Some("images") if args.len() == 4 => images(Path::new(&args[2]), args[3].parse().expect(usage)),
        Some("batch") if args.len() == 6 => {
            batch(Path::new(&args[2]), &args[3], args[4].parse().expect(usage), args[5].parse().expect(usage))
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}
