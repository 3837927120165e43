package cli

import "testing"

// TestLanguageOf checks which files directory walks pick up, and as what:
// configuration files are "config" (read for connection strings only),
// except pgpoolcheck's own.
func TestLanguageOf(t *testing.T) {
	for path, want := range map[string]string{
		"db/001.sql":                 "sql",
		"app/Repo.java":              "java",
		"web/api.tsx":                "typescript",
		".env":                       "config",
		"deploy/.env.production":     "config",
		"src/application.properties": "config",
		"config/database.yml":        "config",
		"k8s/deploy.yaml":            "config",
		"Api/appsettings.json":       "config",
		".pgpoolcheck.yaml":          "",
		"sub/.pgpoolcheck.yml":       "",
		"package.json":               "",
		"notes.txt":                  "",
	} {
		if got := languageOf(path); got != want {
			t.Errorf("languageOf(%q) = %q, want %q", path, got, want)
		}
	}
}
