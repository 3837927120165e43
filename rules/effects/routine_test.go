package effects

import (
	"reflect"
	"testing"
)

func TestRoutine(t *testing.T) {
	def := func(lang, body string) string {
		return "CREATE OR REPLACE FUNCTION public.f(a integer)\n RETURNS integer\n LANGUAGE " + lang + "\nAS $function$" + body + "$function$\n"
	}
	cases := []struct {
		name, def string
		clean     bool
		calls     []string
		opaque    bool
		params    []string
	}{
		{"sql plain", def("sql", "SELECT a + 1"), true, nil, false, nil},
		{"sql calls builtins", def("sql", "SELECT abs(a) + length(now()::text)"), true, nil, false, nil},
		{"sql calls user routine", def("sql", "SELECT g(a) + app.h(a)"), true, []string{"g", "app.h"}, false, nil},
		{"sql set_config", def("sql", "SELECT set_config('search_path', 'evil', false)::int"), false, nil, false, []string{"search_path"}},
		{"sql advisory lock", def("sql", "SELECT pg_advisory_lock(a)::text::int"), false, nil, false, nil},
		{"sql xact lock", def("sql", "SELECT pg_advisory_xact_lock(a)::text::int"), true, nil, false, nil},
		{"plpgsql plain", def("plpgsql", "DECLARE b int; BEGIN b := a * 2; RETURN b + 1; END"), true, nil, false, nil},
		{"plpgsql perform user", def("plpgsql", "BEGIN PERFORM g(a); RETURN 1; END"), true, []string{"g"}, false, nil},
		{"plpgsql temp table", def("plpgsql", "BEGIN CREATE TEMP TABLE x(i int); RETURN 1; END"), false, nil, false, nil},
		{"plpgsql temp table on commit drop", def("plpgsql", "BEGIN CREATE TEMP TABLE x(i int) ON COMMIT DROP; RETURN 1; END"), false, nil, false, nil},
		{"plpgsql listen", def("plpgsql", "BEGIN LISTEN ch; RETURN 1; END"), false, nil, false, nil},
		{"plpgsql execute", def("plpgsql", "BEGIN EXECUTE 'SELECT 1'; RETURN 1; END"), false, nil, true, nil},
		{"plpgsql execute of run-time text", def("plpgsql", "BEGIN EXECUTE q; RETURN 1; END"), false, nil, true, nil},
		{"plpgsql set", def("plpgsql", "BEGIN SET search_path = evil; RETURN 1; END"), false, nil, false, []string{"search_path"}},
		{"sql set_config of a run-time name", def("sql", "SELECT set_config(a::text, 'x', false)::int"), false, nil, true, nil},
		{"plpgsql set local", def("plpgsql", "BEGIN SET LOCAL work_mem = '1MB'; RETURN 1; END"), false, nil, false, []string{"work_mem"}},
		{"plpgsql that does not compile", def("plpgsql", "BEGIN RETURN undeclared_var; END IF; END"), false, nil, true, nil},
		{"C function", "CREATE OR REPLACE FUNCTION public.f(integer)\n RETURNS integer\n LANGUAGE c\nAS '$libdir/x', $function$f$function$\n", false, nil, true, nil},
		{"plpython", def("plpython3u", "return 1"), false, nil, true, nil},
		{"not a definition", "SELECT 1", false, nil, true, nil},
		{"malformed", "CREATE FUNCTION", false, nil, true, nil},
		{"procedure", "CREATE OR REPLACE PROCEDURE public.p(k bigint)\n LANGUAGE plpgsql\nAS $procedure$BEGIN PERFORM pg_advisory_lock(k); END$procedure$\n", false, nil, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Routine(tc.def)
			want := RoutineInfo{Clean: tc.clean, Opaque: tc.opaque, Params: tc.params, Calls: tc.calls}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Routine = %+v, want %+v", got, want)
			}
		})
	}
}
