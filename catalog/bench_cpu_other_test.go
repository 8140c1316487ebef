//go:build !unix

package catalog_test

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
