// The demo page: pick or drop a file, the gate judges it in the page.
import * as mediagate from '../src/index.js';

const $ = (id) => document.getElementById(id);

const started = performance.now();
let gate = await mediagate.createGate();
const instantiateMs = performance.now() - started;

$('status').textContent = 'Ready. Pick or drop a file.';
$('gate-info').textContent =
  `Gate compiled and instantiated in ${instantiateMs.toFixed(1)} ms. ` +
  'The component runs with nothing granted: no filesystem, no environment, no network.';
document.body.dataset.state = 'ready';

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = n;
  let unit = -1;
  do {
    value /= 1024;
    unit += 1;
  } while (value >= 1024 && unit < units.length - 1);
  return `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]} (${n.toLocaleString('en-US')} bytes)`;
}

const dims = (d) => (d?.width !== undefined ? `${d.width} × ${d.height}` : '—');

function summary(verdict) {
  if (verdict.converted) {
    return `Converted from ${verdict.converted.from} (${verdict.converted.note}) in the sandbox, then admitted as any ${verdict.converted.to}.`;
  }
  if (verdict.kind === 'document') return 'The PDF goes to the model as a document block.';
  if (verdict.resized) return 'Too large as it was: fitted inside 2000 × 2000 and re-encoded, then admitted.';
  if (verdict.reencoded) return 'Re-encoded (turned upright or transcoded), then admitted.';
  if (verdict.dropped?.length) {
    return `Admitted without its metadata (${verdict.dropped.join(', ')}): the same pixels, re-muxed by the gate.`;
  }
  return 'Admitted as it is: the bytes are what they claim and within every limit.';
}

async function measureOriginal(bytes, mime) {
  // Best effort, for display only: what the browser itself can decode.
  if (typeof createImageBitmap !== 'function' || !mime.startsWith('image/')) return undefined;
  try {
    const bitmap = await createImageBitmap(new Blob([bytes], { type: mime }));
    const d = { width: bitmap.width, height: bitmap.height };
    bitmap.close();
    return d;
  } catch {
    return undefined;
  }
}

function options() {
  return {
    provider: $('provider').value,
    verify: $('verify').value,
    downsample: $('downsample').checked,
  };
}

async function judge(file) {
  document.body.dataset.state = 'busy';
  $('status').textContent = `Checking ${file.name}…`;
  const bytes = new Uint8Array(await file.arrayBuffer());
  // A claimed type when one is typed in; else the gate picks it (the bytes' type, or the name's).
  const claimed = $('mime').value.trim();
  const input = claimed ? { mime: claimed } : { name: file.name };
  // Let the page paint the status before the (synchronous) gate runs.
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));

  let verdict;
  const t0 = performance.now();
  try {
    // Converting loads the converter component on first use (the module-level functions' second
    // instance); the page does not fetch it until the box is ticked and a file judged.
    verdict = $('convert').checked
      ? await mediagate.admit(bytes, input, { ...options(), convert: true })
      : gate.admit(bytes, input, options());
  } catch (e) {
    $('status').textContent = `The gate failed: ${e.message}`;
    document.body.dataset.state = 'error';
    if (gate.trapped) gate = await mediagate.createGate();
    return;
  }
  const ms = performance.now() - t0;

  const result = $('result');
  result.hidden = false;
  result.dataset.ok = String(verdict.ok);
  result.dataset.reason = verdict.ok ? '' : verdict.reason;
  $('verdict').textContent = verdict.ok ? `Admitted: ${verdict.kind}, ${verdict.mime}` : `Refused: ${verdict.reason}`;
  const hint = verdict.convertible ? ` The bytes are ${verdict.convertible}, which Convert converts.` : '';
  $('reason').textContent = verdict.ok ? summary(verdict) : mediagate.describeReason(verdict.reason) + hint;
  $('message').textContent = verdict.ok ? '' : `The gate says: ${verdict.message}`;
  $('file-name').textContent = file.name;
  $('claimed').textContent = claimed || `none (judged by the bytes, else the name ${file.name})`;
  $('sniffed').textContent = verdict.sniffed;
  $('original-size').textContent = formatBytes(bytes.length);
  $('admitted-size').textContent = verdict.ok ? formatBytes(verdict.bytes.length) : '— (refused)';
  $('admitted-dims').textContent = verdict.ok ? dims(verdict) : '—';
  $('base64-len').textContent = verdict.ok
    ? verdict.base64_len.toLocaleString('en-US')
    : verdict.limit !== undefined
      ? `limit ${verdict.limit.toLocaleString('en-US')}`
      : '—';
  $('time').textContent = `${ms.toFixed(1)} ms`;
  // The component's own JSON, as `mediagate admit --json` prints it (indented for reading).
  $('verdict-json').textContent = JSON.stringify(verdict, null, 2);

  const preview = $('preview');
  if (verdict.ok && verdict.kind === 'image') {
    preview.src = `data:${verdict.mime};base64,${mediagate.contentBlock(verdict).source.data}`;
    await preview.decode().catch(() => {});
    $('preview-box').hidden = false;
  } else {
    preview.removeAttribute('src');
    $('preview-box').hidden = true;
  }
  $('original-dims').textContent = dims(await measureOriginal(bytes, claimed || verdict.sniffed));

  $('status').textContent = `Done: ${file.name} judged in ${ms.toFixed(1)} ms.`;
  document.body.dataset.state = 'done';
}

$('file').addEventListener('change', () => {
  const file = $('file').files?.[0];
  if (file) judge(file);
});

const drop = $('drop');
for (const type of ['dragenter', 'dragover']) {
  drop.addEventListener(type, (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
}
for (const type of ['dragleave', 'drop']) {
  drop.addEventListener(type, () => drop.classList.remove('over'));
}
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  const files = e.dataTransfer?.files;
  const file = files?.[0];
  if (!file) return;
  // The picker shows the dropped file, not the one picked before (and picking that one again
  // is a change the input reports).
  const input = $('file');
  try {
    const one = new DataTransfer();
    one.items.add(file);
    input.files = one.files;
  } catch {
    input.value = '';
  }
  judge(file);
});

// Hooks for tests and benchmarks: the same gate the page uses.
function fromBase64(b64) {
  const text = atob(b64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}
window.mediagate = mediagate;
window.mediagateInstantiateMs = instantiateMs;
/** Admit bytes (a Uint8Array or an array of byte values); answers the verdict's JSON keys. */
window.mediagateAdmit = (bytes, input, opts) => JSON.parse(gate.admit(Uint8Array.from(bytes), input, opts).json);
/**
 * Many files at once: [{ b64, input, options }] → [{ text (the verdict's JSON text), verdict (it
 * parsed), sha256 of the admitted bytes or null }].
 */
window.mediagateAdmitBatch = async (items) => {
  const answers = [];
  for (const { b64, input, options: opts } of items) {
    const verdict = gate.admit(fromBase64(b64), input, opts);
    let sha256 = null;
    if (verdict.ok) {
      const digest = await crypto.subtle.digest('SHA-256', mediagate.admittedBytes(verdict));
      sha256 = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
    }
    answers.push({ text: verdict.json, verdict: JSON.parse(verdict.json), sha256 });
  }
  return answers;
};
