/**
 * The Go types that upstream OME hashes and merges, as data: for every struct, its JSON
 * fields in declaration order. Our runtime-revision hash must equal upstream's byte for
 * byte, and Go's encoding/json writes struct fields in declaration order, drops
 * `omitempty` fields that are empty and keeps the rest (a nil slice becomes `null`), so
 * the order and tags below are the contract.
 *
 * Sources: OME `pkg/apis/ome/v1beta1` (ServingRuntimeSpec as of the v1.3 API: no
 * top-level `workers`, with `scalingPolicy`), Kubernetes `k8s.io/api` v0.35 `core/v1`
 * and `apps/v1` (the version OME builds against), and `apimachinery` meta/v1.
 *
 * A field is `[json, type, flags?]`:
 * - `type` is a small Go type expression: `string`, `bool`, `int`, `float`, `quantity`
 *   (resource.Quantity), `intstr` (IntOrString), `time` (metav1.Time), `bytes`, `raw`
 *   (kept as given), `*T`, `[]T`, `map[string]T`, or a struct name from this table.
 * - `flags`: `i` embedded struct whose fields are promoted (`json:",inline"`), `o`
 *   omitempty, `u` no json tag (the Go field name is the key), `m` or `m:<key>` the
 *   strategic-merge patch strategy `merge` with that merge key (lists without it are
 *   replaced by a child runtime's list).
 *
 * Types OME uses but that are alpha, passthrough or deep (`lifecycle`, KEDA and HPA
 * blocks, ObjectMeta in ephemeral volume templates) are `raw`: kept with their keys in
 * the order given. Their Go key order may differ; no catalog runtime sets them.
 */

export type GoFieldSpec = readonly [json: string, type: string, flags?: string];

/** Named types that are not structs here. */
export const GO_ALIASES: Readonly<Record<string, string>> = {
  'meta.ObjectMeta': 'raw',
  'ome.LifecycleSpec': 'raw',
};

export const GO_STRUCTS: Readonly<Record<string, readonly GoFieldSpec[]>> = {
  // OME v1beta1
  'ome.ServingRuntimeSpec': [['supportedModelFormats', '[]ome.SupportedModelFormat', 'o'], ['modelSizeRange', '*ome.ModelSizeRangeSpec', 'o'], ['disabled', '*bool', 'o'], ['routerConfig', '*ome.RouterSpec', 'o'], ['engineConfig', '*ome.EngineSpec', 'o'], ['decoderConfig', '*ome.DecoderSpec', 'o'], ['protocolVersions', '[]string', 'o'], ['', 'ome.ServingRuntimePodSpec', 'i'], ['scalingPolicy', '*ome.ScalingPolicy', 'o'], ['acceleratorRequirements', '*ome.AcceleratorRequirements', 'o']],
  'ome.SupportedModelFormat': [['name', 'string'], ['modelFormat', '*ome.ModelFormat'], ['modelType', '*string', 'o'], ['version', '*string', 'o'], ['modelFramework', '*ome.ModelFrameworkSpec', 'o'], ['modelArchitecture', '*string', 'o'], ['quantization', '*string', 'o'], ['diffusionPipeline', '*ome.DiffusionPipelineSpec', 'o'], ['modelCacheProviders', '[]string', 'o'], ['autoSelect', '*bool', 'o'], ['priority', '*int', 'o'], ['acceleratorConfig', 'map[string]*ome.AcceleratorModelConfig', 'o']],
  'ome.AcceleratorModelConfig': [['minMemoryPerBillionParams', '*int', 'o'], ['tensorParallelismOverride', '*ome.TensorParallelismConfig', 'o'], ['runtimeArgsOverride', '[]string', 'o'], ['environmentOverride', 'map[string]string', 'o']],
  'ome.TensorParallelismConfig': [['tensorParallelSize', '*int', 'o'], ['pipelineParallelSize', '*int', 'o'], ['dataParallelSize', '*int', 'o']],
  'ome.ServingRuntimePodSpec': [['containers', '[]core.Container', 'm:name'], ['volumes', '[]core.Volume', 'om:name'], ['nodeSelector', 'map[string]string', 'o'], ['affinity', '*core.Affinity', 'o'], ['tolerations', '[]core.Toleration', 'o'], ['labels', 'map[string]string', 'o'], ['annotations', 'map[string]string', 'o'], ['imagePullSecrets', '[]core.LocalObjectReference', 'om:name'], ['schedulerName', 'string', 'o'], ['hostIPC', 'bool', 'o'], ['dnsPolicy', 'string', 'o'], ['hostNetwork', 'bool', 'o']],
  'ome.AcceleratorRequirements': [['acceleratorClasses', '[]string', 'o'], ['minMemory', '*int', 'o'], ['minComputePerformanceTFLOPS', '*int', 'o'], ['minArchitectureVersion', '*string', 'o'], ['requiredFeatures', '[]string', 'o'], ['preferredPrecisions', '[]string', 'o']],
  'ome.ModelSizeRangeSpec': [['min', '*string', 'o'], ['max', '*string', 'o']],
  'ome.ModelFormat': [['name', 'string'], ['version', '*string', 'o'], ['operator', '*string', 'o'], ['weight', 'int', 'o']],
  'ome.ModelFrameworkSpec': [['name', 'string'], ['version', '*string', 'o'], ['operator', '*string', 'o'], ['weight', 'int', 'o']],
  'ome.DiffusionPipelineSpec': [['className', '*string', 'o'], ['scheduler', '*ome.DiffusionComponentSpec', 'o'], ['textEncoder', '*ome.DiffusionComponentSpec', 'o'], ['tokenizer', '*ome.DiffusionComponentSpec', 'o'], ['transformer', '*ome.DiffusionComponentSpec', 'o'], ['vae', '*ome.DiffusionComponentSpec', 'o'], ['additionalComponents', 'map[string]ome.DiffusionComponentSpec', 'o']],
  'ome.DiffusionComponentSpec': [['library', 'string', 'o'], ['type', 'string', 'o']],
  'ome.EngineSpec': [['', 'ome.PodSpec', 'i'], ['', 'ome.ComponentExtensionSpec', 'i'], ['runner', '*ome.RunnerSpec', 'o'], ['leader', '*ome.LeaderSpec', 'o'], ['worker', '*ome.WorkerSpec', 'o'], ['topologyKey', '*string', 'o'], ['topologySpread', '*string', 'o'], ['topologySpreadKey', '*string', 'o'], ['acceleratorOverride', '*ome.AcceleratorSelector', 'o']],
  'ome.DecoderSpec': [['', 'ome.PodSpec', 'i'], ['', 'ome.ComponentExtensionSpec', 'i'], ['runner', '*ome.RunnerSpec', 'o'], ['leader', '*ome.LeaderSpec', 'o'], ['worker', '*ome.WorkerSpec', 'o'], ['topologyKey', '*string', 'o'], ['topologySpread', '*string', 'o'], ['topologySpreadKey', '*string', 'o'], ['acceleratorOverride', '*ome.AcceleratorSelector', 'o']],
  'ome.LeaderSpec': [['', 'ome.PodSpec', 'i'], ['runner', '*ome.RunnerSpec', 'o']],
  'ome.WorkerSpec': [['', 'ome.PodSpec', 'i'], ['size', '*int', 'o'], ['runner', '*ome.RunnerSpec', 'o']],
  'ome.RouterSpec': [['', 'ome.PodSpec', 'i'], ['', 'ome.ComponentExtensionSpec', 'i'], ['runner', '*ome.RunnerSpec', 'o'], ['config', 'map[string]string', 'o']],
  'ome.RunnerSpec': [['', 'core.Container', 'i']],
  'ome.ComponentExtensionSpec': [['minReplicas', '*int', 'o'], ['maxReplicas', 'int', 'o'], ['timeoutSeconds', '*int', 'o'], ['labels', 'map[string]string', 'o'], ['annotations', 'map[string]string', 'o'], ['servicePortAppProtocols', 'map[string]string', 'o'], ['minAvailable', '*intstr', 'o'], ['maxUnavailable', '*intstr', 'o'], ['deploymentStrategy', '*apps.DeploymentStrategy', 'o'], ['lifecycle', '*ome.LifecycleSpec', 'o'], ['autoscaler', '*ome.ComponentAutoscaler', 'o'], ['autoscalerPolicyRef', '*ome.AutoscalerPolicyRef', 'o']],
  'ome.ComponentAutoscaler': [['class', 'string'], ['keda', '*raw', 'o'], ['hpa', '*raw', 'o']],
  'ome.AutoscalerPolicyRef': [['name', 'string'], ['kind', 'string', 'o']],
  'ome.ScalingPolicy': [['mode', 'string'], ['proportional', '*ome.ProportionalPolicy', 'o']],
  'ome.ProportionalPolicy': [['anchor', 'string'], ['ratios', 'map[string]quantity', 'o']],
  'ome.AcceleratorSelector': [['acceleratorClass', '*string', 'o'], ['constraints', '*ome.AcceleratorConstraints', 'o'], ['policy', 'string', 'o']],
  'ome.AcceleratorConstraints': [['minMemory', '*int', 'o'], ['maxMemory', '*int', 'o'], ['minComputePerformanceTFLOPS', '*int', 'o'], ['minArchitectureVersion', '*string', 'o'], ['requiredFeatures', '[]string', 'o'], ['excludedClasses', '[]string', 'o'], ['architectureFamilies', '[]string', 'o'], ['preferredPrecisions', '[]string', 'o']],
  // OME's copy of corev1.PodSpec, with containers optional.
  'ome.PodSpec': [['volumes', '[]core.Volume', 'om:name'], ['initContainers', '[]core.Container', 'om:name'], ['containers', '[]core.Container', 'om:name'], ['ephemeralContainers', '[]core.EphemeralContainer', 'om:name'], ['restartPolicy', 'string', 'o'], ['terminationGracePeriodSeconds', '*int', 'o'], ['activeDeadlineSeconds', '*int', 'o'], ['dnsPolicy', 'string', 'o'], ['nodeSelector', 'map[string]string', 'o'], ['serviceAccountName', 'string', 'o'], ['serviceAccount', 'string', 'o'], ['automountServiceAccountToken', '*bool', 'o'], ['nodeName', 'string', 'o'], ['hostNetwork', 'bool', 'o'], ['hostPID', 'bool', 'o'], ['hostIPC', 'bool', 'o'], ['shareProcessNamespace', '*bool', 'o'], ['securityContext', '*core.PodSecurityContext', 'o'], ['imagePullSecrets', '[]core.LocalObjectReference', 'om:name'], ['hostname', 'string', 'o'], ['subdomain', 'string', 'o'], ['affinity', '*core.Affinity', 'o'], ['schedulerName', 'string', 'o'], ['tolerations', '[]core.Toleration', 'o'], ['hostAliases', '[]core.HostAlias', 'om:ip'], ['priorityClassName', 'string', 'o'], ['priority', '*int', 'o'], ['dnsConfig', '*core.PodDNSConfig', 'o'], ['readinessGates', '[]core.PodReadinessGate', 'o'], ['runtimeClassName', '*string', 'o'], ['enableServiceLinks', '*bool', 'o'], ['preemptionPolicy', '*string', 'o'], ['overhead', 'map[string]quantity', 'o'], ['topologySpreadConstraints', '[]core.TopologySpreadConstraint', 'om:topologyKey'], ['setHostnameAsFQDN', '*bool', 'o'], ['os', '*core.PodOS', 'o'], ['hostUsers', '*bool', 'o'], ['schedulingGates', '[]core.PodSchedulingGate', 'om:name'], ['resourceClaims', '[]core.PodResourceClaim', 'om:name']],
  // apimachinery meta/v1
  'meta.LabelSelector': [['matchLabels', 'map[string]string', 'o'], ['matchExpressions', '[]meta.LabelSelectorRequirement', 'o']],
  'meta.LabelSelectorRequirement': [['key', 'string'], ['operator', 'string'], ['values', '[]string', 'o']],
  // k8s.io/api v0.35 core/v1 and apps/v1, as declared there
  'apps.DeploymentStrategy': [['type', 'string', 'o'], ['rollingUpdate', '*apps.RollingUpdateDeployment', 'o']],
  'apps.RollingUpdateDeployment': [['maxUnavailable', '*intstr', 'o'], ['maxSurge', '*intstr', 'o']],
  'core.AWSElasticBlockStoreVolumeSource': [['volumeID', 'string'], ['fsType', 'string', 'o'], ['partition', 'int', 'o'], ['readOnly', 'bool', 'o']],
  'core.Affinity': [['nodeAffinity', '*core.NodeAffinity', 'o'], ['podAffinity', '*core.PodAffinity', 'o'], ['podAntiAffinity', '*core.PodAntiAffinity', 'o']],
  'core.AppArmorProfile': [['type', 'string'], ['localhostProfile', '*string', 'o']],
  'core.AzureDiskVolumeSource': [['diskName', 'string'], ['diskURI', 'string'], ['cachingMode', '*string', 'o'], ['fsType', '*string', 'o'], ['readOnly', '*bool', 'o'], ['kind', '*string', 'o']],
  'core.AzureFileVolumeSource': [['secretName', 'string'], ['shareName', 'string'], ['readOnly', 'bool', 'o']],
  'core.CSIVolumeSource': [['driver', 'string'], ['readOnly', '*bool', 'o'], ['fsType', '*string', 'o'], ['volumeAttributes', 'map[string]string', 'o'], ['nodePublishSecretRef', '*core.LocalObjectReference', 'o']],
  'core.Capabilities': [['add', '[]string', 'o'], ['drop', '[]string', 'o']],
  'core.CephFSVolumeSource': [['monitors', '[]string'], ['path', 'string', 'o'], ['user', 'string', 'o'], ['secretFile', 'string', 'o'], ['secretRef', '*core.LocalObjectReference', 'o'], ['readOnly', 'bool', 'o']],
  'core.CinderVolumeSource': [['volumeID', 'string'], ['fsType', 'string', 'o'], ['readOnly', 'bool', 'o'], ['secretRef', '*core.LocalObjectReference', 'o']],
  'core.ClusterTrustBundleProjection': [['name', '*string', 'o'], ['signerName', '*string', 'o'], ['labelSelector', '*meta.LabelSelector', 'o'], ['optional', '*bool', 'o'], ['path', 'string']],
  'core.ConfigMapEnvSource': [['', 'core.LocalObjectReference', 'i'], ['optional', '*bool', 'o']],
  'core.ConfigMapKeySelector': [['', 'core.LocalObjectReference', 'i'], ['key', 'string'], ['optional', '*bool', 'o']],
  'core.ConfigMapProjection': [['', 'core.LocalObjectReference', 'i'], ['items', '[]core.KeyToPath', 'o'], ['optional', '*bool', 'o']],
  'core.ConfigMapVolumeSource': [['', 'core.LocalObjectReference', 'i'], ['items', '[]core.KeyToPath', 'o'], ['defaultMode', '*int', 'o'], ['optional', '*bool', 'o']],
  'core.Container': [['name', 'string'], ['image', 'string', 'o'], ['command', '[]string', 'o'], ['args', '[]string', 'o'], ['workingDir', 'string', 'o'], ['ports', '[]core.ContainerPort', 'om:containerPort'], ['envFrom', '[]core.EnvFromSource', 'o'], ['env', '[]core.EnvVar', 'om:name'], ['resources', 'core.ResourceRequirements', 'o'], ['resizePolicy', '[]core.ContainerResizePolicy', 'o'], ['restartPolicy', '*string', 'o'], ['restartPolicyRules', '[]core.ContainerRestartRule', 'o'], ['volumeMounts', '[]core.VolumeMount', 'om:mountPath'], ['volumeDevices', '[]core.VolumeDevice', 'om:devicePath'], ['livenessProbe', '*core.Probe', 'o'], ['readinessProbe', '*core.Probe', 'o'], ['startupProbe', '*core.Probe', 'o'], ['lifecycle', '*core.Lifecycle', 'o'], ['terminationMessagePath', 'string', 'o'], ['terminationMessagePolicy', 'string', 'o'], ['imagePullPolicy', 'string', 'o'], ['securityContext', '*core.SecurityContext', 'o'], ['stdin', 'bool', 'o'], ['stdinOnce', 'bool', 'o'], ['tty', 'bool', 'o']],
  'core.ContainerPort': [['name', 'string', 'o'], ['hostPort', 'int', 'o'], ['containerPort', 'int'], ['protocol', 'string', 'o'], ['hostIP', 'string', 'o']],
  'core.ContainerResizePolicy': [['resourceName', 'string'], ['restartPolicy', 'string']],
  'core.ContainerRestartRule': [['action', 'string', 'o'], ['exitCodes', '*core.ContainerRestartRuleOnExitCodes', 'o']],
  'core.ContainerRestartRuleOnExitCodes': [['operator', 'string', 'o'], ['values', '[]int', 'o']],
  'core.DownwardAPIProjection': [['items', '[]core.DownwardAPIVolumeFile', 'o']],
  'core.DownwardAPIVolumeFile': [['path', 'string'], ['fieldRef', '*core.ObjectFieldSelector', 'o'], ['resourceFieldRef', '*core.ResourceFieldSelector', 'o'], ['mode', '*int', 'o']],
  'core.DownwardAPIVolumeSource': [['items', '[]core.DownwardAPIVolumeFile', 'o'], ['defaultMode', '*int', 'o']],
  'core.EmptyDirVolumeSource': [['medium', 'string', 'o'], ['sizeLimit', '*quantity', 'o']],
  'core.EnvFromSource': [['prefix', 'string', 'o'], ['configMapRef', '*core.ConfigMapEnvSource', 'o'], ['secretRef', '*core.SecretEnvSource', 'o']],
  'core.EnvVar': [['name', 'string'], ['value', 'string', 'o'], ['valueFrom', '*core.EnvVarSource', 'o']],
  'core.EnvVarSource': [['fieldRef', '*core.ObjectFieldSelector', 'o'], ['resourceFieldRef', '*core.ResourceFieldSelector', 'o'], ['configMapKeyRef', '*core.ConfigMapKeySelector', 'o'], ['secretKeyRef', '*core.SecretKeySelector', 'o'], ['fileKeyRef', '*core.FileKeySelector', 'o']],
  'core.EphemeralContainer': [['', 'core.EphemeralContainerCommon', 'i'], ['targetContainerName', 'string', 'o']],
  'core.EphemeralContainerCommon': [['name', 'string'], ['image', 'string', 'o'], ['command', '[]string', 'o'], ['args', '[]string', 'o'], ['workingDir', 'string', 'o'], ['ports', '[]core.ContainerPort', 'om:containerPort'], ['envFrom', '[]core.EnvFromSource', 'o'], ['env', '[]core.EnvVar', 'om:name'], ['resources', 'core.ResourceRequirements', 'o'], ['resizePolicy', '[]core.ContainerResizePolicy', 'o'], ['restartPolicy', '*string', 'o'], ['restartPolicyRules', '[]core.ContainerRestartRule', 'o'], ['volumeMounts', '[]core.VolumeMount', 'om:mountPath'], ['volumeDevices', '[]core.VolumeDevice', 'om:devicePath'], ['livenessProbe', '*core.Probe', 'o'], ['readinessProbe', '*core.Probe', 'o'], ['startupProbe', '*core.Probe', 'o'], ['lifecycle', '*core.Lifecycle', 'o'], ['terminationMessagePath', 'string', 'o'], ['terminationMessagePolicy', 'string', 'o'], ['imagePullPolicy', 'string', 'o'], ['securityContext', '*core.SecurityContext', 'o'], ['stdin', 'bool', 'o'], ['stdinOnce', 'bool', 'o'], ['tty', 'bool', 'o']],
  'core.EphemeralVolumeSource': [['volumeClaimTemplate', '*core.PersistentVolumeClaimTemplate', 'o']],
  'core.ExecAction': [['command', '[]string', 'o']],
  'core.FCVolumeSource': [['targetWWNs', '[]string', 'o'], ['lun', '*int', 'o'], ['fsType', 'string', 'o'], ['readOnly', 'bool', 'o'], ['wwids', '[]string', 'o']],
  'core.FileKeySelector': [['volumeName', 'string'], ['path', 'string'], ['key', 'string'], ['optional', '*bool', 'o']],
  'core.FlexVolumeSource': [['driver', 'string'], ['fsType', 'string', 'o'], ['secretRef', '*core.LocalObjectReference', 'o'], ['readOnly', 'bool', 'o'], ['options', 'map[string]string', 'o']],
  'core.FlockerVolumeSource': [['datasetName', 'string', 'o'], ['datasetUUID', 'string', 'o']],
  'core.GCEPersistentDiskVolumeSource': [['pdName', 'string'], ['fsType', 'string', 'o'], ['partition', 'int', 'o'], ['readOnly', 'bool', 'o']],
  'core.GRPCAction': [['port', 'int'], ['service', '*string']],
  'core.GitRepoVolumeSource': [['repository', 'string'], ['revision', 'string', 'o'], ['directory', 'string', 'o']],
  'core.GlusterfsVolumeSource': [['endpoints', 'string'], ['path', 'string'], ['readOnly', 'bool', 'o']],
  'core.HTTPGetAction': [['path', 'string', 'o'], ['port', 'intstr'], ['host', 'string', 'o'], ['scheme', 'string', 'o'], ['httpHeaders', '[]core.HTTPHeader', 'o']],
  'core.HTTPHeader': [['name', 'string'], ['value', 'string']],
  'core.HostAlias': [['ip', 'string'], ['hostnames', '[]string', 'o']],
  'core.HostPathVolumeSource': [['path', 'string'], ['type', '*string', 'o']],
  'core.ISCSIVolumeSource': [['targetPortal', 'string'], ['iqn', 'string'], ['lun', 'int'], ['iscsiInterface', 'string', 'o'], ['fsType', 'string', 'o'], ['readOnly', 'bool', 'o'], ['portals', '[]string', 'o'], ['chapAuthDiscovery', 'bool', 'o'], ['chapAuthSession', 'bool', 'o'], ['secretRef', '*core.LocalObjectReference', 'o'], ['initiatorName', '*string', 'o']],
  'core.ImageVolumeSource': [['reference', 'string', 'o'], ['pullPolicy', 'string', 'o']],
  'core.KeyToPath': [['key', 'string'], ['path', 'string'], ['mode', '*int', 'o']],
  'core.Lifecycle': [['postStart', '*core.LifecycleHandler', 'o'], ['preStop', '*core.LifecycleHandler', 'o'], ['stopSignal', '*string', 'o']],
  'core.LifecycleHandler': [['exec', '*core.ExecAction', 'o'], ['httpGet', '*core.HTTPGetAction', 'o'], ['tcpSocket', '*core.TCPSocketAction', 'o'], ['sleep', '*core.SleepAction', 'o']],
  'core.LocalObjectReference': [['name', 'string', 'o']],
  'core.NFSVolumeSource': [['server', 'string'], ['path', 'string'], ['readOnly', 'bool', 'o']],
  'core.NodeAffinity': [['requiredDuringSchedulingIgnoredDuringExecution', '*core.NodeSelector', 'o'], ['preferredDuringSchedulingIgnoredDuringExecution', '[]core.PreferredSchedulingTerm', 'o']],
  'core.NodeSelector': [['nodeSelectorTerms', '[]core.NodeSelectorTerm']],
  'core.NodeSelectorRequirement': [['key', 'string'], ['operator', 'string'], ['values', '[]string', 'o']],
  'core.NodeSelectorTerm': [['matchExpressions', '[]core.NodeSelectorRequirement', 'o'], ['matchFields', '[]core.NodeSelectorRequirement', 'o']],
  'core.ObjectFieldSelector': [['apiVersion', 'string', 'o'], ['fieldPath', 'string']],
  'core.PersistentVolumeClaimSpec': [['accessModes', '[]string', 'o'], ['selector', '*meta.LabelSelector', 'o'], ['resources', 'core.VolumeResourceRequirements', 'o'], ['volumeName', 'string', 'o'], ['storageClassName', '*string', 'o'], ['volumeMode', '*string', 'o'], ['dataSource', '*core.TypedLocalObjectReference', 'o'], ['dataSourceRef', '*core.TypedObjectReference', 'o'], ['volumeAttributesClassName', '*string', 'o']],
  'core.PersistentVolumeClaimTemplate': [['metadata', 'meta.ObjectMeta', 'o'], ['spec', 'core.PersistentVolumeClaimSpec']],
  'core.PersistentVolumeClaimVolumeSource': [['claimName', 'string'], ['readOnly', 'bool', 'o']],
  'core.PhotonPersistentDiskVolumeSource': [['pdID', 'string'], ['fsType', 'string', 'o']],
  'core.PodAffinity': [['requiredDuringSchedulingIgnoredDuringExecution', '[]core.PodAffinityTerm', 'o'], ['preferredDuringSchedulingIgnoredDuringExecution', '[]core.WeightedPodAffinityTerm', 'o']],
  'core.PodAffinityTerm': [['labelSelector', '*meta.LabelSelector', 'o'], ['namespaces', '[]string', 'o'], ['topologyKey', 'string'], ['namespaceSelector', '*meta.LabelSelector', 'o'], ['matchLabelKeys', '[]string', 'o'], ['mismatchLabelKeys', '[]string', 'o']],
  'core.PodAntiAffinity': [['requiredDuringSchedulingIgnoredDuringExecution', '[]core.PodAffinityTerm', 'o'], ['preferredDuringSchedulingIgnoredDuringExecution', '[]core.WeightedPodAffinityTerm', 'o']],
  'core.PodCertificateProjection': [['signerName', 'string', 'o'], ['keyType', 'string', 'o'], ['maxExpirationSeconds', '*int', 'o'], ['credentialBundlePath', 'string', 'o'], ['keyPath', 'string', 'o'], ['certificateChainPath', 'string', 'o'], ['userAnnotations', 'map[string]string', 'o']],
  'core.PodDNSConfig': [['nameservers', '[]string', 'o'], ['searches', '[]string', 'o'], ['options', '[]core.PodDNSConfigOption', 'o']],
  'core.PodDNSConfigOption': [['name', 'string', 'o'], ['value', '*string', 'o']],
  'core.PodOS': [['name', 'string']],
  'core.PodReadinessGate': [['conditionType', 'string']],
  'core.PodResourceClaim': [['name', 'string'], ['resourceClaimName', '*string', 'o'], ['resourceClaimTemplateName', '*string', 'o']],
  'core.PodSchedulingGate': [['name', 'string']],
  'core.PodSecurityContext': [['seLinuxOptions', '*core.SELinuxOptions', 'o'], ['windowsOptions', '*core.WindowsSecurityContextOptions', 'o'], ['runAsUser', '*int', 'o'], ['runAsGroup', '*int', 'o'], ['runAsNonRoot', '*bool', 'o'], ['supplementalGroups', '[]int', 'o'], ['supplementalGroupsPolicy', '*string', 'o'], ['fsGroup', '*int', 'o'], ['sysctls', '[]core.Sysctl', 'o'], ['fsGroupChangePolicy', '*string', 'o'], ['seccompProfile', '*core.SeccompProfile', 'o'], ['appArmorProfile', '*core.AppArmorProfile', 'o'], ['seLinuxChangePolicy', '*string', 'o']],
  'core.PortworxVolumeSource': [['volumeID', 'string'], ['fsType', 'string', 'o'], ['readOnly', 'bool', 'o']],
  'core.PreferredSchedulingTerm': [['weight', 'int'], ['preference', 'core.NodeSelectorTerm']],
  'core.Probe': [['', 'core.ProbeHandler', 'i'], ['initialDelaySeconds', 'int', 'o'], ['timeoutSeconds', 'int', 'o'], ['periodSeconds', 'int', 'o'], ['successThreshold', 'int', 'o'], ['failureThreshold', 'int', 'o'], ['terminationGracePeriodSeconds', '*int', 'o']],
  'core.ProbeHandler': [['exec', '*core.ExecAction', 'o'], ['httpGet', '*core.HTTPGetAction', 'o'], ['tcpSocket', '*core.TCPSocketAction', 'o'], ['grpc', '*core.GRPCAction', 'o']],
  'core.ProjectedVolumeSource': [['sources', '[]core.VolumeProjection'], ['defaultMode', '*int', 'o']],
  'core.QuobyteVolumeSource': [['registry', 'string'], ['volume', 'string'], ['readOnly', 'bool', 'o'], ['user', 'string', 'o'], ['group', 'string', 'o'], ['tenant', 'string', 'o']],
  'core.RBDVolumeSource': [['monitors', '[]string'], ['image', 'string'], ['fsType', 'string', 'o'], ['pool', 'string', 'o'], ['user', 'string', 'o'], ['keyring', 'string', 'o'], ['secretRef', '*core.LocalObjectReference', 'o'], ['readOnly', 'bool', 'o']],
  'core.ResourceClaim': [['name', 'string'], ['request', 'string', 'o']],
  'core.ResourceFieldSelector': [['containerName', 'string', 'o'], ['resource', 'string'], ['divisor', 'quantity', 'o']],
  'core.ResourceRequirements': [['limits', 'map[string]quantity', 'o'], ['requests', 'map[string]quantity', 'o'], ['claims', '[]core.ResourceClaim', 'o']],
  'core.SELinuxOptions': [['user', 'string', 'o'], ['role', 'string', 'o'], ['type', 'string', 'o'], ['level', 'string', 'o']],
  'core.ScaleIOVolumeSource': [['gateway', 'string'], ['system', 'string'], ['secretRef', '*core.LocalObjectReference'], ['sslEnabled', 'bool', 'o'], ['protectionDomain', 'string', 'o'], ['storagePool', 'string', 'o'], ['storageMode', 'string', 'o'], ['volumeName', 'string', 'o'], ['fsType', 'string', 'o'], ['readOnly', 'bool', 'o']],
  'core.SeccompProfile': [['type', 'string'], ['localhostProfile', '*string', 'o']],
  'core.SecretEnvSource': [['', 'core.LocalObjectReference', 'i'], ['optional', '*bool', 'o']],
  'core.SecretKeySelector': [['', 'core.LocalObjectReference', 'i'], ['key', 'string'], ['optional', '*bool', 'o']],
  'core.SecretProjection': [['', 'core.LocalObjectReference', 'i'], ['items', '[]core.KeyToPath', 'o'], ['optional', '*bool', 'o']],
  'core.SecretVolumeSource': [['secretName', 'string', 'o'], ['items', '[]core.KeyToPath', 'o'], ['defaultMode', '*int', 'o'], ['optional', '*bool', 'o']],
  'core.SecurityContext': [['capabilities', '*core.Capabilities', 'o'], ['privileged', '*bool', 'o'], ['seLinuxOptions', '*core.SELinuxOptions', 'o'], ['windowsOptions', '*core.WindowsSecurityContextOptions', 'o'], ['runAsUser', '*int', 'o'], ['runAsGroup', '*int', 'o'], ['runAsNonRoot', '*bool', 'o'], ['readOnlyRootFilesystem', '*bool', 'o'], ['allowPrivilegeEscalation', '*bool', 'o'], ['procMount', '*string', 'o'], ['seccompProfile', '*core.SeccompProfile', 'o'], ['appArmorProfile', '*core.AppArmorProfile', 'o']],
  'core.ServiceAccountTokenProjection': [['audience', 'string', 'o'], ['expirationSeconds', '*int', 'o'], ['path', 'string']],
  'core.SleepAction': [['seconds', 'int']],
  'core.StorageOSVolumeSource': [['volumeName', 'string', 'o'], ['volumeNamespace', 'string', 'o'], ['fsType', 'string', 'o'], ['readOnly', 'bool', 'o'], ['secretRef', '*core.LocalObjectReference', 'o']],
  'core.Sysctl': [['name', 'string'], ['value', 'string']],
  'core.TCPSocketAction': [['port', 'intstr'], ['host', 'string', 'o']],
  'core.Toleration': [['key', 'string', 'o'], ['operator', 'string', 'o'], ['value', 'string', 'o'], ['effect', 'string', 'o'], ['tolerationSeconds', '*int', 'o']],
  'core.TopologySpreadConstraint': [['maxSkew', 'int'], ['topologyKey', 'string'], ['whenUnsatisfiable', 'string'], ['labelSelector', '*meta.LabelSelector', 'o'], ['minDomains', '*int', 'o'], ['nodeAffinityPolicy', '*string', 'o'], ['nodeTaintsPolicy', '*string', 'o'], ['matchLabelKeys', '[]string', 'o']],
  'core.TypedLocalObjectReference': [['apiGroup', '*string'], ['kind', 'string'], ['name', 'string']],
  'core.TypedObjectReference': [['apiGroup', '*string'], ['kind', 'string'], ['name', 'string'], ['namespace', '*string', 'o']],
  'core.Volume': [['name', 'string'], ['', 'core.VolumeSource', 'i']],
  'core.VolumeDevice': [['name', 'string'], ['devicePath', 'string']],
  'core.VolumeMount': [['name', 'string'], ['readOnly', 'bool', 'o'], ['recursiveReadOnly', '*string', 'o'], ['mountPath', 'string'], ['subPath', 'string', 'o'], ['mountPropagation', '*string', 'o'], ['subPathExpr', 'string', 'o']],
  'core.VolumeProjection': [['secret', '*core.SecretProjection', 'o'], ['downwardAPI', '*core.DownwardAPIProjection', 'o'], ['configMap', '*core.ConfigMapProjection', 'o'], ['serviceAccountToken', '*core.ServiceAccountTokenProjection', 'o'], ['clusterTrustBundle', '*core.ClusterTrustBundleProjection', 'o'], ['podCertificate', '*core.PodCertificateProjection', 'o']],
  'core.VolumeResourceRequirements': [['limits', 'map[string]quantity', 'o'], ['requests', 'map[string]quantity', 'o']],
  'core.VolumeSource': [['hostPath', '*core.HostPathVolumeSource', 'o'], ['emptyDir', '*core.EmptyDirVolumeSource', 'o'], ['gcePersistentDisk', '*core.GCEPersistentDiskVolumeSource', 'o'], ['awsElasticBlockStore', '*core.AWSElasticBlockStoreVolumeSource', 'o'], ['gitRepo', '*core.GitRepoVolumeSource', 'o'], ['secret', '*core.SecretVolumeSource', 'o'], ['nfs', '*core.NFSVolumeSource', 'o'], ['iscsi', '*core.ISCSIVolumeSource', 'o'], ['glusterfs', '*core.GlusterfsVolumeSource', 'o'], ['persistentVolumeClaim', '*core.PersistentVolumeClaimVolumeSource', 'o'], ['rbd', '*core.RBDVolumeSource', 'o'], ['flexVolume', '*core.FlexVolumeSource', 'o'], ['cinder', '*core.CinderVolumeSource', 'o'], ['cephfs', '*core.CephFSVolumeSource', 'o'], ['flocker', '*core.FlockerVolumeSource', 'o'], ['downwardAPI', '*core.DownwardAPIVolumeSource', 'o'], ['fc', '*core.FCVolumeSource', 'o'], ['azureFile', '*core.AzureFileVolumeSource', 'o'], ['configMap', '*core.ConfigMapVolumeSource', 'o'], ['vsphereVolume', '*core.VsphereVirtualDiskVolumeSource', 'o'], ['quobyte', '*core.QuobyteVolumeSource', 'o'], ['azureDisk', '*core.AzureDiskVolumeSource', 'o'], ['photonPersistentDisk', '*core.PhotonPersistentDiskVolumeSource', 'o'], ['projected', '*core.ProjectedVolumeSource', 'o'], ['portworxVolume', '*core.PortworxVolumeSource', 'o'], ['scaleIO', '*core.ScaleIOVolumeSource', 'o'], ['storageos', '*core.StorageOSVolumeSource', 'o'], ['csi', '*core.CSIVolumeSource', 'o'], ['ephemeral', '*core.EphemeralVolumeSource', 'o'], ['image', '*core.ImageVolumeSource', 'o']],
  'core.VsphereVirtualDiskVolumeSource': [['volumePath', 'string'], ['fsType', 'string', 'o'], ['storagePolicyName', 'string', 'o'], ['storagePolicyID', 'string', 'o']],
  'core.WeightedPodAffinityTerm': [['weight', 'int'], ['podAffinityTerm', 'core.PodAffinityTerm']],
  'core.WindowsSecurityContextOptions': [['gmsaCredentialSpecName', '*string', 'o'], ['gmsaCredentialSpec', '*string', 'o'], ['runAsUserName', '*string', 'o'], ['hostProcess', '*bool', 'o']],
};
