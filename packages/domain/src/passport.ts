/**
 * A product's digital product passport: its content (aligned with the UN Transparency Protocol's
 * Digital Product Passport, UNTP DPP), the three levels it is written at (the model, a lot of it,
 * one unit), how an item's passport inherits (unit, then lot, then model, per section), the access
 * class of each section, and the digest of a published version (SHA-256 of its RFC 8785 canonical
 * JSON). Pure: no I/O.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { FieldViolation } from './errors.ts';

/** Who may read a section of a passport (ESPR Art. 10(1)(g), Art. 11). */
export type PassportAccessClass =
  /** Anyone who scans the item. */
  | 'public'
  /** Repairers, recyclers and refurbishers holding a credential of the brand for this class (authorities read it too). */
  | 'legitimate_interest'
  /** Market surveillance and customs holding a credential of the brand for this class. */
  | 'authority';
/** All access classes, widest first. */
export const passportAccessClasses: readonly PassportAccessClass[] = ['public', 'legitimate_interest', 'authority'];
/** The classes a credential may be issued for (public needs none). */
export const restrictedPassportClasses: readonly Exclude<PassportAccessClass, 'public'>[] = ['legitimate_interest', 'authority'];

/** The level a passport is written at (ESPR Art. 10(1)(f)): the model (product), a lot or batch of it, one unit. */
export type PassportLevel = 'model' | 'lot' | 'unit';

/** Text in several languages: a language tag (en, de, fr-CA) to the text. */
export type LocalText = Readonly<Record<string, string>>;

/** A measured value with its UN/CEFACT unit code (KGM, MMT, LTR, ...). */
export interface Measure {
  readonly value: number;
  readonly unit: string;
}

/** A link to a document (instructions, a certificate). */
export interface PassportLink {
  readonly url: string;
  /** What the link is, in several languages. */
  readonly name?: LocalText;
}

/** A party (the manufacturer) or a facility. */
export interface Party {
  readonly name: string;
  /** A registered identifier as a URI (a business register's entry, a GLN as a Digital Link). */
  readonly id?: string;
  /** ISO 3166-1 alpha-2 country, for a facility. */
  readonly country?: string;
}

/** One material of the product. */
export interface Material {
  readonly name: LocalText;
  /** Share of the product's mass, 0..1. */
  readonly massFraction?: number;
  /** Share of this material that is recycled, 0..1. */
  readonly recycledMassFraction?: number;
  /** Whether the material is hazardous. */
  readonly hazardous?: boolean;
  /** ISO 3166-1 alpha-2 country of origin. */
  readonly originCountry?: string;
}

/** The product's emissions. */
export interface Emissions {
  /** Carbon footprint per declared unit, kg CO2e. */
  readonly carbonFootprint: number;
  /** The unit the footprint is declared per (UN/CEFACT code, EA for one item). */
  readonly declaredUnit: string;
  /** Scope, as UNTP names it: None, CradleToGate or CradleToGrave; None when not given. */
  readonly operationalScope?: 'None' | 'CradleToGate' | 'CradleToGrave';
  /** Share of the footprint computed from primary data, 0..1. */
  readonly primarySourcedRatio?: number;
  /** The calculation method or standard (a name, or a URL to it). */
  readonly method: string;
}

/** The product's circularity. */
export interface Circularity {
  /** Share of the product that can be recycled, 0..1. */
  readonly recyclableContent?: number;
  /** Share of the product made of recycled material, 0..1. */
  readonly recycledContent?: number;
  readonly repairInstructions?: PassportLink;
  readonly disassemblyInstructions?: PassportLink;
  readonly recyclingInstructions?: PassportLink;
  /** Where spare parts are offered. */
  readonly spareParts?: PassportLink;
}

/** A conformity claim, with its certificate. */
export interface ConformityClaim {
  readonly description: LocalText;
  /** The standard claimed (a name or URL). */
  readonly standard?: string;
  /** The regulation claimed (a name or URL). */
  readonly regulation?: string;
  /** Topic in UNTP's conformity topics (environment.emissions, social.labour, ...; see {@link conformityTopics}). */
  readonly topic?: string;
  readonly certificate?: PassportLink;
}

/** A due-diligence statement. */
export interface DueDiligenceStatement {
  readonly statement: LocalText;
  readonly link?: PassportLink;
}

/** A free field with its JSON-LD term. */
export interface PassportExtension {
  /** The field's JSON-LD term as an absolute IRI (https://example.com/vocab#stateOfHealth). */
  readonly term: string;
  readonly name: LocalText;
  readonly value: string | number | boolean;
  /** Its unit (UN/CEFACT code, or % ), when the value is a number. */
  readonly unit?: string;
}

/** The dimensions and weight. */
export interface Dimensions {
  readonly weight?: Measure;
  readonly length?: Measure;
  readonly width?: Measure;
  readonly height?: Measure;
  readonly volume?: Measure;
}

/** The content of a passport at one level; every section optional (a lot or unit writes only what differs). */
export interface PassportContent {
  readonly description?: LocalText;
  readonly manufacturer?: Party;
  readonly facility?: Party;
  /** ISO date (YYYY-MM-DD). */
  readonly productionDate?: string;
  /** ISO 3166-1 alpha-2. */
  readonly countryOfProduction?: string;
  readonly dimensions?: Dimensions;
  readonly materials?: readonly Material[];
  readonly emissions?: Emissions;
  readonly circularity?: Circularity;
  readonly conformity?: readonly ConformityClaim[];
  readonly dueDiligence?: readonly DueDiligenceStatement[];
  /** Free fields, each with its JSON-LD term (a battery's state of health on a unit, for example). */
  readonly extensions?: readonly PassportExtension[];
  /** The access class of each section; a section not named is public. */
  readonly access?: Readonly<Partial<Record<PassportSection, PassportAccessClass>>>;
}

/** The sections of a passport, in the order the page shows them. */
export const passportSections = [
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
/** A section of a passport. */
export type PassportSection = (typeof passportSections)[number];

/** Largest passport content of one level, as canonical JSON. */
export const maxPassportBytes = 256 * 1024;

/** UNTP's conformity topics. */
export const conformityTopics = [
  'environment.energy',
  'environment.emissions',
  'environment.water',
  'environment.waste',
  'environment.deforestation',
  'environment.biodiversity',
  'circularity.content',
  'circularity.design',
  'social.labour',
  'social.rights',
  'social.community',
  'social.safety',
  'governance.ethics',
  'governance.compliance',
  'governance.transparency',
] as const;

const languageTag = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const countryCode = /^[A-Z]{2}$/;
const isoDate = /^\d{4}-\d{2}-\d{2}$/;
const unitCode = /^[A-Za-z0-9%]{1,10}$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads a passport's JSON, checking each field; collects every violation, each naming its field (`content.materials[0].massFraction`). */
class Reader {
  readonly violations: FieldViolation[] = [];
  fail(field: string, message: string): undefined {
    this.violations.push({ field, message });
    return undefined;
  }
  keys(v: Obj, field: string, allowed: readonly string[]): void {
    for (const k of Object.keys(v))
      if (!allowed.includes(k))
        this.fail(
          `${field}.${k}`,
          `is not a field of ${field
            .split('.')
            .pop()!
            .replace(/\[\d+\]$/, '')}`,
        );
  }
  obj(v: unknown, field: string, allowed: readonly string[]): Obj | undefined {
    if (!isObj(v)) return this.fail(field, 'must be an object');
    this.keys(v, field, allowed);
    return v;
  }
  text(v: unknown, field: string, max = 2_000, pattern?: RegExp, what?: string): string | undefined {
    if (typeof v !== 'string' || v.trim() === '' || v.length > max) return this.fail(field, `must be a text of 1..${max} characters`);
    if (pattern !== undefined && !pattern.test(v)) return this.fail(field, `must be ${what}`);
    return v;
  }
  url(v: unknown, field: string): string | undefined {
    const s = this.text(v, field, 2_000);
    if (s === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(s);
    } catch {
      return this.fail(field, 'must be an absolute https URL');
    }
    return parsed.protocol === 'https:' ? s : this.fail(field, 'must be an absolute https URL');
  }
  iri(v: unknown, field: string): string | undefined {
    const s = this.text(v, field, 500);
    if (s === undefined) return undefined;
    return /^[a-z][a-z0-9+.-]*:\S+$/i.test(s) ? s : this.fail(field, 'must be an absolute IRI (https://example.com/vocab#term)');
  }
  local(v: unknown, field: string, max = 5_000): LocalText | undefined {
    if (!isObj(v) || Object.keys(v).length === 0) return this.fail(field, 'must be an object of language tag to text ({"en": "..."})');
    const out: Record<string, string> = {};
    for (const [lang, text] of Object.entries(v)) {
      if (!languageTag.test(lang)) this.fail(`${field}.${lang}`, 'must be keyed by a language tag (en, de, fr-CA)');
      else {
        const t = this.text(text, `${field}.${lang}`, max);
        if (t !== undefined) out[lang] = t;
      }
    }
    return out;
  }
  fraction(v: unknown, field: string): number | undefined {
    return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1 ? v : this.fail(field, 'must be a number from 0 to 1');
  }
  number(v: unknown, field: string): number | undefined {
    return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : this.fail(field, 'must be a number of at least 0');
  }
  bool(v: unknown, field: string): boolean | undefined {
    return typeof v === 'boolean' ? v : this.fail(field, 'must be true or false');
  }
  list<T>(v: unknown, field: string, max: number, item: (x: unknown, f: string) => T | undefined): T[] | undefined {
    if (!Array.isArray(v)) return this.fail(field, 'must be an array');
    if (v.length > max) return this.fail(field, `must have at most ${max} entries`);
    return v.map((x, i) => item(x, `${field}[${i}]`)).filter((x): x is T => x !== undefined);
  }
  measure(v: unknown, field: string): Measure | undefined {
    const o = this.obj(v, field, ['value', 'unit']);
    if (o === undefined) return undefined;
    const value = this.number(o['value'], `${field}.value`);
    const unit = this.text(o['unit'], `${field}.unit`, 10, unitCode, 'a UN/CEFACT unit code (KGM, MMT)');
    return value === undefined || unit === undefined ? undefined : { value, unit };
  }
  link(v: unknown, field: string): PassportLink | undefined {
    const o = this.obj(v, field, ['url', 'name']);
    if (o === undefined) return undefined;
    const url = this.url(o['url'], `${field}.url`);
    const name = o['name'] === undefined ? undefined : this.local(o['name'], `${field}.name`, 300);
    return url === undefined ? undefined : { url, ...(name === undefined ? {} : { name }) };
  }
  party(v: unknown, field: string, facility: boolean): Party | undefined {
    const o = this.obj(v, field, facility ? ['name', 'id', 'country'] : ['name', 'id']);
    if (o === undefined) return undefined;
    const name = this.text(o['name'], `${field}.name`, 300);
    const id = o['id'] === undefined ? undefined : this.iri(o['id'], `${field}.id`);
    const country = o['country'] === undefined ? undefined : this.text(o['country'], `${field}.country`, 2, countryCode, 'an ISO 3166-1 alpha-2 code (DE)');
    return name === undefined ? undefined : { name, ...(id === undefined ? {} : { id }), ...(country === undefined ? {} : { country }) };
  }
  /** Copies the optional fields `names` of `o` read by `read`. */
  optional(o: Obj, field: string, names: Record<string, (v: unknown, f: string) => unknown>): Obj {
    const out: Obj = {};
    for (const [name, read] of Object.entries(names)) {
      if (o[name] === undefined) continue;
      const value = read(o[name], `${field}.${name}`);
      if (value !== undefined) out[name] = value;
    }
    return out;
  }
}

/** The outcome of {@link readPassportContent}: the content, or every violation (nothing is half-read). */
export type PassportContentResult = { readonly content: PassportContent } | { readonly violations: readonly FieldViolation[] };

/**
 * Reads and checks a passport's content (parsed JSON), naming each bad field below `field`
 * (default `content`): unknown fields, texts outside 1..N characters, fractions outside 0..1,
 * non-https links, language keys that are not language tags, access classes not known, and content
 * larger than {@link maxPassportBytes}. Every violation is reported at once.
 */
export function readPassportContent(input: unknown, field = 'content'): PassportContentResult {
  const r = new Reader();
  const o = r.obj(input, field, [...passportSections, 'access']);
  if (o === undefined) return { violations: r.violations };
  const out: Obj = r.optional(o, field, {
    description: (v, f) => r.local(v, f),
    manufacturer: (v, f) => r.party(v, f, false),
    facility: (v, f) => r.party(v, f, true),
    productionDate: (v, f) => {
      const s = r.text(v, f, 10, isoDate, 'an ISO date (YYYY-MM-DD)');
      return s !== undefined && Number.isNaN(Date.parse(`${s}T00:00:00Z`)) ? r.fail(f, 'must be an ISO date (YYYY-MM-DD)') : s;
    },
    countryOfProduction: (v, f) => r.text(v, f, 2, countryCode, 'an ISO 3166-1 alpha-2 code (DE)'),
    dimensions: (v, f) => {
      const d = r.obj(v, f, ['weight', 'length', 'width', 'height', 'volume']);
      return d === undefined
        ? undefined
        : r.optional(d, f, Object.fromEntries(['weight', 'length', 'width', 'height', 'volume'].map((k) => [k, (x: unknown, g: string) => r.measure(x, g)])));
    },
    materials: (v, f) =>
      r.list(v, f, 200, (x, g) => {
        const m = r.obj(x, g, ['name', 'massFraction', 'recycledMassFraction', 'hazardous', 'originCountry']);
        if (m === undefined) return undefined;
        const name = r.local(m['name'], `${g}.name`, 300);
        const rest = r.optional(m, g, {
          massFraction: (y, h) => r.fraction(y, h),
          recycledMassFraction: (y, h) => r.fraction(y, h),
          hazardous: (y, h) => r.bool(y, h),
          originCountry: (y, h) => r.text(y, h, 2, countryCode, 'an ISO 3166-1 alpha-2 code (DE)'),
        });
        return name === undefined ? undefined : { name, ...rest };
      }),
    emissions: (v, f) => {
      const e = r.obj(v, f, ['carbonFootprint', 'declaredUnit', 'operationalScope', 'primarySourcedRatio', 'method']);
      if (e === undefined) return undefined;
      const carbonFootprint = r.number(e['carbonFootprint'], `${f}.carbonFootprint`);
      const declaredUnit = r.text(e['declaredUnit'], `${f}.declaredUnit`, 10, unitCode, 'a UN/CEFACT unit code (KGM, EA)');
      const method = r.text(e['method'], `${f}.method`, 500);
      const rest = r.optional(e, f, {
        operationalScope: (y, h) =>
          y === 'None' || y === 'CradleToGate' || y === 'CradleToGrave' ? y : r.fail(h, 'must be None, CradleToGate or CradleToGrave'),
        primarySourcedRatio: (y, h) => r.fraction(y, h),
      });
      return carbonFootprint === undefined || declaredUnit === undefined || method === undefined
        ? undefined
        : { carbonFootprint, declaredUnit, method, ...rest };
    },
    circularity: (v, f) => {
      const c = r.obj(v, f, ['recyclableContent', 'recycledContent', 'repairInstructions', 'disassemblyInstructions', 'recyclingInstructions', 'spareParts']);
      return c === undefined
        ? undefined
        : r.optional(c, f, {
            recyclableContent: (y, h) => r.fraction(y, h),
            recycledContent: (y, h) => r.fraction(y, h),
            repairInstructions: (y, h) => r.link(y, h),
            disassemblyInstructions: (y, h) => r.link(y, h),
            recyclingInstructions: (y, h) => r.link(y, h),
            spareParts: (y, h) => r.link(y, h),
          });
    },
    conformity: (v, f) =>
      r.list(v, f, 100, (x, g) => {
        const c = r.obj(x, g, ['description', 'standard', 'regulation', 'topic', 'certificate']);
        if (c === undefined) return undefined;
        const description = r.local(c['description'], `${g}.description`);
        const rest = r.optional(c, g, {
          standard: (y, h) => r.text(y, h, 500),
          regulation: (y, h) => r.text(y, h, 500),
          certificate: (y, h) => r.link(y, h),
          topic: (y, h) =>
            (conformityTopics as readonly unknown[]).includes(y) ? y : r.fail(h, `must be one of UNTP's conformity topics (${conformityTopics.join(', ')})`),
        });
        return description === undefined ? undefined : { description, ...rest };
      }),
    dueDiligence: (v, f) =>
      r.list(v, f, 100, (x, g) => {
        const d = r.obj(x, g, ['statement', 'link']);
        if (d === undefined) return undefined;
        const statement = r.local(d['statement'], `${g}.statement`);
        const rest = r.optional(d, g, { link: (y, h) => r.link(y, h) });
        return statement === undefined ? undefined : { statement, ...rest };
      }),
    extensions: (v, f) =>
      r.list(v, f, 100, (x, g) => {
        const e = r.obj(x, g, ['term', 'name', 'value', 'unit']);
        if (e === undefined) return undefined;
        const term = r.iri(e['term'], `${g}.term`);
        const name = r.local(e['name'], `${g}.name`, 300);
        const raw = e['value'];
        const value =
          typeof raw === 'boolean' || (typeof raw === 'number' && Number.isFinite(raw))
            ? raw
            : typeof raw === 'string'
              ? r.text(raw, `${g}.value`, 2_000)
              : r.fail(`${g}.value`, 'must be a text, a number or true/false');
        const rest = r.optional(e, g, { unit: (y, h) => r.text(y, h, 10, unitCode, 'a UN/CEFACT unit code (KGM, P1)') });
        return term === undefined || name === undefined || value === undefined ? undefined : { term, name, value, ...rest };
      }),
    access: (v, f) => {
      const a = r.obj(v, f, passportSections);
      if (a === undefined) return undefined;
      const out: Obj = {};
      for (const [section, cls] of Object.entries(a)) {
        if (!(passportSections as readonly string[]).includes(section)) continue;
        if (typeof cls !== 'string' || !(passportAccessClasses as readonly string[]).includes(cls))
          r.fail(`${f}.${section}`, `must be one of ${passportAccessClasses.join(', ')}`);
        else out[section] = cls;
      }
      return out;
    },
  });
  if (r.violations.length > 0) return { violations: r.violations };
  if (Buffer.byteLength(canonicalJson(out)) > maxPassportBytes)
    return { violations: [{ field, message: `must be at most ${maxPassportBytes} bytes as JSON` }] };
  return { content: out as PassportContent };
}

/** The RFC 8785 (JSON Canonicalization Scheme) form of a JSON value. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('not a JSON value');
  return text;
}

/** The digest of a published version: lower-case hex SHA-256 of the content's RFC 8785 canonical JSON. */
export function passportDigest(content: PassportContent): string {
  return createHash('sha256').update(canonicalJson(content)).digest('hex');
}

/**
 * An item's passport from its levels, most specific first (unit, lot, model; absent levels
 * skipped): each section comes whole from the most specific level that has it, and so does its
 * access class (a lot that rewrites a section also says who may read it; a section it does not
 * rewrite keeps the model's class).
 */
export function inheritPassport(levels: readonly (PassportContent | null)[]): PassportContent {
  const out: Record<string, unknown> = {};
  const access: Record<string, PassportAccessClass> = {};
  for (const section of passportSections) {
    const from = levels.find((l) => l !== null && l[section] !== undefined);
    if (from === undefined || from === null) continue;
    out[section] = from[section];
    const cls = from.access?.[section];
    if (cls !== undefined && cls !== 'public') access[section] = cls;
  }
  if (Object.keys(access).length > 0) out['access'] = access;
  return out as PassportContent;
}

/** The access class of a section of `content`; public when it names none. */
export function sectionClass(content: PassportContent, section: PassportSection): PassportAccessClass {
  return content.access?.[section] ?? 'public';
}

/** True when holders of `granted` (classes of the reader's credential; none for the public) may read a section of class `cls`. An authority reads legitimate-interest sections too. */
export function classReads(granted: readonly PassportAccessClass[], cls: PassportAccessClass): boolean {
  if (cls === 'public') return true;
  if (granted.includes(cls)) return true;
  return cls === 'legitimate_interest' && granted.includes('authority');
}

/** What a reader sees of a passport: the sections its classes may read (the others removed, not blanked), and which restricted ones it read. */
export interface VisiblePassport {
  readonly content: PassportContent;
  /** The restricted sections shown (for the audit event); empty for a public read. */
  readonly restricted: readonly PassportSection[];
  /** The restricted sections withheld from this reader. */
  readonly withheld: readonly PassportSection[];
}

/** The part of `content` a reader holding `granted` may see; the `access` map stays, so a holder knows what is restricted. */
export function visiblePassport(content: PassportContent, granted: readonly PassportAccessClass[]): VisiblePassport {
  const out: Record<string, unknown> = {};
  const restricted: PassportSection[] = [];
  const withheld: PassportSection[] = [];
  for (const section of passportSections) {
    if (content[section] === undefined) continue;
    const cls = sectionClass(content, section);
    if (!classReads(granted, cls)) {
      withheld.push(section);
      continue;
    }
    if (cls !== 'public') restricted.push(section);
    out[section] = content[section];
  }
  if (restricted.length > 0 && content.access !== undefined) {
    out['access'] = Object.fromEntries(restricted.map((s) => [s, content.access![s]]));
  }
  return { content: out as PassportContent, restricted, withheld };
}

/** The text of `text` in the first of `languages` it has (by full tag, then primary subtag), else in `fallback`, else its first. */
export function localText(text: LocalText, languages: readonly string[], fallback = 'en'): { readonly text: string; readonly lang: string } {
  const keys = Object.keys(text);
  for (const tag of [...languages, fallback]) {
    const lower = tag.toLowerCase();
    const exact = keys.find((k) => k.toLowerCase() === lower);
    if (exact !== undefined) return { text: text[exact]!, lang: exact };
    const primary = lower.split('-', 1)[0]!;
    const near = keys.find((k) => k.toLowerCase().split('-', 1)[0] === primary);
    if (near !== undefined) return { text: text[near]!, lang: near };
  }
  const first = keys[0]!;
  return { text: text[first]!, lang: first };
}

/** The languages a passport's texts are written in (sorted). */
export function passportLanguages(content: PassportContent): string[] {
  const found = new Set<string>();
  const walk = (v: unknown, key: string | null): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x, null);
    } else if (isObj(v)) {
      const localKeys = ['description', 'name', 'statement'];
      if (key !== null && localKeys.includes(key) && Object.values(v).every((x) => typeof x === 'string')) {
        for (const k of Object.keys(v)) found.add(k);
      } else for (const [k, x] of Object.entries(v)) walk(x, k);
    }
  };
  walk(content, null);
  return [...found].sort();
}

/** The level of a passport key: a serial makes a unit's, a lot a lot's, neither the model's. */
export function passportLevelOf(lot: string, serial: string): PassportLevel {
  return serial !== '' ? 'unit' : lot !== '' ? 'lot' : 'model';
}

/** Checks a passport key's lot and serial (each optional, at most 100 characters, never both). */
export function passportKeyViolations(lot: string, serial: string): FieldViolation[] {
  const v: FieldViolation[] = [];
  if (lot.length > 100) v.push({ field: 'lot', message: 'must be at most 100 characters' });
  if (serial.length > 100) v.push({ field: 'serial', message: 'must be at most 100 characters' });
  if (lot !== '' && serial !== '') v.push({ field: 'serial', message: 'a unit passport is named by its serial alone; leave lot empty' });
  return v;
}
