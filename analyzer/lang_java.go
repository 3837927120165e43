package analyzer

import (
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// This file holds what scan knows of Java and Kotlin: the JDBC (and
// HikariCP) calls that set session state. Its lexer and recognisers are in
// internal/extract/java.go and internal/extract/javacalls.go.

// jdbcMethods are the JDBC methods pgjdbc turns into session-level SETs,
// and the Kotlin property that stands for one of them. Each is reported
// only on a receiver (conn.setSchema(…), never a declaration), and only
// where a false positive is unlikely:
//   - setSchema is also the name of javax.xml's Validator, Unmarshaller and
//     parser factories' setSchema(Schema): it is reported with a string
//     argument, or in a file that mentions JDBC and no XML API;
//   - setReadOnly is common in UI and file APIs (File.setReadOnly()), and
//     pgjdbc only sends a SET for it under readOnlyMode=always: it is
//     reported only in a file that sets that mode;
//   - setClientInfo sets application_name only for the property
//     "ApplicationName", so it is reported only when the first argument is
//     that literal (a Properties argument may hold it too, unseen);
//   - setTransactionIsolation is JDBC's and HikariCP's only.
var jdbcMethods = map[string]bool{
	"setSchema": true, "setTransactionIsolation": true, "setReadOnly": true, "setClientInfo": true,
	"transactionIsolation": true,
}

// javaCalls checks the JDBC calls of a Java or Kotlin file.
func (s *settingsCheck) javaCalls(lang extract.Language, lits []extract.Literal, comments []extract.Comment) {
	calls := extract.JavaCalls(s.src, lits, comments, jdbcMethods)
	if len(calls) == 0 {
		return
	}
	text := string(s.src)
	jdbcFile := strings.Contains(text, "java.sql") || strings.Contains(text, "javax.sql") || strings.Contains(text, "Connection") ||
		strings.Contains(text, "DataSource") || strings.Contains(text, "Hikari")
	xmlFile := strings.Contains(text, "javax.xml") || strings.Contains(text, "jakarta.xml") || strings.Contains(text, "org.xml.")
	readOnlyAlways := false
	for i, l := range lits {
		if strings.Contains(l.Value, "readOnlyMode=always") ||
			l.Value == "readOnlyMode" && i+1 < len(lits) && strings.EqualFold(lits[i+1].Value, "always") {
			readOnlyAlways = true
		}
	}
	for _, call := range calls {
		if call.Assign != (call.Name == "transactionIsolation") || len(call.Args) == 0 {
			continue
		}
		first := call.Args[0]
		var firstLit *extract.Literal
		if first.Lit >= 0 {
			firstLit = &lits[first.Lit]
		}
		recv := call.Name
		if call.Receiver != "" {
			recv = call.Receiver + "." + call.Name
		}
		argText := strings.TrimSpace(text[first.Start:first.End])
		stmt := recv + "(" + text[first.Start:call.End-1] + ")"
		if call.Assign {
			stmt = recv + " = " + argText
		}
		u := rules.SettingUse{Recv: recv}
		var setting string
		switch call.Name {
		case "setSchema":
			if firstLit == nil && (!jdbcFile || xmlFile) {
				continue
			}
			if t := extract.DeclaredType(lang, s.src, lits, comments, call.Receiver, call.NameStart); t != "" && !jdbcSchemaType(t) {
				continue // a model's setSchema (Table, an exporter), not JDBC's
			}
			setting = "JDBC.setSchema"
		case "setTransactionIsolation", "transactionIsolation":
			level, ok := isolationLevel(argText, firstLit)
			if !ok {
				continue // TRANSACTION_NONE: pgjdbc refuses it
			}
			setting, u.Level = "JDBC.setTransactionIsolation", level
			if call.Assign {
				setting = "Kotlin.transactionIsolation"
			}
		case "setReadOnly":
			if !readOnlyAlways {
				continue // pgjdbc's default readOnlyMode=transaction sends BEGIN READ ONLY
			}
			setting = "JDBC.setReadOnly"
		case "setClientInfo":
			if firstLit == nil || firstLit.Value != "ApplicationName" || len(call.Args) < 2 {
				continue
			}
			setting = "JDBC.setClientInfo"
		default:
			continue
		}
		lit := &extract.Literal{Start: call.NameStart, End: call.End, Segments: []extract.Segment{{Value: 0, Source: call.NameStart}}, Value: text[call.NameStart:call.End]}
		s.setting(param{lit: lit, start: 0, end: call.End - call.NameStart, text: stmt}, setting, u)
	}
}

// jdbcSchemaType reports whether a declared type may be one whose
// setSchema sets the server's search_path: a JDBC Connection (or a
// wrapper or subtype: PgConnection, HikariProxyConnection), a DataSource,
// or HikariCP's configuration. Other classes' setSchema (a table model, an
// exporter, javax.xml's validators) sets a field.
func jdbcSchemaType(t string) bool {
	for _, w := range []string{"Connection", "DataSource", "Hikari"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// isolationLevel names the level of a setTransactionIsolation argument:
// Connection.TRANSACTION_SERIALIZABLE, its value 8, or HikariCP's string
// "TRANSACTION_SERIALIZABLE". An unknown expression gives "…"; ok is
// false for TRANSACTION_NONE.
func isolationLevel(arg string, lit *extract.Literal) (string, bool) {
	if lit != nil {
		arg = lit.Value
	}
	if k := strings.LastIndexByte(arg, '.'); k >= 0 {
		arg = arg[k+1:]
	}
	switch strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(arg)), "TRANSACTION_") {
	case "NONE", "0":
		return "", false
	case "READ_UNCOMMITTED", "1":
		return "READ UNCOMMITTED", true
	case "READ_COMMITTED", "2":
		return "READ COMMITTED", true
	case "REPEATABLE_READ", "4":
		return "REPEATABLE READ", true
	case "SERIALIZABLE", "8":
		return "SERIALIZABLE", true
	}
	return "…", true
}
