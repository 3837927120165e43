package rules

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// keywords are lower-case words of which at least one appears in the text
// of every statement any SQL rule reports (effects.InText). They let the
// analyzer skip work (routine bodies, tree walks) on text that cannot
// produce a finding.
var keywords = effects.Keywords(effects.InText)

// contextKeywords mark text whose findings depend on other statements of
// the same transaction (effects.InContext), so all of its statements must
// be kept.
var contextKeywords = effects.Keywords(effects.InContext)

// Relevant reports whether lower-case text may hold a statement that an
// SQL rule reports.
func Relevant(lower string) bool { return containsAny(lower, keywords) }

// NeedsContext reports whether lower-case text holds statements whose
// findings depend on the other statements of their transaction.
func NeedsContext(lower string) bool { return containsAny(lower, contextKeywords) }

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// Inert reports whether no SQL rule can report anything about st when it
// runs alone in its own transaction: it calls none of the functions rules
// look for, and it is a kind of statement no rule inspects (DDL on regular
// objects, plain queries and DML). The analyzer skips the rules for such
// statements; for kinds not listed here the rules run.
func Inert(st *Stmt) bool {
	if st.Node == nil || len(st.mentioned) > 0 {
		return st.Node == nil
	}
	switch n := st.Node.Node.(type) {
	case *pg.Node_SelectStmt:
		return n.SelectStmt.IntoClause == nil
	case *pg.Node_CreateStmt, *pg.Node_CreateEnumStmt, *pg.Node_CompositeTypeStmt,
		*pg.Node_DefineStmt, *pg.Node_CreateDomainStmt:
		_, _, _, temp := effects.CreatedTemp(st.Node) // objects in schema pg_temp
		return !temp
	case *pg.Node_InsertStmt, *pg.Node_DeleteStmt, *pg.Node_CopyStmt,
		*pg.Node_IndexStmt, *pg.Node_AlterTableStmt, *pg.Node_CommentStmt,
		*pg.Node_GrantStmt, *pg.Node_GrantRoleStmt, *pg.Node_AlterOwnerStmt,
		*pg.Node_CreateTrigStmt, *pg.Node_AlterSeqStmt, *pg.Node_CreateExtensionStmt,
		*pg.Node_AlterDefaultPrivilegesStmt, *pg.Node_CreateSchemaStmt,
		*pg.Node_DropStmt, *pg.Node_TruncateStmt,
		*pg.Node_VacuumStmt, *pg.Node_ClusterStmt, *pg.Node_ReindexStmt,
		*pg.Node_CreatePolicyStmt, *pg.Node_AlterPolicyStmt, *pg.Node_RenameStmt:
		return true
	}
	return false
}
