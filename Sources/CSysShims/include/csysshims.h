#pragma once
// System calls glibc declares only under _GNU_SOURCE, which Swift's Glibc module does not see.

/// renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE): moves `from` to `to`
/// atomically and fails with EEXIST instead of replacing an existing `to`.
/// Returns 0, or -1 with errno set (EINVAL where the filesystem lacks RENAME_NOREPLACE).
int pb_rename_noreplace(const char *from, const char *to);

/// pthread_setname_np(pthread_self(), name): names the calling thread for `ps -L`, `top -H` and
/// /proc/self/task/*/comm (the kernel keeps the first 15 bytes). Returns 0 or an errno value.
int pb_set_current_thread_name(const char *name);
