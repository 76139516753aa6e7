/** The executor daemon's pieces, for its own main and the one-process dev mode. */
export { startExecutor, type Executor, type ExecutorOptions } from './executor.ts';
