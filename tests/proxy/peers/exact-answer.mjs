// The `exact` mode's answer of peers/faulty.mjs, shared with the test that knows what to expect.
/** The raw answer of the `exact` mode to request `id`, with an SVG claiming PNG when `withImage`. */
export function exactAnswer(id, withImage) {
  const svg = Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>").toString("base64");
  const image = withImage ? `, {"type":"image","mimeType":"image/png","data":"${svg}"}` : "";
  return (
    `{"jsonrpc":"2.0", "id":${JSON.stringify(id)}, "result":{ "content" : [ {"text":"lone \\ud800 big 1e400","type":"text"}${image} ],` +
    ` "_meta":{"z":1,"a":1e400,"n":123456789012345678901234567890,"s":"\\udfff"} }}`
  );
}
