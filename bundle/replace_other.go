//go:build !linux

package bundle

// replace puts the directory tmp in dir's place.
func replace(tmp, dir string) error { return replaceInTwo(tmp, dir) }
