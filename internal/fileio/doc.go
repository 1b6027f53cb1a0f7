// Package fileio holds what the storage layers do with operating-system
// files beyond the [vfs.File] methods: [Map] memory-maps a file on unix
// systems and reports [ErrNotSupported] elsewhere (and for files of other
// filesystems, such as the memory filesystem and the fault injector, whose
// I/O must stay visible); [MapGrowing] maps a file read-only beyond its
// end, for readers of a file that grows, on 64-bit unix systems with a
// unified buffer cache (not OpenBSD or AIX); [CopyRange] sends a range of
// a file to a writer, with sendfile(2) on Linux when the writer is a
// socket. Callers fall back to ReadAt where these do not apply.
package fileio
