package analyzer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// SQLExtensions are the file extensions scanned inside directories.
var SQLExtensions = []string{".sql", ".psql", ".pgsql"}

// skipDirs are directories never entered when walking.
var skipDirs = map[string]bool{"vendor": true, "node_modules": true}

// Input is one source to scan.
type Input struct {
	// Name is the path as reported.
	Name string
	// Data is the content when already read (stdin); otherwise the file
	// at Name is read.
	Data []byte
}

// ErrNotFound is returned for a path that does not exist.
var ErrNotFound = errors.New("no such file or directory")

// Walk says which files a directory walk picks up.
type Walk struct {
	// Wants reports whether a file (path as it will be reported) is taken;
	// nil takes the SQL files.
	Wants func(path string) bool
	// Gitignore drops files that git ignores when the directory is inside
	// a git work tree (asks git itself, so nested .gitignore files, global
	// excludes and tracked-but-matching files behave exactly as in git).
	Gitignore bool
}

// IsSQLFile reports whether path has one of SQLExtensions.
func IsSQLFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range SQLExtensions {
		if ext == e {
			return true
		}
	}
	return false
}

// Collect expands paths into inputs: files are taken as they are,
// directories are walked (hidden directories, vendor and node_modules
// skipped) for the files w wants. The order is deterministic.
func Collect(paths []string, w Walk) ([]Input, error) {
	wants := w.Wants
	if wants == nil {
		wants = IsSQLFile
	}
	var out []Input
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s: %w", p, ErrNotFound)
			}
			return nil, err
		}
		if !info.IsDir() {
			out = append(out, Input{Name: p})
			continue
		}
		var found []Input
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				name := d.Name()
				if path != p && (strings.HasPrefix(name, ".") || skipDirs[name]) {
					return filepath.SkipDir
				}
				return nil
			}
			name := asGiven(p, path)
			if d.Type().IsRegular() && wants(name) {
				found = append(found, Input{Name: name})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if w.Gitignore {
			found = dropGitIgnored(p, found)
		}
		out = append(out, found...)
	}
	return out, nil
}

// dropGitIgnored removes the inputs git ignores under dir. Outside a git
// work tree, or without git, nothing is removed.
func dropGitIgnored(dir string, in []Input) []Input {
	if len(in) == 0 {
		return in
	}
	var stdin bytes.Buffer
	for _, f := range in {
		abs, err := filepath.Abs(f.Name)
		if err != nil {
			return in
		}
		stdin.WriteString(abs)
		stdin.WriteByte(0)
	}
	cmd := exec.Command("git", "-C", dir, "check-ignore", "-z", "--stdin")
	cmd.Stdin = &stdin
	outb, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return in // not a work tree, or no git
	}
	ignored := map[string]bool{}
	for _, p := range bytes.Split(outb, []byte{0}) {
		if len(p) > 0 {
			ignored[string(p)] = true
		}
	}
	kept := in[:0]
	for _, f := range in {
		abs, _ := filepath.Abs(f.Name)
		if !ignored[abs] {
			kept = append(kept, f)
		}
	}
	return kept
}

// asGiven rebuilds path, found by walking root, with root spelled as the
// user gave it ("./db" stays "./db/…", which filepath.Join would clean).
func asGiven(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	if strings.HasSuffix(root, string(filepath.Separator)) {
		return root + rel
	}
	return root + string(filepath.Separator) + rel
}

// ReadStdin reads a whole stream as one input.
func ReadStdin(r io.Reader, name string) (Input, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return Input{}, fmt.Errorf("reading standard input: %w", err)
	}
	if name == "" {
		name = "<stdin>"
	}
	return Input{Name: name, Data: b}, nil
}

// notText says why data is not scanned as SQL text, or "" when it is.
func notText(data []byte) string {
	head := data[:min(len(data), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return "binary file"
	}
	if !utf8.Valid(data) {
		return "not UTF-8 text"
	}
	return ""
}

// Scan analyzes the inputs, files in parallel, and returns the report.
// Unreadable files are an error; binary and non-UTF-8 files are skipped
// and listed in the summary.
func (c *Config) Scan(inputs []Input) (*Report, error) {
	type result struct {
		res  Result
		skip string
		err  error
	}
	results := make([]result, len(inputs))
	sem := make(chan struct{}, c.workers())
	var wg sync.WaitGroup
	for i, in := range inputs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			data := in.Data
			if data == nil {
				b, err := os.ReadFile(in.Name)
				if err != nil {
					results[i].err = err
					return
				}
				data = b
			}
			if why := notText(data); why != "" {
				results[i].skip = why
				return
			}
			if lang, ok := extract.LanguageFor(in.Name); ok && !IsSQLFile(in.Name) {
				res, err := c.AnalyzeCode(in.Name, data, lang)
				if err != nil {
					results[i].skip = err.Error()
					return
				}
				results[i].res = res
				return
			}
			results[i].res = c.AnalyzeSource(in.Name, data)
		}()
	}
	wg.Wait()
	rep := &Report{Tool: "pgpoolcheck", Target: c.target(), Findings: []Finding{}}
	for i, r := range results {
		switch {
		case r.err != nil:
			return nil, r.err
		case r.skip != "":
			rep.Summary.Skipped = append(rep.Summary.Skipped, Skipped{File: inputs[i].Name, Reason: r.skip})
		default:
			rep.Summary.Files++
			rep.Summary.Statements += r.res.Statements
			rep.Summary.Suppressed += r.res.Suppressed
			rep.Findings = append(rep.Findings, r.res.Findings...)
		}
	}
	for i := range rep.Findings {
		if sev, ok := c.Severity[rep.Findings[i].Rule]; ok {
			rep.Findings[i].Severity = sev
			rep.Findings[i].Security = sev == rules.Critical
		}
	}
	rep.Findings = Sort(rep.Findings)
	rep.Summary.Count(rep.Findings)
	return rep, nil
}
