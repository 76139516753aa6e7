// The browser flow with @mint/client: reads the token and brand from the page's #fragment (never
// sent to a server), submits 100 serial units and shows the job's progress as WatchMintJob streams it.
import { ActivationMode, IdentityMode, MintJobStatus, createMintClient } from '@mint/client';

const params = new URLSearchParams(location.hash.slice(1));
const brandId = params.get('brand');
const client = createMintClient({ baseUrl: params.get('api') ?? 'http://localhost:8080', token: params.get('token') });
const log = (line) => (document.getElementById('log').textContent += `${line}\n`);

document.getElementById('mint').addEventListener('click', async () => {
  try {
    const job = await client.mint.submitMintRequest({
      brandId,
      productId: document.getElementById('product').value.trim(),
      requestedQuantity: 100,
      identityMode: IdentityMode.SERIAL,
      activationMode: ActivationMode.ACTIVE_AT_MINT,
      idempotencyKey: crypto.randomUUID(),
    });
    if (!job.ok) return log(`blocked: ${job.blockingReasons.map((r) => r.message).join('; ')}`);
    for await (const update of client.mint.watchMintJob({ brandId, mintJobId: job.mintJobId })) {
      log(`${MintJobStatus[update.status]} ${update.mintedQuantity}/${update.requestedQuantity}`);
    }
  } catch (error) {
    log(String(error));
  }
});
