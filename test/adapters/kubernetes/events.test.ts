import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterClient, type ClosableClusterClient } from '../../../shared/adapters/kubernetes';
import { createEventRecorder, recordEvent } from '../../../shared/use-cases/record-event';
import type { ClusterServingRuntime, InferenceService } from '../../../shared/domain/model';
import { EventReason, Message } from '../../../shared/domain/vocabulary';
import { reply, startCannedServer, status, type CannedServer } from './canned-server';

const isvc: InferenceService = {
  apiVersion: 'ome.io/v1beta1',
  kind: 'InferenceService',
  metadata: { name: 'chat', namespace: 'prod', uid: 'uid-chat', resourceVersion: '7' },
  spec: {},
};

const repinned = {
  type: 'Normal',
  reason: EventReason.rolloutPlanRepinned,
  message: Message.repinned('chat-0123456789ab', 'rp1:56fe0ddd6edd', 'rp1:1d153db2a5df'),
  reportingController: 'ome-pinning-repin-apply',
  reportingInstance: 'test',
} as const;

describe('recordEvent', () => {
  let server: CannedServer;
  let client: ClosableClusterClient;
  let created = 0;
  const clock = { now: new Date('2026-09-28T14:15:57.123Z') };

  beforeAll(async () => {
    server = await startCannedServer();
    client = createClusterClient(server.connection);
    // A tiny Events API: names generated objects, counts patches, forgets `chat.gone`.
    server.route = (request, response) => {
      const body = JSON.parse(request.body) as Record<string, unknown>;
      if (request.method === 'POST') {
        created += 1;
        const metadata = body.metadata as { generateName: string };
        return reply(response, 201, { ...body, metadata: { ...metadata, name: `${metadata.generateName}${created}` } });
      }
      if (request.path.endsWith('/chat.gone')) return reply(response, 404, status(404, 'NotFound', 'events "chat.gone" not found'));
      return reply(response, 200, { kind: 'Event', metadata: { name: request.path.split('/').at(-1) }, ...body });
    };
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  it('creates a new Event, then bumps count and lastTimestamp of a repeat', async () => {
    const recorder = createEventRecorder(client, { now: () => clock.now });
    const first = await recorder.record(isvc, repinned);
    expect(server.requests.at(-1)).toMatchObject({ method: 'POST', path: '/api/v1/namespaces/prod/events' });
    expect(JSON.parse(server.requests.at(-1)!.body)).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { generateName: 'chat.', name: '', namespace: 'prod' },
      involvedObject: { apiVersion: 'ome.io/v1beta1', kind: 'InferenceService', name: 'chat', namespace: 'prod', uid: 'uid-chat', resourceVersion: '7' },
      type: 'Normal',
      reason: 'RolloutPlanRepinned',
      message: 'run chat-0123456789ab repinned: rp1:56fe0ddd6edd -> rp1:1d153db2a5df',
      source: { component: 'ome-pinning-repin-apply' },
      reportingComponent: 'ome-pinning-repin-apply',
      reportingInstance: 'test',
      firstTimestamp: '2026-09-28T14:15:57Z',
      lastTimestamp: '2026-09-28T14:15:57Z',
      count: 1,
    });

    clock.now = new Date('2026-09-28T14:16:30Z');
    await recorder.record(isvc, repinned);
    expect(server.requests.at(-1)).toMatchObject({ method: 'PATCH', path: `/api/v1/namespaces/prod/events/${first.metadata.name}` });
    expect(server.requests.at(-1)!.headers['content-type']).toBe('application/merge-patch+json');
    expect(JSON.parse(server.requests.at(-1)!.body)).toEqual({ count: 2, lastTimestamp: '2026-09-28T14:16:30Z' });

    await recorder.record(isvc, { ...repinned, type: 'Warning', reason: EventReason.rolloutRepinRejected, message: 'repin rejected: x' });
    expect(server.requests.at(-1)!.method).toBe('POST');
  });

  it('creates the Event afresh when the remembered one expired, and files cluster-scoped objects under default', async () => {
    server.route = ((route) => (request, response) => {
      if (request.method === 'POST') {
        created += 1;
        const body = JSON.parse(request.body) as { metadata: Record<string, string> };
        return reply(response, 201, { ...body, metadata: { ...body.metadata, name: 'chat.gone' } });
      }
      return route(request, response);
    })(server.route);
    await recordEvent(client, isvc, repinned);
    await recordEvent(client, isvc, repinned);
    expect(server.requests.slice(-3).map((request) => request.method)).toEqual(['POST', 'PATCH', 'POST']);

    const runtime: ClusterServingRuntime = { apiVersion: 'ome.io/v1beta1', kind: 'ClusterServingRuntime', metadata: { name: 'sglang' }, spec: {} };
    await recordEvent(client, runtime, { ...repinned, reason: 'Test' });
    expect(server.requests.at(-1)!.path).toBe('/api/v1/namespaces/default/events');
  });
});
