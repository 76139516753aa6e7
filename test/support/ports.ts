import { createServer } from 'node:net';

/**
 * Returns a TCP port on 127.0.0.1 that was free a moment ago (the OS picks it, then it is
 * released). Another process may grab it before the caller binds, so bind promptly.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}
