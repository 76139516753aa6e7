// Links: the resolver links at every level (the brand, a product's GTIN, one of its lots, one
// unit), keyset-paged; a form that adds or changes one (UpsertLink), delete, and the bulk CSV
// import (StartLinkImport, then GetLinkImport until it finished) with each refused row's error.

import { skipToken, useMutation, useQuery } from '@connectrpc/connect-query';
import { LinkLevel, ProductImportStatus, ResolverService, type ResolverLink } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useBrand } from '../context.tsx';
import { ErrorMessage, ImportRows, invalidFields, Pager, useCursorPages } from '../ui.tsx';

interface Target {
  readonly level: LinkLevel;
  readonly gtin: string;
  readonly lot: string;
  readonly serial: string;
}

const levels = [
  [LinkLevel.BRAND, 'the brand'],
  [LinkLevel.GTIN, 'a product (GTIN)'],
  [LinkLevel.LOT, 'a lot'],
  [LinkLevel.SERIAL, 'a unit (serial)'],
] as const;

/** A link's level in words, with what it names. */
function levelText(l: ResolverLink): string {
  if (l.level === LinkLevel.BRAND) return 'brand';
  if (l.level === LinkLevel.LOT) return `lot ${l.lot ?? ''} of ${l.gtin ?? ''}`;
  if (l.level === LinkLevel.SERIAL) return `unit ${l.serial ?? ''}${l.gtin === undefined ? '' : ` of ${l.gtin}`}`;
  return `GTIN ${l.gtin ?? ''}`;
}

const invalidateLinks = (queryClient: ReturnType<typeof useQueryClient>) =>
  queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('ListLinks') });

/** The add-or-change form; `editing` fills it from an existing link. */
function LinkForm({
  editing,
  target,
  onDone,
}: {
  readonly editing: ResolverLink | undefined;
  readonly target: Target | undefined;
  readonly onDone: () => void;
}): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const upsert = useMutation(ResolverService.method.upsertLink);
  const [gtin, setGtin] = useState(editing?.gtin ?? target?.gtin ?? '');
  const [lot, setLot] = useState(editing?.lot ?? (target?.level === LinkLevel.LOT ? target.lot : ''));
  const [serial, setSerial] = useState(editing?.serial ?? (target?.level === LinkLevel.SERIAL ? target.serial : ''));
  const [linkType, setLinkType] = useState(editing?.linkType ?? 'gs1:pip');
  const [href, setHref] = useState(editing?.href ?? '');
  const [title, setTitle] = useState(editing?.title ?? '');
  const [hreflang, setHreflang] = useState((editing?.hreflang ?? []).join(', '));
  const [mediaType, setMediaType] = useState(editing?.mediaType ?? '');
  const [fwqs, setFwqs] = useState(editing?.fwqs ?? true);
  const [isDefault, setIsDefault] = useState(editing?.isDefault ?? false);
  const invalid = invalidFields(upsert.error);
  const list = (text: string) =>
    text
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    upsert.mutate(
      {
        brandId,
        linkType: linkType.trim(),
        href: href.trim(),
        title: title.trim(),
        hreflang: list(hreflang),
        fwqs,
        isDefault,
        ...(gtin.trim() === '' ? {} : { gtin: gtin.trim() }),
        ...(lot.trim() === '' ? {} : { lot: lot.trim() }),
        ...(serial.trim() === '' ? {} : { serial: serial.trim() }),
        ...(mediaType.trim() === '' ? {} : { mediaType: mediaType.trim() }),
        context: editing?.context ?? [],
      },
      {
        onSuccess: () => {
          void invalidateLinks(queryClient);
          onDone();
        },
      },
    );
  };
  return (
    <form className="grid-form" onSubmit={onSubmit} aria-labelledby="link-form-title">
      <h2 id="link-form-title">{editing === undefined ? 'Add a link' : `Change link ${editing.id.slice(0, 8)}`}</h2>
      <p className="hint">Blank GTIN: a brand link. GTIN and lot: a lot's link; GTIN and serial: a unit's.</p>
      <label htmlFor="lf-gtin">GTIN of the link</label>
      <input id="lf-gtin" aria-invalid={invalid.has('gtin')} value={gtin} inputMode="numeric" onChange={(e) => setGtin(e.target.value)} />
      <label htmlFor="lf-lot">Lot of the link</label>
      <input id="lf-lot" aria-invalid={invalid.has('lot')} value={lot} onChange={(e) => setLot(e.target.value)} />
      <label htmlFor="lf-serial">Serial of the link</label>
      <input id="lf-serial" aria-invalid={invalid.has('serial')} value={serial} onChange={(e) => setSerial(e.target.value)} />
      <label htmlFor="lf-type">Link type</label>
      <input id="lf-type" aria-invalid={invalid.has('link_type')} required value={linkType} onChange={(e) => setLinkType(e.target.value)} />
      <label htmlFor="lf-href">Target (https)</label>
      <input id="lf-href" aria-invalid={invalid.has('href')} required type="url" value={href} onChange={(e) => setHref(e.target.value)} />
      <label htmlFor="lf-title">Title</label>
      <input id="lf-title" aria-invalid={invalid.has('title')} required value={title} onChange={(e) => setTitle(e.target.value)} />
      <label htmlFor="lf-lang">Languages (comma-separated)</label>
      <input id="lf-lang" aria-invalid={invalid.has('hreflang')} value={hreflang} onChange={(e) => setHreflang(e.target.value)} />
      <label htmlFor="lf-media">Media type</label>
      <input id="lf-media" aria-invalid={invalid.has('media_type')} value={mediaType} placeholder="text/html" onChange={(e) => setMediaType(e.target.value)} />
      <label className="check">
        <input type="checkbox" checked={fwqs} onChange={(e) => setFwqs(e.target.checked)} /> Forward the query string
      </label>
      <label className="check">
        <input type="checkbox" checked={isDefault} onChange={(e) => setIsDefault(e.target.checked)} /> The level's default link
      </label>
      <div className="actions">
        <button type="submit" disabled={upsert.isPending}>
          Save link
        </button>
        {editing !== undefined && (
          <button type="button" className="secondary" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
      {upsert.data !== undefined && <p role="status">Link {upsert.data.created ? 'added' : 'saved'}.</p>}
      <ErrorMessage error={upsert.error} />
    </form>
  );
}

/** The bulk CSV import, followed until it finished. */
function LinkImport(): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const start = useMutation(ResolverService.method.startLinkImport);
  const [file, setFile] = useState<File | null>(null);
  const [importId, setImportId] = useState<string | undefined>(undefined);
  const result = useQuery(ResolverService.method.getLinkImport, importId === undefined ? skipToken : { brandId, importId }, {
    refetchInterval: (q) => {
      const status = q.state.data?.import?.status;
      if (status === ProductImportStatus.COMPLETED || status === ProductImportStatus.FAILED) {
        void invalidateLinks(queryClient);
        return false;
      }
      return 500;
    },
  });
  const onImport = async (event: FormEvent) => {
    event.preventDefault();
    if (file === null) return;
    const answer = await start.mutateAsync({ brandId, csv: new Uint8Array(await file.arrayBuffer()) }).catch(() => undefined);
    if (answer?.import !== undefined) setImportId(answer.import.id);
  };
  return (
    <section aria-labelledby="link-import-title">
      <h2 id="link-import-title">Import links (CSV)</h2>
      <form className="inline-form" onSubmit={(e) => void onImport(e)} aria-label="Link CSV import">
        <label htmlFor="links-csv">
          CSV file (gtin, lot, serial, link_type, href, title, hreflang, media_type, context, fwqs, is_default; lists split by |)
        </label>
        <p className="hint" id="links-csv-hint">
          link_type: a GS1 link type such as gs1:pip, gs1:instructions or gs1:certificationInfo (a row naming none is refused with the whole list); fwqs,
          is_default: true or false; in any case.
        </p>
        <input
          id="links-csv"
          type="file"
          accept=".csv,text/csv"
          aria-describedby="links-csv-hint"
          required
          onChange={(e) => setFile(e.target.files?.[0] ?? null)}
        />
        <button type="submit" disabled={start.isPending || file === null}>
          Import links
        </button>
      </form>
      <ErrorMessage error={start.error ?? result.error} />
      {result.data?.import !== undefined && <ImportRows imp={result.data.import} testId="link-import-status" />}
    </section>
  );
}

/** The Links screen. */
export function Links(): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const [level, setLevel] = useState<LinkLevel>(LinkLevel.GTIN);
  const [gtin, setGtin] = useState('');
  const [lot, setLot] = useState('');
  const [serial, setSerial] = useState('');
  const [target, setTarget] = useState<Target | undefined>(undefined);
  const [editing, setEditing] = useState<ResolverLink | undefined>(undefined);
  const pages = useCursorPages();
  const links = useQuery(
    ResolverService.method.listLinks,
    target === undefined
      ? skipToken
      : {
          brandId,
          level: target.level,
          limit: 50,
          ...(target.level === LinkLevel.BRAND ? {} : { gtin: target.gtin }),
          ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }),
        },
  );
  const remove = useMutation(ResolverService.method.deleteLink);
  // ListLinks selects a level and GTIN; a lot's or unit's links are those naming it.
  const shown = (links.data?.links ?? []).filter((l) =>
    target?.level === LinkLevel.LOT && target.lot !== ''
      ? l.lot === target.lot
      : target?.level === LinkLevel.SERIAL && target.serial !== ''
        ? l.serial === target.serial
        : true,
  );
  const onShow = (event: FormEvent) => {
    event.preventDefault();
    pages.reset();
    setTarget({ level, gtin: gtin.trim(), lot: lot.trim(), serial: serial.trim() });
  };
  return (
    <>
      <h1>Links</h1>
      <form className="inline-form" onSubmit={onShow} aria-label="Find links">
        <label htmlFor="link-level">Of</label>
        <select id="link-level" value={level} onChange={(e) => setLevel(Number(e.target.value) as LinkLevel)}>
          {levels.map(([l, text]) => (
            <option key={l} value={l}>
              {text}
            </option>
          ))}
        </select>
        {level !== LinkLevel.BRAND && (
          <>
            <label htmlFor="link-gtin">GTIN</label>
            <input id="link-gtin" required value={gtin} onChange={(e) => setGtin(e.target.value)} inputMode="numeric" />
          </>
        )}
        {level === LinkLevel.LOT && (
          <>
            <label htmlFor="link-lot">Lot</label>
            <input id="link-lot" value={lot} onChange={(e) => setLot(e.target.value)} />
          </>
        )}
        {level === LinkLevel.SERIAL && (
          <>
            <label htmlFor="link-serial">Serial</label>
            <input id="link-serial" value={serial} onChange={(e) => setSerial(e.target.value)} />
          </>
        )}
        <button type="submit">Show links</button>
      </form>
      <ErrorMessage error={links.error ?? remove.error} />
      {target !== undefined &&
        links.data !== undefined &&
        (shown.length === 0 ? (
          <p>No links: the resolver answers with its defaults.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <caption>Links</caption>
              <thead>
                <tr>
                  <th>Level</th>
                  <th>Link type</th>
                  <th>Title</th>
                  <th>Target</th>
                  <th>Default</th>
                  <th>Actions</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((l) => (
                  <tr key={l.id}>
                    <td>{levelText(l)}</td>
                    <td>
                      <code>{l.linkType}</code>
                    </td>
                    <td>{l.title}</td>
                    <td className="url">{l.href}</td>
                    <td>{l.isDefault ? 'yes' : ''}</td>
                    <td className="row-actions">
                      <button type="button" className="secondary" onClick={() => setEditing(l)}>
                        Edit<span className="visually-hidden"> {l.title}</span>
                      </button>
                      <button
                        type="button"
                        className="danger"
                        disabled={remove.isPending}
                        onClick={() => remove.mutate({ brandId, linkId: l.id }, { onSuccess: () => void invalidateLinks(queryClient) })}
                      >
                        Delete<span className="visually-hidden"> {l.title}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      {target !== undefined && (pages.page > 1 || links.data?.hasMore === true) && (
        <Pager
          label="Links"
          page={pages.page}
          hasMore={links.data?.hasMore ?? false}
          onPrevious={pages.previous}
          onNext={() => pages.next(links.data?.nextCursor)}
        />
      )}
      <LinkForm
        key={editing?.id ?? `new-${target?.gtin ?? ''}-${target?.lot ?? ''}-${target?.serial ?? ''}`}
        editing={editing}
        target={target}
        onDone={() => setEditing(undefined)}
      />
      <LinkImport />
    </>
  );
}
