package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fullDisk is a file system with room for a set number of bytes more: a
// write beyond that writes what fits and fails with ENOSPC, as a full
// disk does. Files are real files, so that what reached them can be
// read back.
type fullDisk struct {
	mu    sync.Mutex
	room  int64 // < 0: unlimited
	opens int   // files opened
}

func (d *fullDisk) opened() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.opens
}

func (d *fullDisk) setRoom(n int64) {
	d.mu.Lock()
	d.room = n
	d.mu.Unlock()
}

func (d *fullDisk) open(name string, flag int) (io.WriteCloser, error) {
	f, err := os.OpenFile(name, flag, 0o600)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.opens++
	d.mu.Unlock()
	return &diskFile{f: f, d: d}, nil
}

type diskFile struct {
	f *os.File
	d *fullDisk
}

func (df *diskFile) Write(p []byte) (int, error) {
	df.d.mu.Lock()
	defer df.d.mu.Unlock()
	n := len(p)
	if df.d.room >= 0 && int64(n) > df.d.room {
		n = int(df.d.room)
	}
	m, err := df.f.Write(p[:n])
	if df.d.room >= 0 {
		df.d.room -= int64(m)
	}
	if err == nil && m < len(p) {
		err = &fs.PathError{Op: "write", Path: df.f.Name(), Err: syscall.ENOSPC}
	}
	return m, err
}

func (df *diskFile) Close() error { return df.f.Close() }

// useDisk makes the writers of the test write through d and retry every
// 20 ms after a failure.
func useDisk(t *testing.T, d *fullDisk) {
	open, every := openPart, resumeEvery
	openPart, resumeEvery = d.open, 20*time.Millisecond
	t.Cleanup(func() { openPart, resumeEvery = open, every })
}

// logRecords keeps the records logged through it.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.recs = append(l.recs, r.Clone())
	l.mu.Unlock()
	return nil
}

// find returns the records at level with message msg, and each one's
// attributes.
func (l *logRecords) find(level slog.Level, msg string) []map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]string
	for _, r := range l.recs {
		if r.Level != level || r.Message != msg {
			continue
		}
		attrs := map[string]string{}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value.String()
			return true
		})
		out = append(out, attrs)
	}
	return out
}

func (l *logRecords) count(level slog.Level) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.recs {
		if r.Level == level {
			n++
		}
	}
	return n
}

// waitFor waits up to 10 s for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestResumeAfterFullDisk fills the disk under a capture, checks that the
// writer stops (one error logged, the events counted as dropped, no empty
// part left by its attempts to go on), frees space, and checks that it
// resumes in the next part; the reader then reads every part, the broken
// one included, and the counts of events written and dropped add up to
// the events recorded.
func TestResumeAfterFullDisk(t *testing.T) {
	tests := []struct {
		name string
		room int64 // bytes left when the disk fills
		// cut: the broken part ends in a line cut short; more: some of the
		// second session's lines reached it before the error.
		cut, more bool
	}{
		{name: "no room left", room: 0},
		{name: "room for half a line", room: 40, cut: true},
		{name: "room for a few lines", room: 700, cut: true, more: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			disk := &fullDisk{room: -1}
			useDisk(t, disk)
			logs := &logRecords{}
			path := filepath.Join(t.TempDir(), "cap.jsonl")
			w, err := Create(path, Header{Mode: "record"}, Options{Logger: slog.New(logs)})
			if err != nil {
				t.Fatal(err)
			}
			sent := int64(0)
			session := func(n int) {
				s := w.StartSession(SessionInfo{User: "u"})
				for i := range n {
					body := fmt.Appendf(nil, "SELECT %d\x00", i)
					s.Frontend('Q', body, len(body))
					s.Backend('Z', []byte{'I'})
				}
				s.End("done")
				sent += int64(2*n + 2)
			}
			accounted := func() bool { st := w.Stats(); return st.Events+st.Dropped == sent }

			session(5)
			waitFor(t, "the first session to be written", func() bool { return w.Stats().Events == sent })
			if st := w.Stats(); !st.Writing || st.Failures != 0 || st.Dropped != 0 {
				t.Fatalf("before the disk filled: %+v", st)
			}
			before := sent

			disk.setRoom(tc.room)
			session(20)
			waitFor(t, "the write error", func() bool { return w.Stats().Failures == 1 })
			if w.Stats().Writing {
				t.Error("Writing after a write error")
			}
			session(3) // while the capture is stopped: dropped
			waitFor(t, "the events to be counted", accounted)
			// Let it try to resume a few times on the full disk.
			opens := disk.opened()
			waitFor(t, "attempts to resume", func() bool { return disk.opened() >= opens+3 })
			if st := w.Stats(); st.Resumes != 0 || st.Writing {
				t.Fatalf("resumed on a full disk: %+v", st)
			}
			// (An attempt may be under way: its file exists until it fails.)
			waitFor(t, "no part left behind by the attempts to resume", func() bool {
				_, err := os.Stat(PartPath(path, 2))
				return errors.Is(err, fs.ErrNotExist)
			})
			if n := logs.count(slog.LevelError); n != 1 {
				t.Errorf("%d errors logged, want 1 for the failure (not one per retry)", n)
			}
			droppedWhileFull := w.Stats().Dropped

			disk.setRoom(-1)
			waitFor(t, "the resume", func() bool { return w.Stats().Resumes == 1 })
			if st := w.Stats(); !st.Writing || st.Failures != 1 {
				t.Errorf("after the resume: %+v", st)
			}
			resumed := logs.find(slog.LevelInfo, "capture resumed")
			if len(resumed) != 1 || resumed[0]["path"] != PartPath(path, 2) || resumed[0]["dropped"] != fmt.Sprint(droppedWhileFull) {
				t.Errorf("resume logged as %v, want path %s and dropped %d", resumed, PartPath(path, 2), droppedWhileFull)
			}
			last := sent
			session(4)
			err = w.Close()
			var de *DroppedError
			if !errors.As(err, &de) || de.N != droppedWhileFull || de.Failures != 1 {
				t.Fatalf("Close: %v, want %d dropped and 1 failure", err, droppedWhileFull)
			}
			st := w.Stats()
			if st.Writing || st.Events+st.Dropped != sent || st.Dropped != droppedWhileFull {
				t.Errorf("after Close: %+v, %d events sent", st, sent)
			}

			files := w.Files()
			if len(files) != 2 || files[0] != path || files[1] != PartPath(path, 2) {
				t.Fatalf("files %v", files)
			}
			perFile := map[string]int64{}
			warns, err := ReadFiles(files, func(h Header, file string, ev *Event) error {
				perFile[file]++
				if file == files[1] && ev.Session != 4 {
					t.Errorf("%s: an event of session %d, want only the last session's", file, ev.Session)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if perFile[files[0]]+perFile[files[1]] != st.Events {
				t.Errorf("read %v events, the writer counted %d written", perFile, st.Events)
			}
			if got := perFile[files[1]]; got != sent-last {
				t.Errorf("%d events in the resumed part, want %d", got, sent-last)
			}
			switch got := perFile[files[0]]; {
			case tc.more && got <= before:
				t.Errorf("%d events in the broken part: the lines that reached it before the error are missing", got)
			case !tc.more && got != before:
				t.Errorf("%d events in the broken part, want %d", got, before)
			}
			joined := strings.Join(warns, "\n")
			wantWarns := []string{path + ": no trailer", fmt.Sprintf("%s: the capture dropped %d events", files[1], st.Dropped)}
			if tc.cut {
				wantWarns = append(wantWarns, "the last line is cut short")
			}
			for _, want := range wantWarns {
				if !strings.Contains(joined, want) {
					t.Errorf("no warning %q in\n%s", want, joined)
				}
			}
			if !tc.cut && strings.Contains(joined, "cut short") {
				t.Errorf("a cut line reported where none is:\n%s", joined)
			}
			r, err := Open(files[1])
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for {
				if _, err := r.Next(); err != nil {
					break
				}
			}
			if tr := r.Trailer(); tr == nil || tr.Dropped != st.Dropped || tr.Events != sent-last {
				t.Errorf("trailer of the resumed part %+v, want %d events and %d dropped", tr, sent-last, st.Dropped)
			}
			if h := r.Header(); h.Part != 2 || h.ID != w.Header().ID {
				t.Errorf("header of the resumed part %+v", h)
			}
		})
	}
}

// noSpace fails every write as a full disk does.
type noSpace struct{}

func (noSpace) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestNewWriterDoesNotResume: a capture to an io.Writer has no next part
// to go on in; it stays stopped and says so.
func TestNewWriterDoesNotResume(t *testing.T) {
	open, every := openPart, resumeEvery
	resumeEvery = time.Millisecond
	t.Cleanup(func() { openPart, resumeEvery = open, every })
	w := NewWriter(noSpace{}, Header{}, Options{})
	s := w.StartSession(SessionInfo{})
	s.End("x")
	waitFor(t, "the write error", func() bool { return w.Stats().Failures == 1 })
	time.Sleep(50 * time.Millisecond)
	_ = w.Close()
	if st := w.Stats(); st.Resumes != 0 || st.Writing || st.Failures != 1 || st.Dropped != 2 || st.Events != 0 {
		t.Errorf("stats %+v", st)
	}
}
