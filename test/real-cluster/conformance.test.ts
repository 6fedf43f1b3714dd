/**
 * Differential conformance: every case of conformance-cases.ts is sent to the embedded API
 * server and to a real kube-apiserver (local/real-cluster), each case in a fresh namespace
 * of the same name on both, and the answers are compared: status code, Status reason,
 * message and details, the object (server-set fields such as uid, resourceVersion,
 * creationTimestamp and managedFields removed), Warning headers and watch events. A case
 * listed in KNOWN_DEVIATIONS must differ in exactly the listed ways; any other must not differ.
 */
import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../local/cluster';
import { startRealCluster, type RealCluster } from '../../local/real-cluster';
import {
  ALL_ASPECTS,
  CASES,
  KNOWN_DEVIATIONS,
  SUITE_ACCOUNTS,
  type Answer,
  type Answers,
  type Aspect,
  type ConformanceCase,
  type Identity,
  type Request,
  type WatchEvent,
} from './conformance-cases';

type ServerName = 'embedded' | 'real';

interface Server {
  name: ServerName;
  url: string;
  ca: Buffer;
  agent: Agent;
  tokens: Record<Identity, string>;
}

interface Difference {
  /** `<label>.<aspect>`, as KNOWN_DEVIATIONS names it. */
  key: string;
  embedded: unknown;
  real: unknown;
}

const WATCH_TIMEOUT_MS = 5000;
const UNTIL_TIMEOUT_MS = 10_000;
const UID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;
/** Set by the Deployment controller on a real cluster; the embedded server simulates no rollout history. */
const DEPLOYMENT_REVISION = 'deployment.kubernetes.io/revision';

class AnswerBook implements Answers {
  private readonly answers = new Map<string, Answer>();

  add(label: string, answer: Answer): void {
    this.answers.set(label, answer);
  }

  get(label: string): Answer {
    const answer = this.answers.get(label);
    if (!answer) throw new Error(`no answer labelled ${label}`);
    return answer;
  }

  rv(label: string): string {
    return String((this.get(label).body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion ?? '');
  }

  uid(label: string): string {
    return String((this.get(label).body as { metadata?: { uid?: string } }).metadata?.uid ?? '');
  }
}

function computed<T>(value: T | ((answers: Answers) => T), answers: Answers): T {
  return typeof value === 'function' ? (value as (answers: Answers) => T)(answers) : value;
}

/** The texts of `Warning: 299 - "<text>"` headers. */
function warningsOf(headers: NodeJS.Dict<string[]>): string[] {
  return (headers.warning ?? []).map((value) => {
    const quoted = /^\d{3} \S+ "(.*)"$/.exec(value)?.[1];
    return quoted === undefined ? value : (JSON.parse(`"${quoted}"`) as string);
  });
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

interface Exchange {
  /** Resolves once the response headers arrived (a watch is then established). */
  ready: Promise<void>;
  answer: Promise<Answer>;
}

/** Sends one request; a watch's events are read until it has enough, it ends, or its time is up. */
function exchange(server: Server, request: Request, answers: Answers): Exchange {
  const path = computed(request.path, answers);
  const body = request.body === undefined ? undefined : computed(request.body, answers);
  const data = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string | number> = { authorization: `Bearer ${server.tokens[request.as ?? 'admin']}`, accept: 'application/json' };
  // As the plane's client: a body always has its length (Node sends a DELETE's body unframed otherwise).
  if (data !== undefined) Object.assign(headers, { 'content-type': request.contentType ?? 'application/json', 'content-length': Buffer.byteLength(data) });
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolveReady) => (markReady = resolveReady));
  const answer = new Promise<Answer>((resolveAnswer, reject) => {
    const outgoing = httpsRequest(`${server.url}${path}`, { method: request.method, ca: server.ca, agent: server.agent, headers }, (response) => {
      markReady();
      const code = response.statusCode ?? 0;
      const warnings = warningsOf(response.headersDistinct);
      let text = '';
      response.setEncoding('utf8');
      if (request.watch && code === 200) {
        const events: WatchEvent[] = [];
        const wanted = request.watch.events;
        let finished = false;
        const finish = (): void => {
          if (finished) return;
          finished = true;
          clearTimeout(timer);
          outgoing.destroy();
          resolveAnswer({ code, body: undefined, warnings, events });
        };
        const timer = setTimeout(finish, request.watch.timeoutMs ?? WATCH_TIMEOUT_MS);
        response.on('data', (chunk: string) => {
          text += chunk;
          let newline = text.indexOf('\n');
          while (newline >= 0) {
            const line = text.slice(0, newline).trim();
            text = text.slice(newline + 1);
            if (line !== '') events.push(JSON.parse(line) as WatchEvent);
            newline = text.indexOf('\n');
          }
          if (events.length >= wanted) finish();
        });
        response.on('end', finish);
        response.on('error', finish);
        return;
      }
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolveAnswer({ code, body: parseBody(text), warnings }));
    });
    outgoing.on('error', (error) => {
      markReady();
      reject(error);
    });
    outgoing.setTimeout(30_000, () => outgoing.destroy(new Error(`${server.name}: ${request.method} ${path}: no answer in 30 s`)));
    if (data !== undefined) outgoing.write(data);
    outgoing.end();
  });
  return { ready, answer };
}

/** A setup request's answer, sent again while it does not pass the request's `until`. */
async function settled(server: Server, request: Request, answers: Answers): Promise<Answer> {
  const deadline = Date.now() + UNTIL_TIMEOUT_MS;
  for (;;) {
    const answer = await exchange(server, request, answers).answer;
    if (request.until === undefined || request.until(answer) || Date.now() > deadline) return answer;
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 100));
  }
}

function describeRequest(request: Request, answers: Answers): string {
  return `${request.method} ${computed(request.path, answers)}`;
}

/** Runs one case on one server: its namespace, its setup (which must succeed), then the compared requests. */
async function runCase(testCase: ConformanceCase, server: Server, ns: string): Promise<Map<string, Answer>> {
  const answers = new AnswerBook();
  const namespace = await exchange(server, { method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } }, answers).answer;
  if (namespace.code !== 201) throw new Error(`${server.name}: namespace ${ns} not created: ${JSON.stringify(namespace.body)}`);
  for (const [index, step] of (testCase.setup?.(ns) ?? []).entries()) {
    const answer = await settled(server, step, answers);
    if (answer.code >= 300) throw new Error(`${server.name}: setup ${describeRequest(step, answers)} answered ${answer.code}: ${JSON.stringify(answer.body)}`);
    answers.add(step.label ?? `setup[${index}]`, answer);
  }
  const compared = new Map<string, Answer>();
  const request = testCase.request(ns);
  const main = exchange(server, request, answers);
  if (!request.watch) answers.add(request.label ?? 'request', await main.answer);
  await main.ready;
  const then = (testCase.then?.(ns) ?? []).map((step, index) => ({ step, label: step.label ?? `then[${index}]` }));
  const later = new Map<string, Answer>();
  for (const { step, label } of then) {
    const answer = await exchange(server, step, answers).answer;
    answers.add(label, answer);
    later.set(label, answer);
  }
  compared.set('request', await main.answer);
  for (const [label, answer] of later) compared.set(label, answer);
  return compared;
}

// ---- normalisation ---------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function masked(text: string, masks: Array<[RegExp, string]>): string {
  return masks.reduce((current, [pattern, replacement]) => current.replace(pattern, replacement), text.replace(UID, '<uid>'));
}

/** An object without the fields each server sets its own way (identity, versions, times, field managers). */
function normalizeObject(value: unknown): unknown {
  if (!isRecord(value)) return value;
  const object = structuredClone(value);
  if (isRecord(object.metadata)) {
    const meta = object.metadata;
    for (const key of ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'selfLink']) delete meta[key];
    if (meta.deletionTimestamp !== undefined) meta.deletionTimestamp = '<set>';
    const spec = object.spec;
    if (isRecord(spec) && isRecord(spec.template) && isRecord(spec.selector)) {
      // A Deployment's status and revision annotation are its controller's, not the API server's.
      delete object.status;
      if (isRecord(meta.annotations)) {
        delete meta.annotations[DEPLOYMENT_REVISION];
        if (Object.keys(meta.annotations).length === 0) delete meta.annotations;
      }
    }
  }
  return object;
}

function isStatus(body: unknown): body is Record<string, unknown> {
  return isRecord(body) && body.kind === 'Status' && body.apiVersion === 'v1';
}

function normalizeBody(body: unknown): unknown {
  if (isStatus(body) || !isRecord(body)) return isStatus(body) ? undefined : body;
  if (Array.isArray(body.items)) {
    const metadata = isRecord(body.metadata) ? { ...body.metadata } : {};
    delete metadata.resourceVersion;
    if (metadata.continue) metadata.continue = '<continue>';
    return { ...body, metadata, items: body.items.map(normalizeObject) };
  }
  return normalizeObject(body);
}

function normalizeDetails(details: unknown, masks: Array<[RegExp, string]>): unknown {
  if (!isRecord(details)) return details;
  const copy = structuredClone(details);
  delete copy.uid;
  if (Array.isArray(copy.causes)) {
    copy.causes = copy.causes.map((cause: unknown) => (isRecord(cause) && typeof cause.message === 'string' ? { ...cause, message: masked(cause.message, masks) } : cause));
  }
  return copy;
}

function normalizeEvents(events: WatchEvent[] | undefined, masks: Array<[RegExp, string]>): unknown {
  return events?.map((event) => {
    if (!isStatus(event.object)) return { type: event.type, object: normalizeObject(event.object) };
    const status = event.object;
    return { type: event.type, object: { ...status, message: masked(String(status.message ?? ''), masks), details: normalizeDetails(status.details, masks) } };
  });
}

function aspectOf(answer: Answer, aspect: Aspect, masks: Array<[RegExp, string]>): unknown {
  const status = isStatus(answer.body) ? answer.body : undefined;
  switch (aspect) {
    case 'code':
      return answer.code;
    case 'reason':
      return status?.reason;
    case 'message':
      return typeof status?.message === 'string' ? masked(status.message, masks) : undefined;
    case 'details':
      return normalizeDetails(status?.details, masks);
    case 'body':
      return normalizeBody(answer.body);
    case 'warnings':
      return answer.warnings.map((warning) => masked(warning, masks));
    case 'events':
      return normalizeEvents(answer.events, masks);
  }
}

function differences(testCase: ConformanceCase, embedded: Map<string, Answer>, real: Map<string, Answer>): Difference[] {
  const masks = testCase.mask ?? [];
  const found: Difference[] = [];
  for (const [label, embeddedAnswer] of embedded) {
    const realAnswer = real.get(label);
    if (!realAnswer) throw new Error(`no real answer labelled ${label}`);
    for (const aspect of testCase.compare ?? ALL_ASPECTS) {
      const e = aspectOf(embeddedAnswer, aspect, masks);
      const r = aspectOf(realAnswer, aspect, masks);
      if (!isDeepStrictEqual(e, r)) found.push({ key: `${label}.${aspect}`, embedded: e, real: r });
    }
  }
  return found;
}

// ---- the suite -------------------------------------------------------------------------

/** The deviations table of docs/embedded-cluster.md, `Case | Differs | Reason`: each case with what it lists as differing. */
function documentedDeviations(): Array<{ case: string; differs: string[] }> {
  const text = readFileSync(new URL('../../docs/embedded-cluster.md', import.meta.url), 'utf8');
  const section = text.split('## Conformance with kube-apiserver')[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Case') && !line.startsWith('| ---'))
    .map((line) => {
      const [name = '', differs = ''] = line.slice(2).split(' | ');
      return { case: name.trim(), differs: [...differs.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '').sort() };
    })
    .sort((a, b) => a.case.localeCompare(b.case));
}

const SUMMARY = `conformance: ${CASES.length} cases, ${KNOWN_DEVIATIONS.length} known deviations`;

describe('the embedded API server answers as kube-apiserver', () => {
  let embedded: EmbeddedCluster | undefined;
  let real: RealCluster | undefined;
  const servers: Record<ServerName, Server> = {} as Record<ServerName, Server>;

  beforeAll(async () => {
    [embedded, real] = await Promise.all([startEmbeddedCluster(), startRealCluster({ nodes: 1 })]);
    const embeddedCluster = embedded;
    const realCluster = real;
    const make = (name: ServerName, url: string, caData: string, adminToken: string): Server => ({
      name,
      url,
      ca: Buffer.from(caData, 'base64'),
      agent: new Agent({ keepAlive: true, maxSockets: 8 }),
      tokens: { admin: adminToken, nobody: '', reader: '' },
    });
    servers.embedded = make('embedded', embeddedCluster.httpsUrl, embeddedCluster.caData, embeddedCluster.adminToken);
    servers.real = make('real', realCluster.httpsUrl, realCluster.caData, realCluster.adminToken);
    for (const server of Object.values(servers)) {
      for (const name of Object.values(SUITE_ACCOUNTS)) {
        const created = await exchange(server, { method: 'POST', path: '/api/v1/namespaces/ome/serviceaccounts', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } } }, new AnswerBook()).answer;
        if (created.code !== 201) throw new Error(`${server.name}: ServiceAccount ${name} not created: ${JSON.stringify(created.body)}`);
      }
    }
    for (const identity of ['nobody', 'reader'] as const) {
      servers.embedded.tokens[identity] = embeddedCluster.serviceAccountToken('ome', SUITE_ACCOUNTS[identity]);
      servers.real.tokens[identity] = await realCluster.serviceAccountToken('ome', SUITE_ACCOUNTS[identity]);
    }
  });

  afterAll(async () => {
    for (const server of Object.values(servers)) server.agent.destroy();
    await Promise.all([embedded?.stop(), real?.stop()]);
  });

  for (const [index, testCase] of CASES.entries()) {
    it(testCase.name, () => compareCase(testCase, `cf-${index}`));
  }

  async function compareCase(testCase: ConformanceCase, ns: string): Promise<void> {
    const [onEmbedded, onReal] = await Promise.all([runCase(testCase, servers.embedded, ns), runCase(testCase, servers.real, ns)]);
    const found = differences(testCase, onEmbedded, onReal);
    const known = KNOWN_DEVIATIONS.find((deviation) => deviation.case === testCase.name);
    if (!known) {
      expect(found, 'the answers differ').toEqual([]);
      return;
    }
    // A listed deviation must still differ, and only as listed: the list stays honest.
    expect(found.map((difference) => difference.key).sort(), `listed as: ${known.reason}\n${JSON.stringify(found, null, 1)}`).toEqual([...known.differs].sort());
  }

  it(SUMMARY, () => {
    const names = new Set(CASES.map((testCase) => testCase.name));
    expect(names.size, 'case names are unique').toBe(CASES.length);
    expect(KNOWN_DEVIATIONS.filter((deviation) => !names.has(deviation.case)).map((deviation) => deviation.case), 'deviations of cases that do not exist').toEqual([]);
    const listed = KNOWN_DEVIATIONS.map((deviation) => ({ case: deviation.case, differs: [...deviation.differs].sort() })).sort((a, b) => a.case.localeCompare(b.case));
    expect(documentedDeviations(), 'docs/embedded-cluster.md lists the known deviations').toEqual(listed);
    console.log(SUMMARY);
  });
});
