// Package progress owns the benchmark's live status on stderr: one line
// redrawn in place on a terminal (throttled plain lines elsewhere, so logs
// stay readable), bars and ETAs.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Line is the status line. A nil *Line discards everything.
type Line struct {
	w     io.Writer
	tty   bool
	cols  int // terminal width; a longer line would wrap and stop being redrawn in place
	every time.Duration
	mu    sync.Mutex
	shown bool
	last  time.Time
}

// New writes to w; the line is redrawn in place only if w is a terminal.
func New(w io.Writer) *Line {
	l := &Line{w: w, every: 10 * time.Second}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			l.tty = true
			if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil {
				l.cols = int(ws.Col)
			}
		}
	}
	return l
}

// Set replaces the status.
func (l *Line) Set(format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := fmt.Sprintf(format, args...)
	if l.tty {
		if l.cols > 1 && utf8.RuneCountInString(s) >= l.cols {
			s = string([]rune(s)[:l.cols-1])
		}
		fmt.Fprintf(l.w, "\r%s\x1b[K", s)
		l.shown = true
		return
	}
	if time.Since(l.last) >= l.every {
		fmt.Fprintln(l.w, s)
		l.last = time.Now()
	}
}

// Printf prints a line that stays, above the status.
func (l *Line) Printf(format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.erase()
	fmt.Fprintf(l.w, format+"\n", args...)
}

// Clear removes the status.
func (l *Line) Clear() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.erase()
}

func (l *Line) erase() {
	if l.shown {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// Bar draws fraction (0..1) as a bar of width cells.
func Bar(fraction float64, width int) string {
	fraction = min(max(fraction, 0), 1)
	full := int(fraction * float64(width))
	return "[" + strings.Repeat("#", full) + strings.Repeat(".", width-full) + "]"
}

// ETA estimates the time left after elapsed for fraction done, "?" when
// nothing is done yet.
func ETA(elapsed time.Duration, fraction float64) string {
	if fraction <= 0 {
		return "?"
	}
	if fraction >= 1 {
		return "0s"
	}
	left := time.Duration(float64(elapsed) * (1 - fraction) / fraction)
	return left.Round(time.Second).String()
}
