package server

import (
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/encodings"
)

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

// clientDecoder is the decoder from character_set_client to UTF-8, nil
// when statements need none: the client sends UTF-8 (or ASCII), or
// binary, whose bytes are taken as they are.
func (st *connState) clientDecoder() encodings.Encoder {
	cs := gms.CharacterSetID(st.clientCharset.Load())
	if cs == 0 && st.mc != nil {
		cs = gms.CollationID(st.mc.CharacterSet).CharacterSet()
	}
	switch cs {
	case 0, gms.CharacterSet_utf8mb4, gms.CharacterSet_utf8mb3, gms.CharacterSet_binary, gms.CharacterSet_ascii:
		return nil
	}
	return cs.Encoder()
}

// toUTF8 is statement text q, sent in character_set_client, in UTF-8,
// which is what go-mysql-server parses: MySQL reads a string literal in
// the client's character set (and converts it to its column's), where
// go-mysql-server takes its bytes for UTF-8 and fails them. A string
// with an introducer (_binary '...') is converted too. Text the client's
// character set cannot decode is left as it is.
func (st *connState) toUTF8(q string) string {
	dec := st.clientDecoder()
	if dec == nil || !hasNonASCII([]byte(q)) {
		return q
	}
	if b, ok := dec.Decode([]byte(q)); ok {
		return string(b)
	}
	return q
}
