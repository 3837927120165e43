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
	"unicode/utf8"

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
	// Err is set for a path that a directory walk could not read (a
	// directory it could not list): the input is not scanned, and it is
	// listed as skipped and unreadable.
	Err error
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
	// Excluded reports whether a directory (path as it will be reported)
	// is excluded as a whole: it is not entered, and not reported when it
	// cannot be read. nil excludes none.
	Excluded func(dir string) bool
	// Named, when set, also selects the files named directly (not found
	// by walking): a file for which it returns false is not taken. nil
	// takes every file named. Named files are then subject to Gitignore
	// too.
	Named func(path string) bool
	// WalkDir walks a directory; nil is filepath.WalkDir. Tests put a
	// file system's errors in through it.
	WalkDir func(root string, fn fs.WalkDirFunc) error
	// Warn, when set, is told when Gitignore cannot be honoured for a
	// directory inside a git work tree (git missing, or refusing the
	// repository), so that the walk does not silently take ignored files.
	Warn func(msg string)
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
// skipped) for the files w wants. The order is deterministic. A path
// given that does not exist is an error; a directory below it that cannot
// be read is an input with Err set, and the walk goes on.
func Collect(paths []string, w Walk) ([]Input, error) {
	wants := w.Wants
	if wants == nil {
		wants = IsSQLFile
	}
	walkDir := w.WalkDir
	if walkDir == nil {
		walkDir = filepath.WalkDir
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
			if w.Named == nil {
				out = append(out, Input{Name: p})
				continue
			}
			if w.Named(p) && !inSkippedDir(p) {
				keep := []Input{{Name: p}}
				if w.Gitignore {
					keep = dropGitIgnored(filepath.Dir(p), keep, w.Warn)
				}
				out = append(out, keep...)
			}
			continue
		}
		var found []Input
		err = walkDir(p, func(path string, d fs.DirEntry, err error) error {
			name := p
			if path != p {
				name = asGiven(p, path)
			}
			if err != nil {
				// The directory at path (or an entry of it) cannot be
				// read: its files are not scanned, and it says why.
				if w.Excluded == nil || !w.Excluded(name) {
					found = append(found, Input{Name: name, Err: err})
				}
				if d != nil && d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				base := d.Name()
				if path != p && (strings.HasPrefix(base, ".") || skipDirs[base]) {
					return filepath.SkipDir
				}
				if path != p && w.Excluded != nil && w.Excluded(name) {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && wants(name) {
				found = append(found, Input{Name: name})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if w.Gitignore {
			found = dropGitIgnored(p, found, w.Warn)
		}
		out = append(out, found...)
	}
	return out, nil
}

// inSkippedDir reports whether a relative path lies below a directory that
// walks skip (hidden, vendor, node_modules).
func inSkippedDir(p string) bool {
	if filepath.IsAbs(p) {
		return false // the walk skips them only below the path given
	}
	parts := strings.Split(filepath.ToSlash(filepath.Clean(p)), "/")
	for _, d := range parts[:len(parts)-1] {
		if d != "." && d != ".." && (strings.HasPrefix(d, ".") || skipDirs[d]) {
			return true
		}
	}
	return false
}

// dropGitIgnored removes the inputs git ignores under dir. Outside a git
// work tree, or without git, nothing is removed; inside one, warn (when
// set) says why.
func dropGitIgnored(dir string, in []Input, warn func(string)) []Input {
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
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		// Not a work tree, or no git: only the second is worth a word.
		if warn != nil && inWorkTree(dir) {
			why := err.Error()
			if errors.Is(err, exec.ErrNotFound) {
				why = "git is not installed"
			} else if line, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n"); line != "" {
				why = "git check-ignore: " + line
			}
			warn(fmt.Sprintf("%s: .gitignore is not honoured (%s); ignored files are scanned", dir, why))
		}
		return in
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

// inWorkTree reports whether dir or a parent holds a .git (a directory,
// or the file of a worktree or submodule).
func inWorkTree(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		if _, err := os.Stat(filepath.Join(abs, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return false
		}
		abs = parent
	}
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
// For text that is not UTF-8 it also returns the offset of the first byte
// that is not part of a UTF-8 character; otherwise bad is -1.
func notText(data []byte) (why string, bad int) {
	head := data[:min(len(data), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return "binary file", -1
	}
	if utf8.Valid(data) {
		return "", -1
	}
	bad = firstInvalidUTF8(data)
	line, col := lineColumn(data, bad)
	return fmt.Sprintf("not UTF-8 text (first invalid byte 0x%02X at line %d, column %d, byte offset %d)", data[bad], line, col, bad), bad
}

// firstInvalidUTF8 returns the offset of the first byte of data that does
// not start a valid UTF-8 encoding, or -1 when data is valid UTF-8.
func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// lineColumn returns the 1-based line and column (in characters, an
// invalid byte counting as one) of byte offset off of data.
func lineColumn(data []byte, off int) (line, col int) {
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	line = bytes.Count(data[:start], []byte{'\n'}) + 1
	return line, utf8.RuneCount(data[start:off]) + 1
}

// encodingFindings report a file that is not UTF-8 at its first invalid
// byte bad, as invalid-encoding words it. The source line is shown with
// invalid bytes replaced, so the caret falls under the first of them.
func encodingFindings(name string, data []byte, bad int) []Finding {
	line, col := lineColumn(data, bad)
	start := bytes.LastIndexByte(data[:bad], '\n') + 1
	end := len(data)
	if i := bytes.IndexByte(data[bad:], '\n'); i >= 0 {
		end = bad + i
	}
	src := strings.TrimRight(strings.ToValidUTF8(string(data[start:end]), "\uFFFD"), "\r")
	var fs []Finding
	for _, sf := range rules.InvalidEncoding.CheckScan(&rules.ScanEvent{Kind: rules.NotUTF8, Byte: data[bad], Offset: bad}) {
		fs = append(fs, Finding{
			Rule:     sf.Rule.ID,
			Severity: sf.Severity,
			File:     name,
			Line:     line, Column: col, EndLine: line, EndColumn: col + 1,
			Message:    sf.Message,
			Fix:        sf.Fix,
			SourceLine: src,
			stmtLine:   line,
		})
	}
	return fs
}

// Scan analyzes the inputs, files in parallel, and returns the report,
// its findings sorted. Unreadable inputs are skipped and listed as
// unreadable; binary and non-UTF-8 files are skipped and listed in the summary (and a non-UTF-8 file is an
// invalid-encoding finding while that rule is enabled). Stream does the
// same without holding every finding.
func (c *Config) Scan(inputs []Input) (*Report, error) {
	rep := &Report{Tool: "pgpoolcheck", Target: c.target(), Findings: []Finding{}}
	sum, err := c.Stream(inputs, func(fr FileResult) error {
		rep.Findings = append(rep.Findings, fr.Findings...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.Summary = sum
	rep.Summary.Count(rep.Findings)
	return rep, nil
}
