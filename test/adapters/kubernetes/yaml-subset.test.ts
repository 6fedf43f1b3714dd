/**
 * The functions' YAML reader (shared/domain/yaml-subset.ts) against the `yaml` package as
 * the oracle: kubeconfigs as kubectl, the AWS CLI and kind write them, and JSON, read to
 * the same values; every YAML form the reader takes, read to the same values; everything
 * else refused, never with the text in the message.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseYamlSubset, YamlSubsetError } from '../../../shared/domain/yaml-subset';
import { InvalidInputError } from '../../../shared/domain/errors';

const CA = 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUMvakNDQWVhZ0F3SUJBZ0lCQURBTkJna3Foa2lHOXcwQkFRc0ZBREFWTVJNd0VRWURWUVFERXdwcmRXSmwKY201bGRHVnpNQjRYRFRJME1ERXdOVEV3TURBd01Gb1hEVE0wTURFd01qRXdNREF3TUZvd0ZURVRNQkVHQTFVRQo=';
const ARN = 'arn:aws:eks:us-west-2:111122223333:cluster/my-cluster';

/** `aws eks update-kubeconfig --name my-cluster` (the AWS CLI's YAML: indentless sequences). */
const AWS_EKS = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${CA}
    server: https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com
  name: ${ARN}
contexts:
- context:
    cluster: ${ARN}
    user: ${ARN}
  name: ${ARN}
current-context: ${ARN}
kind: Config
preferences: {}
users:
- name: ${ARN}
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - --region
      - us-west-2
      - eks
      - get-token
      - --cluster-name
      - my-cluster
      - --output
      - json
      command: aws
      env:
      - name: AWS_PROFILE
        value: dev
`;

/** `kind get kubeconfig` (client-go's writer): a client certificate. */
const KIND = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${CA}
    server: https://127.0.0.1:43523
  name: kind-kind
contexts:
- context:
    cluster: kind-kind
    user: kind-kind
  name: kind-kind
current-context: kind-kind
kind: Config
preferences: {}
users:
- name: kind-kind
  user:
    client-certificate-data: ${CA}
    client-key-data: ${CA}
`;

/**
 * `kubectl config view --raw` over several tools' entries: minikube's extensions, a GKE
 * plugin whose long installHint go-yaml folds onto a second line, a multi-line hint as a
 * literal block, an OIDC auth-provider, a token, basic auth with a quoted numeric password,
 * and a double-quoted string go-yaml broke with escaped line ends.
 */
const KUBECTL_VIEW = `apiVersion: v1
clusters:
- cluster:
    certificate-authority: /home/dev/.minikube/ca.crt
    extensions:
    - extension:
        last-update: Fri, 05 Jan 2024 10:00:00 UTC
        provider: minikube.sigs.k8s.io
        version: v1.32.0
      name: cluster_info
    server: https://192.168.49.2:8443
  name: minikube
- cluster:
    insecure-skip-tls-verify: true
    server: https://dev.example.com:6443
    tls-server-name: api.dev.example.com
  name: dev
contexts:
- context:
    cluster: minikube
    extensions:
    - extension:
        last-update: Fri, 05 Jan 2024 10:00:00 UTC
        provider: minikube.sigs.k8s.io
        version: v1.32.0
      name: context_info
    namespace: default
    user: minikube
  name: minikube
- context:
    cluster: dev
    user: sa
  name: dev
current-context: minikube
kind: Config
preferences: {}
users:
- name: gke
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args: null
      command: gke-gcloud-auth-plugin
      env: null
      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following
        https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin
      interactiveMode: IfAvailable
      provideClusterInfo: true
- name: example-plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: example-client-go-exec-plugin
      installHint: |
        example-client-go-exec-plugin is required to authenticate
        to the current cluster.  It can be installed:

        On macOS: brew install example-client-go-exec-plugin
      interactiveMode: Never
- name: wrapped
  user:
    exec:
      command: wrapper
      installHint: "a hint: with a colon, so go-yaml quotes it, and long enough to be\\
        \\ broken over two lines"
- name: oidc
  user:
    auth-provider:
      config:
        client-id: kubernetes
        id-token: eyJhbGciOiJSUzI1NiJ9.e30.c2ln
        idp-issuer-url: https://issuer.example.com
      name: oidc
- name: sa
  user:
    token: eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJl
- name: basic
  user:
    password: "0123"
    username: admin
- name: minikube
  user:
    client-certificate: /home/dev/.minikube/profiles/minikube/client.crt
    client-key: /home/dev/.minikube/profiles/minikube/client.key
`;

/** A hand-written one: comments, a document marker, quoted keys and values, CRLF line ends. */
const HAND_WRITTEN = [
  '# Staging, written by hand.',
  '---',
  'apiVersion: v1',
  'kind: Config',
  "current-context: 'staging' # the only one",
  '',
  'clusters:',
  '  - name: staging',
  '    cluster:',
  '      server: "https://staging.example:6443"',
  '      certificate-authority-data: >-',
  `        ${CA.slice(0, 40)}`,
  `        ${CA.slice(40, 80)}`,
  'contexts:',
  '  - {name: staging, context: {cluster: staging, user: deployer}}',
  'users:',
  '  - name: deployer',
  '    user: {"token": "abc.def"}',
  '',
].join('\r\n');

const KUBECONFIG = JSON.parse(JSON.stringify(parse(KIND))) as unknown;

describe('Function: parseYamlSubset', () => {
  describe('kubeconfigs as tools write them', () => {
    it.each([
      ['aws eks update-kubeconfig', AWS_EKS],
      ['kind get kubeconfig', KIND],
      ['kubectl config view --raw', KUBECTL_VIEW],
      ['written by hand', HAND_WRITTEN],
      ['JSON, indented', JSON.stringify(KUBECONFIG, null, 2)],
      ['JSON, indented with tabs', JSON.stringify(KUBECONFIG, null, '\t')],
      ['JSON, on one line', JSON.stringify(KUBECONFIG)],
      ['a token secret (JSON)', JSON.stringify({ token: 'sa-token', server: 'https://api.example:443', caData: CA })],
      ['a token secret (YAML)', `token: sa-token\nserver: https://api.example:443\ncaData: ${CA}\n`],
    ])('%s: reads what the yaml package reads', (_name, text) => {
      expect(parseYamlSubset(text)).toStrictEqual(parse(text));
    });

    it('reads the values a connection is built from', () => {
      // The oracle comparison above would pass for two readers agreeing on nonsense: pin a few values down.
      const view = parseYamlSubset(KUBECTL_VIEW) as { clusters: Array<{ cluster: Record<string, unknown> }>; users: Array<{ name: string; user: Record<string, Record<string, unknown>> }> };
      expect(view.clusters[1]?.cluster).toEqual({ 'insecure-skip-tls-verify': true, server: 'https://dev.example.com:6443', 'tls-server-name': 'api.dev.example.com' });
      const users = Object.fromEntries(view.users.map((entry) => [entry.name, entry.user]));
      expect(users.gke?.exec?.installHint).toBe(
        'Install gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin',
      );
      expect(users['example-plugin']?.exec?.installHint).toBe(
        'example-client-go-exec-plugin is required to authenticate\nto the current cluster.  It can be installed:\n\nOn macOS: brew install example-client-go-exec-plugin\n',
      );
      expect(users.wrapped?.exec?.installHint).toBe('a hint: with a colon, so go-yaml quotes it, and long enough to be broken over two lines');
      expect(users.basic).toEqual({ password: '0123', username: 'admin' });
      expect(parseYamlSubset(HAND_WRITTEN)).toMatchObject({ 'current-context': 'staging', users: [{ name: 'deployer', user: { token: 'abc.def' } }] });
    });
  });

  describe('YAML forms', () => {
    it.each([
      ['an empty text', ''],
      ['only comments', '# nothing\n\n  # here\n'],
      ['a scalar', 'just text'],
      ['core schema scalars', 'n: ~\nN: Null\nt: true\nT: TRUE\nf: False\ni: -12\np: +7\no: 0o17\nx: 0x1F\nd: 1.5\ne: 1e3\ng: .5\nh: 5.\ninf: -.inf\nnan: .NaN\n'],
      ['YAML 1.1 forms, which are strings in 1.2', 'a: yes\nb: on\nc: 1_000\nd: 2001-12-14\ne: 0o8\nf: 0x\ng: 012\n'],
      ['nested block mappings', 'a:\n  b:\n    c: 1\n  d: 2\ne: 3\n'],
      ['a sequence at its key\'s indentation', 'a:\n- 1\n- 2\nb: x\n'],
      ['an indented sequence', 'a:\n    - 1\n    - 2\nb: x\n'],
      ['mappings inside sequence entries', 'l:\n- name: a\n  v:\n    x: 1\n-   name: b\n    w: [1, 2]\n'],
      ['sequences inside sequence entries', '- - a\n  - b\n- - c\n'],
      ['entries on the line below their dash', '-\n  a: 1\n-\n  - x\n-\n'],
      ['an empty value', 'a:\nb: []\nc: {}\nd: ""\ne: # comment\n'],
      ['plain scalars with colons and hashes', 'a: b:c\nd: https://x:1/p#f\ne: v # comment\n'],
      ['a plain scalar over several lines', 'a: one\n  two\n\n  three\nb: x\n'],
      ['a plain scalar over several lines in a sequence', '- one\n  two\n- three\n'],
      ['single-quoted scalars', "a: 'it''s'\nb: 'multi\n  line'\nc: ''\n"],
      ['double-quoted escapes', 'a: "t\\ty\\u00e9\\x41\\U0001F600\\"\\\\ \\/ \\0 \\e \\N \\_ \\L \\P \\a \\b \\v \\f \\r \\n"\n'],
      ['double-quoted scalars over several lines', 'a: "one\n  two\n\n  three"\nb: "esc\\\n   aped \\\n  \\ space"\n'],
      ['an escaped line break before blank lines', 'a: "one\\\n\n  two"\nb: "one\\\n\n\n\n  two"\n'],
      ['literal block scalars and their chomping', 'a: |\n  line1\n   line2\n\nb: |-\n  x\n\nc: |+\n  k\n\nd: |2\n    two more\n  base\ne: |\nf: x\n'],
      ['a block scalar whose text starts with a tab', 'a: |-\n  \tx\n  y\n'],
      ['folded block scalars', 'a: >\n  one\n  two\n\n  three\n    more\n  four\nb: >-\n  x\n  y\n'],
      ['flow collections', 'a: {b: 1, "c": [1, 2, {d: e}], f: , g}\nh: [1, 2,]\ni: [ ]\n'],
      ['flow collections over several lines', 'a: {\n  b: 1,\n  c: [\n    2,\n    3\n  ]\n  }\nd: [\n  x\n]\n'],
      ['a plain scalar over several lines in a flow collection', '[a\n  b, c]\n'],
      ['JSON-style keys', '{"a":1,"b":[true,false,null],"c":{"d":"e"}}'],
      ['keys that are not strings', '1: a\ntrue: b\n~: c\n1.50: d\n"q k": e\nwith space: f\nhttps://x: g\n'],
      ['inherited property names as keys', '__proto__: {a: 1}\ntoString: x\nconstructor: c\n'],
      ['comments everywhere', '# head\na: 1 # c\n# mid\nb: # c2\n  c: 2\nd:\n# between\n- 1\n  # inside\n- 2\n'],
      ['document markers', '---\na: 1\n...\n'],
      ['a value on the document marker line', '--- {a: 1}\n'],
      ['a block scalar on the document marker line', '--- |\n  text\n'],
      ['a whole document indented', '  a: 1\n  b:\n  - x\n'],
      ['a byte order mark and CRLF line ends', '\uFEFFa: 1\r\nb:\r\n  - x\r\n'],
      ['trailing white space', 'a: 1   \nb:   \n  - x   \n'],
      ['tabs as separation', 'a:\tb\nc: [1,\t2]\n'],
      ['a line of white space with tabs between entries', 'a: x\n\t\nb: "y"\n \t\nc: z\n'],
    ])('%s', (_name, text) => {
      expect(parseYamlSubset(text)).toStrictEqual(parse(text));
    });
  });

  describe('what it refuses', () => {
    it.each([
      ['an anchor and an alias', 'a: &x hunter2\nb: *x\n', 1],
      ['a tag', 'a: !!str hunter2\n', 1],
      ['a local tag', 'a: !secret hunter2\n', 1],
      ['a directive', '%YAML 1.2\n---\na: hunter2\n', 1],
      ['several documents', 'a: hunter2\n---\nb: 2\n', 2],
      ['a complex key', '? hunter2\n: b\n', 1],
      ['a flow collection as a key', '[hunter2]: b\n', 1],
      ['a mapping inside a flow sequence', '[hunter2: b]\n', 1],
      ['a tab after a dash', '-\thunter2\n', 1],
    ])('refuses %s as valid YAML it does not read', (_name, text, line) => {
      const attempt = (): unknown => parseYamlSubset(text);
      expect(attempt).toThrow(YamlSubsetError);
      expect(attempt).toThrow(expect.objectContaining({ unsupported: true, line }) as Error);
      expect(attempt).toThrow(/are not supported; write it as `kubectl config view --raw` does, or as JSON$/);
      expect(attempt).not.toThrow(/hunter2/);
    });

    it.each([
      ['an unclosed flow collection', 'clusters: [hunter2', 1],
      ['an unclosed quoted scalar', 'a: "hunter2\n', 1],
      ['a key given twice', 'a: hunter2\na: 2\n', 2],
      ['a key given twice in a flow mapping', '{a: hunter2, a: 2}', 1],
      ['a deeper line after a scalar', 'token: hunter2\n  bad: [indent', 2],
      ['a shallower key than its siblings', 'a:\n    b: hunter2\n  c: 2\n', 3],
      ['a tab in indentation', 'a:\n\tb: hunter2\n', 2],
      ['a mapping on the line of a key', 'a: b: hunter2\n', 1],
      ['a sequence on the line of a key', 'a: - hunter2\n', 1],
      ['a sequence entry among mapping keys', 'a: hunter2\n- b\n', 2],
      ['a mapping key after the sequence of a document', '- hunter2\nb: 1\n', 2],
      ['an unknown escape', 'a: "hunter2\\q"\n', 1],
      ['an escape beyond Unicode', 'a: "hunter2\\UFFFFFFFF"\n', 1],
      ['a reserved indicator', 'a: @hunter2\n', 1],
      ['a comment without a space before it', 'a: {hunter2: 1}#c\n', 1],
      ['text after a quoted scalar', 'a: "hunter2" b\n', 1],
      ['a quoted scalar continued at its key\'s indentation', 'a: "hunter2\nb"\n', 2],
      ['a tab before a blank line of a quoted scalar', 'a: "hunter2\n\t\n  b"\n', 2],
      ['a tab before a blank line of a plain scalar', 'a: hunter2\n\t\n  b\n', 2],
      ['a flow collection continued at its key\'s indentation', 'a: [\nhunter2]\n', 2],
      ['a block scalar led by deeper blank lines', 'a: |\n      \n  hunter2\n', 3],
      ['a tab before a block scalar\'s text', '- |-\n\t  hunter2\n', 2],
      ['text after the document end', 'a: 1\n... hunter2\n', 2],
      ['a dash alone in a flow collection', '{"hunter2": -}', 1],
    ])('refuses %s, as the yaml package does', (_name, text, line) => {
      const attempt = (): unknown => parseYamlSubset(text);
      expect(() => parse(text)).toThrow();
      expect(attempt).toThrow(YamlSubsetError);
      expect(attempt).toThrow(InvalidInputError);
      expect(attempt).toThrow(expect.objectContaining({ unsupported: false, line }) as Error);
      expect(attempt).not.toThrow(/hunter2/);
    });

    it('refuses nesting deeper than any kubeconfig, in either style', () => {
      expect(() => parseYamlSubset(`${'['.repeat(200)}${']'.repeat(200)}`)).toThrow('nesting too deep');
      const deep = Array.from({ length: 200 }, (_, depth) => `${' '.repeat(depth)}k:`).join('\n');
      expect(() => parseYamlSubset(deep)).toThrow('nesting too deep');
    });
  });
});
