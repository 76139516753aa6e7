#!/usr/bin/env bash
# The same flow as node.mjs with curl and the Connect protocol's JSON: mint 1,000 serial units,
# follow the job to COMPLETED, list the first units, scan one at the public resolver, and
# register a webhook endpoint (its signing secret is printed once), then remove it again (it is an
# example address). Needs curl and jq.
#
#   API=http://localhost:8080 TOKEN=... BRAND=<brand_id> PRODUCT=<product_id> examples/curl.sh
set -euo pipefail
: "${API:=http://localhost:8080}" "${TOKEN:?set TOKEN (npm start prints it)}" "${BRAND:?set BRAND}" "${PRODUCT:?set PRODUCT}"
rpc() { curl -sS --fail-with-body "$API/$1" -H 'Content-Type: application/json' -H "Authorization: Bearer $TOKEN" -d "$2"; }

job=$(rpc mint.v1.MintService/SubmitMintRequest "{\"brand_id\":\"$BRAND\",\"product_id\":\"$PRODUCT\",\"requested_quantity\":1000,
  \"identity_mode\":\"serial\",\"activation_mode\":\"active_at_mint\",\"idempotency_key\":\"$(cat /proc/sys/kernel/random/uuid)\"}")
job_id=$(jq -r .mint_job_id <<<"$job"); batch_id=$(jq -r .mint_batch_id <<<"$job")
echo "job $job_id"

while :; do
  state=$(rpc mint.v1.MintService/GetMintJob "{\"brand_id\":\"$BRAND\",\"mint_job_id\":\"$job_id\"}")
  echo "$state" >&2
  case "$(jq -r .job.status <<<"$state")" in
    MINT_JOB_STATUS_COMPLETED) break ;;
    MINT_JOB_STATUS_FAILED) echo "job $job_id failed" >&2; exit 1 ;;
  esac
  sleep 0.5
done

url=$(rpc mint.v1.MintService/ListMintUnits "{\"brand_id\":\"$BRAND\",\"mint_batch_id\":\"$batch_id\",\"limit\":3}" | jq -r '.units[0].resolver_url')
echo "scan $url"
curl -sS -H 'Accept: application/json' "$url" | jq -c '{unit: .unit.serial, status: .unit.status, target}'

endpoint=$(rpc mint.v1.WebhookService/CreateWebhookEndpoint "{\"brand_id\":\"$BRAND\",\"url\":\"https://hooks.example.com/mint\",\"event_types\":[\"mint_job_completed\"]}")
jq -c '{endpoint: .endpoint.id, secret}' <<<"$endpoint"
rpc mint.v1.WebhookService/DeleteWebhookEndpoint "{\"brand_id\":\"$BRAND\",\"endpoint_id\":\"$(jq -r .endpoint.id <<<"$endpoint")\"}" >/dev/null
echo "removed endpoint $(jq -r .endpoint.id <<<"$endpoint")"
