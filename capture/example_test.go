package capture_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
)

// A proxy creates one Writer for the capture, one Session per client, and
// feeds it every message it relays: Frontend before forwarding a client
// message to the server, Backend before forwarding a server message to the
// client. Neither call waits for the disk.
func Example() {
	dir, _ := os.MkdirTemp("", "capture")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "capture.jsonl")

	w, err := capture.Create(path, capture.Header{
		Upstream: "postgres://app:secret@db:5432/app", // the password is not written
		Mode:     "record",
	}, capture.Options{MaxBytes: 1 << 30, Logger: slog.Default()})
	if err != nil {
		fmt.Println(err)
		return
	}

	// After the client logged in:
	s := w.StartSession(capture.SessionInfo{
		ClientAddr: "10.0.0.7:50312", User: "app", Database: "app", ApplicationName: "billing",
		Params: map[string]string{"search_path": "app"},
	})
	// A client message: type byte, body without the length word, full body
	// length (larger than len(body) when the proxy holds only a prefix).
	q := []byte("SET search_path = app\x00")
	s.Frontend('Q', q, len(q))
	// A server message.
	s.Backend('Z', []byte{'I'})
	// When the client goes away.
	s.End("client closed")

	// At shutdown: writes what is queued and the trailer.
	if err := w.Close(); err != nil {
		fmt.Println(err) // includes *capture.DroppedError when events were dropped
	}

	f, _ := capture.Open(path)
	defer f.Close()
	fmt.Println(f.Header().Upstream)
	for {
		ev, err := f.Next()
		if err == io.EOF {
			break
		}
		fmt.Printf("line %d: session %d, transaction %d, %s %q %q\n", ev.Line, ev.Session, ev.Tx, ev.Kind, ev.SQL, ev.Status)
	}
	// Output:
	// postgres://app@db:5432/app
	// line 2: session 1, transaction 0, session_start "" ""
	// line 3: session 1, transaction 1, query "SET search_path = app" ""
	// line 4: session 1, transaction 1, ready "" "I"
	// line 5: session 1, transaction 2, session_end "" ""
}
