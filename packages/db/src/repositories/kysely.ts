import {
  createQueryId,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  RawNode,
  sql,
  type AliasedRawBuilder,
  type Compilable,
  type CompiledQuery,
  type RawBuilder,
} from 'kysely';
import { sessionPoolOf, type Em } from '../orm.ts';
import type { Tables } from '../tables.ts';

/**
 * The typed query layer of the repositories: Kysely over the schema's {@link Tables}, bound to
 * the entity manager's transaction (MikroORM's `em.getKysely()`), with driver errors converted to
 * MikroORM's exceptions exactly as `em.execute` converts them. Internal to this package.
 */

/** Kysely bound to `em`'s transaction (or its pool when it has none). */
export function kysely(em: Em): Kysely<Tables> {
  return em.getKysely<Tables>();
}

/** Anything Kysely can run and that yields rows. */
export interface Executable<O> {
  execute(): Promise<O[]>;
}

async function converted<T>(em: Em, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw em.getDriver().convertException(error as Error);
  }
}

/** Runs the query `build` makes on `em`'s Kysely and returns its rows. */
export function rows<O>(em: Em, build: (db: Kysely<Tables>) => Executable<O>): Promise<O[]> {
  return converted(em, () => build(kysely(em)).execute());
}

/** Runs the query `build` makes and returns its first row, or undefined. */
export async function first<O>(em: Em, build: (db: Kysely<Tables>) => Executable<O>): Promise<O | undefined> {
  return (await rows(em, build))[0];
}

/** The outcome of an insert, update or delete as Kysely reports it. */
type WriteResult = { numInsertedOrUpdatedRows?: bigint } | { numUpdatedRows: bigint } | { numDeletedRows: bigint } | { numAffectedRows?: bigint };

/** Runs the insert, update or delete `build` makes and returns how many rows it changed. */
export async function changed(em: Em, build: (db: Kysely<Tables>) => Executable<WriteResult>): Promise<number> {
  const results = await rows(em, build);
  let n = 0n;
  for (const r of results) {
    if ('numInsertedOrUpdatedRows' in r) n += r.numInsertedOrUpdatedRows ?? 0n;
    else if ('numUpdatedRows' in r) n += r.numUpdatedRows;
    else if ('numDeletedRows' in r) n += r.numDeletedRows;
    else if ('numAffectedRows' in r) n += r.numAffectedRows ?? 0n;
  }
  return Number(n);
}

/** Runs a raw statement (only the measured bulk paths use one) and returns how many rows it changed. */
export async function rawChanged(em: Em, statement: RawBuilder<unknown>): Promise<number> {
  return converted(em, async () => Number((await statement.execute(kysely(em))).numAffectedRows ?? 0n));
}

/** Runs a raw query (only measured hot paths use one) and returns its rows. */
export async function rawRows<O>(em: Em, statement: RawBuilder<O>): Promise<O[]> {
  return converted(em, async () => (await statement.execute(kysely(em))).rows);
}

/** The PostgreSQL types an {@link unnest} column may have. */
type PgType = 'int' | 'int8' | 'text' | 'uuid' | 'jsonb' | 'timestamptz' | 'bool' | 'date';

/**
 * A from-item `unnest($1::t1[], $2::t2[], ...) as alias(c1, c2, ...)`: one bind parameter per
 * column whatever the number of rows, so a multi-row statement keeps one short text. `columns`
 * gives each column's PostgreSQL type and its values, all of the same length; `ordinality` names
 * an extra column numbering the rows from 1 (int8, so it reads as text on PostgreSQL).
 */
export function unnest<R extends Record<string, unknown>, A extends string, O extends string = never>(
  alias: A,
  columns: { readonly [C in keyof R & string]: readonly [PgType, readonly R[C][]] },
  ordinality?: O,
): AliasedRawBuilder<R & Record<O, string | number>, A> {
  const names: string[] = Object.keys(columns);
  const arrays = names.map((name) => {
    const [type, values] = columns[name as keyof R & string];
    return sql`${values}::${sql.raw(type)}[]`;
  });
  if (ordinality !== undefined) names.push(ordinality);
  return sql<R & Record<O, string | number>>`unnest(${sql.join(arrays)})${sql.raw(ordinality === undefined ? '' : ' with ordinality')}`.as<A>(
    sql`${sql.id(alias)}(${sql.join(names.map((n) => sql.id(n)))})`,
  );
}

/** The row type a query-building function yields. */
export type RowOf<F extends (...args: never[]) => Executable<unknown>> = Awaited<ReturnType<ReturnType<F>['execute']>>[number];

/** A Kysely that only compiles (no connection), for statements prepared once. */
const compiler = new Kysely<Tables>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** A statement compiled once: its name, its SQL text, and how a call's named parameters become its bind values. */
export interface PreparedStatement<P, O> {
  readonly name: string;
  readonly text: string;
  values(params: P): unknown[];
  /** The query Kysely runs for a call: the statement's text with the call's values. */
  compiled(params: P): CompiledQuery<O>;
  /** Only carries the row type. */
  readonly row?: O;
}

/**
 * Compiles the query `build` makes once, reading each parameter as a marker, and returns its SQL
 * text with a function that puts a call's parameters where the markers were (constants of the
 * query keep their place). A parameter the query places several times is bound once: its places
 * share one `$n`, so it is serialised and sent once (the submit's write places the brand ten times
 * and its time seven). `build` must only place parameters, never compute with them, and give every
 * place of one parameter the same type. For hot statements, where building and compiling the query
 * per call would cost more than PostgreSQL spends on it; run one with {@link preparedRows} or
 * {@link preparedChanged}, or by name on a `pg` pool of its own.
 */
export function prepare<P extends object, O>(name: string, build: (db: Kysely<Tables>, params: P) => Compilable<O>): PreparedStatement<P, O> {
  const marker = (key: string) => `\u0000parameter ${key}\u0000`;
  const markers = new Proxy({}, { get: (_, key) => (typeof key === 'string' ? marker(key) : undefined) }) as P;
  const compiled = build(compiler, markers).compile();
  // Per bind parameter of the final text: the name of the parameter it takes, or the constant it holds.
  const slots: ({ readonly key: keyof P } | { readonly constant: unknown })[] = [];
  // The final `$n` of each parameter name, and (renumbered) of each place of the compiled text.
  const numberOf = new Map<string, number>();
  const renumbered = compiled.parameters.map((value) => {
    const match = typeof value === 'string' ? /^\u0000parameter (.+)\u0000$/.exec(value) : null;
    if (match === null) return slots.push({ constant: value });
    const known = numberOf.get(match[1]!);
    if (known !== undefined) return known;
    numberOf.set(match[1]!, slots.push({ key: match[1] as keyof P }));
    return slots.length;
  });
  const text = compiled.sql.replace(/\$(\d+)\b/g, (_, n: string) => `$${renumbered[Number(n) - 1]!}`);
  const values = (params: P) => slots.map((slot) => ('key' in slot ? params[slot.key] : slot.constant));
  // What `CompiledQuery.raw` makes, with the raw node built once and the values left unfrozen: per call, that cost more than building the values.
  const node = RawNode.createWithSql(text);
  return {
    name,
    text,
    values,
    compiled: (params) => ({ sql: text, query: node, parameters: values(params), queryId: createQueryId() }),
  };
}

/**
 * Runs a prepared statement: by name on the pool when `em` is outside a transaction and its pool's
 * connections are sessions of their own (PostgreSQL parses and plans it once per connection: for
 * the submit's write that was about 70 % of PostgreSQL's CPU per submit), else on `em`'s Kysely
 * (its transaction, if any, or a transaction pooler, where a statement prepared on one server
 * connection is unknown on the next). Returns its rows and how many rows it changed.
 */
async function runPrepared<P, O>(em: Em, statement: PreparedStatement<P, O>, params: P): Promise<{ rows: O[]; changed: number }> {
  const pool = em.isInTransaction() ? undefined : sessionPoolOf(em);
  return converted(em, async () => {
    if (pool !== undefined) {
      const result = await pool.query<O & object>({ name: statement.name, text: statement.text, values: statement.values(params) });
      return { rows: result.rows, changed: result.rowCount ?? 0 };
    }
    const result = await kysely(em).executeQuery(statement.compiled(params));
    return { rows: result.rows, changed: Number(result.numAffectedRows ?? 0n) };
  });
}

/** Runs a prepared statement (see {@link runPrepared}) and returns its rows. */
export async function preparedRows<P, O>(em: Em, statement: PreparedStatement<P, O>, params: P): Promise<O[]> {
  return (await runPrepared(em, statement, params)).rows;
}

/** Runs a prepared insert, update or delete (see {@link runPrepared}) and returns how many rows it changed. */
export async function preparedChanged<P>(em: Em, statement: PreparedStatement<P, unknown>, params: P): Promise<number> {
  return (await runPrepared(em, statement, params)).changed;
}
