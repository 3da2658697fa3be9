package main

import (
	"fmt"
	"strings"
)

// Inputs are JSON texts, so that Go and the TS tests (JSON.parse) start from the same bytes:
// escapes such as lone surrogates and -0 only survive as text.

type goJSONCase struct{ name, input string }

var goJSONCases = []goJSONCase{
	{"keys sorted", `{"b":1,"a":2,"C":3,"aa":4,"":5}`},
	{"integer-like keys sort as strings", `{"10":1,"9":2,"a":3,"1":4}`},
	{"keys by UTF-8 bytes, not UTF-16 units", `{"\uffff":1,"😀":2,"\ue000":3,"z":4,"é":5}`},
	{"nested objects sorted at every level", `{"z":{"y":[{"b":1,"a":2}],"x":{}},"a":[]}`},
	{"html characters escaped", `{"k":"<a href=\"x\">&amp;</a>","<>&":true}`},
	{"line and paragraph separators escaped", `"a\u2028b\u2029c"`},
	{"control characters", `"\u0000\u0001\b\f\n\r\t\u000b\u001f\u007f"`},
	{"quotes, backslash and slash", `"\"\\/"`},
	{"unicode kept raw", `"日本語 é ☃ 😀"`},
	{"lone high surrogate", `"a\ud800b"`},
	{"lone low surrogate", `"\udc00"`},
	{"trailing high surrogate", `"x\ud83d"`},
	{"valid surrogate pair", `"\ud83d\ude00"`},
	{"keys that collapse to U+FFFD keep the last", `{"\ud800":1,"\udbff":2}`},
	{"duplicate keys keep the last", `{"a":1,"a":2}`},
	{"literals", `[null,true,false,{},[],""]`},
	{"integers", `[0,1,-1,100,1e2,1E+2,123456789,9007199254740993,-9007199254740993]`},
	{"negative zero", `[-0,-0.0,0.0]`},
	{"fractions", `[1.5,-1.5,0.1,0.2,12345678.9,3.141592653589793,1.0000000000000002]`},
	{"exponent cutoffs", `[1e20,1e21,123456789012345678901234567890,999999999999999999999,1e-6,1e-7,0.000001234,0.0000001234]`},
	{"extremes", `[1.7976931348623157e308,-1.7976931348623157e308,5e-324,2.2250738585072014e-308,1e-10,-1.5e-10,1e100]`},
	{"top-level number", `1e21`},
}

var quantityCases = []string{
	"0", "1", "+1", "-1", "01", "1000m", "0.5", "1.5", "1.500", "1.", "100m", "1m", "1u", "1n", "0.1n", "1500m",
	"1k", "1M", "1G", "1T", "1P", "1E", "1000E", "1e3", "1E3", "10e3", "1e-3", "2e-3", "1e-12", "1.5e3", "1e0",
	"1Ki", "1Mi", "1Gi", "01Gi", "+1Gi", "1.5Gi", "1.1Ki", "0.5Ki", "1024Mi", "1025Mi", "8Gi", "1536Mi", "0Gi",
	"-1Gi", "5Ei", "16Ei", "128974848", "129e6", "129M", "123Mi", "  2Gi  ", "0.000000001", "1.G", "-0.5",
	"999999999999999999", "9999999999999999999", "12345678901234567890", "1234567890123.456789012", "0.0000000001",
	"9223372036854775807Ki", "", "abc", "1Gb", "1e", "1.2.3", "--1", "1 Gi", "Gi", ".5", "5.", "-.5", "1e+3", "1E-2", "1e3m", "0.1", "100Ki", "1.0",
}

var fnvCases = []string{"", "a", "foobar", "hello world", "日本語", "😀", "\x00", strings.Repeat("flotilla", 50)}

var safeEncodeCases = []string{"", "0123456789", "4294967295", "abcdef", "hello", "é", "😀z", "Āz", "\x00~"}

type cloneSetCase struct {
	name            string
	cloneSet        string
	collisionCounts []*int32
}

var noProbe = []*int32{nil}

// cloneSet wraps a pod template into a CloneSet document.
func cloneSet(name, template string) string {
	return fmt.Sprintf(`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","metadata":{"name":%q,"namespace":"default","generation":4},`+
		`"spec":{"replicas":3,"selector":{"matchLabels":{"app":"demo"}},"updateStrategy":{"partition":1,"maxUnavailable":"20%%"},"template":%s},`+
		`"status":{"observedGeneration":4,"collisionCount":2}}`, name, template)
}

const basicTemplate = `{"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx:1.27-alpine"}]}}`

var cloneSetCases = []cloneSetCase{
	{"basic", cloneSet("sample", basicTemplate), []*int32{nil, ptr[int32](0), ptr[int32](1), ptr[int32](42), ptr[int32](2147483647)}},
	{"empty template", cloneSet("empty", `{}`), noProbe},
	{"null template parts", cloneSet("nulls", `{"metadata":null,"spec":{"containers":null,"volumes":null,"nodeSelector":null,"terminationGracePeriodSeconds":null}}`), noProbe},
	{"long name truncated to 223", cloneSet(strings.Repeat("a", 250), basicTemplate), []*int32{nil, ptr[int32](7)}},
	{"name of exactly 223", cloneSet(strings.Repeat("b", 223), basicTemplate), noProbe},
	{"name of 224", cloneSet(strings.Repeat("c", 224), basicTemplate), noProbe},
	{"quantities canonicalised", cloneSet("quantities", `{"metadata":{"labels":{"app":"demo"}},"spec":{`+
		`"initContainers":[{"name":"init","image":"busybox","resources":{"limits":{"cpu":"0.5","memory":"1024Mi"},"requests":{"cpu":"500m","memory":"+1Gi"}}}],`+
		`"containers":[{"name":"main","image":"nginx","resources":{"limits":{"cpu":"1000m","memory":"1Gi","ephemeral-storage":"1.5Gi","nvidia.com/gpu":"1"},`+
		`"requests":{"cpu":"0.25","memory":"128974848","hugepages-2Mi":"100Mi","example.com/foo":"1.500"}}}],`+
		`"overhead":{"cpu":"1e3"},"volumes":[{"name":"scratch","emptyDir":{"medium":"Memory","sizeLimit":"2048Mi"}}]}}`), noProbe},
	{"html and unicode", cloneSet("unicode", `{"metadata":{"labels":{"app":"demo","\uffff":"ffff","😀":"emoji","\ue000":"private"},`+
		`"annotations":{"note":"<b>&amp;</b> ☃ 😀 \u2028 \u2029","ctl":"\b\f\u0001\t\n","lone":"\ud800x"}},`+
		`"spec":{"containers":[{"name":"main","image":"nginx","command":["sh","-c","echo '<&>' && sleep 1"],`+
		`"env":[{"name":"GREETING","value":"héllo wörld <3 & 日本"},{"name":"EMPTY"}]}]}}`), []*int32{nil, ptr[int32](3)}},
	{"empty fields vanish or stay", cloneSet("empties", `{"metadata":{"labels":{},"annotations":{},"name":"","finalizers":[]},`+
		`"spec":{"containers":[{"name":"main","image":"","env":[],"ports":[],"volumeMounts":[],"args":[],"resources":{},`+
		`"securityContext":{},"stdin":false,"tty":false,"workingDir":""}],"nodeSelector":{},"tolerations":[],"imagePullSecrets":[],`+
		`"securityContext":{},"hostNetwork":false,"dnsPolicy":"","volumes":[],"affinity":{}}}`), noProbe},
	{"unknown and miscased fields dropped", cloneSet("unknown", `{"metadata":{"labels":{"app":"demo"},"bogus":1},"extra":{"x":1},`+
		`"spec":{"containers":[{"name":"main","Image":"ignored","image":"nginx","madeUp":[1,2],"resources":{"limits":{"cpu":"1"},"claims2":[]}}],"notAField":true}}`), noProbe},
	{"probes, ports, env sources, mounts", cloneSet("probes", `{"metadata":{"labels":{"app":"demo"}},"spec":{"containers":[{"name":"main","image":"nginx",`+
		`"ports":[{"containerPort":80,"name":"http","protocol":"TCP"},{"containerPort":53,"protocol":"UDP","hostPort":0}],`+
		`"env":[{"name":"POD_IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}},`+
		`{"name":"CPU","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"1m"}}},`+
		`{"name":"CFG","valueFrom":{"configMapKeyRef":{"name":"cfg","key":"k","optional":false}}}],`+
		`"envFrom":[{"prefix":"P_","secretRef":{"name":"s"}}],`+
		`"volumeMounts":[{"name":"data","mountPath":"/data","readOnly":true,"subPath":""}],`+
		`"livenessProbe":{"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP","httpHeaders":[{"name":"X","value":"<y>"}]},"initialDelaySeconds":5,"periodSeconds":10},`+
		`"readinessProbe":{"tcpSocket":{"port":"http"},"failureThreshold":3,"successThreshold":1,"timeoutSeconds":1},`+
		`"startupProbe":{"exec":{"command":["cat","/tmp/ready"]},"terminationGracePeriodSeconds":0},`+
		`"lifecycle":{"preStop":{"exec":{"command":["sleep","5"]}},"postStart":{"httpGet":{"port":null}}}},`+
		`{"name":"grpc","image":"svc","livenessProbe":{"grpc":{"port":9090,"service":"health"}}}],`+
		`"volumes":[{"name":"data","configMap":{"name":"cfg","defaultMode":420,"items":[{"key":"a","path":"a.txt"}]}},`+
		`{"name":"proj","projected":{"sources":[{"serviceAccountToken":{"path":"token","expirationSeconds":3600}},{"downwardAPI":{"items":[{"path":"labels","fieldRef":{"fieldPath":"metadata.labels"}}]}}]}}]}}`), noProbe},
	{"common pod spec fields", cloneSet("podspec", `{"metadata":{"labels":{"app":"demo"},"annotations":{"a":"b"}},"spec":{`+
		`"containers":[{"name":"main","image":"nginx","imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],`+
		`"restartPolicy":"Always","terminationGracePeriodSeconds":0,"dnsPolicy":"ClusterFirst","schedulerName":"default-scheduler",`+
		`"serviceAccountName":"app","automountServiceAccountToken":false,"nodeSelector":{"kubernetes.io/os":"linux"},"priority":-5,"priorityClassName":"low",`+
		`"securityContext":{"runAsUser":0,"runAsNonRoot":false,"fsGroup":2000,"sysctls":[{"name":"net.core.somaxconn","value":"1024"}]},`+
		`"tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],`+
		`"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}]}},`+
		`"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"podAffinityTerm":{"topologyKey":"kubernetes.io/hostname","labelSelector":{"matchLabels":{"app":"demo"}}}}]}},`+
		`"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"demo"}},"minDomains":2}],`+
		`"readinessGates":[{"conditionType":"InPlaceUpdateReady"}],"hostAliases":[{"ip":"10.0.0.1","hostnames":["a.local"]}],`+
		`"dnsConfig":{"nameservers":["1.1.1.1"],"options":[{"name":"ndots","value":"2"}]},"enableServiceLinks":true,"shareProcessNamespace":false,`+
		`"hostNetwork":true,"hostname":"h","subdomain":"s","runtimeClassName":"kata","preemptionPolicy":"Never","os":{"name":"linux"}}}`), []*int32{nil, ptr[int32](1)}},
	{"metadata times", cloneSet("times", `{"metadata":{"labels":{"app":"demo"},"creationTimestamp":"2024-05-01T12:00:00+02:00","name":"tpl","namespace":"ns","generateName":"g-","generation":3,"uid":"u"},"spec":{"containers":[{"name":"main","image":"nginx"}]}}`), noProbe},
	{"fractional and zero time", cloneSet("times2", `{"metadata":{"creationTimestamp":"2024-05-01T12:00:00.987654Z","deletionTimestamp":"0001-01-01T00:00:00Z","deletionGracePeriodSeconds":30},"spec":{"containers":[{"name":"main","image":"nginx"}]}}`), noProbe},
	{"large and negative integers", cloneSet("ints", `{"spec":{"containers":[{"name":"main","image":"nginx"}],"terminationGracePeriodSeconds":9007199254740993,"activeDeadlineSeconds":12345678901,"priority":-2147483648}}`), noProbe},
	{"nulls inside lists and maps", cloneSet("nullitems", `{"metadata":{"labels":{"a":null}},"spec":{"containers":[null,{"name":"x","args":[null,"y"],"resources":{"limits":{"cpu":null}}}]}}`), noProbe},
	{"int or string ports", cloneSet("intstr", `{"spec":{"containers":[{"name":"main","image":"nginx","livenessProbe":{"httpGet":{"port":"8080"}},"readinessProbe":{"httpGet":{"port":8080,"host":"<h>"}}}]}}`), noProbe},
	{"quantities as JSON numbers", cloneSet("numq", `{"spec":{"containers":[{"name":"main","image":"nginx","resources":{"limits":{"cpu":2,"memory":0.5},"requests":{"cpu":0.25}}}]}}`), noProbe},
	{"error: image is a number", cloneSet("bad-image", `{"spec":{"containers":[{"name":"main","image":5}]}}`), noProbe},
	{"error: bad quantity", cloneSet("bad-quantity", `{"spec":{"containers":[{"name":"main","resources":{"limits":{"cpu":"lots"}}}]}}`), noProbe},
	{"error: fractional int", cloneSet("bad-int", `{"spec":{"containers":[{"name":"main"}],"terminationGracePeriodSeconds":1.5}}`), noProbe},
	{"error: int32 overflow", cloneSet("bad-int32", `{"spec":{"containers":[{"name":"main","ports":[{"containerPort":2147483648}]}]}}`), noProbe},
	{"error: bad time", cloneSet("bad-time", `{"metadata":{"creationTimestamp":"yesterday"},"spec":{"containers":[]}}`), noProbe},
	{"error: list where object expected", cloneSet("bad-shape", `{"spec":{"containers":{"name":"main"}}}`), noProbe},
	{"error: bool int or string", cloneSet("bad-intstr", `{"spec":{"containers":[{"name":"main","livenessProbe":{"tcpSocket":{"port":true}}}]}}`), noProbe},
}

type sidecarSetCase struct{ name, sidecarSet string }

func sidecarSet(spec string) string {
	return `{"apiVersion":"apps.kruise.io/v1alpha1","kind":"SidecarSet","metadata":{"name":"sc"},"spec":` + spec + `}`
}

var sidecarSetCases = []sidecarSetCase{
	{"basic", sidecarSet(`{"selector":{"matchLabels":{"app":"demo"}},"containers":[{"name":"sidecar1","image":"centos:6.7","command":["sleep","999d"],` +
		`"podInjectPolicy":"BeforeAppContainer","upgradeStrategy":{"upgradeType":"ColdUpgrade"},"shareVolumePolicy":{"type":"disabled"},` +
		`"imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","resources":{}}]}`)},
	{"struct field order and quantities", sidecarSet(`{"containers":[{"volumeMounts":[{"mountPath":"/log","name":"log"}],"resources":{"limits":{"memory":"1024Mi","cpu":"0.5"}},` +
		`"env":[{"value":"<a&b>","name":"X"}],"image":"logtail:1","name":"logtail","transferEnv":[{"sourceContainerName":"main","envName":"POD_NAME"}],` +
		`"upgradeStrategy":{"hotUpgradeEmptyImage":"empty:1","upgradeType":"HotUpgrade"}}]}`)},
	{"native sidecar init container includes all init containers", sidecarSet(`{"containers":[{"name":"a","image":"a:1"}],` +
		`"initContainers":[{"name":"init","image":"init:1"},{"name":"proxy","image":"proxy:1","restartPolicy":"Always"}]}`)},
	{"plain init containers are not hashed", sidecarSet(`{"containers":[{"name":"a","image":"a:1"}],"initContainers":[{"name":"init","image":"init:1"}]}`)},
	{"no containers", sidecarSet(`{"selector":{}}`)},
	{"empty containers", sidecarSet(`{"containers":[]}`)},
	{"unicode and unknown fields", sidecarSet(`{"containers":[{"name":"s","image":"s:1","args":["☃ 😀 \u2028"],"unknown":1,"Image":"x"}]}`)},
	{"error: bad container", sidecarSet(`{"containers":[{"name":5}]}`)},
}
