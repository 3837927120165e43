// Package version holds pgpoolcheck's version string.
package version

import "runtime/debug"

// Version is set at build time with -ldflags "-X …/internal/version.Version=v1.2.3";
// otherwise it comes from the module's build information.
var Version = ""

// String returns the version, "dev" for a build from a work tree.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
