package pooler

import (
	"sync"
	"testing"
)

// TestHazardsConcurrent: hazards counted from several goroutines while
// Hazards reads them are all counted, each line read has its latest
// occurrence and no more clients than occurrences, and an occurrence
// without a fingerprint keeps the latest fingerprint known.
func TestHazardsConcurrent(t *testing.T) {
	p := &Proxy{}
	if hs := p.Hazards(); hs == nil || len(hs) != 0 {
		t.Fatalf("no hazards: %#v, want an empty slice", hs)
	}
	const writers, each = 4, 2000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, h := range p.Hazards() {
				if h.Count == 0 || h.Clients > h.Count || h.ApplicationName == "" || h.LastSeen.IsZero() {
					t.Errorf("line read during adds: %+v", h)
					return
				}
			}
		}
	}()
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				p.hazards.add("rule-b", []string{"pinned", "reset"}[w%2], i%10 == 0, "app", "fp")
				p.hazards.add("rule-a", "replayed", false, "app", "")
			}
		})
	}
	wg.Wait()
	close(stop)
	<-read
	hs := p.Hazards()
	want := []HazardCount{
		{Rule: "rule-a", Action: "replayed", Count: writers * each, Clients: 0, ApplicationName: "app"},
		{Rule: "rule-b", Action: "pinned", Count: writers / 2 * each, Clients: writers / 2 * each / 10, ApplicationName: "app", Fingerprint: "fp"},
		{Rule: "rule-b", Action: "reset", Count: writers / 2 * each, Clients: writers / 2 * each / 10, ApplicationName: "app", Fingerprint: "fp"},
	}
	if len(hs) != len(want) {
		t.Fatalf("Hazards: %+v", hs)
	}
	for i := range want {
		got := hs[i]
		if got.LastSeen.IsZero() {
			t.Errorf("line %d: no time", i)
		}
		got.LastSeen = want[i].LastSeen
		if got != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got, want[i])
		}
	}

	p.hazards.add("rule-a", "replayed", true, "other", "fp2")
	p.hazards.add("rule-a", "replayed", false, "third", "")
	if h := p.Hazards()[0]; h.ApplicationName != "third" || h.Fingerprint != "fp2" || h.Clients != 1 {
		t.Errorf("after an occurrence without a fingerprint: %+v", h)
	}
}

// TestHazardsAddAllocatesNothing: once a rule and action were seen, a
// hazard from the same application with the same (or no) fingerprint
// allocates nothing (a SET in every transaction counts one).
func TestHazardsAddAllocatesNothing(t *testing.T) {
	var h hazards
	h.add("rule", "pinned", true, "app", "fp")
	if n := testing.AllocsPerRun(100, func() {
		h.add("rule", "pinned", false, "app", "fp")
		h.add("rule", "pinned", false, "app", "")
	}); n != 0 {
		t.Errorf("%v allocations per add", n/2)
	}
}
