package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// ddlProgress is what a server tells about a running index build.
type ddlProgress struct {
	Phase    string  // e.g. "ingest scan", "txn write reorganization"; "" if unknown
	Fraction float64 // done, 0..1; negative if unknown
}

// ddlMark is the newest DDL job id before a build starts, so that the
// build's own job can be told from earlier ones (0 when not ReorgDB).
func (t *target) ddlMark(ctx context.Context) (int64, error) {
	if t.kind != reorgDB {
		return 0, nil
	}
	var id sql.NullInt64
	if err := t.db.QueryRowContext(ctx, "SELECT MAX(JOB_ID) FROM information_schema.ddl_jobs").Scan(&id); err != nil {
		return 0, fmt.Errorf("read information_schema.ddl_jobs: %w", err)
	}
	return id.Int64, nil
}

// ddlProgress asks the server how far the build on table is: ReorgDB's
// ddl_jobs rows and phase, MariaDB's PROCESSLIST.PROGRESS; other servers
// tell nothing here (Fraction -1).
func (t *target) ddlProgress(ctx context.Context, table string, mark int64) ddlProgress {
	p := ddlProgress{Fraction: -1}
	switch t.kind {
	case reorgDB:
		var rowCount, total sql.NullInt64
		var comments, state sql.NullString
		err := t.db.QueryRowContext(ctx, `SELECT ROW_COUNT, TOTAL_ROWS, COMMENTS, SCHEMA_STATE FROM information_schema.ddl_jobs
			WHERE JOB_ID > ? AND TABLE_NAME = ? ORDER BY JOB_ID DESC LIMIT 1`, mark, table).Scan(&rowCount, &total, &comments, &state)
		if err != nil {
			return p
		}
		p.Phase = reorgPhase(comments.String, state.String)
		if total.Int64 > 0 {
			p.Fraction = min(float64(rowCount.Int64)/float64(total.Int64), 1)
		}
	case mariaDB:
		var pct sql.NullFloat64
		var stage, stages sql.NullInt64
		err := t.db.QueryRowContext(ctx, `SELECT PROGRESS, STAGE, MAX_STAGE FROM information_schema.PROCESSLIST
			WHERE COMMAND = 'Query' AND INFO LIKE 'ALTER TABLE%' LIMIT 1`).Scan(&pct, &stage, &stages)
		if err != nil {
			return p
		}
		if stages.Int64 > 0 {
			p.Phase = fmt.Sprintf("stage %d/%d", stage.Int64, stages.Int64)
		}
		if pct.Valid && pct.Float64 > 0 {
			p.Fraction = pct.Float64 / 100
		}
	}
	return p
}

// reorgPhase is "ingest <phase>" from an ingest build's comment
// ("mode=ingest phase=scan workers=4 ..."), else "<mode> <schema state>".
func reorgPhase(comments, state string) string {
	mode, phase := "", ""
	for _, f := range strings.Fields(comments) {
		if v, ok := strings.CutPrefix(f, "mode="); ok {
			mode = v
		}
		if v, ok := strings.CutPrefix(f, "phase="); ok {
			phase = v
		}
	}
	if phase != "" {
		return mode + " " + phase
	}
	return strings.TrimSpace(mode + " " + state)
}
