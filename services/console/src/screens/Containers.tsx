// Containers (#/containers, #/containers/<sscc>): the brand's SSCC settings (GS1 company prefix,
// deepest nesting; owners), minting containers of a level (each SSCC linking to its page), opening
// one by its SSCC; a container's page: its level, state, parent and counts, its contents paged with
// the API's cursor, the aggregation tree below it (each inner container opened on demand), packing
// units by serial and containers by SSCC into it, unpacking some or everything (after a
// confirmation), and a serial move on it (every unit inside, through every level). Each request
// carries an idempotency key kept only while it failed in transit.

import { useMutation, useQuery } from '@connectrpc/connect-query';
import { DecommissionReason, MintService, SerialAction } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type FormEvent, type ReactNode } from 'react';
import { isTransient } from '../api.ts';
import { useBrand } from '../context.tsx';
import { parseSerials } from '../form-text.ts';
import { enumName, ErrorMessage, formatTime, invalidFields, Pager, useCursorPages } from '../ui.tsx';
import { actions, MoveReport, reasons } from './Serials.tsx';

/** An idempotency key per request: a fresh one once the API answered, the same one for a retry after a failure in transit. */
function useRequestKey(): { readonly current: () => string; readonly settled: (error: unknown) => void } {
  const key = useRef<string>(crypto.randomUUID());
  return {
    current: () => key.current,
    settled: (error) => {
      if (error === null || !isTransient(error)) key.current = crypto.randomUUID();
    },
  };
}

const refreshContainers = (queryClient: ReturnType<typeof useQueryClient>) =>
  queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('GetContainer') });

/** A container's address. */
function containerHref(sscc: string): string {
  return `#/containers/${sscc}`;
}

/** The containers screen: settings, minting, opening one by SSCC. */
export function Containers(): ReactNode {
  const brandId = useBrand();
  const settings = useMutation(MintService.method.setContainerSettings);
  const mint = useMutation(MintService.method.mintContainers);
  const key = useRequestKey();
  const [prefix, setPrefix] = useState('');
  const [depth, setDepth] = useState('');
  const [level, setLevel] = useState('case');
  const [count, setCount] = useState('1');
  const [extension, setExtension] = useState('0');
  const [open, setOpen] = useState('');
  const settingsInvalid = invalidFields(settings.error);
  const mintInvalid = invalidFields(mint.error);
  const onSettings = (event: FormEvent) => {
    event.preventDefault();
    settings.mutate({ brandId, ...(prefix.trim() === '' ? {} : { gs1CompanyPrefix: prefix.trim() }), ...(depth === '' ? {} : { maxDepth: Number(depth) }) });
  };
  const onMint = (event: FormEvent) => {
    event.preventDefault();
    mint.mutate(
      { brandId, level: level.trim(), count: Number(count), extensionDigit: Number(extension), idempotencyKey: key.current() },
      { onSettled: (_d, error) => key.settled(error) },
    );
  };
  return (
    <>
      <h1>Containers</h1>
      <p className="hint">
        Cases, pallets and totes carry SSCCs (GS1 AI 00) under the brand&apos;s GS1 company prefix; units and containers are packed into them, and a serial move
        on a container moves every unit inside.
      </p>
      <form
        className="inline-form"
        aria-label="Open a container"
        onSubmit={(e) => {
          e.preventDefault();
          window.location.hash = containerHref(open.trim());
        }}
      >
        <label htmlFor="container-open">SSCC</label>
        <input id="container-open" inputMode="numeric" required value={open} placeholder="18 digits" onChange={(e) => setOpen(e.target.value)} />
        <button type="submit" className="secondary">
          Open container
        </button>
      </form>
      <form className="grid-form" onSubmit={onSettings} aria-labelledby="container-settings-title">
        <h2 id="container-settings-title">SSCC settings (owners)</h2>
        <label htmlFor="container-prefix">GS1 company prefix</label>
        <input
          id="container-prefix"
          inputMode="numeric"
          placeholder="4 to 12 digits"
          aria-invalid={settingsInvalid.has('gs1_company_prefix')}
          value={prefix}
          onChange={(e) => setPrefix(e.target.value)}
        />
        <label htmlFor="container-depth">Deepest nesting</label>
        <input
          id="container-depth"
          type="number"
          min={1}
          max={8}
          placeholder="3"
          aria-invalid={settingsInvalid.has('max_depth')}
          value={depth}
          onChange={(e) => setDepth(e.target.value)}
        />
        <div className="actions">
          <button type="submit" disabled={settings.isPending}>
            Save settings
          </button>
        </div>
        <ErrorMessage error={settings.error} />
        {settings.data !== undefined && settings.error === null && (
          <p role="status" data-testid="container-settings">
            Company prefix {settings.data.gs1CompanyPrefix ?? 'none'}, nesting up to {settings.data.maxDepth} levels.
          </p>
        )}
      </form>
      <form className="grid-form" onSubmit={onMint} aria-labelledby="container-mint-title">
        <h2 id="container-mint-title">Mint containers</h2>
        <label htmlFor="container-level">Level</label>
        <input
          id="container-level"
          aria-invalid={mintInvalid.has('level')}
          value={level}
          placeholder="case, pallet"
          onChange={(e) => setLevel(e.target.value)}
        />
        <label htmlFor="container-count">How many</label>
        <input
          id="container-count"
          type="number"
          min={1}
          max={10000}
          aria-invalid={mintInvalid.has('count')}
          value={count}
          onChange={(e) => setCount(e.target.value)}
        />
        <label htmlFor="container-extension">Extension digit</label>
        <input
          id="container-extension"
          type="number"
          min={0}
          max={9}
          aria-invalid={mintInvalid.has('extension_digit')}
          value={extension}
          onChange={(e) => setExtension(e.target.value)}
        />
        <div className="actions">
          <button type="submit" disabled={mint.isPending}>
            Mint containers
          </button>
        </div>
        <ErrorMessage error={mint.error} />
      </form>
      {mint.data !== undefined && (
        <section aria-labelledby="container-minted-title">
          <h2 id="container-minted-title">
            Minted: {mint.data.ssccs.length} {mint.data.level}
            {mint.data.replayed ? ' (a repeat: nothing new minted)' : ''}
          </h2>
          <ul data-testid="minted-ssccs">
            {mint.data.ssccs.map((s) => (
              <li key={s}>
                <a href={containerHref(s)}>
                  <code>{s}</code>
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}

/** The aggregation tree below a container: its inner containers, each opened on demand (first page of each). */
function Tree({ sscc, depth }: { readonly sscc: string; readonly depth: number }): ReactNode {
  const brandId = useBrand();
  const got = useQuery(MintService.method.getContainer, { brandId, sscc, limit: 100 });
  if (got.error !== null) return <ErrorMessage error={got.error} />;
  if (got.data === undefined) return <p className="hint">Loading…</p>;
  const c = got.data.container;
  return (
    <ul className="container-tree">
      {got.data.containers.map((inner) => (
        <li key={inner.sscc}>
          <details>
            <summary>
              <code>{inner.sscc}</code> {inner.level} ({inner.state})
            </summary>
            {depth < 8 ? <Tree sscc={inner.sscc} depth={depth + 1} /> : null}
          </details>
        </li>
      ))}
      {got.data.units.map((u) => (
        <li key={u.serial}>
          unit <code>{u.serial}</code>
        </li>
      ))}
      {c !== undefined && c.containerCount + c.unitCount === 0 && <li className="hint">empty</li>}
      {got.data.nextCursor !== undefined && (
        <li className="hint">
          <a href={containerHref(sscc)}>more on its page</a>
        </li>
      )}
    </ul>
  );
}

/** Serials and SSCCs typed for pack and unpack. */
function ItemFields({
  id,
  verb,
  serials,
  ssccs,
  onSerials,
  onSsccs,
  invalid,
}: {
  readonly id: string;
  readonly verb: string;
  readonly serials: string;
  readonly ssccs: string;
  readonly onSerials: (v: string) => void;
  readonly onSsccs: (v: string) => void;
  readonly invalid: ReadonlySet<string>;
}): ReactNode {
  return (
    <>
      <label htmlFor={`${id}-serials`}>Units to {verb}, by serial (one per line or comma-separated)</label>
      <textarea
        id={`${id}-serials`}
        rows={3}
        value={serials}
        aria-invalid={[...invalid].some((f) => f.startsWith('serials'))}
        onChange={(e) => onSerials(e.target.value)}
      />
      <label htmlFor={`${id}-ssccs`}>Containers to {verb}, by SSCC</label>
      <textarea
        id={`${id}-ssccs`}
        rows={2}
        value={ssccs}
        aria-invalid={[...invalid].some((f) => f.startsWith('ssccs'))}
        onChange={(e) => onSsccs(e.target.value)}
      />
    </>
  );
}

/** One container's page. */
export function ContainerPage({ sscc }: { readonly sscc: string }): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const pages = useCursorPages();
  const got = useQuery(MintService.method.getContainer, { brandId, sscc, limit: 50, ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }) });
  const pack = useMutation(MintService.method.packContainer);
  const unpack = useMutation(MintService.method.unpackContainer);
  const move = useMutation(MintService.method.moveSerials);
  const packKey = useRequestKey();
  const unpackKey = useRequestKey();
  const moveKey = useRequestKey();
  const [packSerials, setPackSerials] = useState('');
  const [packSsccs, setPackSsccs] = useState('');
  const [outSerials, setOutSerials] = useState('');
  const [outSsccs, setOutSsccs] = useState('');
  const [confirmAll, setConfirmAll] = useState(false);
  const [action, setAction] = useState<SerialAction>(SerialAction.DECOMMISSION);
  const [reason, setReason] = useState<DecommissionReason>(DecommissionReason.RECALLED);
  const after = (error: unknown, k: ReturnType<typeof useRequestKey>) => {
    k.settled(error);
    pages.reset();
    void refreshContainers(queryClient);
  };
  const onPack = (event: FormEvent) => {
    event.preventDefault();
    unpack.reset();
    pack.mutate(
      { brandId, sscc, serials: parseSerials(packSerials), ssccs: parseSerials(packSsccs), idempotencyKey: packKey.current() },
      {
        onSettled: (_d, error) => after(error, packKey),
        onSuccess: () => {
          setPackSerials('');
          setPackSsccs('');
        },
      },
    );
  };
  const doUnpack = (everything: boolean) => {
    pack.reset();
    setConfirmAll(false);
    unpack.mutate(
      {
        brandId,
        sscc,
        serials: everything ? [] : parseSerials(outSerials),
        ssccs: everything ? [] : parseSerials(outSsccs),
        idempotencyKey: unpackKey.current(),
      },
      {
        onSettled: (_d, error) => after(error, unpackKey),
        onSuccess: () => {
          setOutSerials('');
          setOutSsccs('');
        },
      },
    );
  };
  const onMove = (event: FormEvent) => {
    event.preventDefault();
    move.mutate(
      {
        brandId,
        action,
        target: { case: 'container', value: sscc },
        idempotencyKey: moveKey.current(),
        ...(action === SerialAction.DECOMMISSION ? { reason } : {}),
      },
      {
        onSettled: (_d, error) => after(error, moveKey),
      },
    );
  };
  const c = got.data?.container;
  return (
    <>
      <p>
        <a href="#/containers">Containers</a>
      </p>
      <h1>
        Container <code>{sscc}</code>
      </h1>
      <ErrorMessage error={got.error} />
      {c !== undefined && (
        <dl className="details" data-testid="container-details">
          <dt>Level</dt>
          <dd>{c.level}</dd>
          <dt>State</dt>
          <dd data-testid="container-state">
            {c.state}
            {c.reason === DecommissionReason.UNSPECIFIED ? '' : ` (${enumName(DecommissionReason, c.reason)})`}
          </dd>
          <dt>In</dt>
          <dd>
            {c.parentSscc === undefined ? (
              'no container'
            ) : (
              <a href={containerHref(c.parentSscc)}>
                <code>{c.parentSscc}</code>
              </a>
            )}
          </dd>
          <dt>Contents</dt>
          <dd data-testid="container-counts">
            {c.containerCount} containers, {c.unitCount} units
          </dd>
          <dt>Digital Link</dt>
          <dd>
            <code>{c.uri}</code>
          </dd>
          <dt>Minted (UTC)</dt>
          <dd>{formatTime(c.createdAt)}</dd>
        </dl>
      )}
      {got.data !== undefined && (
        <section aria-labelledby="container-contents-title">
          <h2 id="container-contents-title">Contents</h2>
          {got.data.containers.length + got.data.units.length === 0 ? (
            <p>Empty.</p>
          ) : (
            <div className="table-wrap">
              <table data-testid="container-contents">
                <thead>
                  <tr>
                    <th>Item</th>
                    <th>Level</th>
                    <th>Digital Link</th>
                  </tr>
                </thead>
                <tbody>
                  {got.data.containers.map((x) => (
                    <tr key={x.sscc}>
                      <td>
                        <a href={containerHref(x.sscc)}>
                          <code>{x.sscc}</code>
                        </a>
                      </td>
                      <td>
                        {x.level} ({x.state})
                      </td>
                      <td>
                        <code>{x.uri}</code>
                      </td>
                    </tr>
                  ))}
                  {got.data.units.map((u) => (
                    <tr key={u.serial}>
                      <td>
                        <code>{u.serial}</code>
                      </td>
                      <td>unit</td>
                      <td>
                        <code>{u.uri}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager
            label="Contents"
            page={pages.page}
            hasMore={got.data.nextCursor !== undefined}
            onPrevious={pages.previous}
            onNext={() => pages.next(got.data?.nextCursor)}
          />
          <h2 id="container-tree-title">Aggregation tree</h2>
          <div data-testid="container-tree">
            <Tree sscc={sscc} depth={1} />
          </div>
        </section>
      )}
      <form className="grid-form" onSubmit={onPack} aria-labelledby="container-pack-title">
        <h2 id="container-pack-title">Pack into this container</h2>
        <ItemFields
          id="pack"
          verb="pack"
          serials={packSerials}
          ssccs={packSsccs}
          onSerials={setPackSerials}
          onSsccs={setPackSsccs}
          invalid={invalidFields(pack.error)}
        />
        <div className="actions">
          <button type="submit" disabled={pack.isPending}>
            Pack
          </button>
        </div>
        <ErrorMessage error={pack.error} />
        {pack.data !== undefined && pack.error === null && (
          <p role="status" data-testid="packed">
            Packed {pack.data.units} units and {pack.data.containers} containers{pack.data.replayed ? ' (a repeat: nothing changed)' : ''}.
          </p>
        )}
      </form>
      <form
        className="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          doUnpack(false);
        }}
        aria-labelledby="container-unpack-title"
      >
        <h2 id="container-unpack-title">Unpack</h2>
        <ItemFields
          id="unpack"
          verb="unpack"
          serials={outSerials}
          ssccs={outSsccs}
          onSerials={setOutSerials}
          onSsccs={setOutSsccs}
          invalid={invalidFields(unpack.error)}
        />
        <div className="actions">
          <button type="submit" disabled={unpack.isPending || (outSerials.trim() === '' && outSsccs.trim() === '')}>
            Unpack these
          </button>
          {!confirmAll && (
            <button type="button" className="danger" onClick={() => setConfirmAll(true)}>
              Unpack everything
            </button>
          )}
          {confirmAll && (
            <>
              <button type="button" className="danger" disabled={unpack.isPending} onClick={() => doUnpack(true)}>
                Yes, unpack everything
              </button>
              <button type="button" className="secondary" onClick={() => setConfirmAll(false)}>
                Keep
              </button>
            </>
          )}
        </div>
        <ErrorMessage error={unpack.error} />
        {unpack.data !== undefined && unpack.error === null && (
          <p role="status" data-testid="unpacked">
            Unpacked {unpack.data.units} units and {unpack.data.containers} containers{unpack.data.replayed ? ' (a repeat: nothing changed)' : ''}.
          </p>
        )}
      </form>
      <form className="grid-form" onSubmit={onMove} aria-labelledby="container-move-title">
        <h2 id="container-move-title">Move every unit inside</h2>
        <label htmlFor="container-move-action">Action</label>
        <select id="container-move-action" value={action} onChange={(e) => setAction(Number(e.target.value) as SerialAction)}>
          {actions.map(([a, label]) => (
            <option key={a} value={a}>
              {label}
            </option>
          ))}
        </select>
        {action === SerialAction.DECOMMISSION && (
          <>
            <label htmlFor="container-move-reason">Decommissioning reason</label>
            <select id="container-move-reason" value={reason} onChange={(e) => setReason(Number(e.target.value) as DecommissionReason)}>
              {reasons.map((r) => (
                <option key={r} value={r}>
                  {enumName(DecommissionReason, r)}
                </option>
              ))}
            </select>
          </>
        )}
        <div className="actions">
          <button type="submit" disabled={move.isPending}>
            Move the container&apos;s units
          </button>
        </div>
        <ErrorMessage error={move.error} />
      </form>
      {move.data?.move !== undefined && <MoveReport key={move.data.move.moveId} first={move.data.move} />}
    </>
  );
}
