// The API of `npm run bench:passport` in a process of its own: startApi on the scratch database
// given as the first argument, webhook secret keys (which seal the passport signing key) from the
// second; prints `PORT <n>` once listening.

import { Writable } from 'node:stream';
import { startApi } from '@mint/api';
import { openDatabase } from '@mint/db';
import { parseSecretKeys } from '@mint/domain';
import { createLogger } from '@mint/runtime';
import { createUseCaseContext } from '@mint/usecases';

const [url, secretKeys] = process.argv.slice(2) as [string, string];
const parsed = parseSecretKeys(secretKeys);
if ('error' in parsed) throw new Error(parsed.error);
const db = await openDatabase({ url }, { poolSize: 8 });
const ctx = createUseCaseContext({
  db,
  publicBaseUrl: 'http://127.0.0.1:8080',
  jwtSecret: 'bench-secret-bench-secret-bench-secret-01',
  webhookSecretKeys: parsed.keys,
});
const api = await startApi({
  ctx,
  config: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 },
  logger: createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() })),
  readiness: async () => ({ ok: true, checks: {} }),
});
process.stdout.write(`PORT ${api.port}\n`);
process.once('SIGTERM', () => {
  void api
    .close()
    .then(() => db.close(true))
    .then(() => process.exit(0));
});
