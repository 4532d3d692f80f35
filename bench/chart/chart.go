// Package chart draws the bench's bar charts and writes each beside the
// table it illustrates.
package chart

import (
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// The colours of the first and second series.
var (
	Blue = color.RGBA{31, 119, 180, 255}
	Red  = color.RGBA{214, 39, 40, 255}
)

// Series is one bar per group.
type Series struct {
	Label  string
	Values []float64
	Color  color.Color
}

// Bars draws the series side by side over the named groups, with a legend
// at the top; the caller may add to the plot before saving it.
func Bars(title, yLabel string, groups []string, series ...Series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = yLabel
	w := vg.Points(14)
	for i, s := range series {
		bars, err := plotter.NewBarChart(plotter.Values(s.Values), w)
		if err != nil {
			return nil, err
		}
		bars.Color = s.Color
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(2*i-len(series)+1) / 2
		p.Add(bars)
		p.Legend.Add(s.Label, bars)
	}
	p.Legend.Top = true
	p.NominalX(groups...)
	p.X.Tick.Label.Rotation = 0.35
	p.X.Tick.Label.XAlign = -0.9
	return p, nil
}

// Save writes report to out/name.txt and p, width by height, to
// out/name.png.
func Save(out, name, report string, p *plot.Plot, width, height vg.Length) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, name+".txt"), []byte(report), 0o644); err != nil {
		return err
	}
	return p.Save(width, height, filepath.Join(out, name+".png"))
}
