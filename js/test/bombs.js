// Small inputs that ask the gate for much more than they are: made here, not carried.
import { deflateSync } from 'node:zlib';

function pdf(objects) {
  const parts = [Buffer.from('%PDF-1.4\n')];
  let length = parts[0].length;
  const offsets = [];
  objects.forEach((body, i) => {
    offsets.push(length);
    const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), Buffer.from(body), Buffer.from('\nendobj\n')]);
    parts.push(chunk);
    length += chunk.length;
  });
  let tail = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) tail += `${String(o).padStart(10, '0')} 00000 n \n`;
  tail += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`;
  parts.push(Buffer.from(tail));
  return new Uint8Array(Buffer.concat(parts));
}

const stream = (dict, data) =>
  Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`), data, Buffer.from('\nendstream')]);

/**
 * A one-page PDF (about 1 KB) drawing a `side` × `side` RGB image whose samples are compressed
 * twice (`/Filter [/FlateDecode /FlateDecode]`): 147 MB of samples at the default 7000.
 */
export function flateBombPdf(side = 7000) {
  const samples = deflateSync(deflateSync(Buffer.alloc(side * side * 3)), { level: 9 });
  return pdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Contents 4 0 R /Resources << /XObject << /Im1 5 0 R >> >> >>',
    stream('', Buffer.from('q 300 0 0 300 0 0 cm /Im1 Do Q')),
    stream(
      `/Type /XObject /Subtype /Image /Width ${side} /Height ${side} /BitsPerComponent 8 /ColorSpace /DeviceRGB /Filter [/FlateDecode /FlateDecode]`,
      samples,
    ),
  ]);
}
