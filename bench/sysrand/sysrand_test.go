package sysrand

import (
	"math"
	"testing"
)

// The shapes sysbench's distributions have with its default parameters.
func TestDistributions(t *testing.T) {
	const n, size = 200000, 100000
	for _, d := range []Dist{Uniform, Special, Pareto} {
		r := New(1, d)
		var low, hot int // below 20% of the range; in the middle 1%
		for range n {
			v := r.Default(1, size)
			if v < 1 || v > size {
				t.Fatalf("%s: %d outside 1..%d", d, v, size)
			}
			if v <= size/5 {
				low++
			}
			if v >= size/2-size/200 && v <= size/2+size/200 {
				hot++
			}
		}
		lowF, hotF := float64(low)/n, float64(hot)/n
		switch d {
		case Uniform:
			if math.Abs(lowF-0.2) > 0.01 || math.Abs(hotF-0.01) > 0.003 {
				t.Fatalf("uniform: %.3f below 20%%, %.3f in the middle 1%%", lowF, hotF)
			}
		case Special:
			// 75% land in the middle 1%, plus the gaussian's share there.
			if hotF < 0.75 || hotF > 0.80 {
				t.Fatalf("special: %.3f in the middle 1%%", hotF)
			}
		case Pareto:
			// h=0.2: 80% of the values in the lowest 20%.
			if math.Abs(lowF-0.8) > 0.01 {
				t.Fatalf("pareto: %.3f below 20%%", lowF)
			}
		}
	}
}

func TestStringAndParse(t *testing.T) {
	r := New(3, Uniform)
	s := r.String("##-@@x")
	if len(s) != 6 || s[0] < '0' || s[0] > '9' || s[2] != '-' || s[3] < 'a' || s[3] > 'z' || s[5] != 'x' {
		t.Fatalf("String gave %q", s)
	}
	if d, err := ParseDist("Pareto"); err != nil || d != Pareto {
		t.Fatalf("ParseDist: %v %v", d, err)
	}
	if _, err := ParseDist("gaussian"); err == nil {
		t.Fatal("gaussian accepted")
	}
}
