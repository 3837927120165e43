package install

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGoVersionAgrees: the Go version README.md asks for is the minimum
// go.mod states (its go line), and the Dockerfile builds with that
// release line.
func TestGoVersionAgrees(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join(root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)(?:\.(\d+))?$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	// "1.26" and "1.26.0" are the same release.
	minor := string(m[1]) + "." + string(m[2])
	want := minor
	if patch := string(m[3]); patch != "" && patch != "0" {
		want += "." + patch
	}
	readme, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	stated := regexp.MustCompile(`Go (\d+\.\d+(?:\.\d+)?) or newer`).FindAllSubmatch(readme, -1)
	if len(stated) == 0 {
		t.Fatal(`README.md does not say which Go it needs ("Go X.Y or newer")`)
	}
	for _, s := range stated {
		got := string(s[1])
		if strings.Count(got, ".") == 2 {
			got = strings.TrimSuffix(got, ".0")
		}
		if got != want {
			t.Errorf("README.md says Go %s or newer, go.mod's go line says %s", s[1], want)
		}
	}
	docker, err := os.ReadFile(filepath.Join(root(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(docker), "FROM golang:"+minor+"-") {
		t.Errorf("the Dockerfile's build stage does not use golang:%s", minor)
	}
}
