package cliflag

import (
	"strings"

	"github.com/toolc/toolc/internal/inputfile"
)

// Size is a flag of a size in bytes, written as inputfile.ParseSize reads
// one (256MiB); -1 is no bound. Bind it to an int64 with
// fs.Var((*cliflag.Size)(&n), name, usage).
type Size int64

func (s *Size) String() string {
	if *s < 0 {
		return "-1"
	}
	return inputfile.FormatSize(int64(*s))
}

func (s *Size) Set(v string) error {
	if v == "-1" {
		*s = -1
		return nil
	}
	n, err := inputfile.ParseSize(v)
	if err != nil {
		return err
	}
	*s = Size(n)
	return nil
}

// List splits a comma-separated flag value into its items, each trimmed,
// leaving out the empty ones.
func List(v string) []string {
	var items []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// Strings is a flag that may be given more than once, each value kept.
type Strings []string

func (l *Strings) String() string     { return strings.Join(*l, ",") }
func (l *Strings) Set(v string) error { *l = append(*l, v); return nil }
