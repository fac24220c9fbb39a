#pragma once
#include <pthread.h>
#include <stdint.h>
// System calls glibc declares only under _GNU_SOURCE, which Swift's Glibc module does not see.

/// renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE): moves `from` to `to`
/// atomically and fails with EEXIST instead of replacing an existing `to`.
/// Returns 0, or -1 with errno set (EINVAL where the filesystem lacks RENAME_NOREPLACE).
int pb_rename_noreplace(const char *from, const char *to);

/// getsockopt(fd, SOL_SOCKET, SO_PEERCRED): the process id, user id and group id of the peer of a
/// connected unix socket, as the kernel recorded them at connect(2). `struct ucred` needs _GNU_SOURCE.
/// Returns 0, or -1 with errno set.
int pb_peer_credentials(int fd, int *pid, unsigned int *uid, unsigned int *gid);

/// pthread_setname_np(pthread_self(), name): names the calling thread for `ps -L`, `top -H` and
/// /proc/self/task/*/comm (the kernel keeps the first 15 bytes). Returns 0 or an errno value.
int pb_set_current_thread_name(const char *name);

/// adjtimex(2) with modes 0 (read only): 1 when the kernel's NTP status says the clock is synchronised
/// (STA_UNSYNC clear and the state is not TIME_ERROR), 0 when not, -1 with errno set when it cannot be read.
/// <sys/timex.h> is not in Swift's Glibc module.
int pb_clock_synchronized(void);

/// clock_gettime(CLOCK_MONOTONIC) in nanoseconds: the booth's one reading of the monotonic clock (never
/// set, never stepped by NTP; it counts from boot). Every module reads it through BoothClock's `Monotonic.now()`.
uint64_t pb_monotonic_ns(void);

/// pthread_cond_clockwait(cond, mutex, CLOCK_MONOTONIC, deadline): waits on `cond` (with `mutex` held)
/// until it is signalled or CLOCK_MONOTONIC reaches `deadline_ns`, so a wall clock that is set, stepped
/// or stands still cannot stretch or shorten the wait (pthread_cond_timedwait and Foundation's
/// `NSCondition.wait(until: Date)` wait on CLOCK_REALTIME). glibc 2.30+, declared under _GNU_SOURCE.
/// Returns 0 when woken (or spuriously), ETIMEDOUT at the deadline, or another errno value.
int pb_cond_wait_monotonic(pthread_cond_t *cond, pthread_mutex_t *mutex, uint64_t deadline_ns);

/// statfs(2)'s f_type for `path`: the file system's magic number (linux/magic.h: 0xEF53 ext4, 0x4d44
/// vfat, 0x2011BAB0 exFAT, ...). <sys/vfs.h> is not in Swift's Glibc module.
/// Returns 0 and sets `*type`, or -1 with errno set.
int pb_statfs_type(const char *path, uint64_t *type);

/// openat2(dirfd, path, {flags, resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS})
/// (Linux 5.6+; glibc has no wrapper: syscall(SYS_openat2)): opens `path` relative to the directory
/// `dirfd` only if every component resolves beneath it and none is a symbolic link. EINTR is retried.
/// Returns the descriptor, or -1 with errno set: EXDEV for a path that leaves `dirfd`, ELOOP for a
/// symbolic link on the way, ENOSYS on a kernel without openat2 (the caller then opens component by
/// component with openat and O_NOFOLLOW).
int pb_openat2_beneath(int dirfd, const char *path, int flags);

/// O_PATH (Linux 2.6.39+; <fcntl.h> defines it only under _GNU_SOURCE): the open(2) flag for a
/// descriptor that only locates a file, as a folder to `openat` from; it needs search (x), not read
/// permission on a folder.
int pb_o_path(void);

/// strerrorname_np(errnum) (glibc 2.32+, declared under _GNU_SOURCE): the errno's symbolic name,
/// "ENOENT" for 2, or NULL for a number glibc has no name for.
const char *pb_errno_name(int errnum);
