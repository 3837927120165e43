package pooler

import (
	"sync"
	"testing"
)

// TestPauseResumeConcurrent: two console clients pausing and resuming
// databases of their own at once, with KILL's kick in between, each see
// their own database's state, end with nothing paused, and every channel
// a waiter could have waited on is closed, once.
func TestPauseResumeConcurrent(t *testing.T) {
	p := &Proxy{}
	const rounds = 2000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	seen := make(map[chan struct{}]bool)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if s := p.pause.cur.Load(); s != nil {
				seen[s.resumed] = true
			}
			p.pause.kick()
			p.pausedNow()
		}
	}()
	for _, db := range []string{"a", "b"} {
		wg.Go(func() {
			for range rounds {
				if err := p.pauseDB(db); err != nil {
					t.Errorf("PAUSE %s: %v", db, err)
					return
				}
				if !p.pause.paused(db) {
					t.Errorf("%s not paused after PAUSE", db)
				}
				if err := p.pauseDB(db); err == nil {
					t.Errorf("second PAUSE %s succeeded", db)
				}
				if err := p.resumeDB(db); err != nil {
					t.Errorf("RESUME %s: %v", db, err)
					return
				}
				if p.pause.paused(db) {
					t.Errorf("%s paused after RESUME", db)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-watched
	if all, dbs := p.pausedNow(); all || len(dbs) > 0 || p.pause.active() {
		t.Errorf("after the last RESUME: all %v, dbs %v, active %v", all, dbs, p.pause.active())
	}
	if err := p.resumeDB(""); err == nil || err.Error() != "nothing is paused" {
		t.Errorf("RESUME with nothing paused: %v", err)
	}
	for ch := range seen {
		select {
		case <-ch:
		default:
			t.Fatal("a paused snapshot's channel was left open after its RESUME")
		}
	}
	t.Logf("%d snapshot channels seen", len(seen))

	// PAUSE of all over a paused database, then RESUME of each.
	for _, step := range []struct {
		resume bool
		db     string
		err    string
	}{
		{false, "a", ""},
		{false, "", ""},
		{false, "b", "already paused"},
		{false, "", "already paused"},
		{true, "a", "all databases are paused: RESUME without a database name"},
		{true, "", ""},
		{true, "a", `database "a" is not paused`},
		{false, "pgbouncer", "cannot pause the admin console"},
	} {
		f := p.pauseDB
		if step.resume {
			f = p.resumeDB
		}
		got := ""
		if err := f(step.db); err != nil {
			got = err.Error()
		}
		if got != step.err {
			t.Errorf("resume %v %q: error %q, want %q", step.resume, step.db, got, step.err)
		}
	}
	if p.pause.active() {
		t.Error("something paused at the end")
	}
}
