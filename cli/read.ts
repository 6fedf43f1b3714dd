/** Reads for the read-only commands: API errors surface with what was being read. */
import { NotFoundError } from '../shared/errors';
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
