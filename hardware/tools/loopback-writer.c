/*
 * loopback-writer: feeds JPEG files as MJPEG frames into a v4l2loopback device, paced
 * on CLOCK_MONOTONIC, so that a reader of the loopback sees a camera streaming MJPEG.
 *
 *   loopback-writer --device /dev/videoN [--fps F] [--loop] [--count N] [--linger]
 *                   [--pattern-file PFILE] FILE...
 *
 *   --fps F     frames per second (default 10; fractional allowed)
 *   --loop      cycle through the files until --count frames or SIGTERM/SIGINT
 *               (default: each file once, in order)
 *   --count N   stop after N frames in total
 *   --linger    after the last frame keep the device open (the capture side of an
 *               exclusive_caps=1 loopback stays) until SIGTERM/SIGINT
 *   --pattern-file PFILE
 *               on each SIGUSR1, read PFILE: a list of frame kinds (separated by commas,
 *               spaces or newlines) fed once from the next frame on, one kind per frame,
 *               then whole frames again (an empty PFILE ends a pattern under way at once).
 *               Kinds, each made from the file frame i would carry:
 *                 good       the whole file
 *                 truncated  its first half (cut so it ends neither in EOI FF D9 nor in zeros)
 *                 no-eoi     the whole file without its EOI marker (and anything after it)
 *                 empty      a zero-length write (bytesused 0)
 *                 random     20000 pseudo-random bytes, the first not FF (no SOI)
 *               Corrupt camera frames for the booth's arrival checks.
 *
 * Sets the format with VIDIOC_S_FMT (type VIDEO_OUTPUT, pixel format MJPG, width/height
 * read from the first file's SOF marker; every file must have that size) and the frame
 * interval with VIDIOC_S_PARM, then writes one whole file per write(2): v4l2loopback makes
 * each write one frame with bytesused = the file's length, so a reader gets the file's
 * exact bytes. With exclusive_caps=1 the capture side appears at the first write.
 *
 * stdout (line-buffered):
 *   stream device=<dev> width=<w> height=<h> pixelformat=MJPG sizeimage=<n> fps=<f> files=<k>
 *   frame=<i> kind=<kind> file_index=<k> file=<path> bytes=<n> t_before=<s.ns> t_after=<s.ns>
 *   pattern start frame=<i> frames=<n>    (SIGUSR1: PFILE read, its kinds from frame i on)
 *   pattern end frame=<i>                 (frame i is whole again)
 *   done frames=<n> max_late_us=<us>
 * frame counts from 0 over the whole run; file_index is the position in the file list.
 * t_before/t_after are CLOCK_MONOTONIC around the write; the kernel stamps the frame's
 * buffer between them. Exit: 0 ok, 1 device or file error (message names call, errno and
 * device), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct jpeg {
    const char *path;
    unsigned char *data;
    size_t len;
    unsigned width, height;
};

static volatile sig_atomic_t stop;
static volatile sig_atomic_t pattern_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void on_usr1(int sig)
{
    (void)sig;
    pattern_requested = 1;
}

enum kind { K_GOOD, K_TRUNCATED, K_NO_EOI, K_EMPTY, K_RANDOM };
static const char *const kind_names[] = {"good", "truncated", "no-eoi", "empty", "random"};

/* Reads the pattern file into *kinds (malloc'd); returns the count, or -1 (message printed). */
static long read_pattern(const char *path, enum kind **kinds)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "loopback-writer: open(%s): %s\n", path, strerror(errno));
        return -1;
    }
    long n = 0, cap = 64;
    enum kind *k = malloc((size_t)cap * sizeof *k);
    char word[32];
    int len = 0, c;
    if (!k) {
        fclose(f);
        return -1;
    }
    do {
        c = fgetc(f);
        if (c == EOF || c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r') {
            if (len == 0)
                continue;
            word[len] = 0;
            len = 0;
            int found = -1;
            for (int i = 0; i < (int)(sizeof kind_names / sizeof kind_names[0]); i++)
                if (!strcmp(word, kind_names[i]))
                    found = i;
            if (found < 0) {
                fprintf(stderr, "loopback-writer: %s: unknown frame kind '%s' (good, truncated, no-eoi, empty, random)\n",
                        path, word);
                free(k);
                fclose(f);
                return -1;
            }
            if (n == cap) {
                enum kind *more = realloc(k, (size_t)(cap *= 2) * sizeof *k);
                if (!more) {
                    free(k);
                    fclose(f);
                    return -1;
                }
                k = more;
            }
            k[n++] = (enum kind)found;
        } else if (len < (int)sizeof word - 1) {
            word[len++] = (char)c;
        }
    } while (c != EOF);
    fclose(f);
    *kinds = k;
    return n;
}

/* The bytes to write for a frame of kind k made from file j, in *out (scratch of j->len + 20000). */
static size_t make_frame(enum kind k, const struct jpeg *j, unsigned char *scratch, const unsigned char **out,
                         unsigned long long seed)
{
    size_t end;
    switch (k) {
    case K_GOOD:
        *out = j->data;
        return j->len;
    case K_EMPTY:
        *out = j->data;
        return 0;
    case K_TRUNCATED:
        end = j->len / 2;
        while (end > 2 && (j->data[end - 1] == 0 || (j->data[end - 2] == 0xFF && j->data[end - 1] == 0xD9)))
            end--;
        *out = j->data;
        return end;
    case K_NO_EOI:
        end = j->len;
        while (end >= 2 && !(j->data[end - 2] == 0xFF && j->data[end - 1] == 0xD9))
            end--; /* the last EOI; what follows it goes too */
        if (end >= 2)
            end -= 2;
        while (end > 2 && (j->data[end - 1] == 0 || (j->data[end - 2] == 0xFF && j->data[end - 1] == 0xD9)))
            end--;
        *out = j->data;
        return end;
    case K_RANDOM: {
        unsigned long long x = seed * 0x9E3779B97F4A7C15ULL + 1;
        for (size_t i = 0; i < 20000; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            scratch[i] = (unsigned char)(x >> 24);
        }
        if (scratch[0] == 0xFF)
            scratch[0] = 0;
        *out = scratch;
        return 20000;
    }
    }
    *out = j->data;
    return j->len;
}

static void usage(void)
{
    fprintf(stderr, "usage: loopback-writer --device /dev/videoN [--fps F] [--loop] [--count N] [--linger] "
                    "[--pattern-file PFILE] FILE...\n");
}

static int xioctl(int fd, unsigned long req, void *arg)
{
    int r;
    do {
        r = ioctl(fd, req, arg);
    } while (r < 0 && errno == EINTR);
    return r;
}

/* Reads the whole file and its size from the first SOFn marker. Returns 0 or -1 (message printed). */
static int load_jpeg(struct jpeg *j)
{
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "loopback-writer: open(%s): %s\n", j->path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size < 4) {
        fprintf(stderr, "loopback-writer: %s: empty or unreadable\n", j->path);
        close(fd);
        return -1;
    }
    j->len = (size_t)st.st_size;
    j->data = malloc(j->len);
    if (!j->data) {
        fprintf(stderr, "loopback-writer: out of memory for %s\n", j->path);
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got < j->len) {
        ssize_t n = read(fd, j->data + got, j->len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "loopback-writer: read(%s): %s\n", j->path, n < 0 ? strerror(errno) : "short file");
            close(fd);
            return -1;
        }
        got += (size_t)n;
    }
    close(fd);
    const unsigned char *d = j->data;
    if (d[0] != 0xFF || d[1] != 0xD8) {
        fprintf(stderr, "loopback-writer: %s: not a JPEG (no SOI marker)\n", j->path);
        return -1;
    }
    size_t i = 2;
    while (i + 9 < j->len) {
        if (d[i] != 0xFF) {
            i++;
            continue;
        }
        unsigned char m = d[i + 1];
        if (m == 0xFF) {
            i++;
            continue;
        }
        if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {
            i += 2;
            continue;
        }
        size_t seglen = ((size_t)d[i + 2] << 8) | d[i + 3];
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
            j->height = ((unsigned)d[i + 5] << 8) | d[i + 6];
            j->width = ((unsigned)d[i + 7] << 8) | d[i + 8];
            return 0;
        }
        if (m == 0xDA || m == 0xD9)
            break;
        i += 2 + seglen;
    }
    fprintf(stderr, "loopback-writer: %s: no SOF marker found (cannot tell its size)\n", j->path);
    return -1;
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

/* Sleeps until the absolute CLOCK_MONOTONIC deadline; returns early (1) if a stop was asked. */
static int sleep_until(const struct timespec *deadline)
{
    for (;;) {
        if (stop)
            return 1;
        int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline, NULL);
        if (rc == 0)
            return stop ? 1 : 0;
        if (rc != EINTR) {
            fprintf(stderr, "loopback-writer: clock_nanosleep: %s\n", strerror(rc));
            return 1;
        }
    }
}

int main(int argc, char **argv)
{
    const char *device = NULL;
    const char *pattern_file = NULL;
    double fps = 10;
    int loop = 0, linger = 0;
    long long count = -1;
    int argi = 1;
    for (; argi < argc; argi++) {
        const char *a = argv[argi];
        if (!strcmp(a, "--device") && argi + 1 < argc)
            device = argv[++argi];
        else if (!strcmp(a, "--fps") && argi + 1 < argc)
            fps = strtod(argv[++argi], NULL);
        else if (!strcmp(a, "--count") && argi + 1 < argc)
            count = strtoll(argv[++argi], NULL, 10);
        else if (!strcmp(a, "--loop"))
            loop = 1;
        else if (!strcmp(a, "--linger"))
            linger = 1;
        else if (!strcmp(a, "--pattern-file") && argi + 1 < argc)
            pattern_file = argv[++argi];
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (!strcmp(a, "--")) {
            argi++;
            break;
        } else if (a[0] == '-') {
            fprintf(stderr, "loopback-writer: unknown option %s\n", a);
            usage();
            return 2;
        } else
            break;
    }
    int nfiles = argc - argi;
    if (!device || nfiles < 1 || !(fps > 0 && fps <= 1000) || count == 0 || count < -1) {
        usage();
        return 2;
    }

    struct jpeg *files = calloc((size_t)nfiles, sizeof *files);
    if (!files)
        return 1;
    size_t maxlen = 0;
    for (int k = 0; k < nfiles; k++) {
        files[k].path = argv[argi + k];
        if (load_jpeg(&files[k]))
            return 1;
        if (k > 0 && (files[k].width != files[0].width || files[k].height != files[0].height)) {
            fprintf(stderr, "loopback-writer: %s is %ux%u but the stream is %ux%u (from %s): give files of one size\n",
                    files[k].path, files[k].width, files[k].height, files[0].width, files[0].height, files[0].path);
            return 1;
        }
        if (files[k].len > maxlen)
            maxlen = files[k].len;
    }

    int fd = open(device, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "loopback-writer: open(%s): %s\n", device, strerror(errno));
        return 1;
    }
    struct v4l2_capability cap;
    memset(&cap, 0, sizeof cap);
    if (xioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
        fprintf(stderr, "loopback-writer: VIDIOC_QUERYCAP on %s: %s\n", device, strerror(errno));
        return 1;
    }
    if (strcmp((const char *)cap.driver, "v4l2 loopback") != 0)
        fprintf(stderr, "loopback-writer: note: %s is driver '%s', not v4l2loopback\n", device, (const char *)cap.driver);

    struct v4l2_format fmt;
    memset(&fmt, 0, sizeof fmt);
    fmt.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
    fmt.fmt.pix.width = files[0].width;
    fmt.fmt.pix.height = files[0].height;
    fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_MJPEG;
    fmt.fmt.pix.field = V4L2_FIELD_NONE;
    fmt.fmt.pix.sizeimage = (unsigned)maxlen;
    if (xioctl(fd, VIDIOC_S_FMT, &fmt) < 0) {
        fprintf(stderr, "loopback-writer: VIDIOC_S_FMT(OUTPUT, MJPG %ux%u) on %s: %s\n", files[0].width, files[0].height,
                device, strerror(errno));
        return 1;
    }
    if (fmt.fmt.pix.pixelformat != V4L2_PIX_FMT_MJPEG || fmt.fmt.pix.width != files[0].width ||
        fmt.fmt.pix.height != files[0].height) {
        fprintf(stderr, "loopback-writer: VIDIOC_S_FMT on %s gave %.4s %ux%u instead of MJPG %ux%u\n", device,
                (const char *)&fmt.fmt.pix.pixelformat, fmt.fmt.pix.width, fmt.fmt.pix.height, files[0].width,
                files[0].height);
        return 1;
    }
    if (fmt.fmt.pix.sizeimage < maxlen) {
        fprintf(stderr, "loopback-writer: %s: sizeimage %u is smaller than the largest file (%zu bytes)\n", device,
                fmt.fmt.pix.sizeimage, maxlen);
        return 1;
    }
    struct v4l2_streamparm parm;
    memset(&parm, 0, sizeof parm);
    parm.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
    parm.parm.output.timeperframe.numerator = 1000;
    parm.parm.output.timeperframe.denominator = (unsigned)(fps * 1000 + 0.5);
    if (xioctl(fd, VIDIOC_S_PARM, &parm) < 0)
        fprintf(stderr, "loopback-writer: note: VIDIOC_S_PARM(OUTPUT, %g fps) on %s: %s\n", fps, device, strerror(errno));

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    unsigned char *scratch = malloc(maxlen + 20000);
    if (!scratch)
        return 1;
    enum kind *pattern = NULL;
    long pattern_len = 0, pattern_pos = 0;
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("stream device=%s width=%u height=%u pixelformat=MJPG sizeimage=%u fps=%g files=%d\n", device,
           files[0].width, files[0].height, fmt.fmt.pix.sizeimage, fps, nfiles);

    long long period_ns = (long long)(1e9 / fps);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    long long frame = 0, max_late_ns = 0;
    int rc = 0;
    for (;;) {
        if (count > 0 && frame >= count)
            break;
        if (!loop && frame >= nfiles)
            break;
        if (frame > 0 && sleep_until(&deadline))
            break;
        if (pattern_requested) {
            pattern_requested = 0;
            if (!pattern_file) {
                fprintf(stderr, "loopback-writer: SIGUSR1 without --pattern-file: ignored\n");
            } else {
                enum kind *fresh = NULL;
                long n = read_pattern(pattern_file, &fresh);
                if (n < 0) {
                    rc = 1;
                    break;
                }
                if (pattern_len > 0 || n == 0)
                    printf("pattern end frame=%lld\n", frame);
                free(pattern);
                pattern = fresh;
                pattern_len = n;
                pattern_pos = 0;
                if (n > 0)
                    printf("pattern start frame=%lld frames=%ld\n", frame, n);
            }
        }
        enum kind k = K_GOOD;
        if (pattern_pos < pattern_len) {
            k = pattern[pattern_pos++];
        } else if (pattern_len > 0) {
            printf("pattern end frame=%lld\n", frame);
            pattern_len = pattern_pos = 0;
        }
        const struct jpeg *j = &files[frame % nfiles];
        const unsigned char *bytes;
        size_t len = make_frame(k, j, scratch, &bytes, (unsigned long long)frame);
        struct timespec before, after;
        clock_gettime(CLOCK_MONOTONIC, &before);
        ssize_t n;
        do {
            n = write(fd, bytes, len);
        } while (n < 0 && errno == EINTR);
        clock_gettime(CLOCK_MONOTONIC, &after);
        if (n != (ssize_t)len) {
            fprintf(stderr, "loopback-writer: write(%s, %zu bytes of %s) at frame %lld: %s\n", device, len, j->path,
                    frame, n < 0 ? strerror(errno) : "short write (frame larger than the device's buffer)");
            rc = 1;
            break;
        }
        if (frame > 0) {
            long long late = diff_ns(&before, &deadline);
            if (late > max_late_ns)
                max_late_ns = late;
        } else {
            deadline = before;
        }
        printf("frame=%lld kind=%s file_index=%lld file=%s bytes=%zu t_before=%.9f t_after=%.9f\n", frame,
               kind_names[k], frame % nfiles, j->path, len, ts_sec(&before), ts_sec(&after));
        add_ns(&deadline, period_ns);
        frame++;
    }
    printf("done frames=%lld max_late_us=%lld\n", frame, max_late_ns / 1000);
    if (rc == 0 && linger) {
        while (!stop)
            pause();
    }
    close(fd);
    return rc;
}
