package demo

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func itoa(n int) string { return strconv.Itoa(n) }

func createTemp(t *testing.T) (*os.File, error) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err == nil {
		t.Cleanup(func() { f.Close() })
	}
	return f, err
}
