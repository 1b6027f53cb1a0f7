package log

import (
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
	"github.com/stretchr/testify/require"
)

// flipLastByte flips a bit in the last byte of a batch: inside the CRC, in
// the last record's value (or the compressed stream).
func flipLastByte(t *testing.T, f *fixture, b fixtureBatch) {
	t.Helper()
	name := f.file(b.segment, segment.LogSuffix)
	pos := b.position + b.size - 1
	v := readAt(t, f.fsys, name, pos, 1)
	v[0] ^= 0x10
	writeAt(t, f.fsys, name, pos, v)
}

// TestDecodedReadsCheckCRCs: a byte flipped inside a batch below the
// recovery point (which no recovery rescans) is never returned by the
// reads that decode records for applications: ReadRecords,
// ReadCommittedRecords and ReadRecord (the whole batch is verified even
// when the record is at its start) fail with an error matching
// record.ErrCRC that names the file and position. Log.Read, a broker's
// raw read, still returns the bytes unchecked, as a Kafka broker's fetch
// does; the consumer checks them (check.crcs).
func TestDecodedReadsCheckCRCs(t *testing.T) {
	for _, sd := range shutdowns {
		t.Run(sd.name, func(t *testing.T) {
			matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, c matrix.Case) {
				f := newFixture(t, c, nil)
				b := f.batchesOf(2)[4]
				flipLastByte(t, f, b)
				file := f.file(2, segment.LogSuffix)

				_, l := f.reopen(t, sd.clean)
				reads := map[string]func(off int64) error{
					"ReadRecords": func(off int64) error {
						_, err := l.ReadRecords(off, 1<<20, func(*record.Record, *record.BatchHeader) error { return nil })
						return err
					},
					"ReadCommittedRecords": func(off int64) error {
						_, err := l.ReadCommittedRecords(off, 1<<20, func(*record.Record, *record.BatchHeader) error { return nil })
						return err
					},
					"ReadRecord": func(off int64) error {
						_, _, err := l.ReadRecord(off)
						return err
					},
				}
				for name, read := range reads {
					for off := b.baseOffset; off <= b.lastOffset; off++ {
						err := read(off)
						require.ErrorIs(t, err, record.ErrCRC, "%s(%d)", name, off)
						requireCorruptAt(t, err, file, b.position)
					}
				}
				// Twice: a point read never trusts a batch that failed.
				_, _, err := l.ReadRecord(b.baseOffset)
				require.ErrorIs(t, err, record.ErrCRC)
				// Everything else reads as written.
				f.requireRecords(t, l, 0, b.baseOffset)
				f.requireRecords(t, l, b.lastOffset+1, l.LogEndOffset())
				f.requirePointReads(t, l, f.bases[2], b.baseOffset)
				f.requirePointReads(t, l, b.lastOffset+1, f.bases[3])
				// The broker's raw read is unchecked.
				res, err := l.Read(b.baseOffset, 1, true)
				require.NoError(t, err)
				require.NotNil(t, res.Slice)
				require.Equal(t, b.position, res.Slice.Position)
				res.Release()
			})
		})
	}
}
