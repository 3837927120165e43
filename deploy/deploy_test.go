// Package deploy holds the deployment manifests (kubernetes/, systemd/);
// its tests check that they fit together: the StatefulSet, its Services,
// ConfigMap and Secret, the peer list of the pooler's config, and the
// systemd template unit. The tests run the entry points with a stand-in
// binary and start the real pooler with the manifests' settings.
package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/pgpoolcheck/pgpoolcheck/internal/cli"
	"github.com/pgpoolcheck/pgpoolcheck/internal/proxyconfig"
)

// manifest is the part of a Kubernetes object the tests read.
type manifest struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace"`
		Labels    map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		// StatefulSet
		Replicas    *int      `yaml:"replicas"`
		ServiceName string    `yaml:"serviceName"`
		Selector    yaml.Node `yaml:"selector"`
		Template    struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
		// Service
		ClusterIP                string        `yaml:"clusterIP"`
		PublishNotReadyAddresses bool          `yaml:"publishNotReadyAddresses"`
		Ports                    []servicePort `yaml:"ports"`
	} `yaml:"spec"`
	file string
}

type podSpec struct {
	TerminationGracePeriodSeconds int         `yaml:"terminationGracePeriodSeconds"`
	Containers                    []container `yaml:"containers"`
	Volumes                       []struct {
		Name      string `yaml:"name"`
		ConfigMap *struct {
			Name  string    `yaml:"name"`
			Items []keyPath `yaml:"items"`
		} `yaml:"configMap"`
		Secret *struct {
			SecretName string    `yaml:"secretName"`
			Items      []keyPath `yaml:"items"`
		} `yaml:"secret"`
	} `yaml:"volumes"`
}

type keyPath struct {
	Key  string `yaml:"key"`
	Path string `yaml:"path"`
}

type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []envVar `yaml:"env"`
	Ports   []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	VolumeMounts   []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type envVar struct {
	Name      string `yaml:"name"`
	ValueFrom *struct {
		SecretKeyRef *struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type probe struct {
	HTTPGet *struct {
		Path string    `yaml:"path"`
		Port yaml.Node `yaml:"port"`
	} `yaml:"httpGet"`
}

type servicePort struct {
	Name       string    `yaml:"name"`
	Port       int       `yaml:"port"`
	TargetPort yaml.Node `yaml:"targetPort"`
}

// proxyYAML is the part of the pooler's config the tests read.
type proxyYAML struct {
	Listen          string         `yaml:"listen"`
	MetricsListen   string         `yaml:"metrics_listen"`
	AuthFile        string         `yaml:"auth_file"`
	ShutdownTimeout string         `yaml:"shutdown_timeout"`
	PeerID          *int           `yaml:"peer_id"`
	Peers           map[int]string `yaml:"peers"`
}

// cluster is the Kubernetes manifests, read from kubernetes/.
type cluster struct {
	objects []*manifest
	sts     *manifest
	pooler  *container
}

func loadCluster(t *testing.T) *cluster {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in kubernetes/: %v", err)
	}
	c := &cluster{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			m := &manifest{file: f}
			if err := dec.Decode(m); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if m.APIVersion == "" || m.Kind == "" || m.Metadata.Name == "" {
				t.Fatalf("%s: an object without apiVersion, kind or name", f)
			}
			c.objects = append(c.objects, m)
		}
	}
	for _, m := range c.objects {
		if m.Kind == "StatefulSet" {
			if c.sts != nil {
				t.Fatalf("two StatefulSets: %s and %s", c.sts.Metadata.Name, m.Metadata.Name)
			}
			c.sts = m
		}
	}
	if c.sts == nil {
		t.Fatal("no StatefulSet")
	}
	cs := c.sts.Spec.Template.Spec.Containers
	for i := range cs {
		if slices.Contains(cs[i].Command, "-c") && strings.Contains(strings.Join(cs[i].Command, " "), "pgpoolcheck proxy") {
			c.pooler = &cs[i]
		}
	}
	if c.pooler == nil {
		t.Fatal("the StatefulSet has no container that runs pgpoolcheck proxy through a shell")
	}
	return c
}

func (c *cluster) get(t *testing.T, kind, name string) *manifest {
	t.Helper()
	for _, m := range c.objects {
		if m.Kind == kind && m.Metadata.Name == name {
			return m
		}
	}
	t.Fatalf("no %s named %q (referenced by the StatefulSet)", kind, name)
	return nil
}

// containerPort resolves a port given by name or number.
func (c *cluster) containerPort(t *testing.T, n yaml.Node) int {
	t.Helper()
	for _, p := range c.pooler.Ports {
		if n.Value == p.Name || n.Value == strconv.Itoa(p.ContainerPort) {
			return p.ContainerPort
		}
	}
	t.Fatalf("port %q is not a port of container %s", n.Value, c.pooler.Name)
	return 0
}

func (c *cluster) namedPort(t *testing.T, name string) int {
	t.Helper()
	return c.containerPort(t, yaml.Node{Kind: yaml.ScalarNode, Value: name})
}

// mountOf returns the mount path of a volume in the pooler container.
func (c *cluster) mountOf(t *testing.T, volume string) string {
	t.Helper()
	for _, m := range c.pooler.VolumeMounts {
		if m.Name == volume {
			return m.MountPath
		}
	}
	t.Fatalf("volume %s is not mounted in container %s", volume, c.pooler.Name)
	return ""
}

// configFile returns the ConfigMap key and the path in the container of
// the pooler's config file, from the --config the entry point passes.
func (c *cluster) configFile(t *testing.T) (cm *manifest, key, path string) {
	t.Helper()
	script := c.pooler.Command[slices.Index(c.pooler.Command, "-c")+1]
	f := strings.Fields(script[strings.Index(script, "pgpoolcheck proxy"):])
	i := slices.Index(f, "--config")
	if i < 0 || i+1 >= len(f) {
		t.Fatalf("the entry point passes no --config: %q", script)
	}
	path = f[i+1]
	for _, v := range c.sts.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		dir := c.mountOf(t, v.Name)
		for _, it := range v.ConfigMap.Items {
			if filepath.Join(dir, it.Path) == path {
				return c.get(t, "ConfigMap", v.ConfigMap.Name), it.Key, path
			}
		}
	}
	t.Fatalf("--config %s is no file of a mounted ConfigMap", path)
	return nil, "", ""
}

func (c *cluster) proxyConfig(t *testing.T) (string, proxyYAML) {
	t.Helper()
	cm, key, _ := c.configFile(t)
	text, ok := cm.Data[key]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %s", cm.Metadata.Name, key)
	}
	// Every key is one the pooler knows, with a value of the right type.
	if _, err := proxyconfig.ParseYAML([]byte(text)); err != nil {
		t.Fatalf("ConfigMap %s, %s: %v", cm.Metadata.Name, key, err)
	}
	var cfg proxyYAML
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		t.Fatal(err)
	}
	return text, cfg
}

func selectorLabels(t *testing.T, m *manifest) map[string]string {
	t.Helper()
	var sel struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	}
	var labels map[string]string
	if m.Kind == "Service" {
		if err := m.Spec.Selector.Decode(&labels); err != nil {
			t.Fatalf("%s %s: selector: %v", m.Kind, m.Metadata.Name, err)
		}
	} else {
		if err := m.Spec.Selector.Decode(&sel); err != nil {
			t.Fatalf("%s %s: selector: %v", m.Kind, m.Metadata.Name, err)
		}
		labels = sel.MatchLabels
	}
	if len(labels) == 0 {
		t.Fatalf("%s %s selects nothing", m.Kind, m.Metadata.Name)
	}
	return labels
}

// selects reports whether a selector matches the labels.
func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func hostPort(t *testing.T, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%q: %v", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("%q: %v", addr, err)
	}
	return h, n
}

// TestKustomization: the kustomization lists every manifest, and its image
// is the one the StatefulSet runs.
func TestKustomization(t *testing.T) {
	data, err := os.ReadFile("kubernetes/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Kind      string   `yaml:"kind"`
		Resources []string `yaml:"resources"`
		Images    []struct {
			Name string `yaml:"name"`
		} `yaml:"images"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("kubernetes/*.yaml")
	var want []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" {
			want = append(want, b)
		}
	}
	got := slices.Clone(k.Resources)
	slices.Sort(got)
	if k.Kind != "Kustomization" || !slices.Equal(got, want) {
		t.Errorf("kustomization: kind %q, resources %v; want every manifest %v", k.Kind, k.Resources, want)
	}
	c := loadCluster(t)
	image, _, _ := strings.Cut(c.pooler.Image, ":")
	if len(k.Images) != 1 || k.Images[0].Name != image {
		t.Errorf("kustomization images %+v do not name the container image %q", k.Images, c.pooler.Image)
	}
}

// TestKubernetesManifests checks that the objects refer to each other
// correctly and that the pooler's peer list matches the StatefulSet.
func TestKubernetesManifests(t *testing.T) {
	c := loadCluster(t)
	sts := c.sts
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas < 1 {
		t.Fatal("the StatefulSet sets no replicas")
	}
	n := *sts.Spec.Replicas
	podLabels := sts.Spec.Template.Metadata.Labels
	if !selects(selectorLabels(t, sts), podLabels) {
		t.Errorf("the StatefulSet's selector does not match its pod labels %v", podLabels)
	}
	clientPort := c.namedPort(t, "postgres")

	// The headless Service names the pods.
	headless := c.get(t, "Service", sts.Spec.ServiceName)
	if headless.Spec.ClusterIP != "None" {
		t.Errorf("Service %s (the StatefulSet's serviceName) has clusterIP %q, want None", headless.Metadata.Name, headless.Spec.ClusterIP)
	}
	if !headless.Spec.PublishNotReadyAddresses {
		t.Errorf("Service %s does not publish pods before they are ready: peers cannot reach a starting pod", headless.Metadata.Name)
	}
	if !selects(selectorLabels(t, headless), podLabels) {
		t.Errorf("Service %s does not select the StatefulSet's pods", headless.Metadata.Name)
	}

	// The client Service reaches the pooler's port on every pod.
	var clients []*manifest
	for _, m := range c.objects {
		if m.Kind == "Service" && m.Spec.ClusterIP != "None" {
			clients = append(clients, m)
		}
	}
	if len(clients) != 1 {
		t.Fatalf("%d client Services, want 1", len(clients))
	}
	svc := clients[0]
	if !selects(selectorLabels(t, svc), podLabels) {
		t.Errorf("Service %s does not select the StatefulSet's pods", svc.Metadata.Name)
	}
	for _, m := range []*manifest{svc, headless} {
		if len(m.Spec.Ports) == 0 {
			t.Errorf("Service %s has no port", m.Metadata.Name)
		}
		for _, p := range m.Spec.Ports {
			if got := c.containerPort(t, p.TargetPort); got != clientPort || p.Port != clientPort {
				t.Errorf("Service %s port %d → %d, want %d → the pooler's port %d", m.Metadata.Name, p.Port, got, clientPort, clientPort)
			}
		}
	}
	for _, m := range c.objects {
		if m.Kind == "PodDisruptionBudget" && !selects(selectorLabels(t, m), podLabels) {
			t.Errorf("PodDisruptionBudget %s does not select the StatefulSet's pods", m.Metadata.Name)
		}
	}

	// Secrets and ConfigMaps the pod refers to exist and hold the keys.
	for _, e := range c.pooler.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref := e.ValueFrom.SecretKeyRef
			if _, ok := c.get(t, "Secret", ref.Name).StringData[ref.Key]; !ok {
				t.Errorf("env %s: Secret %s has no key %s", e.Name, ref.Name, ref.Key)
			}
		}
	}
	secretFiles := map[string]bool{}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			cm := c.get(t, "ConfigMap", v.ConfigMap.Name)
			for _, it := range v.ConfigMap.Items {
				if _, ok := cm.Data[it.Key]; !ok {
					t.Errorf("volume %s: ConfigMap %s has no key %s", v.Name, cm.Metadata.Name, it.Key)
				}
			}
		case v.Secret != nil:
			s := c.get(t, "Secret", v.Secret.SecretName)
			for _, it := range v.Secret.Items {
				if _, ok := s.StringData[it.Key]; !ok {
					t.Errorf("volume %s: Secret %s has no key %s", v.Name, s.Metadata.Name, it.Key)
				}
				secretFiles[filepath.Join(c.mountOf(t, v.Name), it.Path)] = true
			}
		}
	}
	if !slices.ContainsFunc(c.pooler.Env, func(e envVar) bool {
		return e.Name == "PGPOOLCHECK_UPSTREAM" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
	}) {
		t.Error("PGPOOLCHECK_UPSTREAM does not come from a Secret: the upstream password would sit in the ConfigMap")
	}

	// The pooler's config.
	_, cfg := c.proxyConfig(t)
	if _, port := hostPort(t, cfg.Listen); port != clientPort {
		t.Errorf("listen %s: port %d, want the container port %d", cfg.Listen, port, clientPort)
	}
	if !secretFiles[cfg.AuthFile] {
		t.Errorf("auth_file %s is no file of a mounted Secret (%v)", cfg.AuthFile, secretFiles)
	}
	if cfg.PeerID != nil {
		t.Errorf("peer_id %d in the shared config: every pod would claim it; the entry point derives --peer-id from the ordinal", *cfg.PeerID)
	}
	if len(cfg.Peers) != n {
		t.Errorf("%d peers in the config, %d replicas in the StatefulSet", len(cfg.Peers), n)
	}
	ns := sts.Metadata.Namespace
	for id := 1; id <= n; id++ {
		addr, ok := cfg.Peers[id]
		if !ok {
			t.Errorf("peer %d is missing (peer ids are 1 to %d, one per pod)", id, n)
			continue
		}
		host, port := hostPort(t, addr)
		pod := fmt.Sprintf("%s-%d.%s", sts.Metadata.Name, id-1, headless.Metadata.Name)
		wantHosts := []string{pod}
		if ns != "" {
			wantHosts = append(wantHosts, pod+"."+ns+".svc", pod+"."+ns+".svc.cluster.local")
		}
		if !slices.Contains(wantHosts, host) || port != clientPort {
			t.Errorf("peer %d at %s, want %s:%d (pod %d of the StatefulSet through its headless Service)", id, addr, pod, clientPort, id-1)
		}
	}
	for id := range cfg.Peers {
		if id < 1 || id > n {
			t.Errorf("peer %d: ids run from 1 to the replicas (%d)", id, n)
		}
	}

	// Probes ask the metrics endpoint, which listens on the probed port.
	_, metricsPort := hostPort(t, cfg.MetricsListen)
	for name, p := range map[string]*probe{"readiness": c.pooler.ReadinessProbe, "liveness": c.pooler.LivenessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("no %s probe over HTTP", name)
			continue
		}
		if got := c.containerPort(t, p.HTTPGet.Port); got != metricsPort || p.HTTPGet.Path != "/metrics" {
			t.Errorf("%s probe GET %s on port %d, want /metrics on metrics_listen's port %d", name, p.HTTPGet.Path, got, metricsPort)
		}
	}
	if d, err := time.ParseDuration(cfg.ShutdownTimeout); err != nil || time.Duration(sts.Spec.Template.Spec.TerminationGracePeriodSeconds)*time.Second <= d {
		t.Errorf("terminationGracePeriodSeconds %d is not longer than shutdown_timeout %s: pods are killed while draining", sts.Spec.Template.Spec.TerminationGracePeriodSeconds, cfg.ShutdownTimeout)
	}
}

// fakeBinary writes a pgpoolcheck stand-in that prints its arguments, one
// per line, and returns its directory.
func fakeBinary(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the entry points are POSIX shell")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "pgpoolcheck"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runEntry runs a command line with the stand-in first on PATH and
// returns the arguments the stand-in got.
func runEntry(t *testing.T, argv []string, env ...string) ([]string, error) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.String())
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n"), nil
}

// flagValue returns the value of --name in args ("--name v" or
// "--name=v").
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// podArgs runs the pooler container's entry point as pod ordinal would and
// returns the arguments it gives pgpoolcheck.
func (c *cluster) podArgs(t *testing.T, bin string, hostname string) ([]string, error) {
	argv := append(slices.Clone(c.pooler.Command), c.pooler.Args...)
	return runEntry(t, argv, "PATH="+bin+":"+os.Getenv("PATH"), "HOSTNAME="+hostname)
}

// TestStatefulSetEntryPoint: pod <statefulset>-<i> runs pgpoolcheck proxy
// with --peer-id i+1 and the ConfigMap's config; a hostname without an
// ordinal stops the start.
func TestStatefulSetEntryPoint(t *testing.T) {
	c := loadCluster(t)
	bin := fakeBinary(t)
	_, _, configPath := c.configFile(t)
	for ordinal := range *c.sts.Spec.Replicas {
		host := fmt.Sprintf("%s-%d", c.sts.Metadata.Name, ordinal)
		args, err := c.podArgs(t, bin, host)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		id, _ := flagValue(args, "--peer-id")
		cfg, _ := flagValue(args, "--config")
		if len(args) == 0 || args[0] != "proxy" || id != strconv.Itoa(ordinal+1) || cfg != configPath {
			t.Errorf("pod %s runs pgpoolcheck %q, want proxy --config %s --peer-id %d", host, args, configPath, ordinal+1)
		}
	}
	for _, host := range []string{"pgpoolcheck", "pgpoolcheck-", "pgpoolcheck-x1"} {
		if args, err := c.podArgs(t, bin, host); err == nil {
			t.Errorf("hostname %q: started with %q, want a refusal", host, args)
		}
	}
}

// freePort returns a TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// pooler is a pgpoolcheck proxy run in this process.
type pooler struct {
	cancel context.CancelFunc
	done   chan int
	stderr *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startPooler runs pgpoolcheck with args and waits until its metrics
// endpoint answers GET path with 200.
func startPooler(t *testing.T, args []string, metricsAddr, path string) *pooler {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &pooler{cancel: cancel, done: make(chan int, 1), stderr: &syncBuffer{}}
	go func() { p.done <- cli.Run(ctx, args, strings.NewReader(""), io.Discard, p.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			t.Errorf("pgpoolcheck %q did not stop", args)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case code := <-p.done:
			t.Fatalf("pgpoolcheck %q exited with %d:\n%s", args, code, p.stderr.String())
		default:
		}
		resp, err := http.Get("http://" + metricsAddr + path)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgpoolcheck %q: GET %s never answered 200 (%v):\n%s", args, path, err, p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replaceArg replaces the value of a flag in args.
func replaceArg(t *testing.T, args []string, name, value string) []string {
	t.Helper()
	out := slices.Clone(args)
	for i, a := range out {
		if a == name && i+1 < len(out) {
			out[i+1] = value
			return out
		}
		if strings.HasPrefix(a, name+"=") {
			out[i] = name + "=" + value
			return out
		}
	}
	t.Fatalf("no %s in %q", name, args)
	return nil
}

// TestKubernetesPoolerStarts runs the real pooler with pod 0's arguments,
// the ConfigMap's config and the Secret's userlist and upstream (files
// moved to a temporary directory, ports to free ones): the config is
// accepted, peers included, and the probed endpoint answers.
func TestKubernetesPoolerStarts(t *testing.T) {
	c := loadCluster(t)
	bin := fakeBinary(t)
	text, cfg := c.proxyConfig(t)
	args, err := c.podArgs(t, bin, c.sts.Metadata.Name+"-0")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var secret *manifest
	for _, m := range c.objects {
		if m.Kind == "Secret" {
			secret = m
		}
	}
	userlist := filepath.Join(dir, path.Base(cfg.AuthFile))
	if err := os.WriteFile(userlist, []byte(secret.StringData[path.Base(cfg.AuthFile)]), 0o600); err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "pgpoolcheck.yaml")
	if err := os.WriteFile(configFile, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.pooler.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			t.Setenv(e.Name, c.get(t, "Secret", e.ValueFrom.SecretKeyRef.Name).StringData[e.ValueFrom.SecretKeyRef.Key])
		}
	}
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	metrics := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	run := append(replaceArg(t, args, "--config", configFile),
		"--listen", listen, "--metrics-listen", metrics, "--auth-file", userlist)
	startPooler(t, run, metrics, c.pooler.ReadinessProbe.HTTPGet.Path)
	conn, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatalf("the pooler does not accept clients on %s: %v", listen, err)
	}
	conn.Close()
}

// unit is a systemd unit file: section → key → values (in order).
type unit map[string]map[string][]string

func loadUnit(t *testing.T, path string) unit {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unit{}
	section := ""
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" || strings.HasSuffix(line, "\\") {
				t.Fatalf("%s:%d: not a KEY=VALUE line in a section: %q", path, i+1, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

func (u unit) one(t *testing.T, section, key string) string {
	t.Helper()
	v := u[section][key]
	if len(v) != 1 {
		t.Fatalf("[%s] %s is set %d times, want once", section, key, len(v))
	}
	return v[0]
}

// commandLine expands a unit's command line as systemd does for instance
// inst: %i and %% specifiers, $$ for a dollar, then the words, with
// single or double quotes around a word.
func commandLine(t *testing.T, line, inst string) []string {
	t.Helper()
	r := strings.NewReplacer("%i", inst, "%%", "%", "$$", "$")
	line = r.Replace(line)
	var words []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if q := line[0]; q == '\'' || q == '"' {
			end := strings.IndexByte(line[1:], q)
			if end < 0 {
				t.Fatalf("unterminated quote in %q", line)
			}
			words = append(words, line[1:end+1])
			line = line[end+2:]
			continue
		}
		end := strings.IndexAny(line, " \t")
		if end < 0 {
			end = len(line)
		}
		words = append(words, line[:end])
		line = line[end:]
	}
	return words
}

// systemdSetup reads the template unit and the config it names.
func systemdSetup(t *testing.T) (u unit, execStart, configPath, configText string, cfg proxyYAML) {
	t.Helper()
	u = loadUnit(t, "systemd/pgpoolcheck@.service")
	execStart = u.one(t, "Service", "ExecStart")
	if !strings.Contains(execStart, "--so-reuseport") || !strings.Contains(execStart, "--peer-id %i") {
		t.Errorf("ExecStart %q: want --so-reuseport and --peer-id %%i", execStart)
	}
	words := strings.Fields(execStart)
	i := slices.Index(words, "--config")
	if i < 0 {
		t.Fatalf("ExecStart %q has no --config", execStart)
	}
	configPath = words[i+1]
	data, err := os.ReadFile(filepath.Join("systemd", filepath.Base(configPath)))
	if err != nil {
		t.Fatalf("the config the unit reads (%s) is not in systemd/: %v", configPath, err)
	}
	configText = string(data)
	if _, err := proxyconfig.ParseYAML(data); err != nil {
		t.Fatalf("%s: %v", configPath, err)
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	return u, execStart, configPath, configText, cfg
}

// TestSystemdUnit: instance N of the template unit runs pgpoolcheck proxy
// with --so-reuseport, --peer-id N, its own Unix socket (the peer list's
// address for N) and its own metrics port; PGPOOLCHECK_CAPTURE_DIR gives
// each instance its own capture file.
func TestSystemdUnit(t *testing.T) {
	u, execStart, configPath, _, cfg := systemdSetup(t)
	if cfg.PeerID != nil {
		t.Errorf("peer_id %d in the shared config: the unit's --peer-id %%i gives each instance its own", *cfg.PeerID)
	}
	if len(cfg.Peers) < 2 {
		t.Fatalf("%d peers: a template for several instances lists several", len(cfg.Peers))
	}
	_, port := hostPort(t, cfg.Listen)
	runtimeDir := u.one(t, "Service", "RuntimeDirectory")
	bin := fakeBinary(t)
	const installed = "/usr/local/bin/pgpoolcheck"
	if !strings.Contains(execStart, installed) {
		t.Fatalf("ExecStart %q does not run %s", execStart, installed)
	}
	metricsPorts := map[string]bool{}
	for id := 1; id <= len(cfg.Peers); id++ {
		inst := strconv.Itoa(id)
		argv := commandLine(t, strings.Replace(execStart, installed, filepath.Join(bin, "pgpoolcheck"), 1), inst)
		args, err := runEntry(t, argv)
		if err != nil {
			t.Fatalf("pgpoolcheck@%s: %v", inst, err)
		}
		peerID, _ := flagValue(args, "--peer-id")
		cfgFile, _ := flagValue(args, "--config")
		socketDir, _ := flagValue(args, "--unix-socket-dir")
		metrics, _ := flagValue(args, "--metrics-listen")
		if args[0] != "proxy" || peerID != inst || cfgFile != configPath || !slices.Contains(args, "--so-reuseport") {
			t.Errorf("pgpoolcheck@%s runs pgpoolcheck %q, want proxy --config %s --so-reuseport --peer-id %s", inst, args, configPath, inst)
		}
		if want := "/run/" + strings.ReplaceAll(runtimeDir, "%i", inst); socketDir != want {
			t.Errorf("pgpoolcheck@%s: --unix-socket-dir %q, want its RuntimeDirectory %s", inst, socketDir, want)
		}
		if want := fmt.Sprintf("%s/.s.PGSQL.%d", socketDir, port); cfg.Peers[id] != want {
			t.Errorf("peer %d at %q, want instance %s's socket %s", id, cfg.Peers[id], inst, want)
		}
		if metrics == "" || metricsPorts[metrics] {
			t.Errorf("pgpoolcheck@%s: --metrics-listen %q is missing or shared with another instance", inst, metrics)
		}
		metricsPorts[metrics] = true
		if _, ok := flagValue(args, "--capture"); ok {
			t.Errorf("pgpoolcheck@%s records without PGPOOLCHECK_CAPTURE_DIR: %q", inst, args)
		}
		args, err = runEntry(t, argv, "PGPOOLCHECK_CAPTURE_DIR=/var/lib/pgpoolcheck", "PGPOOLCHECK_ARGS=--log-format=json --redact")
		if err != nil {
			t.Fatal(err)
		}
		if c, _ := flagValue(args, "--capture"); c != "/var/lib/pgpoolcheck/capture-"+inst+".jsonl" || !slices.Contains(args, "--redact") || !slices.Contains(args, "--log-format=json") {
			t.Errorf("pgpoolcheck@%s with PGPOOLCHECK_CAPTURE_DIR and PGPOOLCHECK_ARGS: %q", inst, args)
		}
	}
	for id := range cfg.Peers {
		if id < 1 || id > len(cfg.Peers) {
			t.Errorf("peer %d: ids run from 1 to the number of instances (%d)", id, len(cfg.Peers))
		}
	}
}

// TestSystemdInstancesSharePort starts two instances as the template unit
// runs them (runtime directories and the port moved to temporary ones):
// both listen on one TCP port (SO_REUSEPORT) and each on its own Unix
// socket, the address its peers have for it.
func TestSystemdInstancesSharePort(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SO_REUSEPORT sharing is Linux's")
	}
	_, execStart, _, configText, cfg := systemdSetup(t)
	bin := fakeBinary(t)
	_, port := hostPort(t, cfg.Listen)
	root, err := os.MkdirTemp("", "pgpc") // short: Unix socket paths are limited to about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	newPort := freePort(t)
	moved := strings.NewReplacer("/run/", root+"/", fmt.Sprintf(".s.PGSQL.%d", port), fmt.Sprintf(".s.PGSQL.%d", newPort)).Replace(configText)
	movedConfig := filepath.Join(root, "pgpoolcheck.yaml")
	if err := os.WriteFile(movedConfig, []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}
	userlist := filepath.Join(root, "userlist.txt")
	if err := os.WriteFile(userlist, []byte(`"app" "change-me"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPOOLCHECK_UPSTREAM", "postgres://app:change-me@127.0.0.1:1/app")
	listen := fmt.Sprintf("127.0.0.1:%d", newPort)
	var movedPeers proxyYAML
	if err := yaml.Unmarshal([]byte(moved), &movedPeers); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{1, 2} {
		argv := commandLine(t, strings.Replace(execStart, "/usr/local/bin/pgpoolcheck", filepath.Join(bin, "pgpoolcheck"), 1), strconv.Itoa(id))
		args, err := runEntry(t, argv)
		if err != nil {
			t.Fatal(err)
		}
		socketDir, _ := flagValue(args, "--unix-socket-dir")
		socketDir = strings.Replace(socketDir, "/run/", root+"/", 1)
		if err := os.MkdirAll(socketDir, 0o755); err != nil { // systemd's RuntimeDirectory
			t.Fatal(err)
		}
		metrics := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		args = replaceArg(t, args, "--config", movedConfig)
		args = replaceArg(t, args, "--unix-socket-dir", socketDir)
		args = replaceArg(t, args, "--metrics-listen", metrics)
		args = append(args, "--listen", listen, "--auth-file", userlist)
		startPooler(t, args, metrics, "/metrics")
		conn, err := net.Dial("unix", movedPeers.Peers[id])
		if err != nil {
			t.Fatalf("instance %d does not listen at its peer address %s: %v", id, movedPeers.Peers[id], err)
		}
		conn.Close()
	}
	conn, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatalf("the shared port %s: %v", listen, err)
	}
	conn.Close()
}
