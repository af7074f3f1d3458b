package sql

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/shopspring/decimal"

	"github.com/reorgdb/reorgdb/catalog"
	"github.com/reorgdb/reorgdb/codec"
	"github.com/reorgdb/reorgdb/ddl"
	"github.com/reorgdb/reorgdb/kv"
)

// MODIFY / CHANGE COLUMN that rewrites values, online (see package ddl:
// a hidden changing column written by DML and filled by a backfill, then
// swapped in). This file holds the SQL half: which changes qualify, the
// conversion of a value to the new type as MySQL's table copy does it in
// strict mode, and DML's write of the hidden column.

// shadowMeta is a hidden changing column as DML writes it.
type shadowMeta struct {
	id       int64
	name     string // the new column's name, for errors
	typ      gms.Type
	kind     valueKind
	coll     gms.CollationID
	nullable bool
	src      int      // position of the source column in the schema
	from     gms.Type // the source column's type
	lenient  bool
	refuse   bool // DML refuses a value that does not convert, rather than dooming the job
	lax      bool // converts as MySQL without strict mode (laxValue)
}

func (m *tableMeta) buildShadows(def *catalog.Table) error {
	for _, c := range def.Changing {
		typ, err := parseType(c.Column.Type)
		if err != nil {
			return fmt.Errorf("changing column %s: type %q: %w", c.Column.Name, c.Column.Type, err)
		}
		_, src := def.ColumnByID(c.Source)
		if src < 0 {
			return fmt.Errorf("changing column %s: unknown source column id %d", c.Column.Name, c.Source)
		}
		m.shadows = append(m.shadows, shadowMeta{
			id: c.Column.ID, name: c.Column.Name, typ: typ, kind: kindOf(typ), coll: stringCollation(typ),
			nullable: c.Column.Nullable, src: src, from: m.schema[src].Type, lenient: c.Lenient, refuse: c.Refuse, lax: c.Lax,
		})
	}
	if len(m.shadows) > 0 {
		ids := make([]int64, len(m.shadows))
		marks := make([]any, len(m.shadows))
		for i, sh := range m.shadows {
			ids[i], marks[i] = sh.id, absent
		}
		m.shadowDec = codec.NewRowDecoderWithDefaults(ids, marks)
	}
	return nil
}

// A hidden changing column takes position len(schema)+i in an index's
// positions (indexMeta.pos), i its place in shadows: the replacement
// indexes of a MODIFY COLUMN are keyed by it, on a row that keyRow
// extends with the hidden columns' values.

// shadowPos is the index position of hidden column id, or -1.
func (m *tableMeta) shadowPos(id int64) int {
	for i, sh := range m.shadows {
		if sh.id == id {
			return len(m.schema) + i
		}
	}
	return -1
}

// keyKind is the value kind and collation of the column at index
// position p.
func (m *tableMeta) keyKind(p int) (valueKind, gms.CollationID) {
	if p < len(m.kinds) {
		return m.kinds[p], m.colls[p]
	}
	sh := &m.shadows[p-len(m.kinds)]
	return sh.kind, sh.coll
}

// keyed reports whether index ix is keyed by a hidden column.
func (m *tableMeta) keyed(ix *indexMeta) bool {
	return slices.ContainsFunc(ix.pos, func(p int) bool { return p >= len(m.schema) })
}

// retiring reports whether ix is an index a MODIFY COLUMN replaced, kept
// up to date until the transactions that still use it end: it is keyed by
// the old column converted back, where distinct new values may meet, so
// it checks no uniqueness.
func (m *tableMeta) retiring(ix *indexMeta) bool {
	return slices.ContainsFunc(ix.pos, func(p int) bool { return p >= len(m.schema) && m.shadows[p-len(m.schema)].lenient })
}

// keyRow returns row, of the visible columns, extended with every hidden
// column: its value in stored (see storedShadows), else converted from
// row. A stored value keys the row's entries as they were written: the
// old definition converted back after a swap may have lost what the new
// one holds. A value that does not convert is noKey (the row then has no
// entry in an index keyed by it: the statement or the backfill fails on
// the value itself).
func (m *tableMeta) keyRow(row gms.Row, rowNum int64, stored []any) gms.Row {
	out := make(gms.Row, len(m.schema), len(m.schema)+len(m.shadows))
	copy(out, row)
	for i, sh := range m.shadows {
		if stored != nil && stored[i] != absent && stored[i] != unconverted {
			out = append(out, stored[i])
			continue
		}
		v, err := sh.convert(row[sh.src], rowNum, true)
		if err != nil {
			v = noKey
		}
		out = append(out, v)
	}
	return out
}

// noKey stands for a hidden column's value that does not convert.
var noKey any = &struct{ noKey bool }{}

// hasKey reports whether a row that keyRow extended has an entry in ix.
func (ix *indexMeta) hasKey(row gms.Row) bool {
	for _, p := range ix.pos {
		if row[p] == noKey {
			return false
		}
	}
	return true
}

// encodeWithShadows encodes a row whose visible columns' canonical values
// are vals, adding every hidden column converted from row. rowNum is the
// row's number in errors. doom is nil for the backfill; for a statement's
// write it is called, instead of failing the write, with a hidden column
// in doom mode whose value does not convert and the error its job fails
// with (see package ddl), and the row is stored without that column.
func (m *tableMeta) encodeWithShadows(row gms.Row, vals, kept []any, rowNum int64, doom func(sh *shadowMeta, err error)) ([]byte, error) {
	ids := slices.Clip(m.colIDs)
	dml := doom != nil
	for i := range m.shadows {
		sh := &m.shadows[i]
		if kept != nil && kept[i] != absent && kept[i] != unconverted {
			ids, vals = append(ids, sh.id), append(vals, kept[i])
			continue
		}
		v, err := sh.convert(row[sh.src], rowNum, dml)
		if err != nil && kept != nil && kept[i] == unconverted {
			continue // the backfill has yet to reach the row, and fails the job on it
		}
		if err != nil && dml && !sh.lenient && !sh.refuse && isConversionError(err) {
			_, jobErr := sh.convert(row[sh.src], rowNum, false)
			doom(sh, jobErr)
			continue
		}
		if err != nil {
			return nil, err
		}
		c, err := toCanonical(sh.kind, v)
		if err != nil {
			return nil, err
		}
		ids, vals = append(ids, sh.id), append(vals, c)
	}
	return codec.EncodeRow(nil, ids, vals)
}

// sameVisible reports whether two stored versions of a row differ at most
// in hidden columns: while a MODIFY COLUMN's backfill rewrites rows, a
// version it wrote after a transaction's snapshot changes nothing that
// transaction read.
func (m *tableMeta) sameVisible(a, b []byte) bool {
	if len(m.shadows) == 0 || a == nil || b == nil {
		return false
	}
	va, vb := make([]any, len(m.colIDs)), make([]any, len(m.colIDs))
	if m.decoder.Decode(a, va) != nil || m.decoder.Decode(b, vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// absent marks a hidden column a stored row lacks, or one to convert
// again; unconverted one the stored row lacks while the update leaves its
// source as it is: a value that does not convert is then not the
// statement's doing, and the column stays out of the row.
var (
	absent      any = &struct{ absent bool }{}
	unconverted any = &struct{ unconverted bool }{}
)

// storedShadows returns the stored value of each hidden column in the
// newest version of the row with handle h (absent where it has none), or
// nil when the table has none.
func (e *editor) storedShadows(txn *kv.Txn, h int64) ([]any, error) {
	m := e.t.m
	if len(m.shadows) == 0 {
		return nil, nil
	}
	rec, found, err := txn.GetLatest(codec.RecordKey(m.def.ID, h))
	if err != nil || !found {
		return nil, err
	}
	stored := make([]any, len(m.shadows))
	if err := m.shadowDec.Decode(rec, stored); err != nil {
		return nil, err
	}
	return stored, nil
}

// keptShadows returns, for an UPDATE from old to new of a row whose
// hidden columns hold stored, the stored value of each hidden column
// whose source column the update leaves as it is (absent for the others,
// unconverted when the row has none yet), or nil. The stored value is
// kept rather than converted again: a transaction on the schema version
// before a swap reads the old column converted back, which may have lost
// what a transaction on the new version wrote into the new one.
func (m *tableMeta) keptShadows(stored []any, old, new gms.Row) []any {
	if stored == nil {
		return nil
	}
	kept := slices.Clone(stored)
	for i, sh := range m.shadows {
		switch {
		case !reflect.DeepEqual(old[sh.src], new[sh.src]):
			kept[i] = absent
		case kept[i] == absent:
			kept[i] = unconverted
		}
	}
	return kept
}

// isConversionError reports whether err is a value's refusal by
// convertColumnValue, the kind of error that dooms a job.
func isConversionError(err error) bool {
	var se *mysql.SQLError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Num {
	case mysql.ERBadNullError, 1138, 1264, 1265, 1292, 1366, 3140, mysql.ERDataTooLong:
		return true
	}
	return false
}

// convert turns a value of the source column into the hidden column's.
func (sh *shadowMeta) convert(v any, rowNum int64, dml bool) (out any, err error) {
	if isPaddedChar(sh.typ) {
		// A CHAR value is kept without its trailing spaces (trimChars).
		defer func() {
			if s, ok := out.(string); ok {
				out = strings.TrimRight(s, " ")
			}
		}()
	}
	if !sh.lenient {
		src := sourceValue(sh.from, sh.typ, v)
		out, err := convertColumnValue(src, sh.typ, sh.nullable, sh.name, rowNum, dml)
		if err != nil && sh.lax && isConversionError(err) {
			if lv, ok := laxValue(src, sh.typ); ok {
				return lv, nil
			}
		}
		return out, err
	}
	if v == nil {
		return nil, nil
	}
	c, _, cerr := sh.typ.Convert(context.Background(), v)
	if cerr != nil {
		return nil, nil
	}
	return c, nil
}

// sourceValue is what a value v of type from converts from into type to:
// an ENUM member or a SET by its text (rows store their numbers), and a
// date or time by its text when it becomes a string (as MySQL shows it:
// a DATE without a time); any other value as it is.
func sourceValue(from, to gms.Type, v any) any {
	if v == nil {
		return nil
	}
	switch fk, tk := kindOf(from), kindOf(to); {
	case fk == kindTime && (isNumberKind(tk) || tk == kindTimespan):
		if t, ok := v.(time.Time); ok {
			if tk == kindTimespan {
				return timeOfDay(t)
			}
			return temporalNumber(from, t)
		}
	case fk == kindTimespan && isNumberKind(tk):
		if ts, ok := v.(types.Timespan); ok {
			return timespanNumber(ts, Precision(from))
		}
	case fk == kindEnum || fk == kindSet,
		(fk == kindTime || fk == kindTimespan || fk == kindYear || fk == kindJSON) && (tk == kindString || tk == kindBytes):
		sv, err := from.SQL(gms.NewEmptyContext(), nil, v)
		if err == nil {
			return sv.ToString()
		}
	}
	return v
}

// convertColumnValue converts v to type to as MySQL's ALTER TABLE copy
// does in strict mode, or fails with its error: 1264 out of range, 1265
// data truncated, 1366 incorrect value, 1138 NULL into NOT NULL (1048 for
// a statement's write, dml, and 1406 for a string too long, as an INSERT
// gets them). Fractional digits beyond a DECIMAL's scale are rounded, as
// MySQL does with a note.
func convertColumnValue(v any, to gms.Type, nullable bool, col string, rowNum int64, dml bool) (any, error) {
	row := max(rowNum, 1)
	if v == nil {
		if nullable {
			return nil, nil
		}
		if dml {
			return nil, mysql.NewSQLError(mysql.ERBadNullError, "23000", "Column '%s' cannot be null", col)
		}
		return nil, mysql.NewSQLError(mysql.ERInvalidUseOfNull, "22004", "Invalid use of NULL value")
	}
	if _, isNumber := numberValue(v); isNumber {
		switch kindOf(to) {
		case kindTime:
			s, ok := numberDatetime(v)
			if !ok {
				return nil, badTemporal(to, v, col, row)
			}
			v = s
		case kindTimespan:
			ts, ok := numberTimespan(v)
			if !ok {
				return nil, badTemporal(to, v, col, row)
			}
			v = ts
		}
	}
	outOfRange := mysql.NewSQLError(mysql.ERWarnDataOutOfRange, "22003", "Out of range value for column '%s' at row %d", col, row)
	truncated := mysql.NewSQLError(mysql.ERWarnDataTruncated, "01000", "Data truncated for column '%s' at row %d", col, row)
	if s, ok := v.(string); ok && types.IsNumber(to) {
		num := numberPrefix.FindString(strings.TrimLeft(s, " \t\n\r"))
		if num == "" {
			return nil, mysql.NewSQLError(mysql.ERTruncatedWrongValueForField, "HY000",
				"Incorrect %s value: '%s' for column '%s' at row %d", numberKind(to), s, col, row)
		}
		if strings.TrimSpace(s) != num {
			return nil, truncated
		}
		var ok bool
		if v, ok = parseNumber(num, to); !ok {
			return nil, outOfRange
		}
	}
	if types.IsInteger(to) && !intFits(v, to) {
		return nil, outOfRange
	}
	if bt, ok := to.(types.BitType); ok {
		return bitValue(v, bt, col, row)
	}
	out, inRange, err := to.Convert(context.Background(), v)
	switch {
	case err == nil && inRange == gms.InRange:
		return out, nil
	case err == nil, types.ErrConvertToDecimalLimit.Is(err):
		return nil, outOfRange
	case types.ErrLengthBeyondLimit.Is(err):
		// Trailing spaces past the length are cut, with a note in MySQL.
		if s, ok := v.(string); ok {
			if st, ok := to.(gms.StringType); ok && int64(len([]rune(strings.TrimRight(s, " ")))) <= st.MaxCharacterLength() {
				return truncateRunes(s, st.MaxCharacterLength()), nil
			}
		}
		if dml {
			return nil, mysql.NewSQLError(mysql.ERDataTooLong, "22001", "Data too long for column '%s' at row %d", col, row)
		}
		return nil, truncated
	}
	switch kindOf(to) {
	case kindEnum, kindSet:
		return nil, truncated
	case kindJSON:
		reason := strings.TrimPrefix(fmt.Sprint(err), "Invalid JSON text: ")
		return nil, mysql.NewSQLError(3140, "22032", "Invalid JSON text: \"%s\" in value for column '%s'.", reason, col)
	case kindYear:
		if _, isString := v.(string); !isString {
			return nil, outOfRange
		}
	case kindTimespan, kindTime:
		return nil, badTemporal(to, v, col, row)
	}
	return nil, mysql.NewSQLError(mysql.ERTruncatedWrongValueForField, "HY000",
		"Incorrect %s value: '%s' for column '%s' at row %d", to.String(), displayValue(v), col, row)
}

// badTemporal is MySQL's 1292 for a value v that temporal type to cannot
// hold.
func badTemporal(to gms.Type, v any, col string, row int64) error {
	what := "datetime"
	switch to.Type() {
	case sqltypes.Date:
		what = "date"
	case sqltypes.Time:
		what = "time"
	}
	return mysql.NewSQLError(mysql.ERTruncatedWrongValue, "22007",
		"Incorrect %s value: '%s' for column '%s' at row %d", what, displayValue(v), col, row)
}

// bitValue is integer or BIT value v as a BIT(n): its 64-bit two's
// complement, which must fit in n bits (1406 otherwise, as MySQL's copy
// fails in strict mode).
func bitValue(v any, to types.BitType, col string, row int64) (any, error) {
	var u uint64
	switch x := v.(type) {
	case uint64:
		u = x
	case int64:
		u = uint64(x)
	default:
		c, _, err := types.Int64.Convert(context.Background(), v)
		if err != nil {
			c, _, err = types.Uint64.Convert(context.Background(), v)
			if err != nil {
				return nil, err
			}
			u = c.(uint64)
			break
		}
		u = uint64(c.(int64))
	}
	if n := to.NumberOfBits(); n < 64 && u>>n != 0 {
		return nil, mysql.NewSQLError(mysql.ERDataTooLong, "22001", "Data too long for column '%s' at row %d", col, row)
	}
	return u, nil
}

// parseNumber turns the text of a number into a value of integer type
// t's range, rounded half away from zero as MySQL does, or checks that it
// is within a DOUBLE's; ok is false when it is out of range.
func parseNumber(num string, t gms.Type) (v any, ok bool) {
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return nil, false // beyond a DOUBLE's range
	}
	if !types.IsInteger(t) {
		return num, true
	}
	if math.Abs(f) >= 1<<65 {
		return nil, false
	}
	d, err := decimal.NewFromString(num)
	if err != nil {
		return nil, false
	}
	b := d.Round(0).BigInt()
	if b.IsInt64() {
		return b.Int64(), true
	}
	if b.IsUint64() {
		return b.Uint64(), true
	}
	return nil, false
}

var numberPrefix = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?`)

func numberKind(t gms.Type) string {
	switch {
	case types.IsInteger(t), types.IsYear(t):
		return "integer"
	case types.IsDecimal(t):
		return "decimal"
	}
	return "double"
}

// intFits reports whether an integer value v fits integer type t; values
// of other kinds are left to t's own conversion.
func intFits(v any, t gms.Type) bool {
	var n big.Int
	switch x := v.(type) {
	case int8, int16, int32, int64, int:
		c, _ := toCanonical(kindInt64, x)
		n.SetInt64(c.(int64))
	case uint8, uint16, uint32, uint64, uint:
		c, _ := toCanonical(kindUint64, x)
		n.SetUint64(c.(uint64))
	default:
		return true
	}
	lo, hi, ok := intRange(t)
	return !ok || n.Cmp(lo) >= 0 && n.Cmp(hi) <= 0
}

// intRange is integer type t's smallest and largest values; ok is false
// for other types.
func intRange(t gms.Type) (lo, hi *big.Int, ok bool) {
	bits, ok := intBits[t.Type()]
	if !ok {
		return nil, nil, false
	}
	lo, hi = new(big.Int), new(big.Int).Lsh(big.NewInt(1), bits)
	if types.IsUnsigned(t) {
		hi.Sub(hi, big.NewInt(1))
	} else {
		hi.Rsh(hi, 1)
		lo.Neg(hi)
		hi.Sub(hi, big.NewInt(1))
	}
	return lo, hi, true
}

var intBits = map[query.Type]uint{
	query.Type_INT8: 8, query.Type_INT16: 16, query.Type_INT24: 24, query.Type_INT32: 32, query.Type_INT64: 64,
	query.Type_UINT8: 8, query.Type_UINT16: 16, query.Type_UINT24: 24, query.Type_UINT32: 32, query.Type_UINT64: 64,
}

// ConvertRow implements ddl.ColumnConverter.
func (x indexer) ConvertRow(dbName string, t *catalog.Table, ids []int64, h int64, row []byte, rowNum int64) ([]byte, []ddl.Entry, error) {
	m, err := metaFor(dbName, t)
	if err != nil {
		return nil, nil, err
	}
	r, err := (&Table{m: m}).decodeRow(h, row, true)
	if err != nil {
		return nil, nil, err
	}
	vals := make([]any, len(r))
	for p, v := range r {
		if vals[p], err = toCanonical(m.kinds[p], v); err != nil {
			return nil, nil, err
		}
	}
	out, err := m.encodeWithShadows(r, vals, nil, rowNum, nil)
	if err == nil {
		x.e.noteLax(m, r, h)
	}
	if err != nil || len(ids) == 0 {
		return out, nil, badValue(err)
	}
	ents, err := (&editor{t: &Table{m: m}}).entries(r, h, func(ix *indexMeta) bool {
		return ix.def != nil && slices.Contains(ids, ix.def.ID)
	}, nil)
	if err != nil {
		return nil, nil, err
	}
	return out, ddlEntries(ents), nil
}

// FitKeyPart implements ddl.ColumnConverter.
func (x indexer) FitKeyPart(t *catalog.Table, ic catalog.IndexColumn) catalog.IndexColumn {
	c, _ := t.ColumnByID(ic.ColumnID)
	if ic.Length == 0 || c == nil {
		return ic
	}
	typ, err := parseType(c.Type)
	if err != nil {
		return ic
	}
	st, ok := typ.(gms.StringType)
	if !ok || (!types.IsTextBlob(typ) && st.Length() <= ic.Length) {
		ic.Length = 0
	}
	return ic
}

// reorgKinds are the value kinds a MODIFY COLUMN converts between.
var reorgKinds = []valueKind{
	kindInt8, kindInt16, kindInt32, kindInt64, kindUint8, kindUint16, kindUint32, kindUint64,
	kindFloat32, kindFloat64, kindDecimal, kindString,
}

// reorgChange says why changing column old (of table def, whose
// go-mysql-server column is was) to col cannot be done by rewriting its
// values online, or returns nil.
func reorgChange(def *catalog.Table, old *catalog.Column, was, col *gms.Column) error {
	refuse := func(reason string, args ...any) error {
		return notInstant("ALTER TABLE ... MODIFY COLUMN " + fmt.Sprintf(reason, args...))
	}
	switch {
	case col.AutoIncrement != old.AutoIncrement:
		return refuse("that changes AUTO_INCREMENT of column %s", old.Name)
	case col.Generated != nil || old.Generated != "":
		return refuse("of generated column %s (or making it one)", old.Name)
	case old.ID == def.HandleColumn && !isHandleType(col.Type):
		return refuse("that changes clustered integer primary-key column %s to %s: the rows are keyed by it, so it stays an integer type up to BIGINT", old.Name, col.Type.String())
	}
	for _, c := range def.Columns {
		if c.Generated != "" && mentions(c.Generated, old.Name) {
			return refuse("that changes column %s, which generated column %s uses", old.Name, c.Name)
		}
	}
	if was.Type.String() == col.Type.String() {
		return nil
	}
	if !convertible(kindOf(was.Type), kindOf(col.Type)) {
		return refuse("from %s to %s (column %s): only numbers, strings, binary strings, ENUM and SET, DATE/DATETIME/TIMESTAMP, TIME, YEAR, BIT and JSON are converted, each to its own kind or from and to strings (dates and TIME also to and from numbers, dates to TIME, YEAR and BIT to and from integers)", was.Type.String(), col.Type.String(), old.Name)
	}
	return nil
}

// convertible says whether a MODIFY COLUMN converts values of kind from
// to kind to: numbers and strings among themselves (reorgKinds), binary
// strings to binary strings, ENUM and SET to either or to and from
// strings, dates and datetimes to each other and to and from strings,
// TIME to TIME and to and from strings, dates and TIME to and from
// numbers, dates to TIME, YEAR to and from integers and strings, BIT to
// BIT and to and from integers, and JSON to and from strings.
func convertible(from, to valueKind) bool {
	if slices.Contains(reorgKinds, from) && slices.Contains(reorgKinds, to) {
		return true
	}
	group := func(k valueKind) int {
		switch k {
		case kindBytes:
			return 1
		case kindEnum, kindSet:
			return 2
		case kindTime:
			return 3
		case kindTimespan:
			return 4
		case kindYear:
			return 5
		case kindJSON:
			return 6
		}
		return 0
	}
	switch {
	case group(from) != 0 && group(from) == group(to):
		return true
	case from == kindString:
		return group(to) >= 2
	case to == kindString:
		return group(from) >= 2
	case (from == kindTime || from == kindTimespan) && isNumberKind(to),
		(to == kindTime || to == kindTimespan) && isNumberKind(from),
		from == kindTime && to == kindTimespan:
		return true
	case from == kindYear || from == kindBit:
		return isIntKind(to) || from == to
	case to == kindYear || to == kindBit:
		return isIntKind(from)
	}
	return false
}

func isIntKind(k valueKind) bool { return k >= kindInt8 && k <= kindUint64 }

// doomValue is the doom record of a job that fails with err.
func doomValue(err error) []byte {
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return ddl.DoomValue(uint16(se.Num), se.Message)
	}
	return ddl.DoomValue(mysql.ERWarnDataTruncated, err.Error())
}

// badValue marks a value's refusal by the new column type as the row
// error that fails a reorganisation (ddl.BadValueError).
func badValue(err error) error {
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return &ddl.BadValueError{Err: err}
	}
	return err
}
