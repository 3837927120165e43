package install

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
)

// releaseArchive is a release archive as release.yml makes it: the
// directory NAME holding the binary, tarred and gzipped.
func releaseArchive(t *testing.T, name, bin string) []byte {
	t.Helper()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range []*tar.Header{
		{Name: name + "/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: name + "/pgpoolcheck", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(data))},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestActionInstall runs the action's Install step against a stand-in for
// the GitHub releases of pgpoolcheck, with a stand-in gh that records how
// it is called: the archive named as release.yml names it is downloaded,
// checked against its SHA-256 sum and its attestation, and unpacked; a
// sum that does not match, a ref that is no release tag and an unknown
// platform fail the step.
func TestActionInstall(t *testing.T) {
	bin := dockerBuild(t)
	install := actionSteps(t)["Install pgpoolcheck"]
	if install.Run == "" {
		t.Fatal("the action has no Install pgpoolcheck step")
	}
	const releases = "https://github.com/pgpoolcheck/pgpoolcheck/releases/download"
	if got := install.Env["PGPOOLCHECK_RELEASES"]; got != releases {
		t.Errorf("the action downloads from %q, want %q", got, releases)
	}
	release, err := os.ReadFile(filepath.Join(root(t), ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(release), "TARGET: pgpoolcheck_${{ github.ref_name }}_${{ matrix.goos }}_${{ matrix.goarch }}") {
		t.Error("release.yml no longer names its archives pgpoolcheck_TAG_GOOS_GOARCH, as the action expects")
	}

	const version = "v9.8.7"
	name := "pgpoolcheck_" + version + "_linux_amd64"
	archive := releaseArchive(t, name, bin)
	sum := sha256.Sum256(archive)
	sums := map[string]string{
		"good": hex.EncodeToString(sum[:]) + "  " + name + ".tar.gz\n",
		"bad":  strings.Repeat("0", 64) + "  " + name + ".tar.gz\n",
	}
	var which string // the sum the server hands out
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/" + version + "/" + name + ".tar.gz":
			w.Write(archive)
		case "/" + version + "/" + name + ".tar.gz.sha256":
			fmt.Fprint(w, sums[which])
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	// gh: records its arguments.
	ghDir := t.TempDir()
	ghLog := filepath.Join(ghDir, "calls")
	if err := os.WriteFile(filepath.Join(ghDir, "gh"), []byte("#!/bin/sh\necho \"$@\" >> "+ghLog+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(sumKind, ref, versionInput, arch string) (string, string, int) {
		which = sumKind
		os.Remove(ghLog)
		runner := t.TempDir()
		_, stdout, code := runStep(t, install, map[string]string{
			"PGPOOLCHECK_VERSION": versionInput, "ACTION_REF": ref,
			"PGPOOLCHECK_VERIFY_ATTESTATION": "true", "PGPOOLCHECK_RELEASES": srv.URL,
			"GH_TOKEN": "token", "RUNNER_TEMP": runner, "RUNNER_OS": "Linux", "RUNNER_ARCH": arch,
			"PATH": ghDir + ":" + os.Getenv("PATH"),
		})
		return runner, stdout, code
	}

	runner, stdout, code := run("good", version, "", "X64")
	if code != 0 || !strings.Contains(stdout, "pgpoolcheck "+buildVersion) {
		t.Fatalf("install at %s: exit %d, stdout %q", version, code, stdout)
	}
	if _, err := os.Stat(filepath.Join(runner, "pgpoolcheck")); err != nil {
		t.Errorf("no binary in RUNNER_TEMP: %v", err)
	}
	if calls, _ := os.ReadFile(ghLog); string(calls) != "attestation verify "+name+".tar.gz --repo pgpoolcheck/pgpoolcheck\n" {
		t.Errorf("gh called as %q", calls)
	}
	// The version input wins over the ref (a commit SHA here).
	if _, _, code := run("good", "0123456789abcdef0123456789abcdef01234567", version, "X64"); code != 0 {
		t.Errorf("version input with a SHA ref: exit %d", code)
	}
	for _, tc := range []struct{ name, sum, ref, arch string }{
		{"sum does not match", "bad", version, "X64"},
		{"ref main", "good", "main", "X64"},
		{"unknown platform", "good", version, "RISCV64"},
		{"no such release", "good", "v0.0.1", "X64"},
	} {
		if _, _, code := run(tc.sum, tc.ref, "", tc.arch); code == 0 {
			t.Errorf("%s: the step passed", tc.name)
		}
	}
}

// TestActionScan runs the action's Scan and Verdict steps with the
// binary the Install step puts in RUNNER_TEMP.
func TestActionScan(t *testing.T) {
	bin := dockerBuild(t)
	steps := actionSteps(t)
	scan, verdict, upload := steps["Scan"], steps["Verdict"], steps["Upload to code scanning"]
	if scan.Run == "" || verdict.Run == "" || !strings.HasPrefix(upload.Uses, "github/codeql-action/upload-sarif@") {
		t.Fatalf("steps Scan, Upload to code scanning and Verdict missing: %v", steps)
	}
	if upload.If != "steps.scan.outputs.sarif-file != ''" {
		t.Errorf("the upload runs if %q; want it to run when Scan chose SARIF", upload.If)
	}
	runner := filepath.Dir(bin)
	// many.sql has more errors than GitHub shows as annotations.
	many := filepath.Join(t.TempDir(), "many.sql")
	if err := os.WriteFile(many, []byte(strings.Repeat("LISTEN jobs;\n", 12)), 0o644); err != nil {
		t.Fatal(err)
	}
	// A capture with a session SET that crossed a transaction.
	capPath := filepath.Join(t.TempDir(), "staging.jsonl")
	w, err := capture.Create(capPath, capture.Header{Mode: "record"}, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := w.StartSession(capture.SessionInfo{User: "u"})
	for _, q := range []string{"SET search_path = app", "SELECT 1"} {
		s.Frontend('Q', append([]byte(q), 0), len(q)+1)
		s.Backend('C', []byte("SELECT 1\x00"))
		s.Backend('Z', []byte{'I'})
	}
	s.End("done")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	type inputs struct{ paths, captures, sarif, failOn, target string }
	env := func(in inputs) map[string]string {
		return map[string]string{"RUNNER_TEMP": runner, "PGPOOLCHECK_PATHS": in.paths, "PGPOOLCHECK_CAPTURES": in.captures,
			"PGPOOLCHECK_TARGET": in.target, "PGPOOLCHECK_FAIL_ON": in.failOn, "PGPOOLCHECK_BASELINE": "", "PGPOOLCHECK_SARIF": in.sarif}
	}
	tests := []struct {
		name     string
		in       inputs
		code     int    // of the Scan step
		status   string // its status output
		sarif    bool   // chose SARIF
		stdout   string // in its output
		noStdout string // not in its output
	}{
		{"sarif true", inputs{"hazards.sql clean.sql", "", "true", "error", "pgbouncer"}, 0, "1", true, "hazards.sql:1: error: ", "::error "},
		{"sarif false", inputs{"hazards.sql clean.sql", "", "false", "never", "pgbouncer"}, 0, "0", false, "::error file=hazards.sql,line=1", ""},
		{"auto, few findings: annotations", inputs{"hazards.sql", "", "auto", "error", "pgbouncer"}, 0, "1", false, "::error file=hazards.sql", "::notice::"},
		{"auto, more than 10 errors: SARIF", inputs{many, "", "auto", "error", "pgbouncer"}, 0, "1", true, "::notice::pgpoolcheck: 12 findings", "::error "},
		{"sarif false, more than 10 errors", inputs{many, "", "false", "error", "pgbouncer"}, 0, "1", false, "::error ", "::notice::"},
		{"captures: gate", inputs{"clean.sql", capPath, "auto", "error", "pgbouncer"}, 0, "1", false, "::error file=" + capPath, ""},
		{"captures, fail-on never: ready", inputs{"clean.sql", capPath, "auto", "never", "pgbouncer"}, 0, "0", false, "", "::error"},
		{"bad target", inputs{"hazards.sql", "", "auto", "error", "no-such-pooler"}, 2, "", false, "", ""},
		{"bad sarif", inputs{"hazards.sql", "", "yes", "error", "pgbouncer"}, 2, "", false, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stdout, code := runStep(t, scan, env(tc.in))
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q", code, tc.code, stdout)
			}
			if code != 0 {
				return
			}
			if out["status"] != tc.status {
				t.Errorf("status %q, want %q", out["status"], tc.status)
			}
			if got := out["sarif-file"] != ""; got != tc.sarif {
				t.Errorf("SARIF chosen: %v, want %v (outputs %v)", got, tc.sarif, out)
			}
			if tc.stdout != "" && !strings.Contains(stdout, tc.stdout) {
				t.Errorf("output lacks %q:\n%s", tc.stdout, stdout)
			}
			if tc.noStdout != "" && strings.Contains(stdout, tc.noStdout) {
				t.Errorf("output has %q:\n%s", tc.noStdout, stdout)
			}
			if tc.sarif {
				var log struct {
					Version string `json:"version"`
					Runs    []struct {
						Results []json.RawMessage `json:"results"`
					} `json:"runs"`
				}
				data, err := os.ReadFile(out["sarif-file"])
				if err != nil || json.Unmarshal(data, &log) != nil || log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) == 0 {
					t.Fatalf("SARIF file %s: %v, %.200s", out["sarif-file"], err, data)
				}
			}
			want := 0
			if tc.status == "1" {
				want = 1
			}
			if _, _, code := runStep(t, verdict, map[string]string{"STATUS": out["status"]}); code != want {
				t.Errorf("verdict step: exit %d, want %d", code, want)
			}
		})
	}
}
