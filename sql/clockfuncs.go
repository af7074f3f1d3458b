package sql

import (
	"fmt"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// go-mysql-server types NOW(n), CURRENT_TIMESTAMP(n), SYSDATE(n) and
// UTC_TIMESTAMP(n) as DATETIME(6), so clients print six digits whatever
// n is; it does not cut UTC_TIMESTAMP(n) to n digits, and CURTIME(n) /
// CURRENT_TIME(n) drop the fraction altogether. In MySQL each is a
// DATETIME(n) or TIME(n) holding the current time cut to n digits.
// timeToTextRule puts preciseClock in their place; column defaults, which
// go-mysql-server validates by the function's own type, are left as they
// are.

// preciseClock is one of those functions with its literal precision.
type preciseClock struct {
	orig gms.Expression // go-mysql-server's function, for its name and arguments
	src  gms.Expression // the current time to six digits
	prec int
	time bool // a TIME (CURTIME) rather than a DATETIME
}

var (
	_ gms.FunctionExpression         = (*preciseClock)(nil)
	_ gms.NonDeterministicExpression = (*preciseClock)(nil)
	_ gms.CollationCoercible         = (*preciseClock)(nil)
)

// withClockPrecision is e as preciseClock when e is one of those functions
// called with a literal precision.
func withClockPrecision(e gms.Expression) (gms.Expression, transform.TreeIdentity, error) {
	if u, ok := e.(*function.UTCTimestamp); ok {
		return utcClock(u)
	}
	ch := e.Children()
	if len(ch) != 1 {
		return e, transform.SameTree, nil
	}
	lit, ok := ch[0].(*expression.Literal)
	if !ok {
		return e, transform.SameTree, nil
	}
	v, err := lit.Eval(nil, nil)
	if err != nil {
		return nil, transform.SameTree, err
	}
	prec, ok := types.CoalesceInt(v)
	if !ok {
		return e, transform.SameTree, nil
	}
	name := e.(gms.FunctionExpression).FunctionName()
	if prec < 0 || prec > 6 {
		return nil, transform.SameTree, mysql.NewSQLError(1426, "42000", // ER_TOO_BIG_PRECISION
			"Too-big precision %d specified for '%s'. Maximum is 6.", prec, name)
	}
	six := expression.NewLiteral(int8(6), types.Int8)
	pc := &preciseClock{orig: e, prec: prec}
	switch e.(type) {
	case *function.CurrTime:
		pc.src, err = function.NewNow(six)
		pc.time = true
	default: // NOW, CURRENT_TIMESTAMP, LOCALTIME[STAMP], SYSDATE
		pc.src, err = e.WithChildren(six)
	}
	if err != nil {
		return nil, transform.SameTree, err
	}
	return pc, transform.NewTree, nil
}

// utcClock is UTC_TIMESTAMP([n]) as preciseClock. go-mysql-server keeps
// its precision, already checked, where only its text shows it.
func utcClock(u *function.UTCTimestamp) (gms.Expression, transform.TreeIdentity, error) {
	prec := 0
	if s := u.String(); s != "UTC_TIMESTAMP()" {
		if _, err := fmt.Sscanf(s, "UTC_TIMESTAMP(%d)", &prec); err != nil {
			return u, transform.SameTree, nil
		}
	}
	src, err := function.NewUTCTimestamp()
	if err != nil {
		return nil, transform.SameTree, err
	}
	return &preciseClock{orig: u, src: src, prec: prec}, transform.NewTree, nil
}

func (p *preciseClock) Resolved() bool             { return true }
func (p *preciseClock) IsNullable() bool           { return false }
func (p *preciseClock) IsNonDeterministic() bool   { return true }
func (p *preciseClock) String() string             { return p.orig.String() }
func (p *preciseClock) Children() []gms.Expression { return p.orig.Children() }
func (p *preciseClock) FunctionName() string {
	return p.orig.(gms.FunctionExpression).FunctionName()
}
func (p *preciseClock) Description() string { return p.orig.(gms.FunctionExpression).Description() }

func (p *preciseClock) CollationCoercibility(*gms.Context) (gms.CollationID, byte) {
	return gms.Collation_binary, 5
}

func (p *preciseClock) Type() gms.Type {
	if p.time {
		return TimeType{Precision: uint8(p.prec)}
	}
	return types.MustCreateDatetimeType(sqltypes.Datetime, p.prec)
}

func (p *preciseClock) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	orig, err := p.orig.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	e, _, err := withClockPrecision(orig)
	return e, err
}

func (p *preciseClock) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := p.src.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	t, ok := v.(time.Time)
	if !ok {
		return nil, fmt.Errorf("%s: unexpected value %T", p.FunctionName(), v)
	}
	unit := time.Microsecond
	for range 6 - p.prec {
		unit *= 10
	}
	t = t.Truncate(unit)
	if p.time {
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
		return types.Timespan(t.Sub(day).Microseconds()), nil
	}
	return t, nil
}
