package install

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflow is the part of a GitHub workflow these tests read.
type workflow struct {
	Jobs map[string]struct {
		RunsOn   any `yaml:"runs-on"`
		Strategy struct {
			Matrix struct {
				Include []map[string]string `yaml:"include"`
			} `yaml:"matrix"`
		} `yaml:"strategy"`
		Container string            `yaml:"container"`
		Env       map[string]string `yaml:"env"`
		Steps     []step            `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), ".github", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return w
}

// currentRunners are GitHub-hosted runner labels GitHub offers (2026);
// macos-13 and ubuntu-20.04 are retired.
var currentRunners = []string{"ubuntu-22.04", "ubuntu-24.04", "ubuntu-latest", "ubuntu-22.04-arm", "ubuntu-24.04-arm",
	"macos-14", "macos-15", "macos-15-intel", "macos-26", "macos-latest"}

// TestReleaseWorkflow: release.yml builds the four platforms the action
// downloads on current runners, and attests what it publishes.
func TestReleaseWorkflow(t *testing.T) {
	w := readWorkflow(t, "release.yml")
	job, ok := w.Jobs["build"]
	if !ok {
		t.Fatal("release.yml has no build job")
	}
	platforms := map[string]bool{}
	for _, m := range job.Strategy.Matrix.Include {
		if !slices.Contains(currentRunners, m["os"]) {
			t.Errorf("release.yml builds %s/%s on %q, not a current GitHub runner", m["goos"], m["goarch"], m["os"])
		}
		platforms[m["goos"]+"_"+m["goarch"]] = true
	}
	for _, p := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
		if !platforms[p] {
			t.Errorf("release.yml does not build %s, which the action downloads", p)
		}
	}
	attests := false
	for _, s := range job.Steps {
		if strings.HasPrefix(s.Uses, "actions/attest-build-provenance@") {
			attests = true
		}
	}
	if !attests {
		t.Error("release.yml attests nothing: the action's gh attestation verify would fail")
	}
}

// TestCIWorkflow: a workflow runs the project's own test command, the one
// README.md gives, with CI=true (no silent skips).
func TestCIWorkflow(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := fencedBlock(t, string(readme[strings.Index(string(readme), "Run the whole test suite"):]), "sh", "go test")
	command := strings.TrimSpace(block)
	run, err := os.ReadFile(filepath.Join(root(t), ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(run), "\n"), command) {
		t.Errorf(".ci/run does not run the README's test command %q as a line of its own", command)
	}
	w := readWorkflow(t, "ci.yml")
	found := false
	for name, job := range w.Jobs {
		for _, s := range job.Steps {
			if strings.TrimSpace(s.Run) == ".ci/run" {
				found = true
				if job.Env["CI"] != "true" {
					t.Errorf("ci.yml job %s runs .ci/run without CI=true", name)
				}
				if !strings.HasPrefix(job.Container, "golang:1.26-") {
					t.Errorf("ci.yml job %s runs in %q; .ci/run wants root on Debian with Go in /usr/local/go", name, job.Container)
				}
			}
		}
	}
	if !found {
		t.Error("no job of ci.yml runs .ci/run")
	}
}

// TestExamplesPinARelease: the README's and docs' examples use the action,
// go install and the pre-commit hook at a release tag, never at a branch
// or @latest (which moves under the user, and builds nothing before the
// first tag).
func TestExamplesPinARelease(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(root(t), "docs", "*.md"))
	files = append(files, filepath.Join(root(t), "README.md"))
	pinned := regexp.MustCompile(`^v\d+\.\d+\.\d+$`)
	uses := regexp.MustCompile(`(pgpoolcheck/pgpoolcheck(?:/cmd/pgpoolcheck)?)@([^\s` + "`" + `'"]+)|\brev: (\S+)`)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range uses.FindAllStringSubmatch(string(b), -1) {
			ref := m[2] + m[3]
			n++
			if !pinned.MatchString(ref) {
				t.Errorf("%s: %q is not pinned to a release tag", filepath.Base(f), m[0])
			}
		}
	}
	if n < 4 {
		t.Errorf("only %d pinned uses found: is the pattern still right?", n)
	}
}
