// admitRequest: a whole provider request through the gate, in Node. Fixtures are made
// here; no corpus is read. The answer is the component's report (`mediagate admit-request --json`
// prints the same text, written by the same component), parsed, with the request's text beside it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import * as mediagate from '../src/index.js';
import { GIF_1X1, b64, widePng } from './fixtures.js';

const anthropicImage = (bytes, mime) => ({ type: 'image', source: { type: 'base64', media_type: mime, data: b64(bytes) } });

/** Twenty small GIFs and one PNG 2400 px wide: more than 20 images, so 2000 px a side (Anthropic). */
async function manyImages() {
  const content = Array.from({ length: 20 }, () => anthropicImage(GIF_1X1, 'image/gif'));
  content.push(anthropicImage(await widePng(), 'image/png'));
  return { model: 'claude', max_tokens: 10, messages: [{ role: 'user', content }] };
}

describe('admitRequest', () => {
  it('fits the 21st image to 2000 px naming the rule, and matches the CLI report', async () => {
    const text = JSON.stringify(await manyImages());
    const gate = await mediagate.createGate();
    const a = gate.admitRequest('anthropic', text);
    assert.equal(a.refusal, null);
    assert.deepEqual(Object.keys(a), ['api', 'request', 'changed', 'refused', 'refusal']);
    assert.equal(typeof a.requestText, 'string', 'the admitted request as text beside it');
    assert.deepEqual(JSON.parse(a.requestText), a.request);
    assert.deepEqual(a.refused, []);
    assert.equal(a.changed.length, 1);
    const [c] = a.changed;
    assert.equal(c.path, '/messages/0/content/20');
    assert.equal(c.what, 'downsampled');
    assert.equal(c.rule, 'anthropic.many_images_max_side');
    assert.deepEqual([c.from.width, c.to.width], [2400, 2000]);
  });

  it('honours createGate defaults: downsample off refuses the oversize image in its slot', async () => {
    const gate = await mediagate.createGate({ downsample: false });
    const request = await manyImages();
    const a = gate.admitRequest('anthropic', request);
    assert.deepEqual(a.refused, ['/messages/0/content/20']);
    assert.equal(a.changed[0].reason, 'dimensions_too_large');
    assert.equal(a.changed[0].rule, 'anthropic.many_images_max_side');
    assert.equal(a.request.messages[0].content[20].type, 'text');
    assert.equal(a.request.messages[0].content[19].type, 'image');
    // A call's own options over the instance's.
    assert.deepEqual(gate.admitRequest('anthropic', request, { downsample: true }).refused, []);
  });

  it("takes the API's own profile unless a provider is given", async () => {
    const request = {
      model: 'gpt',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/gif;base64,${b64(GIF_1X1)}` } }] }],
    };
    const openai = mediagate.createGate();
    const a = (await openai).admitRequest('openai', request);
    assert.deepEqual([a.refusal, a.changed, a.request], [null, [], request], 'unchanged');
    assert.equal(a.requestText, JSON.stringify(request), 'unchanged: the text given');
    const gemini = await mediagate.createGate({ provider: 'gemini' });
    const g = gemini.admitRequest('openai', request);
    assert.deepEqual(g.refused, ['/messages/0/content/0']);
    assert.equal(g.changed[0].reason, 'mime_unsupported');
    mediagate.configure({ provider: 'gemini' });
    assert.deepEqual((await mediagate.admitRequest('openai', request)).refused, ['/messages/0/content/0']);
    mediagate.configure({});
    assert.deepEqual((await mediagate.admitRequest('openai', request)).changed, []);
  });

  it('answers unusable input with a refusal, and refuses an unknown API', async () => {
    const gate = await mediagate.createGate();
    const r = gate.admitRequest('anthropic', 'not json');
    assert.deepEqual([r.request, r.requestText, r.refusal.unusable], [null, null, true]);
    assert.match(r.refusal.message, /not JSON/);
    const s = gate.admitRequest('anthropic', { messages: [{ role: 'system', content: 'x' }] });
    assert.equal(s.refusal.unusable, true);
    assert.throws(() => gate.admitRequest('mistral', {}), TypeError);
    assert.ok(mediagate.REFUSAL_REASONS.includes('request_limit'));
  });
});
