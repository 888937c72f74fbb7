package plots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWritesSVG(t *testing.T) {
	dir := t.TempDir()
	pts := []Point{{0, 0}, {1, 50}, {2, 120}, {3, 90}, {5, 100}}
	if err := WriteUsage(filepath.Join(dir, "u.svg"), "Quota usage", []Series{{Name: "cq", Points: pts}, {Name: "empty"}}); err != nil {
		t.Fatal(err)
	}
	k := 20.0
	if err := WriteTimeToAdmission(filepath.Join(dir, "t.svg"), "Time to admission", []Distribution{
		{Class: "small", Values: []float64{1, 2, 3, 10, 4}, KueueMean: &k}, {Class: "large", Values: []float64{0.1, 0.2}}, {Class: "none"}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"u.svg", "t.svg"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "<svg") || !strings.Contains(string(data), "nominal quota") && name == "u.svg" {
			t.Fatalf("%s is not the plot: %.200s", name, data)
		}
	}
}

func TestDownsampleKeepsTheShape(t *testing.T) {
	var pts []Point
	for i := range 10000 {
		pts = append(pts, Point{T: float64(i) / 100, V: float64(i % 7)})
	}
	out := Downsample(pts, 100)
	if len(out) > 101 || out[0].T != 0 {
		t.Fatalf("%d points, first at %v", len(out), out[0].T)
	}
	if short := Downsample(pts[:5], 100); len(short) != 5 {
		t.Fatalf("a short series must stay as it is, got %d points", len(short))
	}
}
