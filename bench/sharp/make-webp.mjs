// Makes the benchmark's WebP input: a lossy WebP (quality 80, what cameras and sites produce),
// since the image crate writes lossless WebP only. Usage: node make-webp.mjs <in> <out>
import sharp from "sharp";

const [input, output] = process.argv.slice(2);
await sharp(input).webp({ quality: 80 }).toFile(output);
