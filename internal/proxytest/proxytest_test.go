package proxytest

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestMoveLog: the records of refused client moves are kept whatever the
// test's logger takes, and the test's logger gets what it takes, no more.
func TestMoveLog(t *testing.T) {
	var out bytes.Buffer
	h := newMoveLog(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn})))
	log := slog.New(h).With("proxy", "p1")
	if got := h.text(); got != "(no record of them)" {
		t.Errorf("text with no record: %q", got)
	}
	log.Info("client logged in", "user", "u")
	log.Warn("server down")
	log.Error("client state machine: invalid move", "from", "Idle", "to", "Active", "user", "u")

	kept := h.text()
	if n := strings.Count(kept, "\n") + 1; n != 1 || !strings.Contains(kept, "invalid move") ||
		!strings.Contains(kept, "from=Idle to=Active user=u") || !strings.Contains(kept, "proxy=p1") {
		t.Errorf("kept records %q, want the one invalid move with its attributes", kept)
	}
	got := out.String()
	if strings.Contains(got, "logged in") || !strings.Contains(got, "server down") || !strings.Contains(got, "invalid move") {
		t.Errorf("the test's logger got %q, want the warning and the error only", got)
	}

	for range maxMoveLines + 2 {
		log.Error("client state machine: invalid move")
	}
	kept = h.text()
	if n := strings.Count(kept, "invalid move"); n != maxMoveLines || !strings.HasSuffix(kept, "\n(3 more)") {
		t.Errorf("after %d records, kept %d and ended %q, want %d and (3 more)", maxMoveLines+3, n, kept[max(0, len(kept)-20):], maxMoveLines)
	}
}
