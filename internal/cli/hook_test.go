package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// hookTree is a tree with a finding in every kind of file scan reads, in
// files the config excludes, in directories walks skip and in files scan
// does not read.
var hookTree = map[string]string{
	".pgpoolcheck.yaml":      "exclude: [\"legacy\", \"**/*_gen.go\"]\n",
	"db/001.sql":             "SET search_path TO app;\n",
	"db/002.psql":            "LISTEN jobs;\n",
	"db/003.pgsql":           "SELECT pg_advisory_lock(1);\n",
	"legacy/old.sql":         "SET ROLE admin;\n",
	"web/App.tsx":            "export const q = client.query(\"LISTEN web\");\n",
	"web/view.jsx":           "export const q = client.query(\"SET work_mem = '1GB'\");\n",
	"lib/jobs.ex":            "defmodule Jobs do\n  def l, do: Repo.query!(\"LISTEN jobs\")\nend\n",
	"app/store.go":           "package app\n\nconst q = \"SET statement_timeout = 0\"\n",
	"app/store_gen.go":       "package app\n\nconst g = \"SET lock_timeout = 0\"\n",
	".env":                   "DATABASE_URL=postgres://db/app?options=-c%20search_path%3Dtenant\n",
	"config/database.yml":    "production:\n  url: postgres://db/app?options=-c%20statement_timeout%3D5s\n",
	".hidden/x.sql":          "SET ROLE hidden;\n",
	"vendor/lib/y.sql":       "SET ROLE vendored;\n",
	"notes.txt":              "SET ROLE admin;\n",
	"README.md":              "Run `SET search_path TO app;` first.\n",
	"docs/schema.sql.orig":   "SET ROLE orig;\n",
	"scripts/setup.sh":       "psql -c 'SET ROLE admin'\n",
	"web/node_modules/z.sql": "SET ROLE nm;\n",
	".gitignore":             "generated/\n",
	"generated/out.sql":      "SET ROLE generated;\n",
}

// TestForceExcludeMatchesWalk checks that scanning every file of a tree by
// name with --force-exclude (what the pre-commit hook does with
// pre-commit run --all-files) reports exactly what scan . reports.
func TestForceExcludeMatchesWalk(t *testing.T) {
	dir := t.TempDir()
	var all []string
	for name, body := range hookTree {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		all = append(all, name)
	}
	slices.Sort(all)
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out) // git decides what .gitignore leaves out
	}
	t.Chdir(dir)
	findings := func(args ...string) []string {
		t.Helper()
		out, errOut, code := runCLI(t, "", append([]string{"scan", "--format", "json", "--fail-on", "never"}, args...)...)
		if code != ExitOK {
			t.Fatalf("scan %v: exit %d: %s", args, code, errOut)
		}
		var doc struct {
			Findings []struct {
				Rule, File string
				Line       int
			}
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range doc.Findings {
			got = append(got, filepath.ToSlash(filepath.Clean(f.File))+" "+f.Rule)
		}
		slices.Sort(got)
		return got
	}
	walked := findings(".")
	for _, want := range []string{"db/001.sql session-set", "db/002.psql listen", "db/003.pgsql advisory-lock-session",
		"web/App.tsx listen", "web/view.jsx session-set", "lib/jobs.ex listen", "app/store.go session-set",
		".env startup-parameter", "config/database.yml startup-parameter"} {
		if !slices.Contains(walked, want) {
			t.Errorf("scan . lacks %q: %v", want, walked)
		}
	}
	named := findings(append([]string{"--force-exclude"}, all...)...)
	if !slices.Equal(named, walked) {
		t.Errorf("--force-exclude with every file named:\n%v\nscan .:\n%v", named, walked)
	}
	// Without --force-exclude a named file is scanned as given.
	if got := findings("legacy/old.sql"); len(got) != 1 {
		t.Errorf("legacy/old.sql named without --force-exclude: %v", got)
	}
	// A hook run on files that are all left out scans nothing and passes.
	if _, errOut, code := runCLI(t, "", "scan", "--allow-empty", "--force-exclude", "notes.txt", "legacy/old.sql"); code != ExitOK {
		t.Errorf("only excluded files: exit %d: %s", code, errOut)
	}
}
