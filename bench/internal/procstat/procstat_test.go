package procstat

import (
	"os"
	"testing"
)

func TestReadSelf(t *testing.T) {
	s, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.PeakRSSBytes <= 0 || s.RSSBytes <= 0 || s.PeakRSSBytes < s.RSSBytes {
		t.Errorf("implausible memory: %+v", s)
	}
	m, err := ReadMachine()
	if err != nil {
		t.Fatal(err)
	}
	if m.Total <= 0 || m.Busy > m.Total {
		t.Errorf("implausible machine sample: %+v", m)
	}
	if _, err := LoadAverage(); err != nil {
		t.Error(err)
	}
}

func TestChildrenOfNobody(t *testing.T) {
	pids, err := Children(-1, "none")
	if err != nil || len(pids) != 0 {
		t.Errorf("Children(-1) = %v, %v", pids, err)
	}
}
