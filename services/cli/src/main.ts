/**
 * mintctl: administration and the one-process dev mode. Reads the same environment as the
 * services (DATABASE_URL, or the embedded database under DATA_DIR when unset).
 *
 *   mintctl migrate
 *   mintctl seed-demo [--json]
 *   mintctl token issue --user <uuid> [--ttl <seconds>]
 *   mintctl apikey create --brand <uuid> [--name <n>] [--scopes mint:write,mint:read,...]
 *   mintctl apikey list --brand <uuid>
 *   mintctl apikey revoke --brand <uuid> --id <key id>
 *   mintctl workspace enable-api|disable-api --brand <uuid>
 *   mintctl dev            API and executor in one process (npm start)
 *   mintctl signin         a fresh console link and token for the dev server's demo user
 *   mintctl passport rotate-signing-key   a new key signs passport credentials; the old one stays in did.json
 *   mintctl scans ship-log a caching proxy's log of cache hits (stdin, one line each) into the scan ledger
 *
 * and, against a running API (remote.ts; --api, --token, --brand, else MINT_API_URL, MINT_TOKEN,
 * MINT_BRAND, else what `login` kept):
 *
 *   mintctl login [--api <url>] --token <token> [--brand <uuid>]
 *   mintctl mint --product <uuid> --quantity <n> [--mode serial|batch] [--activation active_at_mint|first_scan] [--watch]
 *   mintctl listen --forward-to <url> [--events a,b] [--port <n>]
 *   mintctl passport get|edit|publish|versions|version|import|issue-key|keys|revoke-key --product <uuid> [--lot L | --serial S] [--file f.json] [--publish] ...
 *   mintctl serials <encode|commission|scrap|decommission|reactivate|return> (--serials A,B | --batch <uuid> [--from n] [--to n] | --container <sscc>) [--reason r] [--key k]
 *   mintctl container-settings [--prefix <GS1 company prefix>] [--max-depth n]
 *   mintctl mint-containers --level case|pallet|... --count n [--extension d] [--key k]
 *   mintctl pack|unpack --sscc <sscc> [--serials A,B] [--ssccs X,Y] [--key k]
 *
 * partner allocation (partner.ts): the brand's side against the database, the partner's side with its
 * partner key (--api-key or MINT_API_KEY) against a running API:
 *
 *   mintctl partner create --brand <uuid> --name <n>
 *   mintctl partner grant --brand <uuid> --partner <uuid> (--product <uuid> | --batch <uuid>) --quota <n> [--name n]
 *   mintctl partner list|revoke --brand <uuid> [--id <key id>]
 *   mintctl partner allocate --quantity <n> [--key k]        (partner key; prints one serial a line)
 *   mintctl partner encode|commission|scrap|return --serials A,B [--key k]   (partner key)
 *   mintctl partner return-unused [--key k]                   (partner key: every unused serial of its allocation)
 *   mintctl partner status                                    (partner key: its grant)
 */
import { parseArgs } from 'node:util';
import { assertMigrated, loadConfig, openConfiguredDatabase, resolveJwtSecret } from '@mint/runtime';
import { createUseCaseContext, rotatePassportSigningKey } from '@mint/usecases';
import { apiKeyCommand, migrateCommand, seedDemoCommand, shipLogCommand, tokenIssueCommand, UsageError, workspaceCommand } from './admin.ts';
import { runDev, signInCommand } from './dev.ts';
import { containerCommand } from './containers.ts';
import { partnerAdminCommand, partnerRemoteCommand } from './partner.ts';
import { passportCommand } from './passport.ts';
import { listenCommand, loginCommand, mintCommand, serialsCommand } from './remote.ts';

const usage = `usage: mintctl <migrate | seed-demo [--json] | token issue --user <id> [--ttl <s>] |
  apikey create|list|revoke --brand <id> [--name n] [--scopes a,b] [--id key] |
  workspace enable-api|disable-api --brand <id> | dev | signin | scans ship-log | passport rotate-signing-key |
  login [--api url] --token t [--brand id] |
  mint --product id --quantity n [--mode serial|batch] [--activation active_at_mint|first_scan] [--product-batch id] [--watch] |
  listen --forward-to url [--events a,b] [--port n] |
  passport get|edit|publish|versions|version|import|issue-key|keys|revoke-key --product id [--lot L | --serial S] [--file f.json] [--version n] [--publish]
    [--name n --class legitimate_interest|authority --days n] [--id credential] | passport style [--logo url] [--colour #rrggbb] |
  serials encode|commission|scrap|decommission|reactivate|return (--serials A,B | --batch id [--from n] [--to n] | --container sscc) [--reason r] [--key k] |
  container-settings [--prefix P] [--max-depth n] | mint-containers --level case --count n [--extension d] [--key k] |
  pack|unpack --sscc S [--serials A,B] [--ssccs X,Y] [--key k] |
  partner create|grant|list|revoke --brand id [--name n] [--partner id (--product id | --batch id) --quota n] [--id key] |
  partner allocate|encode|commission|scrap|return|return-unused|status --api-key k --api url --brand id [--quantity n] [--serials A,B] [--key k]>`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    json: { type: 'boolean', default: false },
    user: { type: 'string' },
    ttl: { type: 'string', default: '86400' },
    brand: { type: 'string' },
    name: { type: 'string' },
    scopes: { type: 'string' },
    id: { type: 'string' },
    api: { type: 'string' },
    token: { type: 'string' },
    product: { type: 'string' },
    quantity: { type: 'string' },
    mode: { type: 'string' },
    activation: { type: 'string' },
    'product-batch': { type: 'string' },
    watch: { type: 'boolean', default: false },
    'forward-to': { type: 'string' },
    events: { type: 'string' },
    port: { type: 'string' },
    lot: { type: 'string' },
    serial: { type: 'string' },
    file: { type: 'string' },
    version: { type: 'string' },
    publish: { type: 'boolean', default: false },
    class: { type: 'string' },
    logo: { type: 'string' },
    colour: { type: 'string' },
    days: { type: 'string' },
    serials: { type: 'string' },
    batch: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    reason: { type: 'string' },
    key: { type: 'string' },
    container: { type: 'string' },
    prefix: { type: 'string' },
    'max-depth': { type: 'string' },
    level: { type: 'string' },
    count: { type: 'string' },
    extension: { type: 'string' },
    sscc: { type: 'string' },
    ssccs: { type: 'string' },
    partner: { type: 'string' },
    quota: { type: 'string' },
    'api-key': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

const print = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const [command, action] = positionals;
  if (values.help || !command) {
    print(usage);
    return;
  }
  const remote = { api: values.api, token: values.token, brand: values.brand };
  if (command === 'login') return loginCommand(remote, print);
  if (command === 'mint') {
    return mintCommand(
      {
        ...remote,
        product: values.product,
        quantity: values.quantity,
        mode: values.mode,
        activation: values.activation,
        productBatch: values['product-batch'],
        watch: values.watch,
      },
      print,
    );
  }
  if (command === 'passport' && action !== 'rotate-signing-key') {
    return passportCommand(
      action ?? '',
      {
        ...remote,
        product: values.product,
        lot: values.lot,
        serial: values.serial,
        file: values.file,
        version: values.version,
        publish: values.publish,
        name: values.name,
        accessClass: values.class,
        days: values.days,
        id: values.id,
        logo: values.logo,
        colour: values.colour,
      },
      print,
    );
  }
  if (command === 'serials') {
    return serialsCommand(
      {
        ...remote,
        action,
        serials: values.serials,
        batch: values.batch,
        from: values.from,
        to: values.to,
        container: values.container,
        reason: values.reason,
        key: values.key,
      },
      print,
    );
  }
  if (command === 'container-settings' || command === 'mint-containers' || command === 'pack' || command === 'unpack') {
    return containerCommand(
      command,
      {
        ...remote,
        prefix: values.prefix,
        maxDepth: values['max-depth'],
        level: values.level,
        count: values.count,
        extension: values.extension,
        sscc: values.sscc,
        serials: values.serials,
        ssccs: values.ssccs,
        key: values.key,
      },
      print,
    );
  }
  if (command === 'partner' && !['create', 'grant', 'list', 'revoke'].includes(action ?? '')) {
    return partnerRemoteCommand(
      action ?? '',
      { api: values.api, apiKey: values['api-key'], brand: values.brand, quantity: values.quantity, serials: values.serials, key: values.key },
      print,
    );
  }
  if (command === 'listen') return listenCommand({ ...remote, forwardTo: values['forward-to'], events: values.events, port: values.port }, print);
  const config = loadConfig();
  if (command === 'dev') return runDev(config);
  const db = await openConfiguredDatabase(config, { applicationName: 'mintctl', poolSize: 2 });
  try {
    if (command === 'migrate') return await migrateCommand(db, print);
    await assertMigrated(db);
    const ctx = createUseCaseContext({
      db,
      publicBaseUrl: config.publicBaseUrl,
      jwtSecret: await resolveJwtSecret(config),
      webhookSecretKeys: config.webhookSecretKeys ?? [],
      jwtIssuer: config.authJwtIssuer ?? null,
      jwtAudience: config.authJwtAudience ?? null,
      jwksUrl: config.authJwksUrl ?? null,
      jwtMaxLifetimeSeconds: config.authJwtMaxLifetimeSeconds,
    });
    const brand = () =>
      values.brand ??
      (() => {
        throw new UsageError('--brand is required');
      })();
    switch (command) {
      case 'seed-demo':
        return await seedDemoCommand(ctx, values.json, print);
      case 'token':
        if (action !== 'issue' || !values.user) throw new UsageError('token issue needs --user');
        return await tokenIssueCommand(ctx, values.user, Number(values.ttl), print);
      case 'apikey':
        return await apiKeyCommand(ctx, action ?? '', { brand: brand(), name: values.name, scopes: values.scopes, id: values.id }, print);
      case 'workspace':
        return await workspaceCommand(ctx, action ?? '', brand(), print);
      case 'partner':
        return await partnerAdminCommand(
          ctx,
          action ?? '',
          {
            brand: brand(),
            name: values.name,
            partner: values.partner,
            product: values.product,
            batch: values.batch,
            quota: values.quota,
            id: values.id,
          },
          print,
        );
      case 'signin':
        return await signInCommand(ctx, config, print);
      case 'passport':
        print(`passport credentials are now signed with key ${await rotatePassportSigningKey(ctx)}`);
        return;
      case 'scans':
        if (action !== 'ship-log') throw new UsageError('scans needs ship-log');
        return await shipLogCommand(ctx, process.stdin, print);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    await db.close();
  }
}

try {
  await main();
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`mintctl: ${message}\n${error instanceof UsageError ? `${usage}\n` : ''}`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
