package crc_test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/kafkalite/kafkalite/internal/crc"
)

// The CRC-32C check value (Kafka's Crc32C): the checksum of ASCII
// "123456789" is 0xE3069283, for Castagnoli's polynomial with Kafka's
// initial value and final XOR.
func ExampleChecksum() {
	fmt.Printf("%#08x\n", crc.Checksum([]byte("123456789")))
	// Output:
	// 0xe3069283
}

// A record batch's crc field (bytes 17–20) covers bytes [21, end): from
// attributes to the last record, so baseOffset, batchLength and
// partitionLeaderEpoch, which the broker rewrites, are not covered. The
// batch here is the record package's worked example
// (record/testdata/worked_example.hex), whose crc is 0xE99B8DD8. Update
// sums the region piece by piece, as segment recovery does when it reads a
// batch in chunks; the result is the same.
func ExampleUpdate() {
	batch, err := hex.DecodeString(strings.Join([]string{
		"0000000000000000", "0000003a", "ffffffff", "02", "e99b8dd8", // baseOffset .. crc
		"0000", "00000000", "0000018bcfe56800", "0000018bcfe56800", // attributes .. maxTimestamp
		"ffffffffffffffff", "ffff", "ffffffff", "00000001", // producerId .. recordsCount
		"1000000002", "6b", "02", "76", "00", // the record: length 8 .. key "k", value "v", no headers
	}, ""))
	if err != nil {
		panic(err)
	}
	const offCRC, offAttributes = 17, 21
	stored := binary.BigEndian.Uint32(batch[offCRC:])

	whole := crc.Checksum(batch[offAttributes:])
	var chunked uint32
	for region := batch[offAttributes:]; len(region) > 0; {
		n := min(16, len(region))
		chunked = crc.Update(chunked, region[:n])
		region = region[n:]
	}
	fmt.Printf("batch of %d bytes, stored crc %#08x\n", len(batch), stored)
	fmt.Printf("Checksum %#08x, Update in 16-byte chunks %#08x\n", whole, chunked)
	// Output:
	// batch of 70 bytes, stored crc 0xe99b8dd8
	// Checksum 0xe99b8dd8, Update in 16-byte chunks 0xe99b8dd8
}
