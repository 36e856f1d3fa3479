// The package in Node: the wrapper's API over the transpiled component.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, before } from 'node:test';

import * as mediagate from '../src/index.js';
import { instantiate } from '../dist/generated/mediagate.js';
import { CORPUS, PKG_DIR, SVG_BYTES, minimalPdf } from './helpers.js';

const PNG_FILE = join(CORPUS, 'pngsuite', 'basn2c08.png');
const b64 = (bytes) => Buffer.from(bytes).toString('base64');

describe('admit', () => {
  it('admits a PNG, passed through unchanged: the JSON keys of the CLI, the bytes beside them', async () => {
    const bytes = readFileSync(PNG_FILE);
    const v = await mediagate.admit(bytes, 'image/png');
    assert.equal(v.ok, true, v.message);
    assert.deepEqual(Object.keys(v), ['base64_len', 'height', 'kind', 'mime', 'ok', 'original_size', 'reencoded', 'resized', 'width']);
    assert.deepEqual({ ...v }, {
      ok: true,
      kind: 'image',
      mime: 'image/png',
      original_size: bytes.length,
      width: 32,
      height: 32,
      resized: false,
      reencoded: false,
      base64_len: b64(bytes).length,
    });
    assert.equal(JSON.stringify(v), v.json, 'the object is the JSON text parsed, nothing added');
    assert.equal(v.sniffed, 'image/png');
    assert.equal(v.convertible, null);
    assert.equal(mediagate.admittedBytes(v), bytes, 'admitted unchanged: the bytes are the caller\'s own, not a copy');
    assert.deepEqual(mediagate.contentBlock(v), { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(bytes) } });
  });

  it('picks the type in the gate: the bytes when it admits them, else the name', async () => {
    const bytes = readFileSync(PNG_FILE);
    for (const input of [undefined, {}, { name: 'photo.jpg' }, { name: 'noext' }]) {
      const v = await mediagate.admit(bytes, input);
      assert.equal(v.ok, true, `${JSON.stringify(input)}: ${v.message}`);
      assert.equal(v.mime, 'image/png');
    }
    // A file no provider takes, named .png: judged as the name says, refused, with the hint.
    const named = await mediagate.admit(SVG_BYTES, { name: 'diagram.png' });
    assert.equal(named.reason, 'magic_mismatch');
    assert.equal(named.convertible, 'image/svg+xml');
    await assert.rejects(mediagate.admit(bytes, { claimed: 'image/png' }), /unknown input key "claimed"/);
    await assert.rejects(mediagate.admit(bytes, 42), TypeError);
  });

  it('refuses an SVG claimed as PNG as magic_mismatch, in the CLI\'s keys', async () => {
    const v = await mediagate.admit(SVG_BYTES, 'image/png');
    assert.equal(v.ok, false);
    assert.deepEqual({ ...v }, { ok: false, reason: 'magic_mismatch', raw_bytes: SVG_BYTES.length, message: v.message });
    assert.match(v.message, /image\/svg\+xml/);
    assert.equal(v.sniffed, 'image/svg+xml');
    assert.equal('bytes' in v, false, 'a refusal carries no bytes');
    assert.throws(() => mediagate.admittedBytes(v), TypeError);
  });

  it('refuses a type the provider does not take, with the snake_case reason', async () => {
    const v = await mediagate.admit(SVG_BYTES, 'image/svg+xml');
    assert.equal(v.ok, false);
    assert.equal(v.reason, 'mime_unsupported');
  });

  it('refuses the 4.2 MB screenshot without downsampling (limit given), fits it with', async () => {
    const bytes = readFileSync(join(CORPUS, 'bench', 'screenshot-3456x2234.png'));
    const refused = await mediagate.admit(bytes, 'image/png', { downsample: false });
    assert.equal(refused.ok, false);
    assert.equal(refused.reason, 'base64_too_large');
    assert.equal(refused.limit, 5_242_880);
    assert.equal(refused.raw_bytes, bytes.length);
    const admitted = await mediagate.admit(bytes, 'image/png');
    assert.equal(admitted.ok, true);
    assert.equal(admitted.resized, true);
    assert.deepEqual([admitted.width, admitted.height], [2000, 1293]);
    assert.ok(admitted.base64_len <= 5_242_880);
    assert.equal(admitted.bytes.length < bytes.length, true);
  });

  it('takes ArrayBuffer, typed-array views, byte arrays, Blobs and Files (the name is the hint)', async () => {
    const bytes = new Uint8Array(readFileSync(PNG_FILE));
    const expected = (await mediagate.admit(bytes, 'image/png')).json;
    const padded = new Uint8Array(bytes.length + 8);
    padded.set(bytes, 4);
    for (const input of [
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
      new DataView(padded.buffer, 4, bytes.length),
      padded.subarray(4, 4 + bytes.length),
      Array.from(bytes),
      new Blob([bytes]),
    ]) {
      assert.equal((await mediagate.admit(input, 'image/png')).json, expected);
    }
    await assert.rejects(mediagate.admit('not bytes', 'image/png'), TypeError);
    const { File } = await import('node:buffer');
    const file = new File([SVG_BYTES], 'diagram.png');
    assert.equal((await mediagate.admit(file)).reason, 'magic_mismatch', "the File's name is the claim");
    assert.equal((await mediagate.admit(file, 'image/svg+xml')).reason, 'mime_unsupported', 'a claimed type wins');
  });

  it('checks its options', async () => {
    const bytes = readFileSync(PNG_FILE);
    await assert.rejects(mediagate.admit(bytes, 'image/png', { provider: 'acme' }), /provider must be one of/);
    await assert.rejects(mediagate.admit(bytes, 'image/png', { verify: 'deep' }), /verify must be one of/);
    await assert.rejects(mediagate.admit(bytes, 'image/png', { downsample: 'yes' }), /downsample must be a boolean/);
    for (const provider of mediagate.PROVIDERS) {
      const v = await mediagate.admit(bytes, 'image/png', { provider, verify: 'full' });
      assert.equal(v.ok, true, `${provider}: ${v.message}`);
    }
  });
});

describe('documents', () => {
  it('admits a PDF as a document without dimensions', async () => {
    const pdf = minimalPdf();
    const v = await mediagate.admit(pdf, 'application/pdf');
    assert.equal(v.ok, true, v.message);
    assert.deepEqual({ ...v }, {
      ok: true,
      kind: 'document',
      mime: 'application/pdf',
      original_size: pdf.length,
      resized: false,
      reencoded: false,
      base64_len: b64(pdf).length,
    });
    assert.deepEqual(mediagate.contentBlock(v), { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: b64(pdf) } });
    assert.equal((await mediagate.admit(pdf, { name: 'report.PDF' })).json, v.json);
    assert.equal((await mediagate.admit(pdf, { name: 'report.png' })).json, v.json, 'a PDF named .png is the document it is');
  });

  it('refuses a PNG claimed as a PDF', async () => {
    const v = await mediagate.admit(readFileSync(PNG_FILE), 'application/pdf');
    assert.equal(v.ok, false);
    assert.equal(v.reason, 'magic_mismatch');
  });

  it('asks a page of a PDF only', async () => {
    await assert.rejects(mediagate.admit(readFileSync(PNG_FILE), { page: 1 }), /input.page applies to PDFs; the input is image\/png/);
  });
});

describe('the walks close their holes', () => {
  it('refuses a PDF that is not whole, in words', async () => {
    const whole = minimalPdf();
    for (const [bytes, words] of [
      [new TextEncoder().encode('%PDF-1.4\n'), /%%EOF/],
      [whole.slice(0, whole.length - 20), /%%EOF/],
      [new TextEncoder().encode(new TextDecoder().decode(whole).replace('/Root 1 0 R', '/Root 1 0 R /Encrypt 9 0 R')), /encrypted/],
    ]) {
      const v = await mediagate.admit(bytes, 'application/pdf');
      assert.equal(v.ok, false);
      assert.equal(v.reason, 'undecodable');
      assert.match(v.message, words);
    }
  });

  it('refuses a repeated key in an image_url holder and a disguised data: URL', async () => {
    const png = b64(readFileSync(PNG_FILE));
    const svg = b64(SVG_BYTES);
    const text = `[{"type":"image_url","image_url":{"url":"data:image/png;base64,${png}","url":"data:image/png;base64,${svg}"}},` +
      `{"type":"image_url","image_url":{"url":"\\u0000 Da\\tta:image/png;base64,${svg}"}}]`;
    const { refused } = await mediagate.admitToolResult('t', text);
    assert.deepEqual(refused.map((r) => r.reason), ['undecodable', 'magic_mismatch']);
  });
});

describe('admitToolResult', () => {
  const png = readFileSync(PNG_FILE);
  const mcpContent = () => [
    { type: 'text', text: 'two captures' },
    { type: 'image', data: b64(png), mimeType: 'image/png' },
    { type: 'image', data: b64(SVG_BYTES), mimeType: 'image/png' },
  ];

  it('admits the good block and replaces the bad one in its slot', async () => {
    const { content, refused, changed } = await mediagate.admitToolResult('screenshot', mcpContent());
    assert.equal(changed, true);
    assert.deepEqual(refused, [
      { index: 2, path: '/2', type: 'image', reason: 'magic_mismatch', bytes: SVG_BYTES.length, mime: 'image/png' },
    ]);
    assert.equal(content.length, 3);
    assert.deepEqual(content[0], { type: 'text', text: 'two captures' });
    assert.deepEqual(content[1], { type: 'image', data: b64(png), mimeType: 'image/png' });
    assert.equal(content[2].type, 'text');
    assert.match(content[2].text, /"screenshot"/);
    assert.match(content[2].text, /magic_mismatch/);
    assert.doesNotMatch(content[2].text, new RegExp(b64(SVG_BYTES).slice(0, 24)));
  });

  it('takes the content as JSON text too, Anthropic block shape', async () => {
    const blocks = [
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(png) } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: '***' } },
    ];
    const { content, refused } = await mediagate.admitToolResult('fetch', JSON.stringify(blocks));
    assert.deepEqual(content[0], blocks[0]);
    assert.equal(content[1].type, 'text');
    assert.deepEqual(refused, [{ index: 1, path: '/1', type: 'image', reason: 'undecodable', bytes: 0, mime: 'image/png' }]);
  });

  it('answers the JSON of `mediagate admit-tool-result`, with its text and whether it changed beside it', async () => {
    const answer = await mediagate.admitToolResult('screenshot', mcpContent());
    assert.deepEqual(Object.keys(answer), ['content', 'refused']);
    assert.equal(JSON.stringify(answer), answer.json);
  });

  it('leaves content without media as it is', async () => {
    const input = { content: [{ type: 'text', text: 'no pictures here' }], isError: false };
    const answer = await mediagate.admitToolResult('grep', input);
    assert.deepEqual(answer.content, input);
    assert.deepEqual(answer.refused, []);
    assert.equal(answer.changed, false);
    // Text without media comes back byte for byte inside the answer's JSON.
    const spaced = '[ {"type": "text", "text": "x"} ]';
    assert.equal((await mediagate.admitToolResult('grep', spaced)).json, `{"content":${spaced},"refused":[]}`);
    const fromText = await mediagate.admitToolResult('grep', '[{"type":"text","text":"x"}]');
    assert.deepEqual(fromText.content, [{ type: 'text', text: 'x' }]);
  });
});

describe('gate instances', () => {
  it('name the type the bytes carry beside every verdict (`sniffed`)', async () => {
    const gate = await mediagate.createGate();
    assert.equal(gate.admit(readFileSync(PNG_FILE)).sniffed, 'image/png');
    assert.equal(gate.admit(SVG_BYTES).sniffed, 'image/svg+xml');
    assert.equal(gate.admit(minimalPdf()).sniffed, 'application/pdf');
    assert.equal(gate.admit(new TextEncoder().encode('hello')).sniffed, 'text/plain');
    assert.equal((await mediagate.admit(new Uint8Array([0, 1, 2, 3]))).sniffed, 'application/octet-stream');
  });

  it('are independent and synchronous', async () => {
    const [a, b] = await Promise.all([mediagate.createGate(), mediagate.createGate({ cache: false })]);
    assert.notEqual(a, b);
    const bytes = readFileSync(PNG_FILE);
    assert.equal(a.admit(bytes, 'image/png').json, b.admit(bytes, 'image/png').json);
    assert.equal(a.trapped, false);
  });

  it('instantiate with no imports but the memory limit hooks: the component imports nothing, jco made no shim', async () => {
    const asked = new Set();
    const recording = new Proxy({}, {
      get(target, key) {
        if (typeof key === 'string') asked.add(key);
        return target[key];
      },
    });
    const modules = [];
    const root = await instantiate(async (name) => {
      const module = await WebAssembly.compile(readFileSync(join(PKG_DIR, 'dist', 'generated', name)));
      modules.push([name, module]);
      return module;
    }, recording, (module, imports) => {
      // The only imports are the memory limit hooks the build adds (src/index.js gives them).
      const env = Object.fromEntries(WebAssembly.Module.imports(module).map((i) => [i.name, (...a) => a[a.length - 1]]));
      return WebAssembly.instantiate(module, { ...imports, env });
    });
    assert.equal(typeof root['mediagate:gate/admission@0.3.0'].admit, 'function');
    assert.deepEqual([...asked], [], 'the glue asked the import object for nothing');
    assert.deepEqual(modules.map(([name]) => name), ['mediagate.core.wasm']);
    for (const [name, module] of modules) {
      const imported = WebAssembly.Module.imports(module);
      assert.deepEqual([...new Set(imported.map((i) => `${i.module}/${i.kind}`))], ['env/function'], `${name} imports`);
      for (const hook of ['memory_grow_pre', 'memory_grow_post']) assert.ok(imported.some((i) => i.name === hook), `${name} imports ${hook}`);
    }
  });

  it('turn a trap into a GateError naming the trap, then refuse to run', () => {
    const api = {
      defaultOptions: () => mediagate.DEFAULT_OPTIONS,
      admit() {
        throw new WebAssembly.RuntimeError('unreachable');
      },
    };
    const gate = new mediagate.Gate(api);
    assert.throws(
      () => gate.admit(new Uint8Array([1]), 'image/png'),
      (e) =>
        e instanceof mediagate.GateError &&
        e.kind === 'trap' &&
        e.message === 'admit: the gate trapped: wasm `unreachable` instruction executed (a fault in the gate, not a verdict on the input)',
    );
    assert.equal(gate.trapped, true);
    assert.throws(() => gate.admit(new Uint8Array([1]), 'image/png'), /stopped earlier/);
  });

  it('take null options as the defaults', async () => {
    const gate = await mediagate.createGate({ wasmBase: new URL('../dist/generated/', import.meta.url) });
    const bytes = readFileSync(PNG_FILE);
    assert.equal(gate.admit(bytes, 'image/png', null).json, gate.admit(bytes, 'image/png').json);
  });
});

describe('helpers', () => {
  it('words every refusal reason', () => {
    for (const reason of mediagate.REFUSAL_REASONS) {
      assert.doesNotMatch(mediagate.describeReason(reason), /^Refused \(/, reason);
    }
  });
});

describe('README', () => {
  let readme;
  before(() => {
    readme = readFileSync(join(PKG_DIR, 'README.md'), 'utf8');
  });

  it('shows the agent-host example verbatim, and the example runs', async () => {
    const example = readFileSync(join(PKG_DIR, 'examples', 'agent-host.mjs'), 'utf8');
    assert.ok(readme.includes(example.trim()), 'README.md must quote examples/agent-host.mjs verbatim');

    const { recordToolResult } = await import('../examples/agent-host.mjs');
    const history = [];
    const png = readFileSync(PNG_FILE);
    const warnings = [];
    const warn = console.warn;
    console.warn = (m) => warnings.push(m);
    let refused;
    try {
      refused = await recordToolResult(
        history,
        { id: 'toolu_01', name: 'browser_screenshot' },
        {
          content: [
            { type: 'image', data: b64(png), mimeType: 'image/png' },
            { type: 'image', data: b64(SVG_BYTES), mimeType: 'image/png' },
          ],
        },
      );
    } finally {
      console.warn = warn;
    }
    assert.equal(refused.length, 1);
    assert.equal(warnings.length, 1);
    const [entry] = history;
    assert.equal(entry.role, 'user');
    const [toolResult] = entry.content;
    assert.equal(toolResult.type, 'tool_result');
    assert.equal(toolResult.tool_use_id, 'toolu_01');
    assert.equal(toolResult.content[0].type, 'image');
    assert.equal(toolResult.content[1].type, 'text');
    assert.match(toolResult.content[1].text, /browser_screenshot/);
  });
});
