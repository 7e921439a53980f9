package backend

import (
	"fmt"
	"strconv"
	"strings"
)

// A cursor names the place of a listed job in its state's order: the state, the job's sort key
// there (priority, due time, bury sequence or deadline, as each store counts it) and its id. It
// is opaque to callers; stores make and read it with these two functions.

// EncodeCursor makes the cursor of a job of state with sort key key and id id.
func EncodeCursor(state State, key int64, id uint64) string {
	return fmt.Sprintf("%s.%d.%d", state, key, id)
}

// DecodeCursor reads a cursor made by EncodeCursor for state; ErrBadCursor otherwise.
func DecodeCursor(cursor string, state State) (key int64, id uint64, err error) {
	parts := strings.Split(cursor, ".")
	if len(parts) != 3 || parts[0] != state.String() {
		return 0, 0, ErrBadCursor
	}
	key, err1 := strconv.ParseInt(parts[1], 10, 64)
	id, err2 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, ErrBadCursor
	}
	return key, id, nil
}

// ClampLimit brings a ListJobs or bulk limit into 1..most.
func ClampLimit(n, most int) int { return min(max(n, 1), most) }
