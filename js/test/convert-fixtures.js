// Files of the types the converter takes, made on the spot for the tests (the real files made with
// other tools live in tests/corpus/convert/, when that directory is there). Written by hand from
// each format's specification so that no converter of ours makes its own input.


const le16 = (v) => [v & 0xff, (v >>> 8) & 0xff];
const le32 = (v) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];

/** A colour for pixel (x, y): a diagonal gradient, so a wrong row order or channel order shows. */
function pixel(x, y, width, height) {
  return [Math.round((255 * x) / Math.max(1, width - 1)), Math.round((255 * y) / Math.max(1, height - 1)), 96];
}

/** A 24-bit BMP (BITMAPINFOHEADER, BI_RGB, bottom-up rows padded to 4 bytes). */
export function bmp(width = 40, height = 30) {
  const rowBytes = Math.ceil((width * 3) / 4) * 4;
  const pixels = [];
  for (let y = height - 1; y >= 0; y--) {
    const row = [];
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixel(x, y, width, height);
      row.push(b, g, r);
    }
    while (row.length < rowBytes) row.push(0);
    pixels.push(...row);
  }
  const header = [
    0x42, 0x4d, ...le32(54 + pixels.length), 0, 0, 0, 0, ...le32(54),
    ...le32(40), ...le32(width), ...le32(height), ...le16(1), ...le16(24), ...le32(0), ...le32(pixels.length),
    ...le32(2835), ...le32(2835), ...le32(0), ...le32(0),
  ];
  return Uint8Array.from([...header, ...pixels]);
}

/** A baseline TIFF: little-endian, one strip of uncompressed 8-bit RGB. */
export function tiff(width = 36, height = 24) {
  const data = [];
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.push(...pixel(x, y, width, height));
  const entries = [
    [256, 3, 1, width], // ImageWidth
    [257, 3, 1, height], // ImageLength
    [258, 3, 3, null], // BitsPerSample: 8,8,8 (at bitsAt)
    [259, 3, 1, 1], // Compression: none
    [262, 3, 1, 2], // PhotometricInterpretation: RGB
    [273, 4, 1, null], // StripOffsets (dataAt)
    [277, 3, 1, 3], // SamplesPerPixel
    [278, 3, 1, height], // RowsPerStrip
    [279, 4, 1, data.length], // StripByteCounts
    [284, 3, 1, 1], // PlanarConfiguration: chunky
  ];
  const ifdAt = 8;
  const ifdBytes = 2 + entries.length * 12 + 4;
  const bitsAt = ifdAt + ifdBytes;
  const dataAt = bitsAt + 6;
  const out = [0x49, 0x49, 42, 0, ...le32(ifdAt), ...le16(entries.length)];
  for (const [tag, type, count, value] of entries) {
    const v = tag === 258 ? bitsAt : tag === 273 ? dataAt : value;
    out.push(...le16(tag), ...le16(type), ...le32(count));
    out.push(...(type === 3 && count === 1 ? [...le16(v), 0, 0] : le32(v)));
  }
  out.push(...le32(0), ...le16(8), ...le16(8), ...le16(8), ...data);
  return Uint8Array.from(out);
}

/** A WxH RGBA PNG of noise: an icon's PNG entry is RGBA (the ICO decoder takes no other). */
async function rgbaPng(width, height, seed) {
  const { deflateSync, crc32 } = await import('node:zlib');
  const raw = new Uint8Array((width * 4 + 1) * height);
  let x = seed >>> 0 || 1;
  for (let row = 0; row < height; row++) {
    for (let i = 1; i <= width * 4; i++) {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      raw[row * (width * 4 + 1) + i] = i % 4 === 0 ? 255 : x & 0xff;
    }
  }
  const be32 = (n) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
  const chunk = (type, body) => {
    const typed = Uint8Array.from([...Buffer.from(type, 'latin1'), ...body]);
    return [...be32(body.length), ...typed, ...be32(crc32(typed))];
  };
  const ihdr = [...be32(width), ...be32(height), 8, 6, 0, 0, 0];
  return Uint8Array.from([
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a,
    ...chunk('IHDR', ihdr),
    ...chunk('IDAT', [...deflateSync(raw)]),
    ...chunk('IEND', []),
  ]);
}

/** An ICO with two entries, each an RGBA PNG (16x16 and 48x48): the largest is the one to take. */
export async function ico() {
  const images = [await rgbaPng(16, 16, 3), await rgbaPng(48, 48, 5)];
  const head = [0, 0, ...le16(1), ...le16(images.length)];
  let offset = 6 + 16 * images.length;
  const dir = [];
  for (const [i, png] of images.entries()) {
    const side = i === 0 ? 16 : 48;
    dir.push(side, side, 0, 0, ...le16(1), ...le16(32), ...le32(png.length), ...le32(offset));
    offset += png.length;
  }
  const out = new Uint8Array(offset);
  out.set([...head, ...dir]);
  let at = 6 + 16 * images.length;
  for (const png of images) {
    out.set(png, at);
    at += png.length;
  }
  return out;
}

/** A 1x1 GIF89a with two frames (an animation): OpenAI's profile refuses animation. */
export function animatedGif() {
  const frame = [
    0x21, 0xf9, 0x04, 0x04, 0x32, 0x00, 0x00, 0x00, // graphic control: 0.5 s, keep
    0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, // image descriptor 1x1, no local table
    0x02, 0x02, 0x44, 0x01, 0x00, // LZW min code 2, one sub-block, end
  ];
  return Uint8Array.from([
    ...[0x47, 0x49, 0x46, 0x38, 0x39, 0x61], 1, 0, 1, 0, 0x80, 0, 0, // header, screen, 2-colour table
    0xff, 0xff, 0xff, 0x00, 0x00, 0x00,
    0x21, 0xff, 0x0b, ...new TextEncoder().encode('NETSCAPE2.0'), 0x03, 0x01, 0x00, 0x00, 0x00, // loop forever
    ...frame,
    ...frame,
    0x3b,
  ]);
}

/** An SVG diagram with text (rendered with the font the converter carries). */
export const DIAGRAM_SVG = new TextEncoder().encode(
  '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="150" viewBox="0 0 300 150">' +
    '<rect width="300" height="150" fill="#fff"/><rect x="20" y="20" width="110" height="60" fill="#2563eb"/>' +
    '<circle cx="220" cy="75" r="50" fill="#f97316"/><text x="24" y="120" font-size="20" fill="#111">diagram</text></svg>\n',
);
