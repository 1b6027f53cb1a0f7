package record

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"testing"
)

// benchValues returns n values of size bytes each, as a producer would
// batch them.
func benchValues(n, size int) [][]byte {
	vals := make([][]byte, n)
	for i := range vals {
		vals[i] = bytes.Repeat([]byte{byte('a' + i%26)}, size)
	}
	return vals
}

// jsonValues returns realistic JSON payloads of about 200 bytes.
func jsonValues(n int) [][]byte {
	vals := make([][]byte, n)
	for i := range vals {
		vals[i] = fmt.Appendf(nil, `{"order_id":%d,"customer":"customer-%d","status":"created","items":[{"sku":"SKU-%d","qty":%d,"price":"%d.99"}],"ts":"2026-11-29T13:%02d:%02dZ"}`,
			100000+i, i%977, i%123, 1+i%5, 5+i%90, i%60, (i*7)%60)
	}
	return vals
}

func buildBatch(b *testing.B, c Compression, vals [][]byte) []byte {
	var bld Builder
	h := producerHeader()
	h.Attributes = h.Attributes.WithCompression(c)
	bld.Reset(h, DefaultLevel)
	for i, v := range vals {
		if err := bld.Append(1700000000000+int64(i), nil, v, nil); err != nil {
			b.Fatal(err)
		}
	}
	out, err := bld.Build()
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Clone(out)
}

// BenchmarkBuild seals batches of 1,000 records with 100-byte values. The
// records/s figure is 1,000 × ops/s; allocs/op is per batch.
func BenchmarkBuild(b *testing.B) {
	for _, c := range []Compression{None, LZ4} {
		b.Run(fmt.Sprintf("records=1000/value=100B/%s", c), func(b *testing.B) {
			vals := benchValues(1000, 100)
			h := producerHeader()
			h.Attributes = h.Attributes.WithCompression(c)
			var bld Builder
			b.ReportAllocs()
			b.SetBytes(int64(1000 * 100))
			for b.Loop() {
				bld.Reset(h, DefaultLevel)
				for i, v := range vals {
					if err := bld.Append(1700000000000+int64(i), nil, v, nil); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := bld.Build(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkDecode iterates the records of a 1,000-record batch, CRC check
// included.
func BenchmarkDecode(b *testing.B) {
	for _, c := range []Compression{None, LZ4} {
		b.Run(fmt.Sprintf("records=1000/value=100B/%s", c), func(b *testing.B) {
			batch := buildBatch(b, c, benchValues(1000, 100))
			r := NewReader(ReaderOptions{})
			b.ReportAllocs()
			b.SetBytes(int64(1000 * 100))
			for b.Loop() {
				if err := r.Reset(batch); err != nil {
					b.Fatal(err)
				}
				n := 0
				for r.Next() {
					n += len(r.Record().Value)
				}
				if r.Err() != nil || n != 100000 {
					b.Fatal(r.Err(), n)
				}
			}
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkValidateCRC compares Validate on a 1 MiB batch with hash/crc32's
// raw Castagnoli checksum over the same bytes.
func BenchmarkValidateCRC(b *testing.B) {
	batch := buildBatch(b, None, benchValues(1<<20/110, 100))
	b.Run("Validate/1MiB", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(batch)))
		for b.Loop() {
			if _, err := Validate(batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("crc32.Castagnoli/1MiB", func(b *testing.B) {
		tab := crc32.MakeTable(crc32.Castagnoli)
		b.ReportAllocs()
		b.SetBytes(int64(len(batch)))
		for b.Loop() {
			crc32.Checksum(batch, tab)
		}
	})
}

// BenchmarkCodec compresses (Build) and decompresses (Reset + iterate) a
// batch of 1,000 ~200-byte JSON records with each codec at Kafka's default
// level; bytes/s count the uncompressed values.
func BenchmarkCodec(b *testing.B) {
	vals := jsonValues(1000)
	total := 0
	for _, v := range vals {
		total += len(v)
	}
	for _, c := range []Compression{None, Gzip, Snappy, LZ4, Zstd} {
		batch := buildBatch(b, c, vals)
		b.Run(fmt.Sprintf("build/%s", c), func(b *testing.B) {
			h := producerHeader()
			h.Attributes = h.Attributes.WithCompression(c)
			var bld Builder
			b.ReportAllocs()
			b.SetBytes(int64(total))
			for b.Loop() {
				bld.Reset(h, DefaultLevel)
				for i, v := range vals {
					if err := bld.Append(int64(i), nil, v, nil); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := bld.Build(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(total)/float64(len(batch)), "ratio")
		})
		b.Run(fmt.Sprintf("decode/%s", c), func(b *testing.B) {
			r := NewReader(ReaderOptions{})
			b.ReportAllocs()
			b.SetBytes(int64(total))
			for b.Loop() {
				if err := r.Reset(batch); err != nil {
					b.Fatal(err)
				}
				for r.Next() {
				}
				if r.Err() != nil {
					b.Fatal(r.Err())
				}
			}
		})
	}
}

// BenchmarkSkim validates every record of a 1,000-record batch of 100-byte
// values with keys, as a log does on append: Skim record by record, and
// SkimWhile in one call. The CRC is not checked (Reset with SkipCRC).
func BenchmarkSkim(b *testing.B) {
	var bld Builder
	bld.Reset(producerHeader(), DefaultLevel)
	for i, v := range benchValues(1000, 100) {
		if err := bld.Append(1700000000000+int64(i%3), fmt.Appendf(nil, "k%d", i), v, nil); err != nil {
			b.Fatal(err)
		}
	}
	batch, err := bld.Build()
	if err != nil {
		b.Fatal(err)
	}
	r := NewReader(ReaderOptions{SkipCRC: true})
	b.Run("Skim", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(batch)))
		for b.Loop() {
			if err := r.Reset(batch); err != nil {
				b.Fatal(err)
			}
			for i := int32(0); ; i++ {
				delta, _, _, ok := r.Skim()
				if !ok {
					break
				}
				if delta != i {
					b.Fatal("delta", delta)
				}
			}
			if r.Err() != nil {
				b.Fatal(r.Err())
			}
		}
		b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("SkimWhile", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(batch)))
		check := OpenSkimCheck()
		check.KeyRequired = true
		for b.Loop() {
			if err := r.Reset(batch); err != nil {
				b.Fatal(err)
			}
			if _, stop, stopped := r.SkimWhile(check); stopped || r.Err() != nil {
				b.Fatal(stop, r.Err())
			}
		}
		b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
	})
}
