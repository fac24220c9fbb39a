// libqrencode (Debian's libqrencode-dev): the QR code of a picture's URL on the review screen.
#include <qrencode.h>
