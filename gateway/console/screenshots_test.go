package console_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// screenshots are the pictures of the console in docs/, NAME.png each, taken by the browser
// test (TestConsoleInChromium) as it goes.
var screenshots = []string{"console-overview", "console-tube", "console-job"}

// updateScreenshots is the command that redraws them.
const updateScreenshots = "UPDATE_SCREENSHOTS=1 go test -run TestConsoleInChromium ./gateway/console/"

// stampKey names the PNG text chunk that records which page a picture shows: the digest of the
// files under ui/ when it was taken.
const stampKey = "beangate-console-ui"

// screenshot saves the page under $BEANGATE_ARTIFACTS (default: the system temp dir) and, with
// UPDATE_SCREENSHOTS=1, the docs' copy under docs/, stamped with the page's digest.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	require.Contains(t, screenshots, name, "a screenshot the docs show is listed in screenshots")
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	require.NoError(t, err)
	dir := os.Getenv("BEANGATE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "beangate-console-screenshots")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, name+".png")
	require.NoError(t, os.WriteFile(path, shot, 0o644))
	t.Logf("screenshot: %s", path)
	if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		require.NoError(t, os.WriteFile(docsPicture(name), withText(t, shot, stampKey, uiDigest(t)), 0o644))
	}
}

func docsPicture(name string) string {
	return filepath.Join("..", "..", "docs", name+".png")
}

// uiDigest is the SHA-256 of the page's files (ui/), names and contents.
func uiDigest(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("ui", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	h := sha256.New()
	for _, f := range files { // Glob sorts
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		h.Write([]byte(filepath.Base(f) + "\x00"))
		h.Write(raw)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// pngSignature starts every PNG file; chunks follow, IHDR first.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// withText adds a tEXt chunk key=value right after the PNG's IHDR chunk.
func withText(t *testing.T, pic []byte, key, value string) []byte {
	t.Helper()
	require.True(t, bytes.HasPrefix(pic, pngSignature), "not a PNG")
	ihdrEnd := len(pngSignature) + 8 + int(binary.BigEndian.Uint32(pic[len(pngSignature):])) + 4
	data := append([]byte("tEXt"+key+"\x00"), value...)
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(data)-4))
	chunk = append(chunk, data...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(data))
	return slices.Concat(pic[:ihdrEnd], chunk, pic[ihdrEnd:])
}

// pngText is the value of the PNG's tEXt chunk key, or "".
func pngText(t *testing.T, pic []byte, key string) string {
	t.Helper()
	require.True(t, bytes.HasPrefix(pic, pngSignature), "not a PNG")
	for rest := pic[len(pngSignature):]; len(rest) >= 12; {
		n := int(binary.BigEndian.Uint32(rest))
		require.LessOrEqual(t, 12+n, len(rest), "a truncated chunk")
		if string(rest[4:8]) == "tEXt" {
			if k, v, _ := bytes.Cut(rest[8:8+n], []byte{0}); string(k) == key {
				return string(v)
			}
		}
		rest = rest[12+n:]
	}
	return ""
}

// The pictures in docs/ are those the browser test takes, of the page as it is now: each is
// referenced from docs/console.md, and was taken from the ui/ files of this tree (a change to
// the page without redrawing them fails here, with the command to run).
func TestScreenshotsInDocsAreCurrent(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "console.md"))
	require.NoError(t, err)
	digest := uiDigest(t)
	for _, name := range screenshots {
		t.Run(name, func(t *testing.T) {
			require.Contains(t, string(page), "("+name+".png)", "docs/console.md shows it")
			pic, err := os.ReadFile(docsPicture(name))
			require.NoError(t, err, "redraw with: %s", updateScreenshots)
			cfg, err := png.DecodeConfig(bytes.NewReader(pic))
			require.NoError(t, err)
			require.Equal(t, 1280, cfg.Width, "the browser window's width")
			require.Equal(t, digest, pngText(t, pic, stampKey),
				"docs/%s.png shows another version of the page: redraw with: %s", name, updateScreenshots)
		})
	}
	// No picture left behind from a screenshot the test no longer takes.
	found, err := filepath.Glob(filepath.Join("..", "..", "docs", "console-*.png"))
	require.NoError(t, err)
	for _, f := range found {
		require.Contains(t, screenshots, strings.TrimSuffix(filepath.Base(f), ".png"), "%s is taken by no test", f)
	}
}
