// The demo page's picker after a drop: it names the dropped file, not the one picked before, and
// picking the earlier file again is judged again. And the Worker entry point, unbundled, from the
// demo's server. Headless Chromium; fixtures made here.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { noisePng, openDemo } from './helpers.js';

let demo;

async function waitDone(page) {
  await page.waitForSelector('body[data-state="done"]', { timeout: 60_000 });
}

async function rearm(page) {
  await page.evaluate(() => {
    document.body.dataset.state = 'ready';
  });
}

/** What the file input holds (the name its picker shows). */
const pickerNames = (page) => page.evaluate(() => Array.from(document.getElementById('file').files, (f) => f.name));

describe('demo page: picker and drop', { timeout: 120_000 }, () => {
  before(async () => {
    demo = await openDemo();
  });

  after(async () => {
    if (demo) assert.deepEqual(demo.problems, [], 'the page logged no errors');
    await demo?.close();
  });

  it('shows the dropped file in the picker, not the one picked before', async () => {
    const { page } = demo;
    const picked = Buffer.from(await noisePng(40, 30, 5));
    const dropped = Buffer.from(await noisePng(24, 16, 6));

    await rearm(page);
    await page.setInputFiles('#file', { name: 'picked-first.png', mimeType: 'image/png', buffer: picked });
    await waitDone(page);
    assert.deepEqual(await pickerNames(page), ['picked-first.png']);
    assert.equal(await page.locator('#admitted-dims').innerText(), '40 × 30');

    await rearm(page);
    await page.evaluate((b64) => {
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([data], 'dropped-second.png', { type: 'image/png' }));
      const drop = document.getElementById('drop');
      drop.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
      drop.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, dropped.toString('base64'));
    await waitDone(page);
    assert.equal(await page.locator('#file-name').innerText(), 'dropped-second.png');
    assert.equal(await page.locator('#admitted-dims').innerText(), '24 × 16');
    assert.deepEqual(await pickerNames(page), ['dropped-second.png'], 'the picker still names the earlier file');

    // Picking the first file again is a change again, and is judged.
    await rearm(page);
    await page.setInputFiles('#file', { name: 'picked-first.png', mimeType: 'image/png', buffer: picked });
    await waitDone(page);
    assert.equal(await page.locator('#file-name').innerText(), 'picked-first.png');
    assert.equal(await page.locator('#admitted-dims').innerText(), '40 × 30');
  });

  it('serves the Worker entry point unbundled: the default Worker URL and core modules resolve', async () => {
    const png = Buffer.from(await noisePng(30, 20, 8)).toString('base64');
    const answer = await demo.page.evaluate(async (b64) => {
      const inWorker = await import('/src/worker.js');
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const gate = await inWorker.createWorkerGate({ provider: 'openai' });
      try {
        const v = await gate.admit(new Blob([bytes]), 'image/png');
        return { ok: v.ok, dims: { width: v.width, height: v.height }, sniffed: v.sniffed };
      } finally {
        gate.terminate();
      }
    }, png);
    assert.deepEqual(answer, { ok: true, dims: { width: 30, height: 20 }, sniffed: 'image/png' });
  });
});
