// Package plots draws the pictures of a benchmark or simulation run, as
// SVG: quota usage over time per class of ClusterQueues against their
// nominal quota, where idle quota and churn show at a glance; and the
// distribution of time to admission per class of workloads, with Kueue's
// mean marked where the scenario has one.
package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Point is one sample of a series: seconds from the start, and a value.
type Point struct{ T, V float64 }

// Series is a named line.
type Series struct {
	Name   string
	Points []Point
}

// Distribution is a class's times to admission, in seconds.
type Distribution struct {
	Class  string
	Values []float64
	// KueueMean, when set, is Kueue's mean for the class on the same
	// scenario, drawn as a marker.
	KueueMean *float64
}

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

// WriteUsage draws usage series (percent of nominal quota) over time, with
// the 100% line, to an SVG file.
func WriteUsage(path, title string, series []Series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds from the start"
	p.Y.Label.Text = "quota in use, % of nominal"
	p.Y.Min = 0
	maxT, maxV := 1.0, 100.0
	for i, s := range series {
		xy := make(plotter.XYs, 0, len(s.Points))
		for _, pt := range s.Points {
			xy = append(xy, plotter.XY{X: pt.T, Y: pt.V})
			maxT, maxV = math.Max(maxT, pt.T), math.Max(maxV, pt.V)
		}
		if len(xy) == 0 {
			continue
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return fmt.Errorf("plotting %s: %w", s.Name, err)
		}
		line.Color = palette[i%len(palette)]
		line.StepStyle = plotter.PostStep
		p.Add(line)
		p.Legend.Add(s.Name, line)
	}
	nominal, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 100}, {X: maxT, Y: 100}})
	if err != nil {
		return err
	}
	nominal.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	nominal.Color = color.Gray{Y: 0x80}
	p.Add(nominal)
	p.Legend.Add("nominal quota", nominal)
	p.Legend.Top = true
	p.Y.Max = maxV * 1.1
	return p.Save(8*vg.Inch, 4*vg.Inch, path)
}

// WriteTimeToAdmission draws, per class, the times to admission as a box
// plot (median, quartiles, whiskers to the 5th and 95th percentiles) with
// the mean as a dot and Kueue's mean as a cross, to an SVG file.
func WriteTimeToAdmission(path, title string, dists []Distribution) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "time to admission, s"
	names := make([]string, 0, len(dists))
	var means, kueue plotter.XYs
	for i, d := range dists {
		names = append(names, d.Class)
		if len(d.Values) == 0 {
			continue
		}
		box, err := plotter.NewBoxPlot(vg.Points(30), float64(i), plotter.Values(d.Values))
		if err != nil {
			return fmt.Errorf("plotting %s: %w", d.Class, err)
		}
		box.FillColor = palette[i%len(palette)]
		p.Add(box)
		means = append(means, plotter.XY{X: float64(i), Y: mean(d.Values)})
		if d.KueueMean != nil {
			kueue = append(kueue, plotter.XY{X: float64(i), Y: *d.KueueMean})
		}
	}
	if len(means) > 0 {
		dots, err := plotter.NewScatter(means)
		if err != nil {
			return err
		}
		dots.GlyphStyle = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Radius: vg.Points(4), Color: color.Black}
		p.Add(dots)
		p.Legend.Add("Kuota mean", dots)
	}
	if len(kueue) > 0 {
		marks, err := plotter.NewScatter(kueue)
		if err != nil {
			return err
		}
		marks.GlyphStyle = draw.GlyphStyle{Shape: draw.CrossGlyph{}, Radius: vg.Points(6), Color: color.RGBA{R: 0xd6, A: 0xff}}
		p.Add(marks)
		p.Legend.Add("Kueue mean", marks)
	}
	p.Legend.Top = true
	p.NominalX(names...)
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Downsample keeps at most n points of a step series: the last value of
// each of n equal time buckets, so that a plot of a long run stays small.
func Downsample(points []Point, n int) []Point {
	if len(points) <= n || n < 2 {
		return points
	}
	first, last := points[0].T, points[len(points)-1].T
	width := (last - first) / float64(n)
	if width <= 0 {
		return points[:n]
	}
	out := make([]Point, 0, n+1)
	bucket := -1
	for _, pt := range points {
		b := int((pt.T - first) / width)
		if b != bucket {
			out = append(out, pt)
			bucket = b
		} else {
			out[len(out)-1].V = pt.V
		}
	}
	return slices.Clip(out)
}
