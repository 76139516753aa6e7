// The API of bench/scans.ts's resolver load, in a child process: `node bench/scans-api.ts on|off <database url>`.
// `on` starts it as the image does (every written batch of resolver scans goes to the scan rules);
// `off` passes startApi a scan recorder whose onWritten does nothing, so the rules never run.
// Prints `PORT <n>` once listening; stops on SIGTERM.

import { Writable } from 'node:stream';
import { openDatabase } from '@mint/db';
import { createLogger } from '@mint/runtime';
import { createUseCaseContext } from '@mint/usecases';
import { startApi } from '@mint/api';

const [rules, dbUrl] = process.argv.slice(2);
if ((rules !== 'on' && rules !== 'off') || dbUrl === undefined) throw new Error('usage: node bench/scans-api.ts on|off <database url>');
const db = await openDatabase({ url: dbUrl }, { poolSize: 10, applicationName: `bench-scans-api-${rules}` });
const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080' });
const api = await startApi({
  ctx,
  config: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 },
  logger: createLogger(
    { logLevel: 'warn' },
    { service: 'bench-scans-api' },
    new Writable({
      write: (c, _e, done) => {
        process.stderr.write(c);
        done();
      },
    }),
  ),
  readiness: async () => ({ ok: true, checks: {} }),
  ...(rules === 'off' ? { scanRecorder: { onWritten: () => {} } } : {}),
});
process.stdout.write(`PORT ${api.port}\n`);
process.once(
  'SIGTERM',
  () =>
    void api
      .close()
      .then(() => db.close())
      .then(() => process.exit(0)),
);
