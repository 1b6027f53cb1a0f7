package record

// ReaderOptions configure a [Reader]. The zero value is ready to use.
type ReaderOptions struct {
	// MaxDecompressedBytes bounds the decompressed size of one batch's
	// records section; a batch that would expand further fails with
	// [ErrTooLarge]. 0 means [DefaultMaxDecompressedBytes].
	MaxDecompressedBytes int
	// SkipCRC skips the CRC check in Reset, for callers that validated the
	// batch already (the log validates on append). Kafka's consumer checks
	// CRCs by default (check.crcs=true).
	SkipCRC bool
}

// Reader decodes the records of one batch at a time without allocating per
// record: records reference the batch bytes (or the Reader's decompression
// buffer, which it reuses from batch to batch).
//
//	r := record.NewReader(record.ReaderOptions{})
//	if err := r.Reset(batch); err != nil { ... }
//	for r.Next() {
//		rec := r.Record()
//		...
//	}
//	if err := r.Err(); err != nil { ... }
//
// A Reader is not safe for concurrent use.
type Reader struct {
	opts    ReaderOptions
	hdr     BatchHeader
	data    []byte // the records section, decompressed
	pos     int    // next record's position in data
	n       int32  // records decoded so far
	rec     Record
	headers []Header
	err     error
	buf     []byte // decompression buffer, reused
}

// NewReader returns a Reader with the given options.
func NewReader(opts ReaderOptions) *Reader {
	if opts.MaxDecompressedBytes <= 0 {
		opts.MaxDecompressedBytes = DefaultMaxDecompressedBytes
	}
	return &Reader{opts: opts}
}

// Reset starts reading the batch b, which must be exactly one batch. It
// validates the header (and the CRC unless SkipCRC) and decompresses the
// records section; records are decoded one at a time by Next. On error the
// Reader holds no records. b must stay unchanged while its records are used.
func (r *Reader) Reset(b []byte) error {
	r.data, r.pos, r.n, r.err = nil, 0, 0, nil
	var err error
	if r.opts.SkipCRC {
		r.hdr, err = parseWhole(b)
	} else {
		r.hdr, err = Validate(b)
	}
	if err != nil {
		r.err = err
		return err
	}
	section := b[BatchHeaderLen:]
	if c := r.hdr.Attributes.Compression(); c != None {
		out, err := decompress(c, section, r.buf, r.opts.MaxDecompressedBytes)
		if cap(out) > cap(r.buf) {
			r.buf = out[:0]
		}
		if err != nil {
			ce := &CorruptError{BaseOffset: r.hdr.BaseOffset, Position: BatchHeaderLen, Section: "batch", Kind: errKind(err)}
			if err != ce.Kind {
				ce.Detail = err.Error()
			}
			r.err = ce
			return r.err
		}
		section = out
	}
	r.data = section
	return nil
}

// parseWhole is Validate without the CRC.
func parseWhole(b []byte) (BatchHeader, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return h, err
	}
	switch size := h.Size(); {
	case len(b) < size:
		return h, batchErr(h.BaseOffset, len(b), ErrTruncated, "%d bytes, batch needs %d", len(b), size)
	case len(b) > size:
		return h, batchErr(h.BaseOffset, size, ErrTrailingBytes, "%d bytes after a %d-byte batch", len(b)-size, size)
	}
	if !h.Attributes.Compression().Valid() {
		return h, batchErr(h.BaseOffset, offAttributes, ErrUnknownCodec, "codec %d", h.Attributes&codecMask)
	}
	if h.RecordsCount < 0 {
		return h, batchErr(h.BaseOffset, offRecordsCount, ErrRecordCount, "recordsCount %d", h.RecordsCount)
	}
	return h, nil
}

func errKind(err error) error {
	for _, k := range []error{ErrTooLarge, ErrUnknownCodec} {
		if err == k {
			return k
		}
	}
	return ErrCompression
}

// Header returns the current batch's header.
func (r *Reader) Header() BatchHeader { return r.hdr }

// Records returns the current batch's records section, decompressed. It
// references the batch or the Reader's buffer.
func (r *Reader) Records() []byte { return r.data }

// Err returns the first error met by Reset or Next, or nil.
func (r *Reader) Err() error { return r.err }

// Record returns the record decoded by the last successful Next.
func (r *Reader) Record() *Record { return &r.rec }

// Next decodes the next record. It returns false when the batch's records
// are exhausted or an error occurred (see Err). After the last record it
// checks that the records section holds exactly recordsCount records.
func (r *Reader) Next() bool {
	if r.err != nil || r.data == nil {
		return false
	}
	if r.n == r.hdr.RecordsCount {
		if r.pos != len(r.data) {
			r.err = recordsErr(r.hdr.BaseOffset, r.pos, ErrTrailingBytes, "%d bytes after %d records", len(r.data)-r.pos, r.n)
		}
		r.data = nil
		return false
	}
	if r.pos == len(r.data) {
		r.err = recordsErr(r.hdr.BaseOffset, r.pos, ErrRecordCount, "recordsCount %d, section ends after %d", r.hdr.RecordsCount, r.n)
		return false
	}
	if err := r.decode(); err != nil {
		r.err = err
		return false
	}
	r.n++
	return true
}

// decode decodes the record at r.pos into r.rec.
func (r *Reader) decode() error {
	b, start := r.data, r.pos
	bodyLen, pos, ok := readVarint(b, start)
	if !ok {
		return recordsErr(r.hdr.BaseOffset, start, ErrVarint, "record length")
	}
	if bodyLen < 0 || int(bodyLen) > len(b)-pos {
		return recordsErr(r.hdr.BaseOffset, start, ErrBadRecord, "record length %d with %d bytes left", bodyLen, len(b)-pos)
	}
	bodyStart := pos
	end := pos + int(bodyLen)
	body := b[:end] // decode within the record's declared length
	if pos >= end {
		return recordsErr(r.hdr.BaseOffset, start, ErrBadRecord, "empty record body")
	}
	rec := &r.rec
	rec.Attributes = int8(body[pos])
	pos++
	if rec.TimestampDelta, pos, ok = readVarlong(body, pos); !ok {
		return recordsErr(r.hdr.BaseOffset, pos, ErrVarint, "timestamp delta")
	}
	if rec.OffsetDelta, pos, ok = readVarint(body, pos); !ok {
		return recordsErr(r.hdr.BaseOffset, pos, ErrVarint, "offset delta")
	}
	var err error
	if rec.Key, pos, err = r.readBytes(body, pos, "key"); err != nil {
		return err
	}
	if rec.Value, pos, err = r.readBytes(body, pos, "value"); err != nil {
		return err
	}
	count, next, ok := readVarint(body, pos)
	if !ok {
		return recordsErr(r.hdr.BaseOffset, pos, ErrVarint, "header count")
	}
	// Each header takes at least two bytes, which bounds the count by the
	// bytes present before anything is allocated for it.
	if count < 0 || int(count) > (end-next)/2 {
		return recordsErr(r.hdr.BaseOffset, pos, ErrBadRecord, "header count %d with %d bytes left", count, end-next)
	}
	pos = next
	r.headers = r.headers[:0]
	for i := int32(0); i < count; i++ {
		var h Header
		if h.Key, pos, err = r.readBytes(body, pos, "header key"); err != nil {
			return err
		}
		if h.Key == nil {
			return recordsErr(r.hdr.BaseOffset, pos, ErrBadRecord, "null header key")
		}
		if h.Value, pos, err = r.readBytes(body, pos, "header value"); err != nil {
			return err
		}
		r.headers = append(r.headers, h)
	}
	if pos != end {
		return recordsErr(r.hdr.BaseOffset, start, ErrBadRecord, "record length %d, fields end at %d", bodyLen, pos-bodyStart)
	}
	if count > 0 {
		rec.Headers = r.headers
	} else {
		rec.Headers = nil
	}
	rec.Offset = r.hdr.BaseOffset + int64(rec.OffsetDelta)
	if r.hdr.Attributes.TimestampType() == LogAppendTime {
		rec.Timestamp = r.hdr.MaxTimestamp
	} else {
		rec.Timestamp = r.hdr.BaseTimestamp + rec.TimestampDelta
	}
	r.pos = end
	return nil
}

// readBytes reads a varint length and that many bytes; -1 is null (nil),
// below -1 is an error. The result has its capacity clipped so that an
// append by the caller cannot overwrite the next field.
func (r *Reader) readBytes(b []byte, pos int, what string) ([]byte, int, error) {
	n, next, ok := readVarint(b, pos)
	if !ok {
		return nil, pos, recordsErr(r.hdr.BaseOffset, pos, ErrVarint, "%s length", what)
	}
	switch {
	case n == -1:
		return nil, next, nil
	case n < -1 || int(n) > len(b)-next:
		return nil, pos, recordsErr(r.hdr.BaseOffset, pos, ErrBadRecord, "%s length %d with %d bytes left", what, n, len(b)-next)
	}
	end := next + int(n)
	return b[next:end:end], end, nil
}

// SkipTo moves to the first record whose offset is at least offset, reading
// only the length and offset delta of the records before it (their other
// fields are not decoded or checked), so that a point read does not decode
// a whole batch. The next call to Next decodes that record. It returns
// false if the batch ends first or on an error (see Err).
func (r *Reader) SkipTo(offset int64) bool {
	if r.err != nil || r.data == nil {
		return false
	}
	for r.n < r.hdr.RecordsCount && r.pos < len(r.data) {
		// The common encodings inline (see skimRun), the rest below.
		if u, p := uvarint3(r.data, r.pos, len(r.data)); p != 0 && u&1 == 0 && u > 0 {
			if end := p + int(u>>1); end <= len(r.data) {
				if _, q := uvarint3(r.data, p+1, end); q != 0 {
					if u, q := uvarint3(r.data, q, end); q != 0 {
						if r.hdr.BaseOffset+int64(zigzag32(u)) >= offset {
							return true
						}
						r.pos = end
						r.n++
						continue
					}
				}
			}
		}
		bodyLen, p, ok := readVarint(r.data, r.pos)
		if !ok || bodyLen < 1 || int(bodyLen) > len(r.data)-p {
			r.err = recordsErr(r.hdr.BaseOffset, r.pos, ErrBadRecord, "record length while skipping")
			return false
		}
		end := p + int(bodyLen)
		_, q, ok := readVarlong(r.data[:end], p+1)
		var delta int32
		if ok {
			delta, _, ok = readVarint(r.data[:end], q)
		}
		if !ok {
			r.err = recordsErr(r.hdr.BaseOffset, p, ErrVarint, "record header while skipping")
			return false
		}
		if r.hdr.BaseOffset+int64(delta) >= offset {
			return true
		}
		r.pos = end
		r.n++
	}
	return r.n < r.hdr.RecordsCount
}

// Position returns where the next record starts in the batch's records
// section (decompressed) and its index in the batch: a place Resume can
// come back to.
func (r *Reader) Position() (pos int, n int32) { return r.pos, r.n }

// Resume makes the record at pos, the n-th of the batch, the next one, as
// Position reported it for the same batch: a point read that remembered
// where records start jumps there instead of skipping from the first. A
// place outside the batch is an error (ErrBadRecord); a place that is
// inside but not where a record starts decodes as garbage, which Next
// reports as for any damaged batch.
func (r *Reader) Resume(pos int, n int32) error {
	if r.err != nil {
		return r.err
	}
	if r.data == nil {
		return ErrBadRecord
	}
	if pos < 0 || pos > len(r.data) || n < 0 || n > r.hdr.RecordsCount {
		r.err = recordsErr(r.hdr.BaseOffset, pos, ErrBadRecord, "resume position")
		return r.err
	}
	r.pos, r.n = pos, n
	return nil
}

// Skim moves past the next record, checking its layout exactly as Next does
// (varint limits, lengths, header count, the declared length consumed
// exactly, the record count) but without producing its key, value and
// headers. It returns the record's offset delta, its timestamp (as Next
// would report it) and whether its key is null; ok is false at the end of
// the batch or on an error (see Err). A log validating an appended batch
// uses it: every record is checked at a fraction of a full decode.
func (r *Reader) Skim() (offsetDelta int32, timestamp int64, nullKey bool, ok bool) {
	if r.err != nil || r.data == nil {
		return 0, 0, false, false
	}
	if r.n == r.hdr.RecordsCount || r.pos == len(r.data) {
		r.Next() // reports the end, or the count mismatch, as Next does
		return 0, 0, false, false
	}
	b, start := r.data, r.pos
	bodyLen, pos, vok := readVarint(b, start)
	if !vok || bodyLen < 1 || int(bodyLen) > len(b)-pos {
		r.err = r.decode() // the full decoder names the problem
		return 0, 0, false, false
	}
	end := pos + int(bodyLen)
	body := b[:end]
	pos++ // attributes
	tsDelta, pos, vok := readVarlong(body, pos)
	if vok {
		offsetDelta, pos, vok = readVarint(body, pos)
	}
	var keyLen int32
	if vok {
		keyLen, pos, vok = skipBytes(body, pos)
	}
	if vok {
		_, pos, vok = skipBytes(body, pos)
	}
	var count int32
	if vok {
		count, pos, vok = readVarint(body, pos)
		vok = vok && count >= 0 && int(count) <= (end-pos)/2
	}
	for i := int32(0); vok && i < count; i++ {
		var kl int32
		kl, pos, vok = skipBytes(body, pos)
		vok = vok && kl >= 0
		if vok {
			_, pos, vok = skipBytes(body, pos)
		}
	}
	if !vok || pos != end {
		r.err = r.decode()
		if r.err == nil { // cannot happen: decode checks the same rules
			r.err = recordsErr(r.hdr.BaseOffset, start, ErrBadRecord, "malformed record")
		}
		return 0, 0, false, false
	}
	r.pos = end
	r.n++
	if r.hdr.Attributes.TimestampType() == LogAppendTime {
		timestamp = r.hdr.MaxTimestamp
	} else {
		timestamp = r.hdr.BaseTimestamp + tsDelta
	}
	return offsetDelta, timestamp, keyLen < 0, true
}

// skipBytes reads a varint length and skips that many bytes (none for -1).
// ok is false for a bad varint, a length below -1, or one past the end.
func skipBytes(b []byte, pos int) (n int32, next int, ok bool) {
	n, next, ok = readVarint(b, pos)
	switch {
	case !ok || n < -1 || int(n) > len(b)-next:
		return n, pos, false
	case n > 0:
		next += int(n)
	}
	return n, next, true
}

// SkipRecords walks the records section of an uncompressed batch whose base
// offset is base, from byte pos (a record boundary), past the records whose
// offset is below target, reading only their lengths and offset deltas. It
// returns the position of the first record at or after target, its total
// length (length varint included) and how many records it skipped. more is
// true when section ends before that record does: the caller reads more of
// the batch and calls again from next, as a point read does to avoid reading
// a whole batch.
func SkipRecords(section []byte, pos int, base, target int64) (next, length, skipped int, more bool, err error) {
	for {
		bodyLen, p, ok := readVarint(section, pos)
		if !ok {
			if len(section)-pos < maxVarintLen {
				return pos, 0, skipped, true, nil // the length itself may be cut
			}
			return pos, 0, skipped, false, recordsErr(base, pos, ErrVarint, "record length")
		}
		if bodyLen < 1 {
			return pos, 0, skipped, false, recordsErr(base, pos, ErrBadRecord, "record length %d", bodyLen)
		}
		end := p + int(bodyLen)
		if end > len(section) {
			return pos, 0, skipped, true, nil
		}
		_, q, ok := readVarlong(section[:end], p+1)
		var delta int32
		if ok {
			delta, _, ok = readVarint(section[:end], q)
		}
		if !ok {
			return pos, 0, skipped, false, recordsErr(base, p, ErrVarint, "record header")
		}
		if base+int64(delta) >= target {
			return pos, end - pos, skipped, false, nil
		}
		pos = end
		skipped++
	}
}
