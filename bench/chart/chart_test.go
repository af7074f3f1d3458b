package chart

import (
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"testing"
)

// parse checks that svg is XML with every coordinate on the canvas and
// counts its elements by name.
func parse(t *testing.T, svg string) map[string]int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	count := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return count
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, svg)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		count[el.Name.Local]++
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "x", "y", "cx", "cy", "x1", "x2", "y1", "y2":
				v, err := strconv.ParseFloat(a.Value, 64)
				if err != nil || v < 0 || v > width {
					t.Fatalf("%s %s=%q off the canvas", el.Name.Local, a.Name.Local, a.Value)
				}
			}
		}
	}
}

func TestLines(t *testing.T) {
	var b strings.Builder
	l := Lines{Title: "TPS <over> time", XLabel: "s", YLabel: "TPS",
		Series: []Series{{Name: "a", Points: []Point{{1, 10}, {2, 30}, {3, 20}}}, {Name: "b", Points: []Point{{1, 5}}}},
		Bands:  []Band{{From: 1.5, To: 2.5, Label: "ADD INDEX"}}}
	if err := l.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	c := parse(t, b.String())
	if c["polyline"] != 2 || c["circle"] != 4 || !strings.Contains(b.String(), "TPS &lt;over&gt; time") {
		t.Fatalf("%v\n%s", c, b.String())
	}
	// Nothing to draw still makes a valid, empty chart.
	b.Reset()
	if err := (Lines{Title: "empty"}).WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	parse(t, b.String())
}

func TestBars(t *testing.T) {
	var b strings.Builder
	bc := Bars{Title: "t", YLabel: "TPS", Groups: []string{"w=1", "w=4"},
		Series: []Series{{Name: "baseline", Values: []float64{100, 90}}, {Name: "during", Values: []float64{80, 0}}}}
	if err := bc.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	// 4 bars, 2 legend swatches, the background.
	if c := parse(t, b.String()); c["rect"] != 7 {
		t.Fatalf("%v", c)
	}
}

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{{0, 100, "0 20 40 60 80 100"}, {0, 1, "0 0.2 0.4 0.6 0.8 1"}, {0, 7, "0 2 4 6"}, {1, 48, "10 20 30 40"}} {
		var got []string
		for _, v := range ticks(c.lo, c.hi) {
			got = append(got, label(v))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("ticks(%g, %g) = %v, want %s", c.lo, c.hi, got, c.want)
		}
	}
}
