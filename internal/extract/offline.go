package extract

import (
	"bytes"
	"regexp"
	"strings"
)

// jvmTestAnnotation marks a JUnit (or kotlin.test) test method.
var jvmTestAnnotation = regexp.MustCompile(`@(?:Test|ParameterizedTest|RepeatedTest)\b`)

// jvmServerCalls are words in the names of the calls by which a Java or
// Kotlin test reaches a server: connecting, pools and data sources,
// running statements, transactions, migrations.
var jvmServerCalls = []string{"connect", "exec", "query", "statement", "transaction", "send", "open", "datasource",
	"pool", "session", "handle", "migrat", "flyway", "liquibase", "database", "start", "run", "await"}

// JVMOfflineTests returns the bodies of the Java and Kotlin test methods
// (@Test, @ParameterizedTest, @RepeatedTest) of a file that never reach a
// server: no call they make has a name with a word of jvmServerCalls. The
// connection strings such a test builds are only parsed and compared.
func JVMOfflineTests(src []byte, lits []Literal, comments []Comment) []Span {
	if !bytes.Contains(src, []byte("Test")) {
		return nil
	}
	code := CodeMask(src, lits, comments)
	var spans []Span
	for _, m := range jvmTestAnnotation.FindAllIndex(src, -1) {
		if !code[m[0]] {
			continue
		}
		b := bodyAfter(src, code, m[1])
		if b < 0 {
			continue
		}
		body := braceSpan(src, code, b)
		offline := true
		for k := body.Start; k < body.End && offline; k++ {
			if !code[k] || src[k] != '(' {
				continue
			}
			e := k
			for e > body.Start && (src[e-1] == ' ' || src[e-1] == '\t') {
				e--
			}
			s := e
			for s > body.Start && (src[s-1] == '_' || isIdentChar(src[s-1])) {
				s--
			}
			name := strings.ToLower(string(src[s:e]))
			for _, w := range jvmServerCalls {
				if strings.Contains(name, w) {
					offline = false
					break
				}
			}
		}
		if offline {
			spans = append(spans, body)
		}
	}
	return spans
}
