package lock

import "testing"

func TestMajorBumped(t *testing.T) {
	tests := []struct {
		old, new string
		want     bool
	}{
		{"1.4.0", "2.0.0", true},
		{"1.4.0", "1.5.0", false},
		{"1.4.0", "1.4.1", false},
		{"2.0.0", "1.9.0", false},
		{"0.3.0", "0.4.0", true},
		{"0.3.0", "0.3.1", false},
		{"0.9.0", "1.0.0", true},
		{"1.0.0", "2.0.0-rc.1", true},
		{"v1.2.3", "v2.0.0", true},
		{"1", "2.0.0", false}, // not semver: no bump to trust
	}
	for _, tt := range tests {
		if got := majorBumped(tt.old, tt.new); got != tt.want {
			t.Errorf("majorBumped(%q, %q) = %v, want %v", tt.old, tt.new, got, tt.want)
		}
	}
}
