import { describe, expect, it } from 'vitest';
import { createLogger, redactUrl } from './logger.ts';

/** A logger at `level` whose lines are parsed into `lines` (pino writes synchronously to it). */
function capture(level: 'info' | 'debug' | 'warn' = 'info', bindings: Record<string, unknown> = {}) {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const logger = createLogger({ logLevel: level }, bindings, {
    write(chunk: string) {
      raw.push(chunk);
      lines.push(JSON.parse(chunk) as Record<string, unknown>);
    },
  });
  return { logger, lines, raw };
}

const signed = 'https://id.example.com/v1/exports/e1/download?expires=1700000000&sig=c2VjcmV0LXNpZw';

describe('createLogger', () => {
  it('writes JSON lines with level, time, message and bindings', () => {
    const { logger, lines } = capture('info', { service: 'api' });
    logger.debug('hidden');
    logger.info({ jobId: 'j1' }, 'started');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, msg: 'started', jobId: 'j1', service: 'api' });
    expect(typeof lines[0]?.time).toBe('string');
  });

  it('redacts tokens, passwords and API keys in logged objects', () => {
    const { logger, raw, lines } = capture();
    logger.info(
      {
        token: 'tok-top',
        auth: { access_token: 'tok-nested', apiKey: 'key-nested' },
        deep: { a: { b: { password: 'pw-deep', keep: 'visible' } } },
        list: [{ secret: 'in-array' }],
      },
      'login',
    );
    const line = raw.join('');
    for (const secret of ['tok-top', 'tok-nested', 'key-nested', 'pw-deep', 'in-array']) {
      expect(line).not.toContain(secret);
    }
    expect(lines[0]).toMatchObject({
      token: '[Redacted]',
      auth: { access_token: '[Redacted]', apiKey: '[Redacted]' },
      deep: { a: { b: { password: '[Redacted]', keep: 'visible' } } },
    });
  });

  it('redacts Authorization, cookies and x-api-key request headers', () => {
    const { logger, raw, lines } = capture();
    const req = {
      method: 'GET',
      url: '/v1/exports/e1/download?sig=abc123&expires=1',
      headers: { authorization: 'Bearer eyJhbGciOi', 'x-api-key': 'mk_live_1', cookie: 's=1', accept: '*/*' },
      socket: { remoteAddress: '127.0.0.1', remotePort: 1234 },
    };
    logger.info({ req }, 'request');
    const line = raw.join('');
    expect(line).not.toContain('eyJhbGciOi');
    expect(line).not.toContain('mk_live_1');
    expect(line).not.toContain('abc123');
    expect(lines[0]).toMatchObject({
      req: {
        url: '/v1/exports/e1/download?sig=[Redacted]&expires=1',
        headers: { authorization: '[Redacted]', 'x-api-key': '[Redacted]', accept: '*/*' },
      },
    });
  });

  it('redacts signatures in URLs anywhere: fields, messages and errors', () => {
    const { logger, raw, lines } = capture();
    logger.info({ downloadUrl: signed, nested: { links: [signed] } }, `issued ${signed}`);
    logger.error(new Error(`fetch ${signed} failed`, { cause: new Error(`upstream ${signed}`) }));
    const text = raw.join('');
    expect(text).not.toContain('c2VjcmV0LXNpZw');
    expect(lines[0]?.downloadUrl).toBe('https://id.example.com/v1/exports/e1/download?expires=1700000000&sig=[Redacted]');
    expect(lines[1]).toMatchObject({ level: 50, err: { type: 'Error' } });
  });

  it('redacts bindings, including those of child loggers', () => {
    const { logger, raw, lines } = capture('info', { source: signed });
    logger
      .child({ dsn: 'postgres://mint:hunter2@db/mint' })
      .child({ auth: { token: 'grandchild-token' } })
      .info('connected');
    expect(raw.join('')).not.toContain('grandchild-token');
    expect(raw.join('')).not.toContain('hunter2');
    expect(raw.join('')).not.toContain('c2VjcmV0LXNpZw');
    expect(lines[0]?.dsn).toBe('postgres://mint:[Redacted]@db/mint');
  });

  it('does not alter the caller’s object', () => {
    const { logger } = capture();
    const payload = { token: 'keep-me', url: signed };
    logger.info(payload);
    expect(payload).toEqual({ token: 'keep-me', url: signed });
  });

  it('survives cyclic objects', () => {
    const { logger, lines } = capture();
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    logger.info({ cyclic }, 'cycle');
    expect(lines[0]).toMatchObject({ msg: 'cycle', cyclic: { name: 'loop' } });
  });
});

describe('redactUrl', () => {
  it('masks signing parameters and keeps the rest', () => {
    expect(redactUrl('https://x.test/d?a=1&signature=s3cr3t#frag')).toBe('https://x.test/d?a=1&signature=[Redacted]#frag');
    expect(redactUrl(new URL('https://x.test/d?token=t&X-Amz-Signature=abc'))).toBe('https://x.test/d?token=[Redacted]&X-Amz-Signature=[Redacted]');
  });

  it('masks the password of a connection URL', () => {
    expect(redactUrl('postgres://mint:hunter2@db:5432/mint')).toBe('postgres://mint:[Redacted]@db:5432/mint');
    expect(redactUrl('postgres://mint@db/mint')).toBe('postgres://mint@db/mint');
  });

  it('leaves URLs without secrets unchanged', () => {
    expect(redactUrl('https://id.example.com/01/09506000134352/21/ABC?linkType=all')).toBe('https://id.example.com/01/09506000134352/21/ABC?linkType=all');
  });
});
