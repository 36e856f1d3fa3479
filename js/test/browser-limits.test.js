// The CLI's limits in Chromium: the PDF bomb of limits.test.js gets the CLI's words (out of memory
// at its limit) from the in-page gate and from the Worker gate, and the next call answers; a Worker
// call past its deadline is answered with the CLI's words and a new Worker answers after.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { flateBombPdf } from './bombs.js';
import { launchChromium, runCli } from './helpers.js';

let server;
let browser;
let page;
const scratch = mkdtempSync(join(tmpdir(), 'mediagate-browser-limits-'));

describe('limits in Chromium', { timeout: 300_000 }, () => {
  before(async () => {
    const { startServer } = await import('../demo/serve.js');
    server = await startServer();
    browser = await launchChromium();
    page = await browser.context.newPage();
    await page.goto(server.url);
    await page.waitForSelector('body[data-state="ready"]', { timeout: 60_000 });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('a PDF bomb gets the CLI’s verdict in the page and in a Worker; the next call answers', async () => {
    const bomb = flateBombPdf();
    const file = join(scratch, 'bomb.pdf');
    writeFileSync(file, bomb);
    const cli = JSON.parse((await runCli(['admit', file, '--page', '1', '--json'])).stdout);
    const answers = await page.evaluate(async (bytes) => {
      const input = new Uint8Array(bytes);
      const settle = (p) =>
        p.then(
          (v) => ({ ok: v.ok, reason: v.reason }),
          (e) => ({ name: e.name, kind: e.kind, message: e.message }),
        );
      const inPage = await import('/src/index.js');
      const inWorker = await import('/src/worker.js');
      const canvas = document.createElement('canvas');
      canvas.width = 64;
      canvas.height = 32;
      canvas.getContext('2d').fillRect(0, 0, 64, 32);
      const png = new Uint8Array(await (await new Promise((r) => canvas.toBlob(r, 'image/png'))).arrayBuffer());
      return {
        page: await settle(inPage.admitPdfPage(input, 1)),
        pageAfter: await settle(inPage.admit(png, 'image/png', { convert: true })),
        worker: await settle(inWorker.admitPdfPage(input, 1)),
        workerAfter: await settle(inWorker.admit(png, 'image/png', { convert: true })),
      };
    }, [...bomb]);
    for (const where of ['page', 'worker']) {
      const js = answers[where];
      if (cli.error) {
        assert.equal(js.name, 'GateError', `${where}: ${JSON.stringify(answers)}`);
        assert.equal(js.kind, 'out_of_memory');
        assert.equal(`${file}: ${js.message.replace(/^admit(PdfPage)?: /, '')}`, cli.error.message);
      } else {
        assert.equal(js.reason, cli.reason, where);
      }
      assert.equal(answers[`${where}After`].ok, true, `${where}: the next call answers`);
    }
  });

  it('a Worker call past its deadline ends the Worker, in the CLI’s words; a new Worker answers', async () => {
    const answers = await page.evaluate(async () => {
      const inWorker = await import('/src/worker.js');
      const canvas = document.createElement('canvas');
      canvas.width = 3000;
      canvas.height = 3000;
      const ctx = canvas.getContext('2d');
      const noise = ctx.createImageData(3000, 3000);
      for (let i = 0; i < noise.data.length; i++) noise.data[i] = (i * 2654435761) >>> 24;
      ctx.putImageData(noise, 0, 0);
      const png = new Uint8Array(await (await new Promise((r) => canvas.toBlob(r, 'image/png'))).arrayBuffer());
      const gate = await inWorker.createWorkerGate({ deadlineMs: 250 });
      await gate.admit(png.subarray(0, 16));
      const late = await gate.admit(png, 'image/png').then(
        () => null,
        (e) => ({ name: e.name, kind: e.kind, message: e.message }),
      );
      const fresh = await inWorker.createWorkerGate();
      const after = (await fresh.admit(png.subarray(0, 16))).sniffed === 'image/png';
      fresh.terminate();
      return { late, closed: gate.closed, after };
    });
    assert.deepEqual(answers.late, {
      name: 'GateError',
      kind: 'deadline',
      message: 'admit: the guest exceeded its CPU deadline of 250ms and was interrupted',
    });
    assert.equal(answers.closed, true);
    assert.equal(answers.after, true);
  });
});
