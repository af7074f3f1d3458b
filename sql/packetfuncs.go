package sql

import (
	"fmt"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL's SPACE, REPEAT, LPAD and RPAD return NULL, with warning 1301,
// instead of a result longer than max_allowed_packet; go-mysql-server's
// build it whatever its size (SPACE(2000000000) allocates 2 GB and cannot
// be stopped). The Provider offers these in place of the built-ins.
var packetLimitedFuncs = map[string]gms.Function{
	"space": gms.Function1{Name: "space", Fn: func(e gms.Expression) gms.Expression {
		return &packetLimited{inner: function.NewSpace(e), name: "space", size: spaceSize, build: buildSpace}
	}},
	"repeat": gms.Function2{Name: "repeat", Fn: func(s, n gms.Expression) gms.Expression {
		return &packetLimited{inner: function.NewRepeat(s, n), name: "repeat", size: repeatSize}
	}},
	"lpad": gms.FunctionN{Name: "lpad", Fn: func(args ...gms.Expression) (gms.Expression, error) {
		return newPadLimited("lpad", function.NewLeftPad, args)
	}},
	"rpad": gms.FunctionN{Name: "rpad", Fn: func(args ...gms.Expression) (gms.Expression, error) {
		return newPadLimited("rpad", function.NewRightPad, args)
	}},
}

// Function implements sql.FunctionProvider: the functions above and
// CURRENT_ROLE(), then the current database's stored functions.
func (p *Provider) Function(ctx *gms.Context, name string) (gms.Function, bool) {
	name = strings.ToLower(name)
	if name == "json_type" {
		return gms.FunctionN{Name: name, Fn: newJSONType}, true
	}
	if f, ok := packetLimitedFuncs[name]; ok {
		return f, ok
	}
	if name == "current_role" && p.e != nil {
		return newCurrentRole(p.e.SQL.Analyzer.Catalog.MySQLDb), true
	}
	return p.e.storedFunction(ctx, name)
}

func newPadLimited(name string, fn func(...gms.Expression) (gms.Expression, error), args []gms.Expression) (gms.Expression, error) {
	inner, err := fn(args...)
	if err != nil {
		return nil, err
	}
	return &packetLimited{inner: inner, name: name, size: padSize}, nil
}

// packetLimited is a string function whose result size is known from its
// arguments before it is built.
type packetLimited struct {
	inner gms.Expression
	name  string
	// size is the result's byte size for the evaluated arguments; ok is
	// false when an argument is NULL or not a count.
	size func(ctx *gms.Context, args []any, types []gms.Type) (n uint64, ok bool)
	// build, if set, makes the result instead of go-mysql-server's
	// function.
	build func(ctx *gms.Context, args []any) (any, error)
}

var (
	_ gms.FunctionExpression = (*packetLimited)(nil)
	_ gms.CollationCoercible = (*packetLimited)(nil)
)

func (p *packetLimited) Resolved() bool             { return p.inner.Resolved() }
func (p *packetLimited) String() string             { return p.inner.String() }
func (p *packetLimited) Type() gms.Type             { return p.inner.Type() }
func (p *packetLimited) IsNullable() bool           { return true }
func (p *packetLimited) Children() []gms.Expression { return p.inner.Children() }
func (p *packetLimited) FunctionName() string       { return p.name }
func (p *packetLimited) Description() string {
	if fe, ok := p.inner.(gms.FunctionExpression); ok {
		return fe.Description()
	}
	return p.name
}

func (p *packetLimited) CollationCoercibility(ctx *gms.Context) (gms.CollationID, byte) {
	if cc, ok := p.inner.(gms.CollationCoercible); ok {
		return cc.CollationCoercibility(ctx)
	}
	return gms.Collation_binary, 5
}

func (p *packetLimited) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	inner, err := p.inner.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &packetLimited{inner: inner, name: p.name, size: p.size, build: p.build}, nil
}

// Eval evaluates the arguments once, checks the result's size against
// max_allowed_packet, and lets go-mysql-server's function build it from
// the values.
func (p *packetLimited) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	children := p.inner.Children()
	args := make([]any, len(children))
	typs := make([]gms.Type, len(children))
	lits := make([]gms.Expression, len(children))
	for i, c := range children {
		v, err := c.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		args[i], typs[i] = v, c.Type()
		if v == nil {
			return nil, nil
		}
		lits[i] = expression.NewLiteral(v, c.Type())
	}
	if n, ok := p.size(ctx, args, typs); ok {
		if max := maxAllowedPacket(ctx); n > max {
			ctx.Warn(1301, "Result of %s() was larger than max_allowed_packet (%d) - truncated", p.name, max)
			return nil, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.build != nil {
		return p.build(ctx, args)
	}
	inner, err := p.inner.WithChildren(lits...)
	if err != nil {
		return nil, err
	}
	return inner.Eval(ctx, row)
}

// maxAllowedPacket is the session's max_allowed_packet.
func maxAllowedPacket(ctx *gms.Context) uint64 {
	if v, err := ctx.GetSessionVariable(ctx, "max_allowed_packet"); err == nil {
		switch x := v.(type) {
		case int64:
			if x > 0 {
				return uint64(x)
			}
		case uint64:
			return x
		case int:
			if x > 0 {
				return uint64(x)
			}
		}
	}
	return 64 << 20
}

// count converts a count argument as MySQL does; negative counts make an
// empty result.
func count(ctx *gms.Context, v any) (uint64, bool) {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return 0, true
		}
		return uint64(x), true
	case uint64:
		return x, true
	}
	var n int64
	if _, err := fmt.Sscan(fmt.Sprint(v), &n); err != nil {
		f, ok := toFloat(v)
		if !ok {
			return 0, false
		}
		n = int64(f + 0.5)
	}
	if n < 0 {
		return 0, true
	}
	return uint64(n), true
}

func toFloat(v any) (float64, bool) {
	var f float64
	if _, err := fmt.Sscan(fmt.Sprint(v), &f); err != nil {
		return 0, false
	}
	return f, true
}

func spaceSize(ctx *gms.Context, args []any, _ []gms.Type) (uint64, bool) {
	return count(ctx, args[0])
}

func repeatSize(ctx *gms.Context, args []any, _ []gms.Type) (uint64, bool) {
	n, ok := count(ctx, args[1])
	if !ok {
		return 0, false
	}
	l := uint64(len(fmt.Sprint(args[0])))
	if s, ok := args[0].(string); ok {
		l = uint64(len(s))
	} else if b, ok := args[0].([]byte); ok {
		l = uint64(len(b))
	}
	if l == 0 || n == 0 {
		return 0, true
	}
	if n > (1<<63)/l {
		return 1 << 63, true
	}
	return l * n, true
}

// padSize is MySQL's: the length in characters times the character
// set's longest character.
func padSize(ctx *gms.Context, args []any, types []gms.Type) (uint64, bool) {
	n, ok := count(ctx, args[1])
	if !ok {
		return 0, false
	}
	mb := uint64(1)
	if ct, ok := types[0].(gms.TypeWithCollation); ok {
		if m := ct.Collation().CharacterSet().MaxLength(); m > 0 {
			mb = uint64(m)
		}
	}
	if n > (1<<62)/mb {
		return 1 << 62, true
	}
	return n * mb, true
}

// buildSpace is SPACE: go-mysql-server's appends one space at a time,
// which takes minutes for a million.
func buildSpace(ctx *gms.Context, args []any) (any, error) {
	v, _, err := types.Int64.Convert(ctx, args[0])
	if err != nil {
		ctx.Warn(1292, "Truncated incorrect INTEGER value: '%v'", args[0])
		v = int64(0)
	}
	n, _ := v.(int64)
	if n <= 0 {
		return "", nil
	}
	return strings.Repeat(" ", int(n)), nil
}
