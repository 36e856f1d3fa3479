// Media on 127.0.0.1 for the front ends that download what a request points at (LiteLLM,
// pydantic-ai): each path answers its bytes with the content type it is given, whatever they are,
// so a URL can claim what its bytes are not.
import http from 'node:http';

/** Serves `files` ({ path: { type, bytes } }, paths may be added later); `{ url, files, close }`. */
export async function startMediaServer(files = {}) {
  const server = http.createServer((req, res) => {
    const file = files[new URL(req.url, 'http://127.0.0.1').pathname];
    if (req.method !== 'GET' || !file) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'content-length': file.bytes.length });
    res.end(file.bytes);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    files,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(resolve);
      }),
  };
}
