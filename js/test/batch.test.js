// Batch API files through the gate in Node: `Gate.admitBatchLine` / `checkBatchFile` (the
// component's exports) and `admitBatch` from @mediagate/preflight/batch, which must write what
// `mediagate admit-batch FILE --api API -o OUT --report REPORT` writes, byte for byte. The batch
// files are made here: OpenAI JSON lines with every kind of line the host handles on its own
// (blank, CRLF, no final newline, not UTF-8, over 64 MiB), Anthropic JSON lines, and the Anthropic
// `{"requests": [...]}` document.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';

import * as mediagate from '../src/index.js';
import { createWorkerGate } from '../src/worker.js';
import { BatchInputError, LINE_LIMIT, admitBatch } from '../src/batch.js';
import { ARTIFACTS, CORPUS, PKG_DIR, REPO_ROOT, SVG_BYTES, noisePng, runCli } from './helpers.js';
import { b64, widePng } from './fixtures.js';
import { imageSize } from './provider-server.js';

const scratch = mkdtempSync(join(tmpdir(), 'mediagate-batch-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const enc = (text) => Buffer.from(text, 'utf8');
const dataUrl = (mime, bytes) => `data:${mime};base64,${b64(bytes)}`;

/** An OpenAI Batch line: a chat completion whose user message holds `content`. */
function openaiLine(id, content, { url = '/v1/chat/completions', method = 'POST' } = {}) {
  return JSON.stringify({ custom_id: id, method, url, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] } });
}
const imageUrl = (mime, bytes) => ({ type: 'image_url', image_url: { url: dataUrl(mime, bytes) } });
const ask = { type: 'text', text: 'What does this show?' };

/** An Anthropic Message Batches request: `params` is a Messages request whose user message holds `content`. */
function anthropicItem(id, content) {
  return JSON.stringify({ custom_id: id, params: { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content }] } });
}
const anthropicImage = (mime, bytes) => ({ type: 'image', source: { type: 'base64', media_type: mime, data: b64(bytes) } });

/** `bytes` cut into its lines, each with its own break ("\n", "\r\n", or none at the end). */
function physicalLines(bytes) {
  const lines = [];
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, start);
    if (nl < 0) {
      if (start < bytes.length) lines.push(bytes.subarray(start));
      return lines;
    }
    lines.push(bytes.subarray(start, nl + 1));
    start = nl + 1;
  }
}

/** `mediagate admit-batch` on FILE, its output and report read back (null when it left no file). */
async function cliBatch(file, api, tag, extra = []) {
  const out = join(scratch, `${tag}.cli.out`);
  const report = join(scratch, `${tag}.cli.report`);
  const { code, stderr } = await runCli(['admit-batch', file, '--api', api, '-o', out, '--report', report, ...extra]);
  return { code, stderr, out: existsSync(out) ? readFileSync(out) : null, report: existsSync(report) ? readFileSync(report) : null };
}

/** `admitBatch` on FILE, to files, its output and report read back (null when it left no file). */
async function jsBatch(file, api, tag, options = {}) {
  const out = join(scratch, `${tag}.js.out`);
  const report = join(scratch, `${tag}.js.report`);
  const summary = await admitBatch(file, out, { api, report, ...options });
  return { summary, out: existsSync(out) ? readFileSync(out) : null, report: existsSync(report) ? readFileSync(report) : null };
}

const reportLines = (report) => report.toString('utf8').trimEnd().split('\n').map((l) => JSON.parse(l));

let good; // a small PNG the gate passes as it is
let wide; // 2400 x 10: fitted to 2000 px
let exifJpeg; // a JPEG carrying GPS EXIF: passed without it
const files = {};
const lines = {}; // the OpenAI file's lines, each with its break

before(async () => {
  good = await noisePng(64, 48, 5);
  wide = await widePng();
  exifJpeg = readFileSync(join(CORPUS, 'metadata', 'gps-exif.jpg'));

  // The OpenAI file: one line of each kind, numbered as the report numbers them.
  lines.openai = [
    enc(`${openaiLine('good-png', [ask, imageUrl('image/png', good)])}\n`), // 1 unchanged
    enc(`${openaiLine('wide-png', [ask, imageUrl('image/png', wide)])}\n`), // 2 changed
    enc(' \t\n'), // 3 blank: copied, not a request
    enc(`${openaiLine('svg-as-png', [ask, imageUrl('image/png', SVG_BYTES)])}\n`), // 4 refused_blocks
    enc(`${openaiLine('text-only', 'Say hello.')}\r\n`), // 5 unchanged, CRLF
    enc(`${openaiLine('exif-jpeg', [imageUrl('image/jpeg', exifJpeg)])}\r\n`), // 6 changed, CRLF
    Buffer.concat([enc(openaiLine('latin-1', 'caf').slice(0, -5)), Buffer.from([0xe9]), enc('"}]}}\n')]), // 7 not UTF-8
    enc(`${JSON.stringify({ custom_id: 'embed', method: 'POST', url: '/v1/embeddings', body: { model: 'text-embedding-3-small', input: 'hello' } })}\n`), // 8 unchanged
    enc(`${openaiLine('get', 'Say hello.', { method: 'GET' })}\n`), // 9 refused: the Batch API takes POST
    enc(openaiLine('last-wide', [imageUrl('image/png', wide)])), // 10 changed, no final newline
  ];
  files.openai = join(scratch, 'openai.jsonl');
  writeFileSync(files.openai, Buffer.concat(lines.openai));

  const items = [
    anthropicItem('a-good', [anthropicImage('image/png', good), ask]), // 1 unchanged
    anthropicItem('a-svg', [anthropicImage('image/png', SVG_BYTES), ask]), // 2 refused_blocks
    anthropicItem('a-wide', [anthropicImage('image/png', wide)]), // 3 changed
    JSON.stringify({ custom_id: 'a-no-params' }), // 4 refused: not a request
    anthropicItem('a-text', 'Say hello.'), // 5 unchanged
  ];
  lines.anthropic = items;
  files.anthropic = join(scratch, 'anthropic.jsonl');
  writeFileSync(files.anthropic, `${items.join('\n')}\n`);
  // The document POST /v1/messages/batches takes, as a person would indent it.
  files.document = join(scratch, 'anthropic.json');
  writeFileSync(files.document, `{\n  "requests": [\n    ${items.join(',\n    ')}\n  ]\n}\n`);
});

describe('Gate.admitBatchLine and checkBatchFile', () => {
  it('answers the report line, and the request as it goes out', async () => {
    const gate = await mediagate.createGate();
    const text = openaiLine('good-png', [ask, imageUrl('image/png', good)]);
    const same = gate.admitBatchLine(text, { api: 'openai', number: 7 });
    assert.equal(same.outcome, 'unchanged');
    assert.equal(same.line, text, 'unchanged: the input itself');
    assert.equal(same.number, 7);
    assert.equal(same.custom_id, 'good-png');
    assert.deepEqual(Object.keys(same), Object.keys(JSON.parse(same.json)), 'only the report line is enumerable');

    const svg = gate.admitBatchLine(openaiLine('svg', [ask, imageUrl('image/png', SVG_BYTES)]), { api: 'openai', number: 2 });
    assert.equal(svg.outcome, 'refused_blocks');
    assert.deepEqual(svg.refused, ['/messages/0/content/1']);
    const sent = JSON.parse(svg.line);
    assert.equal(sent.custom_id, 'svg');
    assert.equal(sent.body.messages[0].content[1].type, 'text', 'the refused block replaced in its slot by words');
    assert.match(sent.body.messages[0].content[1].text, /magic_mismatch/);

    const wideLine = gate.admitBatchLine(anthropicItem('w', [anthropicImage('image/png', wide)]), { api: 'anthropic' });
    assert.equal(wideLine.outcome, 'changed');
    assert.equal(wideLine.number, 1, 'number defaults to 1');
    const fitted = Buffer.from(JSON.parse(wideLine.line).params.messages[0].content[0].source.data, 'base64');
    assert.equal(imageSize(fitted).width, 2000);

    const notRequest = gate.admitBatchLine('{"custom_id":"x"}', { api: 'anthropic', number: 3 });
    assert.equal(notRequest.outcome, 'refused');
    assert.equal(notRequest.line, null);
    assert.equal(notRequest.refusal.unusable, true);

    // Per call options (fitting off: 2400 px is within Anthropic's 8000), and the same answer
    // through the module-level function.
    const asIs = gate.admitBatchLine(anthropicItem('w', [anthropicImage('image/png', wide)]), { api: 'anthropic', downsample: false });
    assert.equal(asIs.outcome, 'unchanged');
    const shared = await mediagate.admitBatchLine(text, { api: 'openai', number: 7 });
    assert.equal(shared.json, same.json);
  });

  it('checks its arguments', async () => {
    const gate = await mediagate.createGate();
    assert.throws(() => gate.admitBatchLine('{}', { number: 1 }), /api must be one of openai, anthropic/);
    assert.throws(() => gate.admitBatchLine('{}'), TypeError);
    assert.throws(() => gate.admitBatchLine('{}', { api: 'openai', number: 0 }), /options.number must be a whole number from 1/);
    assert.throws(() => gate.admitBatchLine('{}', { api: 'openai', verfy: 'full' }), /unknown option "verfy"/);
    assert.throws(() => gate.admitBatchLine(Buffer.from('{}'), { api: 'openai' }), /line must be a string/);
    assert.throws(() => gate.checkBatchFile('gemini', 1, 1), TypeError);
    assert.throws(() => gate.checkBatchFile('openai', -1, 1), /requests must be a whole number/);
  });

  it("names the Batch API's whole-file rules a file breaks", async () => {
    const gate = await mediagate.createGate();
    assert.deepEqual(gate.checkBatchFile('openai', 50_000, 200_000_000), []);
    const broken = gate.checkBatchFile('openai', 50_001, 200_000_001);
    assert.deepEqual(
      broken.map((r) => [r.rule, r.limit, r.actual]),
      [
        ['openai.batch_requests', 50_000, 50_001],
        ['openai.batch_file_bytes', 200_000_000, 200_000_001],
      ],
    );
    assert.deepEqual(Object.keys(broken[0]), ['rule', 'limit', 'actual', 'message'], "the summary's key order");
    assert.deepEqual(
      gate.checkBatchFile('anthropic', 100_001, 1).map((r) => r.rule),
      ['anthropic.batch_requests'],
    );
  });

  it('answers the same in a Worker', async () => {
    const worker = await createWorkerGate();
    try {
      const gate = await mediagate.createGate();
      const text = anthropicItem('a-svg', [anthropicImage('image/png', SVG_BYTES)]);
      const inWorker = await worker.admitBatchLine(text, { api: 'anthropic', number: 4 });
      const here = gate.admitBatchLine(text, { api: 'anthropic', number: 4 });
      assert.equal(inWorker.json, here.json);
      assert.equal(inWorker.line, here.line);
      assert.deepEqual(await worker.checkBatchFile('openai', 50_001, 1), gate.checkBatchFile('openai', 50_001, 1));
      await assert.rejects(worker.admitBatchLine(text, { api: 'nope' }), TypeError);
    } finally {
      worker.terminate();
    }
  });
});

describe('admitBatch: OpenAI JSON lines', () => {
  it('writes every request in order, the untouched ones byte for byte', async () => {
    const { summary, out, report } = await jsBatch(files.openai, 'openai', 'openai-placeholder');
    const outLines = physicalLines(out);
    const input = lines.openai;
    // Lines 7 (not UTF-8) and 9 (refused whole) are left out; every other keeps its place.
    const kept = [0, 1, 2, 3, 4, 5, 7, 9];
    assert.equal(outLines.length, kept.length);
    for (const i of [0, 2, 4, 7]) {
      assert.deepEqual(outLines[kept.indexOf(i)], input[i], `line ${i + 1} byte for byte`);
    }
    const ids = outLines.filter((l) => l.toString().trim() !== '').map((l) => JSON.parse(l.toString()).custom_id);
    assert.deepEqual(ids, ['good-png', 'wide-png', 'svg-as-png', 'text-only', 'exif-jpeg', 'embed', 'last-wide']);
    // Each line keeps its own break: CRLF on the changed line 6, none after the changed last line.
    assert.ok(outLines[5].subarray(-2).equals(Buffer.from('\r\n')), 'line 6 keeps its CRLF');
    assert.notEqual(outLines[5].toString(), input[5].toString(), 'line 6 changed');
    assert.notEqual(outLines[7].at(-1), 0x0a, 'the last line still has no newline');
    const fitted = JSON.parse(outLines[1].toString()).body.messages[0].content[1].image_url.url;
    assert.equal(imageSize(Buffer.from(fitted.split(',')[1], 'base64')).width, 2000);
    const jpeg = JSON.parse(outLines[5].toString()).body.messages[0].content[0].image_url.url;
    assert.ok(Buffer.from(jpeg.split(',')[1], 'base64').length < exifJpeg.length, 'the EXIF went');

    const rows = reportLines(report);
    assert.deepEqual(
      rows.slice(0, -1).map((r) => [r.number, r.outcome]),
      [
        [2, 'changed'],
        [4, 'refused_blocks'],
        [6, 'changed'],
        [7, 'refused'],
        [9, 'refused'],
        [10, 'changed'],
      ],
    );
    // The host's own refusal, in the contract's words.
    assert.equal(
      report.toString().split('\n')[3],
      '{"number":7,"custom_id":null,"outcome":"refused","changed":[],"refused":[],"refusal":{"unusable":true,"reason":"undecodable",' +
        `"bytes":${input[6].length - 1},"limit":null,"rule":null,"message":"line 7 is not UTF-8 text"}}`,
    );
    assert.deepEqual(rows.at(-1), { summary: { ...summary } });
    assert.equal(summary.json, report.toString().trimEnd().split('\n').at(-1));
    assert.deepEqual(
      { ...summary },
      {
        api: 'openai',
        requests: 9,
        unchanged: 3,
        changed: 3,
        refused_blocks: 1,
        refused: 2,
        left_out: 2,
        bytes_in: readFileSync(files.openai).length,
        bytes_out: out.length,
        file_rules: [],
        stopped_at: null,
      },
    );
    assert.equal(summary.exitCode, 1);
  });

  it('onRefusal drop leaves out the requests with refused blocks too', async () => {
    const { summary, out } = await jsBatch(files.openai, 'openai', 'openai-drop', { onRefusal: 'drop' });
    const ids = physicalLines(out)
      .filter((l) => l.toString().trim() !== '')
      .map((l) => JSON.parse(l.toString()).custom_id);
    assert.deepEqual(ids, ['good-png', 'wide-png', 'text-only', 'exif-jpeg', 'embed', 'last-wide']);
    assert.equal(summary.left_out, 3);
    assert.equal(summary.refused_blocks, 1);
  });

  it('onRefusal fail stops at the first refusal and leaves no output file', async () => {
    const { summary, out, report } = await jsBatch(files.openai, 'openai', 'openai-fail', { onRefusal: 'fail' });
    assert.equal(out, null, 'the output file was removed');
    assert.equal(summary.stopped_at, 4);
    assert.equal(summary.exitCode, 1);
    const rows = reportLines(report);
    assert.deepEqual(rows.map((r) => r.number ?? 'summary'), [2, 4, 'summary']);
  });

  for (const [mode, extra] of [
    ['placeholder', []],
    ['drop', ['--on-refusal', 'drop']],
    ['fail', ['--on-refusal', 'fail']],
  ]) {
    it(`writes what mediagate admit-batch writes, byte for byte (--on-refusal ${mode})`, async () => {
      const cli = await cliBatch(files.openai, 'openai', `openai-${mode}`, extra);
      assert.ok(cli.code === 0 || cli.code === 1, cli.stderr);
      const js = await jsBatch(files.openai, 'openai', `openai-${mode}`, { onRefusal: mode });
      assert.deepEqual(js.out, cli.out, 'the output');
      assert.equal(js.report.toString(), cli.report.toString(), 'the report');
      assert.equal(js.summary.exitCode, cli.code);
    });
  }

  it('converts with convert: true, as admit-batch --convert does (the SVG claimed as PNG goes as a PNG)', async () => {
    const cli = await cliBatch(files.openai, 'openai', 'openai-convert', ['--convert']);
    const js = await jsBatch(files.openai, 'openai', 'openai-convert', { convert: true });
    const svgLine = reportLines(js.report).find((r) => r.number === 4);
    assert.equal(svgLine.outcome, 'changed');
    assert.equal(svgLine.conversions[0].from, 'image/svg+xml');
    assert.deepEqual(js.out, cli.out, 'the output');
    assert.equal(js.report.toString(), cli.report.toString(), 'the report');
    assert.equal(js.summary.exitCode, cli.code);
  });

  it('judges in Workers (jobs 3) and writes the same bytes in the same order', async () => {
    const one = await jsBatch(files.openai, 'openai', 'openai-jobs1');
    const three = await jsBatch(files.openai, 'openai', 'openai-jobs3', { jobs: 3 });
    assert.deepEqual(three.out, one.out);
    assert.equal(three.report.toString(), one.report.toString());
  });

  it('reads a stream in small chunks and writes to a stream', async () => {
    const file = await jsBatch(files.openai, 'openai', 'openai-file');
    const sink = new PassThrough();
    const got = [];
    sink.on('data', (d) => got.push(d));
    const report = new PassThrough();
    const reported = [];
    report.on('data', (d) => reported.push(d));
    // 7-byte chunks: every line break, CRLF and multi-byte character falls across chunks somewhere.
    await admitBatch(createReadStream(files.openai, { highWaterMark: 7 }), sink, { api: 'openai', report });
    assert.deepEqual(Buffer.concat(got), file.out);
    assert.equal(Buffer.concat(reported).toString(), file.report.toString());
  });

  it('refuses a line over 64 MiB unread, as the CLI does, and goes on', async () => {
    const file = join(scratch, 'long.jsonl');
    const long = Buffer.alloc(LINE_LIMIT + 1, 0x61);
    // Its CRLF is its line break: the line is LINE_LIMIT + 1 bytes long.
    writeFileSync(file, Buffer.concat([enc(`${openaiLine('before', 'hi')}\n`), long, enc(`\r\n${openaiLine('after', 'hi')}\n`)]));
    const js = await jsBatch(file, 'openai', 'long');
    const cli = await cliBatch(file, 'openai', 'long');
    rmSync(file);
    assert.equal(js.summary.refused, 1);
    assert.equal(
      js.report.toString().split('\n')[0],
      '{"number":2,"custom_id":null,"outcome":"refused","changed":[],"refused":[],"refusal":{"unusable":true,"reason":"undecodable",' +
        `"bytes":${LINE_LIMIT + 1},"limit":${LINE_LIMIT},"rule":null,"message":"line 2 is longer than the ${LINE_LIMIT} bytes mediagate reads of one request"}}`,
    );
    assert.deepEqual(js.out, cli.out);
    assert.equal(js.report.toString(), cli.report.toString());
  });

  it('a request the gate stops on (the memory limit) is refused in the CLI\'s words; the next is judged anew', async () => {
    const file = join(scratch, 'oom.jsonl');
    const photo = readFileSync(join(CORPUS, 'bench', 'photo-12mp.jpg'));
    const big = openaiLine('photo', [imageUrl('image/jpeg', photo)]);
    const after = openaiLine('after', [ask, imageUrl('image/png', good)]);
    writeFileSync(file, `${openaiLine('before', 'hi')}\n${big}\n${after}\n`);
    for (const jobs of [1, 2]) {
      // 16 MiB: the small requests fit, decoding 12 MP does not.
      const { summary, out, report } = await jsBatch(file, 'openai', `oom-${jobs}`, { memoryLimit: 16 << 20, jobs });
      assert.equal(
        report.toString().split('\n')[0],
        '{"number":2,"custom_id":null,"outcome":"refused","changed":[],"refused":[],"refusal":{"unusable":true,"reason":"undecodable",' +
          `"bytes":${Buffer.byteLength(big)},"limit":null,"rule":null,"message":"the gate could not judge request 2: ` +
          'the guest ran out of memory (limit 16 MiB) and was stopped; it does not go"}}',
        `jobs ${jobs}`,
      );
      assert.equal(out.toString(), `${openaiLine('before', 'hi')}\n${after}\n`, `jobs ${jobs}: the others go as they came`);
      assert.deepEqual([summary.unchanged, summary.refused], [2, 1]);
    }
  });

  it('checks its options, and names an input it cannot read', async () => {
    const out = join(scratch, 'never.out');
    await assert.rejects(admitBatch(files.openai, out, {}), /api must be one of openai, anthropic/);
    await assert.rejects(admitBatch(files.openai, out, { api: 'openai', onRefusal: 'skip' }), /onRefusal must be one of/);
    await assert.rejects(admitBatch(files.openai, out, { api: 'openai', jobs: 0 }), /jobs must be a whole number/);
    await assert.rejects(admitBatch(files.openai, out, { api: 'openai', verfy: 'full' }), /unknown option "verfy"/);
    await assert.rejects(admitBatch(join(scratch, 'missing.jsonl'), out, { api: 'openai' }), BatchInputError);
    assert.equal(existsSync(out), false, 'no output left behind');
  });
});

describe('admitBatch: Anthropic', () => {
  it('JSON lines: the same bytes as the CLI, every mode', async () => {
    for (const [mode, extra] of [
      ['placeholder', []],
      ['drop', ['--on-refusal', 'drop']],
      ['fail', ['--on-refusal', 'fail']],
    ]) {
      const cli = await cliBatch(files.anthropic, 'anthropic', `anthropic-${mode}`, extra);
      const js = await jsBatch(files.anthropic, 'anthropic', `anthropic-${mode}`, { onRefusal: mode });
      assert.deepEqual(js.out, cli.out, `${mode}: the output`);
      assert.equal(js.report.toString(), cli.report.toString(), `${mode}: the report`);
      assert.equal(js.summary.exitCode, cli.code, mode);
    }
    const { out } = await jsBatch(files.anthropic, 'anthropic', 'anthropic-ids');
    const sent = out.toString().trimEnd().split('\n');
    assert.deepEqual(
      sent.map((l) => JSON.parse(l).custom_id),
      ['a-good', 'a-svg', 'a-wide', 'a-text'],
    );
    assert.equal(sent[0], lines.anthropic[0], 'unchanged: byte for byte');
    assert.equal(sent[3], lines.anthropic[4]);
  });

  it('the {"requests": [...]} document: items judged in place, the rest copied, still JSON when items are left out', async () => {
    for (const mode of ['placeholder', 'drop']) {
      const js = await jsBatch(files.document, 'anthropic', `document-${mode}`, { onRefusal: mode });
      const sent = JSON.parse(js.out.toString());
      const ids = sent.requests.map((r) => r.custom_id);
      assert.deepEqual(ids, mode === 'drop' ? ['a-good', 'a-wide', 'a-text'] : ['a-good', 'a-svg', 'a-wide', 'a-text']);
      assert.ok(js.out.toString().startsWith('{\n  "requests": [\n    '), 'the bytes around the items as they were');
      assert.ok(js.out.toString().includes(lines.anthropic[0]), 'an unchanged item byte for byte');
      const rows = reportLines(js.report);
      assert.deepEqual(rows.slice(0, -1).map((r) => [r.number, r.outcome]), [
        [2, 'refused_blocks'],
        [3, 'changed'],
        [4, 'refused'],
      ]);
      assert.equal(rows.at(-1).summary.requests, 5);

      const cli = await cliBatch(files.document, 'anthropic', `document-${mode}`, mode === 'drop' ? ['--on-refusal', 'drop'] : []);
      assert.deepEqual(js.out, cli.out, `${mode}: the output`);
      assert.equal(js.report.toString(), cli.report.toString(), `${mode}: the report`);
    }
  });

  it('the document read 7 bytes at a time: the same bytes', async () => {
    const whole = await jsBatch(files.document, 'anthropic', 'document-whole', { onRefusal: 'drop' });
    const got = [];
    const sink = new PassThrough();
    sink.on('data', (d) => got.push(d));
    await admitBatch(createReadStream(files.document, { highWaterMark: 7 }), sink, { api: 'anthropic', onRefusal: 'drop' });
    assert.deepEqual(Buffer.concat(got), whole.out);
  });

  it('items that are not objects are each refused whole, and the document stays JSON', async () => {
    const file = join(scratch, 'scalars.json');
    writeFileSync(file, `{"requests":[1, "s]" ,null, ${lines.anthropic[4]}]}`);
    const js = await jsBatch(file, 'anthropic', 'scalars');
    assert.equal(js.out.toString(), `{"requests":[ ${lines.anthropic[4]}]}`);
    assert.deepEqual(reportLines(js.report).slice(0, -1).map((r) => [r.number, r.outcome]), [
      [1, 'refused'],
      [2, 'refused'],
      [3, 'refused'],
    ]);
    const cli = await cliBatch(file, 'anthropic', 'scalars');
    assert.equal(cli.code, 1, cli.stderr);
    assert.deepEqual(js.out, cli.out);
    assert.equal(js.report.toString(), cli.report.toString());
  });

  it('a document that is not well formed cannot be read (the CLI exits 2)', async () => {
    const file = join(scratch, 'broken.json');
    writeFileSync(file, `{"requests": [${lines.anthropic[0]} ${lines.anthropic[4]}]}`);
    await assert.rejects(jsBatch(file, 'anthropic', 'broken'), {
      name: 'BatchInputError',
      message: `the batch document's "requests" array has '{' after item 1 where a comma or ] belongs`,
    });
    assert.equal(existsSync(join(scratch, 'broken.js.out')), false);
    const cli = await cliBatch(file, 'anthropic', 'broken');
    assert.equal(cli.code, 2, cli.stderr);
  });
});

describe('file rules', () => {
  it('a file over the Batch API’s request count breaks its rule, in the summary as the CLI writes it', async () => {
    // 50,001 requests to an endpoint that takes no media: the gate passes each as it is.
    const file = join(scratch, 'many.jsonl');
    const line = enc(`${JSON.stringify({ custom_id: 'e', method: 'POST', url: '/v1/embeddings', body: { model: 'm', input: 'x' } })}\n`);
    writeFileSync(file, Buffer.concat(Array.from({ length: 50_001 }, () => line)));
    const started = performance.now();
    const js = await jsBatch(file, 'openai', 'many', { jobs: 2 });
    const ms = performance.now() - started;
    console.log(`admitBatch: 50,001 lines in ${ms.toFixed(0)} ms (jobs 2)`);
    const cli = await cliBatch(file, 'openai', 'many', ['--jobs', '2']);
    assert.deepEqual(js.out, readFileSync(file), 'every request as it came');
    assert.deepEqual(js.summary.file_rules.map((r) => r.rule), ['openai.batch_requests']);
    assert.equal(js.summary.exitCode, 1);
    assert.equal(cli.code, 1);
    assert.equal(js.report.toString(), cli.report.toString());
  });
});

describe('README: the batch example runs as written', () => {
  const readme = readFileSync(join(PKG_DIR, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Batch files\n'));
  const snippet = section.match(/```js\n([\s\S]*?)```/)?.[1];

  it('is in the README and, word for word, in docs/bulk.md', { skip: !existsSync(join(REPO_ROOT, 'docs', 'bulk.md')) && 'docs/bulk.md is not written yet' }, () => {
    assert.ok(snippet, 'README.md has a ## Batch files section with a ```js block');
    assert.ok(readFileSync(join(REPO_ROOT, 'docs', 'bulk.md'), 'utf8').includes(snippet), 'docs/bulk.md quotes the README snippet verbatim');
  });

  it('admits batch.jsonl into batch.admitted.jsonl, as the CLI would', async () => {
    assert.ok(snippet, 'README.md has a ## Batch files section with a ```js block');
    const dir = join(ARTIFACTS, 'snippets');
    mkdirSync(dir, { recursive: true });
    const script = join(dir, 'batch-0.mjs'); // inside the package, so @mediagate/preflight/batch resolves to it
    writeFileSync(script, snippet);
    const work = mkdtempSync(join(scratch, 'snippet-'));
    writeFileSync(join(work, 'batch.jsonl'), readFileSync(files.openai));
    const run = await new Promise((resolve) => {
      execFile(process.execPath, [script], { cwd: work, encoding: 'utf8' }, (error, stdout, stderr) =>
        resolve({ code: error ? error.code : 0, stdout, stderr }),
      );
    });
    assert.equal(run.code, 1, `refusals make the exit code 1: ${run.stderr}`);
    assert.equal(run.stdout, '9 requests: 3 changed, 3 refused; see batch.report.jsonl\n');
    const cli = await cliBatch(join(work, 'batch.jsonl'), 'openai', 'snippet');
    assert.deepEqual(readFileSync(join(work, 'batch.admitted.jsonl')), cli.out);
    assert.equal(readFileSync(join(work, 'batch.report.jsonl'), 'utf8'), cli.report.toString());
  });
});
