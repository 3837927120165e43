package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
)

// Stream renders a report whose findings arrive in batches, in order (a
// scan's files one after the other), writing each batch as it comes:
// nothing but the counts of the findings is kept. The bytes written are
// exactly what Write renders for the report holding every finding and the
// summary given to Close.
type Stream struct {
	w      io.Writer
	format string
	rep    analyzer.Report // Tool, Version and Target; no findings
	pal    *palette
	index  map[string]int // sarif: rule index

	buf     bytes.Buffer
	started bool // the head is written
	head    []byte
	array   arrayShape
	n       int // findings written
	counts  analyzer.Summary
}

// arrayShape is where the list of findings sits in a json or sarif
// document: its key and the depth of the key in the indented document.
type arrayShape struct {
	key   string
	depth int
}

// NewStream starts a stream of rep's format to w; rep gives the tool, its
// version and the target (its findings and summary are not used). Nothing
// is written before the first call of Write or Close.
func NewStream(w io.Writer, format string, rep *analyzer.Report, opt Options) (*Stream, error) {
	if rep == nil {
		return nil, errors.New("output: nil report")
	}
	s := &Stream{w: w, format: format, pal: newPalette(opt.Color)}
	s.rep = analyzer.Report{Tool: rep.Tool, Version: rep.Version, Target: rep.Target, Verdict: rep.Verdict, Findings: []analyzer.Finding{}}
	s.counts.Count(nil)
	switch format {
	case "text", "github":
	case "json":
		s.array = arrayShape{key: "findings", depth: 1}
	case "sarif":
		s.array = arrayShape{key: "results", depth: 3}
		s.index = sarifRuleIndex()
	default:
		return nil, fmt.Errorf("unknown output format %q (want one of %s)", format, strings.Join(Formats(), ", "))
	}
	if s.array.key != "" {
		doc, err := s.document(analyzer.Summary{})
		if err != nil {
			return nil, err
		}
		s.head, _, err = s.array.split(doc)
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// document renders the whole document of a json or sarif stream without
// findings, with the summary sum (whose counts are made).
func (s *Stream) document(sum analyzer.Summary) ([]byte, error) {
	var buf bytes.Buffer
	rep := s.rep
	rep.Summary = sum
	var err error
	if s.format == "json" {
		err = writeJSONSummary(&buf, &rep, sum)
	} else {
		err = writeSARIF(&buf, &rep, Options{})
	}
	if err != nil {
		return nil, fmt.Errorf("output: %s: %w", s.format, err)
	}
	return buf.Bytes(), nil
}

// split cuts an indented document whose list is empty into the part up to
// and including the list's "[" and the part from its "]" on.
func (a arrayShape) split(doc []byte) (head, tail []byte, err error) {
	marker := []byte("\n" + strings.Repeat("  ", a.depth) + `"` + a.key + `": []`)
	if bytes.Count(doc, marker) != 1 {
		return nil, nil, fmt.Errorf("output: no single %q list in the document", a.key)
	}
	i := bytes.Index(doc, marker) + len(marker) - 1
	return doc[:i], doc[i:], nil
}

// Write renders a batch of findings, in order after those of the batches
// before, and writes it.
func (s *Stream) Write(fs []analyzer.Finding) error {
	if len(fs) == 0 {
		return nil
	}
	s.buf.Reset()
	s.begin()
	for _, f := range fs {
		s.counts.Findings++
		s.counts.BySeverity[f.Severity.String()]++
		s.counts.ByRule[f.Rule]++
		switch s.format {
		case "text":
			writeTextFinding(&s.buf, s.pal, f)
		case "github":
			writeGitHubFinding(&s.buf, f)
		case "json":
			if err := s.element(jsonFindingOf(f)); err != nil {
				return err
			}
		case "sarif":
			if err := s.element(sarifResultOf(f, s.index)); err != nil {
				return err
			}
		}
		s.n++
	}
	_, err := s.w.Write(s.buf.Bytes())
	return err
}

// begin puts the head of the document in the buffer, once.
func (s *Stream) begin() {
	if !s.started {
		s.buf.Write(s.head)
		s.started = true
	}
}

// element adds one element of the list of findings, indented as the
// whole document indents it.
func (s *Stream) element(v any) error {
	if s.n > 0 {
		s.buf.WriteByte(',')
	}
	prefix := strings.Repeat("  ", s.array.depth+1)
	s.buf.WriteString("\n" + prefix)
	enc := json.NewEncoder(&s.buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("output: %s: %w", s.format, err)
	}
	s.buf.Truncate(s.buf.Len() - 1) // Encode's newline
	return nil
}

// Close writes the end of the report: for text the summary, for json the
// end of the findings and the summary, for sarif the end of the run. The
// counts of sum (findings, by severity, by rule) are replaced by those of
// the findings written; the rest of sum is taken as it is.
func (s *Stream) Close(sum analyzer.Summary) error {
	sum.Findings, sum.BySeverity, sum.ByRule = s.counts.Findings, s.counts.BySeverity, s.counts.ByRule
	s.buf.Reset()
	s.begin()
	switch s.format {
	case "text":
		if s.n > 0 {
			s.buf.WriteByte('\n')
		}
		writeTextSummaryOf(&s.buf, sum)
	case "json", "sarif":
		doc, err := s.document(sum)
		if err != nil {
			return err
		}
		head, tail, err := s.array.split(doc)
		if err != nil {
			return err
		}
		if !bytes.Equal(head, s.head) {
			return fmt.Errorf("output: %s: the document's head changed while it was written", s.format)
		}
		if s.n > 0 {
			s.buf.WriteString("\n" + strings.Repeat("  ", s.array.depth))
		}
		s.buf.Write(tail)
	}
	_, err := s.w.Write(s.buf.Bytes())
	return err
}
