package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// Progress line timing: nothing is shown before progressDelay, and the line
// is redrawn at most once per progressEvery.
const (
	progressDelay = 2 * time.Second
	progressEvery = 250 * time.Millisecond
	progressTick  = 100 * time.Millisecond
)

// progress shows how far a scan has got on one line of a terminal,
// "pgpoolcheck: scanned 812/2000 files (40%), 406 files/s", redrawn in
// place with a carriage return once the scan has taken progressDelay,
// and erased when the scan ends. A nil *progress does nothing, so callers
// need not ask whether it is shown.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	now   func() time.Time
	start time.Time
	last  time.Time // of the last drawing
	total int
	done  int
	width int // characters of the line on screen; 0 when none is
	stop  chan struct{}
	ended chan struct{}
}

// newProgress makes a progress line for a scan of total files, written to
// w with the clock now. Nothing is drawn until tick is called.
func newProgress(w io.Writer, total int, now func() time.Time) *progress {
	return &progress{w: w, now: now, start: now(), total: total}
}

// startProgress returns a running progress line on the standard error of
// e when it is a terminal, and nil otherwise.
func startProgress(e *env, total int) *progress {
	if !isTerminal(e.stderr) {
		return nil
	}
	p := newProgress(e.stderr, total, time.Now)
	p.stop, p.ended = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.ended)
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.tick()
			case <-p.stop:
				return
			}
		}
	}()
	return p
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// add counts n more files done.
func (p *progress) add(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.done += n
	p.mu.Unlock()
}

// tick draws the line when the scan has taken progressDelay and the last
// drawing is at least progressEvery old.
func (p *progress) tick() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	elapsed := now.Sub(p.start)
	if elapsed < progressDelay || (!p.last.IsZero() && now.Sub(p.last) < progressEvery) {
		return
	}
	pct := 100
	if p.total > 0 {
		pct = p.done * 100 / p.total
	}
	line := fmt.Sprintf("pgpoolcheck: scanned %d/%d files (%d%%), %.0f files/s", p.done, p.total, pct, float64(p.done)/elapsed.Seconds())
	pad := ""
	if n := len(line); n < p.width {
		pad = strings.Repeat(" ", p.width-n)
	}
	fmt.Fprint(p.w, "\r"+line+pad)
	p.width = len(line)
	p.last = now
}

// clearLocked erases the line, if one is drawn; p.mu is held.
func (p *progress) clearLocked() {
	if p.width > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.width)+"\r")
		p.width = 0
	}
}

// finish stops the redrawing and erases the line.
func (p *progress) finish() {
	if p == nil {
		return
	}
	if p.stop != nil {
		close(p.stop)
		<-p.ended
		p.stop = nil
	}
	p.mu.Lock()
	p.clearLocked()
	p.mu.Unlock()
}

// above returns a writer for output that shares the terminal with the
// line: the line is erased before each write (and drawn again by a later
// tick), so the output does not run into it.
func (p *progress) above(w io.Writer) io.Writer {
	if p == nil {
		return w
	}
	return progressWriter{p: p, w: w}
}

type progressWriter struct {
	p *progress
	w io.Writer
}

func (pw progressWriter) Write(b []byte) (int, error) {
	pw.p.mu.Lock()
	defer pw.p.mu.Unlock()
	pw.p.clearLocked()
	return pw.w.Write(b)
}
