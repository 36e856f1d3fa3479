// The demo page in headless Chromium (Debian's, driven by playwright-core): pick a file, read the
// verdict the page shows.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import * as mediagate from '../src/index.js';
import { ARTIFACTS, CORPUS, SVG_BYTES, minimalPdf, openDemo } from './helpers.js';

let demo;
let node;

/** Picks `file` (a path, or { name, mimeType, buffer }) in the page and waits for the verdict. */
async function judge(file) {
  const { page } = demo;
  await page.evaluate(() => {
    document.body.dataset.state = 'ready';
  });
  await page.setInputFiles('#file', file);
  await page.waitForSelector('body[data-state="done"]', { timeout: 120_000 });
  const text = async (id) => (await page.locator(`#${id}`).innerText()).trim();
  const shown = {
    ok: await page.locator('#result').getAttribute('data-ok'),
    verdict: await text('verdict'),
    reason: await text('reason'),
    message: await text('message'),
    originalSize: await text('original-size'),
    admittedSize: await text('admitted-size'),
    originalDims: await text('original-dims'),
    admittedDims: await text('admitted-dims'),
    base64Len: await text('base64-len'),
    time: await text('time'),
    json: JSON.parse(await page.locator('#verdict-json').textContent()),
    previewVisible: await page.locator('#preview').isVisible(),
    preview: await page.evaluate(() => {
      const img = document.getElementById('preview');
      return { width: img.naturalWidth, height: img.naturalHeight, src: img.getAttribute('src')?.slice(0, 30) ?? null };
    }),
  };
  assert.match(shown.time, /^\d+(\.\d+)? ms$/);
  return shown;
}

async function expectedFor(bytes, fileName) {
  // The page claims no type: the gate judges the bytes, the file's name the hint, as the CLI does.
  return JSON.parse(node.admit(bytes, { name: fileName }).json);
}

describe('demo page in Chromium', { timeout: 300_000 }, () => {
  before(async () => {
    node = await mediagate.createGate();
    demo = await openDemo();
  });

  after(async () => {
    if (demo) assert.deepEqual(demo.problems, [], 'the page logged no errors');
    await demo?.close();
  });

  it('loads in Debian Chromium, headless', async () => {
    assert.match(demo.userAgent, /HeadlessChrome\/\d+/);
    const footer = await demo.page.locator('#gate-info').innerText();
    assert.match(footer, /instantiated in \d+(\.\d+)? ms/);
    // The page's hook answers the component's JSON, as the Node package does.
    const bytes = readFileSync(join(CORPUS, 'pngsuite', 'basn3p08.png'));
    const fromPage = await demo.page.evaluate((b) => window.mediagateAdmit(b, 'image/png'), Array.from(bytes));
    assert.deepEqual(fromPage, JSON.parse(node.admit(bytes, 'image/png').json));
  });

  it('admits a PNG and previews it', async () => {
    const file = join(CORPUS, 'photos', 'kodim23.png');
    const shown = await judge(file);
    assert.equal(shown.ok, 'true');
    assert.equal(shown.verdict, 'Admitted: image, image/png');
    // Its 32-byte tEXt chunk is left out of the canonical form.
    assert.match(shown.reason, /Admitted without its metadata \(text\)/);
    assert.equal(shown.admittedDims, '768 × 512');
    assert.equal(shown.originalDims, '768 × 512');
    assert.match(shown.originalSize, /557,596 bytes/);
    assert.match(shown.admittedSize, /557,564 bytes/);
    assert.ok(shown.previewVisible);
    assert.deepEqual([shown.preview.width, shown.preview.height], [768, 512]);
    assert.equal(shown.preview.src, 'data:image/png;base64,iVBORw0K');
    assert.deepEqual(shown.json, await expectedFor(readFileSync(file), file));
  });

  it('refuses an SVG named .png as magic_mismatch, in plain words', async () => {
    const shown = await judge({ name: 'architecture.png', mimeType: 'image/png', buffer: Buffer.from(SVG_BYTES) });
    assert.equal(shown.ok, 'false');
    assert.equal(shown.verdict, 'Refused: magic_mismatch');
    assert.match(shown.reason, /not what the name or type claims/);
    assert.match(shown.message, /image\/svg\+xml/);
    assert.equal(shown.admittedSize, '— (refused)');
    assert.equal(shown.admittedDims, '—');
    assert.equal(shown.previewVisible, false);
    assert.equal(await demo.page.locator('#sniffed').innerText(), 'image/svg+xml');
    assert.deepEqual(shown.json, await expectedFor(SVG_BYTES, 'architecture.png'));
  });

  it('downsamples the 4.2 MB screenshot under the base64 limit and shows 2000 × 1293', async () => {
    const file = join(CORPUS, 'bench', 'screenshot-3456x2234.png');
    const shown = await judge(file);
    assert.equal(shown.ok, 'true');
    assert.match(shown.reason, /fitted inside 2000 × 2000/);
    assert.equal(shown.originalDims, '3456 × 2234');
    assert.equal(shown.admittedDims, '2000 × 1293');
    assert.match(shown.originalSize, /4,212,470 bytes/);
    assert.equal(shown.json.resized, true);
    assert.ok(shown.json.base64_len <= 5_242_880, `${shown.json.base64_len} > 5 MiB`);
    assert.equal(shown.base64Len, shown.json.base64_len.toLocaleString('en-US'));
    assert.deepEqual([shown.preview.width, shown.preview.height], [2000, 1293]);
    assert.deepEqual(shown.json, await expectedFor(readFileSync(file), file));
    mkdirSync(ARTIFACTS, { recursive: true });
    await demo.page.screenshot({ path: join(ARTIFACTS, 'demo-screenshot.png'), fullPage: true });
  });

  it('fits the 12 MP photo to 2000 × 1500', async () => {
    const file = join(CORPUS, 'bench', 'photo-12mp.jpg');
    const shown = await judge(file);
    assert.equal(shown.ok, 'true');
    assert.equal(shown.verdict, 'Admitted: image, image/jpeg');
    assert.equal(shown.originalDims, '4000 × 3000');
    assert.equal(shown.admittedDims, '2000 × 1500');
    assert.deepEqual([shown.preview.width, shown.preview.height], [2000, 1500]);
    assert.deepEqual(shown.json, await expectedFor(readFileSync(file), file));
    // The artefact: the page as a person sees it, with the fitted photo.
    mkdirSync(ARTIFACTS, { recursive: true });
    const path = join(ARTIFACTS, 'demo.png');
    await demo.page.screenshot({ path, fullPage: true });
    const png = readFileSync(path);
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    assert.ok(png.length > 10_000);
  });

  it('admits a PDF as a document', async () => {
    const pdf = minimalPdf();
    const shown = await judge({ name: 'report.pdf', mimeType: 'application/pdf', buffer: Buffer.from(pdf) });
    assert.equal(shown.ok, 'true');
    assert.equal(shown.verdict, 'Admitted: document, application/pdf');
    assert.match(shown.reason, /document block/);
    assert.equal(shown.admittedDims, '—');
    assert.equal(shown.previewVisible, false);
    assert.deepEqual(shown.json, await expectedFor(pdf, 'report.pdf'));
  });

  it('judges a dropped file too', async () => {
    const { page } = demo;
    await page.evaluate(() => {
      document.body.dataset.state = 'ready';
    });
    const bytes = readFileSync(join(CORPUS, 'pngsuite', 'basn6a08.png')).toString('base64');
    await page.evaluate((b64) => {
      const bin = atob(b64);
      const data = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([data], 'dropped.png', { type: 'image/png' }));
      const drop = document.getElementById('drop');
      drop.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
      drop.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, bytes);
    await page.waitForSelector('body[data-state="done"]', { timeout: 60_000 });
    assert.equal(await page.locator('#file-name').innerText(), 'dropped.png');
    assert.equal(await page.locator('#verdict').innerText(), 'Admitted: image, image/png');
    assert.equal(await page.locator('#admitted-dims').innerText(), '32 × 32');
  });

  it('applies the options: no downsample refuses the screenshot with its limit', async () => {
    await demo.page.uncheck('#downsample');
    try {
      const shown = await judge(join(CORPUS, 'bench', 'screenshot-3456x2234.png'));
      assert.equal(shown.verdict, 'Refused: base64_too_large');
      assert.equal(shown.base64Len, 'limit 5,242,880');
      assert.equal(shown.json.limit, 5_242_880);
    } finally {
      await demo.page.check('#downsample');
    }
  });
});
