// Mint, follow, scan with @mint/client in Node (18+): submits a serial request, follows the job
// over WatchMintJob until it settles, lists the first units, resolves the first one's label URL at
// the public resolver, and registers a webhook endpoint (its signing secret is shown once), then
// removes it again. Run against `npm start`, with what its banner printed:
//
//   MINT_API_URL=http://localhost:8080 MINT_TOKEN=$TOKEN MINT_BRAND=<brand_id> MINT_PRODUCT=<product_id> node examples/node.mjs
import { randomUUID } from 'node:crypto';
import { ActivationMode, IdentityMode, MintJobStatus, createMintClient } from '@mint/client';

const { MINT_API_URL = 'http://localhost:8080', MINT_TOKEN, MINT_BRAND: brandId, MINT_PRODUCT: productId } = process.env;
if (!MINT_TOKEN || !brandId || !productId) throw new Error('set MINT_TOKEN, MINT_BRAND and MINT_PRODUCT (npm start prints them)');
const client = createMintClient({ baseUrl: MINT_API_URL, token: MINT_TOKEN });

const submitted = await client.mint.submitMintRequest({
  brandId,
  productId,
  requestedQuantity: 1000,
  idempotencyKey: randomUUID(),
  identityMode: IdentityMode.SERIAL,
  activationMode: ActivationMode.ACTIVE_AT_MINT,
});
if (!submitted.ok) throw new Error(`blocked: ${submitted.blockingReasons.map((r) => r.message).join('; ')}`);
console.log(`job ${submitted.mintJobId}`);

for await (const update of client.mint.watchMintJob({ brandId, mintJobId: submitted.mintJobId })) {
  console.log(`${MintJobStatus[update.status]} ${update.mintedQuantity}/${update.requestedQuantity}`);
}

const { units } = await client.mint.listMintUnits({ brandId, mintBatchId: submitted.mintBatchId, limit: 3 });
for (const unit of units) console.log(`unit ${unit.serial} ${unit.resolverUrl}`);

// A phone's browser is redirected to the passport page (or shown a page when none is set yet);
// asking for JSON shows what the resolver knows about the unit instead.
const scan = await fetch(units[0].resolverUrl, { headers: { accept: 'application/json' } });
const answer = await scan.json();
console.log(`scan: ${scan.status} unit ${answer.unit?.serial} ${answer.unit?.status} target=${answer.target ?? 'none'}`);

// A webhook endpoint receives the brand's events signed with its secret (see
// examples/webhook-receiver.mjs); this one is an example address, so it is removed again.
const { endpoint, secret } = await client.webhooks.createWebhookEndpoint({
  brandId,
  url: 'https://hooks.example.com/mint',
  eventTypes: ['mint_job_completed'],
});
console.log(`webhook endpoint ${endpoint.id} secret ${secret.slice(0, 10)}...`);
await client.webhooks.deleteWebhookEndpoint({ brandId, endpointId: endpoint.id });
console.log(`removed webhook endpoint ${endpoint.id}`);
