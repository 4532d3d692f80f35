package dashboard

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// panel is one of the dashboard's panels: its title and its series.
type panel struct {
	title, unit string
	series      map[string][]Point
}

// window is the rate's and the quantiles' window, in scrapes (seconds).
const window = 5

// panels computes the dashboard's panels (examples/observability's
// dashboard.json, the same queries) from the scrapes.
func panels(s []Scrape) []panel {
	failed := func(m *dto.Metric) bool { return label(m, "error_type") != "" }
	calls := Rate(s, "retry_calls_total", "retry_outcome", window, nil)
	for k, v := range Rate(s, "retry_attempts_total", "error_type", window, failed) {
		calls["failed attempts "+k] = v
	}
	refused := Rate(s, "retry_budget_refused_total", "reason", window, nil)
	return []panel{
		{"Calls by outcome, attempts by error", "per second", calls},
		{"Retry delay", "s", map[string][]Point{
			"p50": Quantile(s, "retry_call_delay_seconds", 0.5, window), "p99": Quantile(s, "retry_call_delay_seconds", 0.99, window)}},
		{"Budget refusals", "per second", refused},
		{"Time to first chunk", "s", map[string][]Point{
			"p50": Quantile(s, "retry_attempt_time_to_first_chunk_seconds", 0.5, window),
			"p99": Quantile(s, "retry_attempt_time_to_first_chunk_seconds", 0.99, window)}},
		{"Fallback moves", "per second", Rate(s, "fallback_switches_total", "", window, nil)},
		{"Concurrency limit (the backup's)", "calls", map[string][]Point{"limit": Gauge(s, "ratelimit_concurrency_limit")}},
	}
}

// mean is the mean of the points of series in [from, to) seconds.
func mean(series []Point, from, to float64) float64 {
	sum, n := 0.0, 0
	for _, p := range series {
		if p.T >= from && p.T < to {
			sum, n = sum+p.V, n+1
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// The dashboard over the storm shows the storm: the fallback moves (ten
// times as often as the odd 503 twice in a row makes it before), the
// budget refuses and the first chunks are late while it lasts (15 s to
// 36 s). DASHBOARD_OUT=dir draws it to
// dir/dashboard.png.
func TestTheDashboardShowsTheStorm(t *testing.T) {
	var ps []panel
	var sum string
	synctest.Test(t, func(t *testing.T) {
		scrapes, s, err := Run(Storm, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		ps, sum = panels(scrapes), fmt.Sprintf("%+v", s)
	})
	moves := ps[4].series[""]
	if calm, storm := mean(moves, 5, 15), mean(moves, 20, 36); storm < 1 || storm < 10*calm {
		t.Errorf("fallback moves: %.2f/s before the storm, %.2f/s in it; want few (a 503 twice in a row), then ten times as many (%s)", calm, storm, sum)
	}
	refused := 0.0
	for _, v := range ps[2].series {
		refused += mean(v, 20, 40)
	}
	if refused <= 0 {
		t.Errorf("budget refusals in the storm: %.2f/s, want some (%s)", refused, sum)
	}
	ttfc := ps[3].series["p50"]
	if calm, storm := mean(ttfc, 5, 15), mean(ttfc, 20, 36); storm < 2*calm {
		t.Errorf("p50 time to first chunk %.3fs before the storm, %.3fs in it: want the storm's slower", calm, storm)
	}
	if dir := os.Getenv("DASHBOARD_OUT"); dir != "" {
		if err := draw2x3(ps, filepath.Join(dir, "dashboard.png")); err != nil {
			t.Fatal(err)
		}
	}
}

var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{214, 39, 40, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{255, 127, 14, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
}

// draw2x3 draws the panels, two across and three down, to file.
func draw2x3(ps []panel, file string) error {
	const cols, rows = 2, 3
	img := vgimg.New(32*vg.Centimeter, 27*vg.Centimeter)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	for i, pn := range ps {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "time (s); the storm 15-36 s"
		p.Y.Label.Text = pn.unit
		p.Legend.Top, p.Legend.Left = true, true
		names := make([]string, 0, len(pn.series))
		for k := range pn.series {
			names = append(names, k)
		}
		sort.Strings(names)
		for j, name := range names {
			xys := make(plotter.XYs, len(pn.series[name]))
			for k, pt := range pn.series[name] {
				xys[k] = plotter.XY{X: pt.T, Y: pt.V}
			}
			if len(xys) == 0 {
				continue
			}
			line, err := plotter.NewLine(xys)
			if err != nil {
				return err
			}
			line.Color = palette[j%len(palette)]
			p.Add(line)
			if name != "" {
				p.Legend.Add(name, line)
			}
		}
		p.Draw(tiles.At(dc, i%cols, i/cols))
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		return err
	}
	return f.Close()
}
