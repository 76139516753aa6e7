// gRPC server reflection (grpc.reflection.v1 and v1alpha) over the descriptors the server was
// built from, so grpcurl, `buf curl`, Postman and grpcui list and call the API without a local
// copy of the protos. Both versions share one implementation; only the package differs.

import { create, createRegistry, toBinary, type DescFile, type DescService, type MessageInitShape } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import type { ConnectRouter } from '@connectrpc/connect';
import * as v1 from './gen/grpc/reflection/v1/reflection_pb.js';
import * as v1alpha from './gen/grpc/reflection/v1alpha/reflection_pb.js';

/** gRPC's NOT_FOUND, the error code of an answer naming a file or symbol the server does not have. */
const notFound = 5;

/** The descriptors reflection answers from: the files of the served services and everything they import. */
interface Descriptors {
  readonly serviceNames: readonly string[];
  /** Serialised FileDescriptorProto of each file, by its proto name (`mint/v1/mint_service.proto`). */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** The proto names of a file and of every file it imports, transitively, the file first. */
  readonly closure: (file: DescFile) => string[];
  readonly registry: ReturnType<typeof createRegistry>;
  readonly fileOf: (protoName: string) => DescFile | undefined;
}

function descriptorsOf(services: readonly DescService[]): Descriptors {
  const byName = new Map<string, DescFile>();
  const add = (file: DescFile): void => {
    if (byName.has(file.proto.name)) return;
    byName.set(file.proto.name, file);
    for (const dependency of file.dependencies) add(dependency);
  };
  for (const service of services) add(service.file);
  const files = new Map([...byName].map(([name, file]) => [name, toBinary(FileDescriptorProtoSchema, file.proto)]));
  const closure = (file: DescFile): string[] => {
    const seen = new Set<string>();
    const walk = (f: DescFile): void => {
      if (seen.has(f.proto.name)) return;
      seen.add(f.proto.name);
      for (const dependency of f.dependencies) walk(dependency);
    };
    walk(file);
    return [...seen];
  };
  return {
    serviceNames: [...new Set(services.map((s) => s.typeName))].sort(),
    files,
    closure,
    registry: createRegistry(...byName.values()),
    fileOf: (name) => byName.get(name),
  };
}

/** The request and response messages of either version (their shapes are identical). */
type Request = v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest;
/** A response without its original request, as a plain init shape that fits both versions' schemas. */
type Response = Omit<MessageInitShape<typeof v1.ServerReflectionResponseSchema>, 'originalRequest' | '$typeName'>;

/** The answer to one reflection request. */
function answer(d: Descriptors, request: Request): Response {
  const base = { validHost: request.host };
  const fileResponse = (file: DescFile): Response => ({
    ...base,
    messageResponse: { case: 'fileDescriptorResponse', value: { fileDescriptorProto: d.closure(file).map((n) => d.files.get(n)!) } },
  });
  const error = (message: string): Response => ({
    ...base,
    messageResponse: { case: 'errorResponse', value: { errorCode: notFound, errorMessage: message } },
  });
  const asked = request.messageRequest;
  switch (asked.case) {
    case 'listServices':
      return {
        ...base,
        messageResponse: { case: 'listServicesResponse', value: { service: d.serviceNames.map((name) => ({ name })) } },
      };
    case 'fileByFilename': {
      const file = d.fileOf(asked.value);
      return file === undefined ? error(`file ${asked.value} not found`) : fileResponse(file);
    }
    case 'fileContainingSymbol': {
      // A method (`pkg.Service.Method`) or a field is found through its parent.
      const symbol = asked.value;
      const desc = d.registry.get(symbol) ?? d.registry.get(symbol.slice(0, Math.max(0, symbol.lastIndexOf('.'))));
      return desc === undefined ? error(`symbol ${symbol} not found`) : fileResponse(desc.file);
    }
    case 'fileContainingExtension': {
      const extendee = d.registry.getMessage(asked.value.containingType);
      const extension = extendee === undefined ? undefined : d.registry.getExtensionFor(extendee, asked.value.extensionNumber);
      return extension === undefined
        ? error(`extension ${asked.value.extensionNumber} of ${asked.value.containingType} not found`)
        : fileResponse(extension.file);
    }
    case 'allExtensionNumbersOfType': {
      const numbers: number[] = [];
      for (const desc of d.registry) if (desc.kind === 'extension' && desc.extendee.typeName === asked.value) numbers.push(desc.number);
      if (d.registry.getMessage(asked.value) === undefined) return error(`type ${asked.value} not found`);
      return {
        ...base,
        messageResponse: { case: 'allExtensionNumbersResponse', value: { baseTypeName: asked.value, extensionNumber: numbers.sort((a, b) => a - b) } },
      };
    }
    default:
      return { ...base, messageResponse: { case: 'errorResponse', value: { errorCode: 3, errorMessage: 'the request asks nothing' } } };
  }
}

/**
 * Registers `grpc.reflection.v1.ServerReflection` and `grpc.reflection.v1alpha.ServerReflection`
 * on `router`, describing every service registered on it so far, reflection included. Call it
 * after the other services are registered. Who may call it is the auth interceptors' decision
 * (`REFLECTION_ALLOW_ANONYMOUS`).
 */
export function registerReflection(router: ConnectRouter): void {
  const services = [...router.handlers.map((h) => h.service), v1.ServerReflection, v1alpha.ServerReflection];
  const d = descriptorsOf(services);
  router.service(v1.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) yield create(v1.ServerReflectionResponseSchema, { ...answer(d, request), originalRequest: request });
    },
  });
  router.service(v1alpha.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        const init = answer(d, request) as Omit<MessageInitShape<typeof v1alpha.ServerReflectionResponseSchema>, 'originalRequest' | '$typeName'>;
        yield create(v1alpha.ServerReflectionResponseSchema, { ...init, originalRequest: request });
      }
    },
  });
}
