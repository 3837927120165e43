// Package engine holds the pooler's per-client protocol decisions with no
// I/O: it owns no socket, goroutine, timer or lock. The two relays of
// package pooler (the event loops and the goroutine relay) are drivers:
// they move bytes, wait for readiness and run timers, and ask the engine
// what each message means.
//
// What is here: framing of client messages (Client.Frame: header checks,
// Terminate, skip-till-Sync after a refused message, the maximum message
// size), COPY messages outside a COPY (IgnoredDetached), the relay state of
// an attached server (RelState, CountFrontend) and the decisions made on
// it (MayRelease at a ReadyForQuery, OnVanish when the client leaves), and
// the session state a client made on its server (Session: what pins it,
// what must be cleaned, and the SQL that cleans, reads back and restores
// it), and where a client is (Place: logging in, idle, waiting, attached,
// pinned, closing) with the moves allowed between places (Move).
//
// Not here yet, still in package pooler and called by both drivers: the
// pending-response queue and prepared-statement tracking (track.go,
// prepared.go), the policy step that classifies a statement and refuses or
// records it (state.go).
package engine
