// Package binlog reads and writes beanstalkd's binlog: the directory of binlog.N files that
// beanstalkd 1.5–1.13 keeps with -b, in its own byte layout (version 7 written, 7 and 5 read),
// so that beanstalkd and beangate can take each other's place on one directory.
package binlog

import (
	"encoding/binary"
	"fmt"
)

// Format facts (see docs/binlog-format.md).
const (
	Version7 = 7 // written by beanstalkd 1.5–1.13, and by us
	Version5 = 5 // written by beanstalkd 1.4; read only

	jobrecSize   = 80 // the Jobrec struct as laid out on x86-64
	jobrec5Size  = 77 // version 5 stores its job struct up to and including state
	headerSize   = 4
	maxTubeName  = 200 // beanstalkd's MAX_TUBE_NAME_LEN - 1
	ShortSize    = 4 + jobrecSize
	crlf         = 2
	bodySizeSane = 1<<30 + crlf // above -z's own limit: a damaged size, not a big job
)

// State is a record's job state, as beanstalkd numbers it.
type State uint8

// The record states.
const (
	Invalid  State = 0 // the job was deleted
	Ready    State = 1
	Reserved State = 2
	Buried   State = 3
	Delayed  State = 4
	Copy     State = 5 // never written to a file; refused on read
)

func (s State) String() string {
	switch s {
	case Invalid:
		return "deleted"
	case Ready:
		return "ready"
	case Reserved:
		return "reserved"
	case Buried:
		return "buried"
	case Delayed:
		return "delayed"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Record is one Jobrec with its tube and body. A short record has no Tube and no Body. Times
// are nanoseconds: Delay and TTR durations, CreatedAt and DeadlineAt wall clock since the epoch.
// Body excludes the "\r\n" that the file stores after it (and counts in body_size).
type Record struct {
	ID         uint64
	Tube       string
	Priority   uint32
	Delay      int64
	TTR        int64
	BodySize   int32 // as stored: len(Body) + 2
	CreatedAt  int64
	DeadlineAt int64
	Reserves   uint32
	Timeouts   uint32
	Releases   uint32
	Buries     uint32
	Kicks      uint32
	State      State
	Body       []byte
}

// FullSize is the bytes a full record of a job in tube with a body of bodyLen takes.
func FullSize(tubeLen, bodyLen int) int64 {
	return int64(4 + tubeLen + jobrecSize + bodyLen + crlf)
}

// AppendFull appends r as a full record (tube, Jobrec, body and "\r\n").
func AppendFull(buf []byte, r *Record) []byte {
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(r.Tube)))
	buf = append(buf, r.Tube...)
	buf = appendJobrec(buf, r, int32(len(r.Body)+crlf))
	buf = append(buf, r.Body...)
	return append(buf, '\r', '\n')
}

// AppendShort appends r as a short record (namelen 0 and the Jobrec). bodyLen is the job's body
// length, which the Jobrec carries.
func AppendShort(buf []byte, r *Record, bodyLen int) []byte {
	buf = binary.LittleEndian.AppendUint32(buf, 0)
	return appendJobrec(buf, r, int32(bodyLen+crlf))
}

func appendJobrec(buf []byte, r *Record, bodySize int32) []byte {
	le := binary.LittleEndian
	buf = le.AppendUint64(buf, r.ID)
	buf = le.AppendUint32(buf, r.Priority)
	buf = le.AppendUint32(buf, 0)
	buf = le.AppendUint64(buf, uint64(r.Delay))
	buf = le.AppendUint64(buf, uint64(r.TTR))
	buf = le.AppendUint32(buf, uint32(bodySize))
	buf = le.AppendUint32(buf, 0)
	buf = le.AppendUint64(buf, uint64(r.CreatedAt))
	buf = le.AppendUint64(buf, uint64(r.DeadlineAt))
	buf = le.AppendUint32(buf, r.Reserves)
	buf = le.AppendUint32(buf, r.Timeouts)
	buf = le.AppendUint32(buf, r.Releases)
	buf = le.AppendUint32(buf, r.Buries)
	buf = le.AppendUint32(buf, r.Kicks)
	return append(buf, byte(r.State), 0, 0, 0)
}

// decodeJobrec fills r from a version-7 Jobrec (80 bytes) or, with micro set, a version-5 job
// struct (77 bytes, times in microseconds).
func decodeJobrec(b []byte, r *Record, micro bool) {
	le := binary.LittleEndian
	r.ID = le.Uint64(b[0:])
	r.Priority = le.Uint32(b[8:])
	r.Delay = int64(le.Uint64(b[16:]))
	r.TTR = int64(le.Uint64(b[24:]))
	r.BodySize = int32(le.Uint32(b[32:]))
	r.CreatedAt = int64(le.Uint64(b[40:]))
	r.DeadlineAt = int64(le.Uint64(b[48:]))
	r.Reserves = le.Uint32(b[56:])
	r.Timeouts = le.Uint32(b[60:])
	r.Releases = le.Uint32(b[64:])
	r.Buries = le.Uint32(b[68:])
	r.Kicks = le.Uint32(b[72:])
	r.State = State(b[76])
	if micro {
		r.Delay = int64(uint64(r.Delay) * 1000)
		r.TTR = int64(uint64(r.TTR) * 1000)
		r.CreatedAt = int64(uint64(r.CreatedAt) * 1000)
		r.DeadlineAt = int64(uint64(r.DeadlineAt) * 1000)
	}
}
