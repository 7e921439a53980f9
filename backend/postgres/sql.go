package postgres

import (
	"embed"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

// statements holds the embedded statements of sql/*.sql, keyed by file name without ".sql", with
// the schema and the notification channel filled in. A file with policy markers gives two: its
// name without policies, name+policySuffix with them (see variants).
type statements map[string]string

// policySuffix names a statement's variant for a store with policies (see variants).
const policySuffix = "+policies"

// Policy markers: /*P*/ ... /*-P*/ is in the variant with policies only, /*N*/ ... /*-N*/ in the
// one without only. The statements a store without policies runs are thus the same text as
// before policies existed: they cost nothing more.
var (
	policyOnly   = regexp.MustCompile(`(?s)/\*P\*/.*?/\*-P\*/`)
	noPolicyOnly = regexp.MustCompile(`(?s)/\*N\*/.*?/\*-N\*/`)
	markers      = regexp.MustCompile(`/\*-?[PN]\*/`)
)

// variants splits a statement with policy markers into its two variants; ok is false when it
// has none.
func variants(text string) (plain, policies string, ok bool) {
	if !markers.MatchString(text) {
		return text, text, false
	}
	plain = markers.ReplaceAllString(policyOnly.ReplaceAllString(text, ""), "")
	policies = markers.ReplaceAllString(noPolicyOnly.ReplaceAllString(text, ""), "")
	return plain, policies, true
}

// loadStatements reads every statement and fills in {{schema}} (the quoted schema name),
// {{channel}} (the NOTIFY channel as a string literal: identifiers cannot be query parameters) and
// {{now}} (the injected time in $1, or the database's clock at the statement's start when $1 is NULL) and {{origin}}
// (this Backend's id as a literal).
//
// Notification payloads are "<origin> <n> <tube>": n jobs became ready in tube (0: wake every
// waiter of the tube). The listener ignores its own Backend's notifications, whose waiters were
// woken directly after the commit.
func loadStatements(schema, origin string) (statements, error) {
	entries, err := sqlFiles.ReadDir("sql")
	if err != nil {
		return nil, err
	}
	st := statements{}
	for _, e := range entries {
		text, err := sqlFiles.ReadFile("sql/" + e.Name())
		if err != nil {
			return nil, err
		}
		text = []byte(strings.ReplaceAll(string(text), "{{origin}}", "'"+origin+"'"))
		name := strings.TrimSuffix(e.Name(), ".sql")
		plain, policies, ok := variants(string(text))
		st[name] = expand(plain, schema)
		if ok {
			st[name+policySuffix] = expand(policies, schema)
		}
	}
	return st, nil
}

// get returns a statement by name; a missing one is a programming error.
func (st statements) get(name string) string {
	s, ok := st[name]
	if !ok {
		panic(fmt.Sprintf("postgres: no statement sql/%s.sql", name))
	}
	return s
}

// expand fills in the template names shared by statements and migrations.
func expand(text, schema string) string {
	r := strings.NewReplacer(
		"{{schema}}", pgx.Identifier{schema}.Sanitize(),
		"{{channel}}", "'"+strings.ReplaceAll(channelName(schema), "'", "''")+"'",
		// statement_timestamp, not now(): now() is when the transaction began, and a statement
		// that follows another in a batch (promote, then reserve) would date deadlines from
		// before the first statement's lock waits.
		"{{now}}", "coalesce($1::timestamptz, statement_timestamp())",
	)
	return r.Replace(text)
}

// channelName is the LISTEN/NOTIFY channel on which statements announce tubes that got ready
// jobs. Channels are database-wide, so the schema is part of the name.
func channelName(schema string) string {
	name := "beangate_ready_" + schema
	if len(name) > 63 { // NAMEDATALEN-1: longer identifiers are truncated by the server
		name = name[:63]
	}
	return name
}
