// Package editdist measures how far apart two names are, so that a
// diagnostic or an error can suggest the name the user probably meant.
package editdist

// Levenshtein is the Levenshtein distance between a and b, in bytes: the
// number of single-byte insertions, deletions and substitutions that turn a
// into b. Names here are ASCII, so bytes are characters.
func Levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest is the candidate nearest to name, when one is fewer than within
// edits away (the first of those nearest), or "".
func Closest(name string, candidates []string, within int) string {
	best, dist := "", within
	for _, c := range candidates {
		if d := Levenshtein(name, c); d < dist {
			best, dist = c, d
		}
	}
	return best
}
