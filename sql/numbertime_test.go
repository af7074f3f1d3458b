package sql

import "testing"

// TestNumberDatetime reads numbers as MySQL's number_to_datetime does.
func TestNumberDatetime(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string // "" for no date
	}{
		{0, "0000-00-00 00:00:00.000000"},
		{100, ""},
		{101, "2000-01-01 00:00:00.000000"},
		{691231, "2069-12-31 00:00:00.000000"},
		{691232, ""},
		{700101, "1970-01-01 00:00:00.000000"},
		{991231, "1999-12-31 00:00:00.000000"},
		{1000000, ""},
		{20200229, "2020-02-29 00:00:00.000000"},
		{20190229, ""},
		{20201340, ""},
		{200102030405, "2020-01-02 03:04:05.000000"},
		{990102030405, "1999-01-02 03:04:05.000000"},
		{20200102030405, "2020-01-02 03:04:05.000000"},
		{20200102036005, ""},
	} {
		got, ok := numberDatetime(c.n)
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("%d: %q, want %q", c.n, got, c.want)
		}
	}
	if _, ok := numberDatetime(int64(-20200102)); ok {
		t.Error("a negative number read as a date")
	}
}
