package cliflag

import (
	"bytes"
	"flag"
	"io"
	"slices"
	"testing"
)

func flags() *flag.FlagSet {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("format", "text", "output format")
	fs.String("against", "", "compare with `FILE`")
	fs.Bool("v", false, "say more")
	fs.Int("n", 0, "at most n")
	return fs
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args, want []string
	}{
		{[]string{"./a", "--format", "json", "./b"}, []string{"./a", "./b"}},
		{[]string{"-v", "-", "./a"}, []string{"-", "./a"}},
		{[]string{"./a", "--", "-v", "--format"}, []string{"./a", "-v", "--format"}},
	} {
		got, err := Parse(flags(), tc.args)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Parse(%q) = %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
	if _, err := Parse(flags(), []string{"./a", "-h"}); !IsHelp(err) {
		t.Errorf("Parse(-h) = %v, want the help error", err)
	}
	if _, err := Parse(flags(), []string{"--nope"}); err == nil || IsHelp(err) {
		t.Errorf("Parse(--nope) = %v, want an error", err)
	}
}

func TestUsage(t *testing.T) {
	const synopsis = "[--format text|json] {flags} [PATTERN...]"
	if got, want := UsageLine(flags(), synopsis), "diff [--format text|json] [--against FILE] [-n N] [-v] [PATTERN...]"; got != want {
		t.Errorf("UsageLine:\n got %s\nwant %s", got, want)
	}
	var b bytes.Buffer
	PrintDefaults(&b, flags(), synopsis)
	want := "  --against FILE\n    \tcompare with FILE\n" +
		"  --format text|json\n    \toutput format (default \"text\")\n" +
		"  -n N\n    \tat most n\n" +
		"  -v\n    \tsay more\n"
	if b.String() != want {
		t.Errorf("PrintDefaults:\n%s\nwant:\n%s", b.String(), want)
	}

	// A default that the usage text names is not printed: it comes from
	// the environment, and may be a secret.
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.String("token", "s3cret", "require this token (default $TOKEN)")
	b.Reset()
	PrintDefaults(&b, fs, "{flags}")
	if got := b.String(); got != "  --token VALUE\n    \trequire this token (default $TOKEN)\n" {
		t.Errorf("PrintDefaults of a default from the environment: %q", got)
	}
}
