package ops

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
)

// maxTokenLen keeps "auth <token>" within the protocol's 224-byte line.
const maxTokenLen = 200

// Tokens are the accepted auth tokens, read from a file (one per line; blank lines and lines
// starting with # are skipped) and re-read by Reload. Only SHA-256 hashes are kept, and
// tokens never reach a log or an error message.
type Tokens struct {
	path   string
	hashes atomic.Pointer[[][sha256.Size]byte]
}

// LoadTokens reads the token file at path.
func LoadTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path}
	return t, t.Reload()
}

// Reload re-reads the file; on an error the tokens in use stay.
func (t *Tokens) Reload() error {
	hashes, err := ReadTokenHashes(t.path)
	if err != nil {
		return err
	}
	t.hashes.Store(&hashes)
	return nil
}

// ReadTokenHashes reads a token file (one token a line; blank lines and lines starting with #
// skipped) and returns the tokens' SHA-256 hashes. Its errors never quote a token.
func ReadTokenHashes(path string) ([][sha256.Size]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth token file: %w", err)
	}
	var hashes [][sha256.Size]byte
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if len(line) > maxTokenLen || bytes.ContainsAny(line, " \t\r\x00") {
			return nil, fmt.Errorf("auth token file %s line %d: a token is 1..%d bytes with no spaces", path, n+1, maxTokenLen)
		}
		hashes = append(hashes, sha256.Sum256(line))
	}
	if len(hashes) == 0 {
		return nil, errors.New("auth token file " + path + ": no token in it")
	}
	return hashes, nil
}

// Check reports whether token is accepted. It compares fixed-size hashes in constant time and
// looks at every accepted token, so neither a token's length nor which one matched shows in
// the time it takes.
func (t *Tokens) Check(token []byte) bool {
	h := sha256.Sum256(token)
	match := 0
	for _, want := range *t.hashes.Load() {
		match |= subtle.ConstantTimeCompare(h[:], want[:])
	}
	return match == 1
}
