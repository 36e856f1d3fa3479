// The npm tarball as a user gets it: `bash scripts/package.sh DIST npm` (at the root) packs js/, the tarball is
// installed (offline) into a clean directory outside the repository, and used from there: in Node
// (a good image admitted, an SVG named .png refused, the Worker entry point, the README's example
// file, gatedFetch against a loopback provider), and through an esbuild bundle of a tiny page in headless Chromium, where the Worker entry
// point keeps the page responsive while a 12 MP photo is fitted.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { PKG_DIR, REPO_ROOT, SVG_BYTES, launchChromium, noisePng } from './helpers.js';
import { GIF_1X1, b64, serveDir } from './fixtures.js';
import { startProvider } from './provider-server.js';

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'mediagate-npm-'));
const app = join(work, 'app'); // the user's project
let tarball;
let goodPng;

after(() => rmSync(work, { recursive: true, force: true }));

describe('npm tarball, installed into a clean directory', { timeout: 300_000 }, () => {
  before(async () => {
    const { stdout } = await run('bash', [join(REPO_ROOT, 'scripts', 'package.sh'), join(work, 'dist'), 'npm'], {
      maxBuffer: 16 << 20,
    });
    tarball = stdout.trim().split('\n').pop();
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'try-mediagate', private: true, type: 'module' }, null, 2)}\n`);
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: app, maxBuffer: 16 << 20 });
    goodPng = await noisePng(64, 48, 3);
    writeFileSync(join(app, 'good.png'), goodPng);
    writeFileSync(join(app, 'lying.png'), SVG_BYTES);
  });

  it('is a public ESM package outside the repository, carrying the component and the example', () => {
    assert.ok(relative(REPO_ROOT, app).startsWith('..'), `${app} is outside the repository`);
    assert.match(tarball, /mediagate-preflight-\d+\.\d+\.\d+\.tgz$/);
    const installed = join(app, 'node_modules', '@mediagate', 'preflight');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    assert.equal(manifest.name, '@mediagate/preflight');
    assert.equal(manifest.private, undefined);
    assert.equal(manifest.type, 'module');
    assert.deepEqual(Object.keys(manifest.dependencies ?? {}), [], 'nothing to fetch at install time');
    const generated = readdirSync(join(installed, 'dist', 'generated'));
    for (const f of ['mediagate.js', 'mediagate.core.wasm', 'mediagate-convert.js', 'mediagate-convert.core.wasm']) {
      assert.ok(generated.includes(f), f);
    }
    // One core module per component (the gate; the converter, fetched only to convert), no WASI shim.
    assert.deepEqual(
      generated.filter((f) => f.endsWith('.wasm')).sort(),
      ['mediagate-convert.core.wasm', 'mediagate.core.wasm'],
    );
    assert.deepEqual(readdirSync(installed).sort(), ['LICENSE', 'README.md', 'dist', 'examples', 'package.json', 'src']);
    // No npm script points at a file the package does not ship (the build, tests and demo stay in js/).
    assert.equal(manifest.scripts, undefined);
    assert.equal(manifest.devDependencies, undefined);
    assert.equal(manifest.license, 'Apache-2.0');
    assert.match(readFileSync(join(installed, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/);
    const readme = readFileSync(join(installed, 'README.md'), 'utf8');
    assert.ok(readme.includes(readFileSync(join(installed, 'examples', 'agent-host.mjs'), 'utf8').trim()));
  });

  it('works from Node: admits a good image, refuses a lying one, in-thread and in a Worker', async () => {
    writeFileSync(
      join(app, 'check.mjs'),
      `import { readFileSync } from 'node:fs';
import { admit } from '@mediagate/preflight';
import { createWorkerGate } from '@mediagate/preflight/worker';
import { recordToolResult } from './node_modules/@mediagate/preflight/examples/agent-host.mjs';

const out = {};
for (const name of ['good.png', 'lying.png']) {
  out[name] = JSON.parse((await admit(readFileSync(name), { name })).json);
}
const worker = await createWorkerGate();
out.worker = JSON.parse((await worker.admit(readFileSync('lying.png'), 'image/png')).json);
worker.terminate();
const history = [];
console.warn = () => {};
const refused = await recordToolResult(history, { id: 't1', name: 'shot' }, {
  content: [{ type: 'image', data: readFileSync('lying.png').toString('base64'), mimeType: 'image/png' }],
});
out.example = { refused: refused.map((r) => r.reason), blocks: history[0].content[0].content.map((b) => b.type) };
console.log(JSON.stringify(out));
`,
    );
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: app });
    const out = JSON.parse(stdout);
    // ESM only: CommonJS reaches it through import().
    writeFileSync(
      join(app, 'check.cjs'),
      `import('@mediagate/preflight').then(async ({ admit }) => {
  const v = await admit(require('node:fs').readFileSync('lying.png'), 'image/png');
  console.log(v.reason);
});
`,
    );
    assert.equal((await run(process.execPath, ['check.cjs'], { cwd: app })).stdout.trim(), 'magic_mismatch');
    assert.equal(out['good.png'].ok, true, JSON.stringify(out['good.png']));
    assert.equal(out['good.png'].width, 64);
    assert.equal(out['lying.png'].ok, false);
    assert.equal(out['lying.png'].reason, 'magic_mismatch');
    assert.equal(out.worker.reason, 'magic_mismatch');
    assert.deepEqual(out.example, { refused: ['magic_mismatch'], blocks: ['text'] });
  });

  it('carries @mediagate/preflight/batch: a batch file admitted from the installed package, in Workers', async () => {
    const image = (name) => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(readFileSync(join(app, name))) } });
    const item = (id, name) => JSON.stringify({ custom_id: id, params: { model: 'm', max_tokens: 8, messages: [{ role: 'user', content: [image(name)] }] } });
    writeFileSync(join(app, 'batch.jsonl'), `${item('good', 'good.png')}\n${item('lying', 'lying.png')}\n`);
    writeFileSync(
      join(app, 'batch-check.mjs'),
      `import { admitBatch } from '@mediagate/preflight/batch';
const s = await admitBatch('batch.jsonl', 'batch.out.jsonl', { api: 'anthropic', onRefusal: 'drop', jobs: 2 });
console.log(JSON.stringify({ ...s, exitCode: s.exitCode }));
`,
    );
    const { stdout } = await run(process.execPath, ['batch-check.mjs'], { cwd: app });
    const summary = JSON.parse(stdout);
    assert.deepEqual([summary.requests, summary.unchanged, summary.refused_blocks, summary.left_out, summary.exitCode], [2, 1, 1, 1, 1]);
    assert.equal(readFileSync(join(app, 'batch.out.jsonl'), 'utf8'), `${item('good', 'good.png')}\n`, 'the good request byte for byte');
  });

  it('carries the integrations: gatedFetch sends a request to a loopback provider through the gate', async () => {
    const provider = await startProvider();
    try {
      writeFileSync(
        join(app, 'fetch-check.mjs'),
        `import { readFileSync } from 'node:fs';
import { gatedFetch } from '@mediagate/preflight/fetch';

const image = (name) => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: readFileSync(name).toString('base64') } });
const res = await gatedFetch()(process.argv[2] + '/v1/messages', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: [image('lying.png'), image('good.png')] }] }),
});
console.log(res.status);
`,
      );
      const { stdout } = await run(process.execPath, ['fetch-check.mjs', provider.url], { cwd: app });
      assert.equal(stdout.trim(), '200');
      assert.equal(provider.records.length, 1);
      const [placeholder, good] = provider.lastJson().messages[0].content;
      assert.equal(placeholder.type, 'text');
      assert.match(placeholder.text, /magic_mismatch/);
      assert.equal(good.source.data, b64(goodPng));
      for (const f of ['fetch.js', 'fetch.d.ts', 'ai-sdk.js', 'ai-sdk.d.ts']) {
        assert.ok(readdirSync(join(app, 'node_modules', '@mediagate', 'preflight', 'src')).includes(f), f);
      }
    } finally {
      await provider.close();
    }
  });

  describe('bundled by esbuild, in headless Chromium', () => {
    let server;
    let browser;
    let page;
    const problems = [];

    before(async () => {
      const site = join(app, 'site');
      mkdirSync(site);
      writeFileSync(join(site, 'gate-worker.js'), "import '@mediagate/preflight/worker-thread';\n");
      cpSync(join(PKG_DIR, 'test', 'bundle', 'app.js'), join(site, 'app.js'));
      const esbuild = await import('esbuild');
      const result = await esbuild.build({
        absWorkingDir: site,
        entryPoints: ['app.js', 'gate-worker.js'],
        bundle: true,
        format: 'esm',
        platform: 'browser',
        target: 'es2022',
        outdir: 'public',
        loader: { '.wasm': 'file' },
        assetNames: '[name]-[hash]',
        logLevel: 'silent',
      });
      assert.deepEqual(result.errors, []);
      writeFileSync(
        join(site, 'public', 'index.html'),
        '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>bundle</title><script type="module" src="./app.js"></script>\n',
      );
      server = await serveDir(join(site, 'public'));
      browser = await launchChromium();
      page = browser.context.pages()[0] ?? (await browser.context.newPage());
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
      });
      await page.goto(`${server.url}index.html`);
      await page.waitForFunction(() => window.appReady === true, null, { timeout: 60_000 });
    });

    after(async () => {
      await browser?.close();
      await server?.close();
    });

    it('the bundle carries the .wasm files it found through the package exports', () => {
      const files = readdirSync(join(app, 'site', 'public'));
      for (const core of ['mediagate.core-']) {
        assert.ok(files.some((f) => f.startsWith(core) && f.endsWith('.wasm')), `${core}*.wasm in ${files}`);
      }
    });

    it('admits a good image and refuses a lying one, on the main thread and in the Worker', async () => {
      const out = await page.evaluate(([good, lying, gif]) => window.runChecks(good, lying, gif), [b64(goodPng), b64(SVG_BYTES), b64(GIF_1X1)]);
      for (const where of ['main', 'worker']) {
        assert.equal(out[where].good.ok, true, `${where}: ${JSON.stringify(out[where].good)}`);
        assert.deepEqual([out[where].good.width, out[where].good.height], [64, 48]);
        assert.equal(out[where].lying.ok, false);
        assert.equal(out[where].lying.reason, 'magic_mismatch');
      }
      assert.equal(out.workerGeminiGif.reason, 'mime_unsupported', 'createWorkerGate options reach the Worker');
      assert.equal(out.workerGif.ok, true);
      assert.deepEqual(problems, []);
    });

    it('keeps the page responsive while the Worker fits a 12 MP photo', async (t) => {
      const r = await page.evaluate(() => window.responsiveness());
      t.diagnostic(
        `12 MP JPEG of ${r.size} bytes: Worker ${r.workerMs.toFixed(0)} ms with ${r.workerTicks} timer ticks ` +
          `(longest gap ${r.workerLongestGap.toFixed(0)} ms); main thread ${r.mainMs.toFixed(0)} ms with ${r.ticksDuringMain} ticks`,
      );
      assert.deepEqual([r.verdict.ok, r.verdict.resized, r.verdict.width, r.verdict.height], [true, true, 2000, 1500]);
      assert.deepEqual(r.verdict, r.mainVerdict, 'the Worker and the main thread give one verdict');
      // The page's own timer kept firing while the Worker worked; during the same call on the main
      // thread it cannot fire at all.
      assert.ok(r.workerTicks >= 3, `only ${r.workerTicks} ticks while the Worker fitted the photo`);
      assert.equal(r.ticksDuringMain, 0);
      assert.deepEqual(problems, []);
    });
  });
});
