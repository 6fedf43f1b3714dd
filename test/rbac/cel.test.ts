/**
 * The CEL subset the embedded server evaluates for admission policies: what it computes,
 * how errors propagate (and are absorbed by `&&`/`||`), and that anything outside the
 * subset is refused at compile time.
 */
import { describe, expect, it } from 'vitest';
import { CelEvaluationError, CelUnsupportedError, compileCel } from '../../local/cluster/cel';

const variables = {
  object: { metadata: { name: 'x', labels: { 'ome.io/inferenceservice': 'llama' }, ownerReferences: [{ kind: 'InferenceService', apiVersion: 'ome.io/v1beta1', controller: true }] } },
  oldObject: null,
  request: { namespace: 'team-a', operation: 'CREATE', userInfo: { username: 'system:serviceaccount:ome-pinning-system:ome-pinning-pin', groups: ['system:serviceaccounts', 'ome-pinning:pin'] } },
  namespaceObject: null,
};

describe('Function: compileCel', () => {
  it.each<[string, unknown]>([
    ["request.userInfo.username.startsWith('system:serviceaccount:ome-pinning-system:')", true],
    ["request.userInfo.username.startsWith('system:serviceaccount:ome:')", false],
    ["request.userInfo.username.endsWith(':pin')", false],
    ["request.userInfo.username.contains('pinning')", true],
    ["request.userInfo.groups.exists(g, g.startsWith('ome-pinning:'))", true],
    ["request.userInfo.groups.all(g, g.startsWith('system:'))", false],
    ["request.namespace in ['kube-system', 'kube-public']", false],
    ["!(request.namespace in ['kube-system'])", true],
    ["!(request.namespace in ['ome-pinning-system', 'ome'])", true],
    ["'ome.io/inferenceservice' in object.metadata.labels", true],
    ["'other' in object.metadata.labels", false],
    ["'constructor' in object.metadata.labels", false],
    ['has(object.metadata.toString)', false],
    ['has(object.metadata.labels)', true],
    ['has(object.metadata.annotations)', false],
    ['oldObject == null', true],
    ['object != null && size(object.metadata.ownerReferences) == 1', true],
    ['object.metadata.ownerReferences.size() >= 1', true],
    ["object.metadata.ownerReferences[0].kind == 'InferenceService'", true],
    ["object.metadata.labels['ome.io/inferenceservice']", 'llama'],
    ["request.operation == 'DELETE' ? 'deleting' : 'writing'", 'writing'],
    ['1 < 2 && 2 <= 2 && 3 > 2 && -1 < 0', true],
    ['1 + 2 - 4 == -1', true],
    ["(has(object.metadata.labels)?1:0) + (has(object.metadata.annotations)?1:0) <= 1", true],
    // A missing field is an error, but a decisive other side absorbs it, as in CEL.
    ["oldObject == null || oldObject.metadata.name == 'x'", true],
    ["false && object.metadata.missing == 'x'", false],
    ["object.metadata.missing == 'x' || true", true],
    ["'r-' + request.namespace + '-' == 'r-team-a-'", true],
    ["size('r-' + request.namespace) + 8", 16],
    ["'cr-llama-590753e8'.matches('[0-9a-f]{8}$')", true],
    ["'cr-llama-590753E8'.matches('[0-9a-f]{8}$')", false],
    // Unanchored, as RE2's MatchString: the pattern may match anywhere.
    ["request.namespace.matches('m-')", true],
    ["request.namespace.matches('^m-')", false],
  ])('%s', (expression, expected) => {
    expect(compileCel(expression).evaluate(variables)).toEqual(expected);
  });

  it.each([
    "object.metadata.missing == 'x'",
    'oldObject.metadata.name',
    "object.metadata.missing == 'x' && true",
    "request.namespace.startsWith(1)",
    "object.metadata.labels.exists(l, l.missing)",
    "request.namespace + 1 == 'x'",
    "1 + request.namespace == 'x'",
    "request.namespace.matches(request.namespace + '(')",
    "request.namespace.matches('(?=' + request.namespace + ')')",
    'variables.missing',
  ])('raises an evaluation error for %s', (expression) => {
    expect(() => compileCel(expression).evaluate(variables)).toThrow(CelEvaluationError);
  });

  it.each([
    ['an undeclared variable', 'params.spec.limit > 1'],
    ['an unknown function', "matches(request.namespace, 'kube-.*')"],
    ['an unknown method', "request.namespace.lowerAscii() == 'x'"],
    ['a pattern RE2 cannot compile', "request.namespace.matches('kube-(?!system)')"],
    ['a backreference', "request.namespace.matches('(a)\\\\1')"],
    ['an invalid pattern', "request.namespace.matches('(')"],
    ['matches() without its pattern', 'request.namespace.matches()'],
    ['a map literal', "{'a': 1}.a == 1"],
    ['multiplication', 'size(object.metadata.labels) * 2 > 1'],
    ['a double literal', '1.5 > 1'],
    ['a trailing token', 'true true'],
    ['an unterminated string', "request.namespace == 'kube"],
    ['has() on a variable', 'has(object)'],
  ])('refuses %s when compiling', (_name, expression) => {
    expect(() => compileCel(expression)).toThrow(CelUnsupportedError);
  });
});
