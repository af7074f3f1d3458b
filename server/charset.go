package server

import gms "github.com/dolthub/go-mysql-server/sql"

// handshakeCollation gives a new session the character set and collation
// the client asked for in its handshake (character_set_client,
// character_set_connection, character_set_results, collation_connection),
// as MySQL does; go-mysql-server ignores it. An id the server does not
// know leaves the defaults.
func handshakeCollation(base *gms.BaseSession, id uint8) {
	c := gms.CollationID(id)
	if id == 0 || c.Name() == "" {
		return
	}
	ctx := gms.NewEmptyContext()
	cs := c.CharacterSet().Name()
	for _, v := range []string{"character_set_client", "character_set_connection", "character_set_results"} {
		if err := base.SetSessionVariable(ctx, v, cs); err != nil {
			return
		}
	}
	// Last: setting character_set_connection resets it.
	_ = base.SetSessionVariable(ctx, "collation_connection", c.Name())
}
