// Small shared pieces of the screens: error and progress display, keyset pagers, formatting.

import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { ProductImportStatus, type ProductImport } from '@mint/contract';
import { useState, type ReactNode } from 'react';
import { errorText } from './api.ts';

/**
 * An API error in its own words, announced to screen readers. A refusal naming fields
 * (`seq_to: must be at least seq_from; layout.columns: ...`) lists each field with its message.
 */
export function ErrorMessage({ error }: { readonly error: unknown }): ReactNode {
  if (error === null || error === undefined) return null;
  const text = errorText(error);
  const fields = fieldErrors(text);
  if (fields.length < 2)
    return (
      <p className="error" role="alert" data-field={fields[0]?.field}>
        {text}
      </p>
    );
  return (
    <div className="error" role="alert">
      <ul>
        {fields.map((f) => (
          <li key={`${f.field}: ${f.message}`} data-field={f.field}>
            <code>{f.field}</code>: {f.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The `field: message` parts of an API error (`lots[0].qty: ...; seq_to: ...`); empty when it names no field. */
export function fieldErrors(text: string): { field: string; message: string }[] {
  const parts = text.split('; ').map((part) => /^([a-z][a-z0-9_]*(?:\[\d+\])?(?:\.[a-z][a-z0-9_]*(?:\[\d+\])?)*): (.+)$/s.exec(part));
  return parts.every((m) => m !== null) ? parts.map((m) => ({ field: m![1]!, message: m![2]! })) : [];
}

/** A labelled progress bar of `value` out of `max`, with the figures written beside it. */
export function Progress({ value, max, label }: { readonly value: number; readonly max: number; readonly label: string }): ReactNode {
  const percent = max > 0 ? Math.min(100, Math.floor((value * 100) / max)) : 0;
  return (
    <div className="progress">
      <progress value={value} max={Math.max(max, 1)} aria-label={label} />
      <span className="progress-figures">
        {value.toLocaleString('en-US')} / {max.toLocaleString('en-US')} ({percent}%)
      </span>
    </div>
  );
}

/** A timestamp as `YYYY-MM-DD HH:MM:SS` UTC; '' when absent. */
export function formatTime(ts: Timestamp | undefined): string {
  return ts === undefined ? '' : timestampDate(ts).toISOString().replace('T', ' ').slice(0, 19);
}

/** An enum value's name in lower case (`MINT_JOB_STATUS` values print as `completed`). */
export function enumName(values: Record<number, string>, value: number): string {
  return (values[value] ?? String(value)).toLowerCase();
}

/**
 * Keyset paging state over opaque `next_cursor` strings: the cursor of the page shown and the
 * ones before it (for Previous).
 */
export function useCursorPages(): { cursor: string | undefined; page: number; next: (c: string | undefined) => void; previous: () => void; reset: () => void } {
  const [stack, setStack] = useState<(string | undefined)[]>([undefined]);
  return {
    cursor: stack[stack.length - 1],
    page: stack.length,
    next: (c) => {
      if (c !== undefined && c !== '') setStack((s) => [...s, c]);
    },
    previous: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
    reset: () => setStack([undefined]),
  };
}

/** Previous / Next buttons of a keyset-paged list. */
export function Pager({
  label,
  page,
  hasMore,
  onPrevious,
  onNext,
}: {
  readonly label: string;
  readonly page: number;
  readonly hasMore: boolean;
  readonly onPrevious: () => void;
  readonly onNext: () => void;
}): ReactNode {
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={onPrevious} disabled={page <= 1}>
        Previous
      </button>
      <span>Page {page}</span>
      <button type="button" onClick={onNext} disabled={!hasMore}>
        Next
      </button>
    </nav>
  );
}

/** An import's status and counts, and its refused rows with their field and error (products and links share the shape). */
export function ImportRows({ imp, testId }: { readonly imp: ProductImport; readonly testId: string }): ReactNode {
  return (
    <>
      <p role="status">
        Status <strong data-testid={testId}>{enumName(ProductImportStatus, imp.status)}</strong>: {imp.importedRows} of {imp.totalRows} rows imported,{' '}
        {imp.failedRows} refused.
      </p>
      {imp.errors.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption>Refused rows</caption>
            <thead>
              <tr>
                <th>Row</th>
                <th>Field</th>
                <th>Error</th>
              </tr>
            </thead>
            <tbody>
              {imp.errors.map((e) => (
                <tr key={`${e.row} ${e.field ?? ''} ${e.message}`}>
                  <td>{e.row}</td>
                  <td>{e.field ?? ''}</td>
                  <td>{e.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** The fields an API error names (`seq_to`, `layout.columns`), for `aria-invalid` on their inputs; empty without an error. */
export function invalidFields(error: unknown): ReadonlySet<string> {
  if (error === null || error === undefined) return new Set();
  return new Set(fieldErrors(errorText(error)).map((f) => f.field));
}
