#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include "csysshims.h"

int pb_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

int pb_set_current_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
