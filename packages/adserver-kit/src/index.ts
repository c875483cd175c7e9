// Public API of @podium/adserver-kit: the contract's schemas, the reference ad server and the
// conformance checker, for the marketplace client and other packages' tests.

export {
  type CheckOptions,
  type CheckReport,
  type CheckResult,
  classifyHealth,
  type HealthState,
  runChecks,
} from './check/index.ts';
export { openStore, type Store, type StoreOptions } from './db.ts';
export { buildReferenceApp, type ReferenceAppOptions } from './reference/app.ts';
export {
  type ReferenceServer,
  type ReferenceServerOptions,
  startReferenceServer,
} from './reference/server.ts';
export * from './schemas.ts';
