package binlog

import "encoding/binary"

// idList is the ids of the jobs whose full record went into a file, in that order, as varint
// differences from the previous id: ids written in a row mostly follow one another, so a job
// costs a byte or two here instead of eight (a server holds millions).
type idList struct {
	buf  []byte
	last uint64 // the id appended last

	// The walk (next): where it is in buf and the id it read last.
	off  int
	prev uint64
}

func (l *idList) add(id uint64) {
	l.buf = binary.AppendVarint(l.buf, int64(id-l.last))
	l.last = id
}

// next returns the next id of the walk; ok is false at the end.
func (l *idList) next() (id uint64, ok bool) {
	if l.off >= len(l.buf) {
		return 0, false
	}
	d, n := binary.Varint(l.buf[l.off:])
	l.off += n
	l.prev += uint64(d)
	return l.prev, true
}
