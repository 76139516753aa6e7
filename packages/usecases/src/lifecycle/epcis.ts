import { randomUUID } from 'node:crypto';
import {
  containerPartners,
  expandEpcisUnitRanges,
  finishSerialMove,
  findContainersBySscc,
  insertSerialMove,
  latestEventNaming,
  latestMintOf,
  lockUnitsForMove,
  queryEpcisEvents,
  readEpcisEventIds,
  readUnitPartners,
  unitOfWork,
  transaction,
  type Em,
  type NewEpcisEvent,
  type UnitForMove,
} from '@mint/db';
import {
  capturedMoveRows,
  ConflictError,
  epcisMoveVocabulary,
  ForbiddenError,
  IllegalStateError,
  InvalidInputError,
  isPartnerAction,
  partnerActions,
  refusalOf,
  serialMoveOf,
  unitOfEpc,
  type EpcisMoveMapping,
  type FieldViolation,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import { applyCapturedAggregation, maxPackItems, packCapturedSet, readCapturedAggregation, type CapturedAggregation } from './containers.ts';
import { epcisSchemaViolationsOffLoop } from './epcis-schema.ts';
import { applyMove, derivedUuid, epcisDocument } from './serials.ts';

/** The query parameters of `GET /epcis/events` this service answers (the EPCIS 2.0 REST interface's subset). */
export const epcisQueryParameters = ['EQ_bizStep', 'EQ_disposition', 'MATCH_epc', 'GE_eventTime', 'LT_eventTime', 'perPage', 'nextPageToken'] as const;
/** Events per page unless `perPage` says otherwise; at most {@link maxEpcisPage}. */
export const defaultEpcisPage = 100;
/** Most events one page holds. */
export const maxEpcisPage = 1000;
/** Most events one captured document may hold. */
export const maxCapturedEvents = 1000;
/** How far ahead of the service's clock a captured eventTime may be (the sender's clock may run fast), in milliseconds. */
export const captureClockSkewMs = 5 * 60_000;

/** Most EPCs one ObjectEvent written by the service itself names; a larger set is split over several events. */
export const maxEventEpcs = 10_000;

/**
 * Most units a page lists from events naming unit ranges (mint commissioning): a page ends before
 * the event that would take it past this, so a page reads at most this many units (or one event's,
 * when that event alone is larger).
 */
export const maxEpcisPageRangeUnits = 2 * maxEventEpcs;

const cbvBizStep = 'https://ref.gs1.org/cbv/BizStep-';
const cbvDisposition = 'https://ref.gs1.org/cbv/Disp-';
/** A CBV URI or bare name as the bare name (`https://ref.gs1.org/cbv/BizStep-commissioning` -> `commissioning`). */
const bare = (value: string, prefix: string) => (value.startsWith(prefix) ? value.slice(prefix.length) : value);

/** A page of stored events as an EPCIS 2.0 query document, with the token of the next page (null on the last). */
export interface EpcisQueryPage {
  readonly document: Record<string, unknown>;
  readonly nextPageToken: string | null;
}

/**
 * Answers the EPCIS 2.0 REST query subset over the brand's events (those its moves wrote and those
 * it captured), or for a partner key (`partnerId`) over that partner's own (those it reported, by
 * capture or under its key, and its allocations): `EQ_bizStep` and `EQ_disposition` (comma-separated, bare CBV names or CBV URIs),
 * `MATCH_epc` (comma-separated EPCs: events naming any), `GE_eventTime` and `LT_eventTime`
 * (RFC 3339), `perPage` (1 to 1000, default 100) and `nextPageToken`, in event time order. An
 * unknown or repeated parameter, or a malformed value, is InvalidInputError naming it.
 */
export async function queryEpcis(ctx: UseCaseContext, brandId: string, params: URLSearchParams, partnerId: string | null = null): Promise<EpcisQueryPage> {
  const v: FieldViolation[] = [];
  for (const name of new Set(params.keys())) {
    if (!(epcisQueryParameters as readonly string[]).includes(name))
      v.push({ field: name, message: `is not a supported query parameter; supported: ${epcisQueryParameters.join(', ')}` });
    else if (params.getAll(name).length > 1) v.push({ field: name, message: 'must be given once' });
  }
  const list = (name: string, prefix = '') => {
    const value = params.get(name);
    return value === null
      ? undefined
      : value
          .split(',')
          .map((x) => bare(x.trim(), prefix))
          .filter((x) => x !== '');
  };
  const time = (name: string) => {
    const value = params.get(name);
    if (value === null) return undefined;
    const at = new Date(value);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(at.getTime())) v.push({ field: name, message: 'must be an RFC 3339 time' });
    return at;
  };
  const perPageText = params.get('perPage');
  const perPage = perPageText === null ? defaultEpcisPage : Number(perPageText);
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > maxEpcisPage)
    v.push({ field: 'perPage', message: `must be a whole number from 1 to ${maxEpcisPage}` });
  let after: { eventTime: Date; id: string } | undefined;
  const token = params.get('nextPageToken');
  if (token !== null) {
    try {
      const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { t: string; id: string };
      after = { eventTime: new Date(parsed.t), id: parsed.id };
      if (Number.isNaN(after.eventTime.getTime()) || typeof parsed.id !== 'string') throw new Error('bad token');
    } catch {
      v.push({ field: 'nextPageToken', message: 'is not a token this service issued' });
    }
  }
  const geEventTime = time('GE_eventTime');
  const ltEventTime = time('LT_eventTime');
  if (v.length > 0) throw new InvalidInputError(v);
  const em = unitOfWork(ctx.db);
  const epcs = list('MATCH_epc');
  const found = await queryEpcisEvents(em, {
    brandId,
    ...(partnerId === null ? {} : { partnerId }),
    bizSteps: list('EQ_bizStep', cbvBizStep),
    dispositions: list('EQ_disposition', cbvDisposition),
    ...(epcs === undefined ? {} : { epcs, units: await unitsOfEpcs(em, brandId, epcs) }),
    ...(geEventTime === undefined ? {} : { geEventTime }),
    ...(ltEventTime === undefined ? {} : { ltEventTime }),
    ...(after === undefined ? {} : { after }),
    limit: perPage + 1,
  });
  const kept = [];
  let rangeUnits = 0;
  for (const e of found.slice(0, perPage)) {
    const n = e.units?.count ?? 0;
    if (kept.length > 0 && rangeUnits + n > maxEpcisPageRangeUnits) break;
    kept.push(e);
    rangeUnits += n;
  }
  const last = kept.at(-1);
  const nextPageToken =
    found.length > kept.length && last !== undefined
      ? Buffer.from(JSON.stringify({ t: last.eventTime.toISOString(), id: last.id })).toString('base64url')
      : null;
  const page = (await expandEpcisUnitRanges(em, brandId, kept)).map((body) => ({ body }));
  const body = epcisDocument(
    page.map((e) => e.body),
    ctx.clock(),
  );
  return {
    document: {
      '@context': body['@context'],
      type: 'EPCISQueryDocument',
      schemaVersion: '2.0',
      creationDate: body['creationDate'],
      epcisBody: { queryResults: { queryName: 'SimpleEventQuery', resultsBody: { eventList: page.map((e) => e.body) } } },
    },
    nextPageToken,
  };
}

/** What a captured event asks for: serial moves (an ObjectEvent) or a pack or unpack (an AggregationEvent). */
type CapturedMove = {
  readonly index: number;
  readonly id: string;
  readonly event: Record<string, unknown>;
  readonly eventTime: Date;
  /** The EPCs as sent (epcList, or parentID and childEPCs). */
  readonly sent: readonly string[];
} & (
  | { readonly rows: readonly EpcisMoveMapping[]; readonly serials: readonly string[]; readonly gtins: readonly (string | null)[] }
  | { readonly aggregation: CapturedAggregation }
);

/** The serial a unit's EPC names, for aggregations (their GTIN is not compared). */
const serialOfEpc = (epc: string): string | null => unitOfEpc(epc)?.serial ?? null;

/**
 * The brand's units named by `epcs` (GS1 Digital Link URIs exactly as its events name them), found
 * by serial: the events naming them as part of a unit range match them.
 */
async function unitsOfEpcs(em: Em, brandId: string, epcs: readonly string[]): Promise<{ mintBatchId: string; seq: number }[]> {
  const serials = [...new Set(epcs.map(serialOfEpc).filter((s): s is string => s !== null))];
  if (serials.length === 0) return [];
  const wanted = new Set(epcs);
  return (await lockUnitsForMove(em, brandId, { serials }, false)).filter((u) => wanted.has(u.epc)).map((u) => ({ mintBatchId: u.mintBatchId, seq: u.seq }));
}

/** The result of {@link captureEpcisDocument}. */
export interface CaptureResult {
  /** Events applied by this call. */
  readonly captured: number;
  /** Events of the document stored before (a repeated capture): left as they were. */
  readonly replayed: number;
  /** Units moved, plus units and containers packed or unpacked. */
  readonly moved: number;
}

/** The vocabulary capture applies, for refusals: `ObjectEvent ADD|OBSERVE commissioning, …`. */
const supportedVocabulary = [...new Set(epcisMoveVocabulary.map((r) => `ObjectEvent ${r.capturedActions.join('|')} ${r.written.bizStep}`))]
  .concat('AggregationEvent ADD packing', 'AggregationEvent DELETE unpacking')
  .join(', ');

const listed = (items: readonly string[]) => `${items.slice(0, 20).join('; ')}${items.length > 20 ? `; and ${items.length - 20} more` : ''}`;

/**
 * Applies an EPCIS 2.0 document from a packaging line, all or nothing. First the document must be
 * valid against the EPCIS 2.0 JSON Schema (InvalidInputError naming each problem by its JSON
 * pointer, at most ten), checked on a worker thread (the caller's event loop goes on). Then each ObjectEvent applies, unit by unit, the move of
 * `epcisMoveVocabulary` (packages/domain, the table docs/guides/lifecycle.md prints) its action,
 * business step and disposition stand for in the unit's state (commissioning reactivates a unit
 * decommissioned as recalled or stolen; destroying scraps a unit never commissioned and
 * decommissions a commissioned one as destroyed), on the units its epcList names (GS1 Digital Link
 * URIs, the service's `…/u/{serial}`, or SGTIN URNs, of the brand's units); each AggregationEvent
 * (ADD packing, DELETE unpacking) packs or unpacks exactly as PackContainer and UnpackContainer do;
 * in document order, so a unit commissioned by an earlier event of the document may be packed by a
 * later one. Any other event type, business step or disposition (the standard's shipping and
 * receiving observations among them) is refused naming what is not supported.
 *
 * Time: an event dated more than {@link captureClockSkewMs} ahead of the service's clock, before
 * the mint of a unit or container it names, or before the latest event recorded for any EPC it
 * names (the document's earlier events included) refuses the document naming the event, so in
 * event-time order nothing is packed before it was commissioned, nor moved before its last move.
 * An event at the same instant as the latest one is accepted.
 *
 * A partner key (`actor.partnerId`) captures only encoding, commissioning, scrapping and returning
 * of the serials allocated to it, and packing and unpacking of containers it minted (and, inside
 * them, of its own serials and containers): anything else refuses the document (ForbiddenError
 * naming each EPC outside its allocation, or the move that is the brand's). Its events are its own
 * in the query interface.
 *
 * Other refusals: an EPC that names no unit of the brand (InvalidInputError naming
 * `epcisBody.eventList[i]...`), a unit in a state the move cannot leave (IllegalStateError naming
 * the serial and its state); nothing changes. The events are stored as sent (with the units' own
 * URIs beside the EPCs sent, for MATCH_epc); an event whose eventID was captured before is
 * skipped, so a document sent twice moves nothing the second time, also when the two captures
 * ran at once (a partner's eventID another reporter recorded is ConflictError).
 */
export async function captureEpcisDocument(ctx: UseCaseContext, actor: Actor, brandId: string, document: Record<string, unknown>): Promise<CaptureResult> {
  const schema = await epcisSchemaViolationsOffLoop(document);
  if (schema.length > 0) throw new InvalidInputError(schema);
  const list = (document['epcisBody'] as { eventList?: unknown } | undefined)?.eventList;
  if (document['type'] !== 'EPCISDocument' || !Array.isArray(list))
    throw new InvalidInputError([{ field: 'epcisBody.eventList', message: 'must be the event list of an EPCISDocument' }]);
  const events = list as Record<string, unknown>[];
  if (events.length === 0 || events.length > maxCapturedEvents)
    throw new InvalidInputError([{ field: 'epcisBody.eventList', message: `must hold 1 to ${maxCapturedEvents} events` }]);
  const partnerId = actor.partnerId ?? null;
  const received = ctx.clock();
  const v: FieldViolation[] = [];
  const moves: CapturedMove[] = [];
  const eventUuid = (event: Record<string, unknown>) => {
    const eventId = typeof event['eventID'] === 'string' ? event['eventID'] : null;
    return eventId !== null && /^urn:uuid:[0-9a-f-]{36}$/i.test(eventId)
      ? eventId.slice('urn:uuid:'.length).toLowerCase()
      : derivedUuid(`${brandId}/${JSON.stringify(event)}`);
  };
  events.forEach((event, index) => {
    const at = `epcisBody.eventList[${index}]`;
    const eventTime = new Date(String(event['eventTime']));
    if (Number.isNaN(eventTime.getTime())) v.push({ field: `${at}.eventTime`, message: `${String(event['eventTime'])} is not a time this service can read` });
    else if (eventTime.getTime() > received.getTime() + captureClockSkewMs) {
      v.push({
        field: `${at}.eventTime`,
        message: `${String(event['eventTime'])} is ahead of the service's clock (${received.toISOString()}) by more than ${captureClockSkewMs / 60_000} minutes`,
      });
    }
    const bizStep = bare(String(event['bizStep'] ?? ''), cbvBizStep);
    if (event['type'] === 'AggregationEvent') {
      const aggregation = readCapturedAggregation(event, at, bizStep, serialOfEpc, v);
      const sent = [event['parentID'], ...(Array.isArray(event['childEPCs']) ? (event['childEPCs'] as unknown[]) : [])].filter(
        (e): e is string => typeof e === 'string',
      );
      if (aggregation !== null) moves.push({ index, id: eventUuid(event), event, eventTime, sent, aggregation });
      return;
    }
    if (event['type'] !== 'ObjectEvent') {
      v.push({ field: `${at}.type`, message: `${String(event['type'])} is not supported: capture applies ${supportedVocabulary}` });
      return;
    }
    const action = String(event['action']);
    const disposition = event['disposition'] === undefined ? null : bare(String(event['disposition']), cbvDisposition);
    const rows = capturedMoveRows(action, bizStep, disposition);
    if (rows.length === 0) {
      v.push({
        field: `${at}.bizStep`,
        message: `ObjectEvent ${action} ${bizStep || '(no bizStep)'}${disposition === null ? '' : ` with disposition ${disposition}`} is not supported: capture applies ${supportedVocabulary}, with the dispositions of the table in docs/guides/lifecycle.md`,
      });
      return;
    }
    const epcs = Array.isArray(event['epcList']) ? (event['epcList'] as string[]) : [];
    if (epcs.length === 0) v.push({ field: `${at}.epcList`, message: 'must name the units moved (a quantityList is not supported)' });
    const serials: string[] = [];
    const gtins: (string | null)[] = [];
    epcs.forEach((epc, i) => {
      const unit = unitOfEpc(epc);
      if (unit === null)
        v.push({
          field: `${at}.epcList[${i}]`,
          message: "must name a unit: a GS1 Digital Link URI (…/01/{gtin}/21/{serial}), the service's …/u/{serial}, or an SGTIN URN (urn:epc:id:sgtin:…)",
        });
      else {
        serials.push(unit.serial);
        gtins.push(unit.gtin14);
      }
    });
    moves.push({ index, id: eventUuid(event), event, eventTime, sent: epcs, rows, serials, gtins });
  });
  if (v.length > 0) throw new InvalidInputError(v);
  const ids = [...new Set(moves.map((m) => m.id))];
  try {
    return await applyCapturedMoves(ctx, actor, brandId, moves);
  } catch (error) {
    // The same document captured at the same time (a client's retry while its first request still
    // ran) got there first: both read its events as new, this one then found the units moved. A
    // document is stored whole or not at all, so with every event stored it was captured: the
    // answer is the replay's, as for a retry that came later.
    const stored = await readEpcisEventIds(unitOfWork(ctx.db), brandId, ids).catch(() => []);
    if (stored.length === ids.length && stored.every((e) => partnerId === null || e.partnerId === partnerId))
      return { captured: 0, replayed: moves.length, moved: 0 };
    throw error;
  }
}

/** The captured document's moves, all in one transaction; events stored before are skipped. */
async function applyCapturedMoves(ctx: UseCaseContext, actor: Actor, brandId: string, moves: readonly CapturedMove[]): Promise<CaptureResult> {
  const partnerId = actor.partnerId ?? null;
  return transaction(ctx.db, async (em) => {
    const known = new Map(
      (
        await readEpcisEventIds(
          em,
          brandId,
          moves.map((m) => m.id),
        )
      ).map((k) => [k.id, k.partnerId]),
    );
    const now = ctx.clock();
    let captured = 0;
    let moved = 0;
    const applyOne = async (m: CapturedMove) => {
      const at = `epcisBody.eventList[${m.index}]`;
      const stored = (epcs: readonly string[], moveId: string | null): NewEpcisEvent => storedEvent(m, epcs, moveId);
      if ('aggregation' in m) {
        if (partnerId !== null) await checkPartnerAggregation(em, brandId, partnerId, at, m);
        let named: { epcs: string[]; units: { mintBatchId: string; seq: number }[] } = { epcs: [], units: [] };
        const result = await applyCapturedAggregation(ctx, em, {
          brandId,
          actorId: actor.id,
          partnerId,
          eventId: m.id,
          index: m.index,
          aggregation: m.aggregation,
          event: (parent, items) => {
            named = { epcs: [parent.epc, ...items.children.map((c) => c.epc), ...items.units.map((u) => u.epc)], units: [...items.units] };
            return stored(named.epcs, null);
          },
        });
        // After the pack or unpack, under its locks: an event dated before what it names refuses the document.
        await checkEventTime(em, brandId, at, m, named.epcs, named.units);
        captured++;
        moved += result.units + result.containers;
        return;
      }
      const units = await lockUnitsForMove(em, brandId, { serials: m.serials });
      const bySerial = new Map(units.map((u) => [u.serial, u]));
      const missing: FieldViolation[] = [];
      m.serials.forEach((serial, i) => {
        const u = bySerial.get(serial);
        const gtin = m.gtins[i] ?? null;
        if (u === undefined || (gtin !== null && unitOfEpc(u.epc)?.gtin14 !== gtin))
          missing.push({ field: `${at}.epcList[${i}]`, message: `${m.sent[i]!} names no unit of this brand` });
      });
      if (missing.length > 0) throw new InvalidInputError(missing);
      if (partnerId !== null) {
        const owners = await readUnitPartners(em, brandId, units);
        const foreign = m.serials.flatMap((serial, i) => {
          const u = bySerial.get(serial)!;
          return owners.get(`${u.mintBatchId}/${u.seq}`) === partnerId ? [] : [`${at}.epcList[${i}] ${m.sent[i]!} is not in this partner's allocation`];
        });
        if (foreign.length > 0) throw new ForbiddenError(`a partner key captures events only about the serials allocated to it: ${listed(foreign)}`);
      }
      // Each unit takes the move of the row for its state.
      const groups = new Map<EpcisMoveMapping, UnitForMove[]>();
      for (const u of units) {
        const row = m.rows.find((r) => r.from.includes(u.state));
        const move = serialMoveOf((row ?? m.rows[0]!).action, (row ?? m.rows[0]!).reason);
        const refusal = u.batchVoided ? 'batch_voided' : row === undefined ? 'wrong_state' : refusalOf(move, u.state, u.reason);
        if (refusal !== null) {
          throw new IllegalStateError(
            `${at}: cannot ${move.action} serial ${u.serial}, which is ${u.batchVoided ? 'of a voided batch' : u.state}${u.reason === null ? '' : ` (${u.reason})`}`,
          );
        }
        if (partnerId !== null && !isPartnerAction(move.action)) {
          throw new ForbiddenError(
            `${at}: a partner key may ${partnerActions.join(', ')} the serials allocated to it; ${move.action} of serial ${u.serial} (${u.state}) is the brand's`,
          );
        }
        groups.set(row!, [...(groups.get(row!) ?? []), u]);
      }
      await checkEventTime(
        em,
        brandId,
        at,
        m,
        units.map((u) => u.epc),
        units,
      );
      let first = true;
      for (const [row, group] of groups) {
        const move = serialMoveOf(row.action, row.reason);
        const moveId = randomUUID();
        const serials = group.map((u) => u.serial);
        await insertSerialMove(em, {
          brandId,
          id: moveId,
          idempotencyKey: first ? `epcis:${m.id}` : `epcis:${m.id}:${row.action}`,
          requestHash: m.id,
          action: row.action,
          reason: row.reason,
          target: { serials, epcis_event_id: m.id, ...(partnerId === null ? {} : { partner_id: partnerId }) },
          total: serials.length,
          nextSeq: null,
          actor: actor.id,
          at: now,
        });
        await applyMove(em, now, {
          brandId,
          moveId,
          actorId: actor.id,
          partnerId,
          move,
          units: group,
          epcis: first
            ? [
                stored(
                  units.map((u) => u.epc),
                  moveId,
                ),
              ]
            : [],
        });
        await finishSerialMove(em, brandId, moveId, group.length, now);
        first = false;
      }
      captured++;
      moved += units.length;
    };
    const storedEvent = (m: CapturedMove, epcs: readonly string[], moveId: string | null): NewEpcisEvent => ({
      brandId,
      id: m.id,
      moveId,
      eventType: String(m.event['type']),
      eventTime: m.eventTime,
      recordTime: now,
      bizStep: bare(String(m.event['bizStep']), cbvBizStep),
      disposition: m.event['disposition'] === undefined ? null : bare(String(m.event['disposition']), cbvDisposition),
      epcs: [...new Set([...epcs, ...m.sent])],
      body: { ...m.event, recordTime: now.toISOString() },
      partnerId,
    });
    // Consecutive packing events naming disjoint items are applied as a set (packCapturedSet); a
    // set it declines, and every other event, one at a time in document order.
    let set: PackingMove[] = [];
    const named = new Set<string>();
    const flush = async () => {
      const packs = set;
      set = [];
      named.clear();
      if (packs.length === 0) return;
      const result =
        packs.length === 1
          ? null
          : await packCapturedSet(ctx, em, {
              brandId,
              actorId: actor.id,
              partnerId,
              packs: packs.map((m) => ({
                index: m.index,
                eventId: m.id,
                eventTime: m.eventTime,
                aggregation: m.aggregation,
                event: (parent, items) => storedEvent(m, [parent.epc, ...items.children.map((c) => c.epc), ...items.units.map((u) => u.epc)], null),
              })),
            });
      if (result === null) {
        for (const m of packs) await applyOne(m);
        return;
      }
      captured += packs.length;
      moved += result.units + result.containers;
    };
    for (const m of moves) {
      if (known.has(m.id)) {
        if (partnerId !== null && known.get(m.id) !== partnerId) {
          await flush();
          throw new ConflictError(`epcisBody.eventList[${m.index}].eventID names an event another reporter recorded`);
        }
        continue;
      }
      const items = packingItems(m);
      if (items === null) {
        await flush();
        await applyOne(m);
        continue;
      }
      if (items.some((k) => named.has(k))) await flush();
      set.push(m as PackingMove);
      for (const k of items) named.add(k);
    }
    await flush();
    return { captured, replayed: moves.length - captured, moved };
  });
}

type PackingMove = CapturedMove & { readonly aggregation: CapturedAggregation };

/**
 * The items a packing event names (`c:{sscc}` for its parent and child containers, `u:{serial}`
 * for its units) when it may join a set applied at once: an ADD packing naming 1 to
 * {@link maxPackItems} children, none twice; null otherwise (it is applied alone).
 */
function packingItems(m: CapturedMove): string[] | null {
  if (!('aggregation' in m) || m.aggregation.op !== 'pack') return null;
  const a = m.aggregation;
  const n = a.serials.length + a.ssccs.length;
  if (n === 0 || n > maxPackItems) return null;
  const items = [`c:${a.sscc}`, ...a.ssccs.map((x) => `c:${x}`), ...a.serials.map((x) => `u:${x}`)];
  return new Set(items).size === items.length ? items : null;
}

/**
 * Refuses a captured event dated before the mint of a unit it names or before the latest event
 * recorded for any EPC it names (InvalidInputError naming the event's eventTime, the EPC and the time).
 */
async function checkEventTime(
  em: Em,
  brandId: string,
  at: string,
  m: CapturedMove,
  epcs: readonly string[],
  units: readonly { readonly mintBatchId: string; readonly seq: number }[],
): Promise<void> {
  const when = m.eventTime.toISOString();
  const minted = await latestMintOf(em, brandId, units);
  if (minted !== null && m.eventTime < minted.mintedAt) {
    throw new InvalidInputError([
      { field: `${at}.eventTime`, message: `${when} is before serial ${minted.serial} was minted (${minted.mintedAt.toISOString()})` },
    ]);
  }
  const latest = await latestEventNaming(em, brandId, epcs, m.id);
  if (latest !== null && m.eventTime < latest.eventTime) {
    throw new InvalidInputError([
      {
        field: `${at}.eventTime`,
        message: `${when} is before the latest event recorded for ${latest.epc} (${latest.eventTime.toISOString()}): events of an EPC are captured in event-time order`,
      },
    ]);
  }
}

/** A partner's AggregationEvent names only containers it minted and serials allocated to it (ForbiddenError naming each EPC otherwise). */
async function checkPartnerAggregation(
  em: Em,
  brandId: string,
  partnerId: string,
  at: string,
  m: CapturedMove & { readonly aggregation: CapturedAggregation },
): Promise<void> {
  const a = m.aggregation;
  const containers = await findContainersBySscc(em, brandId, [a.sscc, ...a.ssccs], false);
  const owners = await containerPartners(
    em,
    brandId,
    containers.map((c) => c.id),
  );
  const mine = new Set(containers.filter((c) => owners.get(c.id) === partnerId).map((c) => c.sscc));
  const units = await lockUnitsForMove(em, brandId, { serials: a.serials }, false);
  const unitOwners = await readUnitPartners(em, brandId, units);
  const allocated = new Set(units.filter((u) => unitOwners.get(`${u.mintBatchId}/${u.seq}`) === partnerId).map((u) => u.serial));
  const childEpcs = Array.isArray(m.event['childEPCs']) ? (m.event['childEPCs'] as string[]) : [];
  const foreign = [
    ...(containers.some((c) => c.sscc === a.sscc) && !mine.has(a.sscc)
      ? [`${at}.parentID ${String(m.event['parentID'])} is not a container this partner minted`]
      : []),
    ...a.ssccs.flatMap((s, i) =>
      containers.some((c) => c.sscc === s) && !mine.has(s)
        ? [`${at}.childEPCs[${a.ssccIndex[i]!}] ${childEpcs[a.ssccIndex[i]!]!} is not a container this partner minted`]
        : [],
    ),
    ...a.serials.flatMap((s, i) =>
      units.some((u) => u.serial === s) && !allocated.has(s)
        ? [`${at}.childEPCs[${a.serialIndex[i]!}] ${childEpcs[a.serialIndex[i]!]!} is not in this partner's allocation`]
        : [],
    ),
  ];
  if (foreign.length > 0)
    throw new ForbiddenError(`a partner key captures events only about its own containers and the serials allocated to it: ${listed(foreign)}`);
}

/**
 * The EPCIS 2.0 ObjectEvents (commissioning, active) of units commissioned outside a serial move:
 * one per {@link maxEventEpcs} of `epcs`, in order; `action` is ADD for issued units and OBSERVE for
 * units encoded before (as a commissioning move reports them). `idOf(offset)` names the event that
 * starts at that offset of `epcs`, derived from what it reports, so the same commissioning written
 * again names the same events (and storing them keeps the first).
 */
export function commissioningEvents(c: {
  readonly brandId: string;
  readonly epcs: readonly string[];
  readonly action: 'ADD' | 'OBSERVE';
  readonly at: Date;
  readonly idOf: (offset: number) => string;
}): NewEpcisEvent[] {
  const events: NewEpcisEvent[] = [];
  const at = c.at.toISOString();
  for (let offset = 0; offset < c.epcs.length; offset += maxEventEpcs) {
    const id = c.idOf(offset);
    const epcList = c.epcs.slice(offset, offset + maxEventEpcs);
    events.push({
      brandId: c.brandId,
      id,
      moveId: null,
      eventType: 'ObjectEvent',
      eventTime: c.at,
      recordTime: c.at,
      bizStep: 'commissioning',
      disposition: 'active',
      epcs: epcList,
      body: {
        type: 'ObjectEvent',
        eventID: `urn:uuid:${id}`,
        eventTime: at,
        eventTimeZoneOffset: '+00:00',
        recordTime: at,
        epcList,
        action: c.action,
        bizStep: 'commissioning',
        disposition: 'active',
      },
    });
  }
  return events;
}

/**
 * The EPCIS 2.0 ObjectEvents (ADD, commissioning, active) of units commissioned at mint
 * (`active_at_mint`): one per {@link maxEventEpcs} units of a chunk, for the chunk's transaction.
 * Each names its units as a range of the batch (no EPC text per unit: the query lists their GS1
 * Digital Link URIs from the units). Each event's id is derived from the batch and its first seq,
 * so a chunk written again names the same events.
 */
export function mintCommissioningEvents(c: {
  readonly brandId: string;
  readonly mintBatchId: string;
  readonly firstSeq: number;
  readonly count: number;
  readonly at: Date;
}): NewEpcisEvent[] {
  const events: NewEpcisEvent[] = [];
  for (let offset = 0; offset < c.count; offset += maxEventEpcs) {
    const id = derivedUuid(`mint/${c.mintBatchId}/${c.firstSeq + offset}`);
    const at = c.at.toISOString();
    events.push({
      brandId: c.brandId,
      id,
      moveId: null,
      eventType: 'ObjectEvent',
      eventTime: c.at,
      recordTime: c.at,
      bizStep: 'commissioning',
      disposition: 'active',
      epcs: [],
      units: { mintBatchId: c.mintBatchId, firstSeq: c.firstSeq + offset, count: Math.min(maxEventEpcs, c.count - offset) },
      body: {
        type: 'ObjectEvent',
        eventID: `urn:uuid:${id}`,
        eventTime: at,
        eventTimeZoneOffset: '+00:00',
        recordTime: at,
        action: 'ADD',
        bizStep: 'commissioning',
        disposition: 'active',
      },
    });
  }
  return events;
}
