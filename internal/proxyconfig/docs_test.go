package proxyconfig

import (
	"os"
	"strings"
	"testing"
)

// TestDocsKeyTable: the pgbouncer.ini table of docs/proxy.md says what
// pgpoolcheck does with every key of PgBouncer's file.
func TestDocsKeyTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "## pgbouncer.ini keys")
	if start < 0 {
		t.Fatal("docs/proxy.md has no pgbouncer.ini key table")
	}
	table := readme[start:]
	if end := strings.Index(table[3:], "\n## "); end >= 0 {
		table = table[:end+3]
	}
	for _, k := range pgbouncerKeys {
		if !strings.Contains(table, "`"+k+"`") {
			t.Errorf("docs/proxy.md's pgbouncer.ini table does not name %s", k)
		}
	}
}
