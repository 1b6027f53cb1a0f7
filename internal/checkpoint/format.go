package checkpoint

import (
	"strconv"
)

// The generic checkpoint text format (Kafka's CheckpointFile):
//
//	<version>\n
//	<entry count>\n
//	<entry line>\n        × entry count
//
// This file reads it as Kafka's CheckpointReadBuffer does, with Java's
// BufferedReader.readLine, Integer.parseInt and String.split("\\s+")
// semantics spelled out below, and writes it as CheckpointWriteBuffer does.

// lineScanner splits data into lines as Java's BufferedReader.readLine does:
// a line ends at "\n", "\r" or "\r\n"; a last line without a terminator is
// still a line; nothing follows a final terminator.
type lineScanner struct {
	data []byte
	pos  int
	line int // number of the line last returned, from 1
}

// next returns the next line without its terminator, and false at the end.
func (s *lineScanner) next() ([]byte, bool) {
	if s.pos >= len(s.data) {
		return nil, false
	}
	s.line++
	rest := s.data[s.pos:]
	for i, c := range rest {
		switch c {
		case '\n':
			s.pos += i + 1
			return rest[:i], true
		case '\r':
			s.pos += i + 1
			if i+1 < len(rest) && rest[i+1] == '\n' {
				s.pos++
			}
			return rest[:i], true
		}
	}
	s.pos = len(s.data)
	return rest, true
}

// isJavaSpace reports whether c is in Java's regular-expression class \s,
// [ \t\n\x0B\f\r].
func isJavaSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// splitFields splits a line as Java's line.split("\\s+") does, appending the
// fields to dst: runs of whitespace separate fields; leading whitespace
// makes an empty first field; trailing whitespace is dropped (Java discards
// trailing empty strings); an empty line is one empty field and a line of
// whitespace alone has no field. Kafka then requires an exact field count,
// so a line with leading whitespace is malformed and one with trailing
// whitespace is not.
func splitFields(dst [][]byte, line []byte) [][]byte {
	if len(line) == 0 {
		return append(dst, line) // no match: Java returns the line itself
	}
	i := 0
	if isJavaSpace(line[0]) {
		for i < len(line) && isJavaSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return dst // whitespace alone: every field empty, all dropped
		}
		dst = append(dst, line[:0])
	}
	for i < len(line) {
		start := i
		for i < len(line) && !isJavaSpace(line[i]) {
			i++
		}
		dst = append(dst, line[start:i])
		for i < len(line) && isJavaSpace(line[i]) {
			i++
		}
	}
	return dst
}

// parseInt parses a decimal integer of the given bit size as Java's
// Integer.parseInt / Long.parseLong do for ASCII input: an optional sign,
// then one or more digits, in range. (Java also accepts non-ASCII Unicode
// digits; Kafka never writes them and neither does this package.)
func parseInt(b []byte, bitSize int) (int64, bool) {
	v, err := strconv.ParseInt(string(b), 10, bitSize)
	return v, err == nil
}

// checkpointParser reads the generic format. The entries are handed to
// entry, one line at a time, with the line's fields; the count line is
// checked against the number of entry lines at the end. Nothing is
// allocated from the count: a count of 2^31−1 costs nothing.
type checkpointParser struct {
	file    string
	version int64
	fields  int // fields per entry line
	entry   func(line int, fields [][]byte) error
}

func (p *checkpointParser) parse(data []byte) error {
	s := lineScanner{data: data}
	line, ok := s.next()
	if !ok {
		return nil // empty file: no entries
	}
	v, ok := parseInt(line, 32)
	if !ok {
		return corruptf(p.file, s.line, "malformed version line %q", clip(line))
	}
	if v != p.version {
		return corruptf(p.file, s.line, "version %d, expected %d", v, p.version)
	}
	line, ok = s.next()
	if !ok {
		return nil // only the version line: no entries
	}
	count, ok := parseInt(line, 32)
	if !ok {
		return corruptf(p.file, s.line, "malformed count line %q", clip(line))
	}
	if count < 0 {
		return corruptf(p.file, s.line, "negative entry count %d", count)
	}
	var fields [][]byte
	entries := int64(0)
	for {
		line, ok = s.next()
		if !ok {
			break
		}
		fields = splitFields(fields[:0], line)
		if len(fields) != p.fields {
			return corruptf(p.file, s.line, "malformed entry %q: %d fields, expected %d", clip(line), len(fields), p.fields)
		}
		if err := p.entry(s.line, fields); err != nil {
			return err
		}
		entries++
	}
	if entries != count {
		return corruptf(p.file, 2, "count line says %d entries, file has %d", count, entries)
	}
	return nil
}

// appendHeader appends the version and count lines.
func appendHeader(dst []byte, version, count int) []byte {
	dst = strconv.AppendInt(dst, int64(version), 10)
	dst = append(dst, '\n')
	dst = strconv.AppendInt(dst, int64(count), 10)
	return append(dst, '\n')
}

// clip shortens a line quoted in an error.
func clip(b []byte) string {
	const limit = 64
	if len(b) > limit {
		return string(b[:limit]) + "..."
	}
	return string(b)
}
