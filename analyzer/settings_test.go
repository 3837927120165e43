package analyzer_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/analyzer"
	"github.com/pgpoolcheck/pgpoolcheck/internal/extract"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// TestConfigSettings checks what configuration files report, per target:
// each finding as rule:severity@line:column.
func TestConfigSettings(t *testing.T) {
	for _, c := range []struct {
		name, file, src string
		target          rules.Target
		want            []string
	}{
		{name: "env url options", file: ".env",
			src:  "# app\nDATABASE_URL=postgres://app:pw@db/app?options=-c%20search_path%3Dtenant\n",
			want: []string{"startup-parameter:error@2:47"}},
		{name: "env tracked setting kept by pgbouncer", file: ".env",
			src: "DATABASE_URL=postgres://db/app?options=-c%20TimeZone%3DUTC\n", want: nil},
		{name: "env tracked setting refused by pgbouncer before 1.20", file: ".env", target: rules.PgBouncerLegacy,
			src: "DATABASE_URL=postgres://db/app?options=-c%20TimeZone%3DUTC\n", want: []string{"startup-parameter:error@1:40"}},
		{name: "extra_float_digits is a warning", file: "prod.env",
			src: "PG=host=db dbname=app extra_float_digits=3\n", want: []string{"startup-parameter:warning@1:23"}},
		{name: "properties jdbc", file: "application.properties",
			src:  "spring.datasource.url=jdbc\\:postgresql\\://db/app?currentSchema=tenant&prepareThreshold=5&ApplicationName=web\n",
			want: []string{"startup-parameter:error@1:50", "protocol-prepare:info@1:71"}},
		{name: "properties jdbc legacy", file: "application.properties", target: rules.PgBouncerLegacy,
			src:  "spring.datasource.url=jdbc:postgresql://db/app?prepareThreshold=5\n",
			want: []string{"protocol-prepare:error@1:48"}},
		{name: "prepareThreshold=0 is the fix", file: "application.properties", target: rules.PgBouncerLegacy,
			src: "url=jdbc:postgresql://db/app?prepareThreshold=0\n", want: nil},
		{name: "data source properties", file: "application.properties",
			src:  "spring.datasource.hikari.data-source-properties.currentSchema=app\ndataSource.prepareThreshold=0\nspring.datasource.hikari.schema=app\nspring.datasource.hikari.transaction-isolation=TRANSACTION_SERIALIZABLE\n",
			want: []string{"startup-parameter:error@1:63", "session-set:critical@3:33", "session-set:error@4:48"}},
		{name: "readOnlyMode always", file: "application.yml",
			src:  "spring:\n  datasource:\n    url: \"jdbc:postgresql://db/app?readOnlyMode=always\"\n",
			want: []string{"session-set:error@3:36"}},
		{name: "appsettings npgsql", file: "appsettings.Production.json",
			src:  "{\n  \"ConnectionStrings\": {\n    \"Default\": \"Host=db;Database=app;Password=pw;Search Path=tenant;Max Auto Prepare=10\"\n  }\n}\n",
			want: []string{"startup-parameter:error@3:50", "protocol-prepare:info@3:69"}},
		{name: "appsettings npgsql pgdog", file: "appsettings.json", target: rules.PgDog,
			src:  "{\"ConnectionStrings\": {\"Default\": \"Host=db;Database=app;Search Path=tenant;Options=-c statement_timeout=5s\"}}",
			want: []string{"startup-parameter:info@1:57", "startup-parameter:info@1:84"}},
		{name: "rds proxy pins", file: ".env", target: rules.RDSProxy,
			src: "URL=postgres://db/app?search_path=x\n", want: []string{"startup-parameter:warning@1:23"}},
		{name: "rails database.yml", file: "config/database.yml",
			src:  "default: &default\n  adapter: postgresql\n\nproduction:\n  <<: *default\n  schema_search_path: \"app,public\"\n  variables:\n    statement_timeout: 5000\n    lock_timeout: default\n  options: -c work_mem=64MB\n",
			want: []string{"session-set:critical@6:24", "session-set:error@8:24", "startup-parameter:error@10:12"}},
		{name: "rails database.yml for mysql", file: "config/database.yml",
			src: "production:\n  adapter: mysql2\n  variables:\n    sql_mode: TRADITIONAL\n", want: nil},
		{name: "variables outside database.yml", file: "config/app.yml",
			src: "production:\n  adapter: postgresql\n  variables:\n    statement_timeout: 5000\n", want: nil},
		{name: "compose environment", file: "docker-compose.yml",
			src:  "services:\n  web:\n    environment:\n      - DATABASE_URL=postgres://db/app?options=-c%20search_path%3Dx\n",
			want: []string{"startup-parameter:error@4:48"}},
		{name: "ignore directive", file: "docker-compose.yml",
			src: "services:\n  web:\n    environment:\n      # pgpoolcheck:ignore startup-parameter connects to PostgreSQL directly\n      - DATABASE_URL=postgres://db/app?search_path=x\n", want: nil},
		{name: "unused ignore directive", file: ".env",
			src: "# pgpoolcheck:ignore startup-parameter nothing here\nA=1\n", want: []string{"unused-ignore:info@1:1"}},
		{name: "not a connection string", file: "values.yaml",
			src: "image: postgres:16\nargs: [\"-c\", \"search_path=x\"]\nhost: db\n", want: nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, ok := extract.ConfigFormatFor(c.file)
			if !ok {
				t.Fatalf("%s is no configuration file", c.file)
			}
			cfg := &analyzer.Config{Target: c.target}
			res := cfg.AnalyzeConfig(c.file, []byte(c.src), f)
			var got []string
			for _, fd := range analyzer.Sort(res.Findings) {
				got = append(got, fd.Rule+":"+fd.Severity.String()+"@"+itoa(fd.Line)+":"+itoa(fd.Column))
				if strings.Contains(fd.SourceLine, "pw@") || strings.Contains(fd.SourceLine, "Password=pw") {
					t.Errorf("password shown in %q", fd.SourceLine)
				}
				if fd.Message == "" || fd.Fix == "" || fd.Statement == "" && fd.Rule != rules.UnusedIgnore.ID {
					t.Errorf("finding without message, fix or statement: %+v", fd)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestSettingsMessages checks what a finding says: the parameter, what the
// target does with it, and the fix.
func TestSettingsMessages(t *testing.T) {
	cfg := &analyzer.Config{}
	res := cfg.AnalyzeConfig(".env", []byte("DB=postgres://u:secret@db/app?options=-c%20search_path%3Dtenant\n"), extract.DotEnv)
	if len(res.Findings) != 1 {
		t.Fatalf("got %+v", res.Findings)
	}
	f := res.Findings[0]
	for _, want := range []string{"search_path=tenant", "refuses the connection", "drops it silently"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q lacks %q", f.Message, want)
		}
	}
	for _, want := range []string{"ALTER ROLE", "ignore_startup_parameters", "preserve"} {
		if !strings.Contains(f.Fix, want) {
			t.Errorf("fix %q lacks %q", f.Fix, want)
		}
	}
	if want := "DB=postgres://u:******@db/app?options=-c%20search_path%3Dtenant"; f.SourceLine != want {
		t.Errorf("source line %q, want %q", f.SourceLine, want)
	}
	if f.Statement != "options=-c search_path=tenant" {
		t.Errorf("statement %q", f.Statement)
	}

	// Disabled rules report nothing.
	cfg = &analyzer.Config{Rules: []*rules.Rule{rules.SessionSet}}
	if res := cfg.AnalyzeConfig(".env", []byte("DB=postgres://db/app?search_path=x\n"), extract.DotEnv); len(res.Findings) != 0 {
		t.Errorf("disabled startup-parameter reported: %+v", res.Findings)
	}
}
