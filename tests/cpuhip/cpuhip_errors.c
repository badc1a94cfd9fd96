/* SPDX-License-Identifier: MIT */
/* Error names and descriptions.  Unknown codes answer like clr does:
 * "hipErrorUnknown" / "unknown error". */
#include <stddef.h>

#include "cpuhip_internal.h"

struct error_desc {
	int code;
	const char *name;
	const char *text;
};

static const struct error_desc errors[] = {
	{0, "hipSuccess", "no error"},
	{1, "hipErrorInvalidValue", "invalid argument"},
	{2, "hipErrorOutOfMemory", "out of memory"},
	{3, "hipErrorNotInitialized", "initialization error"},
	{4, "hipErrorDeinitialized", "driver shutting down"},
	{5, "hipErrorProfilerDisabled", "profiler disabled"},
	{6, "hipErrorProfilerNotInitialized", "profiler not initialized"},
	{7, "hipErrorProfilerAlreadyStarted", "profiler already started"},
	{8, "hipErrorProfilerAlreadyStopped", "profiler already stopped"},
	{9, "hipErrorInvalidConfiguration", "invalid configuration argument"},
	{12, "hipErrorInvalidPitchValue", "invalid pitch argument"},
	{13, "hipErrorInvalidSymbol", "invalid device symbol"},
	{17, "hipErrorInvalidDevicePointer", "invalid device pointer"},
	{21, "hipErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
	{35, "hipErrorInsufficientDriver", "driver version is insufficient for runtime version"},
	{52, "hipErrorMissingConfiguration", "missing configuration"},
	{53, "hipErrorPriorLaunchFailure", "unspecified launch failure in prior launch"},
	{98, "hipErrorInvalidDeviceFunction", "invalid device function"},
	{100, "hipErrorNoDevice", "no ROCm-capable device is detected"},
	{101, "hipErrorInvalidDevice", "invalid device ordinal"},
	{200, "hipErrorInvalidImage", "device kernel image is invalid"},
	{201, "hipErrorInvalidContext", "invalid device context"},
	{202, "hipErrorContextAlreadyCurrent", "context is already current context"},
	{205, "hipErrorMapFailed", "mapping of buffer object failed"},
	{206, "hipErrorUnmapFailed", "unmapping of buffer object failed"},
	{207, "hipErrorArrayIsMapped", "array is mapped"},
	{208, "hipErrorAlreadyMapped", "resource already mapped"},
	{209, "hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"},
	{210, "hipErrorAlreadyAcquired", "resource already acquired"},
	{211, "hipErrorNotMapped", "resource not mapped"},
	{212, "hipErrorNotMappedAsArray", "resource not mapped as array"},
	{213, "hipErrorNotMappedAsPointer", "resource not mapped as pointer"},
	{214, "hipErrorECCNotCorrectable", "uncorrectable ECC error encountered"},
	{215, "hipErrorUnsupportedLimit", "limit is not supported on this architecture"},
	{216, "hipErrorContextAlreadyInUse", "exclusive-thread device already in use by a different thread"},
	{217, "hipErrorPeerAccessUnsupported", "peer access is not supported between these two devices"},
	{218, "hipErrorInvalidKernelFile", "invalid kernel file"},
	{219, "hipErrorInvalidGraphicsContext", "invalid OpenGL or DirectX context"},
	{300, "hipErrorInvalidSource", "device kernel image is invalid"},
	{301, "hipErrorFileNotFound", "file not found"},
	{302, "hipErrorSharedObjectSymbolNotFound", "shared object symbol not found"},
	{303, "hipErrorSharedObjectInitFailed", "shared object initialization failed"},
	{304, "hipErrorOperatingSystem", "OS call failed or operation not supported on this OS"},
	{400, "hipErrorInvalidHandle", "invalid resource handle"},
	{401, "hipErrorIllegalState", "the operation cannot be performed in the present state"},
	{500, "hipErrorNotFound", "named symbol not found"},
	{600, "hipErrorNotReady", "device not ready"},
	{700, "hipErrorIllegalAddress", "an illegal memory access was encountered"},
	{701, "hipErrorLaunchOutOfResources", "too many resources requested for launch"},
	{702, "hipErrorLaunchTimeOut", "the launch timed out and was terminated"},
	{704, "hipErrorPeerAccessAlreadyEnabled", "peer access is already enabled"},
	{705, "hipErrorPeerAccessNotEnabled", "peer access has not been enabled"},
	{708, "hipErrorSetOnActiveProcess", "cannot set while device is active in this process"},
	{709, "hipErrorContextIsDestroyed", "context is destroyed"},
	{710, "hipErrorAssert", "device-side assert triggered"},
	{712, "hipErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"},
	{713, "hipErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"},
	{719, "hipErrorLaunchFailure", "unspecified launch failure"},
	{720, "hipErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"},
	{801, "hipErrorNotSupported", "operation not supported"},
	{900, "hipErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"},
	{901, "hipErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"},
	{902, "hipErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences"},
	{903, "hipErrorStreamCaptureUnmatched", "capture was not ended in the same stream as it began"},
	{904, "hipErrorStreamCaptureUnjoined", "capturing stream has unjoined work"},
	{905, "hipErrorStreamCaptureIsolation", "dependency created on uncaptured work in another stream"},
	{906, "hipErrorStreamCaptureImplicit", "operation would make the legacy stream depend on a capturing blocking stream"},
	{907, "hipErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream"},
	{908, "hipErrorStreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread"},
	{910, "hipErrorGraphExecUpdateFailure", "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"},
	{999, "hipErrorUnknown", "unknown error"},
	{1052, "hipErrorRuntimeMemory", "runtime memory call returned error"},
	{1053, "hipErrorRuntimeOther", "runtime call other than memory returned error"},
};

static const struct error_desc *find_error(hipError_t e)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == (int)e)
			return &errors[i];
	return NULL;
}

const char *cpuhip_error_name(hipError_t e)
{
	const struct error_desc *d = find_error(e);
	return d ? d->name : "hipErrorUnknown";
}

const char *cpuhip_error_string(hipError_t e)
{
	const struct error_desc *d = find_error(e);
	return d ? d->text : "unknown error";
}
