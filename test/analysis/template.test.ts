import { describe, expect, it } from 'vitest';
import { perRevisionServiceName, QueryTemplateError, renderQuery, type QueryTemplateVars } from '../../shared/domain/analysis/template';

const vars: QueryTemplateVars = {
  Namespace: 'prod',
  ISVCName: 'chat',
  Component: 'engine',
  CanaryService: 'chat-engine-rev-b2',
  StableService: 'chat-engine-rev-a1',
  CanaryRevision: 'b2',
  StableRevision: 'a1',
};

describe('Function: renderQuery', () => {
  it.each<[string, string, string]>([
    ['every variable', '{{.Namespace}}|{{.ISVCName}}|{{.Component}}|{{.CanaryRevision}}|{{.StableRevision}}|{{.CanaryService}}|{{.StableService}}', 'prod|chat|engine|b2|a1|chat-engine-rev-b2|chat-engine-rev-a1'],
    ['spaces inside the action', 'x{namespace="{{ .Namespace }}"}', 'x{namespace="prod"}'],
    ['tabs and newlines inside the action', '{{\t.ISVCName\n}}', 'chat'],
    ['a trim marker on the left eats whitespace before', 'a  \n {{- .Component}}', 'aengine'],
    ['a trim marker on the right eats whitespace after', '{{.Component -}}  \n b', 'engineb'],
    ['a comment renders nothing', 'a{{/* why */}}b', 'ab'],
    ['a lone closing brace pair is text', 'a}}b', 'a}}b'],
    ['no action at all', 'sum(rate(requests_total[5m]))', 'sum(rate(requests_total[5m]))'],
    [
      'the documented error-ratio query',
      'sum(rate(request_errors_total{namespace="{{.Namespace}}", inferenceservice="{{.ISVCName}}", revision_hash="{{.CanaryRevision}}"}[5m]))',
      'sum(rate(request_errors_total{namespace="prod", inferenceservice="chat", revision_hash="b2"}[5m]))',
    ],
  ])('renders %s', (_name, template, want) => {
    expect(renderQuery(template, vars)).toBe(want);
  });

  it.each<[string, string, string]>([
    ['an unknown field, with Go\'s location and wording', 'x{a="{{.Cnaary}}"}', 'template: promql:1:7: executing "promql" at <.Cnaary>: can\'t evaluate field Cnaary in type analysis.TemplateContext'],
    ['an unknown field on a later line', 'a\nbc{{ .Nope }}', 'template: promql:2:5: executing "promql" at <.Nope>: can\'t evaluate field Nope in type analysis.TemplateContext'],
    ['a field in lower case (Go fields are case-sensitive)', '{{.namespace}}', "can't evaluate field namespace"],
    ['an unclosed action', 'x{{.Namespace', 'template: promql:1: unclosed action'],
    ['a pipeline', '{{.Namespace | printf "%s"}}', 'unsupported action {{.Namespace | printf "%s"}}'],
    ['a function call', '{{printf "%s" .Namespace}}', 'unsupported action'],
    ['an if block', '{{if .Namespace}}x{{end}}', 'unsupported action {{if .Namespace}}'],
    ['an empty action', '{{}}', 'unsupported empty action'],
    ['the dot alone', '{{.}}', 'unsupported action {{.}}'],
    ['a number that looks like a trim marker', '{{-3}}', 'unsupported action {{-3}}'],
  ])('rejects %s', (_name, template, message) => {
    let caught: unknown;
    try {
      renderQuery(template, vars);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(QueryTemplateError);
    expect((caught as Error).message).toContain(message);
    expect((caught as Error).message).toMatch(/^template: promql:/);
  });
});

describe('Function: perRevisionServiceName', () => {
  it('names the per-revision Service as upstream does', () => {
    expect(perRevisionServiceName('chat', 'engine', 'b2')).toBe('chat-engine-rev-b2');
  });
});
