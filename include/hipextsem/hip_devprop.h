/* SPDX-License-Identifier: MIT */
/*
 * Device property layouts, hx_-prefixed like <hipextsem/hip_abi.h>.
 *
 * hx_device_prop_v5 is hipDeviceProp_t of HIP 5.x (792 bytes); the 6.x
 * runtimes keep exporting it as hipDeviceProp_tR0000 behind the unsuffixed
 * hipGetDeviceProperties symbol.  hx_device_prop_r0600 is the 6.x
 * hipDeviceProp_tR0600 (1472 bytes) filled by hipGetDevicePropertiesR0600;
 * the shim patches timelineSemaphoreInteropSupported (offset 740) in it.
 * tests/abi checks the 5.x layout against Debian's real header.
 */
#ifndef HIPEXTSEM_HIP_DEVPROP_H
#define HIPEXTSEM_HIP_DEVPROP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* hipDeviceArch_t is 17 one-bit fields in an unsigned int. */
typedef uint32_t hx_device_arch;

struct hx_device_prop_v5 {
	char name[256];
	size_t totalGlobalMem;
	size_t sharedMemPerBlock;
	int regsPerBlock;
	int warpSize;
	int maxThreadsPerBlock;
	int maxThreadsDim[3];
	int maxGridSize[3];
	int clockRate;
	int memoryClockRate;
	int memoryBusWidth;
	size_t totalConstMem;
	int major;
	int minor;
	int multiProcessorCount;
	int l2CacheSize;
	int maxThreadsPerMultiProcessor;
	int computeMode;
	int clockInstructionRate;
	hx_device_arch arch;
	int concurrentKernels;
	int pciDomainID;
	int pciBusID;
	int pciDeviceID;
	size_t maxSharedMemoryPerMultiProcessor;
	int isMultiGpuBoard;
	int canMapHostMemory;
	int gcnArch;
	char gcnArchName[256];
	int integrated;
	int cooperativeLaunch;
	int cooperativeMultiDeviceLaunch;
	int maxTexture1DLinear;
	int maxTexture1D;
	int maxTexture2D[2];
	int maxTexture3D[3];
	unsigned int *hdpMemFlushCntl;
	unsigned int *hdpRegFlushCntl;
	size_t memPitch;
	size_t textureAlignment;
	size_t texturePitchAlignment;
	int kernelExecTimeoutEnabled;
	int ECCEnabled;
	int tccDriver;
	int cooperativeMultiDeviceUnmatchedFunc;
	int cooperativeMultiDeviceUnmatchedGridDim;
	int cooperativeMultiDeviceUnmatchedBlockDim;
	int cooperativeMultiDeviceUnmatchedSharedMem;
	int isLargeBar;
	int asicRevision;
	int managedMemory;
	int directManagedMemAccessFromHost;
	int concurrentManagedAccess;
	int pageableMemoryAccess;
	int pageableMemoryAccessUsesHostPageTables;
};

struct hx_device_prop_r0600 {
	char name[256];
	char uuid[16];
	char luid[8];
	unsigned int luidDeviceNodeMask;
	size_t totalGlobalMem;
	size_t sharedMemPerBlock;
	int regsPerBlock;
	int warpSize;
	size_t memPitch;
	int maxThreadsPerBlock;
	int maxThreadsDim[3];
	int maxGridSize[3];
	int clockRate;
	size_t totalConstMem;
	int major;
	int minor;
	size_t textureAlignment;
	size_t texturePitchAlignment;
	int deviceOverlap;
	int multiProcessorCount;
	int kernelExecTimeoutEnabled;
	int integrated;
	int canMapHostMemory;
	int computeMode;
	int maxTexture1D;
	int maxTexture1DMipmap;
	int maxTexture1DLinear;
	int maxTexture2D[2];
	int maxTexture2DMipmap[2];
	int maxTexture2DLinear[3];
	int maxTexture2DGather[2];
	int maxTexture3D[3];
	int maxTexture3DAlt[3];
	int maxTextureCubemap;
	int maxTexture1DLayered[2];
	int maxTexture2DLayered[3];
	int maxTextureCubemapLayered[2];
	int maxSurface1D;
	int maxSurface2D[2];
	int maxSurface3D[3];
	int maxSurface1DLayered[2];
	int maxSurface2DLayered[3];
	int maxSurfaceCubemap;
	int maxSurfaceCubemapLayered[2];
	size_t surfaceAlignment;
	int concurrentKernels;
	int ECCEnabled;
	int pciBusID;
	int pciDeviceID;
	int pciDomainID;
	int tccDriver;
	int asyncEngineCount;
	int unifiedAddressing;
	int memoryClockRate;
	int memoryBusWidth;
	int l2CacheSize;
	int persistingL2CacheMaxSize;
	int maxThreadsPerMultiProcessor;
	int streamPrioritiesSupported;
	int globalL1CacheSupported;
	int localL1CacheSupported;
	size_t sharedMemPerMultiprocessor;
	int regsPerMultiprocessor;
	int managedMemory;
	int isMultiGpuBoard;
	int multiGpuBoardGroupID;
	int hostNativeAtomicSupported;
	int singleToDoublePrecisionPerfRatio;
	int pageableMemoryAccess;
	int concurrentManagedAccess;
	int computePreemptionSupported;
	int canUseHostPointerForRegisteredMem;
	int cooperativeLaunch;
	int cooperativeMultiDeviceLaunch;
	size_t sharedMemPerBlockOptin;
	int pageableMemoryAccessUsesHostPageTables;
	int directManagedMemAccessFromHost;
	int maxBlocksPerMultiProcessor;
	int accessPolicyMaxWindowSize;
	size_t reservedSharedMemPerBlock;
	int hostRegisterSupported;
	int sparseHipArraySupported;
	int hostRegisterReadOnlySupported;
	int timelineSemaphoreInteropSupported;
	int memoryPoolsSupported;
	int gpuDirectRDMASupported;
	unsigned int gpuDirectRDMAFlushWritesOptions;
	int gpuDirectRDMAWritesOrdering;
	unsigned int memoryPoolSupportedHandleTypes;
	int deferredMappingHipArraySupported;
	int ipcEventSupported;
	int clusterLaunch;
	int unifiedFunctionPointers;
	int reserved[63];
	int hipReserved[32];
	char gcnArchName[256];
	size_t maxSharedMemoryPerMultiProcessor;
	int clockInstructionRate;
	hx_device_arch arch;
	unsigned int *hdpMemFlushCntl;
	unsigned int *hdpRegFlushCntl;
	int cooperativeMultiDeviceUnmatchedFunc;
	int cooperativeMultiDeviceUnmatchedGridDim;
	int cooperativeMultiDeviceUnmatchedBlockDim;
	int cooperativeMultiDeviceUnmatchedSharedMem;
	int isLargeBar;
	int asicRevision;
};

/* hipDeviceAttribute_t values used with these (same in 5.2 and 6.x). */
#define HX_DEVATTR_PCI_BUS_ID 67
#define HX_DEVATTR_PCI_DEVICE_ID 68
#define HX_DEVATTR_PCI_DOMAIN_ID 69

_Static_assert(sizeof(struct hx_device_prop_v5) == 792, "5.x hipDeviceProp_t is 792 bytes");
_Static_assert(offsetof(struct hx_device_prop_v5, pciDomainID) == 364, "5.x pciDomainID");
_Static_assert(sizeof(struct hx_device_prop_r0600) == 1472, "hipDeviceProp_tR0600 is 1472 bytes");
_Static_assert(offsetof(struct hx_device_prop_r0600, pciBusID) == 584, "R0600 pciBusID@584");
_Static_assert(offsetof(struct hx_device_prop_r0600, timelineSemaphoreInteropSupported) == 740,
	       "R0600 timelineSemaphoreInteropSupported@740");
_Static_assert(offsetof(struct hx_device_prop_r0600, reserved) == 780, "R0600 reserved@780");
_Static_assert(offsetof(struct hx_device_prop_r0600, gcnArchName) == 1160, "R0600 gcnArchName@1160");
_Static_assert(offsetof(struct hx_device_prop_r0600, asicRevision) == 1468, "R0600 asicRevision@1468");

#ifdef __cplusplus
}
#endif

#endif /* HIPEXTSEM_HIP_DEVPROP_H */
