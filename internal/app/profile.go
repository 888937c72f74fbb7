package app

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// Profiles writes a CPU profile while the manager runs and a heap profile
// when it stops (kuota-manager --cpuprofile, --memprofile: the flags of
// Kueue's minimalkueue, which Kueue's scalability runner passes to the
// manager it starts with --withCPUProfile).
type Profiles struct {
	cpu     *os.File
	memPath string
}

// StartProfiles starts the CPU profile into cpuPath and notes memPath for
// Stop; either may be empty.
func StartProfiles(cpuPath, memPath string) (*Profiles, error) {
	p := &Profiles{memPath: memPath}
	if cpuPath == "" {
		return p, nil
	}
	f, err := os.Create(cpuPath)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--cpuprofile: starting the profile: %w", err)
	}
	p.cpu = f
	return p, nil
}

// Stop ends the CPU profile and writes the heap profile.
func (p *Profiles) Stop() error {
	var errs []error
	if p.cpu != nil {
		pprof.StopCPUProfile()
		if err := p.cpu.Close(); err != nil {
			errs = append(errs, fmt.Errorf("--cpuprofile: %w", err))
		}
		p.cpu = nil
	}
	if p.memPath != "" {
		if err := writeHeapProfile(p.memPath); err != nil {
			errs = append(errs, fmt.Errorf("--memprofile: %w", err))
		}
		p.memPath = ""
	}
	return errors.Join(errs...)
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC() // the profile shows live objects as of the last collection
	if err := pprof.WriteHeapProfile(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
