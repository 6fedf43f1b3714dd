/**
 * One read per decision: the requests one pin makes through the workload writer the
 * functions use (rolloutAwareWorkloadWriter), in order. Each input is read once (the
 * InferenceService, its runtime, the revisions the decision names, the engine Deployment),
 * then the writes; nothing is read again that this pin has just read or written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rolloutAwareWorkloadWriter } from '../../shared/app/engine-workload-writer';
import { systemClock } from '../../shared/ports/clock';
import { Resources } from '../../shared/domain/model/resources';
import { pinInferenceService, type DriftCheckDeps } from '../../shared/use-cases/pinning';
import { annotateSync, applyRuntime, CountingClient, editIsvc, ISVC, NS, REV_085, REV_090, RUNTIME, seedIsvc, seedRuntime, startPinningWorld, type PinningWorld } from './support';

let world: PinningWorld;
let deps: DriftCheckDeps;
const requests: string[] = [];

beforeAll(async () => {
  world = await startPinningWorld();
  await applyRuntime(world.admin, seedRuntime('0.9'));
  await world.admin.create(Resources.inferenceServices, seedIsvc());
  // The client the pin uses, recording `verb resource name` for every request.
  const client = new CountingClient(world.admin);
  client.onRequest = (verb, type, name) => void requests.push(`${verb} ${type.plural} ${name}`);
  deps = { ...world.deps, client, workloads: rolloutAwareWorkloadWriter(systemClock)(client) };
});

afterAll(async () => {
  await world?.stop();
});

async function pinRequests(): Promise<string[]> {
  requests.length = 0;
  await pinInferenceService(deps, { namespace: NS, name: ISVC });
  return [...requests];
}

const isvc = `inferenceservices ${ISVC}`;
const runtime = `servingruntimes ${RUNTIME}`;
const engine = `deployments ${ISVC}-engine`;

describe('the requests of one pin, in order', () => {
  it('a new InferenceService: reads its inputs once, creates the revision, writes status, creates the engine', async () => {
    expect(await pinRequests()).toEqual([`get ${isvc}`, `get ${runtime}`, `get controllerrevisions ${REV_090}`, `create controllerrevisions ${REV_090}`, `replaceStatus ${isvc}`, `get ${engine}`, `create ${engine}`]);
  });

  it('pinned, nothing to do: four reads and no write', async () => {
    await editIsvc(world.admin, ISVC, (object) => {
      object.spec.runtime = { name: RUNTIME, kind: 'ServingRuntime', autoSync: false };
    });
    await pinRequests();
    expect(await pinRequests()).toEqual([`get ${isvc}`, `get ${runtime}`, `get controllerrevisions ${REV_090}`, `get ${engine}`]);
  });

  it('a sync token after a runtime edit: each revision read once, then the new one, the status and the engine written', async () => {
    await applyRuntime(world.admin, seedRuntime('0.85'));
    await annotateSync(world.admin, ISVC, 'tok-1');
    expect(await pinRequests()).toEqual([
      `get ${isvc}`,
      `get ${runtime}`,
      `get controllerrevisions ${REV_090}`,
      `get controllerrevisions ${REV_085}`,
      `create controllerrevisions ${REV_085}`,
      `replaceStatus ${isvc}`,
      `get ${engine}`,
      `replace ${engine}`,
    ]);
  });
});
