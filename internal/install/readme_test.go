package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeCommands are the shell commands of README.md's ```sh blocks, one
// per line, and what this test does with each: run it as written (from
// the repository's top directory), or why it cannot run here and which
// test covers it instead. A command the README gains must be added.
var readmeCommands = map[string]string{
	"go run ./cmd/pgpoolcheck demo":                                                               "run",
	"git clone https://github.com/pgpoolcheck/pgpoolcheck && cd pgpoolcheck":                      "not run: needs the network; the rest of this test runs in a checkout",
	"go install ./cmd/pgpoolcheck":                                                                "run",
	`docker build --build-arg VERSION="$(git describe --tags --always --dirty)" -t pgpoolcheck .`: "not run: needs a container runtime; TestDockerfile, TestImageVersion run its build stage",
	`docker run --rm -v "$PWD:/src" pgpoolcheck scan .`:                                           "not run: needs a container runtime; TestImageScan runs the image's binary as its user",
	"go run ./cmd/pgpoolcheck scan --fail-on never testdata/sample":                               "run",
	"go test ./...": "not run: it is the whole suite, this test among it; .github/workflows/ci.yml runs it (TestCIWorkflow)",
}

// TestReadmeCommands runs the README's commands as written, as far as
// they can run here, and checks that it is at most 20 KB.
func TestReadmeCommands(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 20*1024 {
		t.Errorf("README.md is %d bytes; keep it at most 20 KB (the reference goes to docs/)", len(b))
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	seen := map[string]bool{}
	for _, m := range blocks {
		for _, line := range strings.Split(m[1], "\n") {
			cmd := strings.TrimSpace(line)
			if cmd == "" {
				continue
			}
			seen[cmd] = true
			how, ok := readmeCommands[cmd]
			if !ok {
				t.Errorf("README.md has a command this test does not know: %q (add it to readmeCommands: run it, or say why not and what covers it)", cmd)
				continue
			}
			if how != "run" {
				t.Logf("%s: %s", cmd, how)
				continue
			}
			t.Run(cmd, func(t *testing.T) {
				if strings.HasSuffix(cmd, " demo") && testing.Short() {
					t.Skip("-short: the demo starts PostgreSQL")
				}
				c := exec.Command("bash", "-c", cmd)
				c.Dir = root(t)
				c.Env = append(os.Environ(), "GOBIN="+t.TempDir()) // go install puts the binary there
				out, err := c.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", cmd, err, out)
				}
				if strings.HasPrefix(cmd, "go run") && len(out) == 0 {
					t.Errorf("%s printed nothing", cmd)
				}
			})
		}
	}
	for cmd := range readmeCommands {
		if !seen[cmd] {
			t.Errorf("readmeCommands lists %q, which README.md no longer has", cmd)
		}
	}
}
