// Types of the part of pg-copy-streams 7 this package uses (the package ships none).
declare module 'pg-copy-streams' {
  import type { Readable, Writable } from 'node:stream';
  import type { Submittable } from 'pg';

  /** `COPY ... TO STDOUT` as a readable stream; `rowCount` is set once it ended. */
  export function to(sql: string): Readable & Submittable & { rowCount: number };
  /** `COPY ... FROM STDIN` as a writable stream. */
  export function from(sql: string): Writable & Submittable & { rowCount: number };
}
