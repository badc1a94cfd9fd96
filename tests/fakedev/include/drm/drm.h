/* linux/kfd_ioctl.h includes <drm/drm.h>; Debian ships it in libdrm-dev as <libdrm/drm.h>. */
#include <libdrm/drm.h>
