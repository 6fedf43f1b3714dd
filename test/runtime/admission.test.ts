import { describe, expect, it } from 'vitest';
import { checkControllerRevisionUpdate, checkNamedRuntimeAvailable, checkRuntimeRevisionPin, type RevisionSnapshot } from '../../shared/domain/runtime/admission';

const isvc = { namespace: 'llama-demo', modelName: 'llama-3-2-3b-instruct', hasEngine: true };

describe('checkRuntimeRevisionPin', () => {
  it.each([
    ['no revision passes', { name: 'sglang-llama-3-2-3b', kind: 'ServingRuntime' }, undefined],
    [
      'a revision with autoSync unset (true) is denied',
      { name: 'sglang-llama-3-2-3b', kind: 'ServingRuntime', revision: 'r-llama-demo-sglang-llama-3-2-3b-590753e8' },
      'spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin',
    ],
    [
      'a revision with autoSync true is denied',
      { name: 'sglang-llama-3-2-3b', kind: 'ServingRuntime', autoSync: true, revision: 'r-llama-demo-sglang-llama-3-2-3b-590753e8' },
      'spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin',
    ],
    ['a well-formed pin passes', { name: 'sglang-llama-3-2-3b', kind: 'ServingRuntime', autoSync: false, revision: 'r-llama-demo-sglang-llama-3-2-3b-590753e8' }, undefined],
    [
      "a cluster runtime's revision for a ServingRuntime is denied with the seed's reason",
      { name: 'sglang-llama-3-2-3b', kind: 'ServingRuntime', autoSync: false, revision: 'cr-sglang-llama-3-2-3b-590753e8' },
      'spec.runtime.revision "cr-sglang-llama-3-2-3b-590753e8" does not match the expected naming convention for runtime "sglang-llama-3-2-3b" (ServingRuntime); expected the form r-llama-demo-sglang-llama-3-2-3b-<8 lowercase hex chars>',
    ],
    ['kind defaults to ClusterServingRuntime', { name: 'srt', autoSync: false, revision: 'cr-srt-0123abcd' }, undefined],
  ])('%s', (_name, runtime, expected) => {
    expect(checkRuntimeRevisionPin({ ...isvc, runtime })).toBe(expected);
  });
});

describe('checkNamedRuntimeAvailable', () => {
  it.each([
    [
      "a missing ServingRuntime gives the seed's reason",
      { name: 'sglang-llama-3-2-3b', kind: 'ServingRuntime' },
      { found: false },
      'runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: ServingRuntime sglang-llama-3-2-3b not found in namespace llama-demo',
    ],
    [
      'a missing ClusterServingRuntime',
      { name: 'srt' },
      { found: false },
      'runtime srt does not support model llama-3-2-3b-instruct: runtime srt not found in namespace llama-demo or at cluster scope',
    ],
    [
      'a disabled ClusterServingRuntime',
      { name: 'srt' },
      { found: true, kind: 'ClusterServingRuntime', disabled: true },
      'runtime srt does not support model llama-3-2-3b-instruct: cluster-scoped runtime srt is disabled',
    ],
    ['an enabled runtime passes', { name: 'srt' }, { found: true, kind: 'ClusterServingRuntime', disabled: false }, undefined],
  ] as const)('%s', (_name, runtime, live, expected) => {
    expect(checkNamedRuntimeAvailable({ ...isvc, runtime }, live)).toBe(expected);
  });

  it.each([
    ['no model', { ...isvc, modelName: undefined }],
    ['no engine', { ...isvc, hasEngine: false }],
    ['no named runtime', { ...isvc, runtime: {} }],
  ])('skips an ISVC with %s', (_name, subject) => {
    expect(checkNamedRuntimeAvailable({ runtime: { name: 'srt' }, ...subject }, { found: false })).toBeUndefined();
  });
});

describe('checkControllerRevisionUpdate', () => {
  const owned: RevisionSnapshot = {
    metadata: {
      namespace: 'ome',
      name: 'cr-srt-0123abcd',
      labels: { 'ome.io/runtime-of': 'srt' },
      annotations: { 'ome.io/created-by': 'ome-controller' },
    },
    data: { containers: null, disabled: true },
    revision: 1,
  };

  it.each([
    ['changed data', { ...owned, data: { containers: null, disabled: false } }, 'ControllerRevision ome/cr-srt-0123abcd is owned by OME; .data is immutable'],
    ['changed labels', { ...owned, metadata: { ...owned.metadata, labels: {} } }, 'ControllerRevision ome/cr-srt-0123abcd is owned by OME; .labels are immutable'],
    ['a changed revision', { ...owned, revision: 2 }, 'ControllerRevision ome/cr-srt-0123abcd is owned by OME; .revision is immutable'],
    ['an annotation change (GC marks)', { ...owned, metadata: { ...owned.metadata, annotations: { ...owned.metadata.annotations, 'ome.io/gc-eligible-since': '2026-09-30T12:00:00Z' } } }, undefined],
    ['data with keys in another order', { ...owned, data: { disabled: true, containers: null } }, undefined],
  ])('%s', (_name, updated, expected) => {
    expect(checkControllerRevisionUpdate(owned, updated)).toBe(expected);
  });

  it('does not check revisions OME did not create', () => {
    const foreign = { ...owned, metadata: { ...owned.metadata, annotations: {} } };
    expect(checkControllerRevisionUpdate(foreign, { ...foreign, data: {} })).toBeUndefined();
  });
});
