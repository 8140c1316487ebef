package catalog

import "path/filepath"

// Rebase makes each service's Dir, now relative to the directory from,
// relative to the directory to: toolc build writes a catalog's
// directories relative to the catalog file, so that it finds its handlers
// wherever it is used from, and toolc diff reads them back relative to the
// working directory. A Dir that cannot be made relative becomes absolute.
func (c *Catalog) Rebase(from, to string) error {
	absTo, err := filepath.Abs(to)
	if err != nil {
		return err
	}
	for _, s := range c.Services {
		dir := filepath.FromSlash(s.Dir)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(from, dir)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(absTo, abs)
		if err != nil {
			rel = abs
		}
		s.Dir = filepath.ToSlash(rel)
	}
	return nil
}
