import { randomUUID } from 'node:crypto';
import { finishSerialMove, insertSerialMove, lockUnitsForMove, queryEpcisEvents, readEpcisEventIds, unitOfWork, transaction, type NewEpcisEvent } from '@mint/db';
import {
  IllegalStateError, InvalidInputError, refusalOf, serialMoveOf, unitResolverUrl, type DecommissionReason, type FieldViolation, type SerialAction,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import { applyCapturedAggregation, readCapturedAggregation, type CapturedAggregation } from './containers.ts';
import { applyMove, derivedUuid, epcisDocument } from './serials.ts';

/** The query parameters of `GET /epcis/events` this service answers (the EPCIS 2.0 REST interface's subset). */
export const epcisQueryParameters = ['EQ_bizStep', 'EQ_disposition', 'MATCH_epc', 'GE_eventTime', 'LT_eventTime', 'perPage', 'nextPageToken'] as const;
/** Events per page unless `perPage` says otherwise; at most {@link maxEpcisPage}. */
export const defaultEpcisPage = 100;
/** Most events one page holds. */
export const maxEpcisPage = 1000;
/** Most events one captured document may hold. */
export const maxCapturedEvents = 1000;

/** Most EPCs one ObjectEvent written by the service itself names; a larger set is split over several events. */
export const maxEventEpcs = 10_000;

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
 * it captured): `EQ_bizStep` and `EQ_disposition` (comma-separated, bare CBV names or CBV URIs),
 * `MATCH_epc` (comma-separated EPCs: events naming any), `GE_eventTime` and `LT_eventTime`
 * (RFC 3339), `perPage` (1 to 1000, default 100) and `nextPageToken`, in event time order. An
 * unknown or repeated parameter, or a malformed value, is InvalidInputError naming it.
 */
export async function queryEpcis(ctx: UseCaseContext, brandId: string, params: URLSearchParams): Promise<EpcisQueryPage> {
  const v: FieldViolation[] = [];
  for (const name of new Set(params.keys())) {
    if (!(epcisQueryParameters as readonly string[]).includes(name)) v.push({ field: name, message: `is not a supported query parameter; supported: ${epcisQueryParameters.join(', ')}` });
    else if (params.getAll(name).length > 1) v.push({ field: name, message: 'must be given once' });
  }
  const list = (name: string, prefix = '') => {
    const value = params.get(name);
    return value === null ? undefined : value.split(',').map((x) => bare(x.trim(), prefix)).filter((x) => x !== '');
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
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > maxEpcisPage) v.push({ field: 'perPage', message: `must be a whole number from 1 to ${maxEpcisPage}` });
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
  const found = await queryEpcisEvents(unitOfWork(ctx.db), {
    brandId, bizSteps: list('EQ_bizStep', cbvBizStep), dispositions: list('EQ_disposition', cbvDisposition), epcs: list('MATCH_epc'),
    ...(geEventTime === undefined ? {} : { geEventTime }), ...(ltEventTime === undefined ? {} : { ltEventTime }),
    ...(after === undefined ? {} : { after }), limit: perPage + 1,
  });
  const page = found.slice(0, perPage);
  const last = page.at(-1);
  const nextPageToken = found.length > perPage && last !== undefined
    ? Buffer.from(JSON.stringify({ t: last.eventTime.toISOString(), id: last.id })).toString('base64url') : null;
  const body = epcisDocument(page.map((e) => e.body), ctx.clock());
  return {
    document: {
      '@context': body['@context'], type: 'EPCISQueryDocument', schemaVersion: '2.0', creationDate: body['creationDate'],
      epcisBody: { queryResults: { queryName: 'SimpleEventQuery', resultsBody: { eventList: page.map((e) => e.body) } } },
    },
    nextPageToken,
  };
}

/** What a captured event asks for: a serial move (an ObjectEvent) or a pack or unpack (an AggregationEvent). */
type CapturedMove = {
  readonly index: number;
  readonly id: string;
  readonly event: Record<string, unknown>;
} & ({ readonly action: SerialAction; readonly reason: DecommissionReason | null; readonly serials: readonly string[] } | { readonly aggregation: CapturedAggregation });

/** The move an ObjectEvent's action, business step and disposition stand for; null when this service applies none. */
function moveOfEvent(action: string, bizStep: string, disposition: string | null): { action: SerialAction; reason: DecommissionReason | null } | null {
  if (bizStep === 'encoding' && action !== 'DELETE') return { action: 'encode', reason: null };
  if (bizStep === 'commissioning' && action !== 'DELETE') return { action: 'commission', reason: null };
  if (bizStep === 'destroying') return { action: 'decommission', reason: 'destroyed' };
  if (bizStep === 'decommissioning') {
    if (disposition === 'returned') return { action: 'return', reason: null };
    const reasons: Record<string, DecommissionReason> = { recalled: 'recalled', stolen: 'stolen', expired: 'expired', damaged: 'damaged', destroyed: 'destroyed', inactive: 'consumed' };
    const reason = disposition === null ? 'consumed' : reasons[disposition];
    return reason === undefined ? null : { action: 'decommission', reason };
  }
  return null;
}

/** The serial of a unit's GS1 Digital Link URI (`.../01/{gtin}/21/{serial}`, or the service's `/u/{token}`); null for another EPC. */
function serialOfEpc(epc: string): string | null {
  const m = /\/21\/([^/?#]+)/.exec(epc) ?? /\/u\/([^/?#]+)/.exec(epc);
  return m === null ? null : decodeURIComponent(m[1]!);
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

/**
 * Applies an EPCIS 2.0 document from a packaging line (already valid against the EPCIS JSON
 * Schema), all or nothing: each ObjectEvent becomes the move its business step and disposition
 * stand for (encoding, commissioning, destroying, decommissioning with its disposition as the
 * reason; `returned` returns), on the units its epcList names (GS1 Digital Link URIs of the
 * brand's units); each AggregationEvent (ADD packing, DELETE unpacking; parentID a container's
 * `…/00/{sscc}` URI, childEPCs units' or containers' URIs) packs or unpacks exactly as PackContainer
 * and UnpackContainer do, in document order, so a unit commissioned by an earlier event of the
 * document may be packed by a later one. An event this service applies no move for, an EPC that names no unit of the
 * brand, or a unit in a state the move cannot leave refuses the whole document (InvalidInputError
 * naming `epcisBody.eventList[i]...`, or IllegalStateError naming the serial and its state) and
 * changes nothing. The events are stored as sent, so the query interface answers them; an event
 * whose eventID was captured before is skipped, so a document sent twice moves nothing the second
 * time, also when the two captures ran at once.
 */
export async function captureEpcisDocument(ctx: UseCaseContext, actor: Actor, brandId: string, document: Record<string, unknown>): Promise<CaptureResult> {
  const body = document['epcisBody'] as { eventList?: unknown } | undefined;
  const list = Array.isArray(body?.eventList) ? body.eventList as Record<string, unknown>[] : null;
  if (document['type'] !== 'EPCISDocument' || list === null) throw new InvalidInputError([{ field: 'epcisBody.eventList', message: 'must be the event list of an EPCISDocument' }]);
  if (list.length === 0 || list.length > maxCapturedEvents) throw new InvalidInputError([{ field: 'epcisBody.eventList', message: `must hold 1 to ${maxCapturedEvents} events` }]);
  const v: FieldViolation[] = [];
  const moves: CapturedMove[] = [];
  const eventUuid = (event: Record<string, unknown>) => {
    const eventId = typeof event['eventID'] === 'string' ? event['eventID'] : null;
    return eventId !== null && /^urn:uuid:[0-9a-f-]{36}$/i.test(eventId) ? eventId.slice('urn:uuid:'.length).toLowerCase() : derivedUuid(`${brandId}/${JSON.stringify(event)}`);
  };
  list.forEach((event, index) => {
    const at = `epcisBody.eventList[${index}]`;
    if (event['type'] === 'AggregationEvent') {
      const aggregation = readCapturedAggregation(event, at, bare(String(event['bizStep'] ?? ''), cbvBizStep), serialOfEpc, v);
      if (aggregation !== null) moves.push({ index, id: eventUuid(event), event, aggregation });
      return;
    }
    if (event['type'] !== 'ObjectEvent') {
      v.push({ field: `${at}.type`, message: 'only ObjectEvents and AggregationEvents are applied' });
      return;
    }
    const bizStep = bare(String(event['bizStep'] ?? ''), cbvBizStep);
    const disposition = event['disposition'] === undefined ? null : bare(String(event['disposition']), cbvDisposition);
    const move = moveOfEvent(String(event['action']), bizStep, disposition);
    if (move === null) {
      v.push({ field: `${at}.bizStep`, message: `${event['action']} ${bizStep}${disposition === null ? '' : ` ${disposition}`} is no serial move this service applies` });
      return;
    }
    const epcs = Array.isArray(event['epcList']) ? event['epcList'] as unknown[] : [];
    if (epcs.length === 0) v.push({ field: `${at}.epcList`, message: 'must name the units moved' });
    const serials: string[] = [];
    epcs.forEach((epc, i) => {
      const serial = typeof epc === 'string' ? serialOfEpc(epc) : null;
      if (serial === null) v.push({ field: `${at}.epcList[${i}]`, message: 'must be a GS1 Digital Link URI of a unit (…/01/{gtin}/21/{serial})' });
      else serials.push(serial);
    });
    moves.push({ index, id: eventUuid(event), ...move, serials, event });
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
    if (stored.length === ids.length) return { captured: 0, replayed: moves.length, moved: 0 };
    throw error;
  }
}

/** The captured document's moves, all in one transaction; events stored before are skipped. */
async function applyCapturedMoves(ctx: UseCaseContext, actor: Actor, brandId: string, moves: readonly CapturedMove[]): Promise<CaptureResult> {
  return transaction(ctx.db, async (em) => {
    const known = new Set(await readEpcisEventIds(em, brandId, moves.map((m) => m.id)));
    const now = ctx.clock();
    let captured = 0;
    let moved = 0;
    for (const m of moves) {
      if (known.has(m.id)) continue;
      if ('aggregation' in m) {
        const eventTime = new Date(String(m.event['eventTime']));
        const result = await applyCapturedAggregation(ctx, em, {
          brandId, actorId: actor.id, eventId: m.id, index: m.index, aggregation: m.aggregation,
          event: (parent) => ({
            brandId, id: m.id, moveId: null, eventType: 'AggregationEvent', eventTime: Number.isNaN(eventTime.getTime()) ? now : eventTime, recordTime: now,
            bizStep: bare(String(m.event['bizStep']), cbvBizStep), disposition: m.event['disposition'] === undefined ? null : bare(String(m.event['disposition']), cbvDisposition),
            epcs: [parent.epc, ...(Array.isArray(m.event['childEPCs']) ? m.event['childEPCs'] as string[] : [])], body: { ...m.event, recordTime: now.toISOString() },
          }),
        });
        captured++;
        moved += result.units + result.containers;
        continue;
      }
      const move = serialMoveOf(m.action, m.reason);
      const units = await lockUnitsForMove(em, brandId, { serials: m.serials });
      const found = new Set(units.map((u) => u.serial));
      const missing = m.serials.findIndex((s) => !found.has(s));
      if (missing !== -1) throw new InvalidInputError([{ field: `epcisBody.eventList[${m.index}].epcList[${missing}]`, message: 'names no unit of this brand' }]);
      for (const u of units) {
        const refusal = u.batchVoided ? 'batch_voided' : refusalOf(move, u.state, u.reason);
        if (refusal !== null) {
          throw new IllegalStateError(`epcisBody.eventList[${m.index}]: cannot ${move.action} serial ${u.serial}, which is ${u.batchVoided ? 'of a voided batch' : u.state}${u.reason === null ? '' : ` (${u.reason})`}`);
        }
      }
      const moveId = randomUUID();
      await insertSerialMove(em, {
        brandId, id: moveId, idempotencyKey: `epcis:${m.id}`, requestHash: m.id, action: m.action, reason: m.reason, target: { serials: m.serials, epcis_event_id: m.id },
        total: m.serials.length, nextSeq: null, actor: actor.id, at: now,
      });
      const eventTime = new Date(String(m.event['eventTime']));
      await applyMove(em, now, {
        brandId, moveId, actorId: actor.id, move, units,
        epcis: [{
          brandId, id: m.id, moveId, eventType: 'ObjectEvent', eventTime: Number.isNaN(eventTime.getTime()) ? now : eventTime, recordTime: now,
          bizStep: bare(String(m.event['bizStep']), cbvBizStep), disposition: m.event['disposition'] === undefined ? null : bare(String(m.event['disposition']), cbvDisposition),
          epcs: m.event['epcList'] as string[], body: { ...m.event, recordTime: now.toISOString() },
        }],
      });
      await finishSerialMove(em, brandId, moveId, units.length, now);
      captured++;
      moved += units.length;
    }
    return { captured, replayed: moves.length - captured, moved };
  });
}

/**
 * The EPCIS 2.0 ObjectEvents (commissioning, active) of units commissioned outside a serial move:
 * one per {@link maxEventEpcs} of `epcs`, in order; `action` is ADD for issued units and OBSERVE for
 * units encoded before (as a commissioning move reports them). `idOf(offset)` names the event that
 * starts at that offset of `epcs`, derived from what it reports, so the same commissioning written
 * again names the same events (and storing them keeps the first).
 */
export function commissioningEvents(c: {
  readonly brandId: string; readonly epcs: readonly string[]; readonly action: 'ADD' | 'OBSERVE'; readonly at: Date; readonly idOf: (offset: number) => string;
}): NewEpcisEvent[] {
  const events: NewEpcisEvent[] = [];
  const at = c.at.toISOString();
  for (let offset = 0; offset < c.epcs.length; offset += maxEventEpcs) {
    const id = c.idOf(offset);
    const epcList = c.epcs.slice(offset, offset + maxEventEpcs);
    events.push({
      brandId: c.brandId, id, moveId: null, eventType: 'ObjectEvent', eventTime: c.at, recordTime: c.at, bizStep: 'commissioning', disposition: 'active', epcs: epcList,
      body: {
        type: 'ObjectEvent', eventID: `urn:uuid:${id}`, eventTime: at, eventTimeZoneOffset: '+00:00', recordTime: at,
        epcList, action: c.action, bizStep: 'commissioning', disposition: 'active',
      },
    });
  }
  return events;
}

/**
 * The EPCIS 2.0 ObjectEvents (ADD, commissioning, active) of units commissioned at mint
 * (`active_at_mint`): one per {@link maxEventEpcs} units of a chunk, naming their GS1 Digital Link
 * URIs, for the chunk's transaction. Each event's id is derived from the batch and its first seq, so
 * a chunk written again names the same events.
 */
export function mintCommissioningEvents(c: {
  readonly brandId: string; readonly mintBatchId: string; readonly resolverBaseUrl: string; readonly gtin: string | null;
  readonly firstSeq: number; readonly serials: readonly string[]; readonly at: Date;
}): NewEpcisEvent[] {
  return commissioningEvents({
    brandId: c.brandId, epcs: c.serials.map((serial) => unitResolverUrl(c.resolverBaseUrl, c.gtin, serial)), action: 'ADD', at: c.at,
    idOf: (offset) => derivedUuid(`mint/${c.mintBatchId}/${c.firstSeq + offset}`),
  });
}
