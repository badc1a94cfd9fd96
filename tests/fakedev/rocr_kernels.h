/* ROCr's internal blit kernels (BlitKernel in ROCr's amd_blit_kernel.cpp)
 * by the checksum of their code (cp.c code_hash), per release and target.
 * Each was observed at a dispatch and cross-checked: its register counts
 * (compute_pgm_rsrc1) and its kernel arguments, which must form one
 * consistent KernelArgs.copy_aligned (the handler checks that at every
 * dispatch).  A kernel missing here aborts the run with its checksum. */
static const struct rocr_kernel rocr_kernels[] = {
	/* ROCr 5.2.3 (Debian 12), gfx900: 12 VGPRs, 32 SGPRs; dispatched by
	 * the code-object loader's copy at start-up. */
	{ 0xc9ed7ddde0f282c7ULL, K_ROCR_COPY_ALIGNED, "ROCr CopyAligned (5.2.3)" },
	/* ROCr 6.1.2 (Debian's HIP 5.7.1 userland), gfx900: same registers.
	 * ROCr 6.4 and 7.2 (Debian's 6.4.3 and 7.2.4) dispatched no internal
	 * kernel in these tests: their loader writes device segments with the
	 * CPU. */
	{ 0x0f0b93f302c26e87ULL, K_ROCR_COPY_ALIGNED, "ROCr CopyAligned (6.1.2)" },
	/* gfx1030 (same rsrc1: granulated VGPRs 2, SGPRs 3; 500 bytes of code) */
	{ 0x100ef5cb91f12135ULL, K_ROCR_COPY_ALIGNED, "ROCr CopyAligned (5.2.3, gfx10)" },
	{ 0x7d45918dcab912bfULL, K_ROCR_COPY_ALIGNED, "ROCr CopyAligned (6.1.2, gfx10)" },
};
