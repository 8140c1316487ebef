package editdist

import "testing"

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"query_weather", "query_wether", 1},
		{"get-sum", "get_sum", 1},
		{"ab", "ba", 2},
	} {
		if got := Levenshtein(tc.a, tc.b); got != tc.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"check", "build", "bundle", "serve"}
	for _, tc := range []struct {
		name   string
		within int
		want   string
	}{
		{"chek", 3, "check"},
		{"bundel", 3, "bundle"},
		{"deploy", 3, ""},
		{"serve", 1, "serve"},
		{"serf", 1, ""},
	} {
		if got := Closest(tc.name, names, tc.within); got != tc.want {
			t.Errorf("Closest(%q, %d) = %q, want %q", tc.name, tc.within, got, tc.want)
		}
	}
}
