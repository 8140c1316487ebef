//go:build !unix

package runtime

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
