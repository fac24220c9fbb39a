#pragma once
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
