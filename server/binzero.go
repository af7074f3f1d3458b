package server

import "github.com/dolthub/vitess/go/sqltypes"

// zeroDatesBinary gives the zero DATE, DATETIME and TIMESTAMP values of a
// binary-protocol result MySQL's encoding, a length of 0. vitess encodes
// them as year, month and day 0, which drivers that build a date from the
// parts (go-sql-driver with parseTime) turn into -0001-11-30; an empty
// value is what vitess encodes with length 0.
func zeroDatesBinary(r *sqltypes.Result) {
	if r == nil {
		return
	}
	for _, row := range r.Rows {
		for i, v := range row {
			switch v.Type() {
			case sqltypes.Date, sqltypes.Datetime, sqltypes.Timestamp:
				if isZeroDate(v.Raw()) {
					row[i] = sqltypes.MakeTrusted(v.Type(), nil)
				}
			}
		}
	}
}

func isZeroDate(b []byte) bool {
	if len(b) < 10 || b[0] != '0' {
		return false
	}
	for _, c := range b {
		if c != '0' && c != '-' && c != ' ' && c != ':' && c != '.' {
			return false
		}
	}
	return true
}
