/*
 * mono-now: prints CLOCK_MONOTONIC now, in seconds with nanoseconds ("123.456789012"), the
 * clock of gpio-pulse, loopback-writer, gpiomon and V4L2 buffer timestamps. For scenarios that
 * mark a moment (e.g. "before the press") to compare with logged kernel timestamps.
 */
#include <stdio.h>
#include <time.h>

int main(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) {
        perror("mono-now: clock_gettime(CLOCK_MONOTONIC)");
        return 1;
    }
    printf("%lld.%09ld\n", (long long)t.tv_sec, t.tv_nsec);
    return 0;
}
