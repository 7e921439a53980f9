package gateway

import "math"

// The argument readers below follow beanstalkd's exactly (docs/protocol.md §1.5): spaces (0x20
// only) may precede a number, which must then start with a digit; decimal only; no sign.

// readUint reads a number of at most max after optional spaces, returning it and the rest of
// the line. ok is false if there is no digit or the value exceeds max.
func readUint(b []byte, max uint64) (v uint64, rest []byte, ok bool) {
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	start := i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, nil, false
		}
		v = v*10 + d
	}
	if i == start || v > max {
		return 0, nil, false
	}
	return v, b[i:], true
}

// readU32 reads a 32-bit argument followed by more arguments.
func readU32(b []byte) (uint32, []byte, bool) {
	v, rest, ok := readUint(b, math.MaxUint32)
	return uint32(v), rest, ok
}

// lastU32 reads a 32-bit argument that must end the line.
func lastU32(b []byte) (uint32, bool) {
	v, rest, ok := readU32(b)
	return v, ok && len(rest) == 0
}

// lastID reads a job id (64-bit) that must end the line.
func lastID(b []byte) (uint64, bool) {
	v, rest, ok := readUint(b, math.MaxUint64)
	return v, ok && len(rest) == 0
}

// readKickBound reads kick's argument the lax way beanstalkd does (C strtoul): any leading
// white space, an optional sign (a minus negates modulo 2^64), digits up to the first non-digit,
// the rest ignored; the value is then truncated to 32 bits. Only "no digits" and overflow of 64
// bits are errors.
func readKickBound(b []byte) (uint32, bool) {
	b, neg := cSign(b)
	v, _, ok := readUint(b, math.MaxUint64)
	if !ok || len(b) == 0 || b[0] == ' ' { // readUint would skip spaces after a sign
		return 0, false
	}
	if neg {
		v = -v
	}
	return uint32(v), true
}

// cSign skips what C's strtol and strtoul read before the digits: white space (as isspace) and
// an optional sign, reported as neg.
func cSign(b []byte) (rest []byte, neg bool) {
	i := 0
	for i < len(b) && isCSpace(b[i]) {
		i++
	}
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	return b[i:], neg
}

func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// readReserveTimeout reads reserve-with-timeout's argument as beanstalkd 1.13 does: the strict
// reader, at most 2147483647 seconds, and whatever follows the number is ignored.
func readReserveTimeout(b []byte) (uint32, bool) {
	v, _, ok := readUint(b, math.MaxInt32)
	return uint32(v), ok
}

// A tube name: 1..200 bytes of A-Z a-z 0-9 - + / ; . $ _ ( ), not starting with '-'.
const maxNameLength = 200

func isNameByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '-', '+', '/', ';', '.', '$', '_', '(', ')':
		return true
	}
	return false
}

// validName reports whether b is a valid tube name.
func validName(b []byte) bool {
	if len(b) == 0 || len(b) > maxNameLength || b[0] == '-' {
		return false
	}
	for _, c := range b {
		if !isNameByte(c) {
			return false
		}
	}
	return true
}

// nameRun returns the longest leading run of name bytes in b and what follows it.
func nameRun(b []byte) (name, rest []byte) {
	i := 0
	for i < len(b) && isNameByte(b[i]) {
		i++
	}
	return b[:i], b[i:]
}
