package pooler

import (
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
)

// SQLSTATE codes the pooler sends itself.
const (
	codeProtocolViolation   = "08P01"
	codeConnectionFailure   = "08006"
	codeTooManyConnections  = "53300"
	codeInvalidPassword     = "28P01"
	codeInvalidAuth         = "28000"
	codeFeatureNotSupported = "0A000"
	codeAdminShutdown       = "57P01"
	codeCannotConnectNow    = "57P03"
	// codeDuplicatePreparedStatement is PostgreSQL's duplicate_prepared_statement.
	codeDuplicatePreparedStatement = "42P05"
)

// errorResponse encodes an ErrorResponse with the given severity, SQLSTATE
// and message. Messages never contain passwords or parameter values.
func errorResponse(severity, code, format string, args ...any) []byte {
	msg := &pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                code,
		Message:             fmt.Sprintf(format, args...),
	}
	b, err := msg.Encode(nil)
	if err != nil {
		panic(err) // only fails for messages longer than 1 GB
	}
	return b
}

// errorResponseHint encodes an ErrorResponse with a hint.
func errorResponseHint(severity, code, message, hint string) []byte {
	msg := &pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                code,
		Message:             message,
		Hint:                hint,
	}
	b, err := msg.Encode(nil)
	if err != nil {
		panic(err)
	}
	return b
}

// fatal encodes a FATAL ErrorResponse.
func fatal(code, format string, args ...any) []byte {
	return errorResponse("FATAL", code, format, args...)
}

// encode appends the encoding of msgs to dst.
func encode(dst []byte, msgs ...pgproto3.Message) []byte {
	for _, m := range msgs {
		var err error
		dst, err = m.Encode(dst)
		if err != nil {
			panic(err)
		}
	}
	return dst
}

// headerLen is the size of a regular message header: type and length.
const headerLen = 5

// parseHeader reads a regular (post-startup) message header and returns
// the message type and the body length. It fails for a length field below
// 4 and for bodies larger than max.
func parseHeader(h []byte, max int) (typ byte, bodyLen int, err error) {
	if len(h) < headerLen {
		return 0, 0, fmt.Errorf("short message header (%d bytes)", len(h))
	}
	n := int64(int32(binary.BigEndian.Uint32(h[1:5])))
	if n < 4 {
		return 0, 0, fmt.Errorf("invalid message length %d", n)
	}
	if n-4 > int64(max) {
		return 0, 0, &tooLargeError{typ: h[0], size: n - 4, max: max}
	}
	return h[0], int(n - 4), nil
}

// tooLargeError is a message over the configured maximum size.
type tooLargeError struct {
	typ  byte
	size int64
	max  int
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("message of type %q is %d bytes, more than the maximum of %d", e.typ, e.size, e.max)
}

// isFrontendType reports whether typ is a message type a client may send
// after login (authentication messages are not among them).
func isFrontendType(typ byte) bool {
	switch typ {
	case 'Q', 'P', 'B', 'D', 'E', 'C', 'S', 'H', 'X', 'd', 'c', 'f', 'F':
		return true
	}
	return false
}
