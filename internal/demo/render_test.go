package demo

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// frame42 is the frame of the render examples: team-a borrows 2 a100
// GPUs, team-b borrows 6 v100 GPUs; listed out of order.
func frame42(t *testing.T) Frame {
	t.Helper()
	tr := tracked()
	tr.ObserveWorkloads([]kueue.Workload{
		withCondition(workload("wl-low", "job-low", "team-a", 0), kueue.WorkloadFinished, "Succeeded", time.Second),
	})
	f := BuildFrame(42*time.Second, 40, []kueue.ClusterQueue{
		queue("team-b", 2, 2, map[string]int64{"a100": 4, "v100": 14}, map[string]int64{"v100": 6}),
		queue("team-a", 4, 3, map[string]int64{"a100": 10, "v100": 2}, map[string]int64{"a100": 2}),
	}, tr)
	f.Preemptions = Preemptions{Total: 5, InQueue: 2, Reclaim: 3}
	return f
}

func TestBuildFrame(t *testing.T) {
	f := frame42(t)
	if !reflect.DeepEqual(f.Flavors, []string{"a100", "v100"}) || f.Submitted != 2 || f.Total != 40 {
		t.Errorf("flavors %v, submitted %d of %d", f.Flavors, f.Submitted, f.Total)
	}
	want := []QueueRow{
		{Name: "team-a", Pending: 4, Admitted: 3, Finished: 1, GPUs: map[string]Usage{
			"a100": {Used: 10, Borrowed: 2, Nominal: 8}, "v100": {Used: 2, Nominal: 8}}},
		{Name: "team-b", Pending: 2, Admitted: 2, Finished: 0, GPUs: map[string]Usage{
			"a100": {Used: 4, Nominal: 8}, "v100": {Used: 14, Borrowed: 6, Nominal: 8}}},
	}
	if !reflect.DeepEqual(f.Queues, want) {
		t.Errorf("queues\n%+v\nwant\n%+v", f.Queues, want)
	}
	if f.Capacity("a100") != 16 || f.InUse("a100") != 14 || f.InUse("v100") != 16 {
		t.Errorf("a100 %d/%d, v100 %d", f.InUse("a100"), f.Capacity("a100"), f.InUse("v100"))
	}
}

func TestFrameLines(t *testing.T) {
	want := `0:42  2/40 jobs submitted  preemptions 5 (2 by priority, 3 reclaims)

QUEUE  PENDING ADMITTED FINISHED  a100 GPUs               v100 GPUs
team-a       4        3        1  ########++        10/8  ##......           2/8
team-b       2        2        0  ####....           4/8  ########++++++    14/8
total        6        5        1  ##############.. 14/16  ################ 16/16

# in use within the queue's quota   + borrowed from the cohort   . idle quota`
	lines := frame42(t).Lines()
	if got := strings.Join(lines, "\n"); got != want {
		t.Errorf("Lines:\n%s\nwant:\n%s", got, want)
	}
	for _, l := range lines {
		if len(l) > 80 {
			t.Errorf("%d columns, more than a terminal's 80: %q", len(l), l)
		}
	}
}

func TestFrameLine(t *testing.T) {
	want := "0:42 2/40 submitted" +
		" | team-a 4 pending, 3 admitted, 1 finished, a100 10/8, v100 2/8" +
		" | team-b 2 pending, 2 admitted, 0 finished, a100 4/8, v100 14/8 | preemptions 5"
	if got := frame42(t).Line(); got != want {
		t.Errorf("Line:\n%s\nwant:\n%s", got, want)
	}
}

func TestFrameWithoutQueues(t *testing.T) {
	f := BuildFrame(0, 40, nil, NewTracker())
	lines := f.Lines()
	if lines[0] != "0:00  0/40 jobs submitted  preemptions 0" || lines[2] != "QUEUE PENDING ADMITTED FINISHED" {
		t.Errorf("lines %q", lines)
	}
	if got := f.Line(); got != "0:00 0/40 submitted | preemptions 0" {
		t.Errorf("Line %q", got)
	}
}

func TestBars(t *testing.T) {
	tests := []struct {
		u        Usage
		capacity int64
		want     string
	}{
		{Usage{Nominal: 8}, 16, "........        "},
		{Usage{Used: 3, Nominal: 8}, 16, "###.....        "},
		{Usage{Used: 16, Borrowed: 8, Nominal: 8}, 16, "########++++++++"},
		{Usage{Used: 4, Borrowed: 4, Nominal: 0}, 8, "++++    "},
		// Wider than maxBarWidth: 96 GPUs in 24 characters, 4 per character.
		{Usage{Used: 60, Borrowed: 12, Nominal: 48}, 96, "############+++         "},
		// Usage above capacity (stale status) is cut to the bar.
		{Usage{Used: 20, Borrowed: 12, Nominal: 8}, 16, "########++++++++"},
	}
	for _, tc := range tests {
		if got := queueBar(tc.u, tc.capacity); got != tc.want {
			t.Errorf("queueBar(%+v, %d) = %q, want %q", tc.u, tc.capacity, got, tc.want)
		}
	}
	if got := totalBar(20, 16); got != "################" {
		t.Errorf("totalBar over capacity = %q", got)
	}
	if got := totalBar(48, 96); got != "############............" {
		t.Errorf("totalBar scaled = %q", got)
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0:00", 999 * time.Millisecond: "0:00", 61 * time.Second: "1:01", 10*time.Minute + 5*time.Second: "10:05", -time.Second: "0:00",
	} {
		if got := clock(d); got != want {
			t.Errorf("clock(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestRedraw(t *testing.T) {
	if got := redraw(0, []string{"a", "b"}); got != hideCursor+clearBelow+"a\nb\n" {
		t.Errorf("first frame %q", got)
	}
	if got := redraw(2, []string{"c"}); got != "\r\x1b[2A"+clearBelow+"c\n" {
		t.Errorf("next frame %q", got)
	}
}

func TestScreen(t *testing.T) {
	f := frame42(t)
	var plain bytes.Buffer
	s := &screen{out: &plain}
	s.show(f)
	s.show(f)
	s.done()
	if want := f.Line() + "\n" + f.Line() + "\n"; plain.String() != want {
		t.Errorf("plain output %q", plain.String())
	}
	var term bytes.Buffer
	s = &screen{out: &term, terminal: true}
	s.show(f)
	s.show(f)
	s.done()
	n := len(f.Lines())
	body := strings.Join(f.Lines(), "\n") + "\n"
	want := hideCursor + clearBelow + body + "\r\x1b[" + itoa(n) + "A" + clearBelow + body + showCursor
	if term.String() != want {
		t.Errorf("terminal output %q\nwant %q", term.String(), want)
	}
}

func TestIsTerminal(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}, nil) {
		t.Error("a buffer is no terminal")
	}
	f, err := createTemp(t)
	if err != nil {
		t.Fatal(err)
	}
	if IsTerminal(f, nil) {
		t.Error("a file is no terminal")
	}
}
