package runtime

import (
	"math/big"
	"strconv"
)

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
	// beyond ±expLimit it is clamped, and huge is set.
	exp  int64
	huge bool
	// src and adj recompute a clamped exponent exactly: the number's text,
	// and what the position of the first significant digit adds to the
	// written exponent.
	src []byte
	adj int64
	// ratOK says that math/big's Rat.SetString accepts the text. It refuses
	// exponents whose digits overflow an int64 and, for non-zero numbers,
	// powers of ten beyond ±1e6; jsonschema/v6 then says the number is no
	// integer, and so does the validator.
	ratOK bool
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
	fracLen := 0
	mEnd := i
	if i < len(t) && t[i] == '.' {
		i++
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		fracLen = i - intLen - intStart - 1
		mEnd = i
	}
	// Exponent.
	var e int64
	expOK := true
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
			// Whether the exponent's digits fit an int64 decides math/big.
			_, err := strconv.ParseInt(string(t[indexExp(t)+1:]), 10, 64)
			expOK = err == nil
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
		// Zero. math/big accepts it whatever the (int64) exponent.
		d.huge = false
		d.ratOK = expOK
		return d
	}
	d.m = t[first : last+1]
	d.n = last + 1 - first
	if first < intStart+intLen && last > intStart+intLen {
		d.n-- // the decimal point
	}
	d.exp = int64(intLen-k) + e
	if d.huge {
		d.src, d.adj = t, int64(intLen-k)
	}
	exp5 := e - int64(fracLen)
	d.ratOK = expOK && !d.huge && exp5 >= -1e6 && exp5 <= 1e6
	return d
}

func indexExp(t []byte) int {
	for i, c := range t {
		if c == 'e' || c == 'E' {
			return i
		}
	}
	return len(t)
}

// isInteger reports whether jsonschema/v6 takes the number for an integer:
// its value is integral and math/big can read it.
func (d *jsonDecimal) isInteger() bool {
	return d.ratOK && (d.n == 0 || d.exp >= int64(d.n))
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
	if d.huge && o.huge {
		// Both exponents were clamped; compare them exactly.
		if c := d.bigExp().Cmp(o.bigExp()); c != 0 {
			return c
		}
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

// bigExp computes a clamped exponent exactly, from the number's text.
func (d *jsonDecimal) bigExp() *big.Int {
	e := new(big.Int)
	if d.src == nil {
		return e.SetInt64(d.exp)
	}
	t := d.src[indexExp(d.src)+1:]
	if t[0] == '+' {
		t = t[1:]
	}
	e.SetString(string(t), 10)
	return e.Add(e, big.NewInt(d.adj))
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
