// A user's page, bundled by esbuild from the installed @mediagate/preflight (test/package.test.js).
// esbuild does not follow `new URL('…', import.meta.url)`: the core module is imported through the
// package's `./wasm/*.wasm` export with the `file` loader, and the Worker script is an entry point of
// its own (gate-worker.js: `import '@mediagate/preflight/worker-thread'`).
import * as mediagate from '@mediagate/preflight';
import * as inWorker from '@mediagate/preflight/worker';
import core from '@mediagate/preflight/wasm/mediagate.core.wasm';

const wasmUrls = { 'mediagate.core.wasm': core };
const workerUrl = new URL('./gate-worker.js', import.meta.url);
mediagate.configure({ wasmUrls });
inWorker.configure({ wasmUrls, workerUrl });

const bytesOf = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

window.runChecks = async (goodB64, lyingB64, gifB64) => {
  const good = bytesOf(goodB64);
  const lying = bytesOf(lyingB64);
  // The verdicts' JSON keys (the component's text, parsed): what crosses back to the test.
  const keys = (verdict) => JSON.parse(verdict.json);
  const input = { name: 'picture.png' };
  const out = {
    main: {
      good: keys(await mediagate.admit(good, input)),
      lying: keys(await mediagate.admit(lying, input)),
    },
    worker: {
      good: keys(await inWorker.admit(good, input)),
      lying: keys(await inWorker.admit(new File([lying], 'picture.png'))),
    },
  };
  const gemini = await inWorker.createWorkerGate({ wasmUrls, workerUrl, provider: 'gemini' });
  out.workerGeminiGif = keys(await gemini.admit(bytesOf(gifB64), 'image/gif'));
  gemini.terminate();
  out.workerGif = keys(await inWorker.admit(bytesOf(gifB64), 'image/gif'));
  return out;
};

/** A 4000 x 3000 JPEG drawn on a canvas: gradients and discs, photo-sized. */
async function photo12mp() {
  const canvas = new OffscreenCanvas(4000, 3000);
  const ctx = canvas.getContext('2d');
  const sky = ctx.createLinearGradient(0, 0, 4000, 3000);
  sky.addColorStop(0, '#1d4ed8');
  sky.addColorStop(0.5, '#f59e0b');
  sky.addColorStop(1, '#065f46');
  ctx.fillStyle = sky;
  ctx.fillRect(0, 0, 4000, 3000);
  for (let i = 0; i < 600; i++) {
    ctx.fillStyle = `hsl(${(i * 37) % 360} 70% ${30 + (i % 5) * 10}% / 0.6)`;
    ctx.beginPath();
    ctx.arc((i * 997) % 4000, (i * 613) % 3000, 10 + (i % 9) * 20, 0, 2 * Math.PI);
    ctx.fill();
  }
  return canvas.convertToBlob({ type: 'image/jpeg', quality: 0.92 });
}

window.responsiveness = async () => {
  const photo = await photo12mp();
  const bytes = new Uint8Array(await photo.arrayBuffer());
  await inWorker.admit(bytes.subarray(0, 16)); // the Worker is started and its gate loaded before the clock runs

  let ticks = 0;
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    ticks += 1;
  }, 5);
  const t0 = performance.now();
  const verdict = await inWorker.admit(photo, 'image/jpeg');
  const workerMs = performance.now() - t0;
  const workerTicks = ticks;
  clearInterval(timer);

  // The same photo through the in-thread gate: the page's timer cannot fire during the call.
  const gate = await mediagate.ready();
  let mainTicks = 0;
  const mainTimer = setInterval(() => (mainTicks += 1), 5);
  const t1 = performance.now();
  const mainVerdict = gate.admit(bytes, 'image/jpeg');
  const mainMs = performance.now() - t1;
  const ticksDuringMain = mainTicks;
  clearInterval(mainTimer);

  return {
    size: bytes.length,
    verdict: JSON.parse(verdict.json),
    mainVerdict: JSON.parse(mainVerdict.json),
    workerMs,
    workerTicks,
    workerLongestGap: longest,
    mainMs,
    ticksDuringMain,
  };
};

window.appReady = true;
