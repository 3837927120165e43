package rules

import (
	"fmt"
	"strings"
)

// Severity orders findings. Critical is an error with a security impact:
// one client's privileges or row-level-security context reaching another.
type Severity int

// Severities, lowest first.
const (
	Info Severity = iota + 1
	Warning
	Error
	Critical
)

var severityNames = map[Severity]string{Info: "info", Warning: "warning", Error: "error", Critical: "critical"}

func (s Severity) String() string {
	if n, ok := severityNames[s]; ok {
		return n
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity reads a severity's name (case-insensitive).
func ParseSeverity(name string) (Severity, error) {
	for s, n := range severityNames {
		if strings.EqualFold(name, n) {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q (want info, warning, error or critical)", name)
}
