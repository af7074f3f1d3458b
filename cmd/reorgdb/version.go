package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/reorgdb/reorgdb/server"
)

// versionCmd prints the version the server reports (VERSION(), the
// handshake, the log) and the commit the binary was built from.
func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the server version and the commit this binary was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine(readBuildInfo()))
			return err
		},
	}
}

// commit, when set at link time (-ldflags "-X main.commit=$(git rev-parse
// HEAD)"), names the build's commit where the binary has no VCS stamp:
// go run, or a build with -buildvcs=false.
var commit string

func readBuildInfo() *debug.BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return info
}

// versionLine is "reorgdb 8.0.33-ReorgDB-x (commit c, go1.x)", with the
// commit from the build's VCS stamp ("+dirty" for uncommitted changes),
// or else main.commit, "unknown" when the binary has neither (go run).
func versionLine(info *debug.BuildInfo) string {
	rev, modified, goVersion := "unknown", false, "unknown"
	if commit != "" {
		rev = commit
	}
	if info != nil {
		goVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if modified {
		rev += "+dirty"
	}
	return fmt.Sprintf("reorgdb %s (commit %s, %s)", server.Version, rev, goVersion)
}
