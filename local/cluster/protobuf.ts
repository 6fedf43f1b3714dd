/**
 * Decoding of the Kubernetes protobuf envelope for the built-in kinds that kubectl's
 * typed clients send as protobuf (`kubectl create namespace|configmap|secret|deployment`,
 * RBAC objects and ServiceAccounts, `kubectl auth can-i`).
 * Responses are always JSON, which those clients also accept. Fields are decoded by
 * number from the tables below; unknown fields are skipped and zero values dropped, as
 * `omitempty` JSON would leave them out.
 */
import { badRequest } from './api-errors';

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type FieldType = 'string' | 'bytes' | 'int' | 'bool' | 'intOrString' | 'time' | Schema | MapOf;
interface MapOf {
  map: 'string' | 'bytes';
}
interface Field {
  name: string;
  type: FieldType;
  repeated?: boolean;
}
type Schema = Record<number, Field>;

const OWNER_REFERENCE: Schema = {
  1: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'controller', type: 'bool' },
  7: { name: 'blockOwnerDeletion', type: 'bool' },
};

const OBJECT_META: Schema = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  7: { name: 'generation', type: 'int' },
  8: { name: 'creationTimestamp', type: 'time' },
  11: { name: 'labels', type: { map: 'string' } },
  12: { name: 'annotations', type: { map: 'string' } },
  13: { name: 'ownerReferences', type: OWNER_REFERENCE, repeated: true },
  14: { name: 'finalizers', type: 'string', repeated: true },
};

const LABEL_SELECTOR: Schema = {
  1: { name: 'matchLabels', type: { map: 'string' } },
  2: {
    name: 'matchExpressions',
    repeated: true,
    type: { 1: { name: 'key', type: 'string' }, 2: { name: 'operator', type: 'string' }, 3: { name: 'values', type: 'string', repeated: true } },
  },
};

const CONTAINER: Schema = {
  1: { name: 'name', type: 'string' },
  2: { name: 'image', type: 'string' },
  3: { name: 'command', type: 'string', repeated: true },
  4: { name: 'args', type: 'string', repeated: true },
  5: { name: 'workingDir', type: 'string' },
  6: {
    name: 'ports',
    repeated: true,
    type: { 1: { name: 'name', type: 'string' }, 2: { name: 'hostPort', type: 'int' }, 3: { name: 'containerPort', type: 'int' }, 4: { name: 'protocol', type: 'string' } },
  },
  7: { name: 'env', repeated: true, type: { 1: { name: 'name', type: 'string' }, 2: { name: 'value', type: 'string' } } },
  8: { name: 'resources', type: { 1: { name: 'limits', type: { map: 'string' } }, 2: { name: 'requests', type: { map: 'string' } } } },
  14: { name: 'imagePullPolicy', type: 'string' },
};

const POD_SPEC: Schema = {
  2: { name: 'containers', type: CONTAINER, repeated: true },
  3: { name: 'restartPolicy', type: 'string' },
  8: { name: 'serviceAccountName', type: 'string' },
  20: { name: 'initContainers', type: CONTAINER, repeated: true },
};

const DEPLOYMENT_SPEC: Schema = {
  1: { name: 'replicas', type: 'int' },
  2: { name: 'selector', type: LABEL_SELECTOR },
  3: { name: 'template', type: { 1: { name: 'metadata', type: OBJECT_META }, 2: { name: 'spec', type: POD_SPEC } } },
  4: {
    name: 'strategy',
    type: {
      1: { name: 'type', type: 'string' },
      2: { name: 'rollingUpdate', type: { 1: { name: 'maxUnavailable', type: 'intOrString' }, 2: { name: 'maxSurge', type: 'intOrString' } } },
    },
  },
  5: { name: 'minReadySeconds', type: 'int' },
  6: { name: 'revisionHistoryLimit', type: 'int' },
  7: { name: 'paused', type: 'bool' },
  9: { name: 'progressDeadlineSeconds', type: 'int' },
};

const RESOURCE_ATTRIBUTES: Schema = {
  1: { name: 'namespace', type: 'string' },
  2: { name: 'verb', type: 'string' },
  3: { name: 'group', type: 'string' },
  4: { name: 'version', type: 'string' },
  5: { name: 'resource', type: 'string' },
  6: { name: 'subresource', type: 'string' },
  7: { name: 'name', type: 'string' },
};

const POLICY_RULE: Schema = {
  1: { name: 'verbs', type: 'string', repeated: true },
  2: { name: 'apiGroups', type: 'string', repeated: true },
  3: { name: 'resources', type: 'string', repeated: true },
  4: { name: 'resourceNames', type: 'string', repeated: true },
  5: { name: 'nonResourceURLs', type: 'string', repeated: true },
};
const SUBJECT: Schema = { 1: { name: 'kind', type: 'string' }, 2: { name: 'apiGroup', type: 'string' }, 3: { name: 'name', type: 'string' }, 4: { name: 'namespace', type: 'string' } };
const ROLE_REF: Schema = { 1: { name: 'apiGroup', type: 'string' }, 2: { name: 'kind', type: 'string' }, 3: { name: 'name', type: 'string' } };
const BINDING: Schema = { 1: { name: 'metadata', type: OBJECT_META }, 2: { name: 'subjects', type: SUBJECT, repeated: true }, 3: { name: 'roleRef', type: ROLE_REF } };
const ROLE: Schema = { 1: { name: 'metadata', type: OBJECT_META }, 2: { name: 'rules', type: POLICY_RULE, repeated: true } };

const KINDS: Record<string, Schema> = {
  // `kubectl create serviceaccount|role|clusterrole|rolebinding|clusterrolebinding`
  ServiceAccount: { 1: { name: 'metadata', type: OBJECT_META }, 4: { name: 'automountServiceAccountToken', type: 'bool' } },
  Role: ROLE,
  ClusterRole: ROLE,
  RoleBinding: BINDING,
  ClusterRoleBinding: BINDING,
  // `kubectl auth can-i`
  SelfSubjectAccessReview: {
    1: { name: 'metadata', type: OBJECT_META },
    2: {
      name: 'spec',
      type: { 1: { name: 'resourceAttributes', type: RESOURCE_ATTRIBUTES }, 2: { name: 'nonResourceAttributes', type: { 1: { name: 'path', type: 'string' }, 2: { name: 'verb', type: 'string' } } } },
    },
  },
  Namespace: { 1: { name: 'metadata', type: OBJECT_META }, 2: { name: 'spec', type: { 1: { name: 'finalizers', type: 'string', repeated: true } } } },
  ConfigMap: {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'data', type: { map: 'string' } },
    3: { name: 'binaryData', type: { map: 'bytes' } },
    4: { name: 'immutable', type: 'bool' },
  },
  Secret: {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'data', type: { map: 'bytes' } },
    3: { name: 'type', type: 'string' },
    4: { name: 'stringData', type: { map: 'string' } },
    5: { name: 'immutable', type: 'bool' },
  },
  Deployment: { 1: { name: 'metadata', type: OBJECT_META }, 2: { name: 'spec', type: DEPLOYMENT_SPEC } },
};

class Reader {
  private offset = 0;

  constructor(private readonly buf: Buffer) {}

  get done(): boolean {
    return this.offset >= this.buf.length;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.offset >= this.buf.length) throw new Error('truncated varint');
      const byte = this.buf[this.offset] ?? 0;
      this.offset += 1;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  }

  bytes(): Buffer {
    const length = Number(this.varint());
    const out = this.buf.subarray(this.offset, this.offset + length);
    if (out.length !== length) throw new Error('truncated field');
    this.offset += length;
    return out;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.offset += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.offset += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
  }
}

function decodeMapEntry(buf: Buffer, valueType: 'string' | 'bytes'): [string, string] {
  const reader = new Reader(buf);
  let key = '';
  let value = '';
  while (!reader.done) {
    const tag = Number(reader.varint());
    const field = tag >> 3;
    if ((tag & 7) !== 2) {
      reader.skip(tag & 7);
      continue;
    }
    const data = reader.bytes();
    if (field === 1) key = data.toString('utf8');
    else if (field === 2) value = valueType === 'bytes' ? data.toString('base64') : data.toString('utf8');
  }
  return [key, value];
}

function decodeScalar(type: FieldType, reader: Reader, wireType: number): unknown {
  if (type === 'int') return Number(BigInt.asIntN(64, reader.varint()));
  if (type === 'bool') return reader.varint() !== 0n;
  if (wireType !== 2) {
    reader.skip(wireType);
    return undefined;
  }
  const data = reader.bytes();
  if (type === 'string') return data.toString('utf8');
  if (type === 'bytes') return data.toString('base64');
  if (type === 'time') {
    const time = decodeMessage(data, { 1: { name: 'seconds', type: 'int' } }) as { seconds?: number };
    return time.seconds ? new Date(time.seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') : undefined;
  }
  if (type === 'intOrString') {
    const v = decodeMessage(data, { 1: { name: 'type', type: 'int' }, 2: { name: 'intVal', type: 'int' }, 3: { name: 'strVal', type: 'string' } }) as { type?: number; intVal?: number; strVal?: string };
    return v.type === 1 ? (v.strVal ?? '') : (v.intVal ?? 0);
  }
  return decodeMessage(data, type as Schema);
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

function decodeMessage(buf: Buffer, schema: Schema): Record<string, unknown> {
  const reader = new Reader(buf);
  const out: Record<string, unknown> = {};
  while (!reader.done) {
    const tag = Number(reader.varint());
    const field = schema[tag >> 3];
    const wireType = tag & 7;
    if (!field) {
      reader.skip(wireType);
      continue;
    }
    if (typeof field.type === 'object' && 'map' in field.type) {
      const [key, value] = decodeMapEntry(reader.bytes(), (field.type as MapOf).map);
      out[field.name] = { ...((out[field.name] as Record<string, string> | undefined) ?? {}), [key]: value };
      continue;
    }
    const value = decodeScalar(field.type, reader, wireType);
    if (field.repeated) out[field.name] = [...((out[field.name] as unknown[] | undefined) ?? []), value];
    else out[field.name] = value;
  }
  for (const [key, value] of Object.entries(out)) {
    if (isEmpty(value) && !(key === 'replicas' && value === 0)) delete out[key];
  }
  return out;
}

/** Decodes a `k8s\0`-prefixed protobuf body into the JSON form of the object. */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw badRequest('the protobuf body is missing the k8s envelope');
  try {
    const envelope = new Reader(body.subarray(4));
    let apiVersion = '';
    let kind = '';
    let raw: Buffer = Buffer.alloc(0);
    while (!envelope.done) {
      const tag = Number(envelope.varint());
      if ((tag & 7) !== 2) {
        envelope.skip(tag & 7);
        continue;
      }
      const data = envelope.bytes();
      if (tag >> 3 === 1) {
        const typeMeta = decodeMessage(data, { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } });
        apiVersion = String(typeMeta.apiVersion ?? '');
        kind = String(typeMeta.kind ?? '');
      } else if (tag >> 3 === 2) {
        raw = data;
      }
    }
    const schema = KINDS[kind];
    if (!schema) throw badRequest(`protobuf bodies are not supported for kind ${kind}; send JSON`);
    return { apiVersion, kind, ...decodeMessage(raw, schema) };
  } catch (error) {
    if (error instanceof Error && error.name === 'ApiError') throw error;
    throw badRequest(`unable to decode protobuf body: ${error instanceof Error ? error.message : String(error)}`);
  }
}
