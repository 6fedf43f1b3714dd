/**
 * The check that needs no lookup holds with no webhook registered (as while it cannot be
 * reached): the admission policy of infra/k8s/policy-admission-checks.yaml, which both
 * servers install with the rest of infra/k8s, refuses a change to an OME revision with the
 * webhook's words. The revision pin's form stays the webhook's alone (the user guide words
 * its denial), so without the webhook the seed's InferenceService, pinned or not, is
 * admitted. On the embedded server and on a real kube-apiserver (the `real` project).
 */
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../shared/domain/model/resources';
import { buildControllerRevision } from '../../shared/domain/runtime/revision';
import { RuntimeKind } from '../../shared/domain/vocabulary';
import { KubectlHarness } from '../cluster/support';
import { ON_SERVER, startTestCluster, type TestCluster } from '../support/test-cluster';

const NS = 'llama-demo';
const ISVC = 'llama-3-2-3b-instruct';
const RUNTIME = 'sglang-llama-3-2-3b';
const REVISION = 'r-llama-demo-sglang-llama-3-2-3b-590753e8';

/** The seed's isvc.yaml, with the runtime fields given. */
function isvcYaml(runtime: Record<string, unknown>, name = ISVC): string {
  return stringify({
    apiVersion: 'ome.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace: NS },
    spec: { model: { name: 'llama-3-2-3b-instruct' }, runtime: { name: RUNTIME, kind: 'ServingRuntime', ...runtime }, engine: { minReplicas: 1, maxReplicas: 1 } },
  });
}

const refused = (policy: string, reason: string): string => `ValidatingAdmissionPolicy '${policy}' with binding '${policy}' denied request: ${reason}`;

/** kube-apiserver enforces a policy a moment after it is written: waits until a dry run of a refused label change is refused. */
async function waitForRevisionPolicy(kubectl: KubectlHarness, revision: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await kubectl.run('label', 'controllerrevision', revision, '-n', 'ome', 'ome.io/runtime-of=probe', '--overwrite', '--dry-run=server')).code === 0) {
    if (Date.now() > deadline) throw new Error('the revision immutability admission policy was not enforced within 60 s');
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 250));
  }
}

describe(`the admission check that needs no lookup, without the webhook${ON_SERVER}`, () => {
  let cluster: TestCluster;
  let kubectl: KubectlHarness;
  let name: string;

  beforeAll(async () => {
    cluster = await startTestCluster({ namespaces: [NS] });
    kubectl = new KubectlHarness(cluster);
    expect(await cluster.client.list(Resources.validatingWebhookConfigurations)).toMatchObject({ items: [] });
    const revision = await cluster.client.create(
      Resources.controllerRevisions,
      buildControllerRevision({ kind: RuntimeKind.namespaced, namespace: NS, runtimeName: RUNTIME, mergedSpec: { containers: [{ name: 'ome-container', image: 'sglang' }] }, omeNamespace: 'ome' }),
    );
    name = revision.metadata.name;
    await waitForRevisionPolicy(kubectl, name);
  });

  afterAll(async () => {
    kubectl?.cleanup();
    await cluster?.stop();
  });

  it('admits the seed\'s InferenceService, and its pin (the pin\'s checks are the webhook\'s alone)', async () => {
    const file = kubectl.file('isvc.yaml', isvcYaml({ autoSync: false }));
    expect(await kubectl.run('apply', '-f', file)).toEqual({ code: 0, stdout: `inferenceservice.ome.io/${ISVC} created\n`, stderr: '' });

    const pinned = kubectl.file('pinned.yaml', isvcYaml({ autoSync: false, revision: REVISION }));
    expect(await kubectl.run('apply', '-f', pinned)).toEqual({ code: 0, stdout: `inferenceservice.ome.io/${ISVC} configured\n`, stderr: '' });
  });

  it('refuses a change to an OME revision\'s data and labels, and admits an annotation', async () => {
    // The API server keeps .data immutable itself, before admission.
    const data = await kubectl.run('patch', 'controllerrevision', name, '-n', 'ome', '--type', 'merge', '-p', '{"data":{"containers":[]}}');
    expect(data).toMatchObject({ code: 1, stdout: '' });
    expect(data.stderr).toContain('data: Invalid value');
    expect(data.stderr).toContain('field is immutable');
    const labels = await kubectl.run('label', 'controllerrevision', name, '-n', 'ome', 'ome.io/runtime-of=other', '--overwrite');
    expect(labels).toEqual({
      code: 1,
      stdout: '',
      stderr: `The controllerrevisions "${name}" is invalid: : ${refused('ome-pinning-revision-immutability', `ControllerRevision ome/${name} is owned by OME; .labels are immutable`)}\n`,
    });
    const number = cluster.client.patch(Resources.controllerRevisions, 'ome', name, { revision: 2 }, { type: 'merge' });
    await expect(number).rejects.toThrow(refused('ome-pinning-revision-immutability', `ControllerRevision ome/${name} is owned by OME; .revision is immutable`));

    const marked = await kubectl.run('annotate', 'controllerrevision', name, '-n', 'ome', 'ome.io/gc-eligible-since=2026-09-29T00:00:00Z');
    expect(marked).toEqual({ code: 0, stdout: `controllerrevision.apps/${name} annotated\n`, stderr: '' });
  });
});
