// The EPCIS 2.0 interface over HTTP: GET /epcis/events answers the REST query subset over the
// events every move wrote (valid against the EPCIS 2.0 JSON Schema, paged by nextPageToken), and
// POST /epcis/capture applies a packaging line's document all or nothing, once.

import { moveSerials } from '@mint/usecases';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epcisValidator, mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let brand: SeededBrand;
let units: { serial: string; epc: string }[];

beforeAll(async () => {
  app = await setupUseCases();
  api = await startTestApi(app);
  brand = await app.seedBrand();
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 20, { activationMode: 'first_scan' });
  units = (await query<{ serial: string; resolver_url: string }>(app.db.em.fork(), "select u.serial, regexp_replace(b.resolver_base_url, '/$', '') || case when b.gtin is null then '/u/' || u.serial else '/01/' || b.gtin || '/21/' || u.serial end as resolver_url from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id where u.mint_batch_id = ? order by u.seq", [mintBatchId]))
    .map((r) => ({ serial: r.serial, epc: r.resolver_url }));
  const actor = { id: brand.userId };
  await moveSerials(app.ctx, actor, { brandId: brand.brandId, action: 'encode', reason: null, target: { serials: units.slice(0, 10).map((u) => u.serial) }, idempotencyKey: 'e' });
  await moveSerials(app.ctx, actor, { brandId: brand.brandId, action: 'commission', reason: null, target: { serials: units.slice(0, 10).map((u) => u.serial) }, idempotencyKey: 'c' });
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

const headers = () => ({ authorization: `Bearer ${brand.token}`, 'x-workspace-id': brand.brandId });

async function events(search: string): Promise<{ status: number; link: string | null; body: Record<string, unknown> }> {
  const res = await fetch(`${api.baseUrl}/epcis/events${search}`, { headers: headers() });
  return { status: res.status, link: res.headers.get('link'), body: await res.json() as Record<string, unknown> };
}
const eventList = (body: Record<string, unknown>) =>
  ((body['epcisBody'] as { queryResults: { resultsBody: { eventList: Record<string, unknown>[] } } }).queryResults.resultsBody.eventList);

async function capture(document: unknown) {
  const res = await fetch(`${api.baseUrl}/epcis/capture`, { method: 'POST', headers: { ...headers(), 'content-type': 'application/ld+json' }, body: JSON.stringify(document) });
  return { status: res.status, body: await res.json() as Record<string, unknown> };
}

const objectEvent = (id: string, action: string, bizStep: string, disposition: string, epcList: string[]) => ({
  type: 'ObjectEvent', eventID: `urn:uuid:${id}`, eventTime: '2026-11-28T10:00:00.000Z', eventTimeZoneOffset: '+01:00', epcList, action, bizStep, disposition,
});
const documentOf = (eventList: unknown[]) => ({
  '@context': ['https://ref.gs1.org/standards/epcis/2.0.0/epcis-context.jsonld'], type: 'EPCISDocument', schemaVersion: '2.0',
  creationDate: '2026-11-28T10:00:01.000Z', epcisBody: { eventList },
});

async function stateOf(serial: string): Promise<string> {
  const [row] = await query<{ state: string }>(app.db.em.fork(), `select coalesce(s.state, case when u.status = 'active' then 'commissioned' else 'issued' end) as state
    from mint_units u left join unit_states s on s.brand_id = u.brand_id and s.mint_batch_id = u.mint_batch_id and s.seq = u.seq where u.serial = ?`, [serial]);
  return row!.state;
}

describe('GET /epcis/events', () => {
  it('answers the query subset with a query document valid against the EPCIS 2.0 JSON Schema', async () => {
    const commissioning = await events('?EQ_bizStep=commissioning');
    expect(commissioning.status).toBe(200);
    expect(eventList(commissioning.body).map((e) => [e['bizStep'], (e['epcList'] as string[]).length])).toEqual([['commissioning', 10]]);
    const validate = epcisValidator();
    expect(validate(commissioning.body), JSON.stringify(validate.errors)).toBe(true);
    const cbv = await events('?EQ_bizStep=https://ref.gs1.org/cbv/BizStep-encoding&EQ_disposition=encoded');
    expect(eventList(cbv.body).map((e) => e['bizStep'])).toEqual(['encoding']);
    const one = await events(`?MATCH_epc=${encodeURIComponent(units[0]!.epc)}`);
    expect(eventList(one.body).map((e) => e['bizStep'])).toEqual(['encoding', 'commissioning']);
    expect(eventList((await events(`?MATCH_epc=${encodeURIComponent(units[15]!.epc)}`)).body)).toEqual([]);
    expect(eventList((await events('?LT_eventTime=2000-01-01T00:00:00Z')).body)).toEqual([]);
  });

  it('pages with nextPageToken, named in a Link rel="next"', async () => {
    const first = await events('?perPage=1');
    expect(eventList(first.body)).toHaveLength(1);
    const next = /<([^>]+)>; rel="next"/.exec(first.link ?? '')?.[1];
    expect(next).toContain('nextPageToken=');
    const second = await fetch(`${api.baseUrl}${next}`, { headers: headers() });
    const rest = eventList(await second.json() as Record<string, unknown>);
    expect(rest.map((e) => e['bizStep'])).not.toContain(eventList(first.body)[0]!['bizStep']);
  });

  it('names a parameter it does not answer, and refuses a caller without the brand', async () => {
    const bad = await events('?EQ_readPoint=x&perPage=0');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('EQ_readPoint');
    expect(JSON.stringify(bad.body)).toContain('perPage');
    const stranger = await app.seedBrand();
    const res = await fetch(`${api.baseUrl}/epcis/events`, { headers: { authorization: `Bearer ${stranger.token}`, 'x-workspace-id': brand.brandId } });
    expect(res.status).toBe(403);
  });
});

describe('POST /epcis/capture', () => {
  it('applies a valid document\'s events as moves, once', async () => {
    const doc = documentOf([
      objectEvent('0b5b7d1e-0000-4000-8000-000000000001', 'ADD', 'commissioning', 'active', units.slice(10, 15).map((u) => u.epc)),
      objectEvent('0b5b7d1e-0000-4000-8000-000000000002', 'DELETE', 'destroying', 'destroyed', units.slice(0, 2).map((u) => u.epc)),
    ]);
    const validate = epcisValidator();
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(await capture(doc)).toEqual({ status: 200, body: { ok: true, captured: 2, replayed: 0, moved: 7 } });
    expect(await stateOf(units[10]!.serial)).toBe('commissioned');
    expect(await stateOf(units[0]!.serial)).toBe('decommissioned');
    expect(await capture(doc)).toEqual({ status: 200, body: { ok: true, captured: 0, replayed: 2, moved: 0 } });
    const stored = eventList((await events(`?MATCH_epc=${encodeURIComponent(units[0]!.epc)}`)).body);
    expect(stored.map((e) => e['bizStep'])).toEqual(['encoding', 'commissioning', 'destroying']);
  });

  it('answers a document sent twice at once (a retry while the first request still runs): one applies it, the other answers it captured before', async () => {
    const doc = documentOf([objectEvent('0b5b7d1e-0000-4000-8000-000000000006', 'ADD', 'commissioning', 'active', units.slice(18, 20).map((u) => u.epc))]);
    // Both captures read the document's event as new, then wait for a unit's row lock held here.
    const holder = new pg.Client({ connectionString: app.database.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select 1 from mint_units where serial = $1 for update', [units[18]!.serial]);
      const both = [capture(doc), capture(doc)];
      for (let waiting = 0; waiting < 2;) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const [row] = (await holder.query<{ n: string }>(`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows;
        waiting = Number(row!.n);
      }
      await holder.query('commit');
      const answers = (await Promise.all(both)).map((a) => JSON.stringify(a)).sort();
      expect(answers).toEqual([
        { status: 200, body: { ok: true, captured: 0, replayed: 1, moved: 0 } }, { status: 200, body: { ok: true, captured: 1, replayed: 0, moved: 2 } },
      ].map((a) => JSON.stringify(a)));
    } finally {
      await holder.end();
    }
    expect(await stateOf(units[18]!.serial)).toBe('commissioned');
    const [stored] = await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from serial_moves where brand_id = ? and idempotency_key = 'epcis:0b5b7d1e-0000-4000-8000-000000000006'`, [brand.brandId]);
    expect(Number(stored!.n)).toBe(1);
  });

  it('changes nothing when one event of the document cannot be applied, naming the serial and its state', async () => {
    const doc = documentOf([
      objectEvent('0b5b7d1e-0000-4000-8000-000000000003', 'ADD', 'commissioning', 'active', [units[16]!.epc]),
      objectEvent('0b5b7d1e-0000-4000-8000-000000000004', 'ADD', 'commissioning', 'active', [units[1]!.epc]),
    ]);
    const refused = await capture(doc);
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toContain(`serial ${units[1]!.serial}, which is decommissioned (destroyed)`);
    expect(await stateOf(units[16]!.serial)).toBe('issued');
    const unknown = await capture(documentOf([objectEvent('0b5b7d1e-0000-4000-8000-000000000005', 'OBSERVE', 'shipping', 'in_transit', [units[17]!.epc])]));
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain('epcisBody.eventList[0].bizStep');
  });
});
