package bundle

import (
	"errors"
	"io/fs"
	"os"
)

// replaceInTwo puts the directory tmp in dir's place with two renames:
// dir aside, tmp in. If the second fails, dir is put back; between the two
// there is no dir, but never half of one.
func replaceInTwo(tmp, dir string) error {
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return os.Rename(tmp, dir)
		}
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.Rename(old, dir)
		return err
	}
	return os.RemoveAll(old)
}
