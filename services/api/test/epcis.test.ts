// The EPCIS 2.0 interface over HTTP: GET /epcis/events answers the REST query subset over the
// events every move wrote (valid against the EPCIS 2.0 JSON Schema, paged by nextPageToken), and
// POST /epcis/capture applies a packaging line's document all or nothing, once: checked against
// the EPCIS 2.0 JSON Schema, in event-time order, with the moves of the CBV mapping table, and for a
// partner's key only about its own allocation and containers.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { allocateSerials, createPartner, grantPartnerKey, mintContainers, moveSerials, setContainerSettings } from '@mint/usecases';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epcisValidator, mintCompleted } from '../../../test/support/pack-fixtures.ts';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { epcisSchemaViolations } from '../../../packages/usecases/src/lifecycle/epcis-schema.ts';
import { startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;
let brand: SeededBrand;
let units: { serial: string; epc: string }[];

beforeAll(async () => {
  app = await setupUseCases();
  api = await startTestApi(app);
  brand = await app.seedBrand();
  const { mintBatchId } = await mintCompleted(app.ctx, brand, 40, { activationMode: 'first_scan' });
  units = await unitsOf(mintBatchId);
  const actor = { id: brand.userId };
  await moveSerials(app.ctx, actor, {
    brandId: brand.brandId,
    action: 'encode',
    reason: null,
    target: { serials: units.slice(0, 10).map((u) => u.serial) },
    idempotencyKey: 'e',
  });
  await moveSerials(app.ctx, actor, {
    brandId: brand.brandId,
    action: 'commission',
    reason: null,
    target: { serials: units.slice(0, 10).map((u) => u.serial) },
    idempotencyKey: 'c',
  });
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

async function unitsOf(mintBatchId: string): Promise<{ serial: string; epc: string }[]> {
  return (
    await query<{ serial: string; resolver_url: string }>(
      app.db.em.fork(),
      "select u.serial, regexp_replace(b.resolver_base_url, '/$', '') || case when b.gtin is null then '/u/' || u.serial else '/01/' || b.gtin || '/21/' || u.serial end as resolver_url from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id where u.mint_batch_id = ? order by u.seq",
      [mintBatchId],
    )
  ).map((r) => ({ serial: r.serial, epc: r.resolver_url }));
}

const headers = () => ({ authorization: `Bearer ${brand.token}`, 'x-workspace-id': brand.brandId });

async function events(search: string, as: Record<string, string> = headers()): Promise<{ status: number; link: string | null; body: Record<string, unknown> }> {
  const res = await fetch(`${api.baseUrl}/epcis/events${search}`, { headers: as });
  return { status: res.status, link: res.headers.get('link'), body: (await res.json()) as Record<string, unknown> };
}
const eventList = (body: Record<string, unknown>) =>
  (body['epcisBody'] as { queryResults: { resultsBody: { eventList: Record<string, unknown>[] } } }).queryResults.resultsBody.eventList;

async function capture(document: unknown, as: Record<string, string> = headers()) {
  const res = await fetch(`${api.baseUrl}/epcis/capture`, {
    method: 'POST',
    headers: { ...as, 'content-type': 'application/ld+json' },
    body: JSON.stringify(document),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const objectEvent = (id: string, action: string, bizStep: string, disposition: string | null, epcList: string[], eventTime = new Date()) => ({
  type: 'ObjectEvent',
  eventID: `urn:uuid:${id}`,
  eventTime: eventTime.toISOString(),
  eventTimeZoneOffset: '+01:00',
  epcList,
  action,
  bizStep,
  ...(disposition === null ? {} : { disposition }),
});
const documentOf = (eventList: unknown[]) => ({
  '@context': ['https://ref.gs1.org/standards/epcis/2.0.0/epcis-context.jsonld'],
  type: 'EPCISDocument',
  schemaVersion: '2.0',
  creationDate: '2026-11-28T10:00:01.000Z',
  epcisBody: { eventList },
});

async function stateOf(serial: string): Promise<string> {
  const [row] = await query<{ state: string; reason: string | null }>(
    app.db.em.fork(),
    `select coalesce(s.state, case when u.status = 'active' then 'commissioned' else 'issued' end) as state, s.reason
    from mint_units u left join unit_states s on s.brand_id = u.brand_id and s.mint_batch_id = u.mint_batch_id and s.seq = u.seq where u.serial = ?`,
    [serial],
  );
  return row!.reason === null ? row!.state : `${row!.state} (${row!.reason})`;
}

const storedEvents = async () =>
  Number((await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from epcis_events where brand_id = ?', [brand.brandId]))[0]!.n);
const move = (action: 'encode' | 'commission' | 'scrap' | 'decommission', serials: string[], reason: 'recalled' | 'sample' | null = null) =>
  moveSerials(app.ctx, { id: brand.userId }, { brandId: brand.brandId, action, reason, target: { serials }, idempotencyKey: randomUUID() });
const violations = (body: Record<string, unknown>) =>
  (body['error'] as { details?: { violations: { field: string; message: string }[] } } | undefined)?.details?.violations ?? [];

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

  it('filters by EQ_disposition alone and by GE_eventTime', async () => {
    // The brand's events so far: the setup's encoding (encoded) and commissioning (active).
    expect(eventList((await events('?EQ_disposition=encoded')).body).map((e) => e['disposition'])).toEqual(['encoded']);
    expect(eventList((await events('?EQ_disposition=https://ref.gs1.org/cbv/Disp-active')).body).map((e) => e['bizStep'])).toEqual(['commissioning']);
    const cut = new Date(Date.now() + 5);
    await new Promise((r) => setTimeout(r, 10));
    await move('encode', [units[30]!.serial]);
    const since = eventList((await events(`?GE_eventTime=${encodeURIComponent(cut.toISOString())}`)).body);
    expect(since.map((e) => [e['bizStep'], e['epcList']])).toEqual([['encoding', [units[30]!.epc]]]);
    expect(
      eventList((await events(`?GE_eventTime=${encodeURIComponent(cut.toISOString())}&LT_eventTime=${encodeURIComponent(cut.toISOString())}`)).body),
    ).toEqual([]);
  });

  it('pages with nextPageToken, named in a Link rel="next"', async () => {
    const first = await events('?perPage=1');
    expect(eventList(first.body)).toHaveLength(1);
    const next = /<([^>]+)>; rel="next"/.exec(first.link ?? '')?.[1];
    expect(next).toContain('nextPageToken=');
    const second = await fetch(`${api.baseUrl}${next}`, { headers: headers() });
    const rest = eventList((await second.json()) as Record<string, unknown>);
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
  it('checks a 16 MiB document against the EPCIS 2.0 schema off the event loop: requests sent meanwhile are answered while it is checked', {
    timeout: 120_000,
  }, async () => {
    // 1,000 events of 390 short SGTIN URNs each (checking them is the slow part); the last event's
    // eventTime is no time, so the answer is the schema's refusal and nothing is applied.
    const event = (i: number) =>
      objectEvent(
        `0b5b7d1e-0000-4000-8000-${String(100_000 + i).padStart(12, '0')}`,
        'OBSERVE',
        'commissioning',
        'active',
        Array.from({ length: 390 }, (_, k) => `urn:epc:id:sgtin:0614141.107346.${i}x${k}`),
      );
    const doc = documentOf(Array.from({ length: 1000 }, (_, i) => (i === 999 ? { ...event(i), eventTime: 'not a time' } : event(i))));
    const text = JSON.stringify(doc);
    expect(text.length).toBeGreaterThan(15 * 2 ** 20);
    expect(text.length).toBeLessThanOrEqual(16 * 2 ** 20);
    // The check's own time on this machine now, for scale.
    const t = performance.now();
    expect(epcisSchemaViolations(JSON.parse(text)).length).toBeGreaterThan(0);
    const checkMs = performance.now() - t;
    let answeredAt: number | null = null;
    const capturing = fetch(`${api.baseUrl}/epcis/capture`, {
      method: 'POST',
      headers: { ...headers(), 'content-type': 'application/ld+json' },
      body: text,
    }).then(async (res) => {
      answeredAt = performance.now();
      return { status: res.status, body: JSON.stringify(await res.json()) };
    });
    // Health, one request after another, while the capture is in flight: on the loop, one of them
    // would wait out the whole check.
    const latencies: number[] = [];
    while (answeredAt === null) {
      const sent = performance.now();
      const res = await fetch(`${api.baseUrl}/healthz`);
      await res.arrayBuffer();
      if (answeredAt === null) latencies.push(performance.now() - sent);
    }
    const answer = await capturing;
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('/epcisBody/eventList/999/eventTime');
    expect(latencies.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...latencies), `health latencies ${latencies.map(Math.round).join(', ')} ms; the check alone ${Math.round(checkMs)} ms`).toBeLessThan(
      checkMs / 2,
    );
  });

  it("applies a valid document's events as moves, once", async () => {
    const doc = documentOf([
      objectEvent(
        '0b5b7d1e-0000-4000-8000-000000000001',
        'ADD',
        'commissioning',
        'active',
        units.slice(10, 15).map((u) => u.epc),
      ),
      objectEvent(
        '0b5b7d1e-0000-4000-8000-000000000002',
        'DELETE',
        'destroying',
        'destroyed',
        units.slice(0, 2).map((u) => u.epc),
      ),
    ]);
    const validate = epcisValidator();
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(await capture(doc)).toEqual({ status: 200, body: { ok: true, captured: 2, replayed: 0, moved: 7 } });
    expect(await stateOf(units[10]!.serial)).toBe('commissioned');
    expect(await stateOf(units[0]!.serial)).toBe('decommissioned (destroyed)');
    expect(await capture(doc)).toEqual({ status: 200, body: { ok: true, captured: 0, replayed: 2, moved: 0 } });
    const stored = eventList((await events(`?MATCH_epc=${encodeURIComponent(units[0]!.epc)}`)).body);
    expect(stored.map((e) => e['bizStep'])).toEqual(['encoding', 'commissioning', 'destroying']);
  });

  it('answers a document sent twice at once (a retry while the first request still runs): one applies it, the other answers it captured before', async () => {
    const doc = documentOf([
      objectEvent(
        '0b5b7d1e-0000-4000-8000-000000000006',
        'ADD',
        'commissioning',
        'active',
        units.slice(18, 20).map((u) => u.epc),
      ),
    ]);
    // Both captures read the document's event as new, then wait for a unit's row lock held here.
    const holder = new pg.Client({ connectionString: app.database.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select 1 from mint_units where serial = $1 for update', [units[18]!.serial]);
      const both = [capture(doc), capture(doc)];
      for (let waiting = 0; waiting < 2; ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const [row] = (
          await holder.query<{ n: string }>(`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)
        ).rows;
        waiting = Number(row!.n);
      }
      await holder.query('commit');
      const answers = (await Promise.all(both)).map((a) => JSON.stringify(a)).sort();
      expect(answers).toEqual(
        [
          { status: 200, body: { ok: true, captured: 0, replayed: 1, moved: 0 } },
          { status: 200, body: { ok: true, captured: 1, replayed: 0, moved: 2 } },
        ].map((a) => JSON.stringify(a)),
      );
    } finally {
      await holder.end();
    }
    expect(await stateOf(units[18]!.serial)).toBe('commissioned');
    const [stored] = await query<{ n: string }>(
      app.db.em.fork(),
      `select count(*) as n from serial_moves where brand_id = ? and idempotency_key = 'epcis:0b5b7d1e-0000-4000-8000-000000000006'`,
      [brand.brandId],
    );
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

describe('POST /epcis/capture checks the document against the EPCIS 2.0 JSON Schema first', () => {
  it('refuses an invalid document with 400 naming its first problems by JSON pointer, and changes nothing', async () => {
    const before = await storedEvents();
    const event = { ...objectEvent(randomUUID(), 'ADD', 'commissioning', 'active', [units[25]!.epc]), eventTime: 'garbage', unknownField: 1 } as Record<
      string,
      unknown
    >;
    delete event['eventTimeZoneOffset'];
    const document = documentOf([event]) as Record<string, unknown>;
    delete document['@context'];
    const refused = await capture(document);
    expect(refused.status).toBe(400);
    expect(violations(refused.body)).toEqual(
      expect.arrayContaining([
        { field: '/epcisBody/eventList/0/eventTime', message: 'must be an RFC 3339 date-time with a time zone offset' },
        { field: '/epcisBody/eventList/0/eventTimeZoneOffset', message: 'is required' },
        { field: '/epcisBody/eventList/0/unknownField', message: expect.stringContaining('is not an EPCIS 2.0 field') as string },
        { field: '/@context', message: 'is required' },
      ]),
    );
    expect(await stateOf(units[25]!.serial)).toBe('issued');
    expect(await storedEvents()).toBe(before);
    // A bad EPC: named alone, not with the alternatives (quantityList, …) it was not meant as.
    const badEpc = await capture(documentOf([objectEvent(randomUUID(), 'ADD', 'commissioning', 'active', ['not a uri'])]));
    expect(violations(badEpc.body)).toEqual([{ field: '/epcisBody/eventList/0/epcList/0', message: 'must be a URI' }]);
  });
});

describe('POST /epcis/capture keeps event-time order', () => {
  it("refuses an event dated ahead of the service's clock, or before the unit was minted, naming the event", async () => {
    const ahead = await capture(documentOf([objectEvent(randomUUID(), 'ADD', 'commissioning', 'active', [units[26]!.epc], new Date(Date.now() + 3_600_000))]));
    expect(ahead.status).toBe(400);
    expect(violations(ahead.body)).toEqual([
      { field: 'epcisBody.eventList[0].eventTime', message: expect.stringContaining("is ahead of the service's clock") as string },
    ]);
    const beforeMint = await capture(
      documentOf([objectEvent(randomUUID(), 'ADD', 'commissioning', 'active', [units[26]!.epc], new Date('2005-04-03T20:33:31Z'))]),
    );
    expect(beforeMint.status).toBe(400);
    expect(violations(beforeMint.body)).toEqual([
      { field: 'epcisBody.eventList[0].eventTime', message: expect.stringContaining(`is before serial ${units[26]!.serial} was minted`) as string },
    ]);
    expect(await stateOf(units[26]!.serial)).toBe('issued');
  });

  it("refuses an event dated before the latest event of an EPC it names, its own document's included, so nothing is packed before it was commissioned", async () => {
    const unit = units[21]!;
    await move('encode', [unit.serial]);
    const [encoding] = eventList((await events(`?MATCH_epc=${encodeURIComponent(unit.epc)}`)).body);
    const encodedAt = new Date(String(encoding!['eventTime']));
    const early = await capture(documentOf([objectEvent(randomUUID(), 'OBSERVE', 'commissioning', 'active', [unit.epc], new Date(encodedAt.getTime() - 1))]));
    expect(early.status).toBe(400);
    expect(violations(early.body)).toEqual([
      { field: 'epcisBody.eventList[0].eventTime', message: expect.stringContaining(`is before the latest event recorded for ${unit.epc}`) as string },
    ]);
    expect(await stateOf(unit.serial)).toBe('encoded');

    await setContainerSettings(app.ctx, { id: brand.userId }, { brandId: brand.brandId, companyPrefix: '0614141', maxDepth: null });
    const { ssccs } = await mintContainers(
      app.ctx,
      { id: brand.userId },
      { brandId: brand.brandId, level: 'case', count: 1, extensionDigit: 0, idempotencyKey: randomUUID() },
    );
    const [{ base }] = (await query<{ base: string }>(app.db.em.fork(), 'select resolver_base_url as base from brands where id = ?', [brand.brandId])) as [
      { base: string },
    ];
    const caseEpc = `${base.replace(/\/$/, '')}/00/${ssccs[0]!}`;
    await new Promise((r) => setTimeout(r, 20));
    const commissionedAt = new Date();
    const packing = (eventTime: Date) => ({
      type: 'AggregationEvent',
      eventID: `urn:uuid:${randomUUID()}`,
      eventTime: eventTime.toISOString(),
      eventTimeZoneOffset: '+00:00',
      parentID: caseEpc,
      childEPCs: [unit.epc],
      action: 'ADD',
      bizStep: 'packing',
    });
    const commissioning = objectEvent(randomUUID(), 'OBSERVE', 'commissioning', 'active', [unit.epc], commissionedAt);
    const backDated = await capture(documentOf([commissioning, packing(new Date(commissionedAt.getTime() - 10))]));
    expect(backDated.status).toBe(400);
    expect(violations(backDated.body)).toEqual([
      { field: 'epcisBody.eventList[1].eventTime', message: expect.stringContaining(`is before the latest event recorded for ${unit.epc}`) as string },
    ]);
    expect(await stateOf(unit.serial)).toBe('encoded');
    expect(await capture(documentOf([commissioning, packing(commissionedAt)]))).toMatchObject({ status: 200, body: { captured: 2 } });
  });
});

describe('POST /epcis/capture expresses the moves of the CBV mapping table', () => {
  it("refuses the standard's example 9.6.1 naming exactly what it does not support, after the schema accepted it", async () => {
    const example = JSON.parse(
      readFileSync(new URL('../../../test/fixtures/standards/epcis-2.0/Example_9.6.1-ObjectEvent.jsonld', import.meta.url), 'utf8'),
    ) as Record<string, unknown>;
    const refused = await capture(example);
    expect(refused.status).toBe(400);
    expect(violations(refused.body).map((v) => `${v.field}: ${v.message.replace(/: capture applies .*$/, '')}`)).toEqual([
      'epcisBody.eventList[0].bizStep: ObjectEvent OBSERVE shipping with disposition in_transit is not supported',
      'epcisBody.eventList[1].bizStep: ObjectEvent OBSERVE receiving with disposition in_progress is not supported',
    ]);
  });

  it("scraps an encoded label with the service's own scrap event, and decommissions a commissioned item as destroyed with the same words", async () => {
    await move('scrap', [units[23]!.serial]);
    const [own] = eventList((await events(`?MATCH_epc=${encodeURIComponent(units[23]!.epc)}`)).body);
    expect(own).toMatchObject({ action: 'DELETE', bizStep: 'destroying', disposition: 'destroyed' });
    await move('encode', [units[24]!.serial]);
    const again = { ...own, eventID: `urn:uuid:${randomUUID()}`, eventTime: new Date().toISOString(), epcList: [units[24]!.epc, units[3]!.epc] };
    delete (again as Record<string, unknown>)['recordTime'];
    expect(await capture(documentOf([again]))).toMatchObject({ status: 200, body: { captured: 1, moved: 2 } });
    expect(await stateOf(units[24]!.serial)).toBe('scrapped');
    expect(await stateOf(units[3]!.serial)).toBe('decommissioned (destroyed)');
  });

  it('reactivates a recalled item by commissioning it again (active), and decommissions a sample by sampling', async () => {
    await move('decommission', [units[4]!.serial], 'recalled');
    expect(await capture(documentOf([objectEvent(randomUUID(), 'ADD', 'commissioning', 'active', [units[4]!.epc])]))).toMatchObject({ status: 200 });
    expect(await stateOf(units[4]!.serial)).toBe('commissioned');
    expect(await capture(documentOf([objectEvent(randomUUID(), 'DELETE', 'sampling', 'inactive', [units[5]!.epc])]))).toMatchObject({ status: 200 });
    expect(await stateOf(units[5]!.serial)).toBe('decommissioned (sample)');
    // The service's own sample event says sampling too, so it captures back as a sample, not as consumed.
    await move('decommission', [units[6]!.serial], 'sample');
    const [own] = eventList((await events(`?MATCH_epc=${encodeURIComponent(units[6]!.epc)}&EQ_bizStep=sampling`)).body);
    expect(own).toMatchObject({ action: 'DELETE', bizStep: 'sampling', disposition: 'inactive' });
  });
});

describe("POST /epcis/capture and GET /epcis/events with a partner's key", () => {
  it("captures about the partner's own allocation only, and answers the partner its own events", async () => {
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 10, { activationMode: 'first_scan' });
    const batch = await unitsOf(mintBatchId);
    const { partnerId } = await createPartner(app.ctx, { id: brand.userId }, { brandId: brand.brandId, name: 'Packaging line' });
    const granted = await grantPartnerKey(
      app.ctx,
      { id: brand.userId },
      { brandId: brand.brandId, partnerId, name: 'line key', productId: null, mintBatchId, quota: 5 },
    );
    const allocated = (
      await allocateSerials(app.ctx, { apiKeyId: granted.keyId, partnerId }, { brandId: brand.brandId, quantity: 5, idempotencyKey: 'a' })
    ).units.map((u) => u.serial);
    const epcOf = (serial: string) => batch.find((u) => u.serial === serial)!.epc;
    const outside = batch.find((u) => !allocated.includes(u.serial))!;
    const line = { 'x-api-key': granted.apiKey, 'x-workspace-id': brand.brandId };

    const foreign = await capture(
      documentOf([
        objectEvent(randomUUID(), 'ADD', 'commissioning', 'active', [epcOf(allocated[2]!)]),
        objectEvent(randomUUID(), 'ADD', 'commissioning', 'active', [epcOf(allocated[3]!), outside.epc]),
      ]),
      line,
    );
    expect(foreign.status).toBe(403);
    expect(JSON.stringify(foreign.body)).toContain(`epcisBody.eventList[1].epcList[1] ${outside.epc} is not in this partner's allocation`);
    expect(await stateOf(allocated[2]!)).toBe('issued');

    // Events of one EPC at the same instant have no order between them: the line dates them apart.
    const t = Date.now();
    const ok = await capture(
      documentOf([
        objectEvent(randomUUID(), 'ADD', 'encoding', 'encoded', allocated.slice(0, 2).map(epcOf), new Date(t)),
        objectEvent(randomUUID(), 'OBSERVE', 'commissioning', 'active', allocated.slice(0, 2).map(epcOf), new Date(t + 1)),
        objectEvent(randomUUID(), 'DELETE', 'destroying', 'destroyed', [epcOf(allocated[2]!)], new Date(t + 2)),
      ]),
      line,
    );
    expect(ok).toMatchObject({ status: 200, body: { captured: 3, moved: 5 } });
    expect(await stateOf(allocated[0]!)).toBe('commissioned');
    expect(await stateOf(allocated[2]!)).toBe('scrapped');
    // Destroying a commissioned item is a decommissioning: the brand's.
    const brandsMove = await capture(documentOf([objectEvent(randomUUID(), 'DELETE', 'destroying', 'destroyed', [epcOf(allocated[0]!)])]), line);
    expect(brandsMove.status).toBe(403);
    expect(JSON.stringify(brandsMove.body)).toContain(`decommission of serial ${allocated[0]!} (commissioned) is the brand's`);

    // Packing: into a case the partner minted, yes; into the brand's case, no (naming the EPC).
    await setContainerSettings(app.ctx, { id: brand.userId }, { brandId: brand.brandId, companyPrefix: '0614141', maxDepth: null });
    const lineCase = (
      await mintContainers(
        app.ctx,
        { id: granted.keyId, partnerId },
        { brandId: brand.brandId, level: 'case', count: 1, extensionDigit: 5, idempotencyKey: 'c' },
      )
    ).ssccs[0]!;
    const brandCase = (
      await mintContainers(app.ctx, { id: brand.userId }, { brandId: brand.brandId, level: 'case', count: 1, extensionDigit: 5, idempotencyKey: randomUUID() })
    ).ssccs[0]!;
    const base = epcOf(allocated[0]!).replace(/\/01\/.*$/, '');
    const pack = (sscc: string) =>
      documentOf([
        {
          type: 'AggregationEvent',
          eventID: `urn:uuid:${randomUUID()}`,
          eventTime: new Date().toISOString(),
          eventTimeZoneOffset: '+00:00',
          parentID: `${base}/00/${sscc}`,
          childEPCs: allocated.slice(0, 2).map(epcOf),
          action: 'ADD',
          bizStep: 'packing',
        },
      ]);
    const intoBrands = await capture(pack(brandCase), line);
    expect(intoBrands.status).toBe(403);
    expect(JSON.stringify(intoBrands.body)).toContain(`epcisBody.eventList[0].parentID ${base}/00/${brandCase} is not a container this partner minted`);
    expect(await capture(pack(lineCase), line)).toMatchObject({ status: 200, body: { captured: 1, moved: 2 } });

    const own = eventList((await events('', line)).body);
    expect(own.map((e) => e['bizStep'])).toEqual(['reserving', 'encoding', 'commissioning', 'destroying', 'commissioning', 'packing']);
    expect(own.flatMap((e) => (e['epcList'] ?? e['childEPCs']) as string[]).every((epc) => allocated.map(epcOf).includes(epc) || epc.endsWith(lineCase))).toBe(
      true,
    );
    const seenByBrand = eventList((await events(`?MATCH_epc=${encodeURIComponent(epcOf(allocated[0]!))}`)).body);
    expect(seenByBrand.map((e) => e['bizStep'])).toEqual(['reserving', 'encoding', 'commissioning', 'packing']);
    expect(eventList((await events('?perPage=1000')).body).length).toBeGreaterThan(own.length);
  });
});
