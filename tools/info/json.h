/* SPDX-License-Identifier: MIT */
/*
 * JSON output helpers shared by hipextsem-info's report and its self-test.
 */
#ifndef HIPEXTSEM_INFO_JSON_H
#define HIPEXTSEM_INFO_JSON_H

#include <stdio.h>

/* Writes `s` as a JSON string (null for NULL), escaping what JSON needs. */
void hx_json_str(FILE *f, const char *s);

#endif
