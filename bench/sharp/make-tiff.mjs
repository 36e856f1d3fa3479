// Makes the bench's large TIFF: a JPEG (photo-12mp.jpg, 4000x3000) stored as an LZW TIFF by
// sharp (libtiff; horizontal predictor), since the bench's image crate has no TIFF encoder.
// Usage: node make-tiff.mjs <in.jpg> <out.tif>
import sharp from "sharp";
const [input, output] = process.argv.slice(2);
await sharp(input).tiff({ compression: "lzw", predictor: "horizontal" }).toFile(output);
