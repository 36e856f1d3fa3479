// Compiled (not run) by test/types.test.js: the hand-written types describe the API as used.
import {
  admit,
  admitToolResult,
  contentBlock,
  createGate,
  type Admitted,
  type ContentBlock,
  type RefusalReason,
  type Verdict,
} from '@mediagate/preflight';
import type { Root, ImportObject } from '../../dist/generated/mediagate.js';

export async function example(bytes: Uint8Array): Promise<string> {
  const verdict: Verdict = await admit(bytes, { name: 'diagram.png' }, { provider: 'openai', verify: 'full' });
  const text: string = verdict.json;
  if (verdict.ok) {
    const admitted: Admitted = verdict;
    const width: number | undefined = admitted.width;
    const block: ContentBlock = contentBlock(admitted);
    const out: Uint8Array = admitted.bytes;
    return `${block.source.media_type} ${width ?? '?'} ${admitted.base64_len} ${out.length} ${text}`;
  }
  const reason: RefusalReason = verdict.reason;
  const limit: number | undefined = verdict.limit;
  return `${reason} ${verdict.raw_bytes} ${limit ?? ''} ${verdict.message} ${verdict.convertible ?? verdict.sniffed}`;
}

export async function sync(bytes: ArrayBuffer): Promise<number> {
  const gate = await createGate({ cache: true });
  // @ts-expect-error: the component has no output, so no sinks
  await createGate({ stderr: (line: string) => void line });
  const v = gate.admit(bytes, 'application/pdf');
  // @ts-expect-error: not a provider
  gate.admit(bytes, 'image/png', { provider: 'acme' });
  // @ts-expect-error: not an input key
  gate.admit(bytes, { claimed: 'image/png' });
  const { refused, changed } = gate.admitToolResult('t', [{ type: 'text', text: 'x' }]);
  return v.ok ? v.base64_len : refused.length + Number(changed);
}

export async function toolResult(content: unknown[]): Promise<unknown> {
  const answer = await admitToolResult('screenshot', content);
  for (const r of answer.refused) {
    const index: number = r.index;
    const mime: string | null = r.mime;
    void [index, mime];
  }
  return answer.content;
}

export type Generated = [Root, ImportObject];

// createGate's admission defaults, configure(), and the Worker entry point.
import { configure, DEFAULT_OPTIONS, CORE_MODULES } from '@mediagate/preflight';
import { createWorkerGate, admit as admitInWorker, type WorkerGate } from '@mediagate/preflight/worker';

export async function defaultsAndWorker(bytes: Uint8Array, file: Blob): Promise<boolean> {
  const gate = await createGate({ provider: 'gemini', verify: 'full', downsample: false, cache: false });
  const verify: 'header' | 'full' = gate.defaults.verify;
  // @ts-expect-error: not an option
  await createGate({ wasmbase: '/x/' });
  configure({ wasmUrls: { 'mediagate.core.wasm': '/a.wasm' } });
  const worker: WorkerGate = await createWorkerGate({ workerUrl: '/assets/gate-worker.js', provider: 'openai' });
  // @ts-expect-error: a function cannot cross to a Worker
  await createWorkerGate({ getCoreModule: () => new WebAssembly.Module(new Uint8Array()) });
  const v: Verdict = await worker.admit(file, undefined, { verify: DEFAULT_OPTIONS.verify });
  const w: Verdict = await admitInWorker(bytes, 'image/png');
  worker.terminate();
  return v.ok && w.ok && verify === 'full' && CORE_MODULES.length === 3;
}

// Conversion: the converter is loaded by the calls that ask for it.
import {
  admit as admitAny,
  admitPdfPage,
  convertibleTypes,
  type BlockConversion,
  type Conversion,
} from '@mediagate/preflight';

export async function converting(svg: Uint8Array, pdf: Uint8Array): Promise<string> {
  const verdict = await admitAny(svg, 'image/svg+xml', { convert: true });
  const from: string | undefined = verdict.ok ? verdict.converted?.from : undefined;
  const page: Verdict = await admitPdfPage(pdf, 2, { provider: 'openai' });
  const other: Verdict = await admitAny(pdf, { page: 2 });
  const note = page.ok ? (page.converted as Conversion).note : page.reason === 'no_such_page' ? `${page.count}` : page.message;
  const types: string[] = await convertibleTypes();
  const gate = await createGate({ convert: true });
  const converts: boolean = gate.converts;
  const result = gate.admitToolResult('t', [], { convert: true });
  const paths: string[] = (result.conversions ?? []).map((c: BlockConversion) => c.path);
  // @ts-expect-error: convert is a boolean
  await admitAny(svg, 'image/svg+xml', { convert: 'yes' });
  return `${from} ${note} ${types.length} ${converts} ${paths.length} ${other.ok}`;
}

// Batch files: one request at a time (any host), a whole file (Node).
import { admitBatchLine, type BatchLineAdmission, type BatchFileRule } from '@mediagate/preflight';
import { admitBatch, type BatchSummary } from '@mediagate/preflight/batch';

export async function batches(line: string): Promise<string> {
  const gate = await createGate({ provider: 'openai' });
  const one: BatchLineAdmission = gate.admitBatchLine(line, { api: 'openai', number: 3, verify: 'header' });
  const out: string | null = one.line;
  const rules: BatchFileRule[] = gate.checkBatchFile('anthropic', 100_001, 10);
  // @ts-expect-error: not a Batch API
  gate.admitBatchLine(line, { api: 'gemini' });
  // @ts-expect-error: the api is required
  gate.admitBatchLine(line, { number: 1 });
  const shared: BatchLineAdmission = await admitBatchLine(line, { api: 'anthropic', convert: true });
  const summary: BatchSummary = await admitBatch('in.jsonl', 'out.jsonl', { api: 'openai', onRefusal: 'drop', jobs: 2, report: 'r.jsonl' });
  // @ts-expect-error: not a policy
  await admitBatch('in.jsonl', 'out.jsonl', { api: 'openai', onRefusal: 'skip' });
  const code: 0 | 1 = summary.exitCode;
  const stopped: number | null = summary.stopped_at;
  return `${one.outcome} ${out} ${rules[0]?.rule} ${shared.custom_id} ${code} ${stopped} ${summary.file_rules.length}`;
}
