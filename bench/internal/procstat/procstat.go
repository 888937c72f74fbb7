// Package procstat reads what Linux's /proc says about processes and the
// machine: CPU time and peak resident memory of a process, the children of
// a process by command name, and the machine's total busy CPU time. The
// benchmark uses it to attribute the machine's CPU to the manager, the API
// server, etcd, itself and everything else.
package procstat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of CPU times in /proc; 100 on every
// Linux the benchmark runs on.
const clockTick = 100

// Sample is a process's resource use at an instant.
type Sample struct {
	// CPU is user plus system time since the process started.
	CPU time.Duration
	// PeakRSSBytes is the high-water mark of resident memory (VmHWM).
	PeakRSSBytes int64
	// RSSBytes is the current resident memory (VmRSS).
	RSSBytes int64
}

// Read samples process pid.
func Read(pid int) (Sample, error) {
	var s Sample
	cpu, err := cpuTime(pid)
	if err != nil {
		return s, err
	}
	s.CPU = cpu
	s.PeakRSSBytes, s.RSSBytes, err = memory(pid)
	return s, err
}

// statFields returns the fields of /proc/<pid>/stat after the command
// name (which may hold spaces), so that fields[0] is the state (field 3).
func statFields(pid int) ([]string, string, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, "", fmt.Errorf("reading stat of %d: %w", pid, err)
	}
	open, closing := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || closing < open {
		return nil, "", fmt.Errorf("malformed stat of %d", pid)
	}
	return strings.Fields(string(data[closing+1:])), string(data[open+1 : closing]), nil
}

func cpuTime(pid int) (time.Duration, error) {
	f, _, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	// utime and stime are fields 14 and 15; f[0] is field 3.
	if len(f) < 13 {
		return 0, fmt.Errorf("short stat of %d", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("parsing stat of %d: %w", pid, err)
	}
	return time.Duration(utime+stime) * time.Second / clockTick, nil
}

func memory(pid int) (hwm, rss int64, err error) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, 0, fmt.Errorf("reading status of %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmHWM" && key != "VmRSS") {
			continue
		}
		fields := strings.Fields(val)
		if len(fields) == 0 {
			continue
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parsing %s of %d: %w", key, pid, err)
		}
		if key == "VmHWM" {
			hwm = kb * 1024
		} else {
			rss = kb * 1024
		}
	}
	return hwm, rss, sc.Err()
}

// Children returns the pids of the direct children of parent whose command
// name is name.
func Children(parent int, name string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing /proc: %w", err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, comm, err := statFields(pid)
		if err != nil || len(f) < 2 || comm != name {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil && ppid == parent {
			out = append(out, pid)
		}
	}
	return out, nil
}

// Machine is the machine-wide CPU time at an instant.
type Machine struct {
	// Busy is the CPU time spent not idle, summed over all CPUs.
	Busy time.Duration
	// Total is all CPU time, summed over all CPUs.
	Total time.Duration
}

// ReadMachine reads the first line of /proc/stat.
func ReadMachine() (Machine, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Machine{}, fmt.Errorf("reading /proc/stat: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return Machine{}, errors.New("malformed /proc/stat")
	}
	var m Machine
	// user nice system idle iowait irq softirq steal; guest and guest_nice
	// follow but are already counted in user and nice.
	fields := f[1:min(len(f), 9)]
	for i, v := range fields {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return Machine{}, fmt.Errorf("parsing /proc/stat: %w", err)
		}
		d := time.Duration(n) * time.Second / clockTick
		m.Total += d
		// Fields 4 and 5 (idle, iowait) are idle time.
		if i != 3 && i != 4 {
			m.Busy += d
		}
	}
	return m, nil
}

// LoadAverage returns the 1-minute load average.
func LoadAverage() (float64, error) {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, fmt.Errorf("reading /proc/loadavg: %w", err)
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0, errors.New("empty /proc/loadavg")
	}
	return strconv.ParseFloat(f[0], 64)
}
