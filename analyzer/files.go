package analyzer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
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

// Collect expands paths into inputs: files are taken as they are,
// directories are walked for SQL files (hidden directories, vendor and
// node_modules skipped). The order is deterministic.
func Collect(paths []string) ([]Input, error) {
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
			ext := strings.ToLower(filepath.Ext(path))
			for _, e := range SQLExtensions {
				if ext == e && d.Type().IsRegular() {
					out = append(out, Input{Name: asGiven(p, path)})
					break
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
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
	rep.Findings = Sort(rep.Findings)
	rep.Summary.Count(rep.Findings)
	return rep, nil
}
