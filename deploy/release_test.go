package deploy

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The archives `make release` wrote into BEANGATE_TEST_RELEASE (.ci/image-test builds this
// machine's platform's there): SHA256SUMS matches them, each holds a static -trimpath binary
// with the documents (docs/ among them: every file the README links to) and configurations
// beside it, and the binary says what it is. Unset, the test skips, except with CI=true.
func TestReleaseArchives(t *testing.T) {
	t.Parallel()
	dist := builtBy(t, "BEANGATE_TEST_RELEASE", "make release")
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	require.NoError(t, err)
	archives, err := filepath.Glob(filepath.Join(dist, "beangate_*.tar.gz"))
	require.NoError(t, err)
	require.NotEmpty(t, archives)
	lines := strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n")
	require.Len(t, lines, len(archives), "one checksum per archive")
	for _, archive := range archives {
		raw, err := os.ReadFile(archive)
		require.NoError(t, err)
		sum := sha256.Sum256(raw)
		require.Contains(t, lines, hex.EncodeToString(sum[:])+"  "+filepath.Base(archive))
	}

	name := regexp.MustCompile(`^beangate_(v\S+)_` + runtime.GOOS + `_` + runtime.GOARCH + `\.tar\.gz$`)
	var native string
	for _, a := range archives {
		if name.MatchString(filepath.Base(a)) {
			native = a
		}
	}
	require.NotEmpty(t, native, "an archive for %s/%s", runtime.GOOS, runtime.GOARCH)
	top := strings.TrimSuffix(filepath.Base(native), ".tar.gz")
	dir := t.TempDir()
	files := untar(t, native, dir)
	want := append([]string{"CHANGELOG.md", "LICENSE", "README.md", "beangate", "beangate.example.yaml", "memory.example.yaml",
		"postgres.example.yaml", "redis.example.yaml", "systemd/beangate.service"}, docsFiles(t)...)
	require.ElementsMatch(t, want, files[top])
	// Read offline, the README's links lead to files in the archive.
	readme, err := os.ReadFile(filepath.Join(dir, top, "README.md"))
	require.NoError(t, err)
	links := localLinks(string(readme))
	require.NotEmpty(t, links)
	for _, link := range links {
		_, err := os.Stat(filepath.Join(dir, top, filepath.FromSlash(link)))
		require.NoError(t, err, "README.md links to %s", link)
	}
	binary := filepath.Join(dir, top, "beangate")

	f, err := elf.Open(binary)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, p.Type, "static: no dynamic loader")
	}
	info, err := buildinfo.ReadFile(binary)
	require.NoError(t, err)
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	require.Equal(t, "0", settings["CGO_ENABLED"])
	require.Equal(t, "true", settings["-trimpath"])

	out, err := exec.Command(binary, "-v").Output()
	require.NoError(t, err)
	version := name.FindStringSubmatch(filepath.Base(native))[1]
	require.Regexp(t, `^beangate `+regexp.QuoteMeta(strings.ReplaceAll(version, "-dirty", ""))+`([+-]dirty)? \(beanstalkd 1\.13 protocol\)\ncommit [0-9a-f]{40}`, string(out))
}

// docsFiles are the files under ../docs, as paths from the repository's root.
func docsFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir("../docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, filepath.ToSlash(strings.TrimPrefix(path, "../")))
		}
		return err
	}))
	require.NotEmpty(t, files)
	return files
}

// markdownLink is a Markdown link's target: [text](target) or ![alt](target).
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// localLinks are the targets of the document's links to files beside it (not to web pages, not
// within the page), without their #fragment.
func localLinks(doc string) []string {
	var links []string
	for _, m := range markdownLink.FindAllStringSubmatch(doc, -1) {
		target, _, _ := strings.Cut(m[1], "#")
		if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		links = append(links, target)
	}
	return links
}

// untar extracts the archive into dir and lists its regular files by top directory.
func untar(t *testing.T, archive, dir string) map[string][]string {
	t.Helper()
	in, err := os.Open(archive)
	require.NoError(t, err)
	defer in.Close()
	gz, err := gzip.NewReader(in)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	files := map[string][]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		require.NoError(t, err)
		require.Equal(t, 0, h.Uid)
		require.Equal(t, 0, h.Gid)
		require.False(t, strings.Contains(h.Name, ".."), h.Name)
		path := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(path, 0o755))
		case tar.TypeReg:
			out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode))
			require.NoError(t, err)
			_, err = io.Copy(out, tr)
			require.NoError(t, err)
			require.NoError(t, out.Close())
			top, rest, _ := strings.Cut(h.Name, "/")
			files[top] = append(files[top], rest)
		default:
			t.Fatalf("%s: unexpected entry %s", archive, h.Name)
		}
	}
}
