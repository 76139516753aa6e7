// The standard gRPC protocols' protos (health and server reflection): the committed generated code
// is what `npx buf generate` in packages/http produces.

import { join } from 'node:path';
import { it } from 'vitest';
import { expectGeneratedInSync } from '../../../test/support/generated-code.ts';

it('has src/grpc/gen in sync with proto/', () => {
  expectGeneratedInSync(join(import.meta.dirname, '..'), 'src/grpc/gen', 'npx buf generate in packages/http');
});
