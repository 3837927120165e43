package install

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// cgoOnly matches the type errors of a build without cgo that come from
// pg_query_go's cgo files being left out (its functions are then
// undefined): the release builds use cgo, so these are not errors there.
var cgoOnly = regexp.MustCompile(`undefined: (pg|parser)\.`)

// Every module package type-checks, tests included, for each system the
// release workflow builds for (.github/workflows/release.yml): code that
// only Linux builds (the event loop's files) must not be called from
// files every system builds. Checked without cgo, since no C compiler
// for those systems is here.
func TestTypeChecksForReleaseSystems(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module per system (-short skips it)")
	}
	wf, err := os.ReadFile("../../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	systems := map[string]bool{}
	for _, m := range regexp.MustCompile(`goos: (\w+), goarch: (\w+)`).FindAllStringSubmatch(string(wf), -1) {
		systems[m[1]+"/"+m[2]] = true
	}
	if !systems["darwin/arm64"] || !systems["linux/amd64"] {
		t.Fatalf("release.yml builds for %v; want darwin and linux among them", systems)
	}
	for sys := range systems {
		goos, goarch, _ := strings.Cut(sys, "/")
		t.Run(sys, func(t *testing.T) {
			cfg := &packages.Config{
				Mode:  packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedImports | packages.NeedDeps,
				Dir:   "../..",
				Env:   append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false"),
				Tests: true,
			}
			pkgs, err := packages.Load(cfg, "./...")
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			packages.Visit(pkgs, nil, func(p *packages.Package) {
				if !strings.HasPrefix(p.PkgPath, "github.com/pgpoolcheck/pgpoolcheck") {
					return
				}
				for _, e := range p.Errors {
					msg := e.Error()
					if cgoOnly.MatchString(msg) || seen[msg] {
						continue
					}
					seen[msg] = true
					t.Errorf("%s: %s", sys, msg)
				}
			})
		})
	}
}
