/*
 * log-replay: reads a dm-log-writes log and writes a chosen part of it onto a replay device, to
 * make the disk a power cut at that moment would leave.
 *
 *   log-replay --log LOGDEV --list
 *       prints "entries N sectorsize S flushes F", then "mark INDEX NAME" for every mark
 *   log-replay --log LOGDEV --replay DEV --cut K [--start S] [--subset SEED] [--tear SEED]
 *       writes entries S..K-1 (S: default 0; the entries before S are on DEV already) onto DEV:
 *       every entry up to the last flush before K; marks and FUA writes after it; and the plain
 *       writes after that flush (completed, but in the device's cache at the cut): all of them, or
 *       with --subset, each one kept or lost at random (seeded: the same seed, the same disk).
 *       With --tear, entry K itself, when it is a plain write, is written in part: its first
 *       1..n-1 sectors (a write the cut interrupted). Discards are written as zeros.
 *       Prints "replayed K: applied A lost L torn T last-flush F".
 *
 * The log format is the kernel's (drivers/md/dm-log-writes.c; Documentation/admin-guide/
 * device-mapper/log-writes.rst): a super block in sector 0 (magic, version, nr_entries,
 * sectorsize), then per entry one sector holding {sector, nr_sectors, flags, data_len} (a mark's
 * text after it), followed by the write's nr_sectors sectors of data (none for discards, flushes
 * without data and marks). The target logs plain writes only when the next flush completes, in
 * completion order, so the writes before a flush entry are exactly what that flush made durable.
 *
 * Exit: 0 done; 1 a read or write failed; 2 bad usage or not a dm-log-writes log.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_FLUSH (1u << 0)
#define LOG_FUA (1u << 1)
#define LOG_DISCARD (1u << 2)
#define LOG_MARK (1u << 3)
#define WRITE_LOG_MAGIC 0x6a736677736872ULL
#define WRITE_LOG_VERSION 1ULL

struct entry {
    uint64_t sector, nr_sectors, flags, data_len;
    uint64_t offset; /* byte offset of the entry's data in the log */
    char mark[256];
};

static int logfd = -1;
static uint32_t sectorsize;
static uint64_t nr_entries;

static void die(int code, const char *what)
{
    fprintf(stderr, "log-replay: %s: %s\n", what, errno ? strerror(errno) : "");
    exit(code);
}

static void read_at(int fd, void *buf, size_t n, uint64_t off, const char *what)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { if (r == 0) errno = EIO; die(1, what); }
        done += (size_t)r;
    }
}

static void write_at(int fd, const void *buf, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pwrite(fd, (const char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { if (r == 0) errno = EIO; die(1, "pwrite on the replay device"); }
        done += (size_t)r;
    }
}

static void read_super(void)
{
    unsigned char sb[32];
    read_at(logfd, sb, sizeof sb, 0, "reading the log's super block");
    uint64_t magic, version, n;
    uint32_t ss;
    memcpy(&magic, sb, 8); memcpy(&version, sb + 8, 8); memcpy(&n, sb + 16, 8); memcpy(&ss, sb + 24, 4);
    if (le64toh(magic) != WRITE_LOG_MAGIC || le64toh(version) != WRITE_LOG_VERSION) {
        errno = 0;
        die(2, "not a dm-log-writes log (magic or version differs)");
    }
    nr_entries = le64toh(n);
    sectorsize = le32toh(ss);
    if (sectorsize < 512 || (sectorsize & (sectorsize - 1))) { errno = 0; die(2, "bad sector size in the log"); }
}

/* Reads entry header at byte position *pos and advances *pos past its data. */
static void next_entry(uint64_t *pos, struct entry *e)
{
    unsigned char *hdr = malloc(sectorsize);
    if (!hdr) die(1, "malloc");
    read_at(logfd, hdr, sectorsize, *pos, "reading an entry of the log");
    uint64_t v[4];
    memcpy(v, hdr, sizeof v);
    e->sector = le64toh(v[0]); e->nr_sectors = le64toh(v[1]);
    e->flags = le64toh(v[2]); e->data_len = le64toh(v[3]);
    e->mark[0] = 0;
    if (e->flags & LOG_MARK) {
        size_t n = e->data_len < sizeof e->mark - 1 ? (size_t)e->data_len : sizeof e->mark - 1;
        if (n > sectorsize - 32) n = sectorsize - 32;
        memcpy(e->mark, hdr + 32, n);
        e->mark[n] = 0;
    }
    free(hdr);
    *pos += sectorsize;
    e->offset = *pos;
    if (!(e->flags & (LOG_DISCARD | LOG_MARK))) *pos += e->nr_sectors * sectorsize;
}

/* A write the device may have kept or lost: data, no FUA (a flush entry with data counts: its data comes
 * after its flush). Discards are kept (written as zeros): the scenario's file systems issue none. */
static int plain_write(const struct entry *e)
{
    return !(e->flags & (LOG_FUA | LOG_MARK | LOG_DISCARD)) && e->nr_sectors > 0;
}

static void apply(int dev, const struct entry *e, uint64_t sectors)
{
    static unsigned char *buf;
    static size_t cap;
    size_t n = (size_t)(sectors * sectorsize);
    if (n == 0) return;
    if (n > cap) {
        free(buf);
        buf = malloc(n);
        if (!buf) die(1, "malloc");
        cap = n;
    }
    if (e->flags & LOG_DISCARD) memset(buf, 0, n);
    else read_at(logfd, buf, n, e->offset, "reading a write's data from the log");
    write_at(dev, buf, n, e->sector * sectorsize);
}

/* xorshift64*: the subset and the tear follow the seed, so a cut can be made again. */
static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
    return rng * 2685821657736338717ULL;
}

int main(int argc, char **argv)
{
    const char *logpath = NULL, *replaypath = NULL;
    int list = 0, subset = 0, tear = 0;
    uint64_t cut = UINT64_MAX, start = 0, subset_seed = 0, tear_seed = 0;
    static const struct option opts[] = {
        {"log", required_argument, 0, 'l'}, {"replay", required_argument, 0, 'r'},
        {"list", no_argument, 0, 'L'}, {"cut", required_argument, 0, 'c'},
        {"start", required_argument, 0, 's'}, {"subset", required_argument, 0, 'S'},
        {"tear", required_argument, 0, 'T'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'l': logpath = optarg; break;
        case 'r': replaypath = optarg; break;
        case 'L': list = 1; break;
        case 'c': cut = strtoull(optarg, NULL, 10); break;
        case 's': start = strtoull(optarg, NULL, 10); break;
        case 'S': subset = 1; subset_seed = strtoull(optarg, NULL, 10); break;
        case 'T': tear = 1; tear_seed = strtoull(optarg, NULL, 10); break;
        default:
            fprintf(stderr, "usage: log-replay --log LOGDEV (--list | --replay DEV --cut K [--start S] [--subset SEED] [--tear SEED])\n");
            return 2;
        }
    }
    if (!logpath || (!list && (!replaypath || cut == UINT64_MAX))) {
        fprintf(stderr, "usage: log-replay --log LOGDEV (--list | --replay DEV --cut K [--start S] [--subset SEED] [--tear SEED])\n");
        return 2;
    }
    logfd = open(logpath, O_RDONLY | O_CLOEXEC);
    if (logfd < 0) die(1, logpath);
    read_super();
    uint64_t pos = sectorsize;
    struct entry e;

    if (list) {
        uint64_t flushes = 0;
        /* Marks go to a buffer first so the summary line comes first. */
        char *marks = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&marks, &len);
        if (!m) die(1, "open_memstream");
        for (uint64_t i = 0; i < nr_entries; i++) {
            next_entry(&pos, &e);
            if (e.flags & LOG_FLUSH) flushes++;
            if (e.flags & LOG_MARK) fprintf(m, "mark %" PRIu64 " %s\n", i, e.mark);
        }
        fclose(m);
        printf("entries %" PRIu64 " sectorsize %" PRIu32 " flushes %" PRIu64 "\n%s", nr_entries, sectorsize, flushes, marks);
        free(marks);
        return 0;
    }

    if (cut > nr_entries) cut = nr_entries;
    int dev = open(replaypath, O_WRONLY | O_CLOEXEC);
    if (dev < 0) die(1, replaypath);
    /* First pass: where the last flush before the cut is. */
    uint64_t last_flush = UINT64_MAX; /* none */
    uint64_t p = pos;
    for (uint64_t i = 0; i < cut; i++) {
        next_entry(&p, &e);
        if (e.flags & LOG_FLUSH) last_flush = i;
    }
    rng = subset_seed * 0x9E3779B97F4A7C15ULL + 1;
    uint64_t applied = 0, lost = 0, torn = 0;
    for (uint64_t i = 0; i < cut; i++) {
        next_entry(&pos, &e);
        if (i < start) continue;
        /* A flush entry's own data (REQ_PREFLUSH with data) is written after the flush: durable only with FUA. */
        int durable = last_flush != UINT64_MAX
            && (i < last_flush || (i == last_flush && (e.nr_sectors == 0 || (e.flags & LOG_FUA))));
        if (!durable && plain_write(&e) && subset && (rnd() & 1)) { lost++; continue; }
        apply(dev, &e, (e.flags & LOG_MARK) ? 0 : e.nr_sectors);
        applied++;
    }
    if (tear && cut < nr_entries) {
        next_entry(&pos, &e);
        if (plain_write(&e) && e.nr_sectors > 1) {
            rng = tear_seed * 0x9E3779B97F4A7C15ULL + 7;
            uint64_t part = 1 + rnd() % (e.nr_sectors - 1);
            apply(dev, &e, part);
            torn = 1;
        }
    }
    if (fsync(dev) != 0 && errno != EINVAL) die(1, "fsync of the replay device");
    close(dev);
    if (last_flush == UINT64_MAX) printf("replayed %" PRIu64 ": applied %" PRIu64 " lost %" PRIu64 " torn %" PRIu64 " last-flush none\n", cut, applied, lost, torn);
    else printf("replayed %" PRIu64 ": applied %" PRIu64 " lost %" PRIu64 " torn %" PRIu64 " last-flush %" PRIu64 "\n", cut, applied, lost, torn, last_flush);
    return 0;
}
