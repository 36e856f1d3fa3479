// Conversion in Chromium: the page that never converts never fetches the converter component; a
// page that converts loads it on its first converting call and turns an SVG made on the page into
// a PNG, while a PNG made with the browser's canvas is admitted as it is.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { PKG_DIR, launchChromium } from './helpers.js';

const BUILD = JSON.parse(readFileSync(`${PKG_DIR}/dist/generated/BUILD.json`, 'utf8'));

let server;
let browser;

/** A fresh page on the demo server (the package's src/ and dist/ served), every request it makes logged. */
async function freshPage() {
  const page = await browser.context.newPage();
  const requests = [];
  const problems = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(server.url);
  await page.waitForSelector('body[data-state="ready"]', { timeout: 60_000 });
  return { page, requests, problems };
}

describe('conversion in Chromium', { timeout: 300_000 }, () => {
  before(async () => {
    const { startServer } = await import('../demo/serve.js');
    server = await startServer();
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('the preflight path never requests the converter component', async () => {
    const { page, requests, problems } = await freshPage();
    const verdicts = await page.evaluate(async () => {
      const gate = await import('/src/index.js');
      const canvas = document.createElement('canvas');
      canvas.width = 64;
      canvas.height = 32;
      const ctx = canvas.getContext('2d');
      ctx.fillStyle = '#2563eb';
      ctx.fillRect(0, 0, 64, 32);
      const png = new Uint8Array(await (await new Promise((r) => canvas.toBlob(r, 'image/png'))).arrayBuffer());
      const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"/>');
      return [await gate.admit(png, 'image/png'), await gate.admit(svg, 'image/svg+xml'), await gate.admitToolResult('t', [])];
    });
    assert.equal(verdicts[0].ok, true);
    assert.equal(verdicts[1].reason, 'mime_unsupported');
    assert.ok(requests.some((p) => p.endsWith('/mediagate.core.wasm')), 'the gate was loaded');
    assert.deepEqual(
      requests.filter((p) => p.includes('convert')),
      [],
      'a page that does not convert requested the converter',
    );
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('an SVG made on the page is converted, a canvas PNG admitted as it is; the converter fetched then', async () => {
    assert.ok(BUILD.convert, 'dist/generated/ has no converter component: cargo build, then npm run build');
    const { page, requests, problems } = await freshPage();
    const before = requests.filter((p) => p.includes('mediagate-convert')).length;
    const answer = await page.evaluate(async () => {
      const gate = await import('/src/index.js');
      const svgText =
        '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100">' +
        '<rect width="200" height="100" fill="#f97316"/><circle cx="100" cy="50" r="40" fill="#2563eb"/></svg>';
      const svg = new TextEncoder().encode(svgText);
      const canvas = document.createElement('canvas');
      canvas.width = 120;
      canvas.height = 80;
      const ctx = canvas.getContext('2d');
      ctx.fillStyle = '#16a34a';
      ctx.fillRect(0, 0, 120, 80);
      const png = new Uint8Array(await (await new Promise((r) => canvas.toBlob(r, 'image/png'))).arrayBuffer());
      const converted = await gate.admit(svg, 'image/svg+xml', { convert: true });
      const plain = await gate.admit(png, 'image/png', { convert: true });
      // The converted PNG decodes in the browser to the size the gate reported.
      const bitmap = await createImageBitmap(new Blob([gate.admittedBytes(converted)], { type: 'image/png' }));
      return {
        converted: JSON.parse(converted.json),
        plain: JSON.parse(plain.json),
        decoded: [bitmap.width, bitmap.height],
        types: await gate.convertibleTypes(),
      };
    });
    assert.equal(before, 0);
    assert.equal(answer.converted.ok, true, answer.converted.message);
    assert.equal(answer.converted.mime, 'image/png');
    assert.equal(answer.converted.converted.from, 'image/svg+xml');
    assert.deepEqual(answer.decoded, [answer.converted.width, answer.converted.height]);
    assert.equal(answer.converted.width, 2 * answer.converted.height);
    assert.equal(answer.plain.ok, true);
    assert.equal(answer.plain.converted, undefined);
    assert.deepEqual([answer.plain.width, answer.plain.height], [120, 80]);
    assert.ok(answer.types.includes('image/svg+xml'));
    assert.equal(requests.filter((p) => p.endsWith('/mediagate-convert.core.wasm')).length, 1, 'fetched once');
    assert.deepEqual(problems, []);
    await page.close();
  });

  it("the demo's Convert box: an SVG picked is shown converted, with the PNG previewed", async () => {
    assert.ok(BUILD.convert, 'dist/generated/ has no converter component: cargo build, then npm run build');
    const { page, requests, problems } = await freshPage();
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="160" height="80"><rect width="160" height="80" fill="#16a34a"/></svg>');
    await page.check('#convert');
    await page.evaluate(() => {
      document.body.dataset.state = 'ready';
    });
    await page.setInputFiles('#file', { name: 'logo.svg', mimeType: 'image/svg+xml', buffer: svg });
    await page.waitForSelector('body[data-state="done"]', { timeout: 120_000 });
    assert.equal(await page.locator('#verdict').innerText(), 'Admitted: image, image/png');
    assert.match(await page.locator('#reason').innerText(), /^Converted from image\/svg\+xml/);
    const json = JSON.parse(await page.locator('#verdict-json').textContent());
    assert.equal(json.converted.from, 'image/svg+xml');
    assert.ok(await page.locator('#preview').isVisible());
    assert.equal(requests.filter((p) => p.endsWith('/mediagate-convert.core.wasm')).length, 1);
    assert.deepEqual(problems, []);
    await page.close();
  });
});
