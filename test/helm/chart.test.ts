// The Helm chart in deploy/helm/minting, checked with a real Helm binary: lint with default and
// non-default values, values.schema.json rejecting wrong types, every rendered object valid
// against the Kubernetes schemas, and one render test per template.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMap, isPair, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import * as monitoringV1 from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as autoscalingV2 from 'kubernetes-models/autoscaling/v2';
import * as batchV1 from 'kubernetes-models/batch/v1';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import { Ajv } from 'ajv';
import { loadConfig } from '@mint/runtime';
import { configVariables } from '../../scripts/docs-configuration.ts';
import { chartDir, helm, releaseName, render, renderNotes, valuesArgs, type Manifest, type ValuesOptions } from './helm.ts';

const full: ValuesOptions = { files: ['values-full.yaml'] };

/** The model classes of every apiVersion the chart renders, by kind. */
const models: Record<string, Record<string, unknown>> = {
  v1: coreV1,
  'apps/v1': appsV1,
  'autoscaling/v2': autoscalingV2,
  'batch/v1': batchV1,
  'networking.k8s.io/v1': networkingV1,
  'policy/v1': policyV1,
  'monitoring.coreos.com/v1': monitoringV1,
};

/** Throws naming the object when `manifest` does not match its Kubernetes (or CRD) schema. */
function validate(manifest: Manifest): void {
  if (manifest.apiVersion === 'keda.sh/v1alpha1') {
    const { template: _template, ...object } = manifest;
    if (!validateScaledObject(object)) throw new Error(`${manifest.kind} from ${manifest.template} is invalid: ${JSON.stringify(validateScaledObject.errors)}`);
    return;
  }
  const Model = models[manifest.apiVersion]?.[manifest.kind] as (new (data: object) => { validate(): void }) | undefined;
  if (Model === undefined) throw new Error(`no schema for ${manifest.apiVersion} ${manifest.kind} (${manifest.template})`);
  const { template: _template, ...object } = manifest;
  try {
    new Model(object).validate();
  } catch (error) {
    throw new Error(`${manifest.kind} ${manifest.metadata.name} from ${manifest.template} is invalid: ${String(error)}`, { cause: error });
  }
}

/** The one object `template` rendered (of `kind`, when a template renders several). */
function one(manifests: readonly Manifest[], template: string, kind?: string): Manifest {
  const found = manifests.filter((m) => m.template === template && (kind === undefined || m.kind === kind));
  expect(found, `${template} should render exactly one ${kind ?? 'object'}`).toHaveLength(1);
  return found[0]!;
}

function container(deployment: Manifest): any {
  return deployment.spec.template.spec.containers[0];
}

function envValue(c: any, name: string): string | undefined {
  return (c.env as { name: string; value: string }[] | undefined)?.find((e) => e.name === name)?.value;
}

/**
 * The fields of a KEDA ScaledObject (keda.sh/v1alpha1) the chart writes, with the types of KEDA's
 * ScaledObject CRD (counts int32, trigger metadata a map of strings: KEDA refuses numbers there)
 * and the nats-jetstream trigger's parameters as https://keda.sh/docs/scalers/nats-jetstream lists
 * them. Closed objects, so a misspelt field fails instead of being dropped by the API server.
 */
const int32 = { type: 'integer', minimum: 0, maximum: 2_147_483_647 };
const validateScaledObject = new Ajv({ allErrors: true, strict: true }).compile({
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  additionalProperties: false,
  properties: {
    apiVersion: { const: 'keda.sh/v1alpha1' },
    kind: { const: 'ScaledObject' },
    metadata: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
    },
    spec: {
      type: 'object',
      required: ['scaleTargetRef', 'triggers'],
      additionalProperties: false,
      properties: {
        scaleTargetRef: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' }, envSourceContainerName: { type: 'string' } },
        },
        minReplicaCount: int32,
        maxReplicaCount: int32,
        pollingInterval: int32,
        cooldownPeriod: int32,
        idleReplicaCount: int32,
        triggers: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['type', 'metadata'],
            additionalProperties: false,
            properties: {
              type: { const: 'nats-jetstream' },
              name: { type: 'string' },
              metadata: {
                type: 'object',
                required: ['natsServerMonitoringEndpoint', 'account', 'stream', 'consumer', 'lagThreshold'],
                additionalProperties: false,
                properties: Object.fromEntries(
                  ['natsServerMonitoringEndpoint', 'account', 'stream', 'consumer', 'lagThreshold', 'activationLagThreshold', 'useHttps'].map((key) => [
                    key,
                    { type: 'string', minLength: 1 },
                  ]),
                ),
              },
            },
          },
        },
      },
    },
  },
});

const defaults = render();
const everything = render(full);
/** Everything enabled, with the executor scaled by KEDA on its queue instead of the CPU HPA. */
const kedaValues: ValuesOptions = {
  files: ['values-full.yaml'],
  set: { 'executor.keda.enabled': true, 'executor.keda.natsServerMonitoringEndpoint': 'nats.nats.svc.cluster.local:8222', 'executor.keda.minReplicaCount': 2 },
};
const withKeda = render(kedaValues);

describe('helm lint', () => {
  it('passes with the default values', () => {
    const result = helm(['lint', '--strict', chartDir]);
    expect(result.stderr + result.stdout).toContain('0 chart(s) failed');
    expect(result.status).toBe(0);
  });

  it('passes with every optional feature enabled', () => {
    const result = helm(['lint', '--strict', chartDir, ...valuesArgs(full)]);
    expect(result.stderr + result.stdout).toContain('0 chart(s) failed');
    expect(result.status).toBe(0);
  });
});

describe('values.schema.json', () => {
  it('rejects a replica count that is not an integer', () => {
    const result = helm(['lint', chartDir, '--set', 'api.replicaCount=two']);
    expect(result.status).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/api\.replicaCount: Invalid type\. Expected: integer, given: string/);
  });

  it('rejects each wrong type and out-of-range value in a values file', () => {
    const result = helm(['template', releaseName, chartDir, ...valuesArgs({ files: ['values-wrong-types.yaml'] })]);
    expect(result.status).not.toBe(0);
    for (const key of [
      'api.replicaCount',
      'api.port',
      'api.rateLimits.perCredential',
      'api.corsAllowedOrigins.0',
      'executor.autoscaling.enabled',
      'executor.webhooks.concurrency',
      'executor.webhooks.maxEndpointsPerBrand',
      'config.chunkSize',
      'config.logLevel',
      'config.natsReplicas',
      'packStore.kind',
      'executor.keda.lagThreshold',
      'executor.keda.natsServerMonitoringEndpoint',
    ]) {
      expect(result.stderr, key).toContain(`${key}:`);
    }
  });

  it('requires existingSecret', () => {
    const result = helm(['template', releaseName, chartDir, '--set', 'existingSecret=null']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/existingSecret is required/);
    expect(helm(['template', releaseName, chartDir, '--set', 'existingSecret=']).status).not.toBe(0);
  });

  it('rejects keys it does not know, so a typo is not silently ignored', () => {
    const result = helm(['template', releaseName, chartDir, '--set', 'api.replicas=3']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Additional property replicas is not allowed/);
  });
});

describe('values.yaml', () => {
  it('documents every key with a comment (keys inside Kubernetes objects passed through verbatim excepted)', () => {
    const passThrough = new Set(['resources', 'podSecurityContext', 'securityContext']);
    const undocumented: string[] = [];
    const walk = (node: Node | null | undefined, path: string[], firstComment: string | undefined) => {
      if (!isMap(node)) return;
      node.items.forEach((pair, index) => {
        if (!isPair(pair) || !isScalar(pair.key)) return;
        const key = String(pair.key.value);
        // yaml attaches a comment above a nested map's first key to the map itself.
        const comment = pair.key.commentBefore ?? (index === 0 ? firstComment : undefined);
        if (!comment && !path.some((p) => passThrough.has(p))) undocumented.push([...path, key].join('.'));
        const value = pair.value as Node | null;
        walk(value, [...path, key], isMap(value) ? (value.commentBefore ?? undefined) : undefined);
        if (isSeq(value)) for (const [i, item] of value.items.entries()) walk(item as Node, [...path, key, String(i)], undefined);
      });
    };
    const document = parseDocument(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));
    walk(document.contents as Node, [], document.commentBefore ?? undefined);
    expect(undocumented).toEqual([]);
  });
});

describe('every rendered object', () => {
  it.each([
    ['default values', defaults],
    ['every feature enabled', everything],
    ['the executor scaled by KEDA', withKeda],
  ])('validates against the Kubernetes schemas with %s', (_label, manifests) => {
    expect(manifests.length).toBeGreaterThan(0);
    for (const manifest of manifests) validate(manifest);
  });

  it('renders only what is enabled by default, and every template when all is enabled', () => {
    const templatesOf = (ms: readonly Manifest[]) => [...new Set(ms.map((m) => m.template))].sort();
    expect(templatesOf(defaults)).toEqual([
      'api-deployment.yaml',
      'api-pdb.yaml',
      'api-service.yaml',
      'configmap.yaml',
      'executor-deployment.yaml',
      'executor-pdb.yaml',
      'migrate-job.yaml',
      'serviceaccount.yaml',
    ]);
    const templates = readdirSync(join(chartDir, 'templates'))
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    // The executor's ScaledObject replaces its HPA: every template but that one, then the swap.
    expect(templatesOf(everything)).toEqual(templates.filter((t) => t !== 'executor-scaledobject.yaml'));
    expect(templatesOf(withKeda)).toEqual(templates.filter((t) => t !== 'executor-hpa.yaml'));
  });

  it('carries the release labels, and no Secret is ever created', () => {
    for (const m of [...defaults, ...everything]) {
      expect(m.metadata.labels?.['app.kubernetes.io/instance'], m.template).toBe(releaseName);
      expect(m.metadata.labels?.['app.kubernetes.io/managed-by'], m.template).toBe('Helm');
      expect(m.kind).not.toBe('Secret');
    }
  });
});

describe('configmap.yaml', () => {
  it('holds the non-secret environment from values and none of the secret variables', () => {
    const data = one(everything, 'configmap.yaml').data as Record<string, string>;
    expect(data).toMatchObject({
      LOG_LEVEL: 'debug',
      PUBLIC_BASE_URL: 'https://mint.example.com',
      NATS_STREAM: 'PROD_JOBS',
      NATS_SUBJECT_PREFIX: 'prod.mint',
      AUTH_JWT_ISSUER: 'https://issuer.example.com',
      AUTH_JWT_AUDIENCE: 'minting',
      RESOLVER_CONTACT: 'resolver@mint.example.com',
      EXECUTOR_CONCURRENCY: '4',
      MINT_CHUNK_SIZE: '5000',
      EXECUTOR_LEASE_MS: '60000',
      NATS_ACK_WAIT_MS: '45000',
      // 0 (keep every scan event) is written, not mistaken for unset.
      SCAN_EVENT_RETENTION_DAYS: '0',
      NATS_REPLICAS: '3',
      PACK_STORE: 'fs',
      PACK_STORE_DIR: '/srv/packs',
      FEATURE_FLAG: 'on',
    });
    for (const secret of ['DATABASE_URL', 'NATS_URL', 'AUTH_JWT_SECRET', 'DOWNLOAD_SIGNING_KEYS', 'WEBHOOK_SECRET_KEYS'])
      expect(data).not.toHaveProperty(secret);
    // Unset optional variables stay out, so the process defaults apply.
    const plain = one(defaults, 'configmap.yaml').data as Record<string, string>;
    expect(Object.keys(plain)).not.toContain('PUBLIC_BASE_URL');
    expect(plain).toMatchObject({ NATS_REPLICAS: '1', PACK_STORE: 'nats' });
    expect(Object.keys(plain)).not.toContain('PACK_STORE_DIR');
    expect(Object.keys(plain)).not.toContain('RESOLVER_CONTACT');
    expect(Object.keys(plain)).not.toContain('EXECUTOR_LEASE_MS');
    expect(Object.keys(plain)).not.toContain('SCAN_EVENT_RETENTION_DAYS');
  });

  it("sets each variable with the chart's default values to the process default (the defaults object), so the chart cannot drift from it", () => {
    const plain = one(defaults, 'configmap.yaml').data as Record<string, string>;
    // The deployments' own literal variables too (the webhook worker's and the endpoint limit).
    const literal = (template: string) =>
      Object.fromEntries(
        ((container(one(defaults, template)).env ?? []) as { name: string; value?: unknown }[])
          .filter((e) => typeof e.value === 'string')
          .map((e) => [e.name, e.value as string]),
      );
    // SHUTDOWN_TIMEOUT_MS is sized to the pods' termination grace period on purpose, not to the process default.
    const { SHUTDOWN_TIMEOUT_MS: _sized, ...deployed } = { ...literal('api-deployment.yaml'), ...literal('executor-deployment.yaml') };
    const set = { ...plain, ...deployed };
    const variables = new Map(configVariables().map((v) => [v.variable, v.field]));
    const process = loadConfig({}) as unknown as Record<string, unknown>;
    expect(Object.keys(set)).toEqual(
      expect.arrayContaining([
        'WEBHOOK_MAX_ENDPOINTS_PER_BRAND',
        'WEBHOOK_PER_BRAND_CONCURRENCY',
        'PACK_CONCURRENCY_PER_BRAND',
        'IMPORT_CONCURRENCY_PER_BRAND',
      ]),
    );
    const drifted = Object.entries(set)
      .filter(([name]) => variables.has(name))
      .filter(
        ([name, value]) =>
          JSON.stringify((loadConfig({ [name]: value }) as unknown as Record<string, unknown>)[variables.get(name)!]) !==
          JSON.stringify(process[variables.get(name)!]),
      )
      .map(([name, value]) => `${name}=${value}`);
    expect(drifted).toEqual([]);
    // The chart sets most of them: a value left out would not be checked here.
    expect(Object.keys(plain).filter((name) => variables.has(name)).length).toBeGreaterThan(5);
  });

  it('carries every limit, timeout, rate limit, CORS, reflection and metrics setting of the API, and none unless set', () => {
    const data = one(everything, 'configmap.yaml').data as Record<string, string>;
    expect(data).toMatchObject({
      AUTH_JWT_MAX_LIFETIME_SECONDS: '3600',
      RPC_MAX_BODY_BYTES: '131072',
      // Large numbers are written in full, never as 8.388608e+07.
      IMPORT_MAX_BODY_BYTES: '83886080',
      HTTP_HEADERS_TIMEOUT_MS: '5000',
      HTTP_REQUEST_TIMEOUT_MS: '60000',
      HTTP_IDLE_TIMEOUT_MS: '75000',
      HTTP_BODY_TIMEOUT_MS: '10000',
      HTTP2_MAX_CONCURRENT_STREAMS: '50',
      WATCH_MAX_DURATION_MS: '600000',
      WATCH_MAX_STREAMS_PER_CALLER: '10',
      RATE_LIMIT_PER_CREDENTIAL: '500',
      // 0 turns the limit off and is written, not mistaken for unset.
      RATE_LIMIT_RESOLVER_PER_ADDRESS: '0',
      RATE_LIMIT_DOWNLOADS_PER_ADDRESS: '120',
      RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS: '30',
      SCAN_FLOOD_WINDOW_MS: '30000',
      // 0 (sample every never-issued serial) is written, not mistaken for unset.
      SCAN_FLOOD_NEVER_ISSUED_PER_WINDOW: '0',
      SCAN_FLOOD_MAX_TRACKED: '200000',
      TRUSTED_PROXIES: '10.42.0.0/16,fd00::/8',
      SCAN_COUNTRY_HEADER: 'cf-ipcountry',
      CONTROL_PLANE_HOSTS: 'mint-prod-api.mint.svc.cluster.local,api.mint.example.com',
      BRAND_DOMAIN_DELEGATED_ZONES: 'brands.mint.example.com',
      CORS_ALLOWED_ORIGINS: 'https://console.example.com,https://ops.example.com',
      REFLECTION_ALLOW_ANONYMOUS: 'true',
      ENABLE_SET_MINT_BATCH_STATUS: 'true',
      METRICS_PORT: '9464',
    });
    expect(data).not.toHaveProperty('METRICS_TOKEN');
    const plain = one(defaults, 'configmap.yaml').data as Record<string, string>;
    for (const name of [
      'AUTH_JWT_MAX_LIFETIME_SECONDS',
      'RPC_MAX_BODY_BYTES',
      'IMPORT_MAX_BODY_BYTES',
      'HTTP_HEADERS_TIMEOUT_MS',
      'HTTP_REQUEST_TIMEOUT_MS',
      'HTTP_IDLE_TIMEOUT_MS',
      'HTTP_BODY_TIMEOUT_MS',
      'HTTP2_MAX_CONCURRENT_STREAMS',
      'WATCH_MAX_DURATION_MS',
      'WATCH_MAX_STREAMS_PER_CALLER',
      'RATE_LIMIT_PER_CREDENTIAL',
      'RATE_LIMIT_RESOLVER_PER_ADDRESS',
      'RATE_LIMIT_DOWNLOADS_PER_ADDRESS',
      'RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS',
      'CORS_ALLOWED_ORIGINS',
      'REFLECTION_ALLOW_ANONYMOUS',
      'ENABLE_SET_MINT_BATCH_STATUS',
      'METRICS_PORT',
      'TRUSTED_PROXIES',
      'CONTROL_PLANE_HOSTS',
      'BRAND_DOMAIN_DELEGATED_ZONES',
      'SCAN_COUNTRY_HEADER',
      'SCAN_FLOOD_WINDOW_MS',
      'SCAN_FLOOD_NEVER_ISSUED_PER_WINDOW',
      'SCAN_FLOOD_MAX_TRACKED',
    ])
      expect(Object.keys(plain), name).not.toContain(name);
  });

  it('serves /metrics on a port of its own when api.metrics.port is set, scraped there with the bearer token from existingSecret', () => {
    expect(container(one(everything, 'api-deployment.yaml')).ports).toEqual([
      { name: 'http', containerPort: 9090, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9464, protocol: 'TCP' },
    ]);
    expect(one(everything, 'api-service.yaml').spec.ports).toContainEqual({ name: 'metrics', port: 9464, targetPort: 'metrics', protocol: 'TCP' });
    expect(one(everything, 'servicemonitor.yaml').spec.endpoints[0]).toMatchObject({
      port: 'metrics',
      authorization: { type: 'Bearer', credentials: { name: 'mint-prod-secrets', key: 'METRICS_TOKEN' } },
    });
    const apiPolicy = everything.find((m) => m.template === 'networkpolicy.yaml' && m.metadata.name === 'mint-api')!;
    expect(apiPolicy.spec.ingress[0].ports).toContainEqual({ port: 'metrics', protocol: 'TCP' });
    // Without the setting /metrics stays on the api port.
    expect(container(one(defaults, 'api-deployment.yaml')).ports).toHaveLength(1);
  });

  it('rolls the pods when it changes (checksum annotation)', () => {
    const checksum = (ms: readonly Manifest[]) => one(ms, 'api-deployment.yaml').spec.template.metadata.annotations['checksum/config'];
    expect(checksum(defaults)).toMatch(/^[0-9a-f]{64}$/);
    expect(checksum(render({ set: { 'config.logLevel': 'warn' } }))).not.toBe(checksum(defaults));
  });
});

describe('serviceaccount.yaml', () => {
  it('creates the pods account without an API token, or uses an existing one', () => {
    const account = one(everything, 'serviceaccount.yaml');
    expect(account.metadata.name).toBe('mint-runner');
    expect(account.automountServiceAccountToken).toBe(false);
    expect(one(everything, 'api-deployment.yaml').spec.template.spec.serviceAccountName).toBe('mint-runner');

    const existing = render({ set: { 'serviceAccount.create': false, 'serviceAccount.name': 'shared' } });
    expect(existing.filter((m) => m.kind === 'ServiceAccount')).toEqual([]);
    expect(one(existing, 'executor-deployment.yaml').spec.template.spec.serviceAccountName).toBe('shared');
  });
});

describe('api-deployment.yaml', () => {
  const deployment = one(defaults, 'api-deployment.yaml');
  const api = container(deployment);

  it('runs the api process with HTTP probes on its one port', () => {
    expect(api.args).toEqual(['api']);
    expect(api.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    expect(envValue(api, 'PORT')).toBe('8080');
    expect(api.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(api.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(api.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
  });

  it('runs restricted: non-root uid 10001, read-only root, no escalation, no capabilities, RuntimeDefault seccomp', () => {
    expect(deployment.spec.template.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(api.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(api.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    expect(deployment.spec.template.spec.volumes).toContainEqual({ name: 'tmp', emptyDir: { sizeLimit: '256Mi' } });
  });

  it('takes configuration from the ConfigMap and secrets from existingSecret', () => {
    expect(api.envFrom).toEqual([{ configMapRef: { name: 'rel-minting-config' } }, { secretRef: { name: 'minting' } }]);
    expect(container(one(everything, 'api-deployment.yaml')).envFrom).toContainEqual({ secretRef: { name: 'mint-prod-secrets' } });
  });

  it('drains within the grace period: SHUTDOWN_TIMEOUT_MS is below terminationGracePeriodSeconds', () => {
    for (const ms of [defaults, everything]) {
      const d = one(ms, 'api-deployment.yaml');
      expect(Number(envValue(container(d), 'SHUTDOWN_TIMEOUT_MS'))).toBeLessThan(d.spec.template.spec.terminationGracePeriodSeconds * 1000);
    }
  });

  it('sets replicas unless the HPA owns them, and mounts the pack store when configured', () => {
    expect(deployment.spec.replicas).toBe(2);
    const scaled = one(everything, 'api-deployment.yaml');
    expect(scaled.spec).not.toHaveProperty('replicas');
    expect(container(scaled).resources).toEqual({ requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '2', memory: '1Gi' } });
    expect(container(scaled).volumeMounts).toContainEqual({ name: 'pack-store', mountPath: '/srv/packs', subPath: 'packs' });
    expect(scaled.spec.template.spec.volumes).toContainEqual({ name: 'pack-store', persistentVolumeClaim: { claimName: 'mint-packs' } });
    expect(container(scaled).image).toBe('registry.example.com/minting:1.2.3');
  });
});

describe('api-service.yaml', () => {
  it('exposes one port named http, speaking h2c, that selects exactly the api pods', () => {
    const service = one(defaults, 'api-service.yaml');
    expect(service.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' }]);
    const podLabels = one(defaults, 'api-deployment.yaml').spec.template.metadata.labels;
    expect(podLabels).toMatchObject(service.spec.selector);
    expect(one(defaults, 'executor-deployment.yaml').spec.template.metadata.labels).not.toMatchObject(service.spec.selector);
  });
});

describe('api-hpa.yaml', () => {
  it('scales the api Deployment between the configured bounds on CPU and memory', () => {
    const hpa = one(everything, 'api-hpa.yaml');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: one(everything, 'api-deployment.yaml').metadata.name });
    expect(hpa.spec.minReplicas).toBe(3);
    expect(hpa.spec.maxReplicas).toBe(12);
    expect(hpa.spec.metrics.map((m: any) => [m.resource.name, m.resource.target.averageUtilization])).toEqual([
      ['cpu', 60],
      ['memory', 75],
    ]);
    expect(defaults.some((m) => m.template === 'api-hpa.yaml')).toBe(false);
  });

  it('refuses to render an HPA without any metric', () => {
    const result = helm([
      'template',
      releaseName,
      chartDir,
      '--set',
      'api.autoscaling.enabled=true',
      '--set',
      'api.autoscaling.targetCPUUtilizationPercentage=null',
    ]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('api.autoscaling needs targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage');
  });
});

describe('api-pdb.yaml', () => {
  it('keeps api pods available through voluntary disruptions', () => {
    const pdb = one(defaults, 'api-pdb.yaml');
    expect(pdb.spec).toMatchObject({ maxUnavailable: 1 });
    expect(pdb.spec).not.toHaveProperty('minAvailable');
    expect(one(defaults, 'api-deployment.yaml').spec.template.metadata.labels).toMatchObject(pdb.spec.selector.matchLabels);
    expect(one(everything, 'api-pdb.yaml').spec).toMatchObject({ minAvailable: 2 });
    expect(render({ set: { 'api.podDisruptionBudget.enabled': false } }).some((m) => m.template === 'api-pdb.yaml')).toBe(false);
  });
});

describe('executor-deployment.yaml', () => {
  it('runs the executor with no port and no probe unless a health port is configured', () => {
    const executor = container(one(defaults, 'executor-deployment.yaml'));
    expect(executor.args).toEqual(['executor']);
    expect(executor).not.toHaveProperty('ports');
    expect(executor).not.toHaveProperty('livenessProbe');
    expect(executor.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, runAsUser: 10001 });

    const withPort = container(one(everything, 'executor-deployment.yaml'));
    expect(withPort.ports).toEqual([{ name: 'http', containerPort: 9464, protocol: 'TCP' }]);
    expect(withPort.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(envValue(withPort, 'EXECUTOR_HTTP_PORT')).toBe('9464');
  });

  it('shares the configuration, secrets and pack store with the api, and drains within its grace period', () => {
    const d = one(everything, 'executor-deployment.yaml');
    const executor = container(d);
    expect(executor.envFrom).toEqual([{ configMapRef: { name: 'mint-config' } }, { secretRef: { name: 'mint-prod-secrets' } }]);
    expect(executor.volumeMounts).toContainEqual({ name: 'pack-store', mountPath: '/srv/packs', subPath: 'packs' });
    expect(envValue(executor, 'SHUTDOWN_TIMEOUT_MS')).toBe('50000');
    expect(d.spec.template.spec.terminationGracePeriodSeconds).toBe(60);
    expect(d.spec.template.spec.priorityClassName).toBe('batch');
    expect(one(defaults, 'executor-deployment.yaml').spec.replicas).toBe(2);
  });
});

describe('api-deployment.yaml console', () => {
  it('serves the web console by default and passes CONSOLE_ENABLED=false when api.console.enabled is off', () => {
    expect(envValue(container(one(defaults, 'api-deployment.yaml')), 'CONSOLE_ENABLED')).toBe('true');
    expect(envValue(container(one(everything, 'api-deployment.yaml')), 'CONSOLE_ENABLED')).toBe('false');
    // The executor serves no console.
    expect(envValue(container(one(everything, 'executor-deployment.yaml')), 'CONSOLE_ENABLED')).toBeUndefined();
  });

  it('refuses a console.enabled that is not a boolean', () => {
    const result = helm(['template', releaseName, chartDir, '--set-string', 'api.console.enabled=yes']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('api.console.enabled');
  });
});

describe('executor-deployment.yaml webhooks', () => {
  it('runs the webhook worker with its own concurrency settings, and passes the address allow-list only when set', () => {
    const byDefault = container(one(defaults, 'executor-deployment.yaml'));
    expect(
      ['WEBHOOK_CONCURRENCY', 'WEBHOOK_PER_ENDPOINT_CONCURRENCY', 'WEBHOOK_PER_BRAND_CONCURRENCY', 'WEBHOOK_POLL_MS'].map((n) => envValue(byDefault, n)),
    ).toEqual(['16', '2', '8', '500']);
    expect(envValue(container(one(defaults, 'api-deployment.yaml')), 'WEBHOOK_MAX_ENDPOINTS_PER_BRAND')).toBe('20');
    expect(envValue(byDefault, 'WEBHOOK_ALLOWED_ADDRESSES')).toBeUndefined();
    expect(envValue(byDefault, 'WEBHOOK_ALLOW_LOOPBACK')).toBeUndefined();
    const custom = container(one(everything, 'executor-deployment.yaml'));
    expect(
      ['WEBHOOK_CONCURRENCY', 'WEBHOOK_PER_ENDPOINT_CONCURRENCY', 'WEBHOOK_PER_BRAND_CONCURRENCY', 'WEBHOOK_POLL_MS'].map((n) => envValue(custom, n)),
    ).toEqual(['32', '4', '12', '250']);
    expect(envValue(container(one(everything, 'api-deployment.yaml')), 'WEBHOOK_MAX_ENDPOINTS_PER_BRAND')).toBe('50');
    expect(envValue(custom, 'WEBHOOK_ALLOWED_ADDRESSES')).toBe('10.20.0.0/16,192.168.5.7');
    // The api runs no delivery worker.
    expect(envValue(container(one(everything, 'api-deployment.yaml')), 'WEBHOOK_CONCURRENCY')).toBeUndefined();
  });
});

describe('executor-hpa.yaml', () => {
  it('scales the executor independently of the api, on CPU only when memory is null', () => {
    const hpa = one(everything, 'executor-hpa.yaml');
    expect(hpa.spec.scaleTargetRef.name).toBe('mint-executor');
    expect([hpa.spec.minReplicas, hpa.spec.maxReplicas]).toEqual([2, 20]);
    expect(hpa.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }]);
    expect(one(everything, 'executor-deployment.yaml').spec).not.toHaveProperty('replicas');
  });
});

describe('executor-scaledobject.yaml', () => {
  it("scales the executor with KEDA's nats-jetstream scaler on the mint consumer's pending jobs, in place of the HPA", () => {
    const scaled = one(withKeda, 'executor-scaledobject.yaml');
    expect(scaled.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'mint-executor' },
      minReplicaCount: 2,
      maxReplicaCount: 8,
      pollingInterval: 15,
      cooldownPeriod: 300,
      triggers: [
        {
          type: 'nats-jetstream',
          metadata: {
            natsServerMonitoringEndpoint: 'nats.nats.svc.cluster.local:8222',
            account: '$G',
            stream: 'PROD_JOBS',
            consumer: 'PROD_JOBS_mint',
            lagThreshold: '2',
            useHttps: 'false',
          },
        },
      ],
    });
    // KEDA owns the replica count: no HPA of the chart's own and no fixed replicas fight it.
    expect(withKeda.filter((m) => m.kind === 'HorizontalPodAutoscaler').map((m) => m.template)).toEqual(['api-hpa.yaml']);
    expect(one(withKeda, 'executor-deployment.yaml').spec).not.toHaveProperty('replicas');
    expect(
      one(render({ set: { 'executor.keda.enabled': true, 'executor.keda.natsServerMonitoringEndpoint': 'nats:8222' } }), 'executor-deployment.yaml').spec,
    ).not.toHaveProperty('replicas');
  });

  it('has the fields and types of the ScaledObject CRD and the nats-jetstream trigger', () => {
    const { template: _template, ...object } = one(withKeda, 'executor-scaledobject.yaml');
    expect(object.apiVersion).toBe('keda.sh/v1alpha1');
    expect(validateScaledObject(object), JSON.stringify(validateScaledObject.errors)).toBe(true);
    // The check has teeth: a misspelt field or a number where KEDA wants a string fails it.
    expect(validateScaledObject({ ...object, spec: { ...object.spec, maxReplicas: 3 } })).toBe(false);
    const trigger = object.spec.triggers[0];
    expect(validateScaledObject({ ...object, spec: { ...object.spec, triggers: [{ ...trigger, metadata: { ...trigger.metadata, lagThreshold: 2 } }] } })).toBe(
      false,
    );
  });

  it('refuses to render without a monitoring endpoint, with min above max, or scaling to zero (the executor relays the queue it watches)', () => {
    const zero = helm([
      'template',
      releaseName,
      chartDir,
      ...valuesArgs({ set: { 'executor.keda.enabled': true, 'executor.keda.natsServerMonitoringEndpoint': 'nats:8222', 'executor.keda.minReplicaCount': 0 } }),
    ]);
    expect(zero.status).not.toBe(0);
    expect(zero.stderr).toMatch(/executor\.keda\.minReplicaCount: Must be greater than or equal to 1/);
    const missing = helm(['template', releaseName, chartDir, '--set', 'executor.keda.enabled=true']);
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toMatch(/executor.keda needs natsServerMonitoringEndpoint/);
    const inverted = helm([
      'template',
      releaseName,
      chartDir,
      ...valuesArgs({ set: { 'executor.keda.enabled': true, 'executor.keda.natsServerMonitoringEndpoint': 'nats:8222', 'executor.keda.minReplicaCount': 9 } }),
    ]);
    expect(inverted.stderr).toMatch(/minReplicaCount must not exceed maxReplicaCount/);
  });
});

describe('the pack store', () => {
  it('needs no volume at all by default: packs go to the NATS Object Store bucket', () => {
    for (const template of ['api-deployment.yaml', 'executor-deployment.yaml']) {
      const pod = one(defaults, template).spec.template.spec;
      expect(pod.volumes, template).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '256Mi' } }]);
      expect(pod.containers[0].volumeMounts, template).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    }
    expect(defaults.some((m) => m.kind === 'PersistentVolumeClaim' || JSON.stringify(m).includes('persistentVolumeClaim'))).toBe(false);
  });

  it('mounts a claim only for the filesystem store, and refuses a claim it would not use or a filesystem store without one', () => {
    expect(one(everything, 'api-deployment.yaml').spec.template.spec.volumes).toContainEqual({
      name: 'pack-store',
      persistentVolumeClaim: { claimName: 'mint-packs' },
    });
    const unused = helm(['template', releaseName, chartDir, '--set', 'packStore.existingClaim=packs']);
    expect(unused.status).not.toBe(0);
    expect(unused.stderr).toMatch(/packStore.existingClaim is only used with packStore.kind fs/);
    const bare = helm(['template', releaseName, chartDir, '--set', 'packStore.kind=fs']);
    expect(bare.status).not.toBe(0);
    expect(bare.stderr).toMatch(/packStore.kind fs needs packStore.existingClaim/);
  });
});

describe('executor-pdb.yaml', () => {
  it('selects the executor pods and accepts a percentage', () => {
    const pdb = one(everything, 'executor-pdb.yaml');
    expect(pdb.spec.maxUnavailable).toBe('25%');
    expect(pdb.spec.selector.matchLabels['app.kubernetes.io/component']).toBe('executor');
  });
});

describe('migrate-job.yaml', () => {
  const job = one(defaults, 'migrate-job.yaml');
  const migrate = container(job);

  it('is a pre-install/pre-upgrade hook that replaces its previous run and is removed on success', () => {
    expect(job.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    expect(migrate.args).toEqual(['migrate']);
    expect(job.spec.template.spec.restartPolicy).toBe('Never');
    expect(job.spec.backoffLimit).toBe(1);
  });

  it('uses only objects that exist before the release: the existing Secret and inline environment', () => {
    expect(migrate.envFrom).toEqual([{ secretRef: { name: 'minting' } }]);
    expect(envValue(migrate, 'LOG_LEVEL')).toBe('info');
    expect(job.spec.template.spec).not.toHaveProperty('serviceAccountName');
    expect(migrate.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
    const custom = one(everything, 'migrate-job.yaml');
    expect(custom.spec.template.spec.serviceAccountName).toBe('mint-migrator');
    expect(envValue(container(custom), 'NATS_STREAM')).toBe('PROD_JOBS');
    expect(custom.spec).not.toHaveProperty('ttlSecondsAfterFinished');
  });

  it('is left out when migrations are disabled', () => {
    expect(render({ set: { 'migrate.enabled': false } }).some((m) => m.template === 'migrate-job.yaml')).toBe(false);
  });
});

describe('networkpolicy.yaml', () => {
  it('admits the api port from the listed peers, nothing to the executor but scrapes, and DNS plus the listed egress', () => {
    const policies = everything.filter((m) => m.template === 'networkpolicy.yaml');
    expect(policies.map((p) => p.metadata.name)).toEqual(['mint-api', 'mint-executor']);
    const [api, executor] = policies as [Manifest, Manifest];
    expect(api.spec.podSelector.matchLabels['app.kubernetes.io/component']).toBe('api');
    expect(api.spec.ingress[0].ports).toEqual([
      { port: 'http', protocol: 'TCP' },
      { port: 'metrics', protocol: 'TCP' },
    ]);
    expect(api.spec.ingress[0].from).toHaveLength(2);
    expect(api.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(api.spec.egress[0].ports).toContainEqual({ port: 53, protocol: 'UDP' });
    expect(api.spec.egress[1].ports).toContainEqual({ port: 5432, protocol: 'TCP' });
    expect(executor.spec.ingress[0].from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);

    const closed = render({ set: { 'networkPolicy.enabled': true } }).filter((m) => m.template === 'networkpolicy.yaml');
    expect(closed[1]!.spec.ingress).toEqual([]);
    expect(closed[0]!.spec.policyTypes).toEqual(['Ingress']);
    expect(closed[0]!.spec.ingress[0]).not.toHaveProperty('from');
  });
});

describe('servicemonitor.yaml', () => {
  it('scrapes /metrics on the api Service port, with the labels Prometheus selects on', () => {
    const monitor = one(everything, 'servicemonitor.yaml');
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.metadata.labels).toMatchObject({ release: 'prometheus' });
    expect(monitor.spec.endpoints).toEqual([
      {
        port: 'metrics',
        path: '/metrics',
        interval: '15s',
        scrapeTimeout: '5s',
        authorization: { type: 'Bearer', credentials: { name: 'mint-prod-secrets', key: 'METRICS_TOKEN' } },
      },
    ]);
    const onApiPort = one(render({ set: { 'monitoring.serviceMonitor.enabled': 'true' } }), 'servicemonitor.yaml');
    expect(onApiPort.spec.endpoints).toEqual([{ port: 'http', path: '/metrics', interval: '30s', scrapeTimeout: '10s' }]);
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: ['mint'] });
    expect(one(everything, 'api-service.yaml').metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
  });
});

describe('executor-podmonitor.yaml', () => {
  it('scrapes the executor pods on their health port, only when the executor serves one', () => {
    const monitor = one(everything, 'executor-podmonitor.yaml');
    expect(monitor.kind).toBe('PodMonitor');
    expect(monitor.metadata.labels).toMatchObject({ release: 'prometheus' });
    expect(monitor.spec.podMetricsEndpoints).toEqual([{ port: 'http', path: '/metrics', interval: '15s', scrapeTimeout: '5s' }]);
    expect(one(everything, 'executor-deployment.yaml').spec.template.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(container(one(everything, 'executor-deployment.yaml')).ports).toEqual([{ name: 'http', containerPort: 9464, protocol: 'TCP' }]);
    const withoutPort = render({ ...full, set: { 'executor.healthPort': 'null' } });
    expect(withoutPort.some((m) => m.template === 'servicemonitor.yaml')).toBe(true);
    expect(withoutPort.some((m) => m.template === 'executor-podmonitor.yaml')).toBe(false);
  });
});

describe('NOTES.txt', () => {
  it('names the release objects, warns when the public base URL is unset, and says where packs are kept', () => {
    const notes = renderNotes();
    expect(notes).toContain('service/rel-minting-api');
    expect(notes).toContain('existing Secret "minting"');
    expect(notes).toContain('config.publicBaseUrl is empty');
    expect(notes).toContain('JetStream Object Store bucket MINT_JOBS_PACKS\nwith 1 replica(s)');
    const configured = renderNotes(full);
    expect(configured).toContain('3-12 pods, autoscaled');
    expect(configured).not.toContain('config.publicBaseUrl is empty');
    expect(configured).toContain('Export packs are kept on the claim mint-packs, mounted at /srv/packs.');
  });
});

describe('_helpers.tpl', () => {
  it('derives names from the release, honours overrides, and keeps them within DNS label length', () => {
    expect(one(defaults, 'api-deployment.yaml').metadata.name).toBe('rel-minting-api');
    expect(one(everything, 'api-deployment.yaml').metadata.name).toBe('mint-api');
    const long = render({ set: { fullnameOverride: 'x'.repeat(80) } });
    for (const m of long) expect(m.metadata.name.length, m.template).toBeLessThanOrEqual(63);
  });
});
