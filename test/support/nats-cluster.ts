// A JetStream cluster of nats-server child processes owned by one test: each node on free loopback
// client and route ports with a temporary store folder, routed to the others, so that fault tests
// can kill a stream's leader or a follower, wipe a node's store and restart it.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { probeNats } from './infra.ts';
import { natsServerBinary } from './nats.ts';
import { freePort } from './ports.ts';

/** One node of a {@link NatsCluster}. */
export interface ClusterNode {
  /** Server name, `n1`..`nN`: what stream info reports as leader and replicas. */
  readonly name: string;
  /** `nats://127.0.0.1:<port>`; the same across restarts. */
  readonly url: string;
  /** JetStream store folder; kept across `kill()` and `restart()` unless `wipe()` empties it. */
  readonly storeDir: string;
  readonly running: boolean;
  /** Sends `signal` (default SIGKILL) and resolves once the process exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Deletes the node's store (while it is down): a node lost with its disk. */
  wipe(): Promise<void>;
  /** Starts the node again (same name, ports and store folder) and resolves once it accepts clients. */
  restart(): Promise<void>;
}

/** A running cluster. */
export interface NatsCluster {
  /** Every node's client URL, comma-separated (what NATS_URL takes). */
  readonly url: string;
  readonly nodes: readonly ClusterNode[];
  /** The node by server name. */
  node(name: string): ClusterNode;
  /** Leader and followers of `stream`, by server name, as the cluster reports them. */
  placement(stream: string): Promise<{ leader: string; followers: string[]; current: boolean }>;
  /** Waits until `stream` has a leader and every replica is current (after a restart); throws after `timeoutMs`. */
  waitCurrent(stream: string, timeoutMs?: number): Promise<void>;
  /** Stops every node (SIGTERM, SIGKILL after 5 s) and deletes the stores. Idempotent. */
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

const exited = (proc: ChildProcess) => (proc.exitCode !== null || proc.signalCode !== null ? Promise.resolve() : once(proc, 'exit').then(() => {}));

/**
 * Starts `size` (default 3) nats-server nodes forming one JetStream cluster on 127.0.0.1 and
 * resolves once JetStream answers (a meta leader is elected). Always `stop()` it.
 */
export async function startNatsCluster(options: { size?: number; startTimeoutMs?: number } = {}): Promise<NatsCluster> {
  const size = options.size ?? 3;
  const startTimeoutMs = options.startTimeoutMs ?? 20_000;
  const specs: { name: string; port: number; routePort: number; storeDir: string }[] = [];
  for (let i = 1; i <= size; i++) {
    specs.push({ name: `n${i}`, port: await freePort(), routePort: await freePort(), storeDir: await mkdtemp(join(tmpdir(), `mint-nats-n${i}-`)) });
  }
  // the nodes' working directory, not the checkout: under load a node of nats-server 2.9 has left a
  // consumer's state files (meta.inf, meta.sum) in its working directory
  const workDir = await mkdtemp(join(tmpdir(), 'mint-nats-cwd-'));
  const clusterName = `mint-test-${process.pid}`;
  const routes = specs.map((s) => `nats://127.0.0.1:${s.routePort}`).join(',');

  const nodes: ClusterNode[] = specs.map((spec) => {
    let child: ChildProcess | undefined;
    let output: string[] = [];
    const url = `nats://127.0.0.1:${spec.port}`;
    const launch = async () => {
      output = [];
      const proc = spawn(
        natsServerBinary,
        [
          '-js',
          '-sd',
          spec.storeDir,
          '-n',
          spec.name,
          '-a',
          '127.0.0.1',
          '-p',
          String(spec.port),
          '--cluster_name',
          clusterName,
          '--cluster',
          `nats://127.0.0.1:${spec.routePort}`,
          '--routes',
          routes,
        ],
        { cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child = proc;
      children.add(proc);
      proc.once('exit', () => children.delete(proc));
      const keep = (chunk: Buffer) => {
        output.push(...chunk.toString().split('\n').filter(Boolean));
        if (output.length > 40) output = output.slice(-40);
      };
      proc.stdout?.on('data', keep);
      proc.stderr?.on('data', keep);
      const deadline = Date.now() + startTimeoutMs;
      while (Date.now() < deadline) {
        if (proc.exitCode !== null || proc.signalCode !== null) break;
        if (await probeNats(url, 500)) return;
        await sleep(50);
      }
      proc.kill('SIGKILL');
      await exited(proc);
      throw new Error(`nats-server ${spec.name} on port ${spec.port} did not become ready:\n${output.join('\n')}`);
    };
    return {
      name: spec.name,
      url,
      storeDir: spec.storeDir,
      get running() {
        return child !== undefined && child.exitCode === null && child.signalCode === null;
      },
      async kill(signal: NodeJS.Signals = 'SIGKILL') {
        if (child === undefined) return;
        child.kill(signal);
        await exited(child);
      },
      async wipe() {
        if (this.running) throw new Error(`wipe() of ${spec.name} while it runs`);
        await rm(spec.storeDir, { recursive: true, force: true });
      },
      async restart() {
        if (child !== undefined && this.running) {
          child.kill('SIGTERM');
          await exited(child);
        }
        await launch();
      },
    };
  });

  let stopped: Promise<void> | undefined;
  const cluster: NatsCluster = {
    url: nodes.map((n) => n.url).join(','),
    nodes,
    node(name) {
      const found = nodes.find((n) => n.name === name);
      if (found === undefined) throw new Error(`no node ${name}`);
      return found;
    },
    async placement(stream) {
      const nc = await connect({ servers: nodes.filter((n) => n.running).map((n) => n.url), timeout: 2000 });
      try {
        const info = await (await jetstreamManager(nc, { timeout: 2000 })).streams.info(stream);
        const replicas = info.cluster?.replicas ?? [];
        return {
          leader: info.cluster?.leader ?? '',
          followers: replicas.map((r) => r.name),
          current: info.cluster?.leader !== undefined && replicas.every((r) => r.current && !r.offline),
        };
      } finally {
        await nc.close();
      }
    },
    async waitCurrent(stream, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last = '';
      for (;;) {
        try {
          const p = await cluster.placement(stream);
          if (p.current && p.followers.length === size - 1) return;
          last = JSON.stringify(p);
        } catch (error) {
          last = String(error);
        }
        if (Date.now() > deadline) throw new Error(`stream ${stream} not current on every node after ${timeoutMs} ms: ${last}`);
        await sleep(200);
      }
    },
    stop: () =>
      (stopped ??= (async () => {
        await Promise.all(
          nodes.map(async (n) => {
            const timer = setTimeout(() => void n.kill('SIGKILL'), 5000);
            await n.kill('SIGTERM');
            clearTimeout(timer);
          }),
        );
        await Promise.all([...specs.map((s) => s.storeDir), workDir].map((dir) => rm(dir, { recursive: true, force: true })));
      })()),
  };

  try {
    await Promise.all(nodes.map((n) => n.restart()));
    // JetStream answers once the nodes elected a meta leader.
    const deadline = Date.now() + startTimeoutMs;
    for (;;) {
      const ok = await (async () => {
        const nc = await connect({ servers: nodes.map((n) => n.url), timeout: 2000 });
        try {
          await (await jetstreamManager(nc, { timeout: 2000 })).getAccountInfo();
          return true;
        } catch {
          return false;
        } finally {
          await nc.close();
        }
      })();
      if (ok) break;
      if (Date.now() > deadline) throw new Error('the JetStream cluster elected no meta leader');
      await sleep(250);
    }
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}
