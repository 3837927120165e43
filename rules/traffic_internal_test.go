package rules

import (
	"strings"
	"testing"
)

// TestStatementNamesDocumented checks that protocol-prepare's page lists
// every statement-name prefix the rule knows a driver by.
func TestStatementNamesDocumented(t *testing.T) {
	doc := ProtocolPrepare.Doc()
	for _, d := range drivers {
		if !strings.Contains(doc, "`"+d.prefix) {
			t.Errorf("rules/docs/protocol-prepare.md does not list %s… (%s)", d.prefix, d.driver)
		}
	}
}
