/* How hipextsem-info starts itself again: see selfexe.h. */
#include "selfexe.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file mapped at this function's address: the program itself, whatever
 * started it (from /proc/self/maps: "start-end perms offset dev inode path"). */
static bool own_file(char *out, size_t len)
{
	uintptr_t me = (uintptr_t)&own_file;
	FILE *f = fopen("/proc/self/maps", "re");
	char line[PATH_MAX + 256];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		int path_at = -1;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &path_at) < 2 || path_at < 0)
			continue;
		if (me < lo || me >= hi || line[path_at] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		/* A file replaced while running shows " (deleted)": not ours to run. */
		if (strlen(line + path_at) < len && !strstr(line + path_at, " (deleted)")) {
			snprintf(out, len, "%s", line + path_at);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* An ELF interpreter is a shared object that names no interpreter itself. */
static bool is_interpreter(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = false;
	Elf *e;
	GElf_Ehdr eh;
	size_t nph;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && gelf_getehdr(e, &eh) && eh.e_type == ET_DYN &&
	    elf_getphdrnum(e, &nph) == 0) {
		ok = true;
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				ok = false;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return ok;
}

/* /proc/self/cmdline: the argument strings as passed to execve (the
 * interpreter moves its argv pointers past its own options, not the
 * strings).  Returns the words' count; the storage goes to *buf. */
static int read_cmdline(char **buf, char **words, int max)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, len = 0;
	char *b = malloc(cap + 1);
	int n = 0;

	if (fd < 0 || !b) {
		if (fd >= 0)
			close(fd);
		free(b);
		return -1;
	}
	for (;;) {
		ssize_t r;
		if (len == cap) {
			char *nb = realloc(b, cap * 2 + 1);
			if (!nb)
				break;
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	b[len] = '\0';
	for (size_t i = 0; i < len && n < max; i += strlen(b + i) + 1)
		words[n++] = b + i;
	*buf = b;
	return n;
}

bool hx_self_find(struct hx_self *s, char *err, size_t errlen)
{
	char *words[HX_SELF_MAX_PREFIX + 1];
	ssize_t n;
	int nw, k;

	memset(s, 0, sizeof(*s));
	n = readlink("/proc/self/exe", s->exe, sizeof(s->exe) - 1);
	if (n <= 0) {
		snprintf(err, errlen, "cannot find this program (/proc/self/exe): %s", strerror(errno));
		return false;
	}
	s->exe[n] = '\0';
	if (!own_file(s->prog, sizeof(s->prog))) {
		/* No mapping to read: /proc/self/exe is taken for the program. */
		snprintf(s->prog, sizeof(s->prog), "%s", s->exe);
		return true;
	}
	if (same_file(s->prog, s->exe))
		return true;
	/* Started through an interpreter: its words are those before the one
	 * that names this program. */
	if (!is_interpreter(s->exe)) {
		snprintf(err, errlen, "this program (%s) was started by %s, which is not an ELF "
			 "interpreter: cannot start it again the same way", s->prog, s->exe);
		return false;
	}
	nw = read_cmdline(&s->cmdline, words, HX_SELF_MAX_PREFIX + 1);
	for (k = 1; k < nw; k++)
		if (same_file(words[k], s->prog))
			break;
	if (nw < 0 || k >= nw || k > HX_SELF_MAX_PREFIX) {
		snprintf(err, errlen, "this program (%s) was started through the interpreter %s, "
			 "but its command line does not name the program: cannot start it again",
			 s->prog, s->exe);
		free(s->cmdline);
		s->cmdline = NULL;
		return false;
	}
	for (int i = 0; i < k; i++)
		s->prefix[i] = words[i];
	s->prefix[0] = s->exe;
	s->nprefix = k;
	return true;
}

char **hx_self_argv(const struct hx_self *s, char *const args[])
{
	int na = 0;
	char **v;

	while (args[na])
		na++;
	v = calloc((size_t)(s->nprefix + na + 1), sizeof(*v));
	if (!v)
		return NULL;
	for (int i = 0; i < s->nprefix; i++)
		v[i] = s->prefix[i];
	v[s->nprefix] = (char *)s->prog;
	for (int i = 1; i < na; i++)
		v[s->nprefix + i] = args[i];
	return v;
}

void hx_self_free(struct hx_self *s)
{
	free(s->cmdline);
	s->cmdline = NULL;
}
