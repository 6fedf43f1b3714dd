/** Pinning use-cases: pin one InferenceService, fan a runtime change out, write engine workloads. */
export * from './check-runtime-drift';
export * from '../direct-workload-writer';
export * from './pin-inference-service';
export { changesPin, computeNextStatus, formatConditionTime, isPausedByDrift, toPinningSubject } from './pin-status';
export { createRevision, RevisionCache, takeRevisionFromCollector } from '../revisions';
export { fetchLiveRuntime, loadRuntimeCatalog, RuntimeCatalog, toRuntimeRecord, type RuntimeRef } from './runtime-source';
