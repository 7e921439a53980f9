package gateway

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadUint(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  uint64
		v    uint64
		rest string
		ok   bool
	}{
		{"5", math.MaxUint32, 5, "", true},
		{"  007 x", math.MaxUint32, 7, " x", true},
		{"4294967295", math.MaxUint32, 4294967295, "", true},
		{"4294967296", math.MaxUint32, 0, "", false},
		{"18446744073709551615", math.MaxUint64, math.MaxUint64, "", true},
		{"18446744073709551616", math.MaxUint64, 0, "", false},
		{"99999999999999999999999", math.MaxUint64, 0, "", false},
		{"", math.MaxUint32, 0, "", false},
		{"-1", math.MaxUint32, 0, "", false},
		{"+1", math.MaxUint32, 0, "", false},
		{"\t1", math.MaxUint32, 0, "", false},
		{"0x1", math.MaxUint32, 0, "x1", true},
	} {
		v, rest, ok := readUint([]byte(tc.in), tc.max)
		require.Equal(t, tc.ok, ok, "%q", tc.in)
		if ok {
			require.Equal(t, tc.v, v, "%q", tc.in)
			require.Equal(t, tc.rest, string(rest), "%q", tc.in)
		}
	}
}

func TestReadKickBoundIsLax(t *testing.T) {
	for _, tc := range []struct {
		in string
		v  uint32
		ok bool
	}{
		{"5", 5, true}, {"+3", 3, true}, {"-1", math.MaxUint32, true}, {"5abc", 5, true},
		{"5 6", 5, true}, {" \t5", 5, true}, {"0x10", 0, true}, {"4294967296", 0, true},
		{"abc", 0, false}, {"", 0, false}, {"18446744073709551616", 0, false}, {"- 5", 0, false},
	} {
		v, ok := readKickBound([]byte(tc.in))
		require.Equal(t, tc.ok, ok, "%q", tc.in)
		require.Equal(t, tc.v, v, "%q", tc.in)
	}
}

func TestReadReserveTimeout(t *testing.T) {
	for _, tc := range []struct {
		in string
		v  uint32
		ok bool
	}{
		{"0", 0, true}, {"2147483647", 2147483647, true}, {"2147483648", 0, false},
		{"-1", 0, false}, {"+1", 0, false}, {"", 0, false}, {"abc", 0, false},
		{"1.5", 1, true}, {"0 1", 0, true}, {" 1", 1, true},
	} {
		v, ok := readReserveTimeout([]byte(tc.in))
		require.Equal(t, tc.ok, ok, "%q", tc.in)
		require.Equal(t, tc.v, v, "%q", tc.in)
	}
}

func TestValidName(t *testing.T) {
	long := make([]byte, 201)
	for i := range long {
		long[i] = 'a'
	}
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"default", true}, {"A-z0+9/;.$_()", true}, {string(long[:200]), true}, {string(long), false},
		{"", false}, {"-x", false}, {"x-", true}, {"a b", false}, {"a:b", false}, {"é", false},
	} {
		require.Equal(t, tc.ok, validName([]byte(tc.in)), "%q", tc.in)
	}
}
