// Loose input refused: a number written in hexadecimal (or any non-decimal form) inside a JSON
// string of a Connect JSON request, and /v1 body fields named like Object.prototype members.

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { postJson, submitOverJson } from './support.ts';
import { send, useV1, workspaceHeaders } from './v1-support.ts';

const { t, ws } = useV1();

describe('Connect JSON numbers', () => {
  const serial = { identity_mode: 'IDENTITY_MODE_SERIAL', activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT' };

  it('refuses a hexadecimal, octal, binary or padded number string with invalid_argument naming the field, writing nothing', async () => {
    const jobs = await t.count('mint_jobs');
    for (const written of ['0x10', '0o20', '0b10000', ' 16', '1_6', 'Infinity']) {
      const res = await submitOverJson(t.api, ws, { requested_quantity: written, ...serial });
      const body = (await res.json()) as { code: string; message: string };
      expect([written, res.status, body.code]).toEqual([written, 400, 'invalid_argument']);
      expect(body.message).toMatch(/requested_quantity/);
    }
    const lots = await submitOverJson(t.api, ws, {
      requested_quantity: 10,
      identity_mode: 'IDENTITY_MODE_BATCH',
      activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
      lots: [{ lot_code: 'A', qty: '0xA' }],
    });
    expect(lots.status).toBe(400);
    expect(((await lots.json()) as { message: string }).message).toMatch(/lots\[0\]\.qty/);
    // The camelCase JSON name is checked too.
    const camel = await submitOverJson(t.api, ws, { requestedQuantity: '0x10', ...serial });
    expect(camel.status).toBe(400);
    expect(await t.count('mint_jobs')).toBe(jobs);
  });

  it('accepts a number as a JSON number or a decimal string, as proto3 JSON does', async () => {
    for (const written of [16, '16', '1.6e1']) {
      const res = await submitOverJson(t.api, ws, { requested_quantity: written, ...serial, idempotency_key: randomUUID() });
      expect([written, res.status]).toEqual([written, 200]);
      expect(await res.json()).toMatchObject({ ok: true });
    }
  });

  it('applies to every RPC (a page size of ListMintBatches)', async () => {
    const res = await postJson(t.api, '/mint.v1.MintService/ListMintBatches', { brand_id: ws.brandId, limit: '0x10' }, { authorization: `Bearer ${ws.token}` });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/limit/);
  });
});

describe('/v1 body field names', () => {
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    it(`refuses a field named ${name} by name, writing nothing`, async () => {
      const jobs = await t.count('mint_jobs');
      const raw = `{"product_id":"${ws.productId}","requested_quantity":10,"identity_mode":"serial","activation_mode":"first_scan","${name}":{"polluted":true}}`;
      const res = await send(t.api, 'POST', '/v1/mint/jobs', {
        raw,
        headers: { ...workspaceHeaders(ws), 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      });
      expect([res.status, res.body.error.code]).toEqual([400, 'invalid_request']);
      expect(res.body.error.message).toMatch(new RegExp(`^${name}: is not a known field`));
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(await t.count('mint_jobs')).toBe(jobs);
    });
  }
});
