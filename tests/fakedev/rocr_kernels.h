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
	/* ROCr 6.1.2 (Debian's HIP 5.7.1 userland), gfx900: same registers. */
	{ 0x0f0b93f302c26e87ULL, K_ROCR_COPY_ALIGNED, "ROCr CopyAligned (6.1.2)" },
};
