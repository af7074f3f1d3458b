// Package chart draws the benchmark's charts as self-contained SVG: line
// charts (with shaded windows, for the DDL) and grouped bar charts, with
// axes, ticks and a legend, and no dependencies.
package chart

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Point is one (x, y) of a series.
type Point struct{ X, Y float64 }

// Series is one line, or one kind of bar.
type Series struct {
	Name   string
	Points []Point   // line charts
	Values []float64 // bar charts, one per group
}

// Band is a shaded x range of a line chart.
type Band struct {
	From, To float64
	Label    string
}

// Lines is a line chart.
type Lines struct {
	Title, XLabel, YLabel string
	Series                []Series
	Bands                 []Band
}

// Bars is a grouped bar chart: for each group, one bar per series.
type Bars struct {
	Title, YLabel string
	Groups        []string
	Series        []Series
}

const (
	width, height          = 760, 420
	left, right, top, foot = 70, 170, 40, 60
	plotW, plotH           = width - left - right, height - top - foot
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

type canvas struct {
	b                      strings.Builder
	xmin, xmax, ymin, ymax float64
}

func (c *canvas) x(v float64) float64 { return left + (v-c.xmin)/(c.xmax-c.xmin)*plotW }
func (c *canvas) y(v float64) float64 { return top + plotH - (v-c.ymin)/(c.ymax-c.ymin)*plotH }

func (c *canvas) printf(format string, args ...any) { fmt.Fprintf(&c.b, format, args...) }

func (c *canvas) text(x, y float64, anchor, s string, extra string) {
	c.printf(`<text x="%.1f" y="%.1f" text-anchor="%s" %s>%s</text>`+"\n", x, y, anchor, extra, html.EscapeString(s))
}

// frame opens the SVG and draws the title, the y axis with its ticks and
// the y label; the x axis is up to the chart.
func (c *canvas) frame(title, ylabel string) {
	c.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	c.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	c.text(width/2, 22, "middle", title, `font-size="15" font-weight="bold"`)
	for _, t := range ticks(c.ymin, c.ymax) {
		y := c.y(t)
		c.printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, left+plotW, y)
		c.text(left-6, y+4, "end", label(t), "")
	}
	c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top, left, top+plotH)
	c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top+plotH, left+plotW, top+plotH)
	c.text(16, top+plotH/2, "middle", ylabel, fmt.Sprintf(`transform="rotate(-90 16 %d)"`, top+plotH/2))
}

func (c *canvas) legend(series []Series) {
	for i, s := range series {
		y := float64(top + 10 + 18*i)
		c.printf(`<rect x="%d" y="%.1f" width="12" height="12" fill="%s"/>`+"\n", left+plotW+12, y-10, color(i))
		c.text(float64(left+plotW+30), y, "start", s.Name, "")
	}
}

func (c *canvas) close(w io.Writer) error {
	c.printf("</svg>\n")
	_, err := io.WriteString(w, c.b.String())
	return err
}

func color(i int) string { return palette[i%len(palette)] }

// WriteSVG draws the line chart.
func (l Lines) WriteSVG(w io.Writer) error {
	c := &canvas{xmin: math.Inf(1), xmax: math.Inf(-1), ymin: 0, ymax: math.Inf(-1)}
	for _, s := range l.Series {
		for _, p := range s.Points {
			c.xmin, c.xmax = math.Min(c.xmin, p.X), math.Max(c.xmax, p.X)
			c.ymax = math.Max(c.ymax, p.Y)
		}
	}
	for _, b := range l.Bands {
		c.xmin, c.xmax = math.Min(c.xmin, b.From), math.Max(c.xmax, b.To)
	}
	// Times and worker counts read best from zero.
	c.xmin = math.Min(c.xmin, 0)
	c.fixRanges()
	c.frame(l.Title, l.YLabel)
	for _, b := range l.Bands {
		x0, x1 := c.x(b.From), c.x(b.To)
		c.printf(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#f5c542" fill-opacity="0.3"/>`+"\n", x0, top, math.Max(x1-x0, 1), plotH)
		c.text(x0+3, top+14, "start", b.Label, `fill="#8a6d00"`)
	}
	for _, t := range ticks(c.xmin, c.xmax) {
		c.text(c.x(t), top+plotH+16, "middle", label(t), "")
	}
	c.text(left+plotW/2, height-20, "middle", l.XLabel, "")
	for i, s := range l.Series {
		var pts []string
		for _, p := range s.Points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", c.x(p.X), c.y(p.Y)))
		}
		c.printf(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color(i), strings.Join(pts, " "))
		for _, p := range pts {
			x, y, _ := strings.Cut(p, ",")
			c.printf(`<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`+"\n", x, y, color(i))
		}
	}
	c.legend(l.Series)
	return c.close(w)
}

// WriteSVG draws the bar chart.
func (bc Bars) WriteSVG(w io.Writer) error {
	c := &canvas{xmin: 0, xmax: 1, ymin: 0}
	for _, s := range bc.Series {
		for _, v := range s.Values {
			c.ymax = math.Max(c.ymax, v)
		}
	}
	c.fixRanges()
	c.frame(bc.Title, bc.YLabel)
	groupW := float64(plotW) / float64(max(len(bc.Groups), 1))
	barW := groupW * 0.8 / float64(max(len(bc.Series), 1))
	for g, name := range bc.Groups {
		x0 := left + float64(g)*groupW + groupW*0.1
		for i, s := range bc.Series {
			if g >= len(s.Values) {
				continue
			}
			y := c.y(s.Values[g])
			c.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x0+float64(i)*barW, y, barW, top+plotH-y, color(i))
		}
		c.text(x0+groupW*0.4, top+plotH+16, "middle", name, `font-size="10"`)
	}
	c.legend(bc.Series)
	return c.close(w)
}

// fixRanges makes empty or flat ranges drawable and leaves headroom.
func (c *canvas) fixRanges() {
	if math.IsInf(c.xmin, 0) {
		c.xmin, c.xmax = 0, 1
	} else if c.xmax <= c.xmin {
		c.xmax = c.xmin + 1
	}
	if math.IsInf(c.ymax, 0) || c.ymax <= c.ymin {
		c.ymax = c.ymin + 1
	}
	c.ymax *= 1.1
}

// ticks are about five round values across [lo, hi].
func ticks(lo, hi float64) []float64 {
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(step*m) <= 6 {
			step *= m
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step/1e6; v += step {
		out = append(out, v)
	}
	return out
}

func label(v float64) string {
	if math.Abs(v) >= 10000 {
		return fmt.Sprintf("%.0fk", v/1000)
	}
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
