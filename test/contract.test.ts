// The Protobuf contract: lint-clean, and the committed generated code is what `npm run generate` produces.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buf, expectGeneratedInSync } from './support/generated-code.ts';

const root = join(import.meta.dirname, '..');

describe('the mint.v1 contract', () => {
  it('passes buf lint (STANDARD)', () => {
    expect(() => execFileSync(buf, ['lint'], { cwd: root, stdio: 'pipe' })).not.toThrow();
  });

  it('has generated code in sync with proto/', () => {
    expectGeneratedInSync(root, 'packages/contract/src/gen', 'npm run generate');
  });

  it("has the client package's generated code (packages/client, published as is) in sync with proto/", () => {
    expectGeneratedInSync(root, 'packages/client/src/gen', 'npm run generate');
  });

  it('vendors buf/validate/validate.proto exactly as @bufbuild/protovalidate ships it', () => {
    expect(() => execFileSync(process.execPath, ['scripts/vendor-validate-proto.ts', '--check'], { cwd: root, stdio: 'pipe' })).not.toThrow();
  });
});
