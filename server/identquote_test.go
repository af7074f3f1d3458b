package server

import "testing"

func TestQuoteNonASCIIIdents(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"SELECT 1", "SELECT 1"},
		{"CREATE TABLE café (ö INT, b_ü2 INT)", "CREATE TABLE `café` (`ö` INT, `b_ü2` INT)"},
		{"SELECT t.ö, 'ö', \"ö\", `ö`, x'c3b6' FROM d.ü AS t", "SELECT t.`ö`, 'ö', \"ö\", `ö`, x'c3b6' FROM d.`ü` AS t"},
		{"SELECT 'it''s ö', 'a\\'ö' , ö", "SELECT 'it''s ö', 'a\\'ö' , `ö`"},
		{"SELECT ö -- ö\n, ö # ö\n/* ö */ FROM t", "SELECT `ö` -- ö\n, `ö` # ö\n/* ö */ FROM t"},
		{"SELECT /*! ö */ 1", "SELECT /*! `ö` */ 1"},
		{"SET @ö = 1", "SET @`ö` = 1"},
		{"SELECT ö-1 FROM t", "SELECT `ö`-1 FROM t"},
		{"SELECT `a``ö` FROM t", "SELECT `a``ö` FROM t"},
		{"SELECT 'unterminated ö", "SELECT 'unterminated ö"},
	} {
		if got := quoteNonASCIIIdents(c.in, false); got != c.out {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.out)
		}
	}
	// With ANSI_QUOTES, "ö" is an identifier already.
	if got := quoteNonASCIIIdents(`SELECT "ö", ö FROM t`, true); got != "SELECT \"ö\", `ö` FROM t" {
		t.Errorf("ANSI_QUOTES: %q", got)
	}
}
