// A build folder's files (a Vite build, say) held in memory and served by name: hashed assets
// cached for good, everything else revalidated on every load.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { HttpProblem } from './errors.ts';
import { send, type Headers } from './respond.ts';
import type { RouteHandler } from './router.ts';

/** Media types of the files a web build writes. */
const contentTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/** Hashed build output (`assets/name-<hash>.js`): its URL changes whenever its bytes do. */
const immutable = 'public, max-age=31536000, immutable';
/** index.html and unhashed files: the browser revalidates them on every load, so a new build shows at once. */
const revalidate = 'no-cache';

/** One file of a build, read into memory once. */
export interface StaticFile {
  readonly body: Buffer;
  readonly contentType: string;
  /** `immutable` for a file under `assets/` (content-hashed), `no-cache` for the others. */
  readonly cacheControl: string;
}

/**
 * Reads every file under `dir`, keyed by its path relative to it (`/`-separated, so a request path
 * is only ever a key into this set, never joined to a folder); null when `dir` cannot be read or
 * has no index.html.
 */
export function loadStaticFiles(dir: string): Map<string, StaticFile> | null {
  const files = new Map<string, StaticFile>();
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder)) {
      const path = join(folder, entry);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      const name = relative(dir, path).split(sep).join('/');
      files.set(name, {
        body: readFileSync(path),
        contentType: contentTypes[extname(name)] ?? 'application/octet-stream',
        cacheControl: name.startsWith('assets/') ? immutable : revalidate,
      });
    }
  };
  try {
    walk(dir);
  } catch {
    return null;
  }
  return files.has('index.html') ? files : null;
}

/**
 * Serves the files of the build in `dir` (the `label` one) by the route's `*` parameter (index.html
 * for none), with `headers`. The files are read on the first request and kept (`prepare` may
 * rewrite them then), so a running server keeps serving one consistent build; until `dir` holds a
 * build every request answers 503 `{label}_not_built` with `notBuilt`, and a name the build does not have 404.
 */
export function staticFilesHandler(
  label: string,
  dir: string,
  headers: Headers,
  notBuilt: string,
  prepare?: (files: Map<string, StaticFile>) => void,
): RouteHandler {
  let files: Map<string, StaticFile> | null = null;
  return ({ req, res, params }) => {
    if (files === null) {
      files = loadStaticFiles(dir);
      if (files !== null) prepare?.(files);
    }
    if (files === null) throw new HttpProblem(503, `${label}_not_built`, notBuilt);
    const name = params['*'] === undefined || params['*'] === '' ? 'index.html' : params['*'];
    const file = files.get(name);
    if (file === undefined) throw new HttpProblem(404, 'not_found', `The ${label} has no file ${name}.`);
    send(req, res, 200, file.contentType, file.body, { ...headers, 'cache-control': file.cacheControl });
  };
}
