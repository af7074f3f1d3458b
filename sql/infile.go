package sql

import (
	"bufio"
	"bytes"
	"io"
)

// infileField is one field of a LOAD DATA line, with its escapes
// already turned into the characters they stand for.
type infileField struct {
	val  []byte
	null bool
}

// infileReader splits a LOAD DATA file into lines and fields as MySQL 8
// does (the manual's "LOAD DATA Statement", "Field and Line Handling"):
// ESCAPED BY turns \0 \b \n \r \t \Z into their characters, a lone \N
// into NULL and any other escaped character (a separator, the enclosing
// quote, the escape itself) into itself; a field that starts with the
// ENCLOSED BY character ends only at that character followed by a field
// or line terminator, so it may hold both, and a doubled quote inside is
// one quote; with ENCLOSED BY set, an unquoted NULL is NULL; LINES
// STARTING BY skips everything up to and including the prefix, and a
// line without it.
type infileReader struct {
	r         *bufio.Reader
	fieldTerm []byte
	lineTerm  []byte
	lineStart []byte
	enclose   []byte // zero or one byte
	escape    int    // -1 when ESCAPED BY ''
}

func newInfileReader(r io.Reader, fieldTerm, enclose, escape, lineStart, lineTerm string) *infileReader {
	esc := -1
	if escape != "" {
		esc = int(escape[0])
	}
	return &infileReader{
		r:         bufio.NewReaderSize(r, 64<<10),
		fieldTerm: []byte(fieldTerm),
		lineTerm:  []byte(lineTerm),
		lineStart: []byte(lineStart),
		enclose:   []byte(enclose),
		escape:    esc,
	}
}

// consume reads s if the input continues with it.
func (p *infileReader) consume(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	b, err := p.r.Peek(len(s))
	if err != nil || !bytes.Equal(b, s) {
		return false
	}
	_, _ = p.r.Discard(len(s))
	return true
}

func (p *infileReader) atEOF() bool {
	_, err := p.r.Peek(1)
	return err != nil
}

// skipLine skips one line for IGNORE n LINES; as in MySQL, an escaped
// line terminator does not end it.
func (p *infileReader) skipLine() error {
	for {
		if p.consume(p.lineTerm) {
			return nil
		}
		c, err := p.r.ReadByte()
		if err != nil {
			return err
		}
		if int(c) == p.escape {
			if _, err := p.r.ReadByte(); err != nil {
				return err
			}
		}
	}
}

// record returns the next line's fields, or io.EOF.
func (p *infileReader) record() ([]infileField, error) {
	for len(p.lineStart) > 0 && !p.consume(p.lineStart) {
		if _, err := p.r.ReadByte(); err != nil {
			return nil, err
		}
	}
	if len(p.lineStart) == 0 && p.atEOF() {
		return nil, io.EOF
	}
	var fields []infileField
	for {
		f, lineEnd, err := p.field()
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
		if lineEnd {
			return fields, nil
		}
	}
}

// field reads one field and says whether it ended its line.
func (p *infileReader) field() (f infileField, lineEnd bool, err error) {
	enclosed := p.consume(p.enclose)
	escapedN := false // the field so far is exactly \N
	for {
		if enclosed && p.consume(p.enclose) {
			switch {
			case p.consume(p.enclose):
				f.val = append(f.val, p.enclose[0])
				escapedN = false
				continue
			case p.consume(p.fieldTerm):
				return f, false, nil
			case p.consume(p.lineTerm), p.atEOF():
				return f, true, nil
			}
			f.val = append(f.val, p.enclose[0])
			continue
		}
		if !enclosed {
			if p.consume(p.fieldTerm) {
				return p.finish(f, escapedN), false, nil
			}
			if p.consume(p.lineTerm) {
				return p.finish(f, escapedN), true, nil
			}
		}
		c, err := p.r.ReadByte()
		if err == io.EOF && enclosed {
			return f, true, nil
		} else if err == io.EOF {
			return p.finish(f, escapedN), true, nil
		} else if err != nil {
			return f, false, err
		}
		if int(c) != p.escape {
			f.val = append(f.val, c)
			escapedN = false
			continue
		}
		d, err := p.r.ReadByte()
		if err == io.EOF {
			f.val = append(f.val, c)
			continue
		} else if err != nil {
			return f, false, err
		}
		escapedN = d == 'N' && len(f.val) == 0
		f.val = append(f.val, unescapeInfile(d))
	}
}

// finish marks an unquoted field NULL when it is \N, or the word NULL
// while ENCLOSED BY is set.
func (p *infileReader) finish(f infileField, escapedN bool) infileField {
	f.null = (escapedN && len(f.val) == 1) ||
		(len(p.enclose) > 0 && string(f.val) == "NULL")
	return f
}

func unescapeInfile(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'Z':
		return 26
	}
	return c
}
