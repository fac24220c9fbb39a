// FreeType 2 (Debian: libfreetype-dev): glyph rendering for the screens' text.
#include <ft2build.h>
#include FT_FREETYPE_H
