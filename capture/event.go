// Package capture is pgpoolcheck's record of what clients did on the wire:
// the capture event model, a writer the pooler feeds with protocol
// messages, and a streaming reader for analyze.
//
// A capture file is JSON Lines (docs/capture-format.md): a header line,
// then one event per line, then a trailer line written at Close. Events
// hold statement text and protocol names, never query parameter values,
// result rows, passwords or SASL data.
//
// The writer never blocks the proxy: Session methods decode a message and
// encode its event on the caller's goroutine into the session's batch,
// which goes to a bounded queue once per round trip (when the server's
// ReadyForQuery ends it); one background goroutine copies the batches to
// the file. When the queue is full the batch is dropped and its events
// counted.
package capture

import "time"

// Format is the value of the header's "format" field.
const Format = "pgpoolcheck-capture"

// Version is the format version this package writes, major.minor. A reader
// accepts every minor version of its major version: minor versions only
// add fields and event kinds, which older readers skip.
const Version = "1.1"

// Major is the major version this package reads.
const Major = 1

// Header is the first line of a capture file.
type Header struct {
	// Format is always Format.
	Format string `json:"format"`
	// Version is the format version, "major.minor".
	Version string `json:"version"`
	// Pgpoolcheck is the version of the program that wrote the file.
	Pgpoolcheck string `json:"pgpoolcheck"`
	// ID identifies one recording; the parts of a rotated capture share
	// it, and session ids are unique within it.
	ID string `json:"capture_id"`
	// Instance identifies the recorder (the proxy instance) when it is not
	// the capture itself: a recorder restarted onto the file of an earlier
	// capture writes a new capture (a new ID, in the next free part) of
	// the earlier capture's instance. Empty when the capture is its own
	// instance (and in files of version 1.0); InstanceID resolves it.
	Instance string `json:"instance,omitempty"`
	// Part numbers the files of a rotated capture from 1.
	Part int `json:"part"`
	// Start is the wall-clock time the capture started (set by the
	// writer); event timestamps count nanoseconds from it on a monotonic
	// clock.
	Start time.Time `json:"start"`
	// Upstream is the server the proxy connected to, without a password.
	Upstream string `json:"upstream"`
	// Mode is the pool mode: record, session or transaction.
	Mode string `json:"mode"`
	// Redacted is set when literals in SQL were replaced by placeholders.
	Redacted bool `json:"redacted"`
}

// InstanceID identifies the proxy instance that wrote the capture: its
// Instance, or its ID when it is its own instance.
func (h Header) InstanceID() string {
	if h.Instance != "" {
		return h.Instance
	}
	return h.ID
}

// Trailer is the last line of a capture file written by Close (or by
// rotation, for every part but the last).
type Trailer struct {
	// Events is the number of events written to this file.
	Events int64 `json:"events"`
	// Dropped is the number of events the capture dropped so far (all
	// parts) because the writer could not keep up or failed.
	Dropped int64 `json:"dropped"`
	// T is the time of the trailer, nanoseconds since Start.
	T int64 `json:"t"`
}

// Kind is the kind of an event, its "ev" field.
type Kind string

// Event kinds. Reader passes on kinds it does not know (from a newer minor
// version) with only the common fields filled in.
const (
	SessionStart Kind = "session_start" // a client logged in
	Query        Kind = "query"         // simple-protocol Query
	Parse        Kind = "parse"         // extended-protocol Parse
	Bind         Kind = "bind"          // Bind (names only)
	Describe     Kind = "describe"      // Describe of a statement (S) or portal (P)
	Execute      Kind = "execute"       // Execute of a portal
	Close        Kind = "close"         // Close of a statement (S) or portal (P)
	Sync         Kind = "sync"          // Sync
	Flush        Kind = "flush"         // Flush
	FunctionCall Kind = "function_call" // FunctionCall (OID only)
	CopyStart    Kind = "copy_start"    // CopyInResponse / CopyOutResponse / CopyBothResponse
	CopyEnd      Kind = "copy_end"      // CopyDone or CopyFail
	Ready        Kind = "ready"         // ReadyForQuery
	Error        Kind = "error"         // ErrorResponse
	Notification Kind = "notification"  // NotificationResponse (channel only)
	SessionEnd   Kind = "session_end"   // the client session ended
	Hazard       Kind = "hazard"        // the pooler met session state in transaction mode
)

// Event is one line of a capture file after the header. Which fields are
// set depends on Kind (see docs/capture-format.md); the others are zero.
//
// The fields of the kinds a busy proxy records most (Query, the extended
// protocol's messages and ReadyForQuery) come first, in the struct's first
// 192 bytes: a session reuses one Event per message, and clearing and
// filling three cache lines rather than seven shows when a thousand
// sessions' state no longer fits in the CPU's cache (resetEvent).
type Event struct {
	// T is the time in nanoseconds since the header's Start.
	T int64 `json:"t"`
	// Session identifies the client session within the capture.
	Session uint64 `json:"s"`
	// Tx numbers the session's transactions from 1: it grows each time
	// the session is back to idle (ReadyForQuery 'I') after a message of
	// its own. Session start is transaction 0.
	Tx int64 `json:"tx"`
	// Kind is the event kind.
	Kind Kind `json:"ev"`

	// SQL is the statement text of Query and Parse.
	SQL string `json:"sql,omitempty"`
	// Name is the prepared statement's name (Parse, Bind, and Describe or
	// Close of a statement) or the portal's name (Describe or Close of a
	// portal); "" is the unnamed one.
	Name string `json:"name,omitempty"`
	// Portal is the portal of Bind and Execute.
	Portal string `json:"portal,omitempty"`
	// ParamTypes are the parameter type OIDs of Parse.
	ParamTypes []uint32 `json:"param_types,omitempty"`
	// Target is "S" (statement) or "P" (portal) for Describe and Close.
	Target string `json:"target,omitempty"`
	// MaxRows is Execute's row limit (0: all rows).
	MaxRows int32 `json:"max_rows,omitempty"`
	// OID is the function of FunctionCall.
	OID uint32 `json:"oid,omitempty"`
	// Status is ReadyForQuery's transaction status: "I", "T" or "E".
	Status string `json:"status,omitempty"`
	// Truncated is set when the proxy saw only a prefix of the message:
	// SQL is cut short and later fields may be missing.
	Truncated bool `json:"truncated,omitempty"`
	// Invalid says what was wrong with a message that did not decode;
	// the fields that did decode are kept.
	Invalid string `json:"invalid,omitempty"`
	// Redact says why SQL is empty in a redacted capture (it did not
	// parse, so its literals could not be found).
	Redact string `json:"redact,omitempty"`

	// Session start.
	Client          string            `json:"client,omitempty"`
	User            string            `json:"user,omitempty"`
	Database        string            `json:"database,omitempty"`
	ApplicationName string            `json:"application_name,omitempty"`
	Params          map[string]string `json:"params,omitempty"`

	// Direction is "in", "out" or "both" for CopyStart.
	Direction string `json:"direction,omitempty"`
	// From is "client" or "server" for CopyEnd; Fail is set for CopyFail.
	From string `json:"from,omitempty"`
	Fail bool   `json:"fail,omitempty"`
	// SQLState, Severity and Message describe an ErrorResponse.
	SQLState string `json:"sqlstate,omitempty"`
	Severity string `json:"severity,omitempty"`
	Message  string `json:"message,omitempty"`
	// Completed is set on an error in the extended protocol: how many of
	// the Execute messages sent since the last Sync completed before it.
	// The server ran those; it skipped every message after the one that
	// failed, up to the next Sync.
	Completed *int `json:"completed,omitempty"`
	// Channel is the channel of a Notification.
	Channel string `json:"channel,omitempty"`
	// Reason says why a session ended.
	Reason string `json:"reason,omitempty"`
	// Rule, Action and Fingerprint describe a Hazard: the catalogue rule,
	// what the pooler's session-state policy did (replayed, pinned,
	// reset, rejected, allowed) and the statement's pg_query fingerprint.
	Rule        string `json:"rule,omitempty"`
	Action      string `json:"action,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`

	// Line is the 1-based line of the event in its file (set by the
	// reader, not written).
	Line int `json:"-"`
}
