/**
 * The API server's own words for a refusal, printed under the guarded commands' fixed
 * message so a 403 or 404 is not hidden behind it: `Error from server (Forbidden): …` with
 * the verb and resource the server names, or `Error from server (NotFound): …`, as kubectl
 * prints them.
 */
import { apiFailureOf } from '../shared/adapters/kubernetes/errors';
import { NotFoundError } from '../shared/domain/errors';

export interface RefusedRequest {
  /** The API verb: get, list, patch. */
  verb: string;
  /** The resource as kubectl names it: `inferenceservices.ome.io`. */
  resource: string;
  name: string;
}

/** kubectl's line for a 401, 403 or 404; undefined for any other failure. */
export function describeApiRefusal(error: unknown, request: RefusedRequest): string | undefined {
  const failure = apiFailureOf(error);
  const code = failure?.code ?? (error instanceof NotFoundError ? 404 : undefined);
  if (code === 404) {
    const said = failure?.message ?? (error instanceof Error && error.message ? error.message : `${request.resource} "${request.name}" not found`);
    return `Error from server (NotFound): ${said}`;
  }
  if (code === 403 && failure) {
    const said = failure.message.includes('forbidden')
      ? failure.message
      : `${request.resource} "${request.name}" is forbidden: ${request.verb} was refused: ${failure.message}`;
    return `Error from server (Forbidden): ${said}`;
  }
  if (code === 401) return 'error: You must be logged in to the server (Unauthorized)';
  return undefined;
}

export const INFERENCE_SERVICE_RESOURCE = 'inferenceservices.ome.io';
