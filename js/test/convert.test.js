// Conversion through the package: the converter component loaded only when a call asks
// to convert, the exact rules kept otherwise, the results saying what was converted from what.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';

import * as mediagate from '../src/index.js';
import * as workerApi from '../src/worker.js';
import { DIAGRAM_SVG, animatedGif, bmp, ico, tiff } from './convert-fixtures.js';
import { b64 } from './fixtures.js';
import { PKG_DIR, minimalPdf } from './helpers.js';

const BUILD = JSON.parse(readFileSync(`${PKG_DIR}/dist/generated/BUILD.json`, 'utf8'));

/** Fails (never skips) when the package was built without the converter component. */
function needConverter() {
  assert.ok(
    BUILD.convert && existsSync(`${PKG_DIR}/dist/generated/mediagate-convert.core.wasm`),
    'dist/generated/ has no converter component: cargo build (target/guest/mediagate-convert.wasm), then npm run build',
  );
}

const PNG_SIG = [0x89, 0x50, 0x4e, 0x47];

describe('without convert: the exact rules, and no converter', () => {
  it('an SVG, a BMP, a TIFF are mime_unsupported, as before', async () => {
    const gate = await mediagate.createGate();
    assert.equal(gate.converts, false);
    for (const [bytes, mime] of [
      [DIAGRAM_SVG, 'image/svg+xml'],
      [bmp(), 'image/bmp'],
      [tiff(), 'image/tiff'],
    ]) {
      const v = gate.admit(bytes, mime);
      assert.equal(v.ok, false);
      assert.equal(v.reason, 'mime_unsupported');
      assert.equal(v.converted, undefined);
      assert.equal(v.convertible, mime, 'the hint: a converting gate takes it');
      const shared = await mediagate.admit(bytes, mime, { convert: false });
      assert.equal(shared.json, v.json);
    }
  });

  it('a preflight gate refuses a converting call in words, and checks the option', async () => {
    const gate = await mediagate.createGate();
    assert.throws(() => gate.admit(DIAGRAM_SVG, 'image/svg+xml', { convert: true }), {
      name: 'TypeError',
      message: /created without the converter component; create it with createGate\(\{ convert: true \}\)/,
    });
    assert.throws(() => gate.admitPdfPage(minimalPdf(), 1), /created without the converter component/);
    assert.throws(() => gate.admit(minimalPdf(), { page: 1 }), /input.page: this gate was created without the converter component/);
    assert.deepEqual(gate.convertibleTypes(), [], 'the preflight component converts nothing');
    await assert.rejects(mediagate.admit(DIAGRAM_SVG, 'image/svg+xml', { convert: 'yes' }), {
      name: 'TypeError',
      message: 'options.convert must be a boolean',
    });
    assert.throws(() => mediagate.checkGateOptions({ convert: 1 }), /options.convert must be a boolean/);
    assert.throws(
      () => mediagate.checkGateOptions({ convert: true, wasmUrls: { 'mediagate.core.wasm': 'x' } }),
      /wasmUrls lacks mediagate-convert.core.wasm .* for a converting gate/,
    );
  });

  it('a build without the converter component: converting calls fail with words, the rest works', async () => {
    // A copy of the package without the converter's files (what a build without it ships).
    const dir = mkdtempSync(join(tmpdir(), 'mediagate-noconvert-'));
    try {
      cpSync(join(PKG_DIR, 'src'), join(dir, 'src'), { recursive: true });
      cpSync(join(PKG_DIR, 'dist', 'generated'), join(dir, 'dist', 'generated'), {
        recursive: true,
        filter: (f) => !f.split('/').pop().startsWith('mediagate-convert.'),
      });
      const copy = await import(pathToFileURL(join(dir, 'src', 'index.js')).href);
      assert.equal((await copy.admit(bmp(), 'image/bmp')).reason, 'mime_unsupported');
      await assert.rejects(copy.admit(bmp(), 'image/bmp', { convert: true }), {
        name: 'GateError',
        message: /the converter component is not in this build of @mediagate\/preflight/,
      });
      await assert.rejects(copy.convertibleTypes(), { name: 'GateError' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('with convert', () => {
  it('convertibleTypes names what the converter takes', async () => {
    needConverter();
    const types = await mediagate.convertibleTypes();
    // (A PDF is a document unless a page is asked for: whether `application/pdf` is listed is the converter's word.)
    for (const t of ['image/svg+xml', 'image/bmp', 'image/tiff', 'image/vnd.microsoft.icon']) {
      assert.ok(types.includes(t), `convertibleTypes() lacks ${t}: ${types.join(', ')}`);
    }
    const gate = await mediagate.createGate({ convert: true });
    assert.equal(gate.converts, true);
    assert.deepEqual(gate.convertibleTypes(), types);
  });

  it('SVG, BMP, TIFF, ICO become PNG images, and the verdict says from what', async () => {
    needConverter();
    const gate = await mediagate.createGate({ convert: true });
    for (const [bytes, mime, width, height] of [
      [DIAGRAM_SVG, 'image/svg+xml', null, null], // its size is the renderer's choice; its aspect is not
      [bmp(40, 30), 'image/bmp', 40, 30],
      [tiff(36, 24), 'image/tiff', 36, 24],
      [await ico(), 'image/vnd.microsoft.icon', 48, 48],
    ]) {
      const v = gate.admit(bytes, mime);
      assert.equal(v.ok, true, `${mime}: ${v.message}`);
      assert.equal(v.mime, 'image/png', mime);
      assert.equal(v.converted.from, mime);
      assert.equal(v.converted.to, 'image/png');
      assert.equal(typeof v.converted.note, 'string');
      assert.ok(v.converted.note.length > 0);
      assert.equal(v.original_size, bytes.length, 'original_size is the input');
      if (width === null) assert.equal(v.width, 2 * v.height, 'the SVG keeps its 2:1 aspect');
      else assert.deepEqual([v.width, v.height], [width, height], mime);
      assert.deepEqual([...mediagate.admittedBytes(v).subarray(0, 4)], PNG_SIG);
      // The module-level function (the shared converting instance) answers the same.
      assert.equal((await mediagate.admit(bytes, mime, { convert: true })).json, v.json);
      // Unclaimed, the gate converts what the bytes are, whatever the name says.
      assert.equal(gate.admit(bytes, { name: 'misnamed.png' }).json, v.json);
    }
    // A PNG needs no conversion: admitted as it is, no `converted`.
    const png = mediagate.admittedBytes(gate.admit(bmp(), 'image/bmp'));
    const plain = gate.admit(png, 'image/png');
    assert.equal(plain.ok, true);
    assert.equal(plain.converted, undefined);
    // convert: false on a converting gate keeps the exact rules.
    assert.equal(gate.admit(DIAGRAM_SVG, 'image/svg+xml', { convert: false }).reason, 'mime_unsupported');
  });

  it("an animated GIF: its first frame for OpenAI's profile (which refuses animation), as it is for Anthropic", async () => {
    needConverter();
    const gate = await mediagate.createGate({ convert: true });
    const gif = animatedGif();
    const anthropic = gate.admit(gif, 'image/gif');
    assert.equal(anthropic.ok, true);
    assert.equal(anthropic.converted, undefined);
    const exact = gate.admit(gif, 'image/gif', { provider: 'openai', convert: false });
    assert.equal(exact.ok, false);
    const openai = gate.admit(gif, 'image/gif', { provider: 'openai' });
    assert.equal(openai.ok, true, openai.message);
    assert.equal(openai.converted.from, 'image/gif');
    assert.deepEqual([openai.width, openai.height], [1, 1]);
  });

  it('a PDF page becomes an image; a page that does not exist is refused in words', async () => {
    needConverter();
    const pdf = minimalPdf('page one');
    const v = await mediagate.admitPdfPage(pdf, 1);
    assert.equal(v.ok, true, v.message);
    assert.equal(v.converted.from, 'application/pdf');
    assert.equal(v.kind, 'image');
    assert.match(v.mime, /^image\/(png|jpeg)$/);
    assert.equal(v.original_size, pdf.length);
    assert.equal((await mediagate.admit(pdf, { page: 1 })).json, v.json, 'admitPdfPage is admit with a page');
    const missing = await mediagate.admitPdfPage(pdf, 3);
    assert.deepEqual({ ...missing }, { ok: false, reason: 'no_such_page', raw_bytes: pdf.length, requested: 3, count: 1, message: missing.message });
    assert.match(missing.message, /page 3 does not exist: the PDF has 1 page/);
    const gate = await mediagate.createGate({ convert: true });
    assert.throws(() => gate.admitPdfPage(pdf, 0), /page must be a whole number from 1/);
    // A PDF given to `admit` stays a document, converting or not.
    assert.equal(gate.admit(pdf, 'application/pdf').kind, 'document');
  });

  it('tool results and requests: the blocks converted in their slots, listed in `conversions`', async () => {
    needConverter();
    const content = {
      content: [
        { type: 'text', text: 'a diagram' },
        { type: 'image', data: b64(DIAGRAM_SVG), mimeType: 'image/svg+xml' },
      ],
    };
    const exact = await mediagate.admitToolResult('draw', content);
    assert.equal(exact.refused.length, 1);
    assert.equal(exact.conversions, undefined);
    const got = await mediagate.admitToolResult('draw', content, { convert: true });
    assert.deepEqual(got.refused, []);
    assert.equal(got.content.content[1].mimeType, 'image/png');
    assert.deepEqual(
      got.conversions.map(({ path, from, to }) => ({ path, from, to })),
      [{ path: '/content/1', from: 'image/svg+xml', to: 'image/png' }],
    );

    const request = {
      model: 'm',
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: b64(bmp()) } }],
        },
      ],
    };
    const answer = await mediagate.admitRequest('anthropic', request, { convert: true });
    assert.equal(answer.refusal, null);
    assert.deepEqual(answer.refused, []);
    assert.equal(answer.request.messages[0].content[0].source.media_type, 'image/png');
    assert.deepEqual(
      answer.conversions.map(({ path, from }) => ({ path, from })),
      [{ path: '/messages/0/content/0', from: 'image/bmp' }],
    );
  });

  it('the Worker entry point converts too (the converter loaded inside the Worker)', async () => {
    needConverter();
    try {
      const v = await workerApi.admit(DIAGRAM_SVG, 'image/svg+xml', { convert: true });
      assert.equal(v.ok, true, v.message);
      assert.equal(v.converted.from, 'image/svg+xml');
      const page = await workerApi.admitPdfPage(minimalPdf(), 1);
      assert.equal(page.ok, true, page.message);
      assert.ok((await workerApi.convertibleTypes()).includes('image/svg+xml'));
      const exact = await workerApi.admit(DIAGRAM_SVG, 'image/svg+xml');
      assert.equal(exact.reason, 'mime_unsupported');
    } finally {
      workerApi.terminate();
    }
  });
});
