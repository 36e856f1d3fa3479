// The TypeScript types: the hand-written src/index.d.ts and jco's generated declarations compile
// under `strict`, and describe the API as the README uses it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';

import { PKG_DIR } from './helpers.js';

it('type-checks a strict TypeScript user of the package', () => {
  const tsc = join(PKG_DIR, 'node_modules', '.bin', 'tsc');
  const run = spawnSync(tsc, ['-p', join(PKG_DIR, 'test', 'types', 'tsconfig.json')], { encoding: 'utf8' });
  assert.equal(run.status, 0, `tsc failed:\n${run.stdout}${run.stderr}`);
});

// The SDKs' own declarations need @types/node and @types/json-schema, which this package does not
// carry: they are skipped (skipLibCheck); the use of ours with them is checked.
it('type-checks the integrations with the real SDKs (openai, @anthropic-ai/sdk, ai)', () => {
  const tsc = join(PKG_DIR, 'node_modules', '.bin', 'tsc');
  const run = spawnSync(tsc, ['-p', join(PKG_DIR, 'test', 'types', 'tsconfig.integrations.json')], { encoding: 'utf8' });
  assert.equal(run.status, 0, `tsc failed:\n${run.stdout}${run.stderr}`);
});
