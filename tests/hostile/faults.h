/* SPDX-License-Identifier: MIT */
#ifndef HOSTILE_FAULTS_H
#define HOSTILE_FAULTS_H

enum {
	HXF_NO_SYNCOBJ = 1 << 0,     /* drmGetCap(DRM_CAP_SYNCOBJ) says 0 */
	HXF_NO_TIMELINE = 1 << 1,    /* drmGetCap(DRM_CAP_SYNCOBJ_TIMELINE) says 0 */
	HXF_NO_EVENTFD = 1 << 2,     /* DRM_IOCTL_SYNCOBJ_EVENTFD fails (EINVAL) */
	HXF_EVENTFD_ENOTTY = 1 << 3, /* ... with ENOTTY instead */
	HXF_OPEN_EACCES = 1 << 4,    /* open("/dev/dri/...") fails with EACCES */
};

extern volatile unsigned hxf_faults;
extern volatile unsigned hxf_hits; /* how often a fault fired */

#endif
