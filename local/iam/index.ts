export { evaluatePolicy, matchesWildcard, statementMatches, UnsupportedConditionError } from './policy';
export type { AuthorizationRequest, Decision, PolicyCondition, PolicyStatement } from './policy';
export { authorizationRequestsFor, DYNAMODB_TARGET_PREFIX } from './dynamodb-request';
export type { DynamoRequestScope } from './dynamodb-request';
export { loadTemplateRoles, parseTemplateRoles } from './template-roles';
export type { FunctionRole, TemplateRoles, TemplateScope } from './template-roles';
export { identitiesFromTemplate, parseSigV4Credential, startDynamoIamProxy } from './dynamodb-proxy';
export type { DynamoIamProxy, DynamoIamProxyOptions, IamIdentity, ProxyDecision } from './dynamodb-proxy';
