import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyKeyReusedError, IllegalStateError, InvalidInputError, type ActivationMode } from '@mint/domain';
import {
  activateMintUnits,
  continueSerialMove,
  epcisDocument,
  getMintKpis,
  getSerialMove,
  listMintEvents,
  mintContainers,
  moveSerials,
  packContainer,
  processMintJobBatch,
  setContainerSettings,
  setMintBatchStatus,
  submitMintRequest,
  unpackContainer,
  type MoveSerialsInput,
} from '@mint/usecases';
import { query } from '../../../test/support/sql.ts';
import { epcisValidator } from '../../../test/support/pack-fixtures.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
beforeAll(async () => {
  app = await setupUseCases();
});
afterAll(() => app.close());

const actorOf = (brand: SeededBrand) => ({ id: brand.userId });
let keys = 0;
const key = () => `key-${++keys}`;

async function mint(brand: SeededBrand, quantity: number, activationMode: ActivationMode = 'first_scan') {
  const result = await submitMintRequest(app.ctx, actorOf(brand), {
    brandId: brand.brandId,
    productId: brand.productId,
    productBatchId: null,
    requestedQuantity: quantity,
    identityMode: 'serial',
    activationMode,
    lots: [],
    idempotencyKey: null,
  });
  if (!result.ok) throw new Error('blocked');
  for (let i = 0; i < 100; i++) if ((await processMintJobBatch(app.ctx, brand.brandId, result.mintJobId, 5000)).done) break;
  return result.mintBatchId;
}

async function serialsOf(batchId: string, from: number, to: number): Promise<string[]> {
  return (
    await query<{ serial: string }>(app.db.em.fork(), `select serial from mint_units where mint_batch_id = ? and seq between ? and ? order by seq`, [
      batchId,
      from,
      to,
    ])
  ).map((r) => r.serial);
}

/** Every unit's state of a batch, from the units and their lifecycle rows, by seq. */
async function statesOf(batchId: string): Promise<Map<number, string>> {
  const found = await query<{ seq: number; state: string }>(
    app.db.em.fork(),
    `
    select u.seq, coalesce(s.state || coalesce(':' || s.reason, ''), case when u.status = 'active' then 'commissioned' else 'issued' end) as state
    from mint_units u left join unit_states s on s.brand_id = u.brand_id and s.mint_batch_id = u.mint_batch_id and s.seq = u.seq
    where u.mint_batch_id = ?`,
    [batchId],
  );
  return new Map(found.map((r) => [r.seq, r.state]));
}

async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => 'resolved',
    (e: unknown) => e,
  );
}

const move = (brand: SeededBrand, rest: Omit<MoveSerialsInput, 'brandId' | 'idempotencyKey'> & { idempotencyKey?: string }) =>
  moveSerials(app.ctx, actorOf(brand), { brandId: brand.brandId, idempotencyKey: key(), ...rest }, { runAll: true });

describe('moveSerials', () => {
  it('walks serials through encode, commission, decommission and reactivation, keeping active_tokens equal to the commissioned count', async () => {
    const brand = await app.seedBrand();
    const batch = await mint(brand, 1000);
    const serials = await serialsOf(batch, 1, 100);
    expect(await move(brand, { action: 'encode', reason: null, target: { serials: serials.slice(0, 80) } })).toMatchObject({
      status: 'done',
      moved: 80,
      refused: 0,
    });
    expect(await move(brand, { action: 'commission', reason: null, target: { serials } })).toMatchObject({ moved: 100, refused: 0 });
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(100);
    const recalled = await move(brand, { action: 'decommission', reason: 'recalled', target: { serials: serials.slice(0, 10) } });
    expect(recalled).toMatchObject({ moved: 10, refused: 0 });
    await move(brand, { action: 'decommission', reason: 'destroyed', target: { serials: serials.slice(10, 20) } });
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(80);
    // Reactivation takes back the recall, never the destruction, and says why per unit.
    const back = await move(brand, { action: 'reactivate', reason: null, target: { serials: serials.slice(0, 20) } });
    expect(back).toMatchObject({ moved: 10, refused: 10 });
    expect(back.refusals[0]).toEqual({
      serial: serials[10],
      mintBatchId: batch,
      seq: 11,
      refusal: 'reason_final',
      state: 'decommissioned',
      reason: 'destroyed',
    });
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(90);
    const states = await statesOf(batch);
    expect(states.get(1)).toBe('commissioned');
    expect(states.get(11)).toBe('decommissioned:destroyed');
    expect(states.get(101)).toBe('issued');
    const [active] = await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from mint_units where mint_batch_id = ? and status = 'active'`, [
      batch,
    ]);
    expect(Number(active!.n)).toBe(90);
  });

  it("refuses per unit what cannot move: wrong state, unknown serials and another brand's serials, naming the state", async () => {
    const brand = await app.seedBrand();
    const other = await app.seedBrand();
    const batch = await mint(brand, 50);
    const foreign = await serialsOf(await mint(other, 5), 1, 5);
    const serials = await serialsOf(batch, 1, 11);
    const spare = serials.pop()!;
    await move(brand, { action: 'scrap', reason: null, target: { serials: serials.slice(0, 5) } });
    const result = await move(brand, { action: 'commission', reason: null, target: { serials: [...serials, ...foreign, 'NOSUCHSERIAL'] } });
    expect(result).toMatchObject({ total: 16, moved: 5, refused: 11 });
    expect(result.refusals.filter((r) => r.refusal === 'wrong_state').map((r) => r.state)).toEqual(Array(5).fill('scrapped'));
    expect(
      result.refusals
        .filter((r) => r.refusal === 'unknown')
        .map((r) => r.serial)
        .sort(),
    ).toEqual([...foreign, 'NOSUCHSERIAL'].sort());
    // The other brand's units did not move.
    expect((await getMintKpis(app.ctx, other.brandId)).activeTokens).toBe(0);
    // One serial that cannot move is an error naming its state; nothing is kept under its key.
    const error = await rejection(move(brand, { action: 'return', reason: null, target: { serials: [serials[0]!] }, idempotencyKey: 'single' }));
    expect(error).toBeInstanceOf(IllegalStateError);
    expect(String(error)).toMatch(/serial that is scrapped; return needs issued/);
    expect(await move(brand, { action: 'return', reason: null, target: { serials: [spare] }, idempotencyKey: 'single' })).toMatchObject({
      moved: 1,
      refused: 0,
      replayed: false,
    });
  });

  it('never commissions by manual activation a unit that was scrapped, returned or decommissioned', async () => {
    const brand = await app.seedBrand();
    const batch = await mint(brand, 30);
    const serials = await serialsOf(batch, 1, 30);
    await move(brand, { action: 'scrap', reason: null, target: { serials: serials.slice(0, 5) } });
    await move(brand, { action: 'return', reason: null, target: { serials: serials.slice(5, 10) } });
    await move(brand, { action: 'encode', reason: null, target: { serials: serials.slice(10, 15) } });
    expect(await activateMintUnits(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: batch })).toEqual({ activatedCount: 20 });
    const states = [...(await statesOf(batch)).entries()].sort((a, b) => a[0] - b[0]).map(([, s]) => s);
    expect(states).toEqual([...Array(5).fill('scrapped'), ...Array(5).fill('returned'), ...Array(20).fill('commissioned')]);
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(20);
  });

  it('is idempotent by key: a repeat answers the first move and changes nothing; the key under another request is refused', async () => {
    const brand = await app.seedBrand();
    const batch = await mint(brand, 20, 'active_at_mint');
    const serials = await serialsOf(batch, 1, 20);
    const input = { action: 'decommission' as const, reason: 'stolen' as const, target: { serials }, idempotencyKey: 'theft-1' };
    const first = await move(brand, input);
    const again = await move(brand, input);
    expect(again).toEqual({ ...first, replayed: true });
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(0);
    const events = (await listMintEvents(app.ctx, brand.brandId, { limit: 100, cursor: null, eventType: 'mint_units_moved', entityType: null, entityId: null }))
      .items;
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ move_id: first.moveId, action: 'decommission', reason: 'stolen', to: 'decommissioned', count: 20 });
    expect(await rejection(move(brand, { ...input, reason: 'recalled' }))).toBeInstanceOf(IdempotencyKeyReusedError);
  });

  it('names the field of bad input and writes nothing', async () => {
    const brand = await app.seedBrand();
    const bad = await rejection(move(brand, { action: 'decommission', reason: null, target: { mintBatchId: 'nope', fromSeq: 5, toSeq: 2 } }));
    expect(bad).toBeInstanceOf(InvalidInputError);
    expect((bad as InvalidInputError).violations.map((v) => v.field)).toEqual(['reason', 'range.mint_batch_id', 'range.to_seq']);
    const [n] = await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from serial_moves where brand_id = ?`, [brand.brandId]);
    expect(Number(n!.n)).toBe(0);
  });

  it('moves a whole batch in chunks, resumable one chunk at a time, and reports units of a voided batch', { timeout: 120_000 }, async () => {
    const brand = await app.seedBrand();
    const batch = await mint(brand, 25_000, 'active_at_mint');
    const started = await moveSerials(app.ctx, actorOf(brand), {
      brandId: brand.brandId,
      action: 'decommission',
      reason: 'expired',
      target: { mintBatchId: batch },
      idempotencyKey: key(),
    });
    expect(started).toMatchObject({ status: 'running', total: 25_000, moved: 10_000 });
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(15_000);
    expect(await continueSerialMove(app.ctx, brand.brandId, started.moveId)).toMatchObject({ status: 'running', moved: 20_000 });
    expect(await continueSerialMove(app.ctx, brand.brandId, started.moveId)).toMatchObject({ status: 'done', moved: 25_000, refused: 0 });
    expect(await continueSerialMove(app.ctx, brand.brandId, started.moveId)).toMatchObject({ status: 'done', moved: 25_000 });
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(0);
    const voided = await mint(brand, 10);
    await setMintBatchStatus(app.ctx, actorOf(brand), { brandId: brand.brandId, mintBatchId: voided, status: 'voided', reason: 'misprint' });
    const refused = await move(brand, { action: 'encode', reason: null, target: { mintBatchId: voided, fromSeq: 3, toSeq: 12 } });
    expect(refused).toMatchObject({ total: 10, moved: 0, refused: 10 });
    expect(refused.refusals.map((r) => r.refusal)).toEqual([...Array(8).fill('batch_voided'), 'unknown', 'unknown']);
  });

  it('reports each refused unit of a move across many chunks exactly once, paged, also when a chunk is killed before its commit and run again', {
    timeout: 120_000,
  }, async () => {
    const brand = await app.seedBrand();
    const batch = await mint(brand, 3_000);
    // Every third unit encoded first: the batch's encode then refuses those (wrong state) and the 50 seqs past the batch (unknown).
    const encoded = (await serialsOf(batch, 1, 3_000)).filter((_, i) => i % 3 === 0);
    await move(brand, { action: 'encode', reason: null, target: { serials: encoded } });
    const small = { ...app.ctx, serialMoveChunk: 250 };
    const started = await moveSerials(small, actorOf(brand), {
      brandId: brand.brandId,
      action: 'encode',
      reason: null,
      target: { mintBatchId: batch, toSeq: 3_050 },
      idempotencyKey: key(),
    });
    for (let i = 0; i < 4; i++) await continueSerialMove(small, brand.brandId, started.moveId);
    // Kill the sixth chunk after all its writes, waiting for its refusal rows behind a lock, before its commit.
    const holder = new pg.Client({ connectionString: app.database.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table serial_move_refusals in share mode');
      const chunk = continueSerialMove(small, brand.brandId, started.moveId).then(
        () => 'committed',
        (e: unknown) => e,
      );
      let pid: number | null = null;
      for (let i = 0; i < 500 && pid === null; i++) {
        // pg_stat_activity is read as of the transaction's first look unless its snapshot is cleared.
        const waiting = await holder.query<{ pid: number }>(
          `select pid from (select pg_stat_clear_snapshot()) c, pg_stat_activity where wait_event_type = 'Lock' and query like '%insert into serial_move_refusals%'`,
        );
        pid = waiting.rows[0]?.pid ?? null;
        if (pid === null) await new Promise((r) => setTimeout(r, 20));
      }
      expect(pid).not.toBeNull();
      await holder.query('select pg_terminate_backend($1)', [pid]);
      expect(await chunk).not.toBe('committed');
      await holder.query('rollback');
    } finally {
      await holder.end();
    }
    // The killed chunk left nothing: five chunks of 250 (seqs 1 to 1,250) are recorded, 417 of their units refused.
    expect(await getSerialMove(app.ctx, brand.brandId, started.moveId)).toMatchObject({ status: 'running', moved: 833, refused: 417 });
    let state = 'running';
    while (state === 'running') state = (await continueSerialMove(small, brand.brandId, started.moveId))!.status;
    const pages = [];
    let token: string | null = null;
    do {
      const page = await getSerialMove(app.ctx, brand.brandId, started.moveId, null, { pageSize: 300, pageToken: token });
      pages.push(page.refusals);
      token = page.nextPageToken;
    } while (token !== null);
    const refused = pages.flat();
    expect(pages.map((p) => p.length)).toEqual([300, 300, 300, 150]);
    const expected = [
      ...Array.from({ length: 1_000 }, (_, i) => `${3 * i + 1} wrong_state encoded`),
      ...Array.from({ length: 50 }, (_, i) => `${3_001 + i} unknown null`),
    ];
    expect(refused.map((r) => `${r.seq} ${r.refusal} ${r.state}`)).toEqual(expected);
    expect(await getSerialMove(app.ctx, brand.brandId, started.moveId)).toMatchObject({
      status: 'done',
      total: 3_050,
      moved: 2_000,
      refused: 1_050,
      nextPageToken: null,
    });
    const states = await statesOf(batch);
    expect([...states.values()].every((s) => s === 'encoded')).toBe(true);
    const [rows] = await query<{ n: string }>(app.db.em.fork(), 'select count(*) as n from serial_move_refusals where move_id = ?', [started.moveId]);
    expect(rows!.n).toBe('1050');
  });

  it('moves a seq range by any action in the database, each unit by its own state, refusing per unit in seq order', async () => {
    const brand = await app.seedBrand();
    const batch = await mint(brand, 30);
    const serials = await serialsOf(batch, 1, 30);
    await move(brand, { action: 'encode', reason: null, target: { serials: serials.slice(0, 5) } });
    await move(brand, { action: 'scrap', reason: null, target: { serials: serials.slice(5, 8) } });
    const range = (fromSeq: number, toSeq: number) => ({ mintBatchId: batch, fromSeq, toSeq });
    // Encoded and issued units are commissioned (one event each: OBSERVE and ADD); scrapped and unknown seqs are refused.
    const commissioned = await move(brand, { action: 'commission', reason: null, target: range(1, 32) });
    expect(commissioned).toMatchObject({ status: 'done', total: 32, moved: 27, refused: 5 });
    expect(commissioned.refusals).toEqual([
      ...[6, 7, 8].map((seq) => ({ serial: serials[seq - 1], mintBatchId: batch, seq, refusal: 'wrong_state', state: 'scrapped', reason: null })),
      ...[31, 32].map((seq) => ({ serial: null, mintBatchId: batch, seq, refusal: 'unknown', state: null, reason: null })),
    ]);
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(27);
    const events = await query<{ action: string; epcs: number; first: string }>(
      app.db.em.fork(),
      `select body->>'action' as action, jsonb_array_length(body->'epcList') as epcs, body->'epcList'->>0 as first from epcis_events where move_id = ?`,
      [commissioned.moveId],
    );
    expect(events.map((e) => `${e.action} ${e.epcs}`).sort()).toEqual(['ADD 22', 'OBSERVE 5']);
    expect(events.find((e) => e.action === 'ADD')!.first).toMatch(new RegExp(`/21/${serials[8]}$`));
    const recalled = await move(brand, { action: 'decommission', reason: 'recalled', target: range(1, 33) });
    expect(recalled).toMatchObject({ moved: 27, refused: 6 });
    expect(recalled.refusals.map((r) => `${r.seq} ${r.refusal} ${r.state}`)).toEqual([
      '6 wrong_state scrapped',
      '7 wrong_state scrapped',
      '8 wrong_state scrapped',
      '31 unknown null',
      '32 unknown null',
      '33 unknown null',
    ]);
    await move(brand, { action: 'reactivate', reason: null, target: range(11, 30) });
    await move(brand, { action: 'decommission', reason: 'destroyed', target: range(11, 12) });
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(18);
    // Reactivation takes back the recalled units only, and says why for the others.
    const back = await move(brand, { action: 'reactivate', reason: null, target: range(1, 13) });
    expect(back).toMatchObject({ moved: 7, refused: 6 });
    expect(back.refusals.map((r) => `${r.seq} ${r.refusal} ${r.state}${r.reason === null ? '' : `:${r.reason}`}`)).toEqual([
      '6 wrong_state scrapped',
      '7 wrong_state scrapped',
      '8 wrong_state scrapped',
      '11 reason_final decommissioned:destroyed',
      '12 reason_final decommissioned:destroyed',
      '13 wrong_state commissioned',
    ]);
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(25);
    const states = await statesOf(batch);
    expect([...states.entries()].sort((a, b) => a[0] - b[0]).map(([, state]) => state)).toEqual([
      ...Array(5).fill('commissioned'),
      ...Array(3).fill('scrapped'),
      'commissioned',
      'commissioned',
      'decommissioned:destroyed',
      'decommissioned:destroyed',
      ...Array(18).fill('commissioned'),
    ]);
    const [active] = await query<{ n: string }>(app.db.em.fork(), `select count(*) as n from mint_units where mint_batch_id = ? and status = 'active'`, [
      batch,
    ]);
    expect(Number(active!.n)).toBe(25);
    const audit = (
      await listMintEvents(app.ctx, brand.brandId, { limit: 100, cursor: null, eventType: 'mint_units_moved', entityType: null, entityId: null })
    ).items.find((e) => e.payload.move_id === back.moveId);
    expect(audit!.payload).toMatchObject({
      action: 'reactivate',
      count: 7,
      first_seq: 1,
      last_seq: 10,
      serials: [...serials.slice(0, 5), serials[8], serials[9]],
    });
    const validate = epcisValidator();
    const stored = await query<{ body: Record<string, unknown> }>(app.db.em.fork(), `select body from epcis_events where brand_id = ?`, [brand.brandId]);
    expect(
      validate(
        epcisDocument(
          stored.map((r) => r.body),
          new Date(),
        ),
      ),
    ).toBe(true);
  });

  it("moves a container's units a chunk at a time, container by container, resumable; its containers move with the request", { timeout: 300_000 }, async () => {
    const brand = await app.seedBrand();
    const actor = actorOf(brand);
    const batch = await mint(brand, 17_005, 'active_at_mint');
    const serials = await serialsOf(batch, 1, 17_005);
    await setContainerSettings(app.ctx, actor, { brandId: brand.brandId, companyPrefix: '0614141', maxDepth: null });
    const containers = async (level: string, count: number) =>
      (await mintContainers(app.ctx, actor, { brandId: brand.brandId, level, count, extensionDigit: 0, idempotencyKey: key() })).ssccs;
    const [pallet] = await containers('pallet', 1);
    const cases = await containers('case', 4);
    const pack = (sscc: string, items: readonly string[], ssccs: readonly string[] = []) =>
      packContainer(app.ctx, actor, { brandId: brand.brandId, sscc, serials: items, ssccs, idempotencyKey: key() });
    // Three cases of 2,000 units, one of 11,000 (more than a chunk: read a page at a time), 5 units in the pallet itself.
    for (let i = 0; i < 3; i++) await pack(cases[i]!, serials.slice(i * 2000, (i + 1) * 2000));
    await pack(cases[3]!, serials.slice(6000, 11_500));
    await pack(cases[3]!, serials.slice(11_500, 17_000));
    await pack(pallet!, serials.slice(17_000), cases);
    const started = await moveSerials(app.ctx, actor, {
      brandId: brand.brandId,
      action: 'decommission',
      reason: 'stolen',
      target: { container: pallet! },
      idempotencyKey: key(),
    });
    expect(started).toMatchObject({ status: 'running', total: 17_005, refused: 0 });
    expect(started.moved).toBeGreaterThan(0);
    expect(started.moved).toBeLessThanOrEqual(10_000);
    // The containers left circulation with the request: nothing can be packed into them while the units move.
    const [containerStates] = await query<{ states: string[] }>(
      app.db.em.fork(),
      `select array_agg(distinct state || ':' || reason) as states from containers where brand_id = ?`,
      [brand.brandId],
    );
    expect(containerStates!.states).toEqual(['decommissioned:stolen']);
    // A unit unpacked before its chunk runs is not moved.
    const progress = [started.moved];
    const [waiting] = await query<{ seq: number; sscc: string }>(
      app.db.em.fork(),
      `
      select p.seq, c.sscc from unit_containers p
      join containers c on c.brand_id = p.brand_id and c.id = p.container_id
      where p.brand_id = ? and not exists (select 1 from unit_states s where s.brand_id = p.brand_id and s.mint_batch_id = p.mint_batch_id and s.seq = p.seq)
      limit 1`,
      [brand.brandId],
    );
    const waitingSerial = serials[waiting!.seq - 1]!;
    await unpackContainer(app.ctx, actor, { brandId: brand.brandId, sscc: waiting!.sscc, serials: [waitingSerial], ssccs: [], idempotencyKey: key() });
    for (;;) {
      const next = (await continueSerialMove(app.ctx, brand.brandId, started.moveId))!;
      expect(next.moved - progress.at(-1)!).toBeLessThanOrEqual(10_000);
      progress.push(next.moved);
      if (next.status === 'done') break;
    }
    expect(progress.length).toBeGreaterThanOrEqual(3);
    const expected = 17_004;
    expect(progress.at(-1)).toBe(expected);
    const [units] = await query<{ n: string }>(
      app.db.em.fork(),
      `select count(*) as n from unit_states where mint_batch_id = ? and state = 'decommissioned' and reason = 'stolen'`,
      [batch],
    );
    expect(Number(units!.n)).toBe(expected);
    expect((await getMintKpis(app.ctx, brand.brandId)).activeTokens).toBe(1);
    expect((await statesOf(batch)).get(waiting!.seq)).toBe('commissioned');
    // Every unit moved is named by exactly one EPCIS event of the move.
    const [epcs] = await query<{ total: string; distinct: string }>(
      app.db.em.fork(),
      `select count(*) as total, count(distinct e) as distinct from epcis_events, unnest(epcs) as e where move_id = ? and e not like '%/00/%'`,
      [started.moveId],
    );
    expect(epcs).toEqual({ total: String(expected), distinct: String(expected) });
  });

  it("writes EPCIS 2.0 events valid against the standard's JSON Schema, with CBV steps and dispositions", async () => {
    const brand = await app.seedBrand();
    const batch = await mint(brand, 40);
    const serials = await serialsOf(batch, 1, 40);
    await move(brand, { action: 'encode', reason: null, target: { serials: serials.slice(0, 20) } });
    await move(brand, { action: 'commission', reason: null, target: { serials: serials.slice(0, 30) } });
    await move(brand, { action: 'decommission', reason: 'recalled', target: { serials: serials.slice(0, 5) } });
    await move(brand, { action: 'decommission', reason: 'destroyed', target: { serials: serials.slice(5, 10) } });
    await move(brand, { action: 'scrap', reason: null, target: { serials: serials.slice(30, 35) } });
    await move(brand, { action: 'return', reason: null, target: { serials: serials.slice(35, 40) } });
    const stored = await query<{ body: Record<string, unknown> }>(
      app.db.em.fork(),
      `select body from epcis_events where brand_id = ? order by event_time, id`,
      [brand.brandId],
    );
    const summary = stored
      .map(({ body }) => `${String(body.action)} ${String(body.bizStep)} ${String(body.disposition)} ${(body.epcList as string[]).length}`)
      .sort();
    expect(summary).toEqual([
      'ADD commissioning active 10',
      'ADD encoding encoded 20',
      'DELETE decommissioning recalled 5',
      'DELETE decommissioning returned 5',
      'DELETE destroying destroyed 5',
      'DELETE destroying destroyed 5',
      'OBSERVE commissioning active 20',
    ]);
    const validate = epcisValidator();
    const ok = validate(
      epcisDocument(
        stored.map((r) => r.body),
        new Date(),
      ),
    );
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
    // An EPC is the unit's resolver URL.
    const [unit] = await query<{ resolver_url: string }>(
      app.db.em.fork(),
      "select u.serial, regexp_replace(b.resolver_base_url, '/$', '') || case when b.gtin is null then '/u/' || u.serial else '/01/' || b.gtin || '/21/' || u.serial end as resolver_url from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id where u.serial = ?",
      [serials[0]],
    );
    expect(stored.some(({ body }) => (body.epcList as string[]).includes(unit!.resolver_url))).toBe(true);
  });
});
