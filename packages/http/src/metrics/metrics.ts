// What the transport's metrics need of a registry (packages/runtime's prom-client metrics fit it).

/** A counter with labels `L`. */
export interface LabelledCounter<L extends string> {
  inc(labels: Readonly<Record<L, string>>): void;
}

/** A histogram with labels `L`. */
export interface LabelledHistogram<L extends string> {
  observe(labels: Readonly<Record<L, string>>, value: number): void;
}

/** The series the transport observes, and the exposition it serves at `/metrics`. */
export interface Metrics {
  /** Finished Connect/gRPC/gRPC-Web calls by `method` and Connect `code`. */
  readonly rpcRequests: LabelledCounter<'method' | 'code'>;
  /** Call latency in seconds by `method` and `code`. */
  readonly rpcDuration: LabelledHistogram<'method' | 'code'>;
  /** Plain HTTP requests by `method`, `route` and status `code`. */
  readonly httpRequests: LabelledCounter<'method' | 'route' | 'code'>;
  /** Plain HTTP request latency in seconds by `method`, `route` and `code`. */
  readonly httpDuration: LabelledHistogram<'method' | 'route' | 'code'>;
  /** The exposition text and its content type, for a `/metrics` response. */
  render(): Promise<{ readonly contentType: string; readonly body: string }>;
}
