// `mintctl passport ...`: a product's passport through a running API (PassportService over
// @mint/client), as any client would: read, edit the draft from a JSON file, publish, list and read
// versions, import a JSON document of many levels, and issue, list and revoke access credentials.
// Output is JSON, one document per command.

import { readFileSync } from 'node:fs';
import { createMintClient, PassportAccessClass } from '@mint/client';
import { UsageError, type Print } from './admin.ts';
import { resolveRemote, type RemoteOptions } from './remote.ts';

/** Options of `mintctl passport`. */
export interface PassportOptions extends RemoteOptions {
  readonly product?: string;
  readonly lot?: string;
  readonly serial?: string;
  /** A JSON file: the content (edit) or the import document (import); '-' reads stdin. */
  readonly file?: string;
  readonly version?: string;
  readonly publish: boolean;
  readonly name?: string;
  /** legitimate_interest or authority. */
  readonly accessClass?: string;
  /** Days a credential is valid. */
  readonly days?: string;
  readonly id?: string;
  /** The logo's https URL of `style` ('' removes it). */
  readonly logo?: string;
  /** The colour of `style`, #rrggbb ('' removes it). */
  readonly colour?: string;
}

const usage =
  'passport get|edit|publish|versions|version|import|issue-key|keys|revoke-key|style [--logo url] [--colour #rrggbb] --product <id> [--lot L | --serial S] [--file f.json] [--version n] [--publish] [--name n --class legitimate_interest|authority --days n] [--id key]';

function readJson(file: string | undefined): unknown {
  if (!file) throw new UsageError('needs --file <content.json> (- for stdin)');
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`--file is not JSON: ${(error as Error).message}`);
  }
}

/** Prints a message as JSON (protobuf messages through their JSON-ish shape: bigint as text, timestamps as ISO). */
function printJson(print: Print, value: unknown): void {
  print(
    JSON.stringify(
      value,
      (_key, v: unknown) => {
        if (typeof v === 'bigint') return String(v);
        if (v !== null && typeof v === 'object' && '$typeName' in v && (v as { $typeName: string }).$typeName === 'google.protobuf.Timestamp') {
          const t = v as unknown as { seconds: bigint; nanos: number };
          return new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6)).toISOString();
        }
        if (v !== null && typeof v === 'object' && '$typeName' in v) {
          const { $typeName: _t, $unknown: _u, ...rest } = v as Record<string, unknown>;
          return rest;
        }
        return v;
      },
      2,
    ),
  );
}

/** `mintctl passport <action> ...`; see {@link usage}. */
export async function passportCommand(action: string, options: PassportOptions, print: Print, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const remote = resolveRemote(options, env);
  if (!remote.brand) throw new UsageError('--brand is required (or log in with one: `mintctl login --brand <id>`)');
  const brandId = remote.brand;
  const { passports } = createMintClient({ baseUrl: remote.api, token: remote.token });
  const product = () =>
    options.product ??
    (() => {
      throw new UsageError(`passport ${action} needs --product <id>`);
    })();
  const key = () => ({ brandId, productId: product(), ...(options.lot ? { lot: options.lot } : {}), ...(options.serial ? { serial: options.serial } : {}) });
  switch (action) {
    case 'get':
      return printJson(print, await passports.getPassport(key()));
    case 'edit': {
      const edited = await passports.updatePassportDraft({ ...key(), content: readJson(options.file) as never });
      if (!options.publish) return printJson(print, edited);
      return printJson(print, await passports.publishPassport({ ...key(), expectedRevision: edited.draft?.revision }));
    }
    case 'publish':
      return printJson(print, await passports.publishPassport(key()));
    case 'versions':
      return printJson(print, await passports.listPassportVersions({ ...key(), limit: 100 }));
    case 'version': {
      const version = Number(options.version);
      if (!Number.isInteger(version) || version < 1) throw new UsageError('passport version needs --version <n>');
      return printJson(print, await passports.getPassportVersion({ ...key(), version }));
    }
    case 'import': {
      const doc = readJson(options.file) as { entries?: unknown };
      const entries = Array.isArray(doc) ? doc : Array.isArray(doc.entries) ? doc.entries : null;
      if (entries === null)
        throw new UsageError('the import file must be an array of entries, or {"entries": [...]}, each {product_id|gtin, lot?, serial?, content}');
      return printJson(
        print,
        await passports.importPassports({
          brandId,
          publish: options.publish,
          entries: (entries as Record<string, unknown>[]).map((e) => ({
            productId: String(e['product_id'] ?? ''),
            gtin: String(e['gtin'] ?? ''),
            lot: String(e['lot'] ?? ''),
            serial: String(e['serial'] ?? ''),
            content: e['content'] as never,
          })),
        }),
      );
    }
    case 'issue-key': {
      const classes: Record<string, PassportAccessClass> = {
        legitimate_interest: PassportAccessClass.LEGITIMATE_INTEREST,
        authority: PassportAccessClass.AUTHORITY,
      };
      const accessClass = classes[options.accessClass ?? ''];
      if (accessClass === undefined) throw new UsageError('--class must be legitimate_interest or authority');
      const days = Number(options.days ?? '90');
      if (!Number.isInteger(days) || days < 1 || days > 366) throw new UsageError('--days must be a whole number from 1 to 366');
      return printJson(
        print,
        await passports.issuePassportAccessKey({
          brandId,
          name: options.name ?? '',
          accessClass,
          expiresAt: { seconds: BigInt(Math.floor(Date.now() / 1000) + days * 86_400), nanos: 0 },
        }),
      );
    }
    case 'style':
      return printJson(print, await passports.setPassportStyle({ brandId, logoUrl: options.logo ?? '', colour: options.colour ?? '' }));
    case 'keys':
      return printJson(print, await passports.listPassportAccessKeys({ brandId }));
    case 'revoke-key':
      if (!options.id) throw new UsageError('passport revoke-key needs --id <credential id>');
      return printJson(print, await passports.revokePassportAccessKey({ brandId, credentialId: options.id }));
    default:
      throw new UsageError(usage);
  }
}
