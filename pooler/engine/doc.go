// Package engine holds the pooler's per-client protocol engine, with no
// I/O: it owns no socket, goroutine or timer, and one lock only, a leaf
// around the counts of the clients that hold each shared server-side
// statement (refs.go). A client's owner (an
// event loop of package pooler, or its login goroutine) feeds its engine
// the events of the client and of the server attached to it and carries
// out the step each one answers (events.go):
//
//   - Frame: a client message's header (relay, skip till Sync,
//     terminate, violation; the maximum message size);
//   - Reads, Classifies and Admit: what of a message the engine reads,
//     whether the classifier must look at it, and the policy's step
//     (send, send a query in its place, answer it here);
//   - Send: the message going to the server, planned (forward, rename,
//     inject a Parse, and a Sync ahead of a simple Query; close an
//     evicted statement; drop), with the pin of the client to its server;
//   - Server: a server message (forward or drop; then stay, verify,
//     clean, release, or lost); Verified and Settle after a read of the
//     server's state; ServerLost when its stream ends;
//   - Vanish: the client leaving (nothing, the queries to send, close,
//     cancel and close);
//   - Timeout: which of the client's timeouts runs.
//
// The engine keeps, unexported, the relay state of the attached server
// (RelState), the policy given at login (SetPolicy), the prepared-
// statement tracking of the client and of its servers (Server: the
// statements a server holds, the answers it owes and the answers of the
// pooler's own, PopSynth), and the session state the client made on its
// server (Session: what pins it, what must be cleaned, and the SQL that
// cleans, reads back and restores it). Where a client is (Place) and the
// moves allowed between places (Move) are here too.
//
// Effects on session state (StateEffect) are of the kinds of package
// rules/effects, the one model of what a statement does; what the pooler
// makes of each kind is here: Follows (the kinds it follows), Makes (the
// hazards) and Pins (what pins a client under preserve, rather than
// following it).
//
// A statement's effects may include a call of code it does not name
// (ReachPending, with the statement's text): the engine resolves it when
// the statement runs, with the Reacher the driver gives it (SetReacher),
// which matches the text against what the driver read of the catalog
// (package pooler, reach.go). A prepared statement is thereby matched at
// every run.
//
// Not here: running the classifier and counting and logging the hazards
// it finds (package pooler, state.go), reading the catalog, and the servers' reported
// parameters (varcache, server.go); TrackedParams names the parameters
// it keeps.
package engine
