{{/*
The chart name, truncated to the 63 characters a label value allows.
*/}}
{{- define "minting.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release-scoped base name every object name starts with. Component names
(`-api`, `-executor`, `-migrate`) are appended, so it is kept to 52 characters.
*/}}
{{- define "minting.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Labels on every object. Call with (dict "root" $ "component" "api").
*/}}
{{- define "minting.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "minting.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: minting
{{- end }}

{{/*
Labels that select one component's pods; never change them on upgrade (selectors are immutable).
Call with (dict "root" $ "component" "api"); an empty component selects the whole release.
*/}}
{{- define "minting.selectorLabels" -}}
app.kubernetes.io/name: {{ include "minting.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end }}

{{/*
The ServiceAccount the API and executor pods run as.
*/}}
{{- define "minting.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "minting.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The container image reference; the tag defaults to the chart's appVersion.
*/}}
{{- define "minting.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag | toString) }}
{{- end }}

{{/*
The ConfigMap holding the non-secret environment.
*/}}
{{- define "minting.configMapName" -}}
{{- printf "%s-config" (include "minting.fullname" .) }}
{{- end }}

{{/*
The non-secret environment as key: value lines; shared by the ConfigMap and the migrate
hook Job (which runs before the ConfigMap exists on first install).
*/}}
{{- define "minting.configEnv" -}}
LOG_LEVEL: {{ .Values.config.logLevel | quote }}
NATS_STREAM: {{ .Values.config.natsStream | quote }}
NATS_SUBJECT_PREFIX: {{ .Values.config.natsSubjectPrefix | quote }}
NATS_REPLICAS: {{ .Values.config.natsReplicas | toString | quote }}
PACK_STORE: {{ include "minting.packStoreKind" . | quote }}
EXECUTOR_CONCURRENCY: {{ .Values.config.executorConcurrency | toString | quote }}
PACK_CONCURRENCY: {{ .Values.config.packConcurrency | toString | quote }}
PACK_CONCURRENCY_PER_BRAND: {{ .Values.config.packConcurrencyPerBrand | toString | quote }}
IMPORT_CONCURRENCY_PER_BRAND: {{ .Values.config.importConcurrencyPerBrand | toString | quote }}
MINT_CHUNK_SIZE: {{ .Values.config.chunkSize | toString | quote }}
{{- with .Values.config.publicBaseUrl }}
PUBLIC_BASE_URL: {{ . | quote }}
{{- end }}
{{- with .Values.config.authJwtIssuer }}
AUTH_JWT_ISSUER: {{ . | quote }}
{{- end }}
{{- with .Values.config.authJwtAudience }}
AUTH_JWT_AUDIENCE: {{ . | quote }}
{{- end }}
{{- with .Values.config.consoleOidcIssuer }}
CONSOLE_OIDC_ISSUER: {{ . | quote }}
{{- end }}
{{- with .Values.config.consoleOidcClientId }}
CONSOLE_OIDC_CLIENT_ID: {{ . | quote }}
{{- end }}
{{- with .Values.config.resolverContact }}
RESOLVER_CONTACT: {{ . | quote }}
{{- end }}
{{- with .Values.config.cachePurgeUrl }}
CACHE_PURGE_URL: {{ . | quote }}
{{- end }}
{{- if not (kindIs "invalid" .Values.config.resolverLastKnownUnits) }}
RESOLVER_LAST_KNOWN_UNITS: {{ .Values.config.resolverLastKnownUnits | toString | quote }}
{{- end }}
{{- with .Values.config.executorLeaseMs }}
EXECUTOR_LEASE_MS: {{ . | toString | quote }}
{{- end }}
{{- with .Values.config.natsAckWaitMs }}
NATS_ACK_WAIT_MS: {{ . | toString | quote }}
{{- end }}
{{- /* 0 is a value here (keep every scan event), so only null leaves the variable out. */}}
{{- if not (kindIs "invalid" .Values.config.scanEventRetentionDays) }}
SCAN_EVENT_RETENTION_DAYS: {{ .Values.config.scanEventRetentionDays | toString | quote }}
{{- end }}
{{- if eq (include "minting.packStoreKind" .) "fs" }}
PACK_STORE_DIR: {{ .Values.packStore.mountPath | quote }}
{{- end }}
{{- /* The API's limits and settings; null leaves a variable out (the process default), 0 is a value. */}}
{{- $api := .Values.api }}
{{- $integers := dict
  "AUTH_JWT_MAX_LIFETIME_SECONDS" .Values.config.authJwtMaxLifetimeSeconds
  "RPC_MAX_BODY_BYTES" $api.limits.rpcMaxBodyBytes
  "IMPORT_MAX_BODY_BYTES" $api.limits.importMaxBodyBytes
  "HTTP_HEADERS_TIMEOUT_MS" $api.limits.httpHeadersTimeoutMs
  "HTTP_REQUEST_TIMEOUT_MS" $api.limits.httpRequestTimeoutMs
  "HTTP_IDLE_TIMEOUT_MS" $api.limits.httpIdleTimeoutMs
  "HTTP_BODY_TIMEOUT_MS" $api.limits.httpBodyTimeoutMs
  "HTTP2_MAX_CONCURRENT_STREAMS" $api.limits.http2MaxConcurrentStreams
  "WATCH_MAX_DURATION_MS" $api.limits.watchMaxDurationMs
  "WATCH_MAX_STREAMS_PER_CALLER" $api.limits.watchMaxStreamsPerCaller
  "RATE_LIMIT_PER_CREDENTIAL" $api.rateLimits.perCredential
  "RATE_LIMIT_RESOLVER_PER_ADDRESS" $api.rateLimits.resolverPerAddress
  "RATE_LIMIT_DOWNLOADS_PER_ADDRESS" $api.rateLimits.downloadsPerAddress
  "RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS" $api.rateLimits.authFailuresPerAddress
  "SCAN_FLOOD_WINDOW_MS" $api.scanFlood.windowMs
  "SCAN_FLOOD_NEVER_ISSUED_PER_WINDOW" $api.scanFlood.neverIssuedPerWindow
  "SCAN_FLOOD_MAX_TRACKED" $api.scanFlood.maxTracked
  "METRICS_PORT" $api.metrics.port }}
{{- range $name, $value := $integers }}
{{- if not (kindIs "invalid" $value) }}
{{ $name }}: {{ $value | int64 | toString | quote }}
{{- end }}
{{- end }}
{{- with $api.corsAllowedOrigins }}
CORS_ALLOWED_ORIGINS: {{ join "," . | quote }}
{{- end }}
{{- with $api.trustedProxies }}
TRUSTED_PROXIES: {{ join "," . | quote }}
{{- end }}
{{- with $api.scanCountryHeader }}
SCAN_COUNTRY_HEADER: {{ . | quote }}
{{- end }}
{{- with $api.controlPlaneHosts }}
CONTROL_PLANE_HOSTS: {{ join "," . | quote }}
{{- end }}
{{- with $api.brandDomainDelegatedZones }}
BRAND_DOMAIN_DELEGATED_ZONES: {{ join "," . | quote }}
{{- end }}
{{- if $api.reflectionAllowAnonymous }}
REFLECTION_ALLOW_ANONYMOUS: "true"
{{- end }}
{{- if $api.setMintBatchStatusEnabled }}
ENABLE_SET_MINT_BATCH_STATUS: "true"
{{- end }}
{{- range $key, $value := .Values.config.extraEnv }}
{{ $key }}: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/*
Pod-level settings shared by every workload: pull secrets, security context, scheduling.
Call with (dict "root" $ "component" .Values.api).
*/}}
{{- define "minting.podCommon" -}}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .component.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .component.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .component.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .component.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .component.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end }}

{{/*
The pack store kind ("nats" or "fs"), refusing a combination that cannot work: "fs" without a
claim (the read-only root filesystem has nowhere to put packs) or a claim with "nats" (unused).
*/}}
{{- define "minting.packStoreKind" -}}
{{- $ps := .Values.packStore }}
{{- if and (eq $ps.kind "fs") (not $ps.existingClaim) }}
{{- fail "packStore.kind fs needs packStore.existingClaim (a ReadWriteMany claim when the api and executor run on several nodes)" }}
{{- end }}
{{- if and (eq $ps.kind "nats") $ps.existingClaim }}
{{- fail "packStore.existingClaim is only used with packStore.kind fs; the nats pack store needs no volume" }}
{{- end }}
{{- $ps.kind }}
{{- end }}

{{/*
The writable scratch volume every container mounts at /tmp (the root filesystem is read-only),
plus the pack store claim when packs live on a volume (packStore.kind fs) and the pod wants it (withPackStore).
*/}}
{{- define "minting.volumes" -}}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: {{ .root.Values.tmpSizeLimit }}
{{- if and .withPackStore (eq (include "minting.packStoreKind" .root) "fs") }}
  - name: pack-store
    persistentVolumeClaim:
      claimName: {{ .root.Values.packStore.existingClaim }}
{{- end }}
{{- end }}

{{/*
The volume mounts matching minting.volumes.
*/}}
{{- define "minting.volumeMounts" -}}
volumeMounts:
  - name: tmp
    mountPath: /tmp
{{- if and .withPackStore (eq (include "minting.packStoreKind" .root) "fs") }}
  - name: pack-store
    mountPath: {{ .root.Values.packStore.mountPath }}
    {{- with .root.Values.packStore.subPath }}
    subPath: {{ . }}
    {{- end }}
{{- end }}
{{- end }}

{{/*
Egress rules of the NetworkPolicies: DNS, then networkPolicy.egress.
*/}}
{{- define "minting.egress" -}}
- ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
{{ toYaml .Values.networkPolicy.egress }}
{{- end }}
