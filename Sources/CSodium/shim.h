// libsodium (Debian's libsodium-dev): the gallery's secret (randombytes_buf) and the pictures'
// tokens (crypto_auth_hmacsha256).
#include <sodium.h>
