package gateway

import "time"

// Compat112 is Config.Compat for answering as beanstalkd 1.12, the version many legacy clients
// were written against, so that a switch from a 1.12 server changes nothing a client sees:
//
//   - stats-job's tube, stats-tube's name, and stats' hostname, os and platform are printed
//     without quotes (1.13 quotes them; several clients then hand their users `"name"`);
//   - stats' version is "1.12";
//   - reserve-with-timeout reads its argument with C's strtol, as 1.12 did (readReserveTimeout112).
const Compat112 = "1.12"

// version is what stats reports.
func (s *Server) version() string {
	if s.v112 {
		return Compat112
	}
	return Version
}

// readReserveTimeout112 reads reserve-with-timeout's argument as beanstalkd 1.12 does: strtol
// (leading C white space, an optional sign, digits; none at all reads as 0, and whatever follows
// is ignored), BAD_FORMAT only when the number overflows a long; the value is then kept in a C
// int, truncated to 32 bits, and a negative timeout waits for ever (-1 is returned for that).
func readReserveTimeout112(b []byte) (time.Duration, bool) {
	b, neg := cSign(b)
	var v uint64
	for i := 0; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if v > (1<<63-d)/10 { // ERANGE (glibc's strtol clamps and sets errno, which 1.12 checks)
			return 0, false
		}
		v = v*10 + d
	}
	if !neg && v == 1<<63 {
		return 0, false
	}
	n := int64(v)
	if neg {
		n = -n
	}
	t := int32(n) // the C int it is stored in
	if t < 0 {
		return -1, true
	}
	return time.Duration(t) * time.Second, true
}
