// Reads Prometheus text exposition the way a scraper would, for tests that assert on /metrics.

/** One sample line: metric name, labels and value. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses every sample of an exposition text; comments and blank lines are skipped, a malformed line throws. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    if (raw.trim() === '' || raw.startsWith('#')) continue;
    const match = line.exec(raw);
    if (match === null) throw new Error(`not a Prometheus sample line: ${raw}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(label)) labels[key!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when there is none, throws when several match. */
export function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** GETs `url` (a /metrics endpoint), checks the content type, and parses the body. */
export async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain')) throw new Error(`GET ${url} answered content-type ${type}`);
  return parseMetrics(await res.text());
}
