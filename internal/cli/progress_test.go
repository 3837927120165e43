package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestProgressLine(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	var w bytes.Buffer
	p := newProgress(&w, 2000, clock.now)

	// Nothing before 2 seconds, however often it ticks.
	for range 19 {
		clock.advance(100 * time.Millisecond)
		p.add(10)
		p.tick()
	}
	if w.Len() != 0 {
		t.Fatalf("drawn before the delay: %q", w.String())
	}

	// At 2 s: the first line, with the rate so far.
	clock.advance(100 * time.Millisecond)
	p.add(10)
	p.tick()
	first := "\rpgpoolcheck: scanned 200/2000 files (10%), 100 files/s"
	if w.String() != first {
		t.Fatalf("first line %q, want %q", w.String(), first)
	}

	// Ticks closer than 250 ms to the last drawing draw nothing.
	clock.advance(100 * time.Millisecond)
	p.add(1)
	p.tick()
	clock.advance(100 * time.Millisecond)
	p.tick()
	if w.String() != first {
		t.Fatalf("redrawn within 250 ms: %q", w.String())
	}

	// 250 ms after the last drawing it is redrawn in place.
	clock.advance(50 * time.Millisecond)
	p.add(1799)
	p.tick()
	second := "\rpgpoolcheck: scanned 2000/2000 files (100%), 889 files/s"
	if got := strings.TrimPrefix(w.String(), first); got != second {
		t.Fatalf("second line %q, want %q", got, second)
	}

	// finish erases exactly the line drawn and leaves the cursor at the
	// start of the line.
	w.Reset()
	p.finish()
	if want := "\r" + strings.Repeat(" ", len(second)-1) + "\r"; w.String() != want {
		t.Errorf("finish wrote %q, want %q", w.String(), want)
	}
	w.Reset()
	p.finish()
	if w.Len() != 0 {
		t.Errorf("a second finish wrote %q", w.String())
	}
}

// TestProgressShorterLine checks that a line shorter than the one on
// screen is padded with blanks over the rest of it.
func TestProgressShorterLine(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	var w bytes.Buffer
	p := newProgress(&w, 1000000, clock.now)
	p.add(5000)
	clock.advance(2 * time.Second)
	p.tick()
	long := "\rpgpoolcheck: scanned 5000/1000000 files (0%), 2500 files/s"
	if w.String() != long {
		t.Fatalf("line %q, want %q", w.String(), long)
	}
	w.Reset()
	p.total = 5000
	clock.advance(3 * time.Second)
	p.tick()
	short := "\rpgpoolcheck: scanned 5000/5000 files (100%), 1000 files/s"
	if want := short + strings.Repeat(" ", len(long)-len(short)); w.String() != want {
		t.Errorf("line %q, want %q", w.String(), want)
	}
}

// TestProgressAbove checks that output sharing the terminal erases the
// line first, and that the next tick draws it again.
func TestProgressAbove(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	var term bytes.Buffer
	p := newProgress(&term, 4, clock.now)
	out := p.above(&term)
	if _, err := out.Write([]byte("before\n")); err != nil {
		t.Fatal(err)
	}
	clock.advance(3 * time.Second)
	p.add(3)
	p.tick()
	if _, err := out.Write([]byte("finding\n")); err != nil {
		t.Fatal(err)
	}
	clock.advance(300 * time.Millisecond)
	p.tick()
	line := "\rpgpoolcheck: scanned 3/4 files (75%), 1 files/s"
	want := "before\n" + line + "\r" + strings.Repeat(" ", len(line)-1) + "\r" + "finding\n" + line
	if term.String() != want {
		t.Errorf("terminal got %q\nwant %q", term.String(), want)
	}
}

// TestProgressSilentOffTerminal checks that a scan whose standard error is
// not a terminal writes no progress at all, and that a nil progress is
// harmless.
func TestProgressSilentOffTerminal(t *testing.T) {
	var errb bytes.Buffer
	if p := startProgress(&env{stderr: &errb}, 10); p != nil {
		t.Fatal("progress started on a buffer")
	}
	var p *progress
	p.add(1)
	p.tick()
	p.finish()
	var b bytes.Buffer
	if w := p.above(&b); w != &b {
		t.Error("nil progress wrapped the writer")
	}
	_, errOut, _ := runCLI(t, "", "scan", "--no-config", "../../testdata/sample")
	if strings.Contains(errOut, "\r") || strings.Contains(errOut, "scanned") {
		t.Errorf("progress on a non-terminal stderr: %q", errOut)
	}
}
