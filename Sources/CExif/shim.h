// libexif (Debian's libexif-dev): the Exif of a picture the gallery serves, read and written again
// without its GPS position and serial numbers (BoothJPEG/EXIFPrivacy.swift).
#include <libexif/exif-data.h>
#include <libexif/exif-log.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

// libexif reports damaged data only through its log; Swift cannot take a va_list callback tidily,
// so the callback is here. `*damaged` becomes 1 when libexif logs corrupt data or no memory.
static void pb_exif_log(ExifLog *log, ExifLogCode code, const char *domain, const char *format,
                        va_list args, void *data) {
    (void)log; (void)domain; (void)format; (void)args;
    if (code == EXIF_LOG_CODE_CORRUPT_DATA || code == EXIF_LOG_CODE_NO_MEMORY) *(int *)data = 1;
}

// exif_data_load_data with that log attached; returns 1 when libexif found the data damaged.
static inline int pb_exif_load(ExifData *exif, const unsigned char *bytes, unsigned int size) {
    int damaged = 0;
    ExifLog *log = exif_log_new();
    if (log) {
        exif_log_set_func(log, pb_exif_log, &damaged);
        exif_data_log(exif, log);
    }
    exif_data_load_data(exif, bytes, size);
    if (log) {
        exif_data_log(exif, NULL);
        exif_log_unref(log);
    }
    return damaged;
}

// The IFD `i` (EXIF_IFD_0 … EXIF_IFD_INTEROPERABILITY) of `exif`.
static inline ExifContent *pb_exif_ifd(ExifData *exif, int i) {
    return (i >= 0 && i < EXIF_IFD_COUNT) ? exif->ifd[i] : NULL;
}

// Drops the IFD1 thumbnail's bytes (exif_data_new's default ExifMem allocates with calloc and frees
// with free), so exif_data_save_data writes none.
static inline void pb_exif_drop_thumbnail(ExifData *exif) {
    if (exif->data) free(exif->data);
    exif->data = NULL;
    exif->size = 0;
}
