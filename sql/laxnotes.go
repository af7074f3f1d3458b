package sql

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// Without strict mode MySQL's ALTER TABLE copy stores what a value
// becomes (laxValue) with a warning for each such row, which the ALTER
// reports. The backfill of a MODIFY COLUMN job converts the rows apart
// from the statement that waits for it, and may convert a row twice (a
// batch that lost a conflict is retried), so the warnings are gathered
// per row (by its handle) while the statement waits, and handed to it
// when the job ends.

// maxLaxNotes is how many warnings a statement gets, as MySQL's default
// max_error_count.
const maxLaxNotes = 1024

// laxNoteKey names a changing column: table ID and new column name.
type laxNoteKey struct {
	table int64
	col   string
}

// laxNoteSet is the warnings of one column's conversion, by row handle.
type laxNoteSet struct {
	byHandle map[int64]gms.Warning
}

// placeholderRow stands for the row number in a gathered warning's text
// until finish knows it: the backfill converts ranges of rows in
// parallel, without their place in the table.
const placeholderRow = 1 << 62

// laxNotes gathers the warnings of the MODIFY COLUMN jobs that statements
// without strict mode wait for.
type laxNotes struct {
	mu   sync.Mutex
	open map[laxNoteKey]*laxNoteSet
}

// start begins gathering the warnings of column col of table.
func (n *laxNotes) start(table int64, col string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.open == nil {
		n.open = map[laxNoteKey]*laxNoteSet{}
	}
	n.open[laxNoteKey{table, strings.ToLower(col)}] = &laxNoteSet{byHandle: map[int64]gms.Warning{}}
}

// gathering reports whether anyone waits for column col's warnings.
func (n *laxNotes) gathering(table int64, col string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.open[laxNoteKey{table, strings.ToLower(col)}] != nil
}

// add records the warning of the row with handle h.
func (n *laxNotes) add(table int64, col string, h int64, w gms.Warning) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.open[laxNoteKey{table, strings.ToLower(col)}]
	if s == nil {
		return
	}
	if _, seen := s.byHandle[h]; seen || len(s.byHandle) < maxLaxNotes {
		s.byHandle[h] = w
	}
}

// finish ends gathering column col's warnings and returns them in the
// order of the rows' handles, each naming its row by rank, the number
// of rows up to it in rows (which yields the table's handles in order).
func (n *laxNotes) finish(table int64, col string, rows func(yield func(h int64) bool)) []gms.Warning {
	n.mu.Lock()
	key := laxNoteKey{table, strings.ToLower(col)}
	s := n.open[key]
	delete(n.open, key)
	n.mu.Unlock()
	if s == nil || len(s.byHandle) == 0 {
		return nil
	}
	handles := slices.Sorted(maps.Keys(s.byHandle))
	out := make([]gms.Warning, 0, len(handles))
	var rank int64
	rows(func(h int64) bool {
		rank++
		for len(handles) > 0 && handles[0] < h {
			handles = handles[1:] // a row deleted since
		}
		if len(handles) > 0 && handles[0] == h {
			w := s.byHandle[h]
			w.Message = strings.Replace(w.Message, fmt.Sprintf(" at row %d", int64(placeholderRow)), fmt.Sprintf(" at row %d", rank), 1)
			out = append(out, w)
			handles = handles[1:]
		}
		return len(handles) > 0
	})
	return out
}

// noteLax records, for each lax hidden column of m whose value in row r
// (handle h) was changed to fit, the warning MySQL gives: the error
// strict mode would have failed with (a NULL as data truncated, a BIT
// too wide as out of range).
func (e *Engine) noteLax(m *tableMeta, r gms.Row, h int64) {
	const row = placeholderRow
	for i := range m.shadows {
		sh := &m.shadows[i]
		if !sh.lax || !e.laxNotes.gathering(m.def.ID, sh.name) {
			continue
		}
		_, err := convertColumnValue(sourceValue(sh.from, sh.typ, r[sh.src]), sh.typ, sh.nullable, sh.name, row, false)
		var se *mysql.SQLError
		if err == nil || !errors.As(err, &se) || !isConversionError(err) {
			continue
		}
		w := gms.Warning{Level: "Warning", Code: se.Num, Message: se.Message}
		switch se.Num {
		case mysql.ERInvalidUseOfNull:
			w.Code, w.Message = mysql.ERWarnDataTruncated, fmt.Sprintf("Data truncated for column '%s' at row %d", sh.name, row)
		case mysql.ERDataTooLong:
			w.Code, w.Message = mysql.ERWarnDataOutOfRange, fmt.Sprintf("Out of range value for column '%s' at row %d", sh.name, row)
		}
		e.laxNotes.add(m.def.ID, sh.name, h, w)
	}
}
