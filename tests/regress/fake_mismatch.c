/* SPDX-License-Identifier: MIT */
/* A "runtime" exporting hipImportExternalSemaphore under the wrong node:
 * hipextsem-abicheck must report the silent non-interposition. */
__attribute__((visibility("default"))) int hipImportExternalSemaphore(void *a, const void *b);
__attribute__((visibility("default"))) int hipImportExternalSemaphore(void *a, const void *b)
{
	(void)a, (void)b;
	return 801;
}
