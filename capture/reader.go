package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// MaxLine is the longest line the reader accepts (a statement of a few
// hundred megabytes is not something to analyze).
const MaxLine = 256 << 20

// Reader streams the events of one capture file.
type Reader struct {
	name    string
	br      *bufio.Reader
	header  Header
	line    int
	trailer *Trailer
	warns   []string
	done    bool
	// skip makes lines that are not events warnings instead of errors
	// (SkipCorrupt); skipped counts them and firstSkipped is the first.
	skip                  bool
	skipped, firstSkipped int
}

// SkipCorrupt makes the reader skip a line in the middle of the file that
// is not a valid event (a disk error, a hand edit) instead of failing:
// Warnings then says how many were skipped and where the first was.
func (r *Reader) SkipCorrupt() { r.skip = true }

// corrupt handles a line that is not a valid event: an error, or with
// SkipCorrupt a count.
func (r *Reader) corrupt(format string, a ...any) error {
	if !r.skip {
		return fmt.Errorf("%s:%d: "+format, append([]any{r.name, r.line}, a...)...)
	}
	if r.skipped == 0 {
		r.firstSkipped = r.line
	}
	r.skipped++
	return nil
}

// NewReader reads the header of the capture in r; name is used in errors
// and warnings. An unknown format or major version is an error.
func NewReader(r io.Reader, name string) (*Reader, error) {
	rd := &Reader{name: name, br: bufio.NewReaderSize(r, 64<<10)}
	line, complete, err := rd.readLine()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file, not a pgpoolcheck capture", name)
	}
	if err != nil {
		return nil, err
	}
	var h Header
	if err := json.Unmarshal(line, &h); err != nil || h.Format != Format {
		if !complete && err != nil {
			return nil, fmt.Errorf("%s: the header line is cut short (the capture stopped before it was written)", name)
		}
		return nil, fmt.Errorf("%s: not a pgpoolcheck capture (the first line is not a capture header)", name)
	}
	major, err := majorOf(h.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: capture version %q is not major.minor", name, h.Version)
	}
	if major != Major {
		return nil, fmt.Errorf("%s: capture format version %s is not supported: this pgpoolcheck reads version %d.x (use a pgpoolcheck that knows version %d)", name, h.Version, Major, major)
	}
	rd.header = h
	return rd, nil
}

func majorOf(v string) (int, error) {
	maj, _, ok := strings.Cut(v, ".")
	if !ok {
		return 0, errors.New("no minor version")
	}
	return strconv.Atoi(maj)
}

// Header returns the capture's header.
func (r *Reader) Header() Header { return r.header }

// Name returns the name given to NewReader.
func (r *Reader) Name() string { return r.name }

// Trailer returns the trailer once Next has returned io.EOF, or nil when
// the file has none (the capture did not close cleanly).
func (r *Reader) Trailer() *Trailer { return r.trailer }

// Warnings returns what the reader forgave so far: a last line cut short by
// a crash, a missing trailer, dropped events.
func (r *Reader) Warnings() []string { return r.warns }

// readLine returns the next line without its newline, whether it had one,
// and io.EOF at the end.
func (r *Reader) readLine() ([]byte, bool, error) {
	var long []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		switch {
		case err == nil:
			r.line++
			if long != nil {
				long = append(long, chunk[:len(chunk)-1]...)
				return long, true, nil
			}
			return chunk[:len(chunk)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, chunk...)
			if len(long) > MaxLine {
				return nil, false, fmt.Errorf("%s:%d: line longer than %d bytes", r.name, r.line+1, MaxLine)
			}
		case err == io.EOF:
			long = append(long, chunk...)
			if len(long) == 0 {
				return nil, false, io.EOF
			}
			r.line++
			return long, false, nil
		default:
			return nil, false, fmt.Errorf("%s: %w", r.name, err)
		}
	}
}

// lineJSON is any line after the header.
type lineJSON struct {
	Event
	IsTrailer bool  `json:"trailer"`
	Events    int64 `json:"events"`
	Dropped   int64 `json:"dropped"`
}

// Next returns the next event, or io.EOF after the last one. A last line
// cut short (no newline, not a valid event or trailer) is a warning, not
// an error; any
// other line that is not a valid event is an error naming the file and
// line. The returned event is the caller's.
func (r *Reader) Next() (*Event, error) {
	for {
		if r.done {
			return nil, io.EOF
		}
		line, complete, err := r.readLine()
		if err == io.EOF {
			r.finish()
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var l lineJSON
		err = json.Unmarshal(line, &l)
		if !complete && (err != nil || (!l.IsTrailer && l.Kind == "")) {
			// The writer ends every line with its newline: a last line
			// without one that is not an event was cut by a crash or a
			// full disk.
			r.warns = append(r.warns, fmt.Sprintf("%s:%d: the last line is cut short (the capture stopped mid-write); ignored", r.name, r.line))
			r.finish()
			return nil, io.EOF
		}
		if err != nil {
			if err := r.corrupt("not a capture event: %v", err); err != nil {
				return nil, err
			}
			continue
		}
		if r.trailer != nil {
			return nil, fmt.Errorf("%s:%d: a line after the trailer", r.name, r.line)
		}
		if l.IsTrailer {
			r.trailer = &Trailer{Events: l.Events, Dropped: l.Dropped, T: l.T}
			continue
		}
		if l.Kind == "" {
			if err := r.corrupt("an event without \"ev\""); err != nil {
				return nil, err
			}
			continue
		}
		ev := l.Event
		ev.Line = r.line
		return &ev, nil
	}
}

func (r *Reader) finish() {
	if r.done {
		return
	}
	r.done = true
	if r.skipped > 0 {
		r.warns = append(r.warns, fmt.Sprintf("%s: %d corrupt lines skipped (the first at line %d): their events are missing from the analysis", r.name, r.skipped, r.firstSkipped))
	}
	switch {
	case r.trailer == nil:
		r.warns = append(r.warns, fmt.Sprintf("%s: no trailer: the capture did not stop cleanly, events at its end may be missing", r.name))
	case r.trailer.Dropped > 0:
		r.warns = append(r.warns, fmt.Sprintf("%s: the capture dropped %d events (the writer could not keep up, or could not write until it resumed in a new part): transactions may look different from what ran", r.name, r.trailer.Dropped))
	}
}

// File is one capture file opened for reading.
type File struct {
	*Reader
	f *os.File
}

// Open opens the capture file at path and reads its header.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{Reader: r, f: f}, nil
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// ReadFiles streams the events of several capture files to fn, one file
// after the other in the order given, and returns the warnings of all of
// them. fn's error stops the reading and is returned.
func ReadFiles(paths []string, fn func(h Header, file string, ev *Event) error) ([]string, error) {
	return readFiles(paths, false, fn)
}

// ReadFilesSkippingCorrupt is ReadFiles with Reader.SkipCorrupt.
func ReadFilesSkippingCorrupt(paths []string, fn func(h Header, file string, ev *Event) error) ([]string, error) {
	return readFiles(paths, true, fn)
}

func readFiles(paths []string, skip bool, fn func(h Header, file string, ev *Event) error) ([]string, error) {
	var warns []string
	for _, p := range paths {
		f, err := Open(p)
		if err != nil {
			return warns, err
		}
		if skip {
			f.SkipCorrupt()
		}
		for {
			ev, err := f.Next()
			if err == io.EOF {
				break
			}
			if err == nil {
				err = fn(f.Header(), p, ev)
			}
			if err != nil {
				f.Close()
				return append(warns, f.Warnings()...), err
			}
		}
		warns = append(warns, f.Warnings()...)
		f.Close()
	}
	return warns, nil
}
