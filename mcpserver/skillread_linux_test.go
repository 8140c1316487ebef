package mcpserver

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readBytes is what this process has read so far (rchar of /proc/self/io).
func readBytes(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// TestSkillFileReadsOnlyItself: resources/read of one file of a skill, and
// resources/directory/read, list the skill's files without reading them.
// Each read and digested the whole skill (up to 16 MiB) first, so a small
// request for a small file cost 16 MiB of reading and SHA-256.
func TestSkillFileReadsOnlyItself(t *testing.T) {
	url, dir := serveSkills(t)
	const big = 3 << 20
	data := filepath.Join(dir, "notes/skills/pdf-processing/data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.bin", "b.bin", "c.bin", "d.bin"} {
		if err := os.WriteFile(filepath.Join(data, name), make([]byte, big), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const n = 4
	before := readBytes(t)
	for range n {
		for _, r := range []struct{ method, uri string }{
			{"resources/read", "skill://pdf-processing/references/FORMS.md"},
			{"resources/directory/read", "skill://pdf-processing/data"},
		} {
			a := rpc2026(t, url, r.method, map[string]any{"uri": r.uri})
			if a.Error != nil {
				t.Fatalf("%s %s: %+v", r.method, r.uri, a.Error)
			}
		}
	}
	// 2n requests that each read the skill's 12 MiB read 96 MiB; the
	// requests themselves read a few KiB.
	if read := readBytes(t) - before; read > 4*big {
		t.Errorf("%d reads of a small file and of a directory read %d MiB; want them to read little of the skill's %d MiB", 2*n, read>>20, 4*big>>20)
	}
}
