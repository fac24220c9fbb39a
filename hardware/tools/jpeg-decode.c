/*
 * jpeg-decode FILE...: decodes each JPEG fully with libjpeg-turbo's TurboJPEG (the library the
 * booth uses) and prints "file=<path> width=<px> height=<px> subsampling=<444|422|420|...>"
 * per file. Exits 1 at the first file that does not read or decode (the error on stderr):
 * a scenario's proof that a saved capture is a whole JPEG of the expected size.
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
    printf("file=%s width=%d height=%d subsampling=%s bytes=%ld\n", path, width, height, subsampling_name(subsamp), size);
    free(rgb);
    free(jpeg);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: jpeg-decode FILE...\n");
        return 2;
    }
    tjhandle tj = tjInitDecompress();
    if (!tj) {
        fprintf(stderr, "jpeg-decode: tjInitDecompress: %s\n", tjGetErrorStr2(NULL));
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        if (decode(tj, argv[i]) != 0) {
            tjDestroy(tj);
            return 1;
        }
    }
    tjDestroy(tj);
    return 0;
}
