// Reading what an operator typed and what the API answered, for the passport and serial screens.

/** The section an API field error belongs to (`content.materials[0].massFraction` is materials'), '' for the whole content. */
export function sectionOf(field: string): string {
  const m = /^content\.(access\.)?([A-Za-z0-9_]+)/.exec(field);
  return m === null ? '' : m[2]!;
}

/** The `field: message` parts of a passport refusal (its fields are camelCase paths under `content`). */
export function passportFieldErrors(text: string): { field: string; message: string }[] {
  return text.split('; ').flatMap((part) => {
    const m = /^(content(?:\.[A-Za-z0-9_]+|\[\d+\])*): (.+)$/s.exec(part);
    return m === null ? [] : [{ field: m[1]!, message: m[2]! }];
  });
}

/** The serials of a pasted list: one per line, or separated by commas, semicolons or spaces. */
export function parseSerials(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** One section's change between two passport versions: added, removed or changed, with its JSON before and after. */
export interface SectionChange {
  readonly section: string;
  readonly change: 'added' | 'removed' | 'changed';
  readonly before?: string;
  readonly after?: string;
}

/** The sections that differ between two versions' content (the `access` map compared as a section of its own), in the newer one's order. */
export function sectionChanges(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): SectionChange[] {
  const names = [...Object.keys(after), ...Object.keys(before).filter((k) => !(k in after))];
  return names.flatMap((section): SectionChange[] => {
    const was = before[section] === undefined ? undefined : JSON.stringify(before[section], null, 2);
    const is = after[section] === undefined ? undefined : JSON.stringify(after[section], null, 2);
    if (was === is) return [];
    if (was === undefined) return [{ section, change: 'added', after: is! }];
    if (is === undefined) return [{ section, change: 'removed', before: was }];
    return [{ section, change: 'changed', before: was, after: is }];
  });
}

/** Who a passport preview reads as: a shopper (the public), a holder of a legitimate interest, or an authority. */
export type PreviewReader = 'public' | 'legitimate_interest' | 'authority';

/**
 * The sections of `content` a reader sees, in the content's order (never `access`): the public
 * reads public sections only, a legitimate interest also those of its class, an authority every
 * restricted section (it reads legitimate-interest ones too), as the resolver's passport page does.
 */
export function visibleSections(
  content: Readonly<Record<string, unknown>>,
  reader: PreviewReader,
): { section: string; value: unknown; restricted: string | undefined }[] {
  const access = (content['access'] ?? {}) as Record<string, string>;
  return Object.keys(content)
    .filter((s) => s !== 'access')
    .flatMap((section) => {
      const cls = access[section] ?? 'public';
      const reads = cls === 'public' || cls === reader || (cls === 'legitimate_interest' && reader === 'authority');
      return reads ? [{ section, value: content[section], restricted: cls === 'public' ? undefined : cls }] : [];
    });
}

const languageTag = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/** True for a passport text: an object of language tag to string (`{ "en": "Jacket", "de": "Jacke" }`). */
function isText(value: unknown): value is Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return entries.length > 0 && entries.every(([k, v]) => languageTag.test(k) && typeof v === 'string');
}

/** The languages the passport's texts are written in, sorted. */
export function passportLanguages(content: unknown): string[] {
  const found = new Set<string>();
  const walk = (v: unknown): void => {
    if (isText(v)) for (const k of Object.keys(v)) found.add(k);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null) Object.values(v).forEach(walk);
  };
  walk(content);
  return [...found].sort();
}

/** A value with each text put in `language` (else English, else its first language), for the preview. */
export function inLanguage(value: unknown, language: string): unknown {
  if (isText(value)) return value[language] ?? value['en'] ?? Object.values(value)[0];
  if (Array.isArray(value)) return value.map((v) => inLanguage(v, language));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inLanguage(v, language)]));
  return value;
}

/** True for a language tag as passports key their texts (en, de, fr-CA). */
export function isLanguageTag(tag: string): boolean {
  return languageTag.test(tag);
}

/** A step into a JSON value: an object's key or a list's index. */
export type JsonStep = string | number;

/** A text of a section: where it is, the API's field name for it (`materials[0].name`), and its texts by language. */
export interface SectionText {
  readonly path: readonly JsonStep[];
  readonly field: string;
  readonly texts: Readonly<Record<string, string>>;
}

/** The API's name of a path (`['materials', 0, 'name']` is `materials[0].name`). */
function fieldName(path: readonly JsonStep[]): string {
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

/** Every text in `value` (a section's content), in document order, with its path from the section (`section` named first). */
export function sectionTexts(section: string, value: unknown): SectionText[] {
  const found: SectionText[] = [];
  const walk = (v: unknown, path: JsonStep[]): void => {
    if (isText(v)) found.push({ path: path.slice(1), field: fieldName(path), texts: v });
    else if (Array.isArray(v))
      v.forEach((x, i) => {
        walk(x, [...path, i]);
      });
    else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  walk(value, [section]);
  return found;
}

/**
 * `value` with the text at `path` set in `language` (a copy; the rest untouched). An empty text
 * removes that language, unless it is the text's only one (kept empty, for the API to refuse by name).
 */
export function withText(value: unknown, path: readonly JsonStep[], language: string, text: string): unknown {
  if (path.length === 0) {
    const texts = { ...(value as Record<string, string>) };
    if (text === '' && Object.keys(texts).some((k) => k !== language)) delete texts[language];
    else texts[language] = text;
    return texts;
  }
  const [step, ...rest] = path;
  if (Array.isArray(value)) return value.map((x, i) => (i === step ? withText(x, rest, language, text) : x));
  const obj = value as Record<string, unknown>;
  return { ...obj, [step as string]: withText(obj[step as string], rest, language, text) };
}
