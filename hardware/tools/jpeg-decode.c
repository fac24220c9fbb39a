/*
 * jpeg-decode [--bands N] FILE...: decodes each JPEG fully with libjpeg-turbo's TurboJPEG (the library
 * the booth uses) and prints "file=<path> width=<px> height=<px> subsampling=<444|422|420|...>"
 * per file. Exits 1 at the first file that does not read or decode (the error on stderr):
 * a scenario's proof that a saved capture is a whole JPEG of the expected size.
 * --bands N adds " bands=R,G,B R,G,B ..." to each line: the mean colour (0-255) of N vertical bands of
 * equal width, from the middle 60% of each band's width and of the picture's height (a test pattern's
 * colour bars, read without their edges).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

static const char *subsampling_name(int s)
{
    switch (s) {
    case TJSAMP_444: return "444";
    case TJSAMP_422: return "422";
    case TJSAMP_420: return "420";
    case TJSAMP_GRAY: return "gray";
    case TJSAMP_440: return "440";
    case TJSAMP_411: return "411";
    default: return "unknown";
    }
}

static int bands;

static int decode(tjhandle tj, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "jpeg-decode: %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return 1; }
    long size = ftell(f);
    rewind(f);
    if (size <= 0) {
        fprintf(stderr, "jpeg-decode: %s: empty\n", path);
        fclose(f);
        return 1;
    }
    unsigned char *jpeg = malloc((size_t)size);
    if (!jpeg || fread(jpeg, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "jpeg-decode: %s: short read\n", path);
        free(jpeg);
        fclose(f);
        return 1;
    }
    fclose(f);
    int width, height, subsamp, colorspace;
    if (tjDecompressHeader3(tj, jpeg, (unsigned long)size, &width, &height, &subsamp, &colorspace) != 0) {
        fprintf(stderr, "jpeg-decode: %s: tjDecompressHeader3: %s\n", path, tjGetErrorStr2(tj));
        free(jpeg);
        return 1;
    }
    unsigned char *rgb = malloc((size_t)width * (size_t)height * 3);
    if (!rgb) { free(jpeg); return 1; }
    /* TJFLAG_STOPONWARNING: a truncated or corrupt scan is an error, not a grey picture. */
    if (tjDecompress2(tj, jpeg, (unsigned long)size, rgb, width, 0, height, TJPF_RGB, TJFLAG_STOPONWARNING) != 0) {
        fprintf(stderr, "jpeg-decode: %s: tjDecompress2: %s\n", path, tjGetErrorStr2(tj));
        free(rgb);
        free(jpeg);
        return 1;
    }
    printf("file=%s width=%d height=%d subsampling=%s bytes=%ld", path, width, height, subsampling_name(subsamp), size);
    if (bands > 0) {
        printf(" bands=");
        for (int b = 0; b < bands; b++) {
            int x0 = (int)((long)width * (5 * b + 1) / (5L * bands)), x1 = (int)((long)width * (5 * b + 4) / (5L * bands));
            int y0 = height / 5, y1 = height - height / 5;
            double sum[3] = {0, 0, 0};
            long n = 0;
            for (int y = y0; y < y1; y++)
                for (int x = x0; x < x1; x++, n++)
                    for (int c = 0; c < 3; c++) sum[c] += rgb[((size_t)y * (size_t)width + (size_t)x) * 3 + (size_t)c];
            if (n == 0) n = 1;
            printf("%s%.0f,%.0f,%.0f", b ? " " : "", sum[0] / n, sum[1] / n, sum[2] / n);
        }
    }
    printf("\n");
    free(rgb);
    free(jpeg);
    return 0;
}

int main(int argc, char **argv)
{
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--bands") == 0) {
        char *end;
        long n = strtol(argv[2], &end, 10);
        if (*end || n < 1 || n > 64) {
            fprintf(stderr, "jpeg-decode: --bands wants a count from 1 to 64, got '%s'\n", argv[2]);
            return 2;
        }
        bands = (int)n;
        first = 3;
    }
    if (argc <= first) {
        fprintf(stderr, "usage: jpeg-decode [--bands N] FILE...\n");
        return 2;
    }
    tjhandle tj = tjInitDecompress();
    if (!tj) {
        fprintf(stderr, "jpeg-decode: tjInitDecompress: %s\n", tjGetErrorStr2(NULL));
        return 1;
    }
    for (int i = first; i < argc; i++) {
        if (decode(tj, argv[i]) != 0) {
            tjDestroy(tj);
            return 1;
        }
    }
    tjDestroy(tj);
    return 0;
}
