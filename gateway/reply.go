package gateway

import "strconv"

// The protocol's fixed replies, each with its CRLF: the one place they are spelled.
var (
	msgBadFormat      = []byte("BAD_FORMAT\r\n")
	msgUnknownCommand = []byte("UNKNOWN_COMMAND\r\n")
	msgExpectedCRLF   = []byte("EXPECTED_CRLF\r\n")
	msgJobTooBig      = []byte("JOB_TOO_BIG\r\n")
	msgDraining       = []byte("DRAINING\r\n")
	msgInternalError  = []byte("INTERNAL_ERROR\r\n")
	msgOutOfMemory    = []byte("OUT_OF_MEMORY\r\n")
	msgNotFound       = []byte("NOT_FOUND\r\n")
	msgTimedOut       = []byte("TIMED_OUT\r\n")
	msgDeadlineSoon   = []byte("DEADLINE_SOON\r\n")
	msgDeleted        = []byte("DELETED\r\n")
	msgReleased       = []byte("RELEASED\r\n")
	msgBuried         = []byte("BURIED\r\n")
	msgTouched        = []byte("TOUCHED\r\n")
	msgKickedJob      = []byte("KICKED\r\n")
	msgNotIgnored     = []byte("NOT_IGNORED\r\n")
	msgPaused         = []byte("PAUSED\r\n")
	msgUnauthorized   = []byte("UNAUTHORIZED\r\n")
	msgAuthenticated  = []byte("AUTHENTICATED\r\n")
)

// Words of the replies that carry values.
const (
	wordInserted = "INSERTED "
	wordUsing    = "USING "
	wordWatching = "WATCHING "
	wordKicked   = "KICKED "
	wordReserved = "RESERVED "
	wordFound    = "FOUND "
	wordOK       = "OK "
)

// appendNumberReply appends "<word><n>\r\n".
func appendNumberReply(dst []byte, word string, n uint64) []byte {
	dst = append(dst, word...)
	dst = strconv.AppendUint(dst, n, 10)
	return append(dst, '\r', '\n')
}

// appendJobReply appends "<word><id> <bytes>\r\n<body>\r\n" (RESERVED and FOUND).
func appendJobReply(dst []byte, word string, id uint64, body []byte) []byte {
	dst = append(dst, word...)
	dst = strconv.AppendUint(dst, id, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, body...)
	return append(dst, '\r', '\n')
}

// appendDataReply appends "OK <bytes>\r\n<data>\r\n" (stats and lists).
func appendDataReply(dst []byte, data []byte) []byte {
	dst = append(dst, wordOK...)
	dst = strconv.AppendInt(dst, int64(len(data)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, data...)
	return append(dst, '\r', '\n')
}
