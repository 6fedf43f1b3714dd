/**
 * Each function's IAM role as serverless.yml declares it, with every statement resolved to
 * concrete ARNs: the Serverless variables the file uses (`${self:…}`, `${sls:stage}`,
 * `${opt:…, 'default'}`, `${param:…, 'default'}`) and the CloudFormation functions in the
 * roles (`Fn::Sub` with `${AWS::Partition|Region|AccountId}`, `Fn::GetAtt [X, Arn]`, `Ref`).
 * Read straight from the YAML, so tests of the policies need no packaging.
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { InvalidInputError } from '../../shared/domain/errors';
import type { PolicyStatement } from './policy';

export interface TemplateScope {
  stage?: string;
  region?: string;
  accountId?: string;
  partition?: string;
  params?: Record<string, string>;
}

export interface FunctionRole {
  functionName: string;
  /** Logical id of the AWS::IAM::Role under `resources`. */
  roleLogicalId: string;
  /** `<service>-<stage>-<logical id>`, standing in for the name CloudFormation generates. */
  roleName: string;
  roleArn: string;
  statements: PolicyStatement[];
}

export interface TemplateRoles {
  service: string;
  stage: string;
  region: string;
  accountId: string;
  partition: string;
  /** ARN of the table the stores use (`ControlPlaneTable`). */
  tableArn: string;
  tableName: string;
  /** `custom.clusterSecretPrefix`, resolved; empty when the file has none. */
  clusterSecretPrefix: string;
  /** Function name → its role. */
  functions: Map<string, FunctionRole>;
}

type Doc = Record<string, unknown>;

function isRecord(value: unknown): value is Doc {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readPath(root: unknown, path: string): unknown {
  let current = root;
  for (const key of path.split('.')) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

const SERVERLESS_VARIABLE = /\$\{((?:self|sls|opt|param):[^{}]*)\}/g;

/** Resolves Serverless variables in strings, recursively; CloudFormation's `${AWS::…}` stay. */
function createVariableResolver(doc: Doc, scope: TemplateScope): (value: unknown) => unknown {
  const lookup = (expression: string): string | undefined => {
    const [primary = '', ...rest] = expression.split(',');
    const fallback = rest.length > 0 ? rest.join(',').trim().replace(/^['"]|['"]$/g, '') : undefined;
    const separator = primary.indexOf(':');
    const source = primary.slice(0, separator).trim();
    const address = primary.slice(separator + 1).trim();
    let value: unknown;
    if (source === 'self') value = readPath(doc, address);
    else if (source === 'sls' && address === 'stage') value = scope.stage ?? resolveString(String(readPath(doc, 'provider.stage') ?? 'dev'));
    else if (source === 'opt' && address === 'stage') value = scope.stage;
    else if (source === 'opt' && address === 'region') value = scope.region;
    else if (source === 'param') value = scope.params?.[address];
    const chosen = value ?? fallback;
    return chosen === undefined ? undefined : String(chosen);
  };
  function resolveString(text: string): string {
    let current = text;
    for (let round = 0; round < 10; round += 1) {
      const next = current.replace(SERVERLESS_VARIABLE, (whole, expression: string) => lookup(expression) ?? whole);
      if (next === current) return current;
      current = next;
    }
    throw new InvalidInputError(`serverless.yml: variables in ${JSON.stringify(text)} do not settle`);
  }
  const resolve = (value: unknown): unknown => {
    if (typeof value === 'string') return resolveString(value);
    if (Array.isArray(value)) return value.map(resolve);
    if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item)]));
    return value;
  };
  return resolve;
}

/** Parses serverless.yml text into each function's resolved role. */
export function parseTemplateRoles(text: string, scope: TemplateScope = {}): TemplateRoles {
  const raw = parseYaml(text) as Doc;
  const doc = createVariableResolver(raw, scope)(raw) as Doc;
  const service = String(doc.service);
  const stage = String(readPath(doc, 'provider.stage'));
  const region = String(readPath(doc, 'provider.region'));
  const accountId = scope.accountId ?? '000000000000';
  const partition = scope.partition ?? 'aws';
  const resources = (readPath(doc, 'resources.Resources') ?? {}) as Record<string, { Type?: string; Properties?: Doc }>;

  const arnOf = (logicalId: string): string => {
    const resource = resources[logicalId];
    const properties = resource?.Properties ?? {};
    switch (resource?.Type) {
      case 'AWS::DynamoDB::Table':
        return `arn:${partition}:dynamodb:${region}:${accountId}:table/${String(properties.TableName)}`;
      case 'AWS::Events::EventBus':
        return `arn:${partition}:events:${region}:${accountId}:event-bus/${String(properties.Name)}`;
      case 'AWS::SQS::Queue':
        return `arn:${partition}:sqs:${region}:${accountId}:${service}-${stage}-${logicalId}`;
      case 'AWS::SecretsManager::Secret':
        // The generated suffix is unknown before deployment; this one stands for it.
        return `arn:${partition}:secretsmanager:${region}:${accountId}:secret:${String(properties.Name)}-AbC123`;
      default:
        throw new InvalidInputError(`serverless.yml: cannot name the ARN of ${logicalId} (${resource?.Type ?? 'not declared'})`);
    }
  };
  const pseudo: Record<string, string> = { 'AWS::Partition': partition, 'AWS::Region': region, 'AWS::AccountId': accountId, 'AWS::URLSuffix': 'amazonaws.com' };
  const intrinsic = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(intrinsic);
    if (!isRecord(value)) return value;
    const sub = value['Fn::Sub'];
    if (typeof sub === 'string') {
      return sub.replace(/\$\{([^{}!]+)\}/g, (whole, name: string) => {
        if (pseudo[name] !== undefined) return pseudo[name];
        const [logicalId = '', attribute] = name.split('.');
        if (attribute === 'Arn' || (attribute === undefined && resources[logicalId] !== undefined)) return arnOf(logicalId);
        throw new InvalidInputError(`serverless.yml: cannot resolve ${whole} in Fn::Sub ${sub}`);
      });
    }
    // `Ref` of a secret is its ARN; other resource types are not referenced by roles.
    if (typeof value.Ref === 'string' && resources[value.Ref]?.Type === 'AWS::SecretsManager::Secret') return arnOf(value.Ref);
    const getAtt = value['Fn::GetAtt'];
    if (Array.isArray(getAtt) && getAtt[1] === 'Arn') return arnOf(String(getAtt[0]));
    if (value['Fn::GetAtt'] !== undefined || value['Fn::Sub'] !== undefined) throw new InvalidInputError(`serverless.yml: cannot resolve ${JSON.stringify(value)}`);
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, intrinsic(item)]));
  };

  const functions = new Map<string, FunctionRole>();
  for (const [functionName, definition] of Object.entries((doc.functions ?? {}) as Record<string, Doc>)) {
    const roleLogicalId = definition.role;
    if (typeof roleLogicalId !== 'string') throw new InvalidInputError(`serverless.yml: function ${functionName} names no role of its own`);
    const role = resources[roleLogicalId];
    if (role?.Type !== 'AWS::IAM::Role') throw new InvalidInputError(`serverless.yml: ${functionName}'s role ${roleLogicalId} is not an AWS::IAM::Role under resources`);
    if (role.Properties?.ManagedPolicyArns !== undefined) throw new InvalidInputError(`serverless.yml: ${roleLogicalId} has managed policies, which cannot be evaluated here`);
    const policies = (role.Properties?.Policies ?? []) as Array<{ PolicyDocument?: { Statement?: unknown } }>;
    const statements = policies.flatMap((policy) => {
      const listed = policy.PolicyDocument?.Statement;
      return (Array.isArray(listed) ? listed : [listed]).map((statement) => intrinsic(statement) as PolicyStatement);
    });
    const roleName = `${service}-${stage}-${roleLogicalId}`;
    functions.set(functionName, { functionName, roleLogicalId, roleName, roleArn: `arn:${partition}:iam::${accountId}:role/${roleName}`, statements });
  }
  const tableName = String(readPath(resources, 'ControlPlaneTable.Properties.TableName'));
  return {
    service,
    stage,
    region,
    accountId,
    partition,
    tableArn: arnOf('ControlPlaneTable'),
    tableName,
    clusterSecretPrefix: String(readPath(doc, 'custom.clusterSecretPrefix') ?? ''),
    functions,
  };
}

/** Reads and parses serverless.yml (or another file in its format). */
export async function loadTemplateRoles(path: string, scope: TemplateScope = {}): Promise<TemplateRoles> {
  return parseTemplateRoles(await readFile(path, 'utf8'), scope);
}
