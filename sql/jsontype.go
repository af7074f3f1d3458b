package sql

import (
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function/json"
)

// jsonType is JSON_TYPE as MySQL 8 has it: NULL for SQL NULL.
// go-mysql-server's returns 'NULL', which is the type of a JSON null, so
// the two could not be told apart. The Provider offers it in place of
// the built-in.
type jsonType struct{ gms.Expression }

var _ gms.FunctionExpression = jsonType{}

func newJSONType(args ...gms.Expression) (gms.Expression, error) {
	e, err := json.NewJSONType(args...)
	if err != nil {
		return nil, err
	}
	return jsonType{e}, nil
}

func (j jsonType) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := j.Children()[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	return j.Expression.Eval(ctx, row)
}

func (j jsonType) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	e, err := j.Expression.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return jsonType{e}, nil
}

func (j jsonType) IsNullable() bool     { return true }
func (j jsonType) FunctionName() string { return "json_type" }
func (j jsonType) Description() string  { return "returns the type of a JSON value, NULL for NULL." }
