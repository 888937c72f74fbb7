package demo

import (
	"fmt"
	"strings"
	"time"
)

// maxBarWidth caps a GPU bar; larger capacities are scaled down.
const maxBarWidth = 24

// Bar characters: GPUs in use within the queue's quota, borrowed GPUs, idle
// quota.
const (
	barUsed     = '#'
	barBorrowed = '+'
	barIdle     = '.'
)

// Lines renders the frame as a table, for a terminal that redraws it in
// place:
//
//	0:42  31/40 jobs submitted  preemptions 5 (2 by priority, 3 reclaims)
//
//	QUEUE  PENDING ADMITTED FINISHED  a100 GPUs               v100 GPUs
//	team-a       4        3       12  ########++        10/8  ######..           6/8
//	team-b       2        2        6  ####....           4/8  ########++++++    14/8
//	total        6        5       18  ##############.. 14/16  ################ 20/16
//
// In a queue's bar each character is a GPU of the flavor: the first ones
// are the queue's nominal quota (# in use, . idle), then + for borrowed
// GPUs. The total line shows the whole flavor. With two flavors of up to 16
// GPUs a line fits in 80 columns (a longer one would wrap and spoil the
// redraw).
func (f Frame) Lines() []string {
	nameW := len("QUEUE")
	for _, q := range f.Queues {
		nameW = max(nameW, len(q.Name))
	}
	cellW := make(map[string]int, len(f.Flavors))
	header := fmt.Sprintf("%-*s %7s %8s %8s", nameW, "QUEUE", "PENDING", "ADMITTED", "FINISHED")
	for _, fl := range f.Flavors {
		capacity := f.Capacity(fl)
		cellW[fl] = barWidth(capacity) + 1 + len(fmt.Sprintf("%d/%d", capacity, capacity))
		header += "  " + pad(fl+" GPUs", cellW[fl])
	}
	lines := []string{f.headline(), "", strings.TrimRight(header, " ")}
	var pending, admitted, finished int
	for _, q := range f.Queues {
		line := fmt.Sprintf("%-*s %7d %8d %8d", nameW, q.Name, q.Pending, q.Admitted, q.Finished)
		for _, fl := range f.Flavors {
			u := q.GPUs[fl]
			line += "  " + cell(queueBar(u, f.Capacity(fl)), fmt.Sprintf("%d/%d", u.Used, u.Nominal), cellW[fl])
		}
		lines = append(lines, strings.TrimRight(line, " "))
		pending, admitted, finished = pending+q.Pending, admitted+q.Admitted, finished+q.Finished
	}
	total := fmt.Sprintf("%-*s %7d %8d %8d", nameW, "total", pending, admitted, finished)
	for _, fl := range f.Flavors {
		capacity, used := f.Capacity(fl), f.InUse(fl)
		total += "  " + cell(totalBar(used, capacity), fmt.Sprintf("%d/%d", used, capacity), cellW[fl])
	}
	lines = append(lines, strings.TrimRight(total, " "), "",
		fmt.Sprintf("%c in use within the queue's quota   %c borrowed from the cohort   %c idle quota",
			barUsed, barBorrowed, barIdle))
	return lines
}

// Line renders the frame as one line, for logs:
//
//	0:42 31/40 submitted | team-a 4 pending, 3 admitted, 12 finished, a100 10/8, v100 6/8 | ... | preemptions 5
func (f Frame) Line() string {
	parts := []string{fmt.Sprintf("%s %d/%d submitted", clock(f.Elapsed), f.Submitted, f.Total)}
	for _, q := range f.Queues {
		s := fmt.Sprintf("%s %d pending, %d admitted, %d finished", q.Name, q.Pending, q.Admitted, q.Finished)
		for _, fl := range f.Flavors {
			u := q.GPUs[fl]
			s += fmt.Sprintf(", %s %d/%d", fl, u.Used, u.Nominal)
		}
		parts = append(parts, s)
	}
	parts = append(parts, fmt.Sprintf("preemptions %d", f.Preemptions.Total))
	return strings.Join(parts, " | ")
}

func (f Frame) headline() string {
	return fmt.Sprintf("%s  %d/%d jobs submitted  preemptions %s",
		clock(f.Elapsed), f.Submitted, f.Total, f.Preemptions.String())
}

// String is the count with its breakdown, e.g. "5 (2 by priority, 3 reclaims)".
func (p Preemptions) String() string {
	if p.Total == 0 {
		return "0"
	}
	var parts []string
	if p.InQueue > 0 {
		parts = append(parts, fmt.Sprintf("%d by priority", p.InQueue))
	}
	if p.Reclaim > 0 {
		parts = append(parts, plural(p.Reclaim, "reclaim", "reclaims"))
	}
	if p.Other > 0 {
		parts = append(parts, fmt.Sprintf("%d other", p.Other))
	}
	return fmt.Sprintf("%d (%s)", p.Total, strings.Join(parts, ", "))
}

// barWidth is the width of a flavor's bars: one character per GPU, scaled
// down past maxBarWidth.
func barWidth(capacity int64) int {
	return int(min(max(capacity, 1), maxBarWidth))
}

// scaled converts a number of GPUs to bar characters.
func scaled(n, capacity int64) int {
	w := int64(barWidth(capacity))
	if capacity <= w {
		return int(max(n, 0))
	}
	return int((max(n, 0)*w + capacity/2) / capacity)
}

// queueBar draws a queue's use of a flavor: its nominal quota (in use or
// idle), then what it borrows. The bar is as wide as the flavor's capacity.
func queueBar(u Usage, capacity int64) string {
	w := barWidth(capacity)
	own := min(u.Used-u.Borrowed, u.Nominal)
	nominal, used, borrowed := scaled(u.Nominal, capacity), scaled(own, capacity), scaled(u.Borrowed, capacity)
	var b strings.Builder
	b.WriteString(strings.Repeat(string(barUsed), used))
	b.WriteString(strings.Repeat(string(barIdle), max(nominal-used, 0)))
	b.WriteString(strings.Repeat(string(barBorrowed), borrowed))
	return fit(b.String(), w)
}

// totalBar draws the use of a whole flavor.
func totalBar(used, capacity int64) string {
	w := barWidth(capacity)
	n := min(scaled(used, capacity), w)
	return fit(strings.Repeat(string(barUsed), n)+strings.Repeat(string(barIdle), w-n), w)
}

// cell is a bar and a right-aligned count in a cell of width w.
func cell(bar, count string, w int) string {
	return bar + pad("", w-len(bar)-len(count)) + count
}

// fit pads or cuts s to w characters.
func fit(s string, w int) string {
	if len(s) > w {
		return s[:w]
	}
	return pad(s, w)
}

func pad(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return s + strings.Repeat(" ", w-len(s))
}

// clock formats an elapsed time as m:ss.
func clock(d time.Duration) string {
	d = max(d, 0).Truncate(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
