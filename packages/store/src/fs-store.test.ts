import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsPackStore } from './fs-store.ts';
import { isStoreNotFoundError, StorePathError, type PackStore } from './store.ts';
import { tarSize, tarStream } from './tar.ts';

let root: string;
let store: PackStore;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'store-test-'));
  store = createFsPackStore(root);
});
afterAll(() => rm(root, { recursive: true, force: true }));

async function writePack(path: string, files: Record<string, string>): Promise<void> {
  const writer = await store.begin(path);
  for (const [name, text] of Object.entries(files)) writer.file(name).end(text);
  await writer.commit();
}

describe('createFsPackStore', () => {
  it('shows a pack only once committed, and replaces it when written again', async () => {
    const writer = await store.begin('brand/pack1');
    writer.file('a.txt').end('one');
    await expect(store.open('brand/pack1', 'a.txt')).rejects.toSatisfy(isStoreNotFoundError);
    await writer.commit();
    const file = await store.open('brand/pack1', 'a.txt');
    expect(file.size).toBe(3);
    expect((await buffer(file.stream())).toString()).toBe('one');
    await writePack('brand/pack1', { 'b.txt': 'two' });
    await expect(store.open('brand/pack1', 'a.txt')).rejects.toSatisfy(isStoreNotFoundError);
    expect((await buffer((await store.open('brand/pack1', 'b.txt')).stream())).toString()).toBe('two');
    expect((await readdir(join(root, 'brand'))).sort()).toEqual(['pack1']);
  });

  it('leaves nothing behind when aborted', async () => {
    const writer = await store.begin('brand/pack2');
    writer.file('a.txt').write('partial');
    await writer.abort();
    expect(await readdir(join(root, 'brand'))).not.toContain('pack2');
    await expect(store.open('brand/pack2', 'a.txt')).rejects.toSatisfy(isStoreNotFoundError);
  });

  it('refuses paths that could leave the store or are URLs', async () => {
    for (const path of ['../x', '/abs', 'a/../b', 'https://x', '', 'a//b', '.hidden']) {
      await expect(store.begin(path), path).rejects.toBeInstanceOf(StorePathError);
    }
    await expect(store.open('brand/pack1', '../pack1/b.txt')).rejects.toBeInstanceOf(StorePathError);
  });
  it('sweeps the folders of interrupted writes once they are old enough, and nothing else', async () => {
    await writePack('sweep/kept', { 'a.txt': 'committed' });
    // A write that never committed (its process was killed), and one going on now.
    const killed = await store.begin('sweep/killed');
    killed.file('a.txt').end('half');
    const ongoing = await store.begin('sweep/ongoing');
    ongoing.file('a.txt').end('now');
    // A replaced pack moved aside and never deleted (killed after the commit's renames).
    const movedAside = join(root, 'sweep', `kept.old-${'ab'.repeat(6)}`);
    await mkdir(movedAside);
    await writeFile(join(movedAside, 'a.txt'), 'old');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const hourAgo = new Date(Date.now() - 3_600_000);
    const folders = async () => (await readdir(join(root, 'sweep'))).sort();
    const stagings = (await folders()).filter((name) => name.startsWith('.staging-'));
    const staged = await Promise.all(stagings.map(async (name) => await readFile(join(root, 'sweep', name, 'a.txt'), 'utf8')));
    const killedStaging = stagings[staged.indexOf('half')];
    // The killed write and the moved-aside folder were last written two hours ago; the ongoing write now.
    const twoHoursAgo = new Date(Date.now() - 7_200_000);
    for (const folder of [join(root, 'sweep', killedStaging!), movedAside]) {
      for (const name of await readdir(folder)) await utimes(join(folder, name), twoHoursAgo, twoHoursAgo);
      await utimes(folder, twoHoursAgo, twoHoursAgo);
    }
    const ongoingStaging = (await folders()).filter((name) => name.startsWith('.staging-') && name !== killedStaging);
    // Only the old leftovers go; the ongoing write commits afterwards as usual.
    expect(ongoingStaging).toHaveLength(1);
    expect(await store.sweep(hourAgo)).toBe(2);
    expect(await folders()).toEqual(['kept', ...ongoingStaging].sort());
    await ongoing.commit();
    expect((await buffer((await store.open('sweep/ongoing', 'a.txt')).stream())).toString()).toBe('now');
    expect((await buffer((await store.open('sweep/kept', 'a.txt')).stream())).toString()).toBe('committed');
    expect(await store.sweep(new Date(Date.now() + 60_000))).toBe(0);
    expect(await folders()).toEqual(['kept', 'ongoing']);
  });
});

describe('tarStream', () => {
  it('writes an archive that tar lists and extracts byte for byte, of the announced size', async () => {
    const content = { 'manifest.json': '{"a":1}\n', 'units.csv': 'x'.repeat(1024), 'units.jsonl': 'y'.repeat(513) };
    await writePack('brand/pack3', content);
    const entries = await Promise.all(Object.keys(content).map(async (name) => ({ name, file: await store.open('brand/pack3', name), mtime: new Date(0) })));
    const archive = await buffer(tarStream(entries));
    expect(archive.length).toBe(tarSize(entries));
    const out = await mkdtemp(join(tmpdir(), 'untar-'));
    try {
      await writeFile(join(out, 'pack.tar'), archive);
      execFileSync('tar', ['-xf', 'pack.tar'], { cwd: out });
      for (const [name, text] of Object.entries(content)) expect(await readFile(join(out, name), 'utf8')).toBe(text);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
