package catalog

import "fmt"

// The index-state protocol: what DML does to an index in each state of an
// online schema change. Every rule of DML towards an index that is being
// built or dropped is in dmlRules below; the SQL layer's editor applies
// it, and package ddl moves indexes from state to state so that every
// live transaction runs with one of two adjacent rows of the table.

// IndexState is where an index is in the online schema-change protocol.
// ADD INDEX walks absent -> delete-only -> write-only -> write
// reorganization -> public, and back on failure; DROP INDEX walks public
// -> write-only -> delete-only -> absent.
type IndexState uint8

const (
	StateAbsent IndexState = iota
	StateDeleteOnly
	StateWriteOnly
	StateWriteReorg
	StatePublic
)

func (s IndexState) String() string {
	switch s {
	case StateAbsent:
		return "none"
	case StateDeleteOnly:
		return "delete only"
	case StateWriteOnly:
		return "write only"
	case StateWriteReorg:
		return "write reorganization"
	case StatePublic:
		return "public"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// BuildPhase is where an ingest build is with an index that is not yet
// public: it has no change log (a transactional build, a DROP INDEX), DML
// logs the rows it changes, or the log is being merged while DML writes
// the entries itself.
type BuildPhase uint8

const (
	BuildNone BuildPhase = iota
	BuildLogging
	BuildMerging
)

func (b BuildPhase) String() string {
	switch b {
	case BuildNone:
		return "none"
	case BuildLogging:
		return "logging"
	case BuildMerging:
		return "merging"
	}
	return fmt.Sprintf("build(%d)", uint8(b))
}

// Build is the index's build phase. A public index has none: the change
// log is gone in the step that makes it public.
func (ix *Index) Build() BuildPhase {
	switch {
	case ix.ChangeLogID == 0 || ix.State == StatePublic:
		return BuildNone
	case ix.Merging:
		return BuildMerging
	}
	return BuildLogging
}

// DMLRule is what a statement's writes do to one index.
type DMLRule struct {
	// Add: a written row's entries are added (INSERT, the new side of an
	// UPDATE).
	Add bool
	// Remove: a deleted row's entries are removed (DELETE, the old side
	// of an UPDATE).
	Remove bool
	// Log: the adds and removes the rule calls for are not made; the
	// row's handle goes to the change log instead, and the build's merge
	// gives the row its entries from its current version.
	Log bool
	// StaleEntries: an entry of the index may be one the build's snapshot
	// gave a row that has changed since, so a unique check reads the row
	// it points at and calls it a duplicate only if the row still has the
	// key.
	StaleEntries bool
	// Read: queries may read the index.
	Read bool
}

// dmlRules is the protocol. Down the states, each row does everything the
// row above does and more, so two transactions on adjacent states never
// leave an entry without its row or a row without its entry once the
// index is public: a delete-only index loses the entries of rows deleted
// by transactions that do not yet add entries; a write-only index gets
// the entries of every row written from then on, so the backfill only has
// to cover the rows that existed before; only a public index is read.
var dmlRules = [StatePublic + 1][BuildMerging + 1]DMLRule{
	StateAbsent: {},
	StateDeleteOnly: {
		BuildNone:    {Remove: true},
		BuildLogging: {Remove: true, Log: true},
		BuildMerging: {Remove: true, StaleEntries: true}, // rolling back from a merge
	},
	StateWriteOnly: {
		BuildNone:    {Add: true, Remove: true},
		BuildLogging: {Add: true, Remove: true, Log: true},
		BuildMerging: {Add: true, Remove: true, StaleEntries: true}, // rolling back from a merge
	},
	StateWriteReorg: {
		BuildNone:    {Add: true, Remove: true},
		BuildLogging: {Add: true, Remove: true, Log: true},
		BuildMerging: {Add: true, Remove: true, StaleEntries: true},
	},
	StatePublic: {
		BuildNone: {Add: true, Remove: true, Read: true},
	},
}

// DML is what DML does to the index in its current state and build phase.
func (ix *Index) DML() DMLRule {
	if int(ix.State) >= len(dmlRules) {
		return DMLRule{}
	}
	return dmlRules[ix.State][ix.Build()]
}
