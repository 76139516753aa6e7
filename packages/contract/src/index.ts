/**
 * The mint.v1 contract: messages, enums and service descriptors generated from proto/mint/v1
 * by `npm run generate`. Nothing here is written by hand except this index.
 */
export * from './gen/mint/v1/common_pb.js';
export * from './gen/mint/v1/mint_service_pb.js';
export * from './gen/mint/v1/containers_pb.js';
export * from './gen/mint/v1/catalog_service_pb.js';
export * from './gen/mint/v1/resolver_service_pb.js';
export * from './gen/mint/v1/webhook_service_pb.js';
export * from './gen/mint/v1/account_service_pb.js';
export * from './gen/mint/v1/partner_service_pb.js';
export * from './gen/mint/v1/workspace_service_pb.js';
// Services with named operations in alphabetical order (mint, passport, scan), so the /v1 operations list the same in every loader.
export * from './gen/mint/v1/passport_service_pb.js';
export * from './gen/mint/v1/scan_service_pb.js';
export * from './gen/mint/v1/options_pb.js';
