// SQLite (Debian's libsqlite3-dev): the picture index of BoothIndex.
#include <sqlite3.h>
