package archcheck

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedBytes is the largest file the repository may track: above
// it, a file is a build output or data that belongs elsewhere.
const maxTrackedBytes = 1 << 20

// executableMagic are the first bytes of the executable formats Go
// builds: ELF, Mach-O (32/64-bit, both byte orders, universal) and PE
// (an "MZ" DOS header).
var executableMagic = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xfe, 0xed, 0xfa, 0xcf},
	{0xce, 0xfa, 0xed, 0xfe}, {0xcf, 0xfa, 0xed, 0xfe},
	{0xca, 0xfe, 0xba, 0xbe},
	[]byte("MZ"),
}

// badTracked says why a tracked file must not be in git ("" when it may
// be): an executable by its first bytes, a file with the executable bit
// that is not a script ("#!"), or a file over maxTrackedBytes.
func badTracked(mode string, head []byte, size int64) string {
	for _, m := range executableMagic {
		if bytes.HasPrefix(head, m) {
			return "an executable (a build output: add it to .gitignore)"
		}
	}
	if mode == "100755" && !bytes.HasPrefix(head, []byte("#!")) {
		return "has the executable bit but is not a script (#!)"
	}
	if size > maxTrackedBytes {
		return fmt.Sprintf("%d bytes, over the %d-byte limit for tracked files", size, maxTrackedBytes)
	}
	return ""
}

// TestNoBinariesTracked refuses tracked executables and tracked files
// over 1 MiB: the repository holds sources, not build outputs or data.
func TestNoBinariesTracked(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the tracked files cannot be listed")
	}
	cmd := exec.Command("git", "-C", root, "ls-files", "--stage", "-z")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(root, ".git")); statErr != nil {
			t.Skip("not a git checkout: no tracked files to check")
		}
		t.Fatalf("git ls-files: %v\n%s", err, stderr.String())
	}
	n := 0
	for entry := range strings.SplitSeq(string(out), "\x00") {
		if entry == "" {
			continue
		}
		meta, path, ok := strings.Cut(entry, "\t")
		mode, _, _ := strings.Cut(meta, " ")
		if !ok || mode == "120000" || mode == "160000" { // symlink, submodule
			continue
		}
		f, err := os.Open(filepath.Join(root, path))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 4)
		k, _ := io.ReadFull(f, head)
		fi, err := f.Stat()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		n++
		if why := badTracked(mode, head[:k], fi.Size()); why != "" {
			t.Errorf("%s is tracked by git but is %s; remove it with git rm --cached", path, why)
		}
	}
	if n == 0 {
		t.Fatal("git lists no tracked file")
	}
}

// TestBadTrackedCatches checks the checker.
func TestBadTrackedCatches(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode string
		head string
		size int64
		bad  bool
	}{
		{"elf", "100644", "\x7fELF", 100, true},
		{"macho", "100755", "\xcf\xfa\xed\xfe", 100, true},
		{"pe", "100644", "MZ\x90\x00", 100, true},
		{"exec bit, no shebang", "100755", "pack", 100, true},
		{"script", "100755", "#!/b", 100, false},
		{"source", "100644", "pack", 100, false},
		{"large", "100644", "# ti", maxTrackedBytes + 1, true},
		{"at the limit", "100644", "# ti", maxTrackedBytes, false},
	} {
		if got := badTracked(tc.mode, []byte(tc.head), tc.size) != ""; got != tc.bad {
			t.Errorf("%s: bad = %v, want %v", tc.name, got, tc.bad)
		}
	}
}
