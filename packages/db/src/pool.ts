import type { Pool, PoolClient } from 'pg';

/**
 * Gives back the pool slot of a connection that dies while checked out. Kysely (0.29, under
 * MikroORM) returns a transaction's connection to the pool only after its COMMIT or ROLLBACK
 * succeeded, so when the server ends the connection mid-transaction (pg_terminate_backend, a
 * restart, a failover) the slot is never returned, and after `max` such deaths every query waits
 * forever. Here a checked-out client whose connection ends is released with an error (pg-pool then
 * drops it and opens a new one for the next caller), and the holder's own later release is a no-op.
 */
export function releaseDeadClients(pool: Pool): void {
  const checkedOut = new Set<PoolClient>();
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (_err, client) => checkedOut.delete(client));
  pool.on('remove', (client) => checkedOut.delete(client as PoolClient));
  pool.on('connect', (client) => {
    client.once('end', () => {
      if (!checkedOut.delete(client)) return;
      const release = client.release.bind(client);
      client.release = () => {};
      release(new Error('the connection ended while checked out'));
    });
  });
}
