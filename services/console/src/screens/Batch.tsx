// One batch: its details and live progress, units (paged), manual activation for first_scan
// batches, lifecycle moves (when the API serves SetMintBatchStatus), its events and its payload
// packs with a download button (a short-lived signed URL).

import { useMutation, useQuery } from '@connectrpc/connect-query';
import { ActivationMode, IdentityMode, MintBatchStatus, MintService, MintUnitStatus, PayloadPackStatus } from '@mint/contract';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { useState, type ReactNode } from 'react';
import { useBrand, useJobWatch } from '../context.tsx';
import { groupEvents } from '../event-groups.ts';
import { enumName, ErrorMessage, formatTime, Pager, Progress, useCursorPages } from '../ui.tsx';

/** Lifecycle targets offered by the move form, in lifecycle order. */
const moves = [MintBatchStatus.EXPORTED, MintBatchStatus.PRINTED, MintBatchStatus.APPLIED, MintBatchStatus.VOIDED];

function Units({ batchId }: { readonly batchId: string }): ReactNode {
  const brandId = useBrand();
  const pages = useCursorPages();
  const units = useQuery(MintService.method.listMintUnits, { brandId, mintBatchId: batchId, limit: 20, ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }) });
  return (
    <section aria-labelledby="units-title">
      <h2 id="units-title">Units</h2>
      <ErrorMessage error={units.error} />
      {units.data?.units.length === 0 ? <p>No individual units (lot or product-only batch, or not minted yet).</p> : (
        <div className="table-wrap">
          <table>
            <thead><tr><th>#</th><th>Serial</th><th>Status</th><th>Resolver URL</th></tr></thead>
            <tbody>
              {(units.data?.units ?? []).map((u) => (
                <tr key={u.id}><td>{u.seq}</td><td><code>{u.serial}</code></td><td>{enumName(MintUnitStatus, u.status)}</td><td className="url">{u.resolverUrl}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager label="Units" page={pages.page} hasMore={units.data?.hasMore ?? false} onPrevious={pages.previous} onNext={() => pages.next(units.data?.nextCursor)} />
    </section>
  );
}

function BatchEvents({ batchId }: { readonly batchId: string }): ReactNode {
  const brandId = useBrand();
  const events = useQuery(MintService.method.listMintEvents, { brandId, entityId: batchId, limit: 50 });
  return (
    <section aria-labelledby="batch-events-title">
      <h2 id="batch-events-title">Events</h2>
      <ErrorMessage error={events.error} />
      <ul className="events">
        {groupEvents((events.data?.events ?? []).map((e) => ({ ...e, at: e.occurredAt === undefined ? 0 : timestampMs(e.occurredAt) }))).map((g) => g.events.length === 1
          ? <li key={g.events[0]!.id}><time>{formatTime(g.events[0]!.occurredAt)}</time> <code>{g.eventType}</code></li>
          : (
            <li key={g.events[0]!.id}>
              <details>
                <summary>
                  <time>{formatTime(g.events.at(-1)!.occurredAt)}</time> – <time>{formatTime(g.events[0]!.occurredAt)}</time>{' '}
                  <code>{g.eventType}</code> ×{g.events.length}{g.units === null ? '' : ` (${g.units.toLocaleString()} units)`}
                </summary>
                <ul>{g.events.map((e) => <li key={e.id}><time>{formatTime(e.occurredAt)}</time> <code>{e.eventType}</code></li>)}</ul>
              </details>
            </li>
          ))}
      </ul>
    </section>
  );
}

/** True while a pack is still to be generated (pending or generating). */
const unfinished = (p: { readonly status: PayloadPackStatus }) => p.status !== PayloadPackStatus.READY && p.status !== PayloadPackStatus.FAILED;

function Packs({ batchId, batchStatus }: { readonly batchId: string; readonly batchStatus: MintBatchStatus }): ReactNode {
  const brandId = useBrand();
  const pages = useCursorPages();
  const packs = useQuery(MintService.method.listPayloadPacks, { brandId, mintBatchId: batchId, limit: 20, ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }) }, {
    // Look again every 2 s only while a pack of this page is being generated. The completion pack
    // appears when the job completes, and the job watch then refreshes every query.
    refetchInterval: (q) => (q.state.data?.packs.some(unfinished) === true ? 2000 : false),
  });
  const download = useMutation(MintService.method.createPayloadPackDownloadUrl);
  const mine = packs.data?.packs ?? [];
  const start = async (packId: string) => {
    const answer = await download.mutateAsync({ brandId, packId }).catch(() => undefined);
    if (answer === undefined) return;
    // The signed URL answers with `content-disposition: attachment`: the browser saves the tar.
    const link = document.createElement('a');
    link.href = answer.url;
    link.download = '';
    document.body.append(link);
    link.click();
    link.remove();
  };
  return (
    <section aria-labelledby="packs-title">
      <h2 id="packs-title">Payload packs</h2>
      <ErrorMessage error={packs.error ?? download.error} />
      {packs.data !== undefined && mine.length === 0 && (
        <p data-testid="no-pack">{batchStatus === MintBatchStatus.DRAFT ? 'No pack yet: one is generated when the batch\'s job completes.' : 'This batch has no payload pack.'}</p>
      )}
      {mine.length > 0 && (
        <ul className="packs">
          {mine.map((p) => (
            <li key={p.id}>
              Pack {p.id.slice(0, 8)}: <span data-testid="pack-status">{enumName(PayloadPackStatus, p.status)}</span>
              {p.unitCount !== undefined && <> ({p.unitCount.toLocaleString('en-US')} units)</>}{' '}
              <button type="button" disabled={p.status !== PayloadPackStatus.READY || download.isPending} onClick={() => void start(p.id)}>Download pack {p.id.slice(0, 8)}</button>
            </li>
          ))}
        </ul>
      )}
      {(pages.page > 1 || packs.data?.hasMore === true) && (
        <Pager label="Payload packs" page={pages.page} hasMore={packs.data?.hasMore ?? false} onPrevious={pages.previous} onNext={() => pages.next(packs.data?.nextCursor)} />
      )}
    </section>
  );
}

/** The batch page. */
export function Batch({ id }: { readonly id: string }): ReactNode {
  const brandId = useBrand();
  const batch = useQuery(MintService.method.getMintBatch, { brandId, mintBatchId: id });
  const b = batch.data?.batch;
  const running = b !== undefined && b.status === MintBatchStatus.DRAFT && b.mintedQuantity < b.requestedQuantity;
  const { progress } = useJobWatch(running ? b.mintJobId : undefined);
  const activate = useMutation(MintService.method.activateMintUnits);
  const move = useMutation(MintService.method.setMintBatchStatus);
  const [target, setTarget] = useState<MintBatchStatus>(MintBatchStatus.EXPORTED);
  const [reason, setReason] = useState('');
  return (
    <>
      <p><a href="#/batches">All batches</a></p>
      <h1>Batch {id.slice(0, 8)}</h1>
      <ErrorMessage error={batch.error} />
      {b !== undefined && (
        <>
          <dl className="details">
            <dt>Product</dt><dd>{b.productName ?? ''} ({b.productSku ?? 'no SKU'})</dd>
            <dt>Status</dt><dd data-testid="batch-status">{enumName(MintBatchStatus, b.status)}</dd>
            <dt>Identity mode</dt><dd>{enumName(IdentityMode, b.identityMode)}</dd>
            <dt>Activation</dt><dd>{enumName(ActivationMode, b.activationMode)}</dd>
            <dt>Created (UTC)</dt><dd>{formatTime(b.createdAt)}</dd>
            <dt>Lots</dt><dd>{b.lots.length === 0 ? '—' : b.lots.map((l) => `${l.lotCode} × ${l.qty}`).join(', ')}</dd>
          </dl>
          <Progress value={progress?.mintedQuantity ?? b.mintedQuantity} max={b.requestedQuantity} label="Batch progress" />
          {b.activationMode === ActivationMode.FIRST_SCAN && (
            <section aria-labelledby="activation-title">
              <h2 id="activation-title">Manual activation</h2>
              <button type="button" disabled={activate.isPending} onClick={() => activate.mutate({ brandId, target: { case: 'mintBatchId', value: b.id } })}>Activate all units of this batch</button>
              {activate.data !== undefined && <p role="status">{activate.data.activatedCount.toLocaleString('en-US')} units activated.</p>}
              <ErrorMessage error={activate.error} />
            </section>
          )}
          <section aria-labelledby="lifecycle-title">
            <h2 id="lifecycle-title">Lifecycle</h2>
            <form className="inline-form" onSubmit={(e) => { e.preventDefault(); move.mutate({ brandId, mintBatchId: b.id, status: target, ...(reason.trim() === '' ? {} : { reason: reason.trim() }) }, { onSuccess: () => void batch.refetch() }); }}>
              <label htmlFor="move-to">Move to</label>
              <select id="move-to" value={target} onChange={(e) => setTarget(Number(e.target.value) as MintBatchStatus)}>
                {moves.map((m) => <option key={m} value={m}>{enumName(MintBatchStatus, m)}</option>)}
              </select>
              <label htmlFor="move-reason">Reason</label>
              <input id="move-reason" value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} />
              <button type="submit" disabled={move.isPending}>Move batch</button>
            </form>
            <ErrorMessage error={move.error} />
          </section>
          <Packs batchId={b.id} batchStatus={b.status} />
          <Units batchId={b.id} />
          <BatchEvents batchId={b.id} />
        </>
      )}
    </>
  );
}
