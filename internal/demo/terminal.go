package demo

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// ANSI escapes used to redraw in place.
const (
	hideCursor = "\x1b[?25l"
	showCursor = "\x1b[?25h"
	clearBelow = "\x1b[J"
)

// IsTerminal reports whether w is a terminal that understands ANSI
// escapes: a character device, and $TERM (read through getenv) is not
// "dumb".
func IsTerminal(w io.Writer, getenv func(string) string) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	return getenv == nil || getenv("TERM") != "dumb"
}

// screen shows frames: redrawn in place on a terminal, one plain line per
// frame otherwise.
type screen struct {
	out      io.Writer
	terminal bool
	// drawn is the number of lines of the frame on screen.
	drawn int
}

// show draws a frame.
func (s *screen) show(f Frame) {
	if !s.terminal {
		fmt.Fprintln(s.out, f.Line())
		return
	}
	io.WriteString(s.out, redraw(s.drawn, f.Lines()))
	s.drawn = len(f.Lines())
}

// done leaves the last frame on screen and gives the cursor back.
func (s *screen) done() {
	if s.terminal && s.drawn > 0 {
		io.WriteString(s.out, showCursor)
	}
	s.drawn = 0
}

// redraw returns what replaces the previous frame of prev lines with
// lines: the cursor goes back to the frame's first line, the old frame is
// cleared, the new one written. The first frame hides the cursor.
func redraw(prev int, lines []string) string {
	var b strings.Builder
	if prev == 0 {
		b.WriteString(hideCursor)
	} else {
		fmt.Fprintf(&b, "\r\x1b[%dA", prev)
	}
	b.WriteString(clearBelow)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}
