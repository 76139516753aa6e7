// A database of its own on a Citus cluster: created on the coordinator and on every worker of
// CITUS_URL's cluster, with the citus extension and the workers added, as start.sh lays out its
// database `citus`; dropped everywhere at the end.

import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A fresh Citus database. */
export interface CitusDatabase {
  /** The coordinator's URL of it. */
  readonly url: string;
  /** How many workers hold its shards. */
  readonly workers: number;
  drop(): Promise<void>;
}

async function on<T>(url: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function urlOf(base: URL, host: string, port: number, database: string): string {
  const url = new URL(base.href);
  url.hostname = host;
  url.port = String(port);
  url.pathname = `/${database}`;
  return url.href;
}

/** Creates a database named after the run on every node of CITUS_URL's cluster. */
export async function freshCitusDatabase(citusUrl: string): Promise<CitusDatabase> {
  const base = new URL(citusUrl);
  const coordinator = { host: base.hostname, port: Number(base.port || 5432) };
  const workers = await on(citusUrl, async (c) =>
    (
      await c.query<{ nodename: string; nodeport: number }>(
        `select nodename, nodeport from pg_dist_node where groupid <> 0 and noderole = 'primary' and isactive order by nodeport`,
      )
    ).rows.map((r) => ({ host: r.nodename, port: r.nodeport })),
  );
  const name = `mint_citus_${randomBytes(4).toString('hex')}`;
  const nodes = [...workers, coordinator];
  for (const node of nodes) {
    await on(urlOf(base, node.host, node.port, 'postgres'), (c) => c.query(`create database ${name}`));
    await on(urlOf(base, node.host, node.port, name), (c) => c.query('create extension citus'));
  }
  const url = urlOf(base, coordinator.host, coordinator.port, name);
  await on(url, async (c) => {
    await c.query('select citus_set_coordinator_host($1, $2)', [coordinator.host, coordinator.port]);
    for (const w of workers) await c.query('select citus_add_node($1, $2)', [w.host, w.port]);
  });
  return {
    url,
    workers: workers.length,
    async drop() {
      for (const node of [coordinator, ...workers]) {
        await on(urlOf(base, node.host, node.port, 'postgres'), (c) => c.query(`drop database if exists ${name} with (force)`)).catch(() => undefined);
      }
    },
  };
}
