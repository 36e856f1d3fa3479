// A model provider on 127.0.0.1 for the integration tests: it records every request it receives
// (method, path, headers, the body's exact bytes) and answers in the shape of the endpoint's API
// (Chat Completions, Responses, Messages), so the real SDKs accept the answer.
import http from 'node:http';

function answerFor(path) {
  if (path.endsWith('/messages')) {
    return {
      id: 'msg_loopback',
      type: 'message',
      role: 'assistant',
      model: 'loopback',
      content: [{ type: 'text', text: 'seen' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    };
  }
  if (path.endsWith('/responses')) {
    return {
      id: 'resp_loopback',
      object: 'response',
      created_at: 0,
      status: 'completed',
      model: 'loopback',
      output: [
        {
          type: 'message',
          id: 'msg_loopback',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'seen', annotations: [] }],
        },
      ],
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
    };
  }
  return {
    id: 'chatcmpl-loopback',
    object: 'chat.completion',
    created: 0,
    model: 'loopback',
    choices: [{ index: 0, message: { role: 'assistant', content: 'seen' }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

/** Starts the provider; `{ url, records, close }` (`records`: every request, in order). */
export async function startProvider() {
  const records = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url, 'http://127.0.0.1').pathname;
      records.push({ method: req.method, path, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answerFor(path)));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    records,
    /** The last request's body as JSON. */
    lastJson: () => JSON.parse(records.at(-1).body.toString('utf8')),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Width, height and type of a PNG (its IHDR) or a JPEG (its start-of-frame segment). */
export function imageSize(bytes) {
  const b = Buffer.from(bytes);
  if (b.subarray(1, 4).toString('latin1') === 'PNG') return { type: 'png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b[0] === 0xff && b[1] === 0xd8) {
    for (let i = 2; i + 9 < b.length; ) {
      if (b[i] !== 0xff) throw new Error(`JPEG: no marker at ${i}`);
      const marker = b[i + 1];
      if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
        return { type: 'jpeg', width: b.readUInt16BE(i + 7), height: b.readUInt16BE(i + 5) };
      }
      i += 2 + b.readUInt16BE(i + 2);
    }
  }
  throw new Error('neither a PNG nor a JPEG with a frame header');
}
