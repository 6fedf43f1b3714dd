/** Runtime revisions and pinning: pure domain, no I/O. */
export * from './admission';
export * from './conditions';
export * from './defaults';
export * from './gc';
export { compareGoStrings, quoteGoString } from '../go-string';
export { marshalGoJson, normalizeGoJson, SERVING_RUNTIME_SPEC_TYPE, type JsonValue } from './go-json';
export * from './inheritance';
export * from './pinning';
export * from './quantity';
export * from './revision';
export { stripJsonNulls, strategicMergeSpec } from './strategic-merge';
export * from './workload';
export * from './deployment-mode';
