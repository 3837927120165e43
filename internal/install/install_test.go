// Package install tests the ways pgpoolcheck is installed and run outside
// `go install`: the Dockerfile's build stage, the GitHub Action's shell
// steps and the pre-commit hook, each run here as the tool that reads the
// file would run it (no container runtime, GitHub runner or pre-commit is
// needed).
package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/pgtest"
	"go.yaml.in/yaml/v3"
)

// root is the repository's top directory.
func root(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// buildVersion is the VERSION build argument the tests build with.
const buildVersion = "v0.0.0-install-test"

// built is the binary the Dockerfile's build stage makes, built once.
var built string

// dockerBuild runs the Dockerfile's build-stage RUN command that compiles
// pgpoolcheck, with its output directory /out moved to a temporary one,
// and returns the binary.
func dockerBuild(t *testing.T) string {
	t.Helper()
	if built != "" {
		return built
	}
	b, err := os.ReadFile(filepath.Join(root(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var run string
	inBuild := false
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\\\n", " "), "\n") {
		switch {
		case strings.HasPrefix(line, "FROM "):
			inBuild = strings.HasSuffix(strings.TrimSpace(line), " AS build")
		case inBuild && strings.HasPrefix(line, "RUN ") && strings.Contains(line, "go build"):
			run = strings.TrimPrefix(line, "RUN ")
		}
	}
	if run == "" {
		t.Fatal("the Dockerfile's build stage has no RUN … go build")
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "-c", strings.ReplaceAll(run, "/out/", out+"/"))
	cmd.Dir = root(t)
	// docker build --build-arg VERSION=…: the ARG is in the RUN's
	// environment.
	cmd.Env = append(os.Environ(), "VERSION="+buildVersion)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", run, err, msg)
	} else if !strings.HasPrefix(string(msg), "pgpoolcheck ") {
		t.Fatalf("the build stage's --version printed %q", msg)
	}
	// Keep the binary for the other tests of this run.
	dir, err := os.MkdirTemp("", "pgpoolcheck-install")
	if err != nil {
		t.Fatal(err)
	}
	// The image's user (uid 10001) runs it.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	built = filepath.Join(dir, "pgpoolcheck")
	if err := os.Rename(filepath.Join(out, "pgpoolcheck"), built); err != nil {
		t.Fatal(err)
	}
	return built
}

func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if built != "" {
		os.RemoveAll(filepath.Dir(built))
	}
	os.Exit(code)
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"AS build", "CGO_ENABLED=1", "USER 10001", `ENTRYPOINT ["pgpoolcheck"]`, "-slim"} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	dockerBuild(t)
}

// step is a step of the action.
type step struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	Uses string            `yaml:"uses"`
	If   string            `yaml:"if"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
}

func actionSteps(t *testing.T) map[string]step {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Using string `yaml:"using"`
			Steps []step `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q", a.Runs.Using)
	}
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Uses, "setup-go") || strings.Contains(s.Run, "go build") || strings.Contains(s.Run, "go install") {
			t.Errorf("action step %q builds or sets up Go (%s%s): the action runs a released binary and leaves the job's Go alone", s.Name, s.Uses, s.Run)
		}
	}
	for _, in := range []string{"paths", "captures", "target", "fail-on", "baseline", "sarif", "version", "verify-attestation"} {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("action input %s missing", in)
		}
	}
	steps := map[string]step{}
	for _, s := range a.Runs.Steps {
		steps[s.Name] = s
	}
	return steps
}

// runStep runs a step's script with bash as the runner would, its env
// entries given by env (the inputs the expressions would expand to).
func runStep(t *testing.T, s step, env map[string]string) (output map[string]string, stdout string, code int) {
	t.Helper()
	tmp := t.TempDir()
	out := filepath.Join(tmp, "github_output")
	cmd := exec.Command("bash", "-e", "-c", s.Run)
	cmd.Dir = filepath.Join(root(t), "internal", "install", "testdata")
	cmd.Env = append(os.Environ(), "GITHUB_OUTPUT="+out)
	for k := range s.Env {
		if _, ok := env[k]; !ok {
			t.Fatalf("step %q: no value for %s", s.Name, k)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	b, err := cmd.Output()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	output = map[string]string{}
	if data, err := os.ReadFile(out); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				output[k] = v
			}
		}
	}
	return output, string(b), code
}

func TestPreCommitHook(t *testing.T) {
	bin := dockerBuild(t)
	b, err := os.ReadFile(filepath.Join(root(t), ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID       string   `yaml:"id"`
		Entry    string   `yaml:"entry"`
		Language string   `yaml:"language"`
		Types    []string `yaml:"types"`
		TypesOr  []string `yaml:"types_or"`
		Files    string   `yaml:"files"`
		Exclude  string   `yaml:"exclude"`
	}
	if err := yaml.Unmarshal(b, &hooks); err != nil || len(hooks) != 1 {
		t.Fatalf("hooks: %v, %v", hooks, err)
	}
	h := hooks[0]
	if h.Language != "golang" || !strings.HasPrefix(h.Entry, "pgpoolcheck ") {
		t.Fatalf("hook %+v", h)
	}
	// The hook passes every file and lets scan select them as a walk
	// does, so that it checks the files scan . checks (.psql, .tsx,
	// Elixir, configuration files, .pgpoolcheck.yaml's exclude).
	if !slices.Equal(h.Types, []string{"file"}) || len(h.TypesOr) > 0 || h.Files != "" || h.Exclude != "" ||
		!slices.Contains(strings.Fields(h.Entry), "--force-exclude") {
		t.Errorf("hook %+v: want types [file], no other filter, and scan --force-exclude", h)
	}
	// pre-commit runs the entry with the staged files as arguments.
	run := func(files ...string) int {
		args := append(strings.Fields(h.Entry)[1:], files...)
		cmd := exec.Command(bin, args...)
		cmd.Dir = filepath.Join(root(t), "internal", "install", "testdata")
		if err := cmd.Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode()
			}
			t.Fatal(err)
		}
		return 0
	}
	if code := run("hazards.sql"); code != 1 {
		t.Errorf("hook on a file with hazards: exit %d, want 1", code)
	}
	if code := run("clean.sql"); code != 0 {
		t.Errorf("hook on a clean file: exit %d, want 0", code)
	}
}
