package capture

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/internal/version"
)

// Options configure a Writer.
type Options struct {
	// Redact replaces the literals in SQL with placeholders ($1, $2, …)
	// before the SQL is written; SQL that does not parse is left out, and
	// so are error messages (which may quote a value).
	Redact bool
	// MaxBytes starts a new file (a new part) before the current one
	// would exceed this many bytes (trailer included; a single event
	// longer than that still gets a part of its own); 0 never rotates.
	// Only Create rotates.
	MaxBytes int64
	// QueueEvents bounds the events waiting to be written; when the queue
	// is full, new events are dropped and counted. 0 means 65536.
	QueueEvents int
	// Logger receives write errors and the drop count at Close; nil
	// discards them.
	Logger *slog.Logger
}

// DefaultQueueEvents is the queue bound when Options.QueueEvents is 0.
const DefaultQueueEvents = 1 << 16

// flushEvery is how long written events may sit in the buffer while the
// queue is idle.
const flushEvery = 250 * time.Millisecond

// writeBuffer is the size of the writer's buffer: each write to the file
// is a system call the Go runtime sees as one that may block, and each
// such call wakes its monitor thread (sysmon) when it sleeps, so the
// writes are made large.
const writeBuffer = 1 << 20

// resumeEvery is how often a capture written to files (Create) that
// stopped after a write error (a full disk) tries to go on in a new part;
// tests shorten it.
var resumeEvery = 10 * time.Second

// openPart opens a capture part for writing (os.OpenFile with flag and
// mode 0600); tests replace it to make writes fail.
var openPart = func(name string, flag int) (io.WriteCloser, error) {
	f, err := os.OpenFile(name, flag, 0o600)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// sweepEvery is how often the background goroutine takes the events that
// live sessions hold between their round trips' ends.
const sweepEvery = 500 * time.Millisecond

// Writer writes a capture. It is safe for use by many goroutines: every
// Session method and Dropped may be called concurrently; Close once, after
// which Session methods are ignored (their events are not counted as
// dropped: the capture is over).
//
// Nothing a Session method does waits for disk I/O: a session's events,
// encoded as they are recorded, go a round trip at a time to a bounded
// queue that one background goroutine writes through a bufio.Writer. A
// full queue drops the batch (Dropped counts its events, the trailer
// records them); a write error stops the writing, and every later event
// counts as dropped until the capture resumes: a writer made by Create
// tries every resumeEvery to start the next part, and goes on there once
// that part's header is written (the part that failed keeps what reached
// it, without a trailer). Stats counts all of it. Close also writes what the sessions
// still live have handed over or hold in their batches, but not the
// client messages a session holds back for a ReadyForQuery (End writes
// those).
type Writer struct {
	start  time.Time
	first  Header // the header of the first part
	header Header // the header of the current part (background goroutine)
	opt    Options
	log    *slog.Logger

	// pending are the batches of events handed over and not yet taken
	// by the background goroutine, which takes them all at once every
	// batchEvery (or sooner, when wake says they are many): waking it for
	// each event would cost a goroutine wake-up per message of the proxy.
	// A session hands over one batch per round trip (see Session.out);
	// free holds the emptied batches for the sessions to fill again.
	qmu     sync.Mutex // guards pending, queued, free and closed
	pending []*batch
	queued  int // events in pending
	free    []*batch
	wake    chan struct{}
	closing chan struct{}
	done    chan struct{}

	closed bool

	// live are the sessions started and not ended: the background
	// goroutine hands over their batches now and then (a round trip the
	// server has not answered yet, a session that only receives
	// notifications), and Close hands over what they hold.
	smu  sync.Mutex
	live map[*Session]struct{}

	nextSession atomic.Uint64
	dropped     atomic.Int64
	// Counters for Stats: events written (flushed to the file), write
	// failures, resumes after one, and whether the writer writes now.
	total, failures, resumes atomic.Int64
	writing                  atomic.Bool

	// The fields below belong to the background goroutine.
	out      io.Writer
	file     io.WriteCloser // the current part; nil for NewWriter, and after a failure
	path     string
	bw       *bufio.Writer
	buf      []byte
	parts    []int // the part numbers written, in order (Create only)
	written  int64 // bytes in the current file
	synced   int64 // bytes of the current file known to be in it (at the last successful flush)
	events   int64 // events in the current file
	unsynced int64 // events in bw since the last successful flush
	dirty    bool
	err      error
	// failedAt is when the writing stopped (err set), triedAt the last
	// attempt to resume, droppedAt the drop count before the failure.
	failedAt, triedAt time.Time
	droppedAt         int64
	redacted          map[string]redaction
}

type redaction struct{ sql, why string }

// Create creates the capture file at path (truncating it) and starts
// writing h to it. The writer sets Format, Version, Start (now: event times
// count from it on the monotonic clock) and Part, and fills in Pgpoolcheck
// and ID when they are empty; Upstream loses any password; Redacted
// follows opt. With opt.MaxBytes, later parts are written next to path
// with the part number before the extension (capture.jsonl,
// capture.2.jsonl, capture.3.jsonl, …).
func Create(path string, h Header, opt Options) (*Writer, error) {
	part, f, err := createPart(path, 1)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	if part > 1 && h.Instance == "" {
		// The recorder that wrote the capture at path, restarted: this
		// capture continues its instance.
		h.Instance = instanceAt(path)
	}
	w := newWriter(f, h, opt)
	w.file, w.path = f, path
	if part > 1 {
		// An earlier capture is at path (a restarted recorder): it is
		// kept, and this one goes on in the next free part.
		w.first.Part, w.header.Part = part, part
		w.log.Warn("capture file exists: keeping it and writing to the next part", "file", path, "part", PartPath(path, part))
	}
	w.parts = []int{part}
	w.startLoop()
	return w, nil
}

// instanceAt returns the instance of the capture in the file at path (its
// capture_id when it has no instance), or "" when the file holds no
// readable header.
func instanceAt(path string) string {
	r, err := Open(path)
	if err != nil {
		return ""
	}
	defer r.Close()
	return r.Header().InstanceID()
}

// createPart creates the first part of path from n on that does not exist
// yet (an existing file is never truncated) and returns its number.
func createPart(path string, n int) (int, io.WriteCloser, error) {
	for ; ; n++ {
		f, err := openPart(PartPath(path, n), os.O_WRONLY|os.O_CREATE|os.O_EXCL)
		if err == nil {
			return n, f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return 0, nil, err
		}
		if st, serr := os.Stat(PartPath(path, n)); serr == nil && st.Mode().IsRegular() && st.Size() == 0 {
			// An empty file holds nothing to keep.
			f, err := openPart(PartPath(path, n), os.O_WRONLY|os.O_TRUNC)
			if err == nil {
				return n, f, nil
			}
		}
	}
}

// Path returns the file a writer made by Create writes to, called right
// after Create (the writer's goroutine moves on to new parts later).
func (w *Writer) Path() string {
	if w.path == "" {
		return ""
	}
	return PartPath(w.path, w.header.Part)
}

// Files returns the files a writer made by Create wrote, in order: the
// part it started in (path itself, or the next free part when path held
// an earlier capture) and the parts rotation went on to. Call it after
// Close. It returns nil for a writer made by NewWriter.
func (w *Writer) Files() []string {
	<-w.done
	var files []string
	for _, n := range w.parts {
		files = append(files, PartPath(w.path, n))
	}
	return files
}

// NewWriter writes a capture to out, which it does not close. It never
// rotates (opt.MaxBytes is ignored).
func NewWriter(out io.Writer, h Header, opt Options) *Writer {
	opt.MaxBytes = 0
	w := newWriter(out, h, opt)
	w.startLoop()
	return w
}

func newWriter(out io.Writer, h Header, opt Options) *Writer {
	if opt.QueueEvents <= 0 {
		opt.QueueEvents = DefaultQueueEvents
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h.Format, h.Version = Format, Version
	if h.Pgpoolcheck == "" {
		h.Pgpoolcheck = version.String()
	}
	now := time.Now() // with its monotonic reading: Writer.now counts from it
	h.Start = now.UTC()
	if h.ID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		h.ID = hex.EncodeToString(b[:])
	}
	if h.Instance == h.ID {
		h.Instance = "" // the capture is its own instance
	}
	h.Part = 1
	h.Upstream = SafeUpstream(h.Upstream)
	h.Redacted = opt.Redact
	w := &Writer{
		start:   now,
		first:   h,
		header:  h,
		opt:     opt,
		log:     log,
		live:    map[*Session]struct{}{},
		wake:    make(chan struct{}, 1),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
		out:     out,
		bw:      bufio.NewWriterSize(out, writeBuffer),
	}
	if opt.Redact {
		w.redacted = map[string]redaction{}
	}
	return w
}

// Header returns the header of the first part.
func (w *Writer) Header() Header { return w.first }

// Dropped returns the number of events dropped so far.
func (w *Writer) Dropped() int64 { return w.dropped.Load() }

// Stats are a writer's counters since it started.
type Stats struct {
	// Events counts the events written to the capture: flushed to its
	// file, or found in the file after a write error.
	Events int64
	// Dropped counts the events left out: the queue was full, or the
	// writer could not write (Writer.Dropped).
	Dropped int64
	// Failures counts the times the writing stopped for a write error;
	// Resumes the times it went on in a new part afterwards.
	Failures, Resumes int64
	// Writing is false after a write error until the capture resumes,
	// and after Close.
	Writing bool
}

// Stats returns the writer's counters. It is safe to call at any time,
// from any goroutine.
func (w *Writer) Stats() Stats {
	return Stats{
		Events:   w.total.Load(),
		Dropped:  w.dropped.Load(),
		Failures: w.failures.Load(),
		Resumes:  w.resumes.Load(),
		Writing:  w.writing.Load(),
	}
}

// Close stops the capture: it writes the events still queued, the trailer,
// flushes, and closes the file Create opened. It returns the write error
// that stopped the capture when it had not resumed, or else a
// *DroppedError when events were dropped. Calling it again returns nil.
func (w *Writer) Close() error {
	w.qmu.Lock()
	if w.closed {
		w.qmu.Unlock()
		return nil
	}
	w.qmu.Unlock()
	w.sweep(nil)
	w.qmu.Lock()
	w.closed = true
	w.qmu.Unlock()
	close(w.closing)
	<-w.done
	err := w.err
	if w.file != nil {
		if cerr := w.file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("capture: %w", cerr)
		}
	}
	if n := w.Dropped(); n > 0 {
		w.log.Warn("capture dropped events", "dropped", n, "path", w.path)
		if err == nil {
			err = &DroppedError{N: n, Failures: w.failures.Load()}
		}
	}
	return err
}

// DroppedError is returned by Close when events were dropped. Failures
// counts the write errors the capture resumed after (each dropped the
// events until the resume).
type DroppedError struct{ N, Failures int64 }

func (e *DroppedError) Error() string {
	if e.Failures > 0 {
		return fmt.Sprintf("capture: %d events dropped (the writer could not keep up, or could not write: %d write failures, each resumed in a new part)", e.N, e.Failures)
	}
	return fmt.Sprintf("capture: %d events dropped (the writer could not keep up)", e.N)
}

// resetEvent empties ev for reuse, keeping a Parse's small type list so
// that the next Parse decoded into it does not allocate one. An event of
// a frequent kind has only the fields at the start of Event set (see
// Event), and only those are cleared; TestResetEvent checks that each
// frequent kind's messages set no other field.
func resetEvent(ev *Event) {
	pt := ev.ParamTypes
	if cap(pt) > 32 {
		pt = nil
	} else {
		pt = pt[:0]
	}
	switch ev.Kind {
	case Query, Parse, Bind, Describe, Close, Execute, Sync, Flush, FunctionCall, Ready:
		ev.T, ev.Session, ev.Tx, ev.Kind = 0, 0, 0, ""
		ev.SQL, ev.Name, ev.Portal, ev.ParamTypes, ev.Target = "", "", "", pt, ""
		ev.MaxRows, ev.OID, ev.Status = 0, 0, ""
		ev.Truncated, ev.Invalid, ev.Redact = false, "", ""
	default:
		*ev = Event{ParamTypes: pt}
	}
}

// batch is a session's events between two hand-overs, encoded by the
// session's own goroutine as it records them: the writer only copies the
// bytes to its buffer. Under Options.Redact, the events that carry SQL
// are kept as events (late) for the writer to normalise and encode in
// their place.
type batch struct {
	b    []byte // the encoded lines
	n    int    // events in the batch, late ones included
	end  bool   // the batch ends a session: flush after it
	late []lateEvent
}

// lateEvent is an event the writer encodes, at offset at of the batch's
// bytes, after lines of them.
type lateEvent struct {
	at, lines int
	ev        Event
}

// Batch sizes: a new batch has room for a round trip of the extended
// protocol (Parse, Bind, Describe, Execute, Sync and ReadyForQuery are
// about 500 bytes); a session hands its batch over at flushAt events or
// flushBytes bytes even without a ReadyForQuery; at most maxFree emptied
// batches of at most keepBytes bytes are kept (at most 8 MiB, about 2 MiB
// for round trips of the usual size). maxFree covers the batches of
// batchEvery at 80,000 round trips a second.
const (
	batchBytes = 1 << 10
	flushAt    = 64
	flushBytes = 4 << 10
	keepBytes  = 4 << 10
	maxFree    = 2048
)

// freeBatch returns an empty batch for a session to fill.
func (w *Writer) freeBatch() *batch {
	w.qmu.Lock()
	b := w.popFreeLocked()
	w.qmu.Unlock()
	if b == nil {
		b = newBatch()
	}
	return b
}

func newBatch() *batch { return &batch{b: make([]byte, 0, batchBytes)} }

// popFreeLocked takes a batch from the free list, or returns nil (qmu
// held).
func (w *Writer) popFreeLocked() *batch {
	n := len(w.free)
	if n == 0 {
		return nil
	}
	b := w.free[n-1]
	w.free[n-1] = nil
	w.free = w.free[:n-1]
	return b
}

// encode adds ev to b: as its JSON line, or under Options.Redact as a
// late event when it has SQL (ev is left empty then). Reading only w.opt,
// it is safe on any session's goroutine.
func (w *Writer) encode(b *batch, ev *Event) {
	b.n++
	if ev.Kind == SessionEnd {
		b.end = true
	}
	if w.opt.Redact {
		// An error message may quote a value ("invalid input syntax for
		// type integer: …").
		ev.Message = ""
		if ev.SQL != "" {
			le := extend(&b.late)
			le.at, le.lines = len(b.b), b.n-len(b.late)
			move(&le.ev, ev)
			return
		}
	}
	b.b = appendEvent(b.b, ev)
}

// enqueue hands a batch of events to the background goroutine, which
// owns it from then on, or drops it whole when the queue is full.
func (w *Writer) enqueue(b *batch) { w.hand(b, false) }

// exchange is enqueue followed by freeBatch under one lock: it hands b
// over and returns an empty batch (b itself, emptied, when it is not
// written).
func (w *Writer) exchange(b *batch) *batch { return w.hand(b, true) }

// hand is enqueue, and with swap exchange.
func (w *Writer) hand(b *batch, swap bool) *batch {
	w.qmu.Lock()
	if w.closed || w.queued+b.n > w.opt.QueueEvents {
		dropped := !w.closed // once the capture is over it is not a drop
		n := b.n
		b.empty()
		if !swap {
			w.keepLocked(b)
			b = nil
		}
		w.qmu.Unlock()
		if dropped {
			w.dropped.Add(int64(n))
		}
		return b
	}
	w.pending = append(w.pending, b)
	before := w.queued
	w.queued += b.n
	big := before < wakeAt && w.queued >= wakeAt
	var free *batch
	if swap {
		free = w.popFreeLocked()
	}
	w.qmu.Unlock()
	if big {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	if swap && free == nil {
		free = newBatch()
	}
	return free
}

// empty makes b ready to be filled again.
func (b *batch) empty() {
	b.b, b.n, b.end = b.b[:0], 0, false
	for i := range b.late {
		resetEvent(&b.late[i].ev)
	}
	b.late = b.late[:0]
}

// keepLocked keeps an emptied batch for freeBatch (qmu held).
func (w *Writer) keepLocked(b *batch) {
	if len(w.free) < maxFree && cap(b.b) <= keepBytes && cap(b.late) <= flushAt {
		w.free = append(w.free, b)
	}
}

// sweep hands over the batches of the live sessions; scratch is reused
// storage for the list. The events of a round trip the server has not
// answered yet reach the file this way too, at most sweepEvery late.
func (w *Writer) sweep(scratch []*Session) []*Session {
	w.smu.Lock()
	for s := range w.live {
		scratch = append(scratch, s)
	}
	w.smu.Unlock()
	for i, s := range scratch {
		s.mu.Lock()
		if s.out != nil && s.out.n == 0 {
			// A quiet session's empty batch: back to the free list.
			w.qmu.Lock()
			w.keepLocked(s.out)
			w.qmu.Unlock()
			s.out = nil
		}
		s.handOver()
		s.mu.Unlock()
		scratch[i] = nil
	}
	return scratch[:0]
}

// batchEvery is how often the background goroutine takes the pending
// events; wakeAt pending events wake it sooner. The tick runs whether or
// not there is traffic: with 2 ms, an idle recording proxy used 2.5% of
// a CPU and 2000 context switches a second; with 25 ms, 0.5% and 250.
const (
	batchEvery = 25 * time.Millisecond
	wakeAt     = 4096
)

// takePending swaps the pending batches out for spare (emptied), so that
// the next round reuses its storage.
func (w *Writer) takePending(spare []*batch) []*batch {
	w.qmu.Lock()
	batches := w.pending
	w.pending = spare[:0]
	w.queued = 0
	w.qmu.Unlock()
	return batches
}

// recycle returns written batches to the free list.
func (w *Writer) recycle(batches []*batch) {
	for _, b := range batches {
		b.empty()
	}
	w.qmu.Lock()
	for i, b := range batches {
		w.keepLocked(b)
		batches[i] = nil
	}
	w.qmu.Unlock()
}

func (w *Writer) now() int64 { return int64(time.Since(w.start)) }

func (w *Writer) startLoop() {
	w.writing.Store(true)
	w.writeHeader()
	go w.loop()
}

func (w *Writer) loop() {
	defer close(w.done)
	defer w.writing.Store(false)
	batchTick := time.NewTicker(batchEvery)
	defer batchTick.Stop()
	lastFlush := time.Now()
	lastSweep := lastFlush
	var sessions []*Session
	var spare []*batch
	drain := func() {
		batches := w.takePending(spare)
		for _, b := range batches {
			w.writeBatch(b)
		}
		w.recycle(batches)
		spare = batches
	}
	for {
		select {
		case <-batchTick.C:
			if w.err != nil && w.path != "" && time.Since(w.triedAt) >= resumeEvery {
				w.resume()
			}
			if time.Since(lastSweep) >= sweepEvery {
				sessions = w.sweep(sessions)
				lastSweep = time.Now()
			}
			drain()
			if w.dirty && time.Since(lastFlush) >= flushEvery {
				w.flush()
				lastFlush = time.Now()
			}
		case <-w.wake:
			drain()
		case <-w.closing:
			drain()
			w.writeTrailer()
			w.flush()
			return
		}
	}
}

func (w *Writer) writeHeader() {
	b, _ := json.Marshal(w.header)
	w.put(append(b, '\n'), 0)
}

func (w *Writer) writeTrailer() {
	var b [maxTrailer]byte
	w.put(appendTrailer(b[:0], Trailer{T: w.now(), Events: w.events, Dropped: w.Dropped()}), 0)
}

// maxTrailer bounds the length of a trailer line; rotation keeps room for
// it.
const maxTrailer = 128

// put writes lines to the buffer, events of them (0 for the header and
// the trailer), and reports whether it could; when it could not, fail
// counted the events as dropped.
func (w *Writer) put(line []byte, events int64) bool {
	if w.err != nil {
		return false
	}
	w.unsynced += events
	if _, err := w.bw.Write(line); err != nil {
		w.fail(err)
		return false
	}
	w.written += int64(len(line))
	w.events += events
	w.dirty = true
	return true
}

func (w *Writer) flush() {
	if w.err != nil {
		return
	}
	if err := w.bw.Flush(); err != nil {
		w.fail(err)
		return
	}
	w.total.Add(w.unsynced)
	w.unsynced = 0
	w.synced = w.written
	w.dirty = false
}

// fail stops writing after an error. Of the events put since the last
// successful flush, those whose lines are whole in the file count as
// written (a writer made by Create reads them back), the others as
// dropped. The part is closed: its trailer cannot be written.
func (w *Writer) fail(err error) {
	w.err = fmt.Errorf("capture: %w", err)
	w.droppedAt = w.dropped.Load() // the resume logs what this failure lost
	if w.unsynced > 0 {
		kept := min(w.linesKept(), w.unsynced)
		w.total.Add(kept)
		w.dropped.Add(w.unsynced - kept)
		w.unsynced = 0
	}
	if w.file != nil {
		_ = w.file.Close() // the write error is the one to report
		w.file = nil
	}
	w.failures.Add(1)
	w.writing.Store(false)
	w.failedAt, w.triedAt = time.Now(), time.Now()
	args := []any{"err", err, "path", w.Path()}
	if w.path != "" {
		args = append(args, "retry_every", resumeEvery)
	}
	w.log.Error("capture stopped writing; the proxy goes on without it", args...)
}

// linesKept returns how many whole lines the current part holds after the
// bytes of the last successful flush (the header not counted): after a
// write error, the events among the unflushed ones that reached the file
// anyway. A last line without its newline counts when it is complete
// JSON, as the reader reads it. It returns 0 for a writer made by
// NewWriter, or when the file cannot be read.
func (w *Writer) linesKept() int64 {
	if w.path == "" {
		return 0
	}
	f, err := os.Open(PartPath(w.path, w.header.Part))
	if err != nil {
		return 0
	}
	defer f.Close()
	tail, err := io.ReadAll(io.NewSectionReader(f, w.synced, 1<<62))
	if err != nil {
		return 0
	}
	n := int64(bytes.Count(tail, []byte{'\n'}))
	if i := bytes.LastIndexByte(tail, '\n'); i < len(tail)-1 && json.Valid(tail[i+1:]) {
		n++
	}
	if w.synced == 0 && n > 0 {
		n-- // the header
	}
	return n
}

// resume tries to go on after a write error in the next part: it starts
// it with its header, written straight to the file. A part whose header
// could not be written is removed, and the attempt logged at Debug only:
// the failure was logged once.
func (w *Writer) resume() {
	w.triedAt = time.Now()
	part, f, err := createPart(w.path, w.header.Part+1)
	if err != nil {
		w.log.Debug("capture still cannot write", "err", err, "path", w.path)
		return
	}
	name := PartPath(w.path, part)
	h := w.header
	h.Part = part
	b, _ := json.Marshal(h)
	b = append(b, '\n')
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		if rerr := os.Remove(name); rerr != nil {
			w.log.Warn("capture could not remove a part it could not start", "err", rerr, "path", name)
		}
		w.log.Debug("capture still cannot write", "err", err, "path", name)
		return
	}
	w.header = h
	w.parts = append(w.parts, part)
	w.file, w.out = f, f
	w.bw.Reset(f)
	w.written, w.synced, w.events, w.unsynced, w.dirty = int64(len(b)), int64(len(b)), 0, 0, false
	w.err = nil
	w.resumes.Add(1)
	w.writing.Store(true)
	w.log.Info("capture resumed", "path", name, "dropped", w.dropped.Load()-w.droppedAt, "stopped_for", time.Since(w.failedAt).Round(time.Millisecond))
}

// writeBatch writes a batch's lines, its late events in their places.
func (w *Writer) writeBatch(b *batch) {
	pos, lines := 0, 0
	for i := range b.late {
		le := &b.late[i]
		w.writeLines(b.b[pos:le.at], le.lines-lines)
		pos, lines = le.at, le.lines
		w.writeLate(&le.ev)
	}
	w.writeLines(b.b[pos:], b.n-len(b.late)-lines)
	if b.end {
		w.flush()
	}
}

// fits reports whether n more bytes keep the current part within
// Options.MaxBytes (with room for the trailer).
func (w *Writer) fits(n int) bool {
	return w.opt.MaxBytes <= 0 || w.file == nil || w.written+int64(n)+maxTrailer <= w.opt.MaxBytes
}

// writeLines writes the encoded lines p, lines of them: in one piece when
// they fit in the current part (the common case), else one at a time,
// starting a new part where the current one is full. The batch knows how
// many there are: counting the newlines cost the writer as much as
// copying the bytes.
func (w *Writer) writeLines(p []byte, lines int) {
	if len(p) == 0 {
		return
	}
	if w.err == nil && w.fits(len(p)) {
		w.put(p, int64(lines))
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			i = len(p) - 1 // cannot happen: every line ends with one
		}
		w.writeLine(p[:i+1])
		p = p[i+1:]
	}
}

// writeLate encodes and writes an event the session left to the writer.
func (w *Writer) writeLate(ev *Event) {
	if w.redacted != nil && ev.SQL != "" {
		w.redact(ev)
	}
	w.buf = appendEvent(w.buf[:0], ev)
	w.writeLine(w.buf)
}

// writeLine writes one event's line.
func (w *Writer) writeLine(line []byte) {
	if w.err != nil {
		w.dropped.Add(1)
		return
	}
	if w.events > 0 && !w.fits(len(line)) {
		w.rotate()
		if w.err != nil {
			w.dropped.Add(1)
			return
		}
	}
	w.put(line, 1)
}

// redact replaces ev.SQL by its normalised form, with a bounded cache:
// most traffic repeats the same statements.
func (w *Writer) redact(ev *Event) {
	r, ok := w.redacted[ev.SQL]
	if !ok {
		norm, err := sqlparse.Normalize(ev.SQL)
		if err != nil {
			r = redaction{why: "statement does not parse; left out"}
		} else {
			r = redaction{sql: norm}
		}
		if len(w.redacted) >= 4096 {
			clear(w.redacted)
		}
		w.redacted[ev.SQL] = r
	}
	if ev.Truncated && r.why != "" {
		r.why = "statement cut short; left out"
	}
	ev.SQL, ev.Redact = r.sql, r.why
}

// rotate ends the current part with its trailer and opens the next one.
func (w *Writer) rotate() {
	w.writeTrailer()
	w.flush()
	if w.err != nil {
		return
	}
	err := w.file.Close()
	w.file = nil
	if err != nil {
		w.fail(err)
		return
	}
	part, f, err := createPart(w.path, w.header.Part+1)
	if err != nil {
		w.fail(err)
		return
	}
	w.header.Part = part
	w.parts = append(w.parts, part)
	w.file, w.out = f, f
	w.bw.Reset(f)
	w.written, w.synced, w.events = 0, 0, 0
	w.writeHeader()
}

// PartPath returns the file name of part n of the capture at path: path
// itself for part 1, otherwise the part number before the extension
// ("cap.jsonl" → "cap.2.jsonl").
func PartPath(path string, n int) string {
	if n <= 1 {
		return path
	}
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.%d%s", strings.TrimSuffix(path, ext), n, ext)
}

// SafeUpstream returns a connection string without its password: the
// password of a URL's user information is removed, and so is a
// password=… keyword of either form. A string that cannot be read is
// replaced by a placeholder rather than risk writing a password.
func SafeUpstream(s string) string {
	if s == "" {
		return ""
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return "(unreadable connection string)"
		}
		if u.User != nil {
			u.User = url.User(u.User.Username())
		}
		q := u.Query()
		if q.Has("password") {
			q.Del("password")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	// key=value form: drop the password keyword and its value.
	var out []string
	for _, f := range strings.Fields(s) {
		if strings.HasPrefix(strings.ToLower(f), "password=") {
			continue
		}
		out = append(out, f)
	}
	if strings.Contains(strings.ToLower(strings.Join(out, " ")), "password") {
		return "(connection string with a password left out)"
	}
	return strings.Join(out, " ")
}
