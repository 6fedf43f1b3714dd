/** Reads for the read-only commands: API errors surface with what was being read. */
import { NotFoundError } from '../shared/domain/errors';
import { collectRuntimeEvidence, type RuntimeEvidence } from './domain/runtime';
import type { CommandEnv } from './env';
import { withTimeout } from './env';
import { CliError } from './errors';
import type { InferenceServiceObject } from './isvc';
import { InferenceServices } from './resources';

export async function readService(env: CommandEnv, namespace: string, name: string, what: string): Promise<InferenceServiceObject> {
  try {
    return await withTimeout(env.client.get<InferenceServiceObject>(InferenceServices, namespace, name), env.requestTimeoutMs);
  } catch (error) {
    if (error instanceof NotFoundError) {
      throw new CliError(`${what}: inferenceservices.ome.io "${name}" not found`, 1, { cause: error });
    }
    throw new CliError(`${what}: ${(error as Error).message}`, 1, { cause: error });
  }
}

/** An InferenceService and the evidence about its runtime, for `runtime effective` and `runtime history`. */
export async function readRuntimeEvidence(
  env: CommandEnv,
  target: { namespace: string; name: string; omeNamespace: string },
): Promise<{ isvc: InferenceServiceObject; evidence: RuntimeEvidence }> {
  const isvc = await readService(env, target.namespace, target.name, 'get InferenceService');
  try {
    return { isvc, evidence: await collectRuntimeEvidence(env.client, isvc, target.omeNamespace) };
  } catch (error) {
    throw new CliError(`collect runtime evidence: ${(error as Error).message}`, 1, { cause: error });
  }
}
