// A product's passport (model level): the draft's sections, each a JSON text area with its access
// class and the API's field errors shown at it; saving the draft (a compare-and-set on its
// revision), publishing it, and the published versions with their number, hash, time, publisher
// and what each changed from the one before.

import type { JsonObject, JsonValue } from '@bufbuild/protobuf';
import { useMutation, useQuery } from '@connectrpc/connect-query';
import { CatalogService, PassportService, type PassportVersion } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { errorText } from '../api.ts';
import { useBrand } from '../context.tsx';
import { passportFieldErrors, sectionChanges, sectionOf } from '../form-text.ts';
import { ErrorMessage, formatTime } from '../ui.tsx';

/** The passport's sections (UNTP DPP), in the order the passport page shows them. */
const sections = [
  'description', 'manufacturer', 'facility', 'productionDate', 'countryOfProduction', 'dimensions', 'materials', 'emissions', 'circularity',
  'conformity', 'dueDiligence', 'extensions',
] as const;

/** Who may read a section (the `access` map of the content; public when it names none). */
const accessClasses = [['public', 'public (anyone who scans)'], ['legitimate_interest', 'legitimate interest (repairers, recyclers)'], ['authority', 'authority (market surveillance, customs)']] as const;

interface Editing {
  /** Each section's JSON text; '' leaves the section out. */
  readonly texts: Readonly<Record<string, string>>;
  /** Each section's access class. */
  readonly access: Readonly<Record<string, string>>;
}

/** The editor's state for a draft's content. */
function editingOf(content: JsonObject | undefined): Editing {
  const access = (content?.['access'] ?? {}) as Record<string, string>;
  const names = [...sections, ...Object.keys(content ?? {}).filter((k) => k !== 'access' && !(sections as readonly string[]).includes(k))];
  return {
    texts: Object.fromEntries(names.map((s) => [s, content?.[s] === undefined ? '' : JSON.stringify(content[s], null, 2)])),
    access: Object.fromEntries(names.map((s) => [s, access[s] ?? 'public'])),
  };
}

/** The content the editor holds, or the sections whose JSON does not parse. */
function contentOf(e: Editing): { content: JsonObject } | { bad: Record<string, string> } {
  const content: Record<string, JsonValue> = {};
  const access: Record<string, string> = {};
  const bad: Record<string, string> = {};
  for (const [name, text] of Object.entries(e.texts)) {
    if (text.trim() === '') continue;
    try {
      content[name] = JSON.parse(text) as JsonValue;
    } catch (error) {
      bad[name] = `is not JSON: ${(error as Error).message}`;
      continue;
    }
    if (e.access[name] !== undefined && e.access[name] !== 'public') access[name] = e.access[name]!;
  }
  if (Object.keys(bad).length > 0) return { bad };
  if (Object.keys(access).length > 0) content['access'] = access;
  return { content };
}

/** What a version changed from the one before it (read with GetPassportVersion once opened), section by section. */
function VersionChanges({ productId, version }: { readonly productId: string; readonly version: PassportVersion }): ReactNode {
  const brandId = useBrand();
  const [open, setOpen] = useState(false);
  const previous = useQuery(PassportService.method.getPassportVersion, { brandId, productId, version: version.version - 1 }, { enabled: open });
  const before = previous.data?.version?.content;
  const changes = before === undefined ? [] : sectionChanges(before, version.content ?? {});
  return (
    <details onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Changes from version {version.version - 1}</summary>
      <ErrorMessage error={previous.error} />
      {before !== undefined && changes.length === 0 && <p>No section changed.</p>}
      {changes.length > 0 && (
        <ul className="version-changes" data-testid={`changes-${version.version}`}>
          {changes.map((c) => (
            <li key={c.section}>
              <code>{c.section}</code> {c.change}
              {c.before !== undefined && <><span className="hint">before</span><pre className="diff-before">{c.before}</pre></>}
              {c.after !== undefined && <><span className="hint">after</span><pre className="diff-after">{c.after}</pre></>}
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}

/** The published versions, newest first, paged by the `before` cursor. */
function Versions({ productId }: { readonly productId: string }): ReactNode {
  const brandId = useBrand();
  const [before, setBefore] = useState<(number | undefined)[]>([undefined]);
  const cursor = before.at(-1);
  const versions = useQuery(PassportService.method.listPassportVersions, { brandId, productId, limit: 20, ...(cursor === undefined ? {} : { before: cursor }) });
  const list = versions.data?.versions ?? [];
  return (
    <section aria-labelledby="passport-versions-title">
      <h2 id="passport-versions-title">Published versions</h2>
      <ErrorMessage error={versions.error} />
      {versions.data !== undefined && list.length === 0 ? <p>No version published yet.</p> : (
        <div className="table-wrap">
          <table data-testid="passport-versions">
            <thead><tr><th>Version</th><th>SHA-256</th><th>Published (UTC)</th><th>Publisher</th><th>Changes</th></tr></thead>
            <tbody>
              {list.map((v) => (
                <tr key={v.id}><td>{v.version}</td><td><code className="hash">{v.sha256}</code></td><td>{formatTime(v.publishedAt)}</td><td><code>{v.publishedBy}</code></td><td>{v.version > 1 ? <VersionChanges productId={productId} version={v} /> : 'first version'}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(before.length > 1 || versions.data?.nextBefore !== undefined) && (
        <nav className="pager" aria-label="Passport versions pages">
          <button type="button" disabled={before.length <= 1} onClick={() => setBefore((b) => b.slice(0, -1))}>Newer</button>
          <button type="button" disabled={versions.data?.nextBefore === undefined} onClick={() => setBefore((b) => [...b, versions.data?.nextBefore])}>Older</button>
        </nav>
      )}
    </section>
  );
}

/** The passport screen of one product. */
export function Passport({ productId }: { readonly productId: string }): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const product = useQuery(CatalogService.method.getProduct, { brandId, productId });
  const passport = useQuery(PassportService.method.getPassport, { brandId, productId });
  const save = useMutation(PassportService.method.updatePassportDraft);
  const publish = useMutation(PassportService.method.publishPassport);
  const [editing, setEditing] = useState<Editing | undefined>(undefined);
  const [bad, setBad] = useState<Record<string, string>>({});
  const draft = passport.data?.draft;
  // The editor starts from the draft (or the latest version) once it is read.
  useEffect(() => {
    if (passport.data !== undefined && editing === undefined) setEditing(editingOf(passport.data.draft?.content ?? passport.data.latest?.content));
  }, [passport.data, editing]);
  const refresh = () => void queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('mint.v1.PassportService') });
  const errors = save.error === null ? [] : passportFieldErrors(errorText(save.error));
  const at = (name: string) => [...(bad[name] === undefined ? [] : [{ field: `content.${name}`, message: bad[name]! }]), ...errors.filter((e) => sectionOf(e.field) === name)];
  const general = save.error !== null && (errors.length === 0 || errors.some((e) => sectionOf(e.field) === '')) ? save.error : null;
  const onSave = (event: FormEvent) => {
    event.preventDefault();
    if (editing === undefined) return;
    publish.reset();
    const read = contentOf(editing);
    if ('bad' in read) {
      setBad(read.bad);
      return;
    }
    setBad({});
    save.mutate({ brandId, productId, content: read.content, expectedRevision: draft?.revision ?? 0 }, { onSuccess: refresh });
  };
  const name = product.data?.product?.name;
  return (
    <>
      <p><a href="#/products">All products</a></p>
      <h1>Passport{name === undefined ? '' : ` of ${name}`}</h1>
      <ErrorMessage error={product.error ?? passport.error} />
      {passport.data !== undefined && (
        <p role="status" data-testid="passport-state">
          {draft === undefined ? 'No draft yet.' : `Draft revision ${draft.revision}, saved ${formatTime(draft.updatedAt)} UTC.`}{' '}
          {passport.data.latest === undefined ? 'Not published.' : `Latest version ${passport.data.latest.version}, published ${formatTime(passport.data.latest.publishedAt)} UTC.`}
        </p>
      )}
      {editing !== undefined && (
        <form className="passport-form" onSubmit={onSave} aria-label="Passport draft">
          <p className="hint">Each section is JSON as the passport guide describes it (texts are objects of language tag to text); leave a section empty to leave it out.</p>
          {Object.keys(editing.texts).map((s) => {
            const problems = at(s);
            return (
              <fieldset key={s} className="passport-section" data-section={s}>
                <legend>{s}</legend>
                <label htmlFor={`section-${s}`}>Content of {s} (JSON)</label>
                <textarea id={`section-${s}`} rows={editing.texts[s]!.split('\n').length > 3 ? 8 : 3} spellCheck={false} aria-invalid={problems.length > 0}
                  aria-describedby={problems.length > 0 ? `section-${s}-errors` : undefined} value={editing.texts[s]}
                  onChange={(e) => setEditing((ed) => ed === undefined ? ed : { ...ed, texts: { ...ed.texts, [s]: e.target.value } })} />
                <label htmlFor={`access-${s}`}>Who reads {s}</label>
                <select id={`access-${s}`} value={editing.access[s]} onChange={(e) => setEditing((ed) => ed === undefined ? ed : { ...ed, access: { ...ed.access, [s]: e.target.value } })}>
                  {accessClasses.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
                </select>
                {problems.length > 0 && (
                  <ul className="error field-errors" id={`section-${s}-errors`} role="alert">
                    {problems.map((p) => <li key={`${p.field} ${p.message}`}><code>{p.field}</code>: {p.message}</li>)}
                  </ul>
                )}
              </fieldset>
            );
          })}
          <div className="passport-actions">
            <button type="submit" disabled={save.isPending}>Save draft</button>
            <button type="button" disabled={publish.isPending || draft === undefined}
              onClick={() => { save.reset(); publish.mutate({ brandId, productId, ...(draft === undefined ? {} : { expectedRevision: draft.revision }) }, { onSuccess: refresh }); }}>
              Publish the saved draft
            </button>
          </div>
          {save.data?.draft !== undefined && save.error === null && <p role="status">Draft saved (revision {save.data.draft.revision}).</p>}
          {publish.data?.version !== undefined && (
            <p role="status" data-testid="published">
              {publish.data.published ? `Published version ${publish.data.version.version}.` : `Nothing changed since version ${publish.data.version.version}: nothing published.`}
            </p>
          )}
          <ErrorMessage error={general ?? publish.error} />
        </form>
      )}
      <Versions productId={productId} />
    </>
  );
}
