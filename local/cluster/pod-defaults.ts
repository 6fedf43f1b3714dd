/**
 * The defaults kube-apiserver's scheme fills into a pod template when it decodes a
 * Deployment (k8s.io/kubernetes pkg/apis/core/v1/defaults.go), so a stored template reads
 * back as on a real cluster: restart and DNS policy, scheduler, grace period and an empty
 * security context on the pod; pull policy, termination message path and policy, empty
 * resources, port protocols and probe timings on each container; volume modes.
 */

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function records(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function setDefault(object: Json, key: string, value: unknown): void {
  if (object[key] === undefined) object[key] = value;
}

/** The tag of an image reference; `latest` when it has neither tag nor digest (docker's parser). */
export function imageTag(image: string): string {
  const [name = '', digest] = image.split('@');
  const lastSegment = name.slice(name.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  if (colon >= 0) return lastSegment.slice(colon + 1);
  return digest === undefined ? 'latest' : '';
}

/** Handlers of probes and lifecycle hooks: HTTP probes default their scheme. */
function defaultHandler(handler: Json): void {
  if (isRecord(handler.httpGet)) setDefault(handler.httpGet, 'scheme', 'HTTP');
}

function defaultProbe(probe: unknown): void {
  if (!isRecord(probe)) return;
  setDefault(probe, 'timeoutSeconds', 1);
  setDefault(probe, 'periodSeconds', 10);
  setDefault(probe, 'successThreshold', 1);
  setDefault(probe, 'failureThreshold', 3);
  defaultHandler(probe);
}

function defaultContainer(container: Json): void {
  setDefault(container, 'imagePullPolicy', imageTag(String(container.image ?? '')) === 'latest' ? 'Always' : 'IfNotPresent');
  setDefault(container, 'terminationMessagePath', '/dev/termination-log');
  setDefault(container, 'terminationMessagePolicy', 'File');
  // A struct, not a pointer, in the Go type: it is always written, if only as {}.
  setDefault(container, 'resources', {});
  for (const port of records(container.ports)) setDefault(port, 'protocol', 'TCP');
  for (const env of records(container.env)) {
    const fieldRef = isRecord(env.valueFrom) ? env.valueFrom.fieldRef : undefined;
    if (isRecord(fieldRef)) setDefault(fieldRef, 'apiVersion', 'v1');
  }
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) defaultProbe(container[probe]);
  if (isRecord(container.lifecycle)) {
    for (const hook of ['postStart', 'preStop']) if (isRecord(container.lifecycle[hook])) defaultHandler(container.lifecycle[hook]);
  }
}

const VOLUME_MODE = 0o644;

function defaultVolume(volume: Json): void {
  const sources = ['configMap', 'secret', 'projected', 'downwardAPI'];
  const present = Object.keys(volume).filter((key) => key !== 'name');
  if (present.length === 0) volume.emptyDir = {};
  for (const source of sources) if (isRecord(volume[source])) setDefault(volume[source], 'defaultMode', VOLUME_MODE);
}

/** Fills the defaults into a pod template (`spec.template` of a Deployment), in place. */
export function defaultPodTemplate(template: unknown): void {
  if (!isRecord(template) || !isRecord(template.spec)) return;
  const spec = template.spec;
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'schedulerName', 'default-scheduler');
  for (const list of ['initContainers', 'containers']) for (const container of records(spec[list])) defaultContainer(container);
  for (const volume of records(spec.volumes)) defaultVolume(volume);
}
