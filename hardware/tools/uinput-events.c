// uinput-events: a virtual input device made through the kernel's uinput, driven by commands on
// standard input, for the input-button scenario: a touch screen (direct multitouch axes) or a
// one-key keyboard, whose events travel through the kernel's evdev like a real device's.
//
//   uinput-events --touch [--name NAME]      a touch screen 1024x600 (INPUT_PROP_DIRECT, MT slots)
//   uinput-events --key CODE [--name NAME]   a device with one key (CODE: its number, 57 = KEY_SPACE)
//
// Prints "ready /dev/input/eventN" (from sysfs) once the device exists, then reads commands, one a line:
//   down | up        touch down (a finger at the centre) or up; the key down or up
//   sleep MS         waits MS milliseconds (clock_nanosleep, CLOCK_MONOTONIC, absolute: no drift)
//   burst N MS       N times: down, MS ms, up, MS ms (a bouncing contact; timed absolutely)
//   flood N          N times down and up, each pair in one write (the key is down for microseconds
//                    however the writer is scheduled): bounce noise far faster than any debounce, the
//                    reader's kernel buffer overflows (SYN_DROPPED); the key ends up
//   quit             destroys the device and exits (so does end of input)
// Each down/up is written with its SYN_REPORT at once; the kernel stamps the events.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/uinput.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fd = -1, touch = 0, key = KEY_SPACE, tracking = 0;

static void die(const char *what) { fprintf(stderr, "uinput-events: %s: %s\n", what, strerror(errno)); exit(1); }

static void emit(int type, int code, int value) {
    struct input_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = type; ev.code = code; ev.value = value;
    if (write(fd, &ev, sizeof ev) != (ssize_t)sizeof ev) die("write");
}

static void set(int down) {
    if (touch) {
        emit(EV_ABS, ABS_MT_SLOT, 0);
        emit(EV_ABS, ABS_MT_TRACKING_ID, down ? ++tracking : -1);
        if (down) {
            emit(EV_ABS, ABS_MT_POSITION_X, 512); emit(EV_ABS, ABS_MT_POSITION_Y, 300);
            emit(EV_ABS, ABS_X, 512); emit(EV_ABS, ABS_Y, 300);
        }
        emit(EV_KEY, BTN_TOUCH, down);
    } else {
        emit(EV_KEY, key, down);
    }
    emit(EV_SYN, SYN_REPORT, 0);
}

static struct timespec next;
static void wait_ms(long ms) {
    next.tv_nsec += (ms % 1000) * 1000000L; next.tv_sec += ms / 1000 + next.tv_nsec / 1000000000L;
    next.tv_nsec %= 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {}
}

static void abs_axis(int code, int max) {
    struct uinput_abs_setup a;
    memset(&a, 0, sizeof a);
    a.code = code; a.absinfo.maximum = max;
    if (ioctl(fd, UI_ABS_SETUP, &a) < 0) die("UI_ABS_SETUP");
}

int main(int argc, char **argv) {
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--touch")) touch = 1;
        else if (!strcmp(argv[i], "--key") && i + 1 < argc) key = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--name") && i + 1 < argc) name = argv[++i];
        else { fprintf(stderr, "usage: uinput-events (--touch | --key CODE) [--name NAME]\n"); return 2; }
    }
    fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK);
    if (fd < 0) die("open /dev/uinput");
    if (ioctl(fd, UI_SET_EVBIT, EV_KEY) < 0) die("UI_SET_EVBIT");
    if (touch) {
        if (ioctl(fd, UI_SET_KEYBIT, BTN_TOUCH) < 0 || ioctl(fd, UI_SET_EVBIT, EV_ABS) < 0
            || ioctl(fd, UI_SET_PROPBIT, INPUT_PROP_DIRECT) < 0) die("UI_SET_*");
        int axes[] = {ABS_X, ABS_Y, ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID};
        for (unsigned i = 0; i < sizeof axes / sizeof axes[0]; i++)
            if (ioctl(fd, UI_SET_ABSBIT, axes[i]) < 0) die("UI_SET_ABSBIT");
        abs_axis(ABS_X, 1023); abs_axis(ABS_Y, 599); abs_axis(ABS_MT_SLOT, 9);
        abs_axis(ABS_MT_POSITION_X, 1023); abs_axis(ABS_MT_POSITION_Y, 599); abs_axis(ABS_MT_TRACKING_ID, 65535);
    } else if (ioctl(fd, UI_SET_KEYBIT, key) < 0) die("UI_SET_KEYBIT");
    struct uinput_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.id.bustype = BUS_VIRTUAL; setup.id.vendor = 0x1209; setup.id.product = touch ? 0x7001 : 0x7002;
    snprintf(setup.name, sizeof setup.name, "%s", name ? name : touch ? "photobooth test touch screen" : "photobooth test key");
    if (ioctl(fd, UI_DEV_SETUP, &setup) < 0) die("UI_DEV_SETUP");
    if (ioctl(fd, UI_DEV_CREATE) < 0) die("UI_DEV_CREATE");
    char sys[64], node[300] = "?";
    if (ioctl(fd, UI_GET_SYSNAME(sizeof sys), sys) >= 0) {
        char dir[160];
        snprintf(dir, sizeof dir, "/sys/devices/virtual/input/%s", sys);
        for (int tries = 0; tries < 200 && node[0] == '?'; tries++) {
            DIR *d = opendir(dir);
            struct dirent *e;
            while (d && (e = readdir(d)))
                if (!strncmp(e->d_name, "event", 5)) snprintf(node, sizeof node, "/dev/input/%s", e->d_name);
            if (d) closedir(d);
            if (node[0] == '?') usleep(10000);
        }
    }
    printf("ready %s\n", node);
    fflush(stdout);
    char line[128];
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (fgets(line, sizeof line, stdin)) {
        long n = 0, ms = 0;
        clock_gettime(CLOCK_MONOTONIC, &next);
        if (!strncmp(line, "down", 4)) set(1);
        else if (!strncmp(line, "up", 2)) set(0);
        else if (sscanf(line, "sleep %ld", &ms) == 1) wait_ms(ms);
        else if (sscanf(line, "burst %ld %ld", &n, &ms) == 2) {
            for (long i = 0; i < n; i++) { set(1); wait_ms(ms); set(0); wait_ms(ms); }
        } else if (sscanf(line, "flood %ld", &n) == 1) {
            if (touch) { fprintf(stderr, "uinput-events: flood is for a key\n"); continue; }
            struct input_event pair[4];
            memset(pair, 0, sizeof pair);
            pair[0].type = EV_KEY; pair[0].code = key; pair[0].value = 1;
            pair[1].type = EV_SYN; pair[1].code = SYN_REPORT;
            pair[2].type = EV_KEY; pair[2].code = key; pair[2].value = 0;
            pair[3].type = EV_SYN; pair[3].code = SYN_REPORT;
            for (long i = 0; i < n; i++)
                if (write(fd, pair, sizeof pair) != (ssize_t)sizeof pair) die("write");
        } else if (!strncmp(line, "quit", 4)) break;
        else fprintf(stderr, "uinput-events: unknown command: %s", line);
        printf("done %s", line);
        fflush(stdout);
    }
    ioctl(fd, UI_DEV_DESTROY);
    close(fd);
    return 0;
}
