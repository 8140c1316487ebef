package oauth

// SignatureChecks is how many tokens v has checked the signature of,
// rather than found among those it remembers.
func SignatureChecks(v *Verifier) int64 { return v.checks.Load() }

// Remembered is how many tokens v remembers.
func Remembered(v *Verifier) int { return v.verified.Len() }
