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
