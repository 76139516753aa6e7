// Units: find a unit by its serial or by pasting what a scanner read (a Digital Link URL or an
// element string), and a unit's page (#/units/<gtin>/<serial>): its batch, seq and status
// (ListMintUnits by serial), its scans (GetUnitScans, paged), its own resolver links, and the
// suspect mark cleared with a reason (ClearSuspectUnit).

import { skipToken, useMutation, useQuery } from '@connectrpc/connect-query';
import { LinkLevel, MintService, MintUnitStatus, ResolverService, ScanClientClass, ScanService } from '@mint/contract';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useBrand } from '../context.tsx';
import { enumName, ErrorMessage, formatTime, Pager, useCursorPages } from '../ui.tsx';
import { parseUnitQuery } from '../unit-search.ts';

/** The search form: a serial, a scanned URL or an element string. */
export function UnitSearch(): ReactNode {
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const query = parseUnitQuery(text);
    if (query === null) {
      setProblem('This names no unit: paste a serial, a scanned Digital Link URL (…/01/<GTIN>/21/<serial>) or an element string ((01)…(21)…).');
      return;
    }
    setProblem(undefined);
    window.location.hash = `#/units/${encodeURIComponent(query.gtin ?? '')}/${encodeURIComponent(query.serial)}`;
  };
  return (
    <>
      <h1>Units</h1>
      <form className="inline-form" onSubmit={onSubmit} aria-label="Find a unit">
        <label htmlFor="unit-query">Serial or scanned URL</label>
        <input
          id="unit-query"
          className="wide"
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder="https://id.brand.example/01/09506000134352/21/ABC"
          aria-describedby={problem === undefined ? undefined : 'unit-query-problem'}
        />
        <button type="submit">Find unit</button>
      </form>
      {problem !== undefined && (
        <p className="error" role="alert" id="unit-query-problem">
          {problem}
        </p>
      )}
      <p className="hint">
        A batch's units are listed in seq order on its page (<a href="#/batches">Batches</a>).
      </p>
    </>
  );
}

/** One unit's page. */
export function Unit({ gtin, serial }: { readonly gtin: string; readonly serial: string }): ReactNode {
  const brandId = useBrand();
  const found = useQuery(MintService.method.listMintUnits, { brandId, serial, limit: 1 });
  const unit = found.data?.units[0];
  const unitGtin = gtin !== '' ? gtin : (unit?.gtin ?? '');
  const pages = useCursorPages();
  const scans = useQuery(ScanService.method.getUnitScans, {
    brandId,
    serial,
    limit: 20,
    ...(unitGtin === '' ? {} : { gtin: unitGtin }),
    ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }),
  });
  const links = useQuery(ResolverService.method.listLinks, unitGtin === '' ? skipToken : { brandId, level: LinkLevel.SERIAL, gtin: unitGtin, limit: 100 });
  const clear = useMutation(ScanService.method.clearSuspectUnit);
  const [reason, setReason] = useState('');
  const own = (links.data?.links ?? []).filter((l) => l.serial === serial);
  return (
    <>
      <p>
        <a href="#/units">Find another unit</a>
      </p>
      <h1>Unit {serial}</h1>
      <ErrorMessage error={found.error} />
      {found.data !== undefined && unit === undefined && (
        <p role="status" data-testid="unit-missing">
          No unit of this brand has the serial {serial}.
        </p>
      )}
      {unit !== undefined && (
        <dl className="details">
          <dt>GTIN</dt>
          <dd>{unit.gtin ?? '—'}</dd>
          <dt>Seq</dt>
          <dd data-testid="unit-seq">{unit.seq}</dd>
          <dt>Batch</dt>
          <dd>
            <a href={`#/batches/${unit.mintBatchId}`}>{unit.mintBatchId.slice(0, 8)}</a> ({unit.productSku ?? 'no SKU'})
          </dd>
          <dt>Status</dt>
          <dd>{enumName(MintUnitStatus, unit.status)}</dd>
          <dt>Minted (UTC)</dt>
          <dd>{formatTime(unit.createdAt)}</dd>
          <dt>Resolver URL</dt>
          <dd className="url">
            <code>{unit.resolverUrl}</code>
          </dd>
        </dl>
      )}
      <section aria-labelledby="unit-scans-title">
        <h2 id="unit-scans-title">Scans</h2>
        <ErrorMessage error={scans.error} />
        {scans.data !== undefined && (
          <p data-testid="unit-scan-summary">
            {Number(scans.data.total).toLocaleString('en-US')} scans
            {scans.data.firstScanAt === undefined ? '' : `, first ${formatTime(scans.data.firstScanAt)}, last ${formatTime(scans.data.lastScanAt)} UTC`}
            {scans.data.countries.length === 0 ? '' : `, from ${scans.data.countries.join(', ')}`}
          </p>
        )}
        {(scans.data?.scans.length ?? 0) > 0 && (
          <div className="table-wrap">
            <table>
              <caption>Scans of the unit, newest first</caption>
              <thead>
                <tr>
                  <th>When (UTC)</th>
                  <th>Outcome</th>
                  <th>Country</th>
                  <th>Client</th>
                  <th>Scans</th>
                  <th>Source</th>
                </tr>
              </thead>
              <tbody>
                {scans.data!.scans.map((s) => (
                  <tr key={`${formatTime(s.scannedAt)} ${s.scannedAt?.nanos ?? 0} ${s.outcome} ${s.country ?? ''} ${s.clientClass} ${s.source} ${s.scans}`}>
                    <td>{formatTime(s.scannedAt)}</td>
                    <td>{s.outcome}</td>
                    <td>{s.country ?? '—'}</td>
                    <td>{enumName(ScanClientClass, s.clientClass)}</td>
                    <td>{s.scans}</td>
                    <td>{s.source}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {(pages.page > 1 || scans.data?.hasMore === true) && (
          <Pager
            label="Scans"
            page={pages.page}
            hasMore={scans.data?.hasMore ?? false}
            onPrevious={pages.previous}
            onNext={() => pages.next(scans.data?.nextCursor)}
          />
        )}
      </section>
      <section aria-labelledby="unit-suspect-title">
        <h2 id="unit-suspect-title">Suspect mark</h2>
        <form
          className="inline-form"
          aria-label="Clear the suspect mark"
          onSubmit={(e) => {
            e.preventDefault();
            clear.mutate({ brandId, serial, reason: reason.trim(), ...(unitGtin === '' ? {} : { gtin: unitGtin }) });
          }}
        >
          <label htmlFor="clear-reason">Reason</label>
          <input id="clear-reason" value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} />
          <button type="submit" disabled={clear.isPending}>
            Clear the suspect mark
          </button>
        </form>
        {clear.data !== undefined && (
          <p role="status">
            {clear.data.cleared
              ? `Cleared: it was marked by the ${clear.data.rule ?? ''} rule since ${formatTime(clear.data.since)} UTC.`
              : 'The unit was not suspect: nothing changed.'}
          </p>
        )}
        <ErrorMessage error={clear.error} />
      </section>
      <section aria-labelledby="unit-links-title">
        <h2 id="unit-links-title">Links of this unit</h2>
        <ErrorMessage error={links.error} />
        {links.data !== undefined &&
          (own.length === 0 ? (
            <p>None: the resolver answers with the lot's, product's or brand's links.</p>
          ) : (
            <ul>
              {own.map((l) => (
                <li key={l.id}>
                  <code>{l.linkType}</code> {l.title}: <span className="url">{l.href}</span>
                </li>
              ))}
            </ul>
          ))}
        <p>
          <a href="#/links">Edit links</a>
        </p>
      </section>
    </>
  );
}
