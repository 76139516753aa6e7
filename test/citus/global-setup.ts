// The Citus suite's precondition: CITUS_URL names a reachable coordinator with the citus extension
// and at least one worker; otherwise it stops before any test, saying how to start one.

import pg from 'pg';

const howTo =
  'start one with `bash ../shared/citus/start.sh 6601` (as root; it prints the URL) and run ' +
  '`CITUS_URL=postgres://postgres@127.0.0.1:6601/citus npm run test:citus`; `bash ../shared/citus/stop.sh 6601` stops it';

/** Fails fast unless CITUS_URL reaches a Citus coordinator with workers. */
export default async function setup(): Promise<void> {
  const url = process.env['CITUS_URL'];
  if (url === undefined || url === '') throw new Error(`CITUS_URL is not set: the Citus suite needs a real Citus coordinator; ${howTo}`);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`CITUS_URL ${new URL(url).host} is unreachable (${(error as Error).message}); ${howTo}`);
  }
  try {
    const ext = await client.query(`select 1 from pg_extension where extname = 'citus'`);
    if (ext.rowCount === 0) throw new Error(`CITUS_URL ${new URL(url).host} has no citus extension in its database; ${howTo}`);
    const workers = await client.query(`select 1 from pg_dist_node where groupid <> 0 and noderole = 'primary' and isactive`);
    if (workers.rowCount === 0) throw new Error(`CITUS_URL ${new URL(url).host} has no workers; ${howTo}`);
  } finally {
    await client.end();
  }
}
