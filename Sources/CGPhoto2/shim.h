// libgphoto2 (Debian's libgphoto2-dev): cameras on USB through their own protocols (PTP for DSLRs and
// mirrorless bodies).
#include <gphoto2/gphoto2.h>
