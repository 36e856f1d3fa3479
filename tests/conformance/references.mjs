// The conformance suite's JavaScript references, in one process: libvips through sharp, and
// Chromium's image decoders through createImageBitmap in a page served on 127.0.0.1.
// Reads a JSON list of {path, format} from the file named by argv[2]; writes one JSON object to
// stdout: {versions, sharp: [...], chromium: [...]}, each entry null (the reference does not read
// that format) or {ok, error?}.

import { readFile } from 'node:fs/promises';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { chromium } from 'playwright-core';
// Headless Debian Chromium with no network: the launch the JavaScript package's tests use.
import { CHROMIUM as CHROMIUM_PATH, CHROMIUM_ARGS } from '../../js/test/helpers.js';

// Each reference's formats: what it decodes, as its own documentation says.
const SHARP_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp', 'tiff']);
const CHROMIUM_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp', 'bmp', 'ico']);

const items = JSON.parse(readFileSync(process.argv[2], 'utf8'));

/** Runs `work(item, index)` over `list` with at most `limit` at once. */
async function pool(list, limit, work) {
  const results = new Array(list.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, list.length) }, async () => {
    while (next < list.length) {
      const i = next++;
      results[i] = await work(list[i], i);
    }
  });
  await Promise.all(runners);
  return results;
}

/** sharp at its defaults (failOn 'warning', its pixel limit): the first page or frame decoded to raw pixels. */
async function sharpDecode(item) {
  if (!SHARP_FORMATS.has(item.format)) return null;
  try {
    const input = await readFile(item.path);
    const { info } = await sharp(input).raw().toBuffer({ resolveWithObject: true });
    return { ok: true, width: info.width, height: info.height };
  } catch (e) {
    return { ok: false, error: String(e.message ?? e).split('\n')[0] };
  }
}

async function chromiumDecodeAll(list) {
  const wanted = list.map((item, i) => ({ item, i })).filter(({ item }) => CHROMIUM_FORMATS.has(item.format));
  const results = new Array(list.length).fill(null);
  if (wanted.length === 0) return { results, version: null };
  const server = createServer(async (req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>conformance</title>');
      return;
    }
    const match = /^\/file\/(\d+)$/.exec(req.url ?? '');
    if (!match || !list[Number(match[1])]) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(list[Number(match[1])].path);
      // No type given: the decoder is chosen by the bytes, as a browser sniffs an image.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(500).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const profile = mkdtempSync(join(tmpdir(), 'mediagate-conformance-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  try {
    const version = context.browser()?.version() ?? null;
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(base + '/');
    const indexes = wanted.map(({ i }) => i);
    const batch = 64;
    for (let start = 0; start < indexes.length; start += batch) {
      const slice = indexes.slice(start, start + batch);
      const answers = await page.evaluate(async (ids) => {
        const one = async (id) => {
          try {
            const blob = await (await fetch(`/file/${id}`)).blob();
            const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 10 s')), 10_000));
            const bitmap = await Promise.race([createImageBitmap(blob), timeout]);
            const answer = { ok: true, width: bitmap.width, height: bitmap.height };
            bitmap.close();
            return answer;
          } catch (e) {
            return { ok: false, error: String(e && e.message ? e.message : e) };
          }
        };
        const out = [];
        for (let k = 0; k < ids.length; k += 8) out.push(...(await Promise.all(ids.slice(k, k + 8).map(one))));
        return out;
      }, slice);
      slice.forEach((i, k) => {
        results[i] = answers[k];
      });
    }
    return { results, version };
  } finally {
    await context.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

const [sharpResults, chromiumRun] = await Promise.all([
  pool(items, 4, sharpDecode),
  chromiumDecodeAll(items),
]);
process.stdout.write(
  JSON.stringify({
    versions: { sharp: sharp.versions.sharp, libvips: sharp.versions.vips, chromium: chromiumRun.version },
    sharp: sharpResults,
    chromium: chromiumRun.results,
  }),
);
