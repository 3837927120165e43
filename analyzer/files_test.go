package analyzer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// failingWalk is filepath.WalkDir with the listing of every directory
// named in locked failing with err, as os.ReadDir fails on a directory
// without read permission. It works as root too, where chmod 000 does not
// keep a directory from being read.
func failingWalk(err error, locked ...string) func(string, fs.WalkDirFunc) error {
	return func(root string, fn fs.WalkDirFunc) error {
		return filepath.WalkDir(root, func(path string, d fs.DirEntry, e error) error {
			if e != nil || d == nil || !d.IsDir() || !slices.Contains(locked, filepath.Base(path)) {
				return fn(path, d, e)
			}
			if r := fn(path, d, nil); r != nil {
				return r
			}
			r := fn(path, d, &fs.PathError{Op: "open", Path: path, Err: err})
			if r == nil {
				r = filepath.SkipDir // what WalkDir does after a failed listing
			}
			return r
		})
	}
}

// writeTree writes files (path relative to the returned root: content).
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
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

// TestCollectUnreadableDir checks that a directory the walk cannot list
// is an input with its error, that the walk goes on with the others, and
// that a directory excluded as a whole is neither entered nor reported.
func TestCollectUnreadableDir(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a/one.sql":         "SET work_mem = '1GB';",
		"locked/two.sql":    "LISTEN jobs;",
		"z/three.sql":       "SET ROLE admin;",
		"old/locked/x.sql":  "LISTEN x;",
		"old/kept/four.sql": "SELECT 1;",
	})
	for _, tt := range []struct {
		name     string
		excluded func(string) bool
		want     []string // names relative to root; "!" marks an unreadable one
	}{
		{"all", nil, []string{"a/one.sql", "!locked", "old/kept/four.sql", "!old/locked", "z/three.sql"}},
		{"excluded", func(dir string) bool { return strings.HasSuffix(filepath.ToSlash(dir), "/old") }, []string{"a/one.sql", "!locked", "z/three.sql"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Collect([]string{root}, Walk{WalkDir: failingWalk(fs.ErrPermission, "locked"), Excluded: tt.excluded})
			if err != nil {
				t.Fatalf("Collect: %v", err)
			}
			var got []string
			for _, f := range in {
				rel, _ := filepath.Rel(root, f.Name)
				rel = filepath.ToSlash(rel)
				if f.Err != nil {
					if !errors.Is(f.Err, fs.ErrPermission) {
						t.Errorf("%s: Err = %v", rel, f.Err)
					}
					rel = "!" + rel
				}
				got = append(got, rel)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("inputs = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestScanUnreadable checks that inputs that cannot be read (a directory
// the walk could not list, a path that cannot be read as a file) are
// listed as skipped and unreadable with their reason, and that the other
// files are scanned.
func TestScanUnreadable(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a/one.sql":      "SET work_mem = '1GB';\n",
		"locked/two.sql": "LISTEN jobs;\n",
		"z/three.sql":    "SET ROLE admin;\n",
	})
	in, err := Collect([]string{root}, Walk{WalkDir: failingWalk(fs.ErrPermission, "locked")})
	if err != nil {
		t.Fatal(err)
	}
	// os.ReadFile fails on a directory whoever runs the test.
	in = append(in, Input{Name: filepath.Join(root, "a")})
	rep, err := (&Config{Workers: 2}).Scan(in)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	var rules []string
	for _, f := range rep.Findings {
		rules = append(rules, f.Rule)
	}
	if !slices.Equal(rules, []string{"session-set", "session-role"}) {
		t.Errorf("findings %v, want the session-set of a/one.sql and the session-role of z/three.sql", rules)
	}
	if rep.Summary.Files != 2 {
		t.Errorf("files scanned = %d, want 2", rep.Summary.Files)
	}
	bad := rep.Summary.Unreadable()
	want := map[string]string{
		filepath.Join(root, "a"):      "unreadable file: ",
		filepath.Join(root, "locked"): "unreadable directory: permission denied",
	}
	if len(bad) != len(want) {
		t.Fatalf("unreadable = %+v, want %d", bad, len(want))
	}
	for _, sk := range bad {
		if w, ok := want[sk.File]; !ok || !strings.HasPrefix(sk.Reason, w) {
			t.Errorf("unreadable %s: %q, want a reason starting %q", sk.File, sk.Reason, w)
		}
		if strings.Contains(sk.Reason, root) {
			t.Errorf("reason %q repeats the path", sk.Reason)
		}
	}
}

// TestGoTestTxHelpers checks that SQL sent on a transaction handed out by
// a test helper of another file (it begins the transaction, rolls it back
// in t.Cleanup and returns it) is checked as rolled back, while SQL on a
// transaction the caller commits is not.
func TestGoTestTxHelpers(t *testing.T) {
	root := writeTree(t, map[string]string{
		"dbtest/dbtest.go": `package dbtest

func TestTx(ctx context.Context, tb testing.TB, pool *pgxpool.Pool) (pgx.Tx, string) {
	tb.Helper()
	tx, err := pool.Begin(ctx)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = tx.Rollback(context.WithoutCancel(ctx)) })
	return tx, "schema_1"
}
`,
		"store/store_test.go": `package store

func TestInsert(t *testing.T) {
	tx, schema := dbtest.TestTx(ctx, t, pool)
	_, err := tx.Exec(ctx, "SET search_path TO '"+schema+"'")
	require.NoError(t, err)
}

func TestCommitted(t *testing.T) {
	tx, _ := dbtest.TestTx(ctx, t, pool)
	tx.Exec(ctx, "SET search_path TO other")
	tx.Commit(ctx)
}
`,
	})
	in, err := Collect([]string{root}, Walk{Wants: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := (&Config{}).Scan(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		got = append(got, filepath.Base(f.File)+":"+strconv.Itoa(f.Line)+" "+f.Rule)
	}
	if want := []string{"store_test.go:11 session-set"}; !slices.Equal(got, want) {
		t.Errorf("findings %v, want %v", got, want)
	}
}
