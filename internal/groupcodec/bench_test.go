package groupcodec

import "testing"

// CPU-only benchmarks of the hot paths of a coordinator: encoding a commit
// and replaying commits and group metadata.

func BenchmarkOffsetCommitValue(b *testing.B) {
	v := offsetCommitAt(4)
	enc, err := AppendOffsetCommitValue(nil, v)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(enc)))
		buf := make([]byte, 0, 64)
		for b.Loop() {
			buf, _ = AppendOffsetCommitValue(buf[:0], v)
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(enc)))
		for b.Loop() {
			if _, err := ParseOffsetCommitValue(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGroupMetadataValue(b *testing.B) {
	v := goldenGroup(3)
	enc, err := AppendGroupMetadataValue(nil, v)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(enc)))
		buf := make([]byte, 0, 256)
		for b.Loop() {
			buf, _ = AppendGroupMetadataValue(buf[:0], v)
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(enc)))
		for b.Loop() {
			if _, err := ParseGroupMetadataValue(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkPartitionFor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		PartitionFor("console-consumer-12345", DefaultOffsetsTopicPartitions)
	}
}
