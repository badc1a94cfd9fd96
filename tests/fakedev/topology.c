/* The fake device's KFD sysfs topology: node 0 is this machine's CPU,
 * node 1 the fake GPU.  Property names are those libhsakmt's topology.c
 * parses ("name value" lines); values are those of a real board of the
 * chosen target where they matter (ids, wavefront size, SIMDs per CU). */

#include "fakedev.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct fd_target targets[] = {
	/* Vega 10 (GCN 5): AMDGPU_FAMILY_AI 141 */
	{ "gfx900", 90000, 0x6860, 141, 4, 16, 4, 64, 10 },
	/* Navi 21 (RDNA 2): AMDGPU_FAMILY_NV 143; wave32, 2 SIMDs per CU */
	{ "gfx1030", 100300, 0x73bf, 143, 2, 10, 8, 32, 16 },
};
const struct fd_target *fd_tgt = &targets[0];
unsigned fd_gpu_id = 41771, fd_render_minor = 200, fd_kfd_minor = 14;
/* PCI 0000:83:00.0, a bus the test VM does not have: the shim must not
 * match the HIP device to any real render node. */
unsigned fd_location_id = 0x8300;

static int put(const char *dir, const char *rel, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	FILE *f;
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	/* make the parents */
	for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f)
		return -1;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	return fclose(f);
}

int fd_topology_write(const char *d)
{
	const char *t = getenv("FAKEDEV_TARGET");
	const struct fd_target *g = &targets[0];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int rc = 0;

	if (t && *t) {
		g = NULL;
		for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
			if (strcmp(targets[i].name, t) == 0)
				g = &targets[i];
		if (!g)
			fd_die("FAKEDEV_TARGET=%s: known targets are gfx900 and gfx1030", t);
	}
	fd_tgt = g;
	unsigned cus = g->array_count * g->cu_per_simd_array;

	rc |= put(d, "topology/generation_id", "1\n");
	rc |= put(d, "topology/system_properties", "platform_oem 0\nplatform_id 0\nplatform_rev 0\n");

	/* node 0: the CPU */
	rc |= put(d, "topology/nodes/0/gpu_id", "0\n");
	rc |= put(d, "topology/nodes/0/name", "\n");
	rc |= put(d, "topology/nodes/0/properties",
		  "cpu_cores_count %ld\nsimd_count 0\nmem_banks_count 1\ncaches_count 0\n"
		  "io_links_count 1\np2p_links_count 0\ncpu_core_id_base 0\nsimd_id_base 0\n"
		  "max_waves_per_simd 0\nlds_size_in_kb 0\ngds_size_in_kb 0\nnum_gws 0\n"
		  "wave_front_size 0\narray_count 0\nsimd_arrays_per_engine 0\ncu_per_simd_array 0\n"
		  "simd_per_cu 0\nmax_slots_scratch_cu 0\ngfx_target_version 0\nvendor_id 0\n"
		  "device_id 0\nlocation_id 0\ndomain 0\ndrm_render_minor 0\nhive_id 0\n"
		  "num_sdma_engines 0\nnum_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 0\n"
		  "num_cp_queues 0\nmax_engine_clk_ccompute 2000\nlocal_mem_size 0\nfw_version 0\n"
		  "capability 0\ndebug_prop 0\nsdma_fw_version 0\nunique_id 0\nnum_xcc 0\n",
		  ncpu > 0 ? ncpu : 1);
	rc |= put(d, "topology/nodes/0/mem_banks/0/properties",
		  "heap_type 0\nsize_in_bytes 17179869184\nflags 0\nwidth 64\nmem_clk_max 2400\n");
	rc |= put(d, "topology/nodes/0/io_links/0/properties",
		  "type 2\nversion_major 0\nversion_minor 0\nnode_from 0\nnode_to 1\nweight 20\n"
		  "min_latency 0\nmax_latency 0\nmin_bandwidth 0\nmax_bandwidth 0\n"
		  "recommended_transfer_size 0\nflags 1\n");

	/* node 0's CPUs: one cache each, its own (fakedev.c
	 * redirect_cpu_cache; the files libhsakmt's get_cpu_cache_info
	 * reads), for the CPUs online (libhsakmt sizes its table by them).
	 * shared_cpu_map as the kernel prints it: 32-bit hex groups, highest
	 * first, joined by commas. */
	for (long c = 0; c < (ncpu > 0 ? ncpu : 1); c++) {
		char rel[128], map[256];
		int n = snprintf(map, sizeof(map), "%lx", 1UL << (c % 32));

		for (long grp = c / 32; grp > 0 && n < (int)sizeof(map) - 10; grp--)
			n += snprintf(map + n, sizeof(map) - (size_t)n, ",00000000");
#define CACHE_FILE(name, ...)                                                  \
	(snprintf(rel, sizeof(rel), "cpucache/cpu%ld/cache/index0/" name, c),  \
	 put(d, rel, __VA_ARGS__))
		rc |= CACHE_FILE("level", "1\n");
		rc |= CACHE_FILE("type", "Data\n");
		rc |= CACHE_FILE("size", "32K\n");
		rc |= CACHE_FILE("coherency_line_size", "64\n");
		rc |= CACHE_FILE("ways_of_associativity", "8\n");
		rc |= CACHE_FILE("physical_line_partition", "1\n");
		rc |= CACHE_FILE("shared_cpu_list", "%ld\n", c);
		rc |= CACHE_FILE("shared_cpu_map", "%s\n", map);
#undef CACHE_FILE
	}

	/* node 1: the fake GPU.  capability: doorbell type 2 (SOC15) and
	 * the AQL ring double map, as a gfx9/gfx10 board reports. */
	rc |= put(d, "topology/nodes/1/gpu_id", "%u\n", fd_gpu_id);
	rc |= put(d, "topology/nodes/1/name", "%s\n", g->name);
	rc |= put(d, "topology/nodes/1/properties",
		  "cpu_cores_count 0\nsimd_count %u\nmem_banks_count 1\ncaches_count 2\n"
		  "io_links_count 1\np2p_links_count 0\ncpu_core_id_base 0\nsimd_id_base 2147487744\n"
		  "max_waves_per_simd %u\nlds_size_in_kb 64\ngds_size_in_kb 0\nnum_gws 0\n"
		  "wave_front_size %u\narray_count %u\nsimd_arrays_per_engine 1\ncu_per_simd_array %u\n"
		  "simd_per_cu %u\nmax_slots_scratch_cu 32\ngfx_target_version %u\nvendor_id 4098\n"
		  "device_id %u\nlocation_id %u\ndomain 0\ndrm_render_minor %u\nhive_id 0\n"
		  "num_sdma_engines 2\nnum_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 2\n"
		  "num_cp_queues 24\nmax_engine_clk_fcompute 1500\nlocal_mem_size 8589934592\n"
		  "fw_version 444\ncapability 25216\ndebug_prop 0\nsdma_fw_version 433\n"
		  "unique_id 0\nnum_xcc 1\nmax_engine_clk_ccompute 2000\n",
		  cus * g->simd_per_cu, g->max_waves_per_simd, g->wave_front_size, g->array_count,
		  g->cu_per_simd_array, g->simd_per_cu, g->gfx_target_version, g->device_id,
		  fd_location_id, fd_render_minor);
	rc |= put(d, "topology/nodes/1/mem_banks/0/properties",
		  "heap_type 2\nsize_in_bytes 8589934592\nflags 0\nwidth 2048\nmem_clk_max 945\n");
	/* ROCr asserts on a GPU without caches (type: data | HSA CU). */
	rc |= put(d, "topology/nodes/1/caches/0/properties",
		  "processor_id_low 2147487744\nlevel 1\nsize 16\ncache_line_size 64\n"
		  "cache_lines_per_tag 1\nassociation 4\nlatency 1\ntype 9\nsibling_map 1\n");
	rc |= put(d, "topology/nodes/1/caches/1/properties",
		  "processor_id_low 2147487744\nlevel 2\nsize 4096\ncache_line_size 128\n"
		  "cache_lines_per_tag 1\nassociation 16\nlatency 1\ntype 9\nsibling_map 1\n");
	rc |= put(d, "topology/nodes/1/io_links/0/properties",
		  "type 2\nversion_major 0\nversion_minor 0\nnode_from 1\nnode_to 0\nweight 20\n"
		  "min_latency 0\nmax_latency 0\nmin_bandwidth 0\nmax_bandwidth 0\n"
		  "recommended_transfer_size 0\nflags 1\n");
	return rc ? -1 : 0;
}
