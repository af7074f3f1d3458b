package server

import gms "github.com/dolthub/go-mysql-server/sql"

// handshakeCollation gives a new session the character set and collation
// the client asked for in its handshake (character_set_client,
// character_set_connection, collation_connection), as MySQL does;
// go-mysql-server ignores it. character_set_results stays utf8mb4 unless
// the client asked for utf8mb4 too. An id the server does not know leaves
// the defaults.
func handshakeCollation(base *gms.BaseSession, id uint8) {
	c := gms.CollationID(id)
	if id == 0 || c.Name() == "" {
		return
	}
	ctx := gms.NewEmptyContext()
	cs := c.CharacterSet().Name()
	vars := []string{"character_set_client", "character_set_connection"}
	if c.CharacterSet() == gms.CharacterSet_utf8mb4 {
		// Other result character sets would make go-mysql-server fail a
		// value it cannot encode in them, where MySQL sends '?'.
		vars = append(vars, "character_set_results")
	}
	for _, v := range vars {
		if err := base.SetSessionVariable(ctx, v, cs); err != nil {
			return
		}
	}
	// Last: setting character_set_connection resets it.
	_ = base.SetSessionVariable(ctx, "collation_connection", c.Name())
}
