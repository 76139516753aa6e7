// The connection preface dispatch and the graceful close of the one-port listener, on raw sockets.

import { maxHeaderSize, type ServerResponse } from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createDualListener, type DualListener, type DualListenerOptions, type HttpRequest, type HttpResponse, type RequestListener } from '@mint/http';
import { defaults } from '@mint/runtime';

/** The listener with the process's default header and request timeouts unless `options` sets them. */
const dualListener = (requestListener: RequestListener, options: Partial<DualListenerOptions> = {}) =>
  createDualListener(requestListener, {
    headersTimeoutMs: defaults.httpHeadersTimeoutMs,
    requestTimeoutMs: defaults.httpRequestTimeoutMs,
    ...options,
  });

let listener: DualListener | undefined;
afterEach(async () => {
  await listener?.close(100);
  listener = undefined;
});

/** Opens a raw connection, writes `parts` with pauses, and resolves with everything read until close or `untilText`. */
function rawExchange(port: number, parts: string[], untilText?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (untilText !== undefined && received.includes(untilText)) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
    socket.on('connect', async () => {
      for (const part of parts) {
        socket.write(part);
        await new Promise((r) => setTimeout(r, 30));
      }
    });
  });
}

describe('preface dispatch', () => {
  it('waits while the first bytes could still be the HTTP/2 preface ("P" of POST), then serves HTTP/1.1', async () => {
    listener = dualListener((req, res) => res.end(`${req.method} ${req.url} over ${req.httpVersion}`));
    const port = await listener.listen(0, '127.0.0.1');
    const text = await rawExchange(port, ['P', 'OST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n']);
    expect(text).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(text).toContain('POST /x over 1.1');
  });

  it('closes a connection that never sends anything', async () => {
    listener = dualListener((_req, res) => res.end(), { prefaceTimeoutMs: 100 });
    const port = await listener.listen(0, '127.0.0.1');
    const started = Date.now();
    expect(await rawExchange(port, [])).toBe('');
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('close', () => {
  it('closes idle keep-alive connections at once and lets a busy one finish its response', async () => {
    let finish!: () => void;
    const slow = new Promise<void>((resolve) => (finish = resolve));
    listener = dualListener((req, res) => {
      if (req.url === '/slow') void slow.then(() => res.end('done'));
      else res.end('quick');
    });
    const port = await listener.listen(0, '127.0.0.1');
    // An idle keep-alive connection: one answered request, then nothing.
    const idle = net.connect(port, '127.0.0.1');
    idle.write('GET /quick HTTP/1.1\r\nHost: t\r\n\r\n');
    await new Promise((resolve) => idle.once('data', resolve));
    const idleClosed = new Promise((resolve) => idle.once('close', resolve));
    // A busy connection.
    const busy = rawExchange(port, ['GET /slow HTTP/1.1\r\nHost: t\r\n\r\n']);
    await new Promise((r) => setTimeout(r, 50));

    const closed = listener.close(5_000);
    await idleClosed;
    finish();
    const text = await busy;
    expect(text).toContain('done');
    expect(text.toLowerCase()).toContain('connection: close');
    await closed;
    await expect(rawExchange(port, ['GET / HTTP/1.1\r\n\r\n'])).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('slow clients', () => {
  it('answers 408 and closes an HTTP/1.1 connection whose headers never complete', async () => {
    listener = dualListener((_req, res) => res.end('never'), { headersTimeoutMs: 300 });
    const port = await listener.listen(0, '127.0.0.1');
    const started = Date.now();
    const text = await rawExchange(port, ['GET / HTTP/1.1\r\nHost: t\r\n']);
    expect(text).toMatch(/^HTTP\/1\.1 408/);
    expect(jsonBodyOf(text)).toMatchObject({ ok: false, error: 'request_timeout' });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

/** The JSON body of a raw HTTP/1.1 answer, checked against its content-length. */
function jsonBodyOf(text: string): unknown {
  const [head, body = ''] = text.split('\r\n\r\n', 2);
  expect(`${head}\r\n`).toMatch(/\r\ncontent-type: application\/json\r\n/i);
  expect(`${head}\r\n`).toMatch(/\r\nconnection: close\r\n/i);
  expect(Number(/\r\ncontent-length: (\d+)/i.exec(head!)?.[1])).toBe(Buffer.byteLength(body));
  return JSON.parse(body);
}

describe('requests the HTTP parser refuses', () => {
  it('answers a head past the size limit with 431 and a JSON body naming it, then closes', async () => {
    let served = 0;
    listener = dualListener((_req, res) => {
      served += 1;
      res.end();
    });
    const port = await listener.listen(0, '127.0.0.1');
    const text = await rawExchange(port, [`GET / HTTP/1.1\r\nHost: t\r\nCookie: ${'c'.repeat(maxHeaderSize)}\r\n\r\n`]);
    expect(text).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    const body = jsonBodyOf(text) as { ok: boolean; error: string; message: string };
    expect(body).toMatchObject({ ok: false, error: 'request_header_fields_too_large' });
    expect(body.message).toContain(`${maxHeaderSize} bytes`);
    expect(served).toBe(0);
  });

  it("answers a malformed request line with 400 and a JSON body with the parser's reason", async () => {
    listener = dualListener((_req, res) => res.end());
    const port = await listener.listen(0, '127.0.0.1');
    const text = await rawExchange(port, ['GET / HTTP/1.1\r\nHost: t\r\nContent-Length: x\r\n\r\n']);
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    const body = jsonBodyOf(text) as { ok: boolean; error: string; message: string };
    expect(body).toMatchObject({ ok: false, error: 'bad_request' });
    expect(body.message).toMatch(/^malformed HTTP request: \S/);
  });

  it('writes nothing into a response already under way when a pipelined request after it is malformed (the connection is cut, as Node does)', async () => {
    listener = dualListener((_req, res) => {
      const h1 = res as ServerResponse;
      h1.writeHead(200, { 'content-type': 'text/plain' });
      h1.write('partial');
      setTimeout(() => h1.end(' answer'), 200);
    });
    const port = await listener.listen(0, '127.0.0.1');
    const text = await rawExchange(port, ['GET /a HTTP/1.1\r\nHost: t\r\n\r\nBROKEN\u0001 / HTTP/1.1\r\n\r\n']);
    expect(text).not.toContain('bad_request');
    expect(text).not.toContain('HTTP/1.1 400');
  });
});

describe('slow senders and stream caps', () => {
  /** A handler that reads the body to its end, then answers. */
  const reading = (req: HttpRequest, res: HttpResponse) => {
    req.resume();
    req.on('end', () => res.end('done'));
  };

  it('closes an HTTP/2 session whose streams send bodies that never finish, after the body timeout', async () => {
    listener = dualListener(reading, { bodyTimeoutMs: 300, idleTimeoutMs: 5_000 });
    const port = await listener.listen(0, '127.0.0.1');
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);
    const started = Date.now();
    const closed = new Promise<number>((resolve) => session.once('close', () => resolve(Date.now() - started)));
    for (let i = 0; i < 3; i++) {
      const stream = session.request({ ':method': 'POST', ':path': `/slow/${i}` });
      stream.on('error', () => undefined);
      stream.write('{"partial":');
    }
    const elapsed = await Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 3_000))]);
    expect(elapsed).toBeGreaterThanOrEqual(250);
  });

  it('leaves a stream whose request ended alone, however long its answer takes', async () => {
    listener = dualListener(
      (req, res) => {
        req.resume();
        req.on('end', () => setTimeout(() => res.end('late'), 700));
      },
      { bodyTimeoutMs: 200 },
    );
    const port = await listener.listen(0, '127.0.0.1');
    const session = http2.connect(`http://127.0.0.1:${port}`);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/slow-answer' });
      stream.end('{}');
      stream.setEncoding('utf8');
      let text = '';
      stream.on('data', (chunk: string) => {
        text += chunk;
      });
      await new Promise((resolve, reject) => {
        stream.on('end', resolve);
        stream.on('error', reject);
      });
      expect(text).toBe('late');
    } finally {
      session.close();
    }
  });

  it('announces the cap on concurrent streams per HTTP/2 session', async () => {
    listener = dualListener(reading, { maxConcurrentStreams: 7 });
    const port = await listener.listen(0, '127.0.0.1');
    const session = http2.connect(`http://127.0.0.1:${port}`);
    try {
      const settings = await new Promise<http2.Settings>((resolve) => session.once('remoteSettings', resolve));
      expect(settings.maxConcurrentStreams).toBe(7);
    } finally {
      session.close();
    }
  });

  it('cuts an HTTP/1.1 request whose body stalls for the body timeout, long before the request timeout', async () => {
    listener = dualListener(reading, { bodyTimeoutMs: 300, requestTimeoutMs: 60_000, headersTimeoutMs: 60_000 });
    const port = await listener.listen(0, '127.0.0.1');
    const started = Date.now();
    const text = await rawExchange(port, ['POST /stalled HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n', '{"a":']);
    const elapsed = Date.now() - started;
    expect(text).not.toContain('done');
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3_000);
  });

  it('lets an HTTP/1.1 body that keeps trickling in finish, and closes the keep-alive connection after the idle timeout', async () => {
    listener = dualListener(reading, { bodyTimeoutMs: 300, idleTimeoutMs: 400 });
    const port = await listener.listen(0, '127.0.0.1');
    // 12 parts 150 ms apart: 1.8 s in all, never 300 ms without a byte.
    const body = '0123456789ab';
    const parts = [`POST /trickle HTTP/1.1\r\nHost: t\r\nContent-Length: ${body.length}\r\n\r\n`, ...body];
    const started = Date.now();
    const text = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString('latin1');
      });
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
      socket.on('connect', async () => {
        for (const part of parts) {
          socket.write(part);
          await new Promise((r) => setTimeout(r, 150));
        }
      });
    });
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toContain('done');
    // Closed by the server once idle (the client never closes).
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('cuts an HTTP/1.1 request whose body does not arrive within the request timeout', async () => {
    listener = dualListener(reading, { headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const port = await listener.listen(0, '127.0.0.1');
    const started = Date.now();
    const text = await rawExchange(port, ['POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n', '{"a":']);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(text).not.toContain('done');
  });
});
