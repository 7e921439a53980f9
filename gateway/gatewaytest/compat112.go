package gatewaytest

import "regexp"

// yamlName112 is a quoted name in stats-job (tube) or stats-tube (name): 1.12 prints it plain.
var yamlName112 = regexp.MustCompile(`(?m)^(tube|name): "([^"\n]*)"$`)

// As112 turns a transcript's expected bytes into beanstalkd 1.12's: tube and tube names in
// stats-job and stats-tube unquoted (stats' version, hostname, os and platform are {*} in the
// patterns already).
func As112(tr Transcript) Transcript {
	out := tr
	out.Steps = make([]Step, len(tr.Steps))
	for i, st := range tr.Steps {
		st.Expect = yamlName112.ReplaceAllString(st.Expect, `$1: $2`)
		out.Steps[i] = st
	}
	return out
}

// Transcripts112 are 1.12 behaviour that 1.13 changed, played in 1.12 mode (--compat 1.12)
// and against Debian's 1.12.
func Transcripts112() []Transcript {
	return []Transcript{
		// strtol: no digits read as 0, a sign is allowed, what follows is ignored, only an
		// overflow of a long is BAD_FORMAT; the value is kept in a C int and a negative one
		// waits for ever.
		{Name: "ReserveWithTimeoutArgument112", Steps: []Step{
			{Send: "reserve-with-timeout \r\n", Expect: "TIMED_OUT\r\n"},
			{Send: "reserve-with-timeout abc\r\n", Expect: "TIMED_OUT\r\n"},
			{Send: "reserve-with-timeout 0x\r\n", Expect: "TIMED_OUT\r\n"},
			{Send: "reserve-with-timeout 0 1\r\n", Expect: "TIMED_OUT\r\n"},
			{Send: "reserve-with-timeout -0\r\n", Expect: "TIMED_OUT\r\n"},
			{Send: "reserve-with-timeout  \t0\r\n", Expect: "TIMED_OUT\r\n"},
			{Send: "reserve-with-timeout 4294967296\r\n", Expect: "TIMED_OUT\r\n"},
			{Send: "reserve-with-timeout 99999999999999999999\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "reserve-with-timeout -9223372036854775809\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "reserve-with-timeout +1\r\n", Expect: "TIMED_OUT\r\n"},
			// Waits for ever: nothing comes back; a put ends the wait.
			// Waits for ever: nothing comes back (conns 2 and 3 on a tube of their own); a put
			// ends conn 1's wait.
			{Conn: 1, Send: "reserve-with-timeout -1\r\n", Expect: ""},
			{Conn: 2, Send: "watch other\r\nignore default\r\n", Expect: "WATCHING 2\r\nWATCHING 1\r\n"},
			{Conn: 2, Send: "reserve-with-timeout 2147483648\r\n", Expect: ""},
			{Conn: 3, Send: "watch other\r\nignore default\r\n", Expect: "WATCHING 2\r\nWATCHING 1\r\n"},
			{Conn: 3, Send: "reserve-with-timeout -2147483649\r\n", Expect: ""},
			{Conn: 4, Send: "put 0 0 10 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
			{Conn: 1, Expect: "RESERVED 1 1\r\nx\r\n"},
			{Conn: 1, Then: Close},
			{Conn: 2, Then: Close},
			{Conn: 3, Then: Close},
		}},
	}
}
