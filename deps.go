//go:build tools

package main

import (
	_ "github.com/cockroachdb/pebble/v2"
	_ "github.com/dolthub/go-mysql-server"
	_ "github.com/dolthub/go-mysql-server/server"
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/spf13/cobra"
)
