# Shared by the benchmark scripts: source it after cd-ing to the repository.

# wait_port PORT: waits until a MySQL-protocol server answers on PORT.
wait_port() {
  for _ in $(seq 1 150); do
    mysql -h127.0.0.1 -P"$1" -uroot -e 'SELECT 1' >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "server on port $1 did not start" >&2
  return 1
}

# start_mariadb DIR PORT: initializes DIR and starts MariaDB on PORT in the
# background, configured as a DBA would for a 2,000,000-row sysbench table:
# a buffer pool that holds it, a large redo log, utf8mb4. Its pid is in
# MPID; it has answered once this returns. MARIADB_FLAGS adds options (e.g.
# "--innodb-flush-log-at-trx-commit=2").
start_mariadb() {
  mariadb-install-db --datadir="$1" --user=root >/dev/null 2>&1
  # shellcheck disable=SC2086 # MARIADB_FLAGS is a list of options
  mariadbd --datadir="$1" --port="$2" --socket="$1.sock" --user=root \
    --skip-grant-tables --bind-address=127.0.0.1 \
    --innodb-buffer-pool-size=2G --innodb-log-file-size=512M \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci ${MARIADB_FLAGS:-} 2>"$1.log" &
  MPID=$!
  wait_port "$2"
}

# mariadb_version: "MariaDB x.y.z" of the installed server.
mariadb_version() { echo "MariaDB $(mariadbd --version | grep -o '[0-9]*\.[0-9]*\.[0-9]*' | head -1)"; }
