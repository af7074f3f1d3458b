package server

import (
	"regexp"
	"strconv"
	"sync"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

var validateOnce, versionOnce sync.Once

// setVersionVariables makes @@version (and so VERSION()) the version the
// handshake and the log give, and @@version_comment name ReorgDB, where
// go-mysql-server has its own defaults.
func setVersionVariables() {
	versionOnce.Do(func() {
		global := gms.GetMysqlScope(gms.SystemVariableScope_Global)
		gms.SystemVariables.AddSystemVariables([]gms.SystemVariable{
			&gms.MysqlSystemVariable{Name: "version", Scope: global, Type: types.NewSystemStringType("version"), Default: Version},
			&gms.MysqlSystemVariable{Name: "version_comment", Scope: global, Type: types.NewSystemStringType("version_comment"), Default: "ReorgDB"},
		})
		addTLSVariables()
	})
}

// validateSystemVariables makes go-mysql-server's system variables refuse
// values MySQL refuses and go-mysql-server would take, then fail on:
// time_zone (SET time_zone = 'bogus' used to break NOW()).
func validateSystemVariables() {
	validateOnce.Do(func() {
		if gms.SystemVariables == nil {
			return
		}
		sv, _, ok := gms.SystemVariables.GetGlobal("time_zone")
		if !ok {
			return
		}
		tz, ok := sv.(*gms.MysqlSystemVariable)
		if !ok {
			return
		}
		prev := tz.NotifyChanged
		tz.NotifyChanged = func(ctx *gms.Context, scope gms.SystemVariableScope, v gms.SystemVarValue) error {
			s, _ := v.Val.(string)
			if !validTimeZone(s) {
				return mysql.NewSQLError(mysql.ERUnknownTimeZone, mysql.SSUnknownSQLState, "Unknown or incorrect time zone: '%s'", s)
			}
			if prev != nil {
				return prev(ctx, scope, v)
			}
			return nil
		}
	})
}

var reTZOffset = regexp.MustCompile(`^([+-])(\d{2}):(\d{2})$`)

// validTimeZone reports whether go-mysql-server can use time zone s and
// MySQL accepts it: SYSTEM, an offset from -13:59 to +14:00, or a named
// zone.
func validTimeZone(s string) bool {
	if s == "SYSTEM" {
		return true
	}
	if m := reTZOffset.FindStringSubmatch(s); m != nil {
		h, _ := strconv.Atoi(m[2])
		mi, _ := strconv.Atoi(m[3])
		if mi > 59 {
			return false
		}
		if m[1] == "+" {
			return h*60+mi <= 14*60
		}
		return h*60+mi <= 13*60+59
	}
	if s == "" || s == "Local" {
		return false
	}
	_, err := time.LoadLocation(s)
	return err == nil
}
