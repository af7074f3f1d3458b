package sql

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// loadData builds LOAD DATA's row source. go-mysql-server's own splits
// each line with strings.Split and drops escape characters instead of
// decoding them, so a tab or newline inside a value, an escaped or
// quoted separator and \N all load wrong; infileReader reads the file
// as MySQL does, and the mapping of fields to columns, user variables,
// SET and defaults below follows go-mysql-server's loadDataIter.
func loadData(ctx *gms.Context, n *plan.LoadData) (gms.RowIter, error) {
	rc, err := openInfile(ctx, n)
	if err != nil {
		return nil, err
	}
	it := &loadDataIter{
		n:      n,
		closer: rc,
		in: newInfileReader(rc, n.FieldsTerminatedBy, n.FieldsEnclosedBy,
			n.FieldsEscapedBy, n.LinesStartingBy, n.LinesTerminatedBy),
		ignore:        n.IgnoreNum,
		fieldToColMap: fieldToColumns(n),
	}
	return it, nil
}

func openInfile(ctx *gms.Context, n *plan.LoadData) (io.ReadCloser, error) {
	if n.Local {
		if _, on, _ := gms.SystemVariables.GetGlobal("local_infile"); on == int8(0) {
			return nil, fmt.Errorf("local_infile needs to be set to 1 to use LOCAL")
		}
		return ctx.LoadInfile(n.File)
	}
	_, dir, _ := gms.SystemVariables.GetGlobal("secure_file_priv")
	if err := underSecureFileDir(dir, n.File); err != nil {
		return nil, err
	}
	f, err := os.Open(n.File)
	if err != nil {
		return nil, gms.ErrLoadDataCannotOpen.New(err.Error())
	}
	return f, nil
}

// underSecureFileDir refuses a server-side file outside secure_file_priv.
func underSecureFileDir(dir interface{}, file string) error {
	d, _ := dir.(string)
	if d == "" {
		return nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return gms.ErrLoadDataCannotOpen.New(err.Error())
	}
	absDir, err := filepath.Abs(d)
	if err != nil {
		return gms.ErrLoadDataCannotOpen.New(err.Error())
	}
	if abs != absDir && !strings.HasPrefix(abs, strings.TrimSuffix(absDir, string(filepath.Separator))+string(filepath.Separator)) {
		return gms.ErrSecureFilePriv.New()
	}
	return nil
}

// fieldToColumns maps each field of a line to its column's index in the
// schema, -1 for a field read into a user variable.
func fieldToColumns(n *plan.LoadData) []int {
	sch := n.Schema()
	colNames := n.ColNames
	if len(colNames) == 0 {
		for _, col := range sch {
			colNames = append(colNames, col.Name)
		}
	}
	m := make([]int, len(n.UserVars))
	for f, c := 0, 0; f < len(n.UserVars) && c < len(colNames); f++ {
		if n.UserVars[f] != nil {
			m[f] = -1
			continue
		}
		m[f] = sch.IndexOf(colNames[c], sch[0].Source)
		c++
	}
	return m
}

type loadDataIter struct {
	n             *plan.LoadData
	in            *infileReader
	closer        io.Closer
	ignore        int64
	fieldToColMap []int
	row           int // the line's number among those loaded, for warnings
}

func (l *loadDataIter) Next(ctx *gms.Context) (gms.Row, error) {
	for ; l.ignore > 0; l.ignore-- {
		if err := l.in.skipLine(); err != nil {
			return nil, err
		}
	}
	fields, err := l.in.record()
	if err != nil {
		return nil, err
	}
	l.row++
	exprs, err := l.exprs(ctx, fields)
	if err != nil {
		return nil, err
	}
	row := make(gms.Row, len(exprs))
	var later []int
	for i, e := range exprs {
		// A non-literal default may read other columns: second pass.
		if d, ok := e.(*gms.ColumnDefaultValue); ok && !d.IsLiteral() {
			later = append(later, i)
			continue
		}
		if e != nil {
			if row[i], err = e.Eval(ctx, row); err != nil {
				return nil, err
			}
		}
	}
	for _, i := range later {
		if row[i], err = exprs[i].Eval(ctx, row); err != nil {
			return nil, err
		}
	}
	return row, nil
}

func (l *loadDataIter) Close(*gms.Context) error { return l.closer.Close() }

// exprs turns a line's fields into one expression per destination
// column (nil where the insert's projection fills in the default).
func (l *loadDataIter) exprs(ctx *gms.Context, fields []infileField) ([]gms.Expression, error) {
	n := l.n
	fieldRow := make(gms.Row, len(fields))
	for i, f := range fields {
		if !f.null {
			fieldRow[i] = string(f.val)
		}
	}
	exprs := make([]gms.Expression, len(n.DestSch))
	for fi, ei := 0, 0; fi < len(fields) && fi < len(n.UserVars); fi++ {
		if uv := n.UserVars[fi]; uv != nil {
			set := uv.(*expression.SetField)
			if err := setUserVar(ctx, set.LeftChild.(*expression.UserVar), set.RightChild, fieldRow); err != nil {
				return nil, err
			}
			continue
		}
		if ei < len(exprs) {
			exprs[ei] = l.fieldExpr(ctx, fi, fields[fi])
			ei++
		}
	}
	if err := l.applySet(ctx, exprs, fieldRow); err != nil {
		return nil, err
	}
	if len(n.ColNames) == 0 {
		return exprs, fillDefaults(n.DestSch, exprs)
	}
	return exprs, nil
}

func (l *loadDataIter) fieldExpr(ctx *gms.Context, fi int, f infileField) gms.Expression {
	switch {
	case f.null:
		return expression.NewLiteral(nil, types.Null)
	case len(f.val) > 0:
		return expression.NewLiteral(string(f.val), types.LongText)
	}
	col := l.n.DestSch[l.fieldToColMap[fi]]
	if _, ok := col.Type.(gms.StringType); ok {
		return expression.NewLiteral("", types.LongText)
	}
	// MySQL reads an empty field of a numeric column as 0, with 1366.
	if types.IsNumber(col.Type) {
		ctx.Warn(1366, "Incorrect %s value: '' for column '%s' at row %d", numberKind(col.Type), col.Name, l.row)
		return expression.NewLiteral(col.Type.Zero(), col.Type)
	}
	if col.Default != nil {
		return col.Default
	}
	return expression.NewLiteral(nil, types.Null)
}

func (l *loadDataIter) applySet(ctx *gms.Context, exprs []gms.Expression, fieldRow gms.Row) error {
	set := l.n.SetExprs
	for fi, ei := 0, 0; len(set) > 0 && fi < len(l.fieldToColMap) && ei < len(exprs); fi++ {
		si := l.fieldToColMap[fi]
		if si == -1 {
			continue
		}
		if e := set[si]; e != nil {
			v, err := e.Eval(ctx, fieldRow)
			if err != nil {
				return err
			}
			exprs[ei] = expression.NewLiteral(v, e.Type())
		}
		ei++
	}
	return nil
}

// fillDefaults gives the columns a short line left out their defaults:
// without a column list the insert's projection does not.
func fillDefaults(sch gms.Schema, exprs []gms.Expression) error {
	for i, e := range exprs {
		if e != nil {
			continue
		}
		col := sch[i]
		if !col.Nullable && col.Default == nil && !col.AutoIncrement {
			return gms.ErrInsertIntoNonNullableDefaultNullColumn.New(col.Name)
		}
		exprs[i] = col.Default
	}
	return nil
}

func setUserVar(ctx *gms.Context, v *expression.UserVar, right gms.Expression, row gms.Row) error {
	val, err := right.Eval(ctx, row)
	if err != nil {
		return err
	}
	return ctx.SetUserVariable(ctx, v.Name, val, types.ApproximateTypeFromValue(val))
}
