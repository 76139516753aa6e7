// One batch: its details and live progress, units (paged), manual activation for first_scan
// batches, lifecycle moves (when the API serves SetMintBatchStatus), a serial batch's
// reconciliation and serial moves, its events and its payload packs with a download button (a
// short-lived signed URL).

import { useMutation, useQuery } from '@connectrpc/connect-query';
import {
  ActivationMode,
  IdentityMode,
  MintBatchStatus,
  MintService,
  MintUnitStatus,
  PackFormat,
  Paper,
  PayloadPackPurpose,
  PayloadPackStatus,
  Symbology,
  type PayloadPack,
} from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { Fragment, useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { useBrand, useJobWatch } from '../context.tsx';
import { groupEvents } from '../event-groups.ts';
import { hriLines, symbolSvg, type PreviewUnit } from '../labels/preview.ts';
import { enumName, ErrorMessage, formatTime, invalidFields, Pager, Progress, useCursorPages } from '../ui.tsx';
import { MoveSerials, Reconciliation } from './Serials.tsx';

/** Lifecycle targets offered by the move form, in lifecycle order. */
const moves = [MintBatchStatus.EXPORTED, MintBatchStatus.PRINTED, MintBatchStatus.APPLIED, MintBatchStatus.VOIDED];

/** The batch's units in seq order, paged by the last seq shown (ListMintUnits with after_seq). */
function Units({ batchId }: { readonly batchId: string }): ReactNode {
  const brandId = useBrand();
  const [after, setAfter] = useState<number[]>([0]);
  const units = useQuery(MintService.method.listMintUnits, { brandId, mintBatchId: batchId, limit: 20, afterSeq: after.at(-1)! });
  const shown = units.data?.units ?? [];
  return (
    <section aria-labelledby="units-title">
      <h2 id="units-title">Units</h2>
      <ErrorMessage error={units.error} />
      {units.data?.units.length === 0 ? (
        <p>No individual units (lot or product-only batch, or not minted yet).</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>#</th>
                <th>Serial</th>
                <th>Status</th>
                <th>Resolver URL</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((u) => (
                <tr key={u.id}>
                  <td>{u.seq}</td>
                  <td>
                    <a href={`#/units/${encodeURIComponent(u.gtin ?? '')}/${encodeURIComponent(u.serial)}`}>
                      <code>{u.serial}</code>
                    </a>
                  </td>
                  <td>{enumName(MintUnitStatus, u.status)}</td>
                  <td className="url">{u.resolverUrl}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        label="Units"
        page={after.length}
        hasMore={units.data?.hasMore ?? false}
        onPrevious={() => setAfter((a) => (a.length > 1 ? a.slice(0, -1) : a))}
        onNext={() => {
          const last = shown.at(-1);
          if (last !== undefined) setAfter((a) => [...a, last.seq]);
        }}
      />
    </section>
  );
}

function BatchEvents({ batchId }: { readonly batchId: string }): ReactNode {
  const brandId = useBrand();
  const pages = useCursorPages();
  const events = useQuery(MintService.method.listMintEvents, {
    brandId,
    entityId: batchId,
    limit: 50,
    ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }),
  });
  return (
    <section aria-labelledby="batch-events-title">
      <h2 id="batch-events-title">Events</h2>
      <ErrorMessage error={events.error} />
      <ul className="events">
        {groupEvents((events.data?.events ?? []).map((e) => ({ ...e, at: e.occurredAt === undefined ? 0 : timestampMs(e.occurredAt) }))).map((g) =>
          g.events.length === 1 ? (
            <li key={g.events[0]!.id}>
              <time>{formatTime(g.events[0]!.occurredAt)}</time> <code>{g.eventType}</code>
            </li>
          ) : (
            <li key={g.events[0]!.id}>
              <details>
                <summary>
                  <time>{formatTime(g.events.at(-1)!.occurredAt)}</time> – <time>{formatTime(g.events[0]!.occurredAt)}</time> <code>{g.eventType}</code> ×
                  {g.events.length}
                  {g.units === null ? '' : ` (${g.units.toLocaleString()} units)`}
                </summary>
                <ul>
                  {g.events.map((e) => (
                    <li key={e.id}>
                      <time>{formatTime(e.occurredAt)}</time> <code>{e.eventType}</code>
                    </li>
                  ))}
                </ul>
              </details>
            </li>
          ),
        )}
      </ul>
      {(pages.page > 1 || events.data?.hasMore === true) && (
        <Pager
          label="Events"
          page={pages.page}
          hasMore={events.data?.hasMore ?? false}
          onPrevious={pages.previous}
          onNext={() => pages.next(events.data?.nextCursor)}
        />
      )}
    </section>
  );
}

/** True while a pack is still to be generated (pending or generating). */
const unfinished = (p: { readonly status: PayloadPackStatus }) => p.status !== PayloadPackStatus.READY && p.status !== PayloadPackStatus.FAILED;

/** The formats offered, with what each file is. */
const formats: readonly (readonly [PackFormat, string])[] = [
  [PackFormat.CSV, 'CSV (units.csv)'],
  [PackFormat.JSONL, 'JSON Lines (units.jsonl)'],
  [PackFormat.SVG, 'SVG labels'],
  [PackFormat.PDF, 'PDF label sheets'],
  [PackFormat.ZPL, 'ZPL (Zebra printers)'],
  [PackFormat.EPCIS, 'EPCIS 2.0 (epcis.json)'],
];

/** The layout fields of the form, all optional (blank keeps the API's default, shown as the placeholder). */
const layoutFields = [
  ['columns', 'Columns', '3'],
  ['rows', 'Rows', '8'],
  ['labelWidthMm', 'Label width (mm)', '70'],
  ['labelHeightMm', 'Label height (mm)', '37'],
  ['marginTopMm', 'Top margin (mm)', '0'],
  ['marginLeftMm', 'Left margin (mm)', '0'],
  ['gapXMm', 'Gap across (mm)', '0'],
  ['gapYMm', 'Gap down (mm)', '0'],
] as const;
type LayoutKey = (typeof layoutFields)[number][0];

/** Draws one label of the batch (the first unit of the range the units list shows) at the layout's size. */
function LabelPreview({
  unit,
  symbology,
  widthMm,
  heightMm,
}: {
  readonly unit: (PreviewUnit & { readonly seq: number }) | undefined;
  readonly symbology: 'qr' | 'datamatrix';
  readonly widthMm: number;
  readonly heightMm: number;
}): ReactNode {
  const [drawn, setDrawn] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const symbolBox = useRef<HTMLDivElement>(null);
  const gtin = unit?.gtin;
  const serial = unit?.serial;
  const digitalLink = unit?.digitalLink;
  useEffect(() => {
    if (gtin === undefined || serial === undefined || digitalLink === undefined) return;
    let live = true;
    symbolSvg({ gtin, serial, digitalLink }, symbology).then(
      (svg) => {
        if (!live || symbolBox.current === null) return;
        // Parsed as SVG and adopted as nodes (the console's content security policy allows no data: images).
        const parsed = new DOMParser().parseFromString(svg, 'image/svg+xml').documentElement;
        symbolBox.current.replaceChildren(document.importNode(parsed, true));
        setDrawn(true);
        setError(undefined);
      },
      (e: unknown) => {
        if (!live) return;
        symbolBox.current?.replaceChildren();
        setDrawn(false);
        setError(String(e instanceof Error ? e.message : e));
      },
    );
    return () => {
      live = false;
    };
  }, [gtin, serial, digitalLink, symbology]);
  if (unit === undefined) return <p className="hint">No unit to preview: labels are made of serial units.</p>;
  return (
    <figure className="label-preview" aria-label={`Label preview of serial ${unit.serial}`}>
      <div className="label" style={{ width: `${widthMm}mm`, minHeight: `${heightMm}mm` }} data-testid="label-preview">
        <div
          className="symbol"
          ref={symbolBox}
          role="img"
          aria-label={`${symbology === 'qr' ? 'QR code' : 'DataMatrix'} of ${unit.serial}`}
          aria-busy={!drawn}
        />
        <div className="hri">
          {hriLines(unit).map((l) => (
            <div key={l}>{l}</div>
          ))}
        </div>
      </div>
      <figcaption>
        {widthMm} × {heightMm} mm, {symbology === 'qr' ? 'QR code with the Digital Link' : 'GS1 DataMatrix'}, unit seq {unit.seq}
      </figcaption>
      {error !== undefined && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </figure>
  );
}

/** The form asking for a pack: formats, a seq range, symbology and layout, with a preview of one label. */
function PackForm({ batchId, serial }: { readonly batchId: string; readonly serial: boolean }): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const create = useMutation(MintService.method.createPayloadPack);
  const [chosen, setChosen] = useState<PackFormat[]>([PackFormat.PDF]);
  const [seqFrom, setSeqFrom] = useState('');
  const [seqTo, setSeqTo] = useState('');
  const [symbology, setSymbology] = useState<Symbology>(Symbology.QR);
  const [paper, setPaper] = useState<Paper>(Paper.A4);
  const [dpi, setDpi] = useState('203');
  const [layout, setLayout] = useState<Partial<Record<LayoutKey, string>>>({});
  // The first unit of the range, in seq order.
  const from = seqFrom === '' || !Number.isInteger(Number(seqFrom)) || Number(seqFrom) < 1 ? 1 : Number(seqFrom);
  const first = useQuery(MintService.method.listMintUnits, { brandId, mintBatchId: batchId, limit: 1, afterSeq: from - 1 });
  const previewed = first.data?.units[0];
  const num = (key: LayoutKey, fallback: number) => (layout[key] === undefined || layout[key] === '' ? fallback : Number(layout[key]));
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const values = Object.fromEntries(
      Object.entries(layout)
        .filter(([, v]) => v !== undefined && v !== '')
        .map(([k, v]) => [k, Number(v)]),
    );
    create.mutate(
      {
        brandId,
        mintBatchId: batchId,
        formats: chosen,
        symbology,
        ...(seqFrom === '' ? {} : { seqFrom: Number(seqFrom) }),
        ...(seqTo === '' ? {} : { seqTo: Number(seqTo) }),
        layout: { paper, dpi: Number(dpi), ...values },
      },
      { onSuccess: () => void queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('ListPayloadPacks') }) },
    );
  };
  const invalid = invalidFields(create.error);
  const toggle = (f: PackFormat, on: boolean) => setChosen((c) => (on ? [...c, f] : c.filter((x) => x !== f)));
  return (
    <form className="pack-form" onSubmit={onSubmit} aria-labelledby="pack-form-title">
      <h3 id="pack-form-title">Ask for a pack</h3>
      <div className="pack-grid">
        <div>
          <fieldset>
            <legend>Formats</legend>
            {formats.map(([f, label]) => (
              <label key={f}>
                <input type="checkbox" checked={chosen.includes(f)} onChange={(e) => toggle(f, e.target.checked)} /> {label}
              </label>
            ))}
          </fieldset>
          {serial && (
            <fieldset>
              <legend>Units (by seq, inclusive; blank: all)</legend>
              <label htmlFor="seq-from">From seq</label>
              <input id="seq-from" type="number" min={1} aria-invalid={invalid.has('seq_from')} value={seqFrom} onChange={(e) => setSeqFrom(e.target.value)} />
              <label htmlFor="seq-to">To seq</label>
              <input id="seq-to" type="number" min={1} aria-invalid={invalid.has('seq_to')} value={seqTo} onChange={(e) => setSeqTo(e.target.value)} />
            </fieldset>
          )}
          <fieldset>
            <legend>Symbology</legend>
            <label>
              <input type="radio" name="symbology" checked={symbology === Symbology.QR} onChange={() => setSymbology(Symbology.QR)} /> QR code (GS1 Digital
              Link)
            </label>
            <label>
              <input type="radio" name="symbology" checked={symbology === Symbology.DATAMATRIX} onChange={() => setSymbology(Symbology.DATAMATRIX)} /> GS1
              DataMatrix
            </label>
          </fieldset>
          <fieldset className="layout">
            <legend>Layout (blank: the default shown)</legend>
            <label htmlFor="paper">Paper</label>
            <select id="paper" value={paper} onChange={(e) => setPaper(Number(e.target.value) as Paper)}>
              <option value={Paper.A4}>A4</option>
              <option value={Paper.LETTER}>US Letter</option>
            </select>
            {layoutFields.map(([key, label, placeholder]) => (
              <Fragment key={key}>
                <label htmlFor={`layout-${key}`}>{label}</label>
                <input
                  id={`layout-${key}`}
                  type="number"
                  step="any"
                  placeholder={placeholder}
                  aria-invalid={invalid.has(`layout.${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`)}
                  value={layout[key] ?? ''}
                  onChange={(e) => setLayout((l) => ({ ...l, [key]: e.target.value }))}
                />
              </Fragment>
            ))}
            <label htmlFor="dpi">ZPL resolution</label>
            <select id="dpi" value={dpi} onChange={(e) => setDpi(e.target.value)}>
              <option value="203">203 dpi</option>
              <option value="300">300 dpi</option>
            </select>
          </fieldset>
        </div>
        <LabelPreview
          unit={
            previewed === undefined || previewed.gtin === undefined
              ? undefined
              : { gtin: previewed.gtin, serial: previewed.serial, digitalLink: previewed.resolverUrl, seq: previewed.seq }
          }
          symbology={symbology === Symbology.DATAMATRIX ? 'datamatrix' : 'qr'}
          widthMm={num('labelWidthMm', 70)}
          heightMm={num('labelHeightMm', 37)}
        />
      </div>
      <button type="submit" disabled={create.isPending}>
        Ask for the pack
      </button>
      {create.data?.pack !== undefined && <p role="status">Pack {create.data.pack.id.slice(0, 8)} asked for.</p>}
      <ErrorMessage error={create.error} />
    </form>
  );
}

/** What a pack holds: its formats, range and symbology, in a line. */
function packSummary(p: PayloadPack): string {
  const names = p.formats.map((f) => enumName(PackFormat, f)).join(', ');
  const range = p.seqFrom === undefined && p.seqTo === undefined ? 'all units' : `seq ${p.seqFrom ?? 'first'}–${p.seqTo ?? 'last'}`;
  return `${names}; ${range}; ${enumName(Symbology, p.symbology === Symbology.UNSPECIFIED ? Symbology.QR : p.symbology)}; ${enumName(PayloadPackPurpose, p.purpose)}`;
}

function Packs({ batchId, batchStatus, serial }: { readonly batchId: string; readonly batchStatus: MintBatchStatus; readonly serial: boolean }): ReactNode {
  const brandId = useBrand();
  const pages = useCursorPages();
  const packs = useQuery(
    MintService.method.listPayloadPacks,
    { brandId, mintBatchId: batchId, limit: 20, ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }) },
    {
      // Look again every 2 s only while a pack of this page is being generated. The completion pack
      // appears when the job completes, and the job watch then refreshes every query.
      refetchInterval: (q) => (q.state.data?.packs.some(unfinished) === true ? 2000 : false),
    },
  );
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
  const packable = batchStatus !== MintBatchStatus.DRAFT && batchStatus !== MintBatchStatus.VOIDED;
  return (
    <section aria-labelledby="packs-title">
      <h2 id="packs-title">Payload packs</h2>
      <ErrorMessage error={packs.error ?? download.error} />
      {packs.data !== undefined && mine.length === 0 && (
        <p data-testid="no-pack">
          {batchStatus === MintBatchStatus.DRAFT ? "No pack yet: one is generated when the batch's job completes." : 'This batch has no payload pack.'}
        </p>
      )}
      {mine.length > 0 && (
        <ul className="packs">
          {mine.map((p) => (
            <li key={p.id}>
              Pack {p.id.slice(0, 8)}: <span data-testid="pack-status">{enumName(PayloadPackStatus, p.status)}</span>
              {p.unitCount !== undefined && <> ({p.unitCount.toLocaleString('en-US')} units)</>}{' '}
              <span className="hint" data-testid="pack-summary">
                {packSummary(p)}
              </span>{' '}
              {unfinished(p) && <progress aria-label={`Pack ${p.id.slice(0, 8)} being generated`} />}
              <button type="button" disabled={p.status !== PayloadPackStatus.READY || download.isPending} onClick={() => void start(p.id)}>
                Download pack {p.id.slice(0, 8)}
              </button>
            </li>
          ))}
        </ul>
      )}
      {(pages.page > 1 || packs.data?.hasMore === true) && (
        <Pager
          label="Payload packs"
          page={pages.page}
          hasMore={packs.data?.hasMore ?? false}
          onPrevious={pages.previous}
          onNext={() => pages.next(packs.data?.nextCursor)}
        />
      )}
      {packable && <PackForm batchId={batchId} serial={serial} />}
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
      <p>
        <a href="#/batches">All batches</a>
      </p>
      <h1>Batch {id.slice(0, 8)}</h1>
      <ErrorMessage error={batch.error} />
      {b !== undefined && (
        <>
          <dl className="details">
            <dt>Product</dt>
            <dd>
              {b.productName ?? ''} ({b.productSku ?? 'no SKU'})
            </dd>
            <dt>Status</dt>
            <dd data-testid="batch-status">{enumName(MintBatchStatus, b.status)}</dd>
            <dt>Identity mode</dt>
            <dd>{enumName(IdentityMode, b.identityMode)}</dd>
            <dt>Activation</dt>
            <dd>{enumName(ActivationMode, b.activationMode)}</dd>
            <dt>Created (UTC)</dt>
            <dd>{formatTime(b.createdAt)}</dd>
            <dt>Lots</dt>
            <dd>{b.lots.length === 0 ? '—' : b.lots.map((l) => `${l.lotCode} × ${l.qty}`).join(', ')}</dd>
          </dl>
          <Progress value={progress?.mintedQuantity ?? b.mintedQuantity} max={b.requestedQuantity} label="Batch progress" />
          {b.activationMode === ActivationMode.FIRST_SCAN && (
            <section aria-labelledby="activation-title">
              <h2 id="activation-title">Manual activation</h2>
              <button type="button" disabled={activate.isPending} onClick={() => activate.mutate({ brandId, target: { case: 'mintBatchId', value: b.id } })}>
                Activate all units of this batch
              </button>
              {activate.data !== undefined && <p role="status">{activate.data.activatedCount.toLocaleString('en-US')} units activated.</p>}
              <ErrorMessage error={activate.error} />
            </section>
          )}
          <section aria-labelledby="lifecycle-title">
            <h2 id="lifecycle-title">Lifecycle</h2>
            <form
              className="inline-form"
              onSubmit={(e) => {
                e.preventDefault();
                move.mutate(
                  { brandId, mintBatchId: b.id, status: target, ...(reason.trim() === '' ? {} : { reason: reason.trim() }) },
                  { onSuccess: () => void batch.refetch() },
                );
              }}
            >
              <label htmlFor="move-to">Move to</label>
              <select id="move-to" value={target} onChange={(e) => setTarget(Number(e.target.value) as MintBatchStatus)}>
                {moves.map((m) => (
                  <option key={m} value={m}>
                    {enumName(MintBatchStatus, m)}
                  </option>
                ))}
              </select>
              <label htmlFor="move-reason">Reason</label>
              <input id="move-reason" value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} />
              <button type="submit" disabled={move.isPending}>
                Move batch
              </button>
            </form>
            <ErrorMessage error={move.error} />
          </section>
          {b.identityMode === IdentityMode.SERIAL && (
            <>
              <Reconciliation batchId={b.id} />
              {b.mintedQuantity > 0 && <MoveSerials batchId={b.id} />}
            </>
          )}
          <Packs batchId={b.id} batchStatus={b.status} serial={b.identityMode === IdentityMode.SERIAL} />
          <Units batchId={b.id} />
          <BatchEvents batchId={b.id} />
        </>
      )}
    </>
  );
}
