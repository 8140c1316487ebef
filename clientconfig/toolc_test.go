package clientconfig

import "testing"

// TestGoRunToolcRefused: go run's build directory is gone when it exits,
// so a configuration naming it would start nothing.
func TestGoRunToolcRefused(t *testing.T) {
	for exe, bad := range map[string]bool{
		"/tmp/go-build2718281828/b001/exe/toolc": true,
		"/home/ada/go/bin/toolc":                 false,
		"/opt/go-builders/toolc":                 false,
	} {
		if err := goRunBuild(exe); (err != nil) != bad {
			t.Errorf("goRunBuild(%s) = %v, want an error %v", exe, err, bad)
		}
	}
}

// TestDefaultName: the project's directory name, or the bundle's, in the
// characters every client accepts.
func TestDefaultName(t *testing.T) {
	for _, tc := range []struct{ dir, bundle, want string }{
		{"/src/my-tools", "", "my-tools"},
		{"/src/my tools (copy)", "", "my-tools-copy"},
		{"/src/my-tools", "/dist/weather.v2", "weather-v2"},
		{"/src/ünï", "", "n"},
		{"/", "", "toolc"},
	} {
		if got := DefaultName(tc.dir, tc.bundle); got != tc.want {
			t.Errorf("DefaultName(%q, %q) = %q, want %q", tc.dir, tc.bundle, got, tc.want)
		}
	}
}
