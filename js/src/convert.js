// The converter component (`mediagate-convert.wasm`: the gate plus the `conversion` interface:
// SVG, BMP, TIFF, ICO, an animated GIF's first frame, PDF pages), loaded by src/index.js with a
// dynamic import only when a caller asks to convert: the preflight path never fetches this module
// or its core module. Not an entry point of its own.

import { instantiate } from '../dist/generated/mediagate-convert.js';

// Named by a literal `new URL('…', import.meta.url)` so that bundlers which follow that pattern
// emit the file on their own (as src/index.js does for the preflight core module).
export const CONVERT_CORE_URLS = {
  'mediagate-convert.core.wasm': () => new URL('../dist/generated/mediagate-convert.core.wasm', import.meta.url),
};

export { instantiate };
