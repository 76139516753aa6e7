// temporary: CPU profile of the API under the submit load (not committed)
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { seedDemo } from '@mint/usecases';
import { createStack } from './services.ts';
const stack = await createStack('prof_submit');
try {
  const seed = await seedDemo(stack.ctx);
  const api = await stack.start('api', { NODE_OPTIONS: '--cpu-prof --cpu-prof-dir=/tmp/limit-prof' });
  const body = () => JSON.stringify({ brand_id: seed.brand_id, product_id: seed.product_id, requested_quantity: 10,
    identity_mode: 'IDENTITY_MODE_SERIAL', activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT', idempotency_key: randomUUID() });
  const r = await new Promise<autocannon.Result>((resolve, reject) => autocannon({ url: `http://127.0.0.1:${api.port}`, connections: 16, duration: 8,
    requests: [{ method: 'POST', path: '/mint.v1.MintService/SubmitMintRequest', headers: { 'content-type': 'application/json', authorization: `Bearer ${seed.access_token}` }, setupRequest: (req) => ({ ...req, body: body() }) }] },
    (e, res) => (e ? reject(e) : resolve(res))));
  console.log('rps', r.requests.average);
} finally { await stack.close(); }
