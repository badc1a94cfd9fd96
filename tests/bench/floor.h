/* SPDX-License-Identifier: MIT */
/* hxbench floor OUTFILE N: the bare kernel multi-wait (floor.c). */
#ifndef HXBENCH_FLOOR_H
#define HXBENCH_FLOOR_H

int hxbench_floor(int argc, char **argv);

#endif
