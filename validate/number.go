package validate

import "strconv"

// jsonDecimal is a JSON number read exactly from its text, without rounding it
// to a float64: the value is ±0.D × 10^exp, where D is the significant digits
// of the text. Comparisons and equality are exact, as JSON Schema wants them.
type jsonDecimal struct {
	neg bool
	// m is the text from the first to the last significant (non-zero) digit.
	// It may hold the decimal point, which is skipped. Empty means zero.
	m []byte
	// n is the number of digits in m.
	n int
	// exp is the decimal exponent of 0.D. When the written exponent is
	// beyond ±expLimit it is clamped, and huge is set: such a number is
	// beyond every 64-bit type, and outOfType rejects it before any
	// comparison.
	exp  int64
	huge bool
}

// expLimit clamps exponents: far beyond any float64 bound, and far from
// overflowing an int64 when the mantissa's length is added.
const expLimit = 1 << 50

// parseDecimal reads t, which must be a valid JSON number.
func parseDecimal(t []byte) jsonDecimal {
	var d jsonDecimal
	i := 0
	if t[0] == '-' {
		d.neg = true
		i++
	}
	intStart := i
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	intLen := i - intStart
	mEnd := i
	if i < len(t) && t[i] == '.' {
		i++
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		mEnd = i
	}
	// Exponent.
	var e int64
	if i < len(t) {
		i++ // 'e' or 'E'
		eneg := false
		if t[i] == '+' || t[i] == '-' {
			eneg = t[i] == '-'
			i++
		}
		for ; i < len(t); i++ {
			if e < expLimit {
				e = e*10 + int64(t[i]-'0')
			}
		}
		if e >= expLimit {
			e = expLimit
			d.huge = true
		}
		if eneg {
			e = -e
		}
	}
	// Significant digits.
	first, last := -1, -1
	k, pos := 0, 0 // k counts digits before first
	for j := intStart; j < mEnd; j++ {
		c := t[j]
		if c == '.' {
			continue
		}
		if c != '0' {
			if first < 0 {
				first = j
				k = pos
			}
			last = j
		}
		pos++
	}
	if first < 0 {
		d.huge = false // zero, whatever the exponent
		return d
	}
	d.m = t[first : last+1]
	d.n = last + 1 - first
	if first < intStart+intLen && last > intStart+intLen {
		d.n-- // the decimal point
	}
	d.exp = int64(intLen-k) + e
	return d
}

// isIntegral reports whether the number's value is an integer, of any size.
func (d *jsonDecimal) isIntegral() bool {
	return d.n == 0 || d.exp >= int64(d.n)
}

// fitsFloat64 reports whether the number t is within the range of a
// float64. strconv.ParseFloat decides, as it does in the handler's decoder,
// which reads a number too close to zero as 0; only numbers near either
// edge need it.
func (d *jsonDecimal) fitsFloat64(t []byte) bool {
	if d.n == 0 || !d.huge && d.exp > -300 && d.exp < 300 {
		return true
	}
	_, err := strconv.ParseFloat(string(t), 64)
	return err == nil
}

// int64 returns the value if it is an integer that fits in an int64.
func (d *jsonDecimal) int64() (int64, bool) {
	if d.n == 0 {
		return 0, true
	}
	if d.huge || d.exp < int64(d.n) || d.exp > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range d.m {
		if c != '.' {
			u = u*10 + uint64(c-'0')
		}
	}
	for range d.exp - int64(d.n) {
		if u > (1<<63)/10 {
			return 0, false
		}
		u *= 10
	}
	if d.neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

func (d *jsonDecimal) sign() int {
	switch {
	case d.n == 0:
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// cmp compares two numbers exactly: -1, 0 or +1.
func (d *jsonDecimal) cmp(o *jsonDecimal) int {
	ds, os := d.sign(), o.sign()
	if ds != os || ds == 0 {
		return compareInts(ds, os)
	}
	c := d.cmpAbs(o)
	if ds < 0 {
		return -c
	}
	return c
}

func (d *jsonDecimal) cmpAbs(o *jsonDecimal) int {
	if d.exp != o.exp {
		return compareInts64(d.exp, o.exp)
	}
	i, j := 0, 0
	for {
		for i < len(d.m) && d.m[i] == '.' {
			i++
		}
		for j < len(o.m) && o.m[j] == '.' {
			j++
		}
		switch {
		case i == len(d.m) && j == len(o.m):
			return 0
		case i == len(d.m):
			return -1
		case j == len(o.m):
			return 1
		case d.m[i] != o.m[j]:
			return compareInts(int(d.m[i]), int(o.m[j]))
		}
		i++
		j++
	}
}

func compareInts(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareInts64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
