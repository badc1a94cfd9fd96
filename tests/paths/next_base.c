/* SPDX-License-Identifier: MIT */
/* The "next" definition of paths_probe(), behind next_helper.c's.  A
 * project symbol rather than a libc one: sanitizer runtimes interpose many
 * libc functions themselves and would change what RTLD_NEXT finds. */
__attribute__((visibility("default"))) int paths_probe(void);
__attribute__((visibility("default"))) int paths_probe(void)
{
	return 1;
}

/* Referenced directly by the helper so that the linker keeps the
 * dependency (the helper otherwise reaches this library only through
 * dlsym(RTLD_NEXT)). */
__attribute__((visibility("default"))) int paths_base_anchor(void);
__attribute__((visibility("default"))) int paths_base_anchor(void)
{
	return 0;
}
