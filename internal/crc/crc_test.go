package crc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChecksumCheckValue(t *testing.T) {
	require.Equal(t, uint32(0xE3069283), Checksum([]byte("123456789")))
	require.Equal(t, Checksum([]byte("123456789")), Update(Checksum([]byte("1234")), []byte("56789")))
	require.Equal(t, uint32(0), Checksum(nil))
}
