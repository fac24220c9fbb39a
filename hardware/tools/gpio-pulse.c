/*
 * gpio-pulse: drives a gpio-sim line with precise timing by writing "pull-up" or
 * "pull-down" to its sim pull attribute
 * (/sys/devices/platform/<dev_name>/<chip>/sim_gpioN/pull).
 *
 *   gpio-pulse [--quiet] PULLPATH STEP...
 *   STEP = low:MS | high:MS     (pull-down / pull-up, then hold MS milliseconds;
 *                                MS may be fractional, e.g. low:2.5; MS 0 = no hold)
 *          STEP*N               repeat that step N times, e.g. low:3 high:3 ... or
 *                               use a group: "(low:3,high:3)*10"
 *
 * Every deadline is absolute on CLOCK_MONOTONIC (clock_nanosleep TIMER_ABSTIME), taken
 * from the first write, so holds do not accumulate the write's own latency. Shell
 * commands under TCG jitter by tens of ms; this does not (beyond the guest's scheduler).
 * Tries SCHED_FIFO and mlockall to reduce jitter further; carries on without them.
 *
 * Prints one line per write, on stdout, flushed:
 *   step=<i> pull=<pull-up|pull-down> hold_ms=<ms> t_before=<s.ns> t_after=<s.ns>
 * t_before/t_after are CLOCK_MONOTONIC (the clock of gpiomon's and the booth's event
 * timestamps) just before and after the write(2) that changes the line; the kernel's edge
 * timestamp falls between them. Ends with "done steps=<n> max_late_us=<us>" where
 * max_late_us is the worst lateness of a write against its deadline.
 * Exit status: 0 ok, 1 write/open failure (message names the path and errno), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct step {
    int high;       /* 1: pull-up, 0: pull-down */
    double hold_ms;
};

static struct step *steps;
static size_t nsteps, capsteps;

static void usage(void)
{
    fprintf(stderr,
            "usage: gpio-pulse [--quiet] PULLPATH STEP...\n"
            "  STEP = low:MS | high:MS | STEP*N | (STEP,STEP,...)*N\n"
            "  e.g. gpio-pulse /sys/devices/platform/gpio-sim.0/gpiochip1/sim_gpio0/pull high:50 low:100 high:0\n");
}

static void push(int high, double ms)
{
    if (nsteps == capsteps) {
        capsteps = capsteps ? capsteps * 2 : 64;
        steps = realloc(steps, capsteps * sizeof *steps);
        if (!steps) {
            perror("gpio-pulse: realloc");
            exit(1);
        }
    }
    steps[nsteps].high = high;
    steps[nsteps].hold_ms = ms;
    nsteps++;
}

/* Parses one simple step "low:MS" / "high:MS"; returns 0 on success. */
static int parse_simple(const char *s, size_t len)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *colon = strchr(buf, ':');
    if (!colon)
        return -1;
    *colon = 0;
    int high;
    if (!strcmp(buf, "low") || !strcmp(buf, "pull-down"))
        high = 0;
    else if (!strcmp(buf, "high") || !strcmp(buf, "pull-up"))
        high = 1;
    else
        return -1;
    char *end;
    errno = 0;
    double ms = strtod(colon + 1, &end);
    if (errno || end == colon + 1 || *end || ms < 0 || ms > 3600e3)
        return -1;
    push(high, ms);
    return 0;
}

/* Parses an argument: a simple step, "step*N" or "(a,b,...)*N". */
static int parse_arg(const char *arg)
{
    const char *star = strrchr(arg, '*');
    long repeat = 1;
    size_t body_len = strlen(arg);
    if (star) {
        char *end;
        errno = 0;
        repeat = strtol(star + 1, &end, 10);
        if (errno || *end || repeat < 1 || repeat > 100000)
            return -1;
        body_len = (size_t)(star - arg);
    }
    const char *body = arg;
    if (body_len >= 2 && body[0] == '(' && body[body_len - 1] == ')') {
        body++;
        body_len -= 2;
    }
    for (long r = 0; r < repeat; r++) {
        size_t i = 0;
        while (i < body_len) {
            size_t j = i;
            while (j < body_len && body[j] != ',')
                j++;
            if (parse_simple(body + i, j - i))
                return -1;
            i = j + 1;
        }
    }
    return 0;
}

static double ts_sec(const struct timespec *t)
{
    return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

static void add_ns(struct timespec *t, long long ns)
{
    long long total = (long long)t->tv_nsec + ns;
    t->tv_sec += total / 1000000000LL;
    t->tv_nsec = total % 1000000000LL;
}

static long long diff_ns(const struct timespec *a, const struct timespec *b)
{
    return (long long)(a->tv_sec - b->tv_sec) * 1000000000LL + (a->tv_nsec - b->tv_nsec);
}

int main(int argc, char **argv)
{
    int quiet = 0, argi = 1;
    if (argi < argc && !strcmp(argv[argi], "--quiet")) {
        quiet = 1;
        argi++;
    }
    if (argi < argc && (!strcmp(argv[argi], "-h") || !strcmp(argv[argi], "--help"))) {
        usage();
        return 0;
    }
    if (argc - argi < 2) {
        usage();
        return 2;
    }
    const char *path = argv[argi++];
    for (; argi < argc; argi++) {
        if (parse_arg(argv[argi])) {
            fprintf(stderr, "gpio-pulse: bad step '%s'\n", argv[argi]);
            usage();
            return 2;
        }
    }

    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "gpio-pulse: open(%s): %s\n", path, strerror(errno));
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    struct sched_param sp = { .sched_priority = 50 };
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0 && !quiet)
        fprintf(stderr, "gpio-pulse: note: SCHED_FIFO unavailable (%s), timing may jitter more\n", strerror(errno));
    mlockall(MCL_CURRENT | MCL_FUTURE);

    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    long long max_late_ns = 0;
    for (size_t i = 0; i < nsteps; i++) {
        if (i > 0) {
            int rc;
            while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL)) == EINTR)
                ;
            if (rc) {
                fprintf(stderr, "gpio-pulse: clock_nanosleep: %s\n", strerror(rc));
                return 1;
            }
        }
        const char *word = steps[i].high ? "pull-up" : "pull-down";
        struct timespec before, after;
        clock_gettime(CLOCK_MONOTONIC, &before);
        ssize_t n;
        do {
            n = pwrite(fd, word, strlen(word), 0);
        } while (n < 0 && errno == EINTR);
        clock_gettime(CLOCK_MONOTONIC, &after);
        if (n != (ssize_t)strlen(word)) {
            fprintf(stderr, "gpio-pulse: write(%s, \"%s\") at step %zu: %s\n", path, word, i,
                    n < 0 ? strerror(errno) : "short write");
            return 1;
        }
        if (i > 0) {
            long long late = diff_ns(&before, &deadline);
            if (late > max_late_ns)
                max_late_ns = late;
        }
        if (!quiet)
            printf("step=%zu pull=%s hold_ms=%g t_before=%.9f t_after=%.9f\n", i, word, steps[i].hold_ms,
                   ts_sec(&before), ts_sec(&after));
        /* The next deadline counts from this step's deadline (the first one: from now). */
        if (i == 0)
            deadline = before;
        add_ns(&deadline, (long long)(steps[i].hold_ms * 1e6));
    }
    /* Honour the last step's hold before exiting. */
    int rc;
    while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL)) == EINTR)
        ;
    close(fd);
    printf("done steps=%zu max_late_us=%lld\n", nsteps, max_late_ns / 1000);
    return 0;
}
