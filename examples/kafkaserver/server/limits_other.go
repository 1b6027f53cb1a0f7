//go:build !unix

package server

// descriptorLimit: a system without RLIMIT_NOFILE is taken to allow
// noDescriptorLimit descriptors.
func descriptorLimit() uint64 { return noDescriptorLimit }
