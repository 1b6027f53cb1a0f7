// Package interop cross-checks kafkalite's record package against
// independent implementations of Kafka's RecordBatch v2 (layout in the
// record package doc). No broker runs where kafkalite is tested, so "Kafka
// reads what we write and we read what Kafka's clients write" is checked
// against code that shares nothing with ours:
//
//   - franz-go's kmsg (RecordBatch and Record ReadFrom/AppendTo), a Kafka
//     client's own encoding of batches and records;
//   - other codecs: the standard library's compress/gzip and its internal
//     zstd decoder (reached through debug/elf), github.com/golang/snappy
//     with the xerial framing written here, an LZ4 frame parser, block
//     decoder and xxHash32 written from their specifications, and
//     pierrec/lz4 and klauspost zstd used with options and entry points that
//     the record package does not use (checksummed LZ4 frames, streaming
//     zstd frames without a content size, concatenated frames and members);
//   - where installed, the reference command-line tools gzip, lz4 and zstd.
//
// Three directions:
//
//	ours → kmsg         record.Builder batches (every codec, markers, empty
//	                    batches, LogAppendTime, gaps, producer fields) decoded
//	                    by kmsg and the independent codecs; uncompressed ones
//	                    re-encoded by kmsg byte for byte
//	independent → ours  batches encoded by kmsg and the variant compressors,
//	                    decoded by record.Reader
//	fixtures            the second set written to record/testdata/interop as
//	                    hex files plus expected.json, so the record package's
//	                    own tests use them without these dependencies
//
// This is a separate, test-only module (its own go.mod, with a replace
// directive pointing at the repository root) so that kafkalite itself never
// depends on kmsg or the extra codecs. The package has no non-test code.
// Run it with:
//
//	cd internal/testkit/interop && go test -race ./...
//
// and regenerate the fixtures with:
//
//	cd internal/testkit/interop && go test -run TestFixtures -update
package interop
