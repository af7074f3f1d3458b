package sql

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// timeCast is CAST(x AS TIME(n)) as MySQL does it: go-mysql-server's CAST
// gives every TIME 6 decimals (binary-protocol clients print six digits
// for TIME(0)), keeps the fraction whatever n is, and gives NULL for a
// date-time, whose time of day MySQL takes.
type timeCast struct {
	Child gms.Expression
	T     TimeType
}

var _ gms.Expression = timeCast{}

// asTimeCast is the timeCast for e when e is a CAST or CONVERT to TIME.
func asTimeCast(e *expression.Convert) (gms.Expression, bool) {
	if e.Type() != types.Time {
		return nil, false
	}
	// Convert keeps n unexported; its String ends "time(n))" or "time)".
	s := e.String()
	prec := 0
	if strings.HasSuffix(s, "))") {
		i := strings.LastIndex(s, "time(")
		if i < 0 {
			return nil, false
		}
		n, err := strconv.Atoi(s[i+len("time(") : len(s)-2])
		if err != nil || n < 0 || n > 6 {
			return nil, false
		}
		prec = n
	}
	return timeCast{Child: e.Child, T: TimeType{Precision: uint8(prec)}}, true
}

func (c timeCast) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if t, ok := v.(time.Time); ok {
		v = t.Format("15:04:05.999999")
	}
	out, _, err := c.T.Convert(ctx, v)
	if err == nil {
		return out, nil
	}
	if s, ok := v.(string); ok {
		if dt, _, derr := types.DatetimeMaxPrecision.Convert(ctx, s); derr == nil && dt != nil {
			out, _, err = c.T.Convert(ctx, dt.(time.Time).Format("15:04:05.999999"))
			if err == nil {
				return out, nil
			}
		}
	}
	// As go-mysql-server's CAST: a value that is no time is NULL.
	return nil, nil
}

func (c timeCast) Type() gms.Type             { return c.T }
func (c timeCast) Children() []gms.Expression { return []gms.Expression{c.Child} }
func (c timeCast) Resolved() bool             { return c.Child.Resolved() }
func (c timeCast) IsNullable() bool           { return true }
func (c timeCast) String() string             { return fmt.Sprintf("CAST(%s AS %s)", c.Child, c.T) }

func (c timeCast) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != 1 {
		return nil, gms.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	return timeCast{Child: children[0], T: c.T}, nil
}
