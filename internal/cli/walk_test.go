package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLanguageOf checks which files directory walks pick up, and as what:
// configuration files are "config" (read for connection strings only),
// except pgpoolcheck's own.
func TestLanguageOf(t *testing.T) {
	for path, want := range map[string]string{
		"db/001.sql":                 "sql",
		"app/Repo.java":              "java",
		"web/api.tsx":                "typescript",
		".env":                       "config",
		"deploy/.env.production":     "config",
		"src/application.properties": "config",
		"config/database.yml":        "config",
		"k8s/deploy.yaml":            "config",
		"Api/appsettings.json":       "config",
		".pgpoolcheck.yaml":          "",
		"sub/.pgpoolcheck.yml":       "",
		"package.json":               "",
		"notes.txt":                  "",
	} {
		if got := languageOf(path); got != want {
			t.Errorf("languageOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// lockedWalk is filepath.WalkDir with the listing of each directory named
// locked failing as os.ReadDir fails without read permission. It fails the
// same way as root, where chmod 000 does not keep a directory from being
// read.
func lockedWalk(locked string) func(string, fs.WalkDirFunc) error {
	return func(root string, fn fs.WalkDirFunc) error {
		return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d == nil || !d.IsDir() || d.Name() != locked {
				return fn(path, d, err)
			}
			if r := fn(path, d, nil); r != nil {
				return r
			}
			if r := fn(path, d, &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}); r != nil {
				return r
			}
			return filepath.SkipDir
		})
	}
}

// unreadableTree writes a tree with a finding before and after the
// directory "locked" (which holds one of its own).
func unreadableTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range map[string]string{
		"a/one.sql":      "SET ROLE admin;\n",
		"locked/two.sql": "LISTEN jobs;\n",
		"z/three.go":     "package z\n\nconst q = \"SELECT pg_advisory_lock(1)\"\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// checkUnreadableScan runs scan over root in every format with e's walk
// and checks that the other files are scanned, that json and sarif are
// valid documents naming the unreadable directory, and that the exit code
// is 2 with one line on standard error saying why.
func checkUnreadableScan(t *testing.T, root string, walk func(string, fs.WalkDirFunc) error) {
	t.Helper()
	locked := filepath.Join(root, "locked")
	for _, format := range []string{"text", "json", "sarif", "github"} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"scan", "--no-config", "--format", format, root}, &env{
			stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
			getenv: func(string) string { return "" }, walkDir: walk,
		})
		if code != ExitError {
			t.Errorf("%s: exit %d, want %d", format, code, ExitError)
		}
		if !strings.Contains(errb.String(), locked+" could not be read (unreadable directory: permission denied)") {
			t.Errorf("%s: stderr %q does not name the unreadable directory", format, errb.String())
		}
		stdout := out.String()
		for _, rule := range []string{"session-role", "advisory-lock-session"} {
			if !strings.Contains(stdout, rule) {
				t.Errorf("%s: no %s finding: the files around the unreadable directory were not scanned", format, rule)
			}
		}
		if strings.Contains(stdout, "[listen]") || strings.Contains(stdout, `"rule": "listen"`) || strings.Contains(stdout, `"ruleId": "listen"`) {
			t.Errorf("%s: a finding from inside the unreadable directory", format)
		}
		switch format {
		case "json":
			var doc struct {
				Summary struct {
					Files   int
					Skipped []struct {
						File, Reason string
						Unreadable   bool
					}
				}
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("json: not a valid document: %v\n%s", err, stdout)
			}
			if doc.Summary.Files != 2 || len(doc.Summary.Skipped) != 1 || doc.Summary.Skipped[0].File != locked || !doc.Summary.Skipped[0].Unreadable {
				t.Errorf("json summary: %+v", doc.Summary)
			}
		case "sarif":
			var doc struct {
				Runs []struct {
					Results     []json.RawMessage
					Invocations []struct {
						ExecutionSuccessful        bool
						ToolExecutionNotifications []struct {
							Level   string
							Message struct{ Text string }
						}
					}
				}
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("sarif: not a valid document: %v\n%s", err, stdout)
			}
			if len(doc.Runs) != 1 || len(doc.Runs[0].Results) != 2 || len(doc.Runs[0].Invocations) != 1 {
				t.Fatalf("sarif: %+v", doc.Runs)
			}
			inv := doc.Runs[0].Invocations[0]
			if inv.ExecutionSuccessful || len(inv.ToolExecutionNotifications) != 1 ||
				inv.ToolExecutionNotifications[0].Level != "error" || !strings.Contains(inv.ToolExecutionNotifications[0].Message.Text, locked) {
				t.Errorf("sarif invocation: %+v", inv)
			}
		case "text":
			if !strings.Contains(stdout, "  "+locked+": unreadable directory: permission denied") {
				t.Errorf("text: the summary does not list the unreadable directory:\n%s", stdout)
			}
		}
	}
}

// TestScanUnreadableDir checks a directory that cannot be listed, put in
// through the walk (so the test means the same as root).
func TestScanUnreadableDir(t *testing.T) {
	checkUnreadableScan(t, unreadableTree(t), lockedWalk("locked"))
}

// TestScanUnreadableDirChmod checks the same with a real chmod 000
// directory. Where chmod does not keep a directory from being read (root),
// the directory is readable and the scan must say nothing about it; the
// unreadable case is then covered by TestScanUnreadableDir alone.
func TestScanUnreadableDirChmod(t *testing.T) {
	root := unreadableTree(t)
	locked := filepath.Join(root, "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	if _, err := os.ReadDir(locked); err != nil {
		checkUnreadableScan(t, root, nil)
		return
	}
	t.Logf("chmod 000 does not block reading here (euid %d): checking that the readable directory is scanned", os.Geteuid())
	out, errOut, code := runCLI(t, "", "scan", "--no-config", "--format", "json", root)
	if code != ExitFindings || errOut != "" || !strings.Contains(out, `"listen"`) {
		t.Errorf("exit %d, stderr %q, listen finding: %v", code, errOut, strings.Contains(out, `"listen"`))
	}
}
