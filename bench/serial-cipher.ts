// `npm run bench:serial-cipher`: the serial cipher's speed against today's serials, same run.
// BENCH_ROUNDS rounds (default 7), each timing back to back: (1) the baseline, generateTimedSerials
// (70 random bits after the second) in chunks of 2,000, as the executor mints; (2) the cipher's
// encodeRange over chunks of 2,000 consecutive seqs of one batch; (3) decode of single serials, one
// call each, as the resolver would look up a scanned serial; (4) decodeMany over batches of 64 (the
// resolver's lookup batch); (5) the floor of (3), ten bare 16-byte AES-256-ECB calls into node:crypto
// per serial (FF1's ten rounds cannot be batched within one serial). BENCH_UNITS units per round for (1)
// and (2) (default 200,000), BENCH_DECODES serials for (3) and (4) (default 20,000). Prints each round and
// the median and range of each rate and of the ratio encode/baseline. Pure CPU: no database.

import { createCipheriv, randomFillSync } from 'node:crypto';
import { createSerialCipher, generateSerialCipherKey, generateTimedSerials } from '@mint/domain';

const rounds = Number(process.env['BENCH_ROUNDS'] ?? 7);
const units = Number(process.env['BENCH_UNITS'] ?? 200_000);
const decodes = Number(process.env['BENCH_DECODES'] ?? 20_000);
const chunk = 2000;
const random = (bytes: Uint8Array) => void randomFillSync(bytes);
const key = generateSerialCipherKey(random);
const cipher = createSerialCipher(key);
const aes = createCipheriv('aes-256-ecb', key, null);
aes.setAutoPadding(false);
const block = new Uint8Array(16);

/** Units per second of `work` over `n` units. */
const rate = (n: number, work: () => void) => {
  const t = performance.now();
  work();
  return n / ((performance.now() - t) / 1000);
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number) => Math.round(x).toLocaleString('en-US');

// Warm up every path (JIT, AES context) before timing.
for (let first = 1; first <= 20_000; first += chunk) cipher.encodeRange(1, first, chunk);
generateTimedSerials(20_000, new Date(), random);
const sample = cipher.encodeRange(2, 1, decodes);
for (const s of sample.slice(0, 2000)) cipher.decode(s);

const figures = {
  baseline: [] as number[],
  encode: [] as number[],
  decode: [] as number[],
  decodeMany: [] as number[],
  floor: [] as number[],
  ratio: [] as number[],
};
let sink = 0;
for (let round = 1; round <= rounds; round++) {
  const ordinal = 1000 + round;
  const baseline = rate(units, () => {
    for (let done = 0; done < units; done += chunk) sink += generateTimedSerials(Math.min(chunk, units - done), new Date(), random).length;
  });
  const encode = rate(units, () => {
    for (let first = 1; first <= units; first += chunk) sink += cipher.encodeRange(ordinal, first, Math.min(chunk, units - first + 1)).length;
  });
  const decode = rate(decodes, () => {
    for (const s of sample) sink += cipher.decode(s)!.seq;
  });
  const decodeMany = rate(decodes, () => {
    for (let at = 0; at < sample.length; at += 64) sink += cipher.decodeMany(sample.slice(at, at + 64)).length;
  });
  const floor = rate(decodes, () => {
    for (let j = 0; j < decodes; j++) for (let k = 0; k < 10; k++) sink += aes.update(block).length;
  });
  figures.baseline.push(baseline);
  figures.encode.push(encode);
  figures.decode.push(decode);
  figures.decodeMany.push(decodeMany);
  figures.floor.push(floor);
  figures.ratio.push(encode / baseline);
  process.stdout.write(
    `round ${round}: generateTimedSerials ${fmt(baseline)} units/s, encodeRange ${fmt(encode)} units/s (${(encode / baseline).toFixed(2)}x), decode ${fmt(decode)} serials/s, decodeMany by 64 ${fmt(decodeMany)} serials/s, floor of decode ${fmt(floor)}/s\n`,
  );
}
const line = (name: string, xs: number[], unit: string) =>
  `${name}: median ${fmt(median(xs))} ${unit} (min ${fmt(Math.min(...xs))}, max ${fmt(Math.max(...xs))})\n`;
process.stdout.write(`\n${rounds} rounds, ${units.toLocaleString('en-US')} units in chunks of ${chunk} and ${decodes.toLocaleString('en-US')} decodes each:\n`);
process.stdout.write(line('baseline generateTimedSerials', figures.baseline, 'units/s'));
process.stdout.write(line('encodeRange', figures.encode, 'units/s'));
process.stdout.write(line('decode (one serial a call)', figures.decode, 'serials/s'));
process.stdout.write(line('decodeMany (64 serials a call)', figures.decodeMany, 'serials/s'));
process.stdout.write(line('floor of decode (ten 16-byte AES calls)', figures.floor, 'per s'));
process.stdout.write(
  `encodeRange / baseline: median ${median(figures.ratio).toFixed(2)}x (min ${Math.min(...figures.ratio).toFixed(2)}, max ${Math.max(...figures.ratio).toFixed(2)})\n`,
);
if (sink < 0) process.stdout.write('');
