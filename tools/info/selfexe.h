/* How hipextsem-info starts itself again (the self-test's child and its
 * exit child), and where its own file lies.
 *
 * Normally /proc/self/exe is this program.  Started through an ELF
 * interpreter named on the command line ("ld-linux-x86-64.so.2
 * [--library-path DIR ...] hipextsem-info ..." - how a program runs on
 * another Debian userland's C library, tests/realrt/with-device),
 * /proc/self/exe is that interpreter: then the program is started again
 * through the same interpreter with the same interpreter options. */
#ifndef HX_INFO_SELFEXE_H
#define HX_INFO_SELFEXE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define HX_SELF_MAX_PREFIX 16

struct hx_self {
	char prog[PATH_MAX];   /* this program's file (absolute) */
	char exe[PATH_MAX];    /* the file to execute: prog, or the interpreter */
	/* With an interpreter: its argument words up to the program
	 * (argv[0] first, then its options); none otherwise. */
	char *prefix[HX_SELF_MAX_PREFIX];
	int nprefix;
	char *cmdline;         /* storage for prefix */
};

/* Fills s; false with a message in err if it cannot be told. */
bool hx_self_find(struct hx_self *s, char *err, size_t errlen);

/* argv for executing s->exe that runs this program with ARGS (NULL
 * terminated; args[0] is ignored: the program's path is used).  Returns
 * a malloc'ed array (the strings are not copied), or NULL. */
char **hx_self_argv(const struct hx_self *s, char *const args[]);

void hx_self_free(struct hx_self *s);

#endif
