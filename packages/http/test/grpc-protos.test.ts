// The API's own protos (gRPC health and server reflection): the committed generated code is what
// `npx buf generate` in services/api produces.

import { join } from 'node:path';
import { it } from 'vitest';
import { expectGeneratedInSync } from '../../../test/support/generated-code.ts';

it('has src/gen in sync with proto/', () => {
  expectGeneratedInSync(join(import.meta.dirname, '..'), 'src/gen', 'npx buf generate in services/api');
});
