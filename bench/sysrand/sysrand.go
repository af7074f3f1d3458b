// Package sysrand reproduces sysbench's random numbers: the key
// distributions of --rand-type (uniform, special, pareto, with sysbench's
// default parameters) and the digit-template strings of its tables, so that
// a Go workload touches the same keys with the same skew as sysbench does.
package sysrand

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Dist is a key distribution of sysbench's --rand-type.
type Dist int

const (
	Uniform Dist = iota
	Special
	Pareto
)

// Names lists the supported --rand-type values.
var Names = []string{"uniform", "special", "pareto"}

func (d Dist) String() string { return Names[d] }

// ParseDist parses a --rand-type value.
func ParseDist(s string) (Dist, error) {
	for i, n := range Names {
		if strings.EqualFold(s, n) {
			return Dist(i), nil
		}
	}
	return 0, fmt.Errorf("unknown --rand-type %q (want one of %s)", s, strings.Join(Names, ", "))
}

// sysbench's defaults for --rand-spec-iter, --rand-spec-pct,
// --rand-spec-res and --rand-pareto-h.
const (
	specIter = 12
	specPct  = 1
	specRes  = 75
	paretoH  = 0.2
)

var paretoPower = math.Log(paretoH) / math.Log(1.0-paretoH)

// Rand is one thread's generator (not safe for concurrent use, like
// sysbench's thread-local state).
type Rand struct {
	r    *rand.Rand
	dist Dist
}

// New returns a generator seeded with seed whose Default follows dist.
func New(seed uint64, dist Dist) *Rand {
	return &Rand{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), dist: dist}
}

// Dist is the generator's distribution for Default.
func (r *Rand) Dist() Dist { return r.dist }

// Uniform is sb_rand_uniform: a + [0,1) * (b - a + 1).
func (r *Rand) Uniform(a, b uint32) uint32 {
	return a + uint32(r.r.Float64()*float64(b-a+1))
}

// Default is sb_rand_default: the --rand-type distribution over [a, b].
func (r *Rand) Default(a, b uint32) uint32 {
	switch r.dist {
	case Special:
		return r.special(a, b)
	case Pareto:
		return a + uint32(float64(b-a+1)*math.Pow(r.r.Float64(), paretoPower))
	default:
		return r.Uniform(a, b)
	}
}

// special is sb_rand_special: a gaussian over the whole range for
// (100-res)% of the values, and the rest uniform within the pct% of the
// range around its middle, the hot spot.
func (r *Rand) special(a, b uint32) uint32 {
	t := float64(b - a)
	rnd := r.r.Float64()
	if rnd*t*(100.0/(100.0-specRes)) < t {
		sum := 0.0
		for i := 0; i < specIter; i++ {
			sum += r.r.Float64()
		}
		return a + uint32(sum*t/specIter)
	}
	d := t * specPct / 100.0
	res := rnd*(d+1) + t/2 - t*specPct/200.0
	return a + uint32(res)
}

// Templates of sysbench's oltp_common: '#' is a random digit.
const (
	CTemplate   = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########"
	PadTemplate = "###########-###########-###########-###########-###########"
)

// String is sb_rand_str: '#' becomes a random digit, '@' a random
// lowercase letter, anything else stays.
func (r *Rand) String(template string) string {
	b := []byte(template)
	for i, c := range b {
		switch c {
		case '#':
			b[i] = byte(r.Uniform('0', '9'))
		case '@':
			b[i] = byte(r.Uniform('a', 'z'))
		}
	}
	return string(b)
}

// Int is a uniform int in [0, n), for values that are not sysbench's.
func (r *Rand) Int(n int) int { return r.r.IntN(n) }
