#define _GNU_SOURCE
#include <sys/vfs.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "csysshims.h"

int pb_statfs_type(const char *path, uint64_t *type) {
    struct statfs st;
    if (statfs(path, &st) != 0) return -1;
    *type = (uint64_t)(unsigned long)st.f_type;
    return 0;
}

int pb_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

int pb_peer_credentials(int fd, int *pid, unsigned int *uid, unsigned int *gid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

int pb_set_current_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

#include <sys/timex.h>

int pb_clock_synchronized(void) {
    struct timex t = {0};
    int state = adjtimex(&t);
    if (state < 0) return -1;
    return (state != TIME_ERROR && (t.status & STA_UNSYNC) == 0) ? 1 : 0;
}

#include <time.h>

uint64_t pb_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int pb_cond_wait_monotonic(pthread_cond_t *cond, pthread_mutex_t *mutex, uint64_t deadline_ns) {
    struct timespec deadline = {
        .tv_sec = (time_t)(deadline_ns / 1000000000ull),
        .tv_nsec = (long)(deadline_ns % 1000000000ull),
    };
    return pthread_cond_clockwait(cond, mutex, CLOCK_MONOTONIC, &deadline);
}

#include <errno.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

int pb_openat2_beneath(int dirfd, const char *path, int flags) {
#ifdef SYS_openat2
    struct open_how how = {
        .flags = (uint64_t)(unsigned)flags,
        .mode = 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    long fd;
    do {
        fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    } while (fd < 0 && errno == EINTR);
    return (int)fd;
#else
    (void)dirfd; (void)path; (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

int pb_o_path(void) {
    return O_PATH;
}

const char *pb_errno_name(int errnum) {
    return strerrorname_np(errnum);
}
