package catalog

// DecodeBoth decodes data with the fast decoder and with encoding/json,
// for tests that hold the two to the same result.
func DecodeBoth(data []byte) (fast *Catalog, fastOK bool, slow *Catalog, slowErr error) {
	if f, ok := decodeFast(data); ok {
		fast = &Catalog{Services: f.Services, Fingerprint: f.Fingerprint}
		fastOK = true
	}
	f, err := decodeSlow(data)
	if err != nil {
		return fast, fastOK, nil, err
	}
	return fast, fastOK, &Catalog{Services: f.Services, Fingerprint: f.Fingerprint}, nil
}

// MCPNameGeneral is MCPName without its shortcut for ordinary names.
var MCPNameGeneral = mcpName

// VerifiedFromText returns how many tools of a catalog file the fast
// decoder verifies from the file's text, without encoding them again, and
// how many tools the file holds.
func VerifiedFromText(data []byte) (matched, tools int) {
	f, ok := decodeFast(data)
	if !ok {
		return 0, -1
	}
	k := 0
	for _, s := range f.Services {
		for _, t := range s.Tools {
			if k < len(f.sums) && f.sums[k].ok && f.sums[k].matches(t.Fingerprint) {
				matched++
			}
			k++
		}
	}
	return matched, k
}

// PlainRun is plainRun, for a test against a byte-by-byte count.
var PlainRun = plainRun

// DecodeInHalves decodes data with the fast decoder, splitting the
// services array whatever its size, and reports whether it did.
func DecodeInHalves(data []byte) (c *Catalog, split, ok bool) {
	keep := parallelBytes
	parallelBytes = 0
	defer func() { parallelBytes = keep }()
	f, ok := decodeFast(data)
	if !ok {
		return nil, false, false
	}
	return &Catalog{Services: f.Services, Fingerprint: f.Fingerprint}, f.halves > 0, true
}
