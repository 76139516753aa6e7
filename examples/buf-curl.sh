#!/usr/bin/env bash
# The same calls over gRPC with `buf curl` (grpcurl works alike), which reads the services from the
# API's server reflection: no copy of the protos needed. Needs the repository's buf (npx buf) and jq.
#
#   API=http://localhost:8080 TOKEN=... BRAND=<brand_id> PRODUCT=<product_id> examples/buf-curl.sh
set -euo pipefail
: "${API:=http://localhost:8080}" "${TOKEN:?set TOKEN (npm start prints it)}" "${BRAND:?set BRAND}" "${PRODUCT:?set PRODUCT}"
call() { npx buf curl --protocol grpc --http2-prior-knowledge -H "Authorization: Bearer $TOKEN" --reflect-header '*' -d "$2" "$API/$1"; }

npx buf curl --protocol grpc --http2-prior-knowledge --reflect-header "Authorization: Bearer $TOKEN" --list-services "$API"

job=$(call mint.v1.MintService/SubmitMintRequest "{\"brand_id\":\"$BRAND\",\"product_id\":\"$PRODUCT\",\"requested_quantity\":1000,
  \"identity_mode\":\"IDENTITY_MODE_SERIAL\",\"activation_mode\":\"ACTIVATION_MODE_ACTIVE_AT_MINT\"}")
job_id=$(jq -r .mintJobId <<<"$job"); batch_id=$(jq -r .mintBatchId <<<"$job")
echo "job $job_id"

# WatchMintJob is a server stream: one JSON message per update until the job settles.
call mint.v1.MintService/WatchMintJob "{\"brand_id\":\"$BRAND\",\"mint_job_id\":\"$job_id\"}"
url=$(call mint.v1.MintService/ListMintUnits "{\"brand_id\":\"$BRAND\",\"mint_batch_id\":\"$batch_id\",\"limit\":1}" | jq -r '.units[0].resolverUrl')
echo "scan $url"
curl -sS -H 'Accept: application/json' "$url" | jq -c '{unit: .unit.serial, status: .unit.status}'
call mint.v1.MintService/GetMintKpis "{\"brand_id\":\"$BRAND\"}"
