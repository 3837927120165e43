package analyzer

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// FileResult is what Stream delivers for one file: its findings, sorted,
// with the configured severities applied. A file named by several inputs
// (the same path given twice) is delivered once, its findings merged.
type FileResult struct {
	File     string
	Findings []Finding
	// Inputs is the number of inputs this result stands for (1 unless a
	// path was given more than once).
	Inputs int
}

// inputResult is the outcome of one input.
type inputResult struct {
	res  Result
	skip string
	// unreadable says the input was skipped because it could not be read.
	unreadable bool
	err        error
}

// aheadPerWorker bounds how many inputs are analyzed ahead of the one
// Stream delivers next, per worker: those results wait in memory (their
// findings only: parse trees and file contents are dropped as soon as a
// file's findings are made).
const aheadPerWorker = 4

// Stream analyzes the inputs on the workers and calls emit once per file,
// in the order of the file names, which is the order of Sort: emitting the
// findings of each call one after the other gives exactly the findings of
// Scan. A file's statements, parse trees and contents are released once its
// findings are made, and at most a few inputs per worker are analyzed
// ahead of the one emit waits for, so memory does not grow with the number
// of files. Files without findings are delivered too (for progress).
// Before the first file, a pre-pass learns the routines the inputs create,
// so that calls of them are reported wherever they are (calls.go).
//
// It returns the summary without finding counts (Summary.Count of every
// finding emitted fills them): files and statements scanned, findings
// suppressed by ignore directives, and the skipped inputs in input order.
// An input that cannot be read (a file, or a directory the walk could not
// list) is skipped and listed with Unreadable set; the scan goes on. An
// error from emit stops the scan and is returned; emit is then not called
// again.
func (c *Config) Stream(inputs []Input, emit func(FileResult) error) (Summary, error) {
	if h := testHelpers(inputs); len(h) > 0 {
		cc := *c
		cc.testHelpers = h
		c = &cc
	}
	order := make([]int, len(inputs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(inputs[a].Name, inputs[b].Name) })
	if !c.prepass && c.calls == nil {
		cc := *c
		cc.calls = cc.routines(inputs, order)
		c = &cc
	}

	type job struct {
		input int
		done  chan inputResult
	}
	workers := c.workers()
	pending := make(chan job, workers*aheadPerWorker)
	work := make(chan job)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		defer close(pending)
		defer close(work)
		for _, i := range order {
			j := job{input: i, done: make(chan inputResult, 1)}
			select {
			case pending <- j:
			case <-quit:
				return
			}
			select {
			case work <- j:
			case <-quit:
				return
			}
		}
	}()
	for range workers {
		go func() {
			for j := range work {
				j.done <- c.analyzeInput(inputs[j.input])
			}
		}()
	}

	var sum Summary
	var skipped []int // inputs skipped, by index
	reasons := map[int]string{}
	unreadable := map[int]bool{}
	var cur FileResult
	flush := func() error {
		if cur.Inputs == 0 {
			return nil
		}
		if cur.Inputs > 1 {
			cur.Findings = Sort(cur.Findings)
		}
		fr := cur
		cur = FileResult{}
		return emit(fr)
	}
	for j := range pending {
		r := <-j.done
		if r.err != nil {
			return Summary{}, r.err
		}
		name := inputs[j.input].Name
		if cur.Inputs > 0 && cur.File != name {
			if err := flush(); err != nil {
				return Summary{}, err
			}
		}
		cur.File = name
		cur.Inputs++
		if r.skip != "" {
			skipped = append(skipped, j.input)
			reasons[j.input] = r.skip
			if r.unreadable {
				unreadable[j.input] = true
			}
		} else {
			sum.Files++
			sum.Statements += r.res.Statements
			sum.Suppressed += r.res.Suppressed
		}
		cur.Findings = append(cur.Findings, r.res.Findings...)
	}
	if err := flush(); err != nil {
		return Summary{}, err
	}
	slices.Sort(skipped)
	for _, i := range skipped {
		sum.Skipped = append(sum.Skipped, Skipped{File: inputs[i].Name, Reason: reasons[i], Unreadable: unreadable[i]})
	}
	return sum, nil
}

// testHelpers returns the Rust test helpers of the inputs
// (extract.TestTransactionHelpers): the Rust files are read once before
// the scan, and only the names are kept.
func testHelpers(inputs []Input) map[string]bool {
	var h map[string]bool
	for _, in := range inputs {
		lang, ok := extract.LanguageFor(in.Name)
		if !ok || lang != extract.Rust && !(lang == extract.Go && strings.Contains(strings.ToLower(in.Name), "test")) {
			continue // Go helpers live in test code (a _test.go file, a …test package)
		}
		data := in.Data
		if data == nil {
			if in.Err != nil {
				continue // reported by the scan itself
			}
			b, err := os.ReadFile(in.Name)
			if err != nil {
				continue // reported by the scan itself
			}
			data = b
		}
		for _, name := range extract.TestTransactionHelpers(lang, data) {
			if h == nil {
				h = map[string]bool{}
			}
			h[name] = true
		}
	}
	return h
}

// analyzeInput reads and analyzes one input. Its findings come sorted,
// with the configured severities; nothing of the file but its findings is
// kept.
func (c *Config) analyzeInput(in Input) inputResult {
	if in.Err != nil {
		return inputResult{skip: unreadableReason("directory", in.Err), unreadable: true}
	}
	data := in.Data
	if data == nil {
		b, err := os.ReadFile(in.Name)
		if err != nil {
			return inputResult{skip: unreadableReason("file", err), unreadable: true}
		}
		data = b
	}
	var r inputResult
	if why, bad := notText(data); why != "" {
		r.skip = why
		if bad >= 0 && c.enabled(rules.InvalidEncoding.ID) {
			r.res.Findings = encodingFindings(in.Name, data, bad)
		}
	} else if lang, ok := extract.LanguageFor(in.Name); ok && !IsSQLFile(in.Name) {
		res, err := c.AnalyzeCode(in.Name, data, lang)
		if err != nil {
			r.skip = err.Error()
		} else {
			r.res = res
		}
	} else if f, ok := extract.ConfigFormatFor(in.Name); ok && !IsSQLFile(in.Name) {
		r.res = c.AnalyzeConfig(in.Name, data, f)
	} else {
		r.res = c.AnalyzeSource(in.Name, data)
	}
	for i := range r.res.Findings {
		if sev, ok := c.Severity[r.res.Findings[i].Rule]; ok {
			r.res.Findings[i].Severity = sev
			r.res.Findings[i].Security = sev == rules.Critical
		}
	}
	r.res.Findings = Sort(r.res.Findings)
	return r
}

// unreadableReason says why an input of the kind given ("file",
// "directory") was not scanned, without repeating its path.
func unreadableReason(kind string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Sprintf("unreadable %s: %v", kind, err)
}
