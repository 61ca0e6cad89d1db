// Package fakeapiserver is a hermetic stand-in for kube-apiserver that the
// benchmarks run as a separate process on loopback: discovery for the core
// group, LIST (one page) and WATCH (including WatchList) of ConfigMaps,
// Secrets and Pods in JSON and protobuf, every body encoded in advance, and
// control endpoints that push MODIFIED ConfigMap events on demand.
//
// It does no consistency checks, no paging and no writes: it serves the
// same bytes to every client library, which is all a comparison needs.
package fakeapiserver

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Namespaces is the number of namespaces objects are spread over.
const Namespaces = 100

var created = metav1.Date(2026, 1, 2, 3, 4, 5, 0, metav1.Now().Location())

// Namespace returns the namespace of object i.
func Namespace(i int) string { return "namespace-" + strconv.Itoa(i%Namespaces) }

func uid(kind string, i int) types.UID {
	return types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", len(kind), i))
}

// managedFields returns one field-manager entry of the shape kubectl and
// Helm leave on an object.
func managedFields(manager, fieldsJSON string) []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{
		Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		Time: &created, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fieldsJSON)},
	}}
}

// ConfigMap returns object i: a Helm-style ConfigMap with 3 labels, 2
// annotations, one managedFields entry and about 0.5 KB of data (1.4 KB of
// JSON in all).
func ConfigMap(i int) *corev1.ConfigMap {
	app := "app-" + strconv.Itoa(i%50)
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "config-" + strconv.Itoa(i), Namespace: Namespace(i), UID: uid("ConfigMap", i),
			ResourceVersion: strconv.Itoa(i + 1), CreationTimestamp: created,
			Labels: map[string]string{
				"app.kubernetes.io/name": app, "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": "release-" + strconv.Itoa(i%7),
			},
			Annotations: map[string]string{
				"meta.helm.sh/release-name": "release-" + strconv.Itoa(i%7), "meta.helm.sh/release-namespace": Namespace(i),
			},
			ManagedFields: managedFields("helm", `{"f:data":{".":{},"f:application.yaml":{},"f:log-level":{}},"f:metadata":{"f:annotations":{".":{},"f:meta.helm.sh/release-name":{},"f:meta.helm.sh/release-namespace":{}},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{}}}}`),
		},
		Data: map[string]string{
			"log-level": "info",
			"application.yaml": "server:\n  port: 8080\n  shutdownTimeout: 30s\nfeatures:\n  cache: true\n  tracing: false\n" +
				"database:\n  host: db." + Namespace(i) + ".svc.cluster.local\n  pool: 20\n  timeout: 5s\n" +
				"upstreams:\n  - name: billing\n    url: http://billing:8080\n  - name: search\n    url: http://search:9200\n" +
				"instance: " + strconv.Itoa(i) + "\n" + strings.Repeat("# padding line to reach a typical size\n", 6),
		},
	}
}

// Secret returns object i: an opaque Secret with a TLS-sized payload and
// one managedFields entry.
func Secret(i int) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "secret-" + strconv.Itoa(i), Namespace: Namespace(i), UID: uid("Secret", i),
			ResourceVersion: strconv.Itoa(i + 1), CreationTimestamp: created,
			Labels:        map[string]string{"app.kubernetes.io/name": "app-" + strconv.Itoa(i%50), "app.kubernetes.io/managed-by": "Helm"},
			ManagedFields: managedFields("helm", `{"f:data":{".":{},"f:password":{},"f:tls.crt":{},"f:tls.key":{}},"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{}}},"f:type":{}}`),
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			"password": []byte(fmt.Sprintf("s3cr3t-%024d", i)),
			"tls.crt":  []byte(strings.Repeat(fmt.Sprintf("MIIC%060d\n", i), 16)),
			"tls.key":  []byte(strings.Repeat(fmt.Sprintf("MIIE%060d\n", i), 8)),
		},
	}
}

// Pod returns object i: a running Pod owned by a ReplicaSet, with a
// projected service-account volume, probes, resources, status and the two
// managedFields entries kube-controller-manager and the kubelet leave.
func Pod(i int) *corev1.Pod {
	app := "app-" + strconv.Itoa(i%50)
	ns := Namespace(i)
	rs := app + "-7d9f8b6c5d"
	name := rs + "-" + strconv.FormatInt(int64(i)+1<<30, 36)
	t := true
	exp := int64(3607)
	port := func(p int32) corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intOrString(p), Scheme: corev1.URISchemeHTTP}}
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: rs + "-", Namespace: ns, UID: uid("Pod", i),
			ResourceVersion: strconv.Itoa(i + 1), CreationTimestamp: created,
			Labels: map[string]string{"app.kubernetes.io/name": app, "pod-template-hash": "7d9f8b6c5d"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: uid("ReplicaSet", i%50), Controller: &t, BlockOwnerDeletion: &t,
			}},
			ManagedFields: append(
				managedFields("kube-controller-manager", `{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"x\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:livenessProbe":{".":{},"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}}},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{".":{},"f:limits":{".":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:terminationGracePeriodSeconds":{}}}`),
				managedFields("kubelet", `{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.0.0.1\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`)...),
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example.com/team/" + app + ":v1.2.3", ImagePullPolicy: corev1.PullIfNotPresent,
				Args:  []string{"--config=/etc/app/application.yaml", "--port=8080"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env:   []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}, {Name: "LOG_LEVEL", Value: "info"}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				LivenessProbe:            &corev1.Probe{ProbeHandler: port(8080), PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
				ReadinessProbe:           &corev1.Probe{ProbeHandler: port(8080), PeriodSeconds: 5, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
				VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
			Volumes: []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &exp, Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				},
			}}}},
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, ServiceAccountName: "default",
			NodeName: "node-" + strconv.Itoa(i%200), SchedulerName: "default-scheduler",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr64(300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr64(300)},
			},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.1.0." + strconv.Itoa(i%200), PodIP: fmt.Sprintf("10.2.%d.%d", (i/250)%250, i%250),
			StartTime: &created, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: created},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, Image: "registry.example.com/team/" + app + ":v1.2.3",
				ImageID:     "registry.example.com/team/" + app + "@sha256:" + strings.Repeat("ab", 32),
				ContainerID: fmt.Sprintf("containerd://%064x", i),
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: created}},
			}},
		},
	}
}

func ptr64(v int64) *int64 { return &v }

func intOrString(p int32) intstr.IntOrString { return intstr.FromInt32(p) }
