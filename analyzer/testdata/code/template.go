package gen

// versionScript is rendered with text/template before psql runs it.
const versionScript = `
set app.version = -1; -- want session-set
do $$
begin
	perform set_config('app.version', version::text, false) from {{ .VersionTable }}; -- want session-set
end
$$;
select * from {{ .VersionTable }};
`
