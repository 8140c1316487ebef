package cliflag

import (
	"slices"
	"testing"
)

func TestList(t *testing.T) {
	for in, want := range map[string][]string{
		"":                         nil,
		" , ,":                     nil,
		"a":                        {"a"},
		" http://a:1 ,http://b ,,": {"http://a:1", "http://b"},
	} {
		if got := List(in); !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSize(t *testing.T) {
	for in, want := range map[string]string{"-1": "-1", "256MiB": "256MiB", "1GiB": "1GiB"} {
		var s Size
		if err := s.Set(in); err != nil {
			t.Errorf("Set(%q): %v", in, err)
		} else if s.String() != want {
			t.Errorf("Set(%q) then String() = %q, want %q", in, s.String(), want)
		}
	}
	var s Size
	if err := s.Set("lots"); err == nil {
		t.Errorf("Set(\"lots\") = nil, want an error")
	}
}

func TestStrings(t *testing.T) {
	var l Strings
	for _, v := range []string{"HOME", "API_KEY,OTHER"} {
		if err := l.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(l, Strings{"HOME", "API_KEY,OTHER"}) || l.String() != "HOME,API_KEY,OTHER" {
		t.Errorf("Strings = %q, String() = %q", []string(l), l.String())
	}
}
