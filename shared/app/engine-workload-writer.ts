import { assertOwnedDeployment, createDirectWorkloadWriter, workloadOwnerOf } from '../use-cases/direct-workload-writer';
import type { Clock } from '../ports/clock';
import type { ClusterClient } from '../ports/cluster';
import type { EngineWorkloadRequest, EngineWorkloadWriter } from '../ports/workloads';
import { fenceDeploymentWrites } from '../use-cases/rollout-runs/fenced-deployments';
import { createRolloutWorkloadWriter } from '../use-cases/rollout-runs/rollout-workload-writer';
import { getOptional } from '../use-cases/rollout-runs/workloads';
import type { MetricsBinding } from '../domain/rollout/analysis';
import type { StatusTransitions } from '../ports/notifications';
import { specGroupsOf, type RolloutIsvc } from '../use-cases/rollout-runs/rollout-status';

/**
 * The engine workload writer the functions use: an engine in a rollout group rolls out
 * through a run; everything else is written directly. Only Deployments the InferenceService
 * owns are touched: a same-named Deployment of anyone else's fails the apply before any
 * run opens (UnownedDeploymentError), and every later Deployment write checks again.
 * `metricsOf` reads what the cluster binds for analysis steps, so a run opens (or parks
 * as ProviderUnbound) as the rollout-run function resolves the same plan; it is read once
 * per writer, and only for an InferenceService with rollout groups. `transitions` hears of
 * the status writes that open and close runs (notifications).
 */
export const rolloutAwareWorkloadWriter =
  (clock: Clock, metricsOf?: (client: ClusterClient) => Promise<MetricsBinding>, transitions?: StatusTransitions) =>
  (client: ClusterClient): EngineWorkloadWriter => {
    const direct = createDirectWorkloadWriter(client);
    let binding: Promise<MetricsBinding> | undefined;
    const metricsFor = async (request: EngineWorkloadRequest): Promise<{ metrics?: MetricsBinding }> => {
      const groups = (request.isvc as RolloutIsvc).spec?.rollout?.groups ?? [];
      if (!metricsOf || groups.length === 0) return {};
      binding ??= metricsOf(client);
      return { metrics: await binding };
    };
    /**
     * Fails before any run opens when a same-named Deployment is someone else's. Without
     * rollout groups or a run in progress no run can open: the Deployment is written
     * directly, and the direct writer checks its owner on the one read it makes anyway.
     */
    const ownedWriter = async (request: EngineWorkloadRequest): Promise<EngineWorkloadWriter> => {
      const owner = workloadOwnerOf(request.isvc);
      const isvc = request.isvc as RolloutIsvc;
      if (specGroupsOf(isvc).length > 0 || isvc.status?.rollout?.activeRun) {
        const { namespace = '', name } = request.desired.metadata;
        const stable = await getOptional(client, namespace, name);
        if (stable) assertOwnedDeployment(stable, owner);
      }
      // The rollout writer fences its own writes; this wrapper adds the ownership check only.
      return createRolloutWorkloadWriter({
        client: fenceDeploymentWrites(client, undefined, owner),
        direct,
        clock,
        ...(await metricsFor(request)),
        ...(transitions ? { transitions } : {}),
      });
    };
    return {
      async apply(request) {
        return (await ownedWriter(request)).apply(request);
      },
      async applyAll(requests) {
        const writers = await Promise.all(requests.map(ownedWriter));
        const writer = writers[0];
        if (!writer?.applyAll) return [];
        return writer.applyAll(requests);
      },
    };
  };
