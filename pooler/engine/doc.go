// Package engine holds the pooler's per-client protocol decisions with no
// I/O: it owns no socket, goroutine, timer or lock. The event loops of
// package pooler are its driver: they move bytes, wait for readiness and
// run timers, and ask the engine what each message means; a client's
// engine is used by its owner alone.
//
// What is here:
//   - framing of client messages (Client.Frame: header checks, Terminate,
//     skip-till-Sync after a refused message, the maximum message size)
//     and COPY messages outside a COPY (IgnoredDetached);
//   - the relay state of an attached server, held by the client and
//     changed only through its methods (relay.go: Attached, Sent, Ready,
//     Broke, SetPinned), and the decisions made on it: Release at a
//     ReadyForQuery (MayRelease, and the veto while the server still owes
//     answers), MustVerify and MustClean before a release, Vanish (the
//     action and the queries to send) when the client leaves;
//   - the client's session-state policy, given at login (SetPolicy) and
//     kept for its life;
//   - framing of server messages (ServerHeader), shared by both drivers;
//   - prepared-statement tracking (Client.Frontend plans how a client's
//     Parse, Bind, Describe, Close, Execute, Sync or Query is sent;
//     Client.Backend matches the server's answers against the queue of
//     responses it owes; Server holds the statements a server has) and the
//     answers the pooler gives itself (Server.PopSynth);
//   - the session-state policy (Judge: pass, refuse or raise a statement;
//     Client.ApplyEffects: record what it did and whether that pins the
//     client) and the session state a client made on its server (Session:
//     what pins it, what must be cleaned, and the SQL that cleans, reads
//     back and restores it);
//   - where a client is (Place: logging in, idle, waiting, attached,
//     pinned, closing) and the moves allowed between places (Move).
//
// Not here: calling the classifier and counting and logging the hazards it
// finds (package pooler, state.go), and the parameter tracking of servers
// (varcache, server.go).
package engine
