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
