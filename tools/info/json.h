/* SPDX-License-Identifier: MIT */
/*
 * Output helpers shared by hipextsem-info's report and its self-test.
 *
 * Everything the tools print can come from a hostile file or environment:
 * paths, sonames, RUNPATH strings, the test process's log.  JSON output is
 * always valid UTF-8 with control characters escaped; text output carries
 * no raw control character a terminal would act on.
 */
#ifndef HIPEXTSEM_INFO_JSON_H
#define HIPEXTSEM_INFO_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Writes `s` as a JSON string (null for NULL).  Control characters (C0,
 * DEL, C1) are escaped as \uXXXX; a byte that is not part of valid UTF-8
 * is written as the six characters \\xNN (a backslash, then xNN), so the
 * output is valid UTF-8 and nothing of the input is lost. */
void hx_json_str(FILE *f, const char *s);

/* Writes n bytes of text to f with every control character except newline
 * (C0, DEL, C1), and every byte that is not valid UTF-8, written as \xNN
 * (C1 characters as \u0080..\u009f). */
void hx_text_write_safe(FILE *f, const char *s, size_t n);

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if the
 * byte at s does not start one.  Overlong forms, surrogates and code
 * points above U+10FFFF are invalid. */
size_t hx_utf8_len(const unsigned char *s, size_t n);

#endif
