// A local webhook handler that verifies each delivery as Standard Webhooks describes, for
// `mintctl listen --forward-to http://localhost:3000/webhooks` (which prints the secret):
//
//   MINT_WEBHOOK_SECRET=whsec_... node examples/webhook-receiver.mjs [port]
//
// Answers 204 to a delivery whose signature verifies and 400 to any other (the service retries).
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.MINT_WEBHOOK_SECRET;
if (!secret) throw new Error('set MINT_WEBHOOK_SECRET to the secret mintctl listen printed');
const webhook = new Webhook(secret);
const port = Number(process.argv[2] ?? 3000);

createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks).toString('utf8'); // verify the raw body, before any JSON parsing
  try {
    const event = webhook.verify(body, {
      'webhook-id': req.headers['webhook-id'],
      'webhook-timestamp': req.headers['webhook-timestamp'],
      'webhook-signature': req.headers['webhook-signature'],
    });
    console.log(`verified ${event.type} ${event.data.entity_type} ${event.data.entity_id} ${JSON.stringify(event.data.payload)}`);
    res.writeHead(204).end();
  } catch (error) {
    console.log(`refused ${req.headers['webhook-id']}: ${error.message}`);
    res.writeHead(400).end();
  }
}).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/`));
