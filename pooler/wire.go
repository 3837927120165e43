package pooler

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
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
	codeInvalidCatalogName  = "3D000"
	// codeObjectNotInPrerequisiteState is PostgreSQL's answer to a login to
	// a database that allows no connections.
	codeObjectNotInPrerequisiteState = "55000"
	// codeDuplicatePreparedStatement is PostgreSQL's duplicate_prepared_statement.
	codeDuplicatePreparedStatement = "42P05"
)

// errorResponse encodes an ErrorResponse with the given severity, SQLSTATE
// and message. Messages never contain passwords or parameter values.
func errorResponse(severity, code, format string, args ...any) []byte {
	return engine.ErrorResponse(severity, code, fmt.Sprintf(format, args...), "")
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
const headerLen = engine.HeaderLen
