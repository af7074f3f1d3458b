package codec

// Entry is one index entry of a row, as both DML and the background
// builds write it.
type Entry struct {
	IndexID int64
	Key     []byte
	Value   []byte
	Unique  bool   // the key has no handle: another row may hold it
	Display string // the key's values as MySQL shows them in "Duplicate entry"
}
