package pooler

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Startup packet codes (the first four bytes after the length).
const (
	codeSSLRequest    = 80877103
	codeGSSENCRequest = 80877104
	codeCancelRequest = 80877102
)

// maxStartupLen bounds a startup packet, as PostgreSQL does.
const maxStartupLen = 10000

// startupKind is what a startup packet asked for.
type startupKind int

const (
	startupMessage startupKind = iota
	startupSSL
	startupGSSENC
	startupCancel
)

// startupPacket is a decoded startup packet.
type startupPacket struct {
	kind startupKind
	// minor is the requested protocol minor version for version 3.
	minor uint32
	// params are the StartupMessage parameters.
	params map[string]string
	// cancel is the CancelRequest.
	cancel pgproto3.CancelRequest
}

// errUnsupportedProtocol is a StartupMessage for a protocol other than 3.x.
var errUnsupportedProtocol = errors.New("unsupported frontend protocol")

// readStartup reads one startup packet (length-prefixed, no type byte).
func readStartup(r io.Reader) (*startupPacket, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, err
	}
	n := int64(int32(binary.BigEndian.Uint32(lb[:])))
	if lb == [4]byte{'X', 0, 0, 0} {
		// A Terminate ('X', length 4) before any startup packet: a
		// client closed while it connected (node-postgres does so).
		// PostgreSQL just closes; an error would reach the client's
		// code as if the server had failed.
		var b [1]byte
		if _, err := io.ReadFull(r, b[:]); err != nil || b[0] == 4 {
			return nil, io.EOF
		}
	}
	if n < 8 || n > maxStartupLen {
		return nil, fmt.Errorf("invalid length of startup packet: %d", n)
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return parseStartup(body)
}

// parseStartup decodes a startup packet body.
func parseStartup(body []byte) (*startupPacket, error) {
	if len(body) < 4 {
		return nil, errors.New("startup packet too short")
	}
	code := binary.BigEndian.Uint32(body)
	switch code {
	case codeSSLRequest:
		return &startupPacket{kind: startupSSL}, nil
	case codeGSSENCRequest:
		return &startupPacket{kind: startupGSSENC}, nil
	case codeCancelRequest:
		p := &startupPacket{kind: startupCancel}
		if err := p.cancel.Decode(body); err != nil {
			return nil, err
		}
		return p, nil
	}
	if code>>16 != 3 {
		return nil, fmt.Errorf("%w %d.%d: the pooler supports protocol 3.0", errUnsupportedProtocol, code>>16, code&0xffff)
	}
	params, err := parseStartupParams(body[4:])
	if err != nil {
		return nil, err
	}
	if params["user"] == "" {
		return nil, errors.New("no PostgreSQL user name specified in startup packet")
	}
	return &startupPacket{kind: startupMessage, minor: code & 0xffff, params: params}, nil
}

// parseStartupParams decodes the name/value pairs of a StartupMessage,
// which end with an empty name.
func parseStartupParams(b []byte) (map[string]string, error) {
	params := make(map[string]string)
	for {
		i := strings.IndexByte(string(b), 0)
		if i < 0 {
			return nil, errors.New("startup packet: parameter name not terminated")
		}
		if i == 0 {
			if len(b) != 1 {
				return nil, errors.New("startup packet: bytes after the terminator")
			}
			return params, nil
		}
		name := string(b[:i])
		b = b[i+1:]
		j := strings.IndexByte(string(b), 0)
		if j < 0 {
			return nil, fmt.Errorf("startup packet: value of %q not terminated", name)
		}
		params[name] = string(b[:j])
		b = b[j+1:]
	}
}
