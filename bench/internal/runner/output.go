package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/kuota-dev/kuota/bench/internal/driver"
	"github.com/kuota-dev/kuota/bench/internal/summary"
	"github.com/kuota-dev/kuota/internal/scenario"
)

// Files written into the results folder.
const (
	SummaryFile = "summary.yaml"
	TableFile   = "table.txt"
	EventsFile  = "events.jsonl"
)

// writeResults saves the summary, its table, the event log (one JSON
// object per line), the replay (writeReplay) and a copy of the scenario
// and its targets.
func writeResults(dir string, sc *plan, s *summary.Summary, res *driver.Result, rp replay) error {
	if err := writeSummary(dir, s); err != nil {
		return err
	}
	files := map[string][]byte{}
	for _, src := range []string{sc.path, scenario.TargetsPath(sc.path)} {
		content, err := os.ReadFile(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("copying scenario: %w", err)
		}
		files["scenario-"+filepath.Base(src)] = content
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	if err := writeEvents(filepath.Join(dir, EventsFile), res.Events); err != nil {
		return err
	}
	if err := writeReplay(dir, rp); err != nil {
		return err
	}
	var ref *scenario.Reference
	if sc.targets != nil {
		ref = sc.targets.Kueue
	}
	return writePlots(dir, s, res, ref)
}

// writeSummary saves the summary and its table (again after the replay).
func writeSummary(dir string, s *summary.Summary) error {
	data, err := yaml.Marshal(s)
	if err != nil {
		return fmt.Errorf("encoding summary: %w", err)
	}
	var table bytes.Buffer
	if err := summary.Render(&table, s); err != nil {
		return fmt.Errorf("rendering table: %w", err)
	}
	for name, content := range map[string][]byte{SummaryFile: data, TableFile: table.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

func writeEvents(path string, events []driver.Event) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing events: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := range events {
		if err := enc.Encode(&events[i]); err != nil {
			f.Close()
			return fmt.Errorf("writing events: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing events: %w", err)
	}
	return f.Close()
}
