// Package crc holds the CRC-32C (Castagnoli) checksum Kafka uses for record
// batches (DefaultRecordBatch, Crc32C), producer-state snapshots and other
// files.
//
// The algorithm: reflected polynomial 0x82F63B78, initial value 0xFFFFFFFF,
// final XOR 0xFFFFFFFF; the check value of ASCII "123456789" is 0xE3069283.
// Go's hash/crc32 with the Castagnoli table computes exactly this and uses the
// processor's CRC32 instruction where there is one.
package crc

import "hash/crc32"

var table = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C of b.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, table) }

// Update returns the CRC-32C of the bytes already summed into sum followed by b.
func Update(sum uint32, b []byte) uint32 { return crc32.Update(sum, table, b) }
