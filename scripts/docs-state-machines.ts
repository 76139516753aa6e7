// Renders docs/concepts/state-machines.md from the domain's own status lists and move rules
// (packages/domain/src: job-status.ts, batch-status.ts, pack-status.ts, modes.ts,
// product-import.ts), so the page cannot drift from the code. Each status's meaning is its doc
// comment in the source. scripts/docs-generate.ts writes it.

import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { batchStatuses, canMoveBatch, type BatchStatus } from '../packages/domain/src/batch-status.ts';
import { canMoveJob, jobStatuses, terminalJobStatuses } from '../packages/domain/src/job-status.ts';
import { activationModes, initialUnitStatus, unitStatuses } from '../packages/domain/src/modes.ts';
import { movePack, packStatuses } from '../packages/domain/src/pack-status.ts';
import { finishImport, importStatuses, startImport } from '../packages/domain/src/product-import.ts';
import {
  activeDelta,
  commissionSerials,
  decommissionSerials,
  encodeSerials,
  mintedSerialState,
  reactivateSerials,
  returnSerials,
  scrapSerials,
  serialStates,
} from '../packages/domain/src/serial-state.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface Machine {
  readonly title: string;
  readonly source: string;
  readonly intro: string;
  readonly statuses: readonly string[];
  readonly initial: readonly { readonly to: string; readonly label?: string }[];
  readonly moves: readonly { readonly from: string; readonly to: string; readonly label?: string }[];
  readonly final: readonly string[];
}

/** The doc comment of each member of a string-literal union type in a domain source file. */
function statusComments(file: string, typeName: string): Map<string, string> {
  const text = readFileSync(join(root, 'packages/domain/src', file), 'utf8');
  const start = text.indexOf(`export type ${typeName} =`);
  if (start < 0) throw new Error(`${file}: no type ${typeName}`);
  const end = text.indexOf('\nexport', start + 1);
  const body = text.slice(start, end < 0 ? undefined : end);
  const comments = new Map<string, string>();
  for (const m of body.matchAll(/\/\*\*([\s\S]*?)\*\/\s*\|\s*'([^']+)'/g)) {
    comments.set(
      m[2]!,
      m[1]!
        .replace(/\n\s*\*\s?/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
  }
  return comments;
}

/** Every legal pair of a machine's statuses, by asking the domain's own rule. */
function pairs(statuses: readonly string[], legal: (from: string, to: string) => boolean) {
  const out: { from: string; to: string }[] = [];
  for (const from of statuses) for (const to of statuses) if (legal(from, to)) out.push({ from, to });
  return out;
}

function packMoveLegal(from: string, to: string): boolean {
  try {
    movePack(from as never, to as never);
    return true;
  } catch {
    return false;
  }
}

/** Every serial move, as the domain defines them (decommission with a reason that may be reactivated). */
const serialMoves = () => [encodeSerials(), commissionSerials(), scrapSerials(), returnSerials(), decommissionSerials('recalled'), reactivateSerials()];

/**
 * The unit status moves: ActivateMintUnits, and each serial move that changes whether the serial is
 * in circulation (the domain's `activeDelta`: the unit is `active` exactly while commissioned).
 */
function unitMoves(): { from: string; to: string; label: string }[] {
  const moves = [{ from: 'inactive', to: 'active', label: 'ActivateMintUnits' }];
  for (const move of serialMoves()) {
    const delta = activeDelta(move);
    if (delta !== 0)
      moves.push(
        delta > 0
          ? { from: 'inactive', to: 'active', label: `MoveSerials ${move.action}` }
          : { from: 'active', to: 'inactive', label: `MoveSerials ${move.action}` },
      );
  }
  return moves;
}

function machines(): Machine[] {
  const importMoves = [
    ...startImport().from.map((from) => ({ from, to: startImport().to })),
    ...(['COMPLETED', 'FAILED'] as const).flatMap((outcome) => finishImport(outcome).from.map((from) => ({ from, to: finishImport(outcome).to }))),
  ];
  return [
    {
      title: 'Mint job',
      source: 'packages/domain/src/job-status.ts',
      intro: 'A mint job is one accepted request to mint; the executor moves it. A passing preflight creates a `PREFLIGHTED` job, a submit a `QUEUED` one.',
      statuses: jobStatuses,
      initial: [
        { to: 'PREFLIGHTED', label: 'preflight' },
        { to: 'QUEUED', label: 'submit' },
      ],
      moves: pairs(jobStatuses, (f, t) => canMoveJob(f as never, t as never)),
      final: terminalJobStatuses,
    },
    {
      title: 'Mint batch',
      source: 'packages/domain/src/batch-status.ts',
      intro: 'A mint batch holds what one job minted and follows its labels through their life; it is created `draft` with its job.',
      statuses: batchStatuses,
      initial: [{ to: 'draft', label: 'submit' }],
      moves: pairs(batchStatuses, (f, t) => canMoveBatch(f as BatchStatus, t as BatchStatus)),
      final: batchStatuses.filter((s) => !batchStatuses.some((t) => canMoveBatch(s, t))),
    },
    {
      title: 'Unit',
      source: 'packages/domain/src/modes.ts',
      intro:
        "A unit is one minted identity of a serial batch. Its first status comes from the request's activation mode; `ActivateMintUnits` (or the console's Activate) makes inactive units active, and a serial move that puts its serial in or out of circulation (see Serial below) makes it active or inactive. A voided batch's units keep their status but answer 410 at the resolver.",
      statuses: unitStatuses,
      initial: activationModes.map((mode) => ({ to: initialUnitStatus(mode), label: mode })),
      moves: unitMoves(),
      final: [],
    },
    {
      title: 'Serial',
      source: 'packages/domain/src/serial-state.ts',
      intro:
        "A serial's lifecycle after minting, named after OPEN-SCS; `MoveSerials` moves it by list, batch or seq range, and `commissioned` is exactly what `active_tokens` counts (the unit's status is `active` exactly then). Decommissioning keeps a reason (recalled, destroyed, stolen, expired, damaged, sample, consumed); only recalled and stolen may be reactivated.",
      statuses: serialStates,
      initial: activationModes.map((mode) => ({ to: mintedSerialState(initialUnitStatus(mode)), label: mode })),
      moves: serialMoves().flatMap((m) => m.from.map((from) => ({ from, to: m.to, label: m.action }))),
      final: ['scrapped', 'returned'],
    },
    {
      title: 'Payload pack',
      source: 'packages/domain/src/pack-status.ts',
      intro:
        "A payload pack is a batch's export files. It is created `pending` (at the job's completion, on request, or on void); the executor's pack worker generates it. `generating -> generating` is another worker's claim after a lapsed lease.",
      statuses: packStatuses,
      initial: [{ to: 'pending' }],
      moves: pairs(packStatuses, packMoveLegal),
      final: packStatuses.filter((s) => !packStatuses.some((t) => packMoveLegal(s, t))),
    },
    {
      title: 'Product import',
      source: 'packages/domain/src/product-import.ts',
      intro: "A product CSV import; only the executor's import worker moves it. `PROCESSING -> PROCESSING` is a redelivery after a crash starting it over.",
      statuses: importStatuses,
      initial: [{ to: 'QUEUED', label: 'upload' }],
      moves: importMoves,
      final: ['COMPLETED', 'FAILED'],
    },
  ];
}

const typeOf: Record<string, [string, string]> = {
  'Mint job': ['job-status.ts', 'JobStatus'],
  'Mint batch': ['batch-status.ts', 'BatchStatus'],
  Unit: ['modes.ts', 'UnitStatus'],
  Serial: ['serial-state.ts', 'SerialState'],
  'Payload pack': ['pack-status.ts', 'PackStatus'],
  'Product import': ['product-import.ts', 'ImportStatus'],
};

/** The page's whole text. */
export function renderStateMachines(): string {
  const out: string[] = [
    '<!-- Generated by scripts/docs-state-machines.ts from packages/domain/src; do not edit. Run `npm run docs:generate`. -->',
    '',
    '# State machines',
    '',
    "Drawn from the domain's own status lists and move rules, so they cannot drift from the code. Every",
    'move is a compare-and-set on the status it leaves (a lost race changes nothing and is visible).',
    '',
  ];
  for (const m of machines()) {
    const [file, type] = typeOf[m.title]!;
    const comments = file === 'modes.ts' ? new Map<string, string>() : statusComments(file, type);
    out.push(`## ${m.title}`, '', `${m.intro} Source: \`${m.source}\`.`, '', '```mermaid', 'stateDiagram-v2');
    for (const i of m.initial) out.push(`  [*] --> ${i.to}${i.label ? ` : ${i.label}` : ''}`);
    for (const mv of m.moves) out.push(`  ${mv.from} --> ${mv.to}${'label' in mv && mv.label ? ` : ${mv.label}` : ''}`);
    for (const f of m.final) out.push(`  ${f} --> [*]`);
    out.push('```', '', '| status | meaning | moves to |', '|---|---|---|');
    for (const s of m.statuses) {
      const to = [...new Set(m.moves.filter((mv) => mv.from === s).map((mv) => `\`${mv.to}\``))];
      const meaning =
        comments.get(s) ??
        (s === 'inactive'
          ? 'Not in circulation: minted with `first_scan` activation and not yet activated or commissioned, or its serial was taken out of circulation.'
          : 'Live (its serial is `commissioned`): the resolver answers its scans.');
      out.push(`| \`${s}\` | ${meaning.replace(/\|/g, '\\|')} | ${to.length ? to.join(', ') : 'final'} |`);
    }
    out.push('');
  }
  return out.join('\n');
}
