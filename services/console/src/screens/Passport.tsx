// A product's passport at the model, lot or unit level (#/products/<id>/passport, .../lot/<lot>,
// .../unit/<serial>): the draft's sections, each a JSON text area with its access class and the
// API's field errors shown at it; the texts of one language at a time (every text of every section,
// beside the same text in another language), with languages added; a preview of the draft as
// edited, as a shopper, a holder of a legitimate interest or an authority sees it, in the language
// chosen; saving the draft (a
// compare-and-set on its revision), publishing it, and the published versions with their number,
// hash, time, publisher, what each changed from the one before, and any two of them compared.

import type { JsonObject, JsonValue } from '@bufbuild/protobuf';
import { useMutation, useQuery } from '@connectrpc/connect-query';
import { CatalogService, PassportService, type PassportVersion } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { errorText } from '../api.ts';
import { useBrand } from '../context.tsx';
import {
  inLanguage,
  isLanguageTag,
  passportFieldErrors,
  passportLanguages,
  sectionChanges,
  sectionOf,
  sectionTexts,
  visibleSections,
  withText,
  type PreviewReader,
  type SectionChange,
  type SectionText,
} from '../form-text.ts';
import { ErrorMessage, formatTime } from '../ui.tsx';

/** The passport's sections (UNTP DPP), in the order the passport page shows them. */
const sections = [
  'description',
  'manufacturer',
  'facility',
  'productionDate',
  'countryOfProduction',
  'dimensions',
  'materials',
  'emissions',
  'circularity',
  'conformity',
  'dueDiligence',
  'extensions',
] as const;

/** Who may read a section (the `access` map of the content; public when it names none). */
const accessClasses = [
  ['public', 'public (anyone who scans)'],
  ['legitimate_interest', 'legitimate interest (repairers, recyclers)'],
  ['authority', 'authority (market surveillance, customs)'],
] as const;

/** The level of a passport: the model (no lot, no serial), a lot, or a unit. */
interface Level {
  readonly lot?: string;
  readonly serial?: string;
}

/** The level in words. */
function levelName(level: Level): string {
  return level.lot !== undefined ? `lot ${level.lot}` : level.serial !== undefined ? `unit ${level.serial}` : 'model';
}

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
function VersionChanges({ productId, level, version }: { readonly productId: string; readonly level: Level; readonly version: PassportVersion }): ReactNode {
  const brandId = useBrand();
  const [open, setOpen] = useState(false);
  const previous = useQuery(PassportService.method.getPassportVersion, { brandId, productId, ...level, version: version.version - 1 }, { enabled: open });
  const before = previous.data?.version?.content;
  const changes = before === undefined ? [] : sectionChanges(before, version.content ?? {});
  return (
    <details onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Changes from version {version.version - 1}</summary>
      <ErrorMessage error={previous.error} />
      {before !== undefined && changes.length === 0 && <p>No section changed.</p>}
      {changes.length > 0 && <ChangeList changes={changes} testId={`changes-${version.version}`} />}
    </details>
  );
}

/** Sections changed between two versions, each with its JSON before and after. */
function ChangeList({ changes, testId }: { readonly changes: readonly SectionChange[]; readonly testId: string }): ReactNode {
  return (
    <ul className="version-changes" data-testid={testId}>
      {changes.map((c) => (
        <li key={c.section}>
          <code>{c.section}</code> {c.change}
          {c.before !== undefined && (
            <>
              <span className="hint">before</span>
              <pre className="diff-before">{c.before}</pre>
            </>
          )}
          {c.after !== undefined && (
            <>
              <span className="hint">after</span>
              <pre className="diff-after">{c.after}</pre>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

/** Any two published versions compared section by section (each read with GetPassportVersion). */
function CompareVersions({ productId, level, latest }: { readonly productId: string; readonly level: Level; readonly latest: number }): ReactNode {
  const brandId = useBrand();
  const [from, setFrom] = useState(Math.max(1, latest - 1));
  const [to, setTo] = useState(latest);
  const [asked, setAsked] = useState<[number, number] | undefined>(undefined);
  const a = useQuery(PassportService.method.getPassportVersion, { brandId, productId, ...level, version: asked?.[0] ?? 1 }, { enabled: asked !== undefined });
  const b = useQuery(PassportService.method.getPassportVersion, { brandId, productId, ...level, version: asked?.[1] ?? 1 }, { enabled: asked !== undefined });
  const before = a.data?.version?.content;
  const after = b.data?.version?.content;
  const changes = before === undefined || after === undefined ? undefined : sectionChanges(before, after);
  const numbers = Array.from({ length: latest }, (_, i) => latest - i);
  return (
    <form
      className="inline-form"
      aria-label="Compare two versions"
      onSubmit={(e) => {
        e.preventDefault();
        setAsked([from, to]);
      }}
    >
      <label htmlFor="compare-from">Compare version</label>
      <select id="compare-from" value={from} onChange={(e) => setFrom(Number(e.target.value))}>
        {numbers.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      <label htmlFor="compare-to">with version</label>
      <select id="compare-to" value={to} onChange={(e) => setTo(Number(e.target.value))}>
        {numbers.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      <button type="submit" className="secondary">
        Compare
      </button>
      <ErrorMessage error={a.error ?? b.error} />
      {asked !== undefined && changes !== undefined && (
        <div className="compare-result" role="status">
          <p>
            From version {asked[0]} to version {asked[1]}:{' '}
            {changes.length === 0 ? 'no section changed.' : `${changes.length} section${changes.length === 1 ? '' : 's'} changed.`}
          </p>
          {changes.length > 0 && <ChangeList changes={changes} testId="compare-changes" />}
        </div>
      )}
    </form>
  );
}

const readers: readonly (readonly [PreviewReader, string])[] = [
  ['public', 'a shopper (public)'],
  ['legitimate_interest', 'a legitimate interest'],
  ['authority', 'an authority'],
];

/** A value of a passport section as the preview shows it: texts, lists and fields. */
function PreviewValue({ value }: { readonly value: unknown }): ReactNode {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value))
    return (
      <ul>
        {value.map((v) => (
          <li key={JSON.stringify(v)}>
            <PreviewValue value={v} />
          </li>
        ))}
      </ul>
    );
  if (typeof value === 'object') {
    return (
      <dl className="details">
        {Object.entries(value).map(([k, v]) => (
          <div key={k} className="contents">
            <dt>{k}</dt>
            <dd>
              <PreviewValue value={v} />
            </dd>
          </div>
        ))}
      </dl>
    );
  }
  return <>{String(value)}</>;
}

/** The draft as edited, as one kind of reader sees it in one language (the sections it may not read are left out, as on the passport page). */
function Preview({
  editing,
  language,
  languages,
  onLanguage,
}: {
  readonly editing: Editing;
  readonly language: string;
  readonly languages: readonly string[];
  readonly onLanguage: (language: string) => void;
}): ReactNode {
  const [reader, setReader] = useState<PreviewReader>('public');
  const read = contentOf(editing);
  const content = 'content' in read ? read.content : undefined;
  const shown = content === undefined ? [] : visibleSections(content, reader);
  const hidden = content === undefined ? 0 : Object.keys(content).filter((k) => k !== 'access').length - shown.length;
  return (
    <section aria-labelledby="passport-preview-title" className="passport-preview">
      <h2 id="passport-preview-title">Preview</h2>
      <div className="inline-form">
        <label htmlFor="preview-reader">Preview as</label>
        <select id="preview-reader" value={reader} onChange={(e) => setReader(e.target.value as PreviewReader)}>
          {readers.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        <label htmlFor="preview-language">Language</label>
        <select id="preview-language" value={languages.includes(language) ? language : (languages[0] ?? 'en')} onChange={(e) => onLanguage(e.target.value)}>
          {(languages.length === 0 ? ['en'] : languages).map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
      </div>
      {content === undefined && <p className="hint">A section is not JSON yet: the preview shows once every section reads.</p>}
      {content !== undefined && (
        <article data-testid="passport-preview" aria-label={`The passport as ${readers.find(([r]) => r === reader)![1]} reads it`}>
          {shown.length === 0 && <p>No section to show.</p>}
          {shown.map((s) => (
            <section key={s.section} data-section={s.section}>
              <h3>
                {s.section}
                {s.restricted !== undefined && <span className="badge"> ({s.restricted.replace('_', ' ')} only)</span>}
              </h3>
              <PreviewValue value={inLanguage(s.value, languages.includes(language) ? language : (languages[0] ?? 'en'))} />
            </section>
          ))}
          <p className="hint" data-testid="preview-hidden">
            {hidden === 0 ? 'Every section is shown.' : `${hidden} restricted section${hidden === 1 ? ' is' : 's are'} not shown to this reader.`}
          </p>
        </article>
      )}
    </section>
  );
}

/** The section's texts (a section that is not JSON has none to show; an empty description is offered as a new text). */
function textsOf(editing: Editing, section: string): SectionText[] | undefined {
  const text = editing.texts[section] ?? '';
  if (text.trim() === '') return section === 'description' ? [{ path: [], field: 'description', texts: {} }] : [];
  try {
    return sectionTexts(section, JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * The texts of the passport in one language: every text of every section (`description`,
 * `materials[0].name`, a link's name), with the same text in another language beside it for
 * reference; choosing a language (the preview follows), adding one. Edits go into the sections'
 * JSON; the API's error on a text (`content.description.de`) is shown at its field.
 */
function LanguageTexts({
  editing,
  onEdit,
  language,
  languages,
  onLanguage,
  onAdd,
  errors,
}: {
  readonly editing: Editing;
  readonly onEdit: (section: string, json: string) => void;
  readonly language: string;
  readonly languages: readonly string[];
  readonly onLanguage: (language: string) => void;
  readonly onAdd: (language: string) => void;
  readonly errors: readonly { field: string; message: string }[];
}): ReactNode {
  const [adding, setAdding] = useState('');
  const [addError, setAddError] = useState<string | undefined>(undefined);
  const add = () => {
    const tag = adding.trim();
    if (!isLanguageTag(tag)) {
      setAddError('must be a language tag (en, de, fr-CA)');
      return;
    }
    setAddError(undefined);
    setAdding('');
    onAdd(tag);
  };
  const rows = Object.keys(editing.texts).flatMap((section) => (textsOf(editing, section) ?? []).map((t) => ({ section, ...t })));
  const unreadable = Object.keys(editing.texts).filter((section) => textsOf(editing, section) === undefined);
  return (
    <fieldset className="passport-section" data-testid="language-texts">
      <legend>Texts in one language</legend>
      <div className="language-bar">
        <label htmlFor="text-language">Language of the texts</label>
        <select id="text-language" value={language} onChange={(e) => onLanguage(e.target.value)}>
          {languages.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
        <label htmlFor="language-new">Add a language</label>
        <input
          id="language-new"
          size={8}
          placeholder="fr-CA"
          value={adding}
          aria-invalid={addError !== undefined}
          aria-describedby={addError === undefined ? undefined : 'language-new-error'}
          onChange={(e) => setAdding(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              add();
            }
          }}
        />
        <button type="button" className="secondary" onClick={add}>
          Add language
        </button>
      </div>
      {addError !== undefined && (
        <p className="error" role="alert" id="language-new-error" data-field="language">
          <code>language</code>: {addError}
        </p>
      )}
      {unreadable.length > 0 && <p className="hint">Not JSON yet, so its texts are not listed: {unreadable.join(', ')}.</p>}
      {rows.length === 0 ? (
        <p className="hint">No texts yet: write a section with texts (objects of language tag to text) first.</p>
      ) : (
        <div className="language-texts">
          {rows.map((r) => {
            const id = `text-${r.field.replace(/[^A-Za-z0-9]/g, '-')}`;
            const problems = errors.filter((e) => e.field === `content.${r.field}.${language}` || e.field === `content.${r.field}`);
            const reference = Object.entries(r.texts).find(([l]) => l !== language);
            return (
              <div key={r.field} className="contents">
                <label htmlFor={id}>
                  <code>{r.field}</code> ({language})
                </label>
                <input
                  id={id}
                  value={r.texts[language] ?? ''}
                  aria-invalid={problems.length > 0}
                  aria-describedby={problems.length > 0 ? `${id}-errors` : reference === undefined ? undefined : `${id}-ref`}
                  onChange={(e) => {
                    let before: unknown;
                    try {
                      before = (editing.texts[r.section] ?? '').trim() === '' ? undefined : JSON.parse(editing.texts[r.section]!);
                    } catch {
                      return;
                    }
                    onEdit(r.section, JSON.stringify(withText(before, r.path, language, e.target.value), null, 2));
                  }}
                />
                {reference !== undefined && (
                  <p className="hint reference" id={`${id}-ref`}>
                    {reference[0]}: {reference[1]}
                  </p>
                )}
                {problems.length > 0 && (
                  <p className="error reference" role="alert" id={`${id}-errors`}>
                    {problems.map((p) => `${p.field}: ${p.message}`).join('; ')}
                  </p>
                )}
              </div>
            );
          })}
        </div>
      )}
    </fieldset>
  );
}

/** The level picker: the model, a lot by its code, or a unit by its serial; opens that level's deep link. */
function LevelPicker({ productId, level }: { readonly productId: string; readonly level: Level }): ReactNode {
  const [kind, setKind] = useState<'model' | 'lot' | 'unit'>(level.lot !== undefined ? 'lot' : level.serial !== undefined ? 'unit' : 'model');
  const [value, setValue] = useState(level.lot ?? level.serial ?? '');
  const onOpen = (event: FormEvent) => {
    event.preventDefault();
    const base = `#/products/${encodeURIComponent(productId)}/passport`;
    window.location.hash = kind === 'model' ? base : `${base}/${kind}/${encodeURIComponent(value.trim())}`;
  };
  return (
    <form className="inline-form" aria-label="Passport level" onSubmit={onOpen}>
      <fieldset className="level-choice">
        <legend>Level</legend>
        {(['model', 'lot', 'unit'] as const).map((k) => (
          <label key={k}>
            <input type="radio" name="passport-level" value={k} checked={kind === k} onChange={() => setKind(k)} />{' '}
            {k === 'model' ? 'Model (every item)' : k === 'lot' ? 'A lot' : 'A unit'}
          </label>
        ))}
      </fieldset>
      {kind !== 'model' && (
        <>
          <label htmlFor="level-value">{kind === 'lot' ? 'Lot code' : 'Serial'}</label>
          <input id="level-value" required value={value} onChange={(e) => setValue(e.target.value)} />
        </>
      )}
      <button type="submit" className="secondary">
        Open level
      </button>
    </form>
  );
}

/** The published versions, newest first, paged by the `before` cursor. */
function Versions({ productId, level, latest }: { readonly productId: string; readonly level: Level; readonly latest: number | undefined }): ReactNode {
  const brandId = useBrand();
  const [before, setBefore] = useState<(number | undefined)[]>([undefined]);
  const cursor = before.at(-1);
  const versions = useQuery(PassportService.method.listPassportVersions, {
    brandId,
    productId,
    ...level,
    limit: 20,
    ...(cursor === undefined ? {} : { before: cursor }),
  });
  const list = versions.data?.versions ?? [];
  return (
    <section aria-labelledby="passport-versions-title">
      <h2 id="passport-versions-title">Published versions</h2>
      <ErrorMessage error={versions.error} />
      {versions.data !== undefined && list.length === 0 ? (
        <p>No version published yet.</p>
      ) : (
        <div className="table-wrap">
          <table data-testid="passport-versions">
            <thead>
              <tr>
                <th>Version</th>
                <th>SHA-256</th>
                <th>Published (UTC)</th>
                <th>Publisher</th>
                <th>Changes</th>
              </tr>
            </thead>
            <tbody>
              {list.map((v) => (
                <tr key={v.id}>
                  <td>{v.version}</td>
                  <td>
                    <code className="hash">{v.sha256}</code>
                  </td>
                  <td>{formatTime(v.publishedAt)}</td>
                  <td>
                    <code>{v.publishedBy}</code>
                  </td>
                  <td>{v.version > 1 ? <VersionChanges productId={productId} level={level} version={v} /> : 'first version'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(before.length > 1 || versions.data?.nextBefore !== undefined) && (
        <nav className="pager" aria-label="Passport versions pages">
          <button type="button" disabled={before.length <= 1} onClick={() => setBefore((b) => b.slice(0, -1))}>
            Newer
          </button>
          <button type="button" disabled={versions.data?.nextBefore === undefined} onClick={() => setBefore((b) => [...b, versions.data?.nextBefore])}>
            Older
          </button>
        </nav>
      )}
      {latest !== undefined && latest > 1 && <CompareVersions key={latest} productId={productId} level={level} latest={latest} />}
    </section>
  );
}

/** The passport screen of one product. */
export function Passport({
  productId,
  lot,
  serial,
}: {
  readonly productId: string;
  readonly lot?: string | undefined;
  readonly serial?: string | undefined;
}): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const level: Level = lot !== undefined ? { lot } : serial !== undefined ? { serial } : {};
  const product = useQuery(CatalogService.method.getProduct, { brandId, productId });
  const passport = useQuery(PassportService.method.getPassport, { brandId, productId, ...level });
  const save = useMutation(PassportService.method.updatePassportDraft);
  const publish = useMutation(PassportService.method.publishPassport);
  const [editing, setEditing] = useState<Editing | undefined>(undefined);
  const [bad, setBad] = useState<Record<string, string>>({});
  const [language, setLanguage] = useState<string | undefined>(undefined);
  const [added, setAdded] = useState<readonly string[]>([]);
  const draft = passport.data?.draft;
  // The editor starts from the draft (or the latest version) once it is read.
  useEffect(() => {
    if (passport.data !== undefined && editing === undefined) setEditing(editingOf(passport.data.draft?.content ?? passport.data.latest?.content));
  }, [passport.data, editing]);
  const refresh = () => void queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('mint.v1.PassportService') });
  const errors = save.error === null ? [] : passportFieldErrors(errorText(save.error));
  const at = (name: string) => [
    ...(bad[name] === undefined ? [] : [{ field: `content.${name}`, message: bad[name]! }]),
    ...errors.filter((e) => sectionOf(e.field) === name),
  ];
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
    save.mutate({ brandId, productId, ...level, content: read.content, expectedRevision: draft?.revision ?? 0 }, { onSuccess: refresh });
  };
  const name = product.data?.product?.name;
  // The languages the texts are written in (sections that parse), with those added here; the one chosen is shared by the texts and the preview.
  const written =
    editing === undefined
      ? []
      : passportLanguages(
          Object.fromEntries(
            Object.entries(editing.texts).flatMap(([k, t]) => {
              try {
                return t.trim() === '' ? [] : [[k, JSON.parse(t)]];
              } catch {
                return [];
              }
            }),
          ),
        );
  const languages = [...new Set([...written, ...added])].sort();
  if (languages.length === 0) languages.push('en');
  const chosen = language !== undefined && languages.includes(language) ? language : languages.includes('en') ? 'en' : languages[0]!;
  const onEdit = (section: string, json: string) => setEditing((ed) => (ed === undefined ? ed : { ...ed, texts: { ...ed.texts, [section]: json } }));
  return (
    <>
      <p>
        <a href="#/products">All products</a>
      </p>
      <h1>
        Passport{name === undefined ? '' : ` of ${name}`}
        {level.lot === undefined && level.serial === undefined ? '' : `, ${levelName(level)}`}
      </h1>
      <LevelPicker key={levelName(level)} productId={productId} level={level} />
      <ErrorMessage error={product.error ?? passport.error} />
      {passport.data !== undefined && (
        <p role="status" data-testid="passport-state">
          {draft === undefined ? 'No draft yet.' : `Draft revision ${draft.revision}, saved ${formatTime(draft.updatedAt)} UTC.`}{' '}
          {passport.data.latest === undefined
            ? 'Not published.'
            : `Latest version ${passport.data.latest.version}, published ${formatTime(passport.data.latest.publishedAt)} UTC.`}
        </p>
      )}
      {editing !== undefined && (
        <form className="passport-form" onSubmit={onSave} aria-label="Passport draft">
          <p className="hint">
            Each section is JSON as the passport guide describes it (texts are objects of language tag to text); leave a section empty to leave it out.
          </p>
          <LanguageTexts
            editing={editing}
            onEdit={onEdit}
            language={chosen}
            languages={languages}
            onLanguage={setLanguage}
            onAdd={(tag) => {
              setAdded((a) => (a.includes(tag) ? a : [...a, tag]));
              setLanguage(tag);
            }}
            errors={errors}
          />
          {Object.keys(editing.texts).map((s) => {
            const problems = at(s);
            return (
              <fieldset key={s} className="passport-section" data-section={s}>
                <legend>{s}</legend>
                <label htmlFor={`section-${s}`}>Content of {s} (JSON)</label>
                <textarea
                  id={`section-${s}`}
                  rows={editing.texts[s]!.split('\n').length > 3 ? 8 : 3}
                  spellCheck={false}
                  aria-invalid={problems.length > 0}
                  aria-describedby={problems.length > 0 ? `section-${s}-errors` : undefined}
                  value={editing.texts[s]}
                  onChange={(e) => setEditing((ed) => (ed === undefined ? ed : { ...ed, texts: { ...ed.texts, [s]: e.target.value } }))}
                />
                <label htmlFor={`access-${s}`}>Who reads {s}</label>
                <select
                  id={`access-${s}`}
                  value={editing.access[s]}
                  onChange={(e) => setEditing((ed) => (ed === undefined ? ed : { ...ed, access: { ...ed.access, [s]: e.target.value } }))}
                >
                  {accessClasses.map(([value, label]) => (
                    <option key={value} value={value}>
                      {label}
                    </option>
                  ))}
                </select>
                {problems.length > 0 && (
                  <ul className="error field-errors" id={`section-${s}-errors`} role="alert">
                    {problems.map((p) => (
                      <li key={`${p.field} ${p.message}`}>
                        <code>{p.field}</code>: {p.message}
                      </li>
                    ))}
                  </ul>
                )}
              </fieldset>
            );
          })}
          <div className="passport-actions">
            <button type="submit" disabled={save.isPending}>
              Save draft
            </button>
            <button
              type="button"
              disabled={publish.isPending || draft === undefined}
              onClick={() => {
                save.reset();
                publish.mutate({ brandId, productId, ...level, ...(draft === undefined ? {} : { expectedRevision: draft.revision }) }, { onSuccess: refresh });
              }}
            >
              Publish the saved draft
            </button>
          </div>
          {save.data?.draft !== undefined && save.error === null && <p role="status">Draft saved (revision {save.data.draft.revision}).</p>}
          {publish.data?.version !== undefined && (
            <p role="status" data-testid="published">
              {publish.data.published
                ? `Published version ${publish.data.version.version}.`
                : `Nothing changed since version ${publish.data.version.version}: nothing published.`}
            </p>
          )}
          <ErrorMessage error={general ?? publish.error} />
        </form>
      )}
      {editing !== undefined && <Preview editing={editing} language={chosen} languages={languages} onLanguage={setLanguage} />}
      <Versions productId={productId} level={level} latest={passport.data?.latest?.version} />
    </>
  );
}
