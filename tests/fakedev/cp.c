/* The fake device's soft command processor: one thread that polls every
 * AQL queue the runtime created and executes its packets in order.
 *
 *  - barrier-AND/OR packets wait for their dependency signals (value 0);
 *  - AMD vendor packets: BARRIER_VALUE, and PM4 indirect buffers made only
 *    of cache operations (ACQUIRE_MEM, NOP) are executed; any other PM4
 *    opcode is fatal;
 *  - kernel dispatches run natively when the kernel is one of the
 *    runtime's own: clr's blit kernels by symbol name (argument layout
 *    parsed from the OpenCL source clr embeds in libamdhip64), ROCr's
 *    internal copy/fill kernels by a checksum of their machine code.
 *    Any other kernel is fatal: an application kernel never "completes".
 *
 * A completed packet decrements its completion signal; a signal with an
 * event mailbox gets its event id written there and its KFD event fired
 * (what the GPU's end-of-pipe interrupt does). */

#include "fakedev.h"

#include <hsa/amd_hsa_kernel_code.h>
#include <hsa/amd_hsa_signal.h>
#include <hsa/hsa.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_QUEUES 1024

struct queue {
	bool used;
	int type;
	uint8_t *ring;
	uint64_t npkts;
	volatile uint64_t *wptr, *rptr;
	uint64_t sdma_start;
};
static struct queue queues[MAX_QUEUES];
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t cp_thread;
static bool cp_started;

/* ------------------------------------------------------------ kernels */

struct param {
	char name[48];
	unsigned off, size;
};

enum kind { K_UNKNOWN, K_OPS_WRITE, K_OPS_WAIT, K_ROCR_COPY_ALIGNED };

struct kinfo {
	uint64_t object;
	char name[96];
	enum kind kind;
	unsigned nparams;
	struct param params[16];
};
static struct kinfo *kinfos;
static size_t nkinfos, capkinfos;
static pthread_mutex_t k_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned type_size(const char *t, bool ptr)
{
	static const struct { const char *n; unsigned s; } ts[] = {
		{ "uchar", 1 }, { "char", 1 }, { "ushort", 2 }, { "short", 2 }, { "uint", 4 },
		{ "int", 4 }, { "float", 4 }, { "ulong", 8 }, { "long", 8 }, { "ushort4", 8 },
		{ "ulong2", 16 }, { "int4", 16 }, { "uint4", 16 }, { "float4", 16 }, { "ulong4", 32 },
	};
	if (ptr || strstr(t, "image"))
		return 8;
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
		if (strcmp(t, ts[i].n) == 0)
			return ts[i].s;
	return 0;
}

struct scan { const char *needle; const char *found; };

static int scan_obj(struct dl_phdr_info *info, size_t sz, void *data)
{
	struct scan *s = data;
	(void)sz;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libamdhip64"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
			continue;
		const char *base = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *f = memmem(base, ph->p_filesz, s->needle, strlen(s->needle));
		if (f) {
			s->found = f;
			return 1;
		}
	}
	return 0;
}

/* The kernel's parameter list from the OpenCL C source clr carries in
 * libamdhip64 (the source the runtime compiles at start-up), laid out as
 * the OpenCL ABI does: each argument at the next multiple of its size. */
static void parse_params(struct kinfo *k)
{
	char needle[160];
	struct scan s = { needle, NULL };
	snprintf(needle, sizeof(needle), "__kernel void %s(", k->name);
	dl_iterate_phdr(scan_obj, &s);
	if (!s.found)
		fd_die("no OpenCL source for %s in libamdhip64", k->name);
	const char *p = s.found + strlen(needle);
	const char *end = strchr(p, ')');
	unsigned off = 0;
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		if (!comma)
			comma = end;
		char decl[160], type[64] = "", name[48] = "";
		size_t l = (size_t)(comma - p);
		if (l >= sizeof(decl))
			fd_die("%s: parameter too long", k->name);
		memcpy(decl, p, l);
		decl[l] = 0;
		bool ptr = strchr(decl, '*') != NULL;
		for (char *c = decl; *c; c++)
			if (*c == '*')
				*c = ' ';
		char *save = NULL;
		for (char *tok = strtok_r(decl, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
			if (!strcmp(tok, "__global") || !strcmp(tok, "__constant") || !strcmp(tok, "const") ||
			    !strcmp(tok, "__restrict") || !strcmp(tok, "__write_only") || !strcmp(tok, "__read_only"))
				continue;
			if (name[0])
				snprintf(type, sizeof(type), "%s", name);
			snprintf(name, sizeof(name), "%s", tok);
		}
		unsigned size = type_size(type, ptr);
		if (!size)
			fd_die("%s: parameter '%s' of type '%s' not understood", k->name, name, type);
		off = (off + size - 1) / size * size;
		if (k->nparams == 16)
			fd_die("%s: too many parameters", k->name);
		struct param *pa = &k->params[k->nparams++];
		snprintf(pa->name, sizeof(pa->name), "%s", name);
		pa->off = off;
		pa->size = size;
		off += size;
		p = comma + 1;
	}
	if (fd_debug >= 2) {
		fprintf(stderr, "fakedev: %s(", k->name);
		for (unsigned i = 0; i < k->nparams; i++)
			fprintf(stderr, "%s%s@%u", i ? ", " : "", k->params[i].name, k->params[i].off);
		fprintf(stderr, ")\n");
	}
}

void fd_kernel_name(uint64_t object, const char *name)
{
	pthread_mutex_lock(&k_lock);
	for (size_t i = 0; i < nkinfos; i++)
		if (kinfos[i].object == object) {
			pthread_mutex_unlock(&k_lock);
			return;
		}
	if (nkinfos == capkinfos) {
		capkinfos = capkinfos ? capkinfos * 2 : 64;
		kinfos = realloc(kinfos, capkinfos * sizeof(*kinfos));
	}
	struct kinfo *k = &kinfos[nkinfos++];
	memset(k, 0, sizeof(*k));
	k->object = object;
	snprintf(k->name, sizeof(k->name), "%s", name);
	pthread_mutex_unlock(&k_lock);
	fd_log(2, "kernel %s at %#llx", name, (unsigned long long)object);
}

static const struct param *param(const struct kinfo *k, const char *name, bool need)
{
	for (unsigned i = 0; i < k->nparams; i++)
		if (strcmp(k->params[i].name, name) == 0)
			return &k->params[i];
	if (need)
		fd_die("%s has no parameter '%s' in this release's layout", k->name, name);
	return NULL;
}

static uint64_t arg(const struct kinfo *k, const uint8_t *ka, const char *name)
{
	const struct param *p = param(k, name, true);
	uint64_t v = 0;
	memcpy(&v, ka + p->off, p->size < 8 ? p->size : 8);
	return v;
}

/* ROCr's own blit kernels (BlitKernel: CopyAligned; its CopyMisaligned
 * and Fill have not been met and abort)
 * carry no symbol: recognised by FNV-1a over their machine code up to the
 * first s_endpgm, per release and target (the table in rocr_kernels.h,
 * filled from observed runs and cross-checked against the kernels' SGPR
 * and VGPR counts). */
struct rocr_kernel { uint64_t hash; enum kind kind; const char *what; };
#include "rocr_kernels.h"

static uint64_t code_hash(const amd_kernel_code_t *akc, size_t *len)
{
	const uint32_t *code = (const uint32_t *)((const uint8_t *)akc + akc->kernel_code_entry_byte_offset);
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;
	for (i = 0; i < 4096; i++) {
		uint32_t w = code[i];
		for (int b = 0; b < 4; b++) {
			h ^= (w >> (8 * b)) & 0xff;
			h *= 0x100000001b3ULL;
		}
		if (w == 0xbf810000u) /* s_endpgm */
			break;
	}
	*len = (i + 1) * 4;
	return h;
}

static struct kinfo *lookup(uint64_t object)
{
	struct kinfo *k = NULL;
	pthread_mutex_lock(&k_lock);
	for (size_t i = 0; i < nkinfos; i++)
		if (kinfos[i].object == object)
			k = &kinfos[i];
	pthread_mutex_unlock(&k_lock);
	if (k && k->kind == K_UNKNOWN && k->nparams == 0) {
		if (!strcmp(k->name, "__amd_rocclr_streamOpsWrite"))
			k->kind = K_OPS_WRITE;
		else if (!strcmp(k->name, "__amd_rocclr_streamOpsWait"))
			k->kind = K_OPS_WAIT;
		else
			fd_die("dispatch of kernel %s: the fake does not execute it", k->name);
		parse_params(k);
	}
	if (k)
		return k;

	/* No symbol: one of ROCr's internal kernels, or fatal. */
	const amd_kernel_code_t *akc = fd_xlate(object);
	size_t len;
	uint64_t h = code_hash(akc, &len);
	for (size_t i = 0; i < sizeof(rocr_kernels) / sizeof(rocr_kernels[0]); i++)
		if (rocr_kernels[i].hash == h) {
			fd_kernel_name(object, rocr_kernels[i].what);
			pthread_mutex_lock(&k_lock);
			for (size_t j = 0; j < nkinfos; j++)
				if (kinfos[j].object == object) {
					kinfos[j].kind = rocr_kernels[i].kind;
					k = &kinfos[j];
				}
			pthread_mutex_unlock(&k_lock);
			return k;
		}
	uint32_t r1;
	memcpy(&r1, &akc->compute_pgm_rsrc1, 4);
	fd_die("dispatch of an unknown kernel at %#llx: code hash %#llx (%zu bytes), "
	       "rsrc1 %#x (granulated VGPRs %u, SGPRs %u), kernarg size %llu",
	       (unsigned long long)object, (unsigned long long)h, len, r1, r1 & 0x3f, (r1 >> 6) & 0xf,
	       (unsigned long long)akc->kernarg_segment_byte_size);
}

/* Returns false while the kernel cannot finish yet (a stream wait). */
static bool run_kernel(const hsa_kernel_dispatch_packet_t *pkt)
{
	struct kinfo *k = lookup(pkt->kernel_object);
	const uint8_t *ka = fd_xlate((uint64_t)(uintptr_t)pkt->kernarg_address);
	switch (k->kind) {
	case K_OPS_WRITE: {
		/* clr: ptrInt for a 32-bit write, ptrUlong for a 64-bit one. */
		uint64_t pi = arg(k, ka, "ptrInt"), pl = arg(k, ka, "ptrUlong"), v = arg(k, ka, "value");
		if (pi)
			__atomic_store_n((uint32_t *)fd_xlate(pi), (uint32_t)v, __ATOMIC_SEQ_CST);
		else if (pl)
			__atomic_store_n((uint64_t *)fd_xlate(pl), v, __ATOMIC_SEQ_CST);
		else
			fd_die("streamOpsWrite with no pointer");
		return true;
	}
	case K_OPS_WAIT: {
		/* The comparisons of ROCm-Device-Libs' __amd_streamOpsWait:
		 * 0 GEQ (unsigned), 1 EQ, 2 AND (any masked bit of value set),
		 * 3 NOR (not all masked bits set in (x | value)). */
		uint64_t pi = arg(k, ka, "ptrInt"), pl = arg(k, ka, "ptrUlong");
		uint64_t v = arg(k, ka, "value"), op = arg(k, ka, "flags"), m = arg(k, ka, "mask"), x;
		if (pi) {
			x = __atomic_load_n((uint32_t *)fd_xlate(pi), __ATOMIC_SEQ_CST);
			v = (uint32_t)v;
			m = (uint32_t)m;
		} else if (pl) {
			x = __atomic_load_n((uint64_t *)fd_xlate(pl), __ATOMIC_SEQ_CST);
		} else {
			fd_die("streamOpsWait with no pointer");
		}
		switch (op) {
		case 0: return (x & m) >= v;
		case 1: return (x & m) == v;
		case 2: return ((x & m) & v) != 0;
		case 3: return ((x | v) & m) != m;
		default: fd_die("streamOpsWait compare op %llu", (unsigned long long)op);
		}
	}
	case K_ROCR_COPY_ALIGNED: {
		/* ROCr BlitKernel KernelArgs.copy_aligned: phase 1 starts the
		 * range, phase 4 ends it (phases only split the work). */
		const uint64_t *a = (const uint64_t *)ka;
		uint64_t src = a[0], dst = a[1], end = a[8];
		/* phases in order, source and destination ranges alike */
		for (int i = 0; i < 8; i += 2)
			if (a[i + 2] < a[i] || a[i + 3] - a[i + 1] != a[i + 2] - a[i])
				fd_die("%s: arguments are not a CopyAligned layout", k->name);
		memmove(fd_xlate(dst), fd_xlate(src), end - src);
		return true;
	}
	default:
		fd_die("kernel %s: no handler", k->name);
	}
}

/* ------------------------------------------------------------- packets */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int64_t sig_value(hsa_signal_t s)
{
	amd_signal_t *a = fd_xlate(s.handle);
	return __atomic_load_n(&a->value, __ATOMIC_SEQ_CST);
}

static void complete(hsa_signal_t s, uint64_t start)
{
	if (!s.handle)
		return;
	amd_signal_t *a = fd_xlate(s.handle);
	a->start_ts = start;
	a->end_ts = now_ns();
	__atomic_fetch_sub(&a->value, 1, __ATOMIC_SEQ_CST);
	/* The end-of-pipe event: the event id is written to the mailbox (its
	 * event's slot in the signal page), then the interrupt carries the
	 * same id.  Each field is read once.  They are read after the
	 * decrement has published the completion, so a runtime that frees the
	 * signal as soon as it sees the value may already have reused it:
	 * ROCr re-initialises a pooled signal's amd_signal_t to zeros
	 * (SharedSignal's constructor, signal.h) before giving it a new event,
	 * so a mailbox with event id 0 can be read here.  KFD copes with any
	 * such id (fd_event_interrupt); the mailbox must still be a slot. */
	uint64_t mailbox = __atomic_load_n(&a->event_mailbox_ptr, __ATOMIC_SEQ_CST);
	if (!mailbox)
		return;
	uint32_t id = __atomic_load_n(&a->event_id, __ATOMIC_SEQ_CST);
	uint64_t *slot = fd_event_slot(mailbox);
	if (!slot)
		fd_die("completion signal %#llx: its mailbox %#llx is not a slot of the KFD signal page",
		       (unsigned long long)s.handle, (unsigned long long)mailbox);
	if (id == 0)
		fd_log(1, "completion signal %#llx (%s) has a mailbox and event id 0",
		       (unsigned long long)s.handle, fd_mem_state(s.handle));
	__atomic_store_n(slot, id, __ATOMIC_SEQ_CST);
	fd_event_interrupt(id);
}

/* AMD vendor packet formats (hsa_ext_amd.h / ROCr amd_aql_queue.cpp). */
#define AMD_FORMAT_PM4_IB 1
#define AMD_FORMAT_BARRIER_VALUE 2

static void run_pm4(const uint32_t *ib, uint32_t ndw)
{
	for (uint32_t i = 0; i < ndw;) {
		uint32_t h = ib[i];
		unsigned type = h >> 30, op = (h >> 8) & 0xff, count = (h >> 16) & 0x3fff;
		if (type == 2) { /* type-2 filler */
			i++;
			continue;
		}
		if (type != 3)
			fd_die("PM4 type-%u packet in an indirect buffer", type);
		switch (op) {
		case 0x10: /* NOP */
		case 0x58: /* ACQUIRE_MEM: cache invalidate, nothing to do here */
		case 0x80: /* RELEASE_MEM's cache part is meaningless here too */
			break;
		default:
			fd_die("PM4 opcode %#x is not emulated", op);
		}
		i += count + 2;
	}
}

/* Returns true when the packet is done. */
static bool run_packet(uint8_t *pkt, uint16_t header, uint64_t start)
{
	unsigned type = header & 0xff;
	switch (type) {
	case HSA_PACKET_TYPE_KERNEL_DISPATCH: {
		hsa_kernel_dispatch_packet_t *p = (void *)pkt;
		if (!run_kernel(p))
			return false;
		complete(p->completion_signal, start);
		return true;
	}
	case HSA_PACKET_TYPE_BARRIER_AND:
	case HSA_PACKET_TYPE_BARRIER_OR: {
		hsa_barrier_and_packet_t *p = (void *)pkt;
		bool any = false, all = true, none = true;
		for (int i = 0; i < 5; i++) {
			if (!p->dep_signal[i].handle)
				continue;
			none = false;
			bool sat = sig_value(p->dep_signal[i]) == 0;
			any |= sat;
			all &= sat;
		}
		if (type == HSA_PACKET_TYPE_BARRIER_AND ? !all : !(any || none))
			return false;
		complete(p->completion_signal, start);
		return true;
	}
	case HSA_PACKET_TYPE_VENDOR_SPECIFIC: {
		uint8_t fmt = pkt[2];
		if (fmt == AMD_FORMAT_PM4_IB) {
			const uint32_t *d = (const uint32_t *)pkt;
			/* d[1..4]: an INDIRECT_BUFFER command (addr lo, hi, size) */
			if (((d[1] >> 8) & 0xff) != 0x3f)
				fd_die("PM4 vendor packet without INDIRECT_BUFFER (%#x)", d[1]);
			uint64_t ib = ((uint64_t)(d[3] & 0xffff) << 32) | (d[2] & ~3u);
			run_pm4(fd_xlate(ib), d[4] & 0xfffff);
			hsa_signal_t s = { *(const uint64_t *)(pkt + 56) };
			complete(s, start);
			return true;
		}
		if (fmt == AMD_FORMAT_BARRIER_VALUE) {
			/* header, format, reserved, u32; signal @8, value @16,
			 * mask @24, cond @32; completion signal @56 */
			hsa_signal_t s = { *(const uint64_t *)(pkt + 8) };
			int64_t want = *(const int64_t *)(pkt + 16), mask = *(const int64_t *)(pkt + 24);
			uint32_t cond = *(const uint32_t *)(pkt + 32);
			int64_t v = sig_value(s) & mask;
			bool ok;
			switch (cond) {
			case HSA_SIGNAL_CONDITION_EQ: ok = v == want; break;
			case HSA_SIGNAL_CONDITION_NE: ok = v != want; break;
			case HSA_SIGNAL_CONDITION_LT: ok = v < want; break;
			case HSA_SIGNAL_CONDITION_GTE: ok = v >= want; break;
			default: fd_die("BARRIER_VALUE condition %u", cond);
			}
			if (!ok)
				return false;
			hsa_signal_t c = { *(const uint64_t *)(pkt + 56) };
			complete(c, start);
			return true;
		}
		fd_die("AMD vendor packet format %u is not emulated", fmt);
	}
	default:
		fd_die("AQL packet type %u is not emulated", type);
	}
}

/* Runs what is ready on queue Q; returns whether anything ran. */
static bool run_queue(struct queue *q)
{
	bool progress = false;
	if (q->type != 2) { /* SDMA queues: run with HSA_ENABLE_SDMA=0 */
		if (*q->wptr != q->sdma_start)
			fd_die("work submitted to an SDMA queue: the fake has no SDMA engine (set HSA_ENABLE_SDMA=0)");
		return false;
	}
	for (;;) {
		uint64_t rd = *q->rptr, wr = __atomic_load_n(q->wptr, __ATOMIC_ACQUIRE);
		if (rd >= wr)
			return progress;
		uint8_t *pkt = q->ring + (rd % q->npkts) * 64;
		uint16_t header = __atomic_load_n((uint16_t *)pkt, __ATOMIC_ACQUIRE);
		if ((header & 0xff) == HSA_PACKET_TYPE_INVALID)
			return progress; /* reserved, not yet written */
		if (!run_packet(pkt, header, now_ns()))
			return progress;
		__atomic_store_n((uint16_t *)pkt, (uint16_t)HSA_PACKET_TYPE_INVALID, __ATOMIC_RELEASE);
		__atomic_store_n(q->rptr, rd + 1, __ATOMIC_RELEASE);
		progress = true;
	}
}

static void *cp_main(void *arg)
{
	unsigned idle = 0;
	(void)arg;
	for (;;) {
		bool progress = false;
		pthread_mutex_lock(&q_lock);
		for (int i = 0; i < MAX_QUEUES; i++)
			if (queues[i].used)
				progress |= run_queue(&queues[i]);
		pthread_mutex_unlock(&q_lock);
		if (progress) {
			idle = 0;
			continue;
		}
		/* Idle: back off from 20 us to 1 ms (doorbells are not watched). */
		idle = idle < 50 ? idle + 1 : idle;
		struct timespec ts = { 0, 20000L * idle };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

void fd_cp_add_queue(uint32_t id, int type, void *ring, uint32_t ring_size,
		     volatile uint64_t *wptr, volatile uint64_t *rptr)
{
	if (type != 2 && type != 1 && type != 3)
		fd_die("queue type %d is not emulated", type);
	pthread_mutex_lock(&q_lock);
	queues[id] = (struct queue){ .used = true, .type = type, .ring = ring,
				     .npkts = ring_size / 64, .wptr = wptr, .rptr = rptr,
				     .sdma_start = type == 2 ? 0 : *wptr };
	if (!cp_started) {
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&cp_thread, NULL, cp_main, NULL) != 0)
			fd_die("cannot start the soft CP thread");
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_detach(cp_thread);
		cp_started = true;
	}
	pthread_mutex_unlock(&q_lock);
}

void fd_cp_remove_queue(uint32_t id)
{
	pthread_mutex_lock(&q_lock);
	if (id < MAX_QUEUES)
		queues[id].used = false;
	pthread_mutex_unlock(&q_lock);
}
