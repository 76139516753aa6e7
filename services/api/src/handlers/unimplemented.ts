import { Code, ConnectError } from '@connectrpc/connect';

/** Answers an RPC whose use case does not exist yet: Unimplemented, never placeholder data. */
export function unimplemented(rpc: string): never {
  throw new ConnectError(`${rpc} is not available yet`, Code.Unimplemented);
}
