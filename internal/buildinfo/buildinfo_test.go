package buildinfo

import (
	"regexp"
	"testing"
)

// A test binary has build information, with the version (devel).
func TestString(t *testing.T) {
	if got := String(); !regexp.MustCompile(`^toolc \S+ (\([0-9a-f]{1,12}(\+dirty)?\) )?go1\.\d+`).MatchString(got) {
		t.Errorf("String() = %q", got)
	}
	if got := Version(); got == "" {
		t.Error("Version() is empty")
	}
}
