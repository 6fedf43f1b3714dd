/** Reading function roles out of a serverless.yml: variables, CloudFormation functions, refusals. */
import { describe, expect, it } from 'vitest';
import { parseTemplateRoles } from '../../local/iam/template-roles';
import { InvalidInputError } from '../../shared/domain/errors';

const FILE = `
service: svc
provider:
  name: aws
  stage: \${opt:stage, 'dev'}
  region: \${opt:region, 'eu-west-1'}
custom:
  tableName: \${self:service}-\${sls:stage}
  clusterSecretPrefix: \${self:service}/\${sls:stage}/clusters/
functions:
  worker:
    handler: functions/worker/handler.handler
    role: WorkerRole
resources:
  Resources:
    ControlPlaneTable:
      Type: AWS::DynamoDB::Table
      Properties: { TableName: '\${self:custom.tableName}' }
    Bus:
      Type: AWS::Events::EventBus
      Properties: { Name: '\${self:service}-bus' }
    Queue:
      Type: AWS::SQS::Queue
    WorkerRole:
      Type: AWS::IAM::Role
      Properties:
        Policies:
          - PolicyName: a
            PolicyDocument:
              Statement:
                - &table
                  Effect: Allow
                  Action: dynamodb:GetItem
                  Resource: { 'Fn::GetAtt': [ControlPlaneTable, Arn] }
          - PolicyName: b
            PolicyDocument:
              Statement:
                - Effect: Allow
                  Action: secretsmanager:GetSecretValue
                  Resource: { 'Fn::Sub': 'arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:\${self:custom.clusterSecretPrefix}*/worker-??????' }
                - Effect: Allow
                  Action: [events:PutEvents, sqs:SendMessage]
                  Resource: [{ 'Fn::GetAtt': [Bus, Arn] }, { 'Fn::Sub': '\${Queue.Arn}' }]
                - *table
`;

describe('Function: parseTemplateRoles', () => {
  it('resolves variables and CloudFormation functions into concrete ARNs', () => {
    // Act
    const roles = parseTemplateRoles(FILE, { accountId: '123456789012' });
    const worker = roles.functions.get('worker');

    // Assess
    expect(roles).toMatchObject({ service: 'svc', stage: 'dev', region: 'eu-west-1', tableName: 'svc-dev', clusterSecretPrefix: 'svc/dev/clusters/' });
    expect(worker?.roleArn).toBe('arn:aws:iam::123456789012:role/svc-dev-WorkerRole');
    expect(worker?.statements.map((s) => s.Resource)).toEqual([
      'arn:aws:dynamodb:eu-west-1:123456789012:table/svc-dev',
      'arn:aws:secretsmanager:eu-west-1:123456789012:secret:svc/dev/clusters/*/worker-??????',
      ['arn:aws:events:eu-west-1:123456789012:event-bus/svc-bus', 'arn:aws:sqs:eu-west-1:123456789012:svc-dev-Queue'],
      'arn:aws:dynamodb:eu-west-1:123456789012:table/svc-dev',
    ]);
  });

  it('takes the stage and region given, as `--stage` and `--region` would', () => {
    const roles = parseTemplateRoles(FILE, { stage: 'prod', region: 'us-east-2' });
    expect(roles.tableArn).toBe('arn:aws:dynamodb:us-east-2:000000000000:table/svc-prod');
    expect(roles.functions.get('worker')?.statements[1]?.Resource).toBe('arn:aws:secretsmanager:us-east-2:000000000000:secret:svc/prod/clusters/*/worker-??????');
  });

  it.each([
    ['a function without a role of its own', FILE.replace('    role: WorkerRole\n', '')],
    ['a role that is not declared', FILE.replace('role: WorkerRole', 'role: MissingRole')],
    ['managed policies', FILE.replace('        Policies:\n', '        ManagedPolicyArns: [arn:aws:iam::aws:policy/AdministratorAccess]\n        Policies:\n')],
    ['an ARN of an unknown resource', FILE.replace("'Fn::GetAtt': [Bus, Arn]", "'Fn::GetAtt': [Nothing, Arn]")],
    ['a Fn::Sub it cannot resolve', FILE.replace('${Queue.Arn}', '${Queue.QueueName}')],
  ])('refuses %s', (_label, text) => {
    expect(() => parseTemplateRoles(text)).toThrow(InvalidInputError);
  });
});
