// Package vfs is kafkalite's filesystem seam. Every file the storage layers
// touch (segments, indexes, checkpoints, locks) goes through an [FS], so the
// same code runs on the operating system's filesystem ([Default]), on an
// in-memory filesystem that can simulate a power loss ([MemFS]) and under a
// fault injector ([FaultFS]). log.Config.FS takes one, and so do the
// constructors of package segment, index and compaction; a user may
// implement FS for another store, keeping the contracts below.
//
// Only what kafkalite calls is here. The contracts below are the ones the
// storage layers rely on; every implementation keeps them:
//
//   - Data written to a [File] is durable only after [File.Sync] returns nil.
//   - A created, renamed or removed directory entry (files and directories
//     alike, including those made by [FS.MkdirAll]) is durable only after
//     [FS.SyncDir] of its parent directory returns nil. A rename between two
//     directories needs both synced.
//   - After a failed Sync the file's state on disk is unknown; callers must
//     not retry the Sync and treat the data written since the last good Sync
//     as lost (fail the segment, recover by reopening).
//   - An open [File] refers to the file, not to its name: it keeps working
//     after the name is renamed or removed (POSIX semantics).
//   - Errors are *fs.PathError (*os.LinkError for Rename) wrapping the cause,
//     so errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrExist),
//     errors.Is(err, syscall.ENOSPC), [ErrLocked] and [ErrClosed] work
//     through every implementation.
//   - Names are slash- or OS-separated paths as [path/filepath] builds them.
//
// # Operating-system filesystem
//
// [Default] wraps package os. Sync is fsync(2) on Linux and the other unix
// systems and fcntl(F_FULLFSYNC) on macOS, where plain fsync does not reach
// the media. SyncDir opens the directory and fsyncs it; on Windows and other
// systems that cannot fsync a directory it does nothing. Lock takes flock(2)
// LOCK_EX|LOCK_NB where the system has it (on Linux, where flock and
// fcntl(2) record locks do not see each other, also an open-file-description
// record lock, so that it conflicts with a Kafka broker's Java
// FileChannel.tryLock), plus an in-process registry keyed by the absolute
// path (flock emulated over POSIX record locks, as on NFS, does not conflict
// within one process); on systems without flock (Windows,
// Solaris, AIX, plan9, wasm) it is the registry alone and so protects only
// against holders in the same process. Its files are operating-system
// files, which the storage layers memory-map and send with sendfile(2)
// where the system allows; the files of other implementations are read
// and written through the File methods alone.
//
// # Crash model of the memory filesystem
//
// A [MemFS] keeps, for every file, its current contents and the contents its
// last successful Sync made durable, and, for every directory, its current
// entries and the entries its last SyncDir made durable. [MemFS.CrashClone]
// returns the filesystem a power loss would leave now: starting from the
// root (which always survives), only durable entries are followed, and every
// file reached holds exactly its last synced contents and size. So:
//
//   - data written but not synced is lost; nothing of it survives, not even
//     a prefix (real filesystems may keep any part of it: callers must
//     tolerate a torn tail anyway, and MemFS tests the worst loss);
//   - a file created (or a directory made by MkdirAll) whose parent was not
//     synced afterwards vanishes, even if its data was synced;
//   - a file created and its parent synced, but never synced itself, comes
//     back empty;
//   - a rename not followed by SyncDir is undone: the file is back under its
//     old name (if that entry was durable) with its synced contents, and the
//     name it replaced comes back too;
//   - a remove not followed by SyncDir is undone, with the synced contents;
//   - a Truncate not followed by Sync is undone.
//
// A file reached through two durable entries (a rename made durable in the
// target directory but not yet in the source) survives as one file under
// both names, as a hard link would. A directory reached a second time is
// dropped at the second entry, so the result is always a tree. Locks do not
// survive: the process that held them is gone.
package vfs
