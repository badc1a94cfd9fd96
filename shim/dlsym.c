/* SPDX-License-Identifier: MIT */
/*
 * dlsym/dlvsym interposition, for loaders that dlopen() libamdhip64 and
 * look the semaphore calls up on its handle (sgl, Orochi, hipew).
 *
 * - Lookups on a real handle go to glibc's dlsym; when the name is one the
 *   shim exports and the symbol found lives in a libamdhip64 file (the
 *   handle is the runtime, or a library whose local scope includes it),
 *   the shim's function is returned instead.  Lookups made by the shim
 *   itself are never rewritten (runtime.c must get the real functions).
 * - RTLD_NEXT and RTLD_DEFAULT are resolved by glibc relative to the
 *   caller's return address, so they must reach glibc with the caller's
 *   return address intact: the exported dlsym/dlvsym are small assembly
 *   trampolines that tail-jump (jmp, no new frame) to glibc for those two
 *   handles and to the C code below for the others.
 * - glibc's own functions are found without going through our dlsym: the
 *   shim calls dlvsym@GLIBC_2.2.5 (which it does not define; its own
 *   dlvsym is only the GLIBC_2.34 default) to get dlsym@GLIBC_2.34.
 * - Hidden functions: a name the runtime does not export but hands out
 *   through its own hipGetProcAddress (hipExternalMemoryGetMappedMipmappedArray;
 *   hidden_names below) is answered on the runtime's own handle with the
 *   pointer that hipGetProcAddress gives, so that a dlopen loader reaches
 *   what a hipGetProcAddress caller reaches.  Where the runtime's
 *   hipGetProcAddress does not hand it out (every release and the
 *   development tree of clr, docs/interposition.md) the lookup stays NULL,
 *   with glibc's dlerror() message.
 *
 * Version nodes: dlsym is exported as dlsym@@GLIBC_2.34 and
 * dlsym@GLIBC_2.2.5 (binaries built before glibc 2.34 reference the
 * latter); dlvsym as dlvsym@@GLIBC_2.34 only.  x86-64 only; elsewhere the
 * shim does not interpose dlsym.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hipextsem/hip_api.h"
#include "intercept.h"
#include "log.h"
#include "runtime.h"

#if defined(__x86_64__) && defined(__GLIBC__)

typedef void *dlsym_fn(void *, const char *);
typedef void *dlvsym_fn(void *, const char *, const char *);

/* glibc's compat dlvsym: a reference the shim's own dlvsym cannot satisfy. */
extern void *hx_libc_dlvsym(void *handle, const char *name, const char *version);
__asm__(".symver hx_libc_dlvsym, dlvsym@GLIBC_2.2.5");

/* Read by the trampolines. */
__attribute__((visibility("hidden"))) dlsym_fn *hx_real_dlsym;
__attribute__((visibility("hidden"))) dlvsym_fn *hx_real_dlvsym;

__attribute__((visibility("hidden"))) void hx_dl_bootstrap(void);
__attribute__((visibility("hidden"))) void *hx_dlsym_handle(void *handle, const char *name);
__attribute__((visibility("hidden"))) void *hx_dlvsym_handle(void *handle, const char *name,
							     const char *version);

/* Runs inside the sanitizer runtimes' own initialisation (they look up
 * the functions they intercept with dlsym, which is ours): nothing here
 * may be instrumented, the runtime is not set up yet. */
#define HX_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

HX_NO_SANITIZE void hx_dl_bootstrap(void)
{
	dlsym_fn *p = (dlsym_fn *)hx_libc_dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");

	if (!p)
		p = (dlsym_fn *)hx_libc_dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	if (!p) {
		static const char msg[] = "hipextsem: cannot find glibc's dlsym; aborting\n";
		(void)!write(2, msg, sizeof(msg) - 1);
		abort();
	}
	__atomic_store_n(&hx_real_dlvsym, (dlvsym_fn *)hx_libc_dlvsym, __ATOMIC_RELEASE);
	__atomic_store_n(&hx_real_dlsym, p, __ATOMIC_RELEASE);
}

/* dlsym(handle, name): rdi = handle, rsi = name.  RTLD_DEFAULT is 0 and
 * RTLD_NEXT is -1 in glibc. */
__asm__(".text\n"
	".globl hx_dlsym_new\n.type hx_dlsym_new, @function\n"
	".globl hx_dlsym_old\n.type hx_dlsym_old, @function\n"
	"hx_dlsym_new:\n"
	"hx_dlsym_old:\n"
	"	.cfi_startproc\n"
	"	movq hx_real_dlsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	"	cmpq $-1, %rdi\n"
	"	je 1f\n"
	"	testq %rdi, %rdi\n"
	"	je 1f\n"
	"	jmp hx_dlsym_handle\n"
	"1:	jmp *%rax\n"
	"2:	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call hx_dl_bootstrap\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmp hx_dlsym_new\n"
	"	.cfi_endproc\n"
	".size hx_dlsym_new, .-hx_dlsym_new\n"
	".size hx_dlsym_old, .-hx_dlsym_old\n"
	".symver hx_dlsym_new, dlsym@@GLIBC_2.34\n"
	".symver hx_dlsym_old, dlsym@GLIBC_2.2.5\n");

/* dlvsym(handle, name, version): rdi, rsi, rdx. */
__asm__(".text\n"
	".globl hx_dlvsym_new\n.type hx_dlvsym_new, @function\n"
	"hx_dlvsym_new:\n"
	"	.cfi_startproc\n"
	"	movq hx_real_dlsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	"	movq hx_real_dlvsym(%rip), %rax\n"
	"	cmpq $-1, %rdi\n"
	"	je 1f\n"
	"	testq %rdi, %rdi\n"
	"	je 1f\n"
	"	jmp hx_dlvsym_handle\n"
	"1:	jmp *%rax\n"
	"2:	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call hx_dl_bootstrap\n"
	"	popq %rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmp hx_dlvsym_new\n"
	"	.cfi_endproc\n"
	".size hx_dlvsym_new, .-hx_dlvsym_new\n"
	".symver hx_dlvsym_new, dlvsym@@GLIBC_2.34\n");

static bool from_libamdhip64(const void *p)
{
	Dl_info info;
	const char *base;

	if (!dladdr(p, &info) || !info.dli_fname)
		return false;
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	return strncmp(base, "libamdhip64.so", 14) == 0;
}

static bool caller_is_shim(const void *ra)
{
	static void *self_base;
	Dl_info info;
	void *base = __atomic_load_n(&self_base, __ATOMIC_RELAXED);

	if (!base) {
		if (!dladdr((void *)&hx_dl_bootstrap, &info))
			return false;
		base = info.dli_fbase;
		__atomic_store_n(&self_base, base, __ATOMIC_RELAXED);
	}
	return dladdr(ra, &info) && info.dli_fbase == base;
}

/* Names a runtime may implement without exporting them: the lookup on the
 * runtime's handle then asks the runtime's own hipGetProcAddress. */
static const char *const hidden_names[] = {
	"hipExternalMemoryGetMappedMipmappedArray",
};

static bool hidden_name(const char *name)
{
	for (size_t i = 0; i < sizeof(hidden_names) / sizeof(hidden_names[0]); i++)
		if (strcmp(name, hidden_names[i]) == 0)
			return true;
	return false;
}

/* The handle glibc has just searched (so it is a valid one) is a
 * libamdhip64 file's own handle. */
static bool runtime_handle(void *handle)
{
	struct link_map *lm = NULL;
	const char *base;

	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name)
		return false;
	base = strrchr(lm->l_name, '/');
	base = base ? base + 1 : lm->l_name;
	return strncmp(base, "libamdhip64.so", 14) == 0;
}

/* Set while the runtime's hipGetProcAddress answers for a hidden name: clr's
 * looks the name up with dlsym on its own handle, which comes back here. */
static __thread bool in_hidden_lookup;

/* What the runtime on `handle` hands out for `name` through its own
 * hipGetProcAddress (glibc's dlsym finds it, never the shim's), or NULL.
 * Its answer is taken as it is: the shim invents nothing.  *asked: the
 * runtime was called (which may have left dlerror() changed). */
static void *hidden_lookup(void *handle, const char *name, bool *asked)
{
	__typeof__(hipGetProcAddress) *gpa;
	__typeof__(hipRuntimeGetVersion) *rgv;
	hipDriverProcAddressQueryResult status = HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	int version = 0, hip_version = 600;
	void *fn = NULL;
	hipError_t err;

	if (in_hidden_lookup || !runtime_handle(handle))
		return NULL;
	*asked = true; /* dlinfo and the lookups below reset dlerror() */
	/* Both calls below initialise the runtime (clr: HIP_INIT_API), which
	 * a dlsym must not do: a loader's sweep of every name, in a library
	 * constructor or before the program sets HIP_VISIBLE_DEVICES and the
	 * like, would start the runtime where it does not without the shim.
	 * Asked only once the shim has seen the runtime in use. */
	if (!hx_runtime_started()) {
		hx_dbg("dlsym(%s) on the runtime's handle: not exported, and the runtime is not "
		       "in use yet: not asked (a lookup after the first semaphore call is)", name);
		return NULL;
	}
	*(void **)&gpa = hx_real_dlsym(handle, "hipGetProcAddress");
	if (!gpa)
		return NULL; /* before 6.1: nothing hands it out */
	*(void **)&rgv = hx_real_dlsym(handle, "hipRuntimeGetVersion");
	/* hipVersion as a caller of this runtime would pass it (major * 100 +
	 * minor of HIP_VERSION, major * 10^7 + minor * 10^5 + patch). */
	if (rgv && rgv(&version) == hipSuccess && version > 0)
		hip_version = version / 10000000 * 100 + version / 100000 % 100;
	in_hidden_lookup = true;
	err = gpa(name, &fn, hip_version, 0, &status);
	in_hidden_lookup = false;
	if (err != hipSuccess || status != HIP_GET_PROC_ADDRESS_SUCCESS || !fn)
		return NULL;
	hx_dbg("dlsym(%s) on the runtime's handle: not exported, handing out what its "
	       "hipGetProcAddress gives (%p)", name, fn);
	return fn;
}

static void *substitute(void *handle, void *found, const char *name, const char *version,
			const void *ra)
{
	void *mine;

	if (!name || strncmp(name, "hip", 3) != 0)
		return found;
	if (!found) {
		bool asked = false;
		void *fn;

		if (!hidden_name(name) || caller_is_shim(ra))
			return NULL;
		fn = hidden_lookup(handle, name, &asked);
		if (fn) {
			(void)dlerror(); /* glibc's "undefined symbol" no longer holds */
			return fn;
		}
		/* NULL, with glibc's own dlerror() message for this lookup. */
		if (asked)
			return version ? hx_real_dlvsym(handle, name, version)
				       : hx_real_dlsym(handle, name);
		return NULL;
	}
	mine = hx_intercept_lookup(name, version);
	if (!mine || caller_is_shim(ra) || !from_libamdhip64(found))
		return found;
	hx_dbg("dlsym(%s) on a libamdhip64 handle: handing out the shim's function", name);
	return mine;
}

/* Reached by a jmp from the trampoline: the return address is the
 * application's call site. */
void *hx_dlsym_handle(void *handle, const char *name)
{
	void *ra = __builtin_return_address(0);
	return substitute(handle, hx_real_dlsym(handle, name), name, NULL, ra);
}

void *hx_dlvsym_handle(void *handle, const char *name, const char *version)
{
	void *ra = __builtin_return_address(0);
	return substitute(handle, hx_real_dlvsym(handle, name, version), name, version, ra);
}

#endif
