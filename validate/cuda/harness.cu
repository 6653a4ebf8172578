/*
 * harness — the CUDA side of `tierplan calibrate`, a helper binary (bin/tierplan-cuda, built
 * by `make cuda` with nvcc) so that bin/tierplan itself runs without a GPU driver.
 *
 * Usage: tierplan-cuda TEST [--quick|--full] [--gpu-index N] [--shape TOKENS,HIDDEN,KV,INTER];
 * prints one JSON object on stdout (--shape: the GEMM tests at another decoder layer, for a look
 * at how the rate varies with shape; calibrate runs the default):
 *   {"test", "status": "ok"|"waived"|"failed", "reason", "samples": [...], "sizes": [...],
 *    "times": [...], "extra": {...}}
 * Tests (names as calibrate's registry):
 *   cuda_h2d_pinned, cuda_d2h_pinned, cuda_h2d_pageable, cuda_d2h_pageable
 *       cudaMemcpyAsync on the copy engines over a size sweep (4 KiB ... 1 GiB), per size the
 *       median time of one copy over back-to-back repetitions timed with CUDA events
 *       (nvbandwidth's method); samples are the bandwidths at the largest size
 *   cuda_bidir_pinned   both directions at once on two streams, 256 MiB each; total B/s
 *   cuda_d2d            device-to-device copy, 1 GiB; HBM traffic = 2 x bytes (read + write)
 *   cuda_gemm_bf16      cublasGemmEx, bf16 inputs, fp32 accumulate, the forward (TN), input-
 *                       gradient (NN) and weight-gradient (NT) GEMMs of a GQA decoder layer
 *                       (Llama-3.1-8B, 4096 tokens) on random operands, >= 1 s warm-up, ~200 ms
 *                       samples: FLOP/s; again at 512 tokens ("small_samples"), from which
 *                       calibrate fits each kernel's fixed time
 *   cuda_gemm_fp8       the same layer's 21 GEMMs in FP8 as Transformer Engine runs them
 *                       (cuBLASLt, TN, e4m3 forward, e5m2 gradients, fp32 accumulate, bf16
 *                       out): FLOP/s at 4096 tokens and at 512 ("small_samples"); compute
 *                       capability 8.9 or later (Ada, Hopper, Blackwell), else waived
 *   cuda_l2_chain       back-to-back memory-bound kernels handing a tensor on, as an eager
 *                       PyTorch chain does: a kernel reads one array and writes the other
 *                       (x 0.25, fp32), the next the other way, over data sets (both arrays)
 *                       of 1 MiB to 512 MiB; per size the median time of one kernel over
 *                       back-to-back launches timed with CUDA events (te42kyfo/gpu-benches'
 *                       gpu-small-kernels method); from which calibrate fits the L2's fixed
 *                       time a kernel, its rate and how much of it such a pair of arrays holds
 *   cuda_tiering        the tiered policy's data path: for each layer its weights stream from
 *                       pinned host memory into one of two device buffers on a copy stream while
 *                       the compute stream runs the previous layer's forward GEMMs (7 kernels);
 *                       reports seconds per layer, copy-only and compute-only times and the
 *                       achieved overlap
 * Every "ok" result carries "device": {name, compute_capability, pci_bus_id, driver_version,
 *   runtime_version, mig, memory_bytes, async_engine_count, numa_node}. Before any test the
 *   process binds to the CPUs of the GPU's NUMA node, so its pinned buffers are node-local. No
 *   device: status "waived"; a driver older than the runtime: "failed" with both versions (exit
 *   1); compute capability below 8.0: the bf16 tests waive, below 8.9 the FP8 one (as where
 *   cuBLASLt offers no FP8 algorithm for a shape). Every CUDA and cuBLAS call is checked; a
 *   failure prints status "failed" naming the call and exits 1.
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static const char *g_test = "";

static void emit_status(const char *status, const char *reason)
{
	printf("{\"test\": \"%s\", \"status\": \"%s\", \"reason\": \"%s\"}\n", g_test, status,
	       reason);
}

/* A failed CUDA or cuBLAS call: status "failed" naming the call, then exit 1. */
static void fail_call(const char *call, const char *what)
{
	char msg[256];
	snprintf(msg, sizeof msg, "%s failed: %s", call, what);
	for (char *p = msg; *p; p++)
		if (*p == '"')
			*p = '\'';
	emit_status("failed", msg);
	exit(1);
}

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess)                                                             \
			fail_call(#call, cudaGetErrorString(e_));                                  \
	} while (0)

#define CB(call)                                                                                   \
	do {                                                                                       \
		cublasStatus_t s_ = (call);                                                        \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
			char st_[32];                                                              \
			snprintf(st_, sizeof st_, "cuBLAS status %d", (int)s_);                    \
			fail_call(#call, st_);                                                     \
		}                                                                                  \
	} while (0)

/* A device allocation: out of device memory is no fault of the GPU's (another process, a MIG
 * slice too small): the test waives, saying how much it wanted. */
#define DEV_ALLOC(ptr, bytes)                                                                      \
	do {                                                                                       \
		cudaError_t e_ = cudaMalloc((ptr), (bytes));                                       \
		if (e_ == cudaErrorMemoryAllocation) {                                             \
			char m_[160];                                                              \
			snprintf(m_, sizeof m_, "out of device memory for %zu MiB",                \
				 (size_t)(bytes) >> 20);                                          \
			emit_status("waived", m_);                                                 \
			exit(0);                                                                   \
		}                                                                                  \
		if (e_ != cudaSuccess)                                                             \
			fail_call("cudaMalloc", cudaGetErrorString(e_));                           \
	} while (0)

/* The device every result was measured on, as a JSON object (filled by main). */
static char g_device[512] = "{}";

/* Opens an "ok" result: the test, its status and the device. */
static void begin_ok(void)
{
	printf("{\"test\": \"%s\", \"status\": \"ok\", \"device\": %s", g_test, g_device);
}

/*
 * Runs this process on the CPUs of the GPU's NUMA node (from sysfs: the PCI device's numa_node,
 * then that node's cpulist), so the pinned host buffers the tests allocate and first touch land
 * in the DRAM next to the GPU's root port, as nvbandwidth recommends running under numactl on
 * two-socket hosts. Returns the node, or -1 when sysfs says nothing (one socket, containers):
 * then nothing changes.
 */
static int bind_to_gpu_node(int domain, int bus, int device)
{
	char path[128], buf[4096];
	snprintf(path, sizeof path, "/sys/bus/pci/devices/%04x:%02x:%02x.0/numa_node", domain, bus,
		 device);
	FILE *f = fopen(path, "r");
	int node = -1;
	if (!f)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	if (node < 0)
		return -1;
	snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
	if (!(f = fopen(path, "r")))
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	cpu_set_t set;
	CPU_ZERO(&set);
	int any = 0;
	for (char *p = buf; *p;) { /* "0-23,48-71" */
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && c < CPU_SETSIZE; c++) {
			CPU_SET((int)c, &set);
			any = 1;
		}
		p = *end == ',' ? end + 1 : end;
		if (*p == '\n')
			break;
	}
	if (!any || sched_setaffinity(0, sizeof set, &set) != 0)
		return -1;
	return node;
}

static int g_numa_node = -1;

/* Fills g_device: name, compute capability, PCI bus id, driver and runtime versions, whether
 * the device is a MIG slice (CUDA_VISIBLE_DEVICES names MIG-... UUIDs), its copy engines and the
 * NUMA node the process was bound to (-1: none). */
static void describe_device(int dev)
{
	cudaDeviceProp p;
	int drv = 0, rt = 0;
	CK(cudaGetDeviceProperties(&p, dev));
	CK(cudaDriverGetVersion(&drv));
	CK(cudaRuntimeGetVersion(&rt));
	char name[256];
	size_t k = 0;
	for (const char *c = p.name; *c && k + 1 < sizeof name; c++)
		if (*c != '"' && *c != '\\')
			name[k++] = *c;
	name[k] = '\0';
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	bool mig = vis && !strncmp(vis, "MIG-", 4);
	snprintf(g_device, sizeof g_device,
		 "{\"name\": \"%s\", \"compute_capability\": \"%d.%d\", "
		 "\"pci_bus_id\": \"%04x:%02x:%02x.0\", \"driver_version\": %d, "
		 "\"runtime_version\": %d, \"mig\": %s, \"memory_bytes\": %zu, "
		 "\"async_engine_count\": %d, \"numa_node\": %d}",
		 name, p.major, p.minor, p.pciDomainID, p.pciBusID, p.pciDeviceID, drv, rt,
		 mig ? "true" : "false", p.totalGlobalMem, p.asyncEngineCount, g_numa_node);
}

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void print_array(const char *key, const std::vector<double> &v)
{
	printf(", \"%s\": [", key);
	for (size_t i = 0; i < v.size(); i++)
		printf("%s%.9g", i ? ", " : "", v[i]);
	printf("]");
}

/* Holds a stream until the host releases it, as nvbandwidth's spin kernel does: the copies are
 * all enqueued behind it and then run back to back, so small copies measure the copy engine,
 * not the host's rate of issuing them. */
__global__ void latch_kernel(volatile int *flag)
{
	while (!*flag) {
	}
}

static int *g_flag_host, *g_flag_dev;

static void latch(cudaStream_t s)
{
	if (!g_flag_host) {
		CK(cudaHostAlloc((void **)&g_flag_host, sizeof(int), cudaHostAllocMapped));
		CK(cudaHostGetDevicePointer((void **)&g_flag_dev, g_flag_host, 0));
	}
	*(volatile int *)g_flag_host = 0;
	latch_kernel<<<1, 1, 0, s>>>(g_flag_dev);
	CK(cudaGetLastError());
}

static void release(void)
{
	*(volatile int *)g_flag_host = 1;
}

/* Seconds per copy of `bytes`, back-to-back `reps` copies on one stream between two events,
 * enqueued behind the latch when `latched`. Copies from or to pageable memory cannot be: the
 * driver stages them through its own pinned buffer and cudaMemcpyAsync returns only once the
 * copy engine has taken (host to device) or delivered (device to host) the data, so behind a
 * latched stream the host would wait forever and never release it (it did, on the first H200
 * run: the helper was killed after 180 s). Their time includes that staging, as a framework's
 * copy from unpinned memory does. */
static double time_copies(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, int reps,
			  cudaStream_t s, bool latched)
{
	cudaEvent_t a, b;
	float ms;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	CK(cudaMemcpyAsync(dst, src, bytes, kind, s)); /* warm-up */
	if (latched)
		latch(s);
	CK(cudaEventRecord(a, s));
	for (int i = 0; i < reps; i++)
		CK(cudaMemcpyAsync(dst, src, bytes, kind, s));
	CK(cudaEventRecord(b, s));
	if (latched)
		release();
	CK(cudaEventSynchronize(b));
	CK(cudaEventElapsedTime(&ms, a, b));
	CK(cudaEventDestroy(a));
	CK(cudaEventDestroy(b));
	return ms * 1e-3 / reps;
}

static void copy_sweep(bool h2d, bool pinned, bool quick)
{
	size_t max = quick ? (size_t)256 << 20 : (size_t)1 << 30;
	void *host, *dev;
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	DEV_ALLOC(&dev, max);
	if (pinned)
		CK(cudaHostAlloc(&host, max, cudaHostAllocPortable));
	else if (!(host = malloc(max))) {
		emit_status("waived", "cannot allocate the pageable host buffer");
		exit(0);
	}
	memset(host, 1, max);
	std::vector<double> sizes, times, samples;
	for (size_t sz = 4096; sz <= max; sz *= quick ? 16 : 4) {
		int reps = (int)std::max<size_t>(3, std::min<size_t>(100, ((size_t)256 << 20) / sz));
		std::vector<double> t;
		for (int k = 0; k < 5; k++)
			t.push_back(time_copies(h2d ? dev : host, h2d ? host : dev, sz,
						h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
						reps, s, pinned));
		sizes.push_back((double)sz);
		times.push_back(median(t));
		if (sz * (quick ? 16 : 4) > max)
			for (double x : t)
				samples.push_back((double)sz / x);
	}
	begin_ok();
	print_array("samples", samples);
	print_array("sizes", sizes);
	print_array("times", times);
	printf(", \"extra\": {\"pinned\": %s, \"method\": \"cudaMemcpyAsync, copy engine, events\"}}\n",
	       pinned ? "true" : "false");
	if (pinned)
		CK(cudaFreeHost(host));
	else
		free(host);
	CK(cudaFree(dev));
	CK(cudaStreamDestroy(s));
}

static void bidir(bool quick)
{
	size_t sz = (size_t)256 << 20;
	void *h1, *h2, *d1, *d2;
	cudaStream_t s1, s2;
	cudaEvent_t a, b1, b2;
	CK(cudaStreamCreate(&s1));
	CK(cudaStreamCreate(&s2));
	CK(cudaHostAlloc(&h1, sz, cudaHostAllocPortable));
	CK(cudaHostAlloc(&h2, sz, cudaHostAllocPortable));
	DEV_ALLOC(&d1, sz);
	DEV_ALLOC(&d2, sz);
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b1));
	CK(cudaEventCreate(&b2));
	std::vector<double> samples;
	int reps = quick ? 4 : 16;
	/* warm-up: one copy each way at once */
	CK(cudaMemcpyAsync(d1, h1, sz, cudaMemcpyHostToDevice, s1));
	CK(cudaMemcpyAsync(h2, d2, sz, cudaMemcpyDeviceToHost, s2));
	for (int k = 0; k < 5; k++) {
		CK(cudaDeviceSynchronize());
		CK(cudaEventRecord(a, s1));
		CK(cudaStreamWaitEvent(s2, a, 0));
		for (int i = 0; i < reps; i++) {
			CK(cudaMemcpyAsync(d1, h1, sz, cudaMemcpyHostToDevice, s1));
			CK(cudaMemcpyAsync(h2, d2, sz, cudaMemcpyDeviceToHost, s2));
		}
		CK(cudaEventRecord(b1, s1));
		CK(cudaEventRecord(b2, s2));
		CK(cudaEventSynchronize(b1));
		CK(cudaEventSynchronize(b2));
		float m1, m2;
		CK(cudaEventElapsedTime(&m1, a, b1));
		CK(cudaEventElapsedTime(&m2, a, b2));
		samples.push_back(2.0 * reps * (double)sz / (std::max(m1, m2) * 1e-3));
	}
	begin_ok();
	print_array("samples", samples);
	printf(", \"extra\": {\"bytes_each_way\": %zu}}\n", sz * reps);
	CK(cudaFreeHost(h1));
	CK(cudaFreeHost(h2));
	CK(cudaFree(d1));
	CK(cudaFree(d2));
}

static void d2d(bool quick)
{
	size_t sz = quick ? (size_t)256 << 20 : (size_t)1 << 30;
	void *a, *b;
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	DEV_ALLOC(&a, sz);
	DEV_ALLOC(&b, sz);
	std::vector<double> samples;
	for (int k = 0; k < 5; k++) {
		double t = time_copies(b, a, sz, cudaMemcpyDeviceToDevice, 10, s, true);
		samples.push_back(2.0 * (double)sz / t);
	}
	begin_ok();
	print_array("samples", samples);
	printf(", \"extra\": {\"bytes\": %zu, \"counting\": \"read + write\"}}\n", sz);
	CK(cudaFree(a));
	CK(cudaFree(b));
}

__global__ static void scale_kernel(float *__restrict__ a, const float *__restrict__ b, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		a[i] = b[i] * 0.25f;
}

/* Seconds one kernel takes in `reps` back-to-back launches over arrays of n floats each, the
 * two swapping roles every launch. */
static double time_chain(float *a, float *b, size_t n, int reps, cudaStream_t s)
{
	unsigned threads = 256, blocks = (unsigned)((n + threads - 1) / threads);
	cudaEvent_t e0, e1;
	float ms = 0;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	scale_kernel<<<blocks, threads, 0, s>>>(a, b, n); /* warm: both arrays touched */
	scale_kernel<<<blocks, threads, 0, s>>>(b, a, n);
	CK(cudaGetLastError());
	CK(cudaEventRecord(e0, s));
	for (int r = 0; r < reps; r += 2) {
		scale_kernel<<<blocks, threads, 0, s>>>(a, b, n);
		scale_kernel<<<blocks, threads, 0, s>>>(b, a, n);
	}
	CK(cudaGetLastError());
	CK(cudaEventRecord(e1, s));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	return ms * 1e-3 / (reps - reps % 2);
}

static void l2_chain(bool quick)
{
	static const double mib[] = {1,  2,  3,  4,   6,   8,   12,  16,  24,  32,
				     48, 64, 80, 96, 112, 128, 192, 256, 384, 512};
	size_t max = (size_t)512 << 20;
	float *a, *b;
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	DEV_ALLOC((void **)&a, max / 2);
	DEV_ALLOC((void **)&b, max / 2);
	CK(cudaMemset(a, 0, max / 2));
	CK(cudaMemset(b, 0, max / 2));
	std::vector<double> sizes, times, samples;
	for (size_t i = 0; i < sizeof mib / sizeof mib[0]; i += quick ? 2 : 1) {
		size_t bytes = (size_t)(mib[i] * 1048576.0), n = bytes / 2 / sizeof(float);
		size_t many = ((size_t)4 << 30) / bytes; /* about 4 GiB moved a timing */
		int reps = (int)std::max<size_t>(20, std::min<size_t>(2000, many));
		std::vector<double> t;
		for (int k = 0; k < 5; k++)
			t.push_back(time_chain(a, b, n, reps, s));
		sizes.push_back((double)(n * 2 * sizeof(float)));
		times.push_back(median(t));
	}
	for (size_t i = 0; i < sizes.size(); i++)
		samples.push_back(sizes[i] / times[i]);
	begin_ok();
	print_array("samples", samples);
	print_array("sizes", sizes);
	print_array("times", times);
	printf(", \"extra\": {\"counting\": \"read + write of one kernel\", "
	       "\"method\": \"back-to-back kernels, two fp32 arrays swapping roles, events\"}}\n");
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaStreamDestroy(s));
}

/* The decoder layer the GEMM and tiering tests run: Llama-3.1-8B's, with grouped-query attention
 * (k and v project to kv_heads x head_dim = 1024, not hidden). */
struct layer_shape {
	int tokens, hid, kv, inter;
};

/* The GEMM tests' layer: Llama-3.1-8B's at 4096 tokens unless --shape names another (the small
 * timing runs an eighth of the tokens). */
static layer_shape g_shape = {4096, 4096, 1024, 14336};
/* what --shape takes: FP8 GEMMs take multiples of 16, the small timing's tokens / 8 too (the
 * figures of CAL_SHAPE_* in validate/calibrate.h, which calibrate --model checks first) */
static const char shape_usage[] = "--shape takes TOKENS,HIDDEN,KV,INTER: tokens 128-65536 in "
				  "128s, hidden 64-65536, kv 64-hidden, inter 64-262144, all "
				  "multiples of 16";

/* The seven weight matrices as (out, in): q, k, v, o, gate, up, down. */
static void layer_mats(const layer_shape &L, int m[7][2])
{
	const int t[7][2] = {{L.hid, L.hid}, {L.kv, L.hid},     {L.kv, L.hid},   {L.hid, L.hid},
			     {L.inter, L.hid}, {L.inter, L.hid}, {L.hid, L.inter}};
	memcpy(m, t, sizeof t);
}

static double layer_params(const layer_shape &L)
{
	return 2.0 * L.hid * L.hid + 2.0 * L.hid * L.kv + 3.0 * L.hid * L.inter;
}

/*
 * One pass over the layer's seven linears as PyTorch issues them for row-major tensors
 * (cuBLAS is column-major): 0 forward Y = X W^T ("TN"), 1 input gradient dX = dY W ("NN"),
 * 2 weight gradient dW = dY^T X ("NT"). X and Y hold tokens x the widest dimension; the weight
 * gradient lands in W (timing only).
 */
static void layer_gemms(cublasHandle_t h, __nv_bfloat16 *W, const __nv_bfloat16 *X,
			__nv_bfloat16 *Y, const layer_shape &L, int pass)
{
	const float one = 1, zero = 0;
	int m[7][2];
	layer_mats(L, m);
	size_t off = 0;
	for (int g = 0; g < 7; g++) {
		int out = m[g][0], in = m[g][1];
		if (pass == 0)
			CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, out, L.tokens, in, &one, W + off,
					CUDA_R_16BF, in, X, CUDA_R_16BF, in, &zero, Y, CUDA_R_16BF, out,
					CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		else if (pass == 1)
			CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, in, L.tokens, out, &one, W + off,
					CUDA_R_16BF, in, X, CUDA_R_16BF, out, &zero, Y, CUDA_R_16BF, in,
					CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		else
			CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, in, out, L.tokens, &one, X,
					CUDA_R_16BF, in, Y, CUDA_R_16BF, out, &zero, W + off, CUDA_R_16BF,
					in, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		off += (size_t)out * in;
	}
}

/* The i-th standard normal sample of a seeded sequence (hash, Box-Muller). */
__device__ static float normal_at(size_t i, unsigned seed)
{
	unsigned a = (unsigned)i * 2654435761u ^ seed, b = a * 1664525u + 1013904223u;
	a ^= a >> 16;
	b ^= b >> 13;
	float u1 = ((a & 0xffffff) + 1) / 16777217.0f, u2 = (b & 0xffffff) / 16777216.0f;
	return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

/* Random normal x scale in bf16: zeros draw less power and hold boost clocks, which flatters a
 * GEMM by about 15 % on an A100 (issue 19). */
__global__ static void fill_normal(__nv_bfloat16 *p, size_t n, unsigned seed, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = __float2bfloat16(normal_at(i, seed) * scale);
}

/* Standard deviation 0.02: the initializer_range of GPT-2 and Llama config.json files, so the
 * operands look like a model's weights and activations at their scale. */
static void randomize(__nv_bfloat16 *p, size_t n, unsigned seed)
{
	fill_normal<<<1024, 256>>>(p, n, seed, 0.02f);
	CK(cudaGetLastError());
}

struct layer_bufs {
	__nv_bfloat16 *W[2], *X, *Y;
	cublasHandle_t h;
};

/* Seconds the three passes take once on stream s, by events. */
static double one_layer(layer_bufs &b, const layer_shape &L, cudaStream_t s, cudaEvent_t e0,
			cudaEvent_t e1, int reps)
{
	float ms;
	CK(cudaEventRecord(e0, s));
	for (int r = 0; r < reps; r++)
		for (int pass = 0; pass < 3; pass++)
			layer_gemms(b.h, b.W[0], b.X, b.Y, L, pass);
	CK(cudaEventRecord(e1, s));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	return ms * 1e-3;
}

/* Five samples of the layer's GEMMs at L's token count, each ~`seconds` long: FLOP/s. `rounds(n)`
 * times n rounds of them (seconds); *reps gets the rounds a sample took. */
template <class Rounds>
static std::vector<double> gemm_samples(Rounds rounds, const layer_shape &L, double seconds,
					int *reps)
{
	*reps = (int)(seconds / rounds(1)) + 1;
	std::vector<double> v;
	for (int k = 0; k < 5; k++)
		v.push_back(6.0 * L.tokens * layer_params(L) * *reps / rounds(*reps));
	return v;
}

/* The GEMM tests' protocol: at least 1 s of warm-up at L (clocks and power settle), its samples,
 * eight rounds of warm-up at S, its samples (each ~200 ms, 50 ms with --quick). at_l(n) and
 * at_s(n) time n rounds of the layer's GEMMs at L's and S's token counts. */
template <class AtL, class AtS>
static void gemm_protocol(AtL at_l, AtS at_s, const layer_shape &L, const layer_shape &S,
			  bool quick, std::vector<double> *samples, int *reps,
			  std::vector<double> *small, int *small_reps)
{
	for (double warm = 0; warm < 1.0;) /* warm-up by time */
		warm += at_l(1);
	*samples = gemm_samples(at_l, L, quick ? 0.05 : 0.2, reps);
	at_s(8); /* warm-up at the new shape */
	*small = gemm_samples(at_s, S, quick ? 0.05 : 0.2, small_reps);
}

/*
 * The layer's forward, input-gradient and weight-gradient GEMMs (6 x tokens x params FLOPs, 21
 * kernels) on random operands, after at least 1 s of warm-up (clocks and power settle), in
 * samples of about 200 ms (50 ms with --quick); then again at 512 tokens, where each kernel's
 * fixed time weighs more, so that calibrate can fit t = 21 x fixed + F / rate. What this does
 * not time (attention, the memory-bound kernels, the gaps between kernels) stays the
 * simulator's separate terms.
 */
static void gemm(bool quick)
{
	layer_shape L = g_shape;
	size_t wn = (size_t)layer_params(L), xn = (size_t)L.tokens * L.inter;
	layer_bufs b;
	cudaStream_t s;
	cudaEvent_t e0, e1;
	CK(cudaStreamCreate(&s));
	DEV_ALLOC(&b.W[0], wn * 2);
	DEV_ALLOC(&b.X, xn * 2);
	DEV_ALLOC(&b.Y, xn * 2);
	randomize(b.W[0], wn, 1);
	randomize(b.X, xn, 2);
	randomize(b.Y, xn, 3);
	CB(cublasCreate(&b.h));
	CB(cublasSetStream(b.h, s));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	layer_shape S = L;
	S.tokens = L.tokens / 8; /* the same buffers hold it: fewer rows */
	int reps, small_reps;
	std::vector<double> samples, small;
	gemm_protocol([&](int n) { return one_layer(b, L, s, e0, e1, n); },
		      [&](int n) { return one_layer(b, S, s, e0, e1, n); }, L, S, quick, &samples,
		      &reps, &small, &small_reps);
	begin_ok();
	print_array("samples", samples);
	printf(", \"extra\": {\"tokens\": %d, \"hidden\": %d, \"kv\": %d, \"intermediate\": %d, "
	       "\"passes\": \"forward TN, dgrad NN, wgrad NT\", \"kernels\": 21, \"operands\": "
	       "\"random normal x 0.02\", \"reps_per_sample\": %d, \"dtype\": \"bf16, fp32 "
	       "accumulate\", \"small_tokens\": %d, \"small_reps_per_sample\": %d",
	       L.tokens, L.hid, L.kv, L.inter, reps, S.tokens, small_reps);
	print_array("small_samples", small);
	printf("}}\n");
	CB(cublasDestroy(b.h));
	CK(cudaFree(b.W[0]));
	CK(cudaFree(b.X));
	CK(cudaFree(b.Y));
}

/* Random normal x scale into FP8 (e4m3 or e5m2), saturating to the largest finite value. */
__global__ static void fill_fp8(__nv_fp8_storage_t *p, size_t n, unsigned seed, float scale,
				__nv_fp8_interpretation_t kind)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = __nv_cvt_float_to_fp8(normal_at(i, seed) * scale, __NV_SATFINITE, kind);
}

/*
 * One FP8 GEMM as Transformer Engine issues it (transformer_engine/common/gemm/cublaslt_gemm.cu:
 * cuBLASLt with A transposed and B not, the one layout FP8 takes on Hopper and Ada; fp32
 * accumulation, fast in the forward; per-tensor scale-inverse pointers; bf16 output for a
 * linear's result and its gradients): D (m x n) = A^T B over k, A stored k x m and B k x n,
 * column-major. The plan (descriptors and the heuristic's first algorithm) is made once per
 * shape.
 */
struct fp8_gemm {
	int m, n, k;
	bool grad; /* B holds a gradient: e5m2 (TE's hybrid recipe), else e4m3 */
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t a, b, d;
	cublasLtMatmulAlgo_t algo;
};

/* A plan for one shape; false when cuBLASLt offers no algorithm for it (then *why says so). */
static bool fp8_plan(cublasLtHandle_t lt, fp8_gemm &g, const float *scale, size_t workspace,
		     char *why, size_t whylen)
{
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	CB(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	CB(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	CB(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	/* TE accumulates the forward's products in the tensor cores' fast mode and the backward's
	 * in fp32 ("split accumulator": module/base.py, _2X_ACC_FPROP False, _2X_ACC_DGRAD and
	 * _2X_ACC_WGRAD True) */
	int8_t fast = g.grad ? 0 : 1;
	CB(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
					  sizeof fast));
	CB(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale,
					  sizeof scale));
	CB(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale,
					  sizeof scale));
	CB(cublasLtMatrixLayoutCreate(&g.a, CUDA_R_8F_E4M3, g.k, g.m, g.k));
	CB(cublasLtMatrixLayoutCreate(&g.b, g.grad ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3, g.k, g.n,
				      g.k));
	CB(cublasLtMatrixLayoutCreate(&g.d, CUDA_R_16BF, g.m, g.n, g.m));
	cublasLtMatmulPreference_t pref;
	CB(cublasLtMatmulPreferenceCreate(&pref));
	CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						&workspace, sizeof workspace));
	cublasLtMatmulHeuristicResult_t r;
	int got = 0;
	cublasStatus_t st =
		cublasLtMatmulAlgoGetHeuristic(lt, g.op, g.a, g.b, g.d, g.d, pref, 1, &r, &got);
	CB(cublasLtMatmulPreferenceDestroy(pref));
	if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && got == 0)) {
		snprintf(why, whylen,
			 "cuBLASLt %zu offers no FP8 algorithm for a %d x %d x %d GEMM (%s x e4m3)",
			 cublasLtGetVersion(), g.m, g.n, g.k, g.grad ? "e5m2" : "e4m3");
		return false;
	}
	CB(st);
	g.algo = r.algo;
	return true;
}

static void fp8_unplan(fp8_gemm &g)
{
	CB(cublasLtMatrixLayoutDestroy(g.a));
	CB(cublasLtMatrixLayoutDestroy(g.b));
	CB(cublasLtMatrixLayoutDestroy(g.d));
	CB(cublasLtMatmulDescDestroy(g.op));
}

/*
 * The layer's seven linears at L's token count, TE's way: forward Y = X W^T (m out, n tokens,
 * k in), input gradient dX = dY W on W's transposed copy (m in, n tokens, k out, dY e5m2),
 * weight gradient dW = dY^T X on the transposed copies of both (m in, n out, k tokens, dY e5m2).
 * Three plans a linear, forward, dgrad, wgrad in turn (21).
 */
static void fp8_layer_plans(cublasLtHandle_t lt, const layer_shape &L, const float *scale,
			    size_t workspace, std::vector<fp8_gemm> &plans)
{
	int m[7][2];
	layer_mats(L, m);
	char why[256];
	for (int g = 0; g < 7; g++) {
		int out = m[g][0], in = m[g][1];
		const int three[3][4] = {{out, L.tokens, in, 0}, {in, L.tokens, out, 1},
					 {in, out, L.tokens, 1}}; /* m, n, k, gradient */
		for (const int *t : three) {
			fp8_gemm g{};
			g.m = t[0], g.n = t[1], g.k = t[2], g.grad = t[3];
			plans.push_back(g);
			if (!fp8_plan(lt, plans.back(), scale, workspace, why, sizeof why)) {
				emit_status("waived", why); /* the process's exit frees the rest */
				exit(0);
			}
		}
	}
}

struct fp8_bufs {
	__nv_fp8_storage_t *W, *X, *G; /* weights, activations (e4m3), gradients (e5m2) */
	__nv_bfloat16 *D;
	void *ws;
	size_t wsize;
	cublasLtHandle_t lt;
};

/* Seconds `reps` rounds of the planned GEMMs take on stream s, by events. Operands are the same
 * buffers at every shape (each holds the largest): the time depends on the shapes only. */
static double fp8_once(fp8_bufs &b, const std::vector<fp8_gemm> &plans, cudaStream_t s,
		       cudaEvent_t e0, cudaEvent_t e1, int reps)
{
	const float one = 1, zero = 0;
	float ms;
	CK(cudaEventRecord(e0, s));
	for (int r = 0; r < reps; r++)
		for (const fp8_gemm &g : plans)
			CB(cublasLtMatmul(b.lt, g.op, &one, b.W, g.a, g.grad ? b.G : b.X, g.b, &zero,
					  b.D, g.d, b.D, g.d, &g.algo, b.ws, b.wsize, s));
	CK(cudaEventRecord(e1, s));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	return ms * 1e-3;
}

/* The standard deviation that puts the expected largest of n normal samples at `largest`. */
static float fp8_sigma(float largest, size_t n)
{
	return largest / sqrtf(2.0f * logf((float)n));
}

/*
 * The FP8 counterpart of gemm(): the layer's 21 GEMMs at 4096 and at 512 tokens, measured as
 * gemm() measures them (gemm_protocol). Operands random normal at the scale TE's per-tensor
 * scaling gives them: the tensor's amax at the format's largest finite value (e4m3 448, e5m2
 * 57,344), the amax of n normal samples being about sqrt(2 ln n) standard deviations, so the
 * tensor cores see a real distribution of bits; the casts and transposes TE adds are the
 * simulator's memory-bound traffic (mdl_job_fp8_casts), not timed here.
 */
static void gemm_fp8(bool quick)
{
	layer_shape L = g_shape;
	size_t wn = (size_t)layer_params(L), xn = (size_t)L.tokens * L.inter;
	size_t dn = std::max(xn, (size_t)L.hid * L.inter); /* the widest output: dW of the MLP */
	fp8_bufs b;
	cudaStream_t s;
	cudaEvent_t e0, e1;
	float *scale;
	const float unit = 1;
	CK(cudaStreamCreate(&s));
	DEV_ALLOC(&b.W, wn);
	DEV_ALLOC(&b.X, xn);
	DEV_ALLOC(&b.G, xn);
	DEV_ALLOC(&b.D, dn * 2);
	b.wsize = (size_t)32 << 20; /* TE's cuBLASLt workspace on Hopper: 32 MiB */
	DEV_ALLOC(&b.ws, b.wsize);
	DEV_ALLOC(&scale, sizeof *scale);
	CK(cudaMemcpy(scale, &unit, sizeof unit, cudaMemcpyHostToDevice));
	fill_fp8<<<1024, 256>>>(b.W, wn, 1, fp8_sigma(448.0f, wn), __NV_E4M3);
	fill_fp8<<<1024, 256>>>(b.X, xn, 2, fp8_sigma(448.0f, xn), __NV_E4M3);
	fill_fp8<<<1024, 256>>>(b.G, xn, 3, fp8_sigma(57344.0f, xn), __NV_E5M2);
	CK(cudaGetLastError());
	CB(cublasLtCreate(&b.lt));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	std::vector<fp8_gemm> plans, small_plans;
	fp8_layer_plans(b.lt, L, scale, b.wsize, plans);
	layer_shape S = L;
	S.tokens = L.tokens / 8;
	fp8_layer_plans(b.lt, S, scale, b.wsize, small_plans);
	int reps, small_reps;
	std::vector<double> samples, small;
	gemm_protocol([&](int n) { return fp8_once(b, plans, s, e0, e1, n); },
		      [&](int n) { return fp8_once(b, small_plans, s, e0, e1, n); }, L, S, quick,
		      &samples, &reps, &small, &small_reps);
	begin_ok();
	print_array("samples", samples);
	printf(", \"extra\": {\"tokens\": %d, \"hidden\": %d, \"kv\": %d, \"intermediate\": %d, "
	       "\"passes\": \"forward, dgrad, wgrad, all TN (Transformer Engine)\", \"kernels\": "
	       "21, \"operands\": \"random normal, amax near the format's largest\", "
	       "\"reps_per_sample\": %d, \"dtype\": \"e4m3 (forward), e5m2 gradients x e4m3, fp32 "
	       "accumulate, bf16 out\", \"cublaslt_version\": %zu, \"small_tokens\": %d, "
	       "\"small_reps_per_sample\": %d",
	       L.tokens, L.hid, L.kv, L.inter, reps, cublasLtGetVersion(), S.tokens, small_reps);
	print_array("small_samples", small);
	printf("}}\n");
	for (fp8_gemm &g : plans)
		fp8_unplan(g);
	for (fp8_gemm &g : small_plans)
		fp8_unplan(g);
	CB(cublasLtDestroy(b.lt));
	CK(cudaFree(b.W));
	CK(cudaFree(b.X));
	CK(cudaFree(b.G));
	CK(cudaFree(b.D));
	CK(cudaFree(b.ws));
	CK(cudaFree(scale));
}

static void tiering(bool quick)
{
	int layers = quick ? 16 : 32, ring = 4;
	layer_shape L = {2048, 4096, 1024, 14336};
	int tokens = L.tokens;
	size_t wn = (size_t)layer_params(L), bytes = wn * 2, xn = (size_t)tokens * L.inter;
	layer_bufs b;
	cudaStream_t cs, xs;
	std::vector<void *> host(ring);
	std::vector<cudaEvent_t> copied(layers), computed(layers);
	cudaEvent_t e0, e1;

	CK(cudaStreamCreate(&cs));
	CK(cudaStreamCreate(&xs));
	for (int i = 0; i < ring; i++) {
		CK(cudaHostAlloc(&host[i], bytes, cudaHostAllocPortable));
		memset(host[i], 0, bytes);
	}
	DEV_ALLOC(&b.W[0], bytes);
	DEV_ALLOC(&b.W[1], bytes);
	DEV_ALLOC(&b.X, xn * 2);
	DEV_ALLOC(&b.Y, xn * 2);
	randomize(b.X, xn, 2);
	randomize(b.W[0], wn, 1);
	for (int i = 0; i < ring; i++) /* random weights in the host ring too */
		CK(cudaMemcpy(host[i], b.W[0], bytes, cudaMemcpyDeviceToHost));
	CB(cublasCreate(&b.h));
	CB(cublasSetStream(b.h, cs));
	for (int i = 0; i < layers; i++) {
		CK(cudaEventCreateWithFlags(&copied[i], cudaEventDisableTiming));
		CK(cudaEventCreateWithFlags(&computed[i], cudaEventDisableTiming));
	}
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	layer_gemms(b.h, b.W[0], b.X, b.Y, L, 0); /* warm-up: the GEMMs and one copy */
	CK(cudaMemcpyAsync(b.W[1], host[0], bytes, cudaMemcpyHostToDevice, xs));
	CK(cudaDeviceSynchronize());

	/* mode 0: copies only; 1: GEMMs only; 2: the overlapped loop. Each is timed over its
	 * middle half of layers (events after layer q - 1 and after layer L - q - 1), the steady
	 * state without the pipeline's fill and drain; every figure is a median over the reps. */
	int q = layers / 4;
	auto measure = [&](const layer_shape &S, __nv_bfloat16 *X, __nv_bfloat16 *Y, double t[3],
			   std::vector<double> &overlapped) {
		std::vector<double> per_mode[3];
		for (int rep = 0; rep < 5; rep++)
			for (int mode = 0; mode < 3; mode++) {
				float ms;
				cudaStream_t timed = mode == 0 ? xs : cs;
				CK(cudaDeviceSynchronize());
				for (int i = 0; i < layers; i++) {
					if (mode != 1) {
						if (mode == 2 && i >= 2) /* double buffer: free */
							CK(cudaStreamWaitEvent(xs, computed[i - 2], 0));
						CK(cudaMemcpyAsync(b.W[i % 2], host[i % ring], bytes,
								   cudaMemcpyHostToDevice, xs));
						CK(cudaEventRecord(copied[i], xs));
					}
					if (mode != 0) {
						if (mode == 2)
							CK(cudaStreamWaitEvent(cs, copied[i], 0));
						layer_gemms(b.h, b.W[i % 2], X, Y, S, 0);
						CK(cudaEventRecord(computed[i], cs));
					}
					if (i == q - 1)
						CK(cudaEventRecord(e0, timed));
					if (i == layers - q - 1)
						CK(cudaEventRecord(e1, timed));
				}
				CK(cudaDeviceSynchronize());
				CK(cudaEventElapsedTime(&ms, e0, e1));
				per_mode[mode].push_back(ms * 1e-3 / (layers - 2 * q));
			}
		for (int m = 0; m < 3; m++)
			t[m] = median(per_mode[m]);
		overlapped = per_mode[2];
	};
	double t[3];
	std::vector<double> samples;
	measure(L, b.X, b.Y, t, samples);
	/* a balanced case: tokens scaled so the GEMMs take about as long as the copy, where the
	 * overlap model matters most (multiples of 256, 256 to 32,768; skipped when its
	 * activations do not fit) */
	double scale = t[1] > 0 ? t[0] / t[1] : 1;
	int tb = (int)std::min(32768.0, std::max(256.0, std::round(tokens * scale / 256) * 256));
	layer_shape B = {tb, L.hid, L.kv, L.inter};
	__nv_bfloat16 *bx = nullptr, *by = nullptr;
	double tbal[3] = {0, 0, 0};
	std::vector<double> bal;
	size_t bn = (size_t)tb * L.inter;
	if (cudaMalloc(&bx, bn * 2) == cudaSuccess && cudaMalloc(&by, bn * 2) == cudaSuccess) {
		randomize(bx, bn, 3);
		layer_gemms(b.h, b.W[0], bx, by, B, 0); /* warm-up at the new shape */
		CK(cudaDeviceSynchronize());
		measure(B, bx, by, tbal, bal);
	}
	cudaGetLastError(); /* a failed allocation above only skips the balanced case */
	if (bx)
		CK(cudaFree(bx));
	if (by)
		CK(cudaFree(by));
	double overlap = (t[0] + t[1] - t[2]) / std::min(t[0], t[1]);
	begin_ok();
	print_array("samples", samples);
	printf(", \"extra\": {\"layers\": %d, \"timed_layers\": %d, \"layer_bytes\": %zu, "
	       "\"layer_flops\": %.9g, \"tokens\": %d, \"copy_only_s\": %.9g, "
	       "\"compute_only_s\": %.9g, \"overlap\": %.4f, \"buffers\": 2, \"kernels\": 7, "
	       "\"statistic\": \"median, steady state\"",
	       layers, layers - 2 * q, bytes, 2.0 * tokens * layer_params(L), tokens, t[0], t[1],
	       overlap);
	if (tbal[2] > 0)
		printf(", \"balanced\": {\"tokens\": %d, \"layer_flops\": %.9g, "
		       "\"copy_only_s\": %.9g, \"compute_only_s\": %.9g, \"overlapped_s\": %.9g}",
		       tb, 2.0 * tb * layer_params(L), tbal[0], tbal[1], tbal[2]);
	printf("}}\n");
	for (int i = 0; i < ring; i++)
		CK(cudaFreeHost(host[i]));
	CB(cublasDestroy(b.h));
	CK(cudaFree(b.W[0]));
	CK(cudaFree(b.W[1]));
	CK(cudaFree(b.X));
	CK(cudaFree(b.Y));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: tierplan-cuda TEST [--quick|--full] [--gpu-index N] "
				"[--shape TOKENS,HIDDEN,KV,INTER]\n");
		return 2;
	}
	g_test = argv[1];
	bool quick = argc > 2 && !strcmp(argv[2], "--quick");
	int index = argc > 4 && !strcmp(argv[3], "--gpu-index") ? atoi(argv[4]) : 0;
	for (int i = 2; i + 1 < argc; i++) /* --shape TOKENS,HIDDEN,KV,INTER (the GEMM tests) */
		if (!strcmp(argv[i], "--shape")) {
			layer_shape x;
			int got = sscanf(argv[i + 1], "%d,%d,%d,%d", &x.tokens, &x.hid, &x.kv,
					 &x.inter);
			if (got != 4 || x.tokens < 128 || x.tokens > 65536 || x.tokens % 128 || x.hid < 64 ||
			    x.hid > 65536 || x.kv < 64 || x.kv > x.hid || x.inter < 64 ||
			    x.inter > 262144 || x.hid % 16 || x.kv % 16 || x.inter % 16) {
				emit_status("failed", shape_usage);
				return 1;
			}
			g_shape = x;
		}
	/* the index names devices in PCI bus order, as nvidia-smi lists them, not CUDA's
	 * fastest-first default */
	setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	int drv = 0, rt = 0;
	cudaDriverGetVersion(&drv);
	cudaRuntimeGetVersion(&rt);
	if (e == cudaErrorInsufficientDriver && drv == 0) {
		emit_status("waived", "no CUDA driver installed");
		return 0;
	}
	if (e == cudaErrorInsufficientDriver) {
		/* a real failure, not an absent GPU: the runtime this helper was built with needs
		 * a newer driver */
		char msg[256];
		snprintf(msg, sizeof msg,
			 "the driver (CUDA %d) is older than this helper's runtime (CUDA %d): update "
			 "the driver or build with an older toolkit",
			 drv, rt);
		emit_status("failed", msg);
		return 1;
	}
	if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
		emit_status("waived", "no CUDA device");
		return 0;
	}
	if (e != cudaSuccess)
		fail_call("cudaGetDeviceCount", cudaGetErrorString(e));
	if (index < 0 || index >= n) {
		char msg[96];
		snprintf(msg, sizeof msg, "--gpu-index %d: this machine has %d CUDA devices", index, n);
		emit_status("failed", msg);
		return 1;
	}
	CK(cudaSetDevice(index));
	{
		cudaDeviceProp p;
		CK(cudaGetDeviceProperties(&p, index));
		g_numa_node = bind_to_gpu_node(p.pciDomainID, p.pciBusID, p.pciDeviceID);
	}
	describe_device(index);
	bool bf16_test = !strcmp(g_test, "cuda_gemm_bf16") || !strcmp(g_test, "cuda_tiering");
	int major = 0;
	CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index));
	if (bf16_test && major < 8) {
		/* bf16 tensor cores arrive with Ampere (compute capability 8.0) */
		emit_status("waived", "bf16 GEMMs need compute capability 8.0 or later");
		return 0;
	}
	int minor = 0;
	CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, index));
	if (!strcmp(g_test, "cuda_gemm_fp8") && major * 10 + minor < 89) {
		/* FP8 tensor cores arrive with Ada (8.9) and Hopper (9.0) */
		emit_status("waived", "FP8 GEMMs need compute capability 8.9 or later (Ada, Hopper, "
				      "Blackwell)");
		return 0;
	}
	if (!strcmp(g_test, "cuda_h2d_pinned"))
		copy_sweep(true, true, quick);
	else if (!strcmp(g_test, "cuda_d2h_pinned"))
		copy_sweep(false, true, quick);
	else if (!strcmp(g_test, "cuda_h2d_pageable"))
		copy_sweep(true, false, quick);
	else if (!strcmp(g_test, "cuda_d2h_pageable"))
		copy_sweep(false, false, quick);
	else if (!strcmp(g_test, "cuda_bidir_pinned"))
		bidir(quick);
	else if (!strcmp(g_test, "cuda_d2d"))
		d2d(quick);
	else if (!strcmp(g_test, "cuda_l2_chain"))
		l2_chain(quick);
	else if (!strcmp(g_test, "cuda_gemm_bf16"))
		gemm(quick);
	else if (!strcmp(g_test, "cuda_gemm_fp8"))
		gemm_fp8(quick);
	else if (!strcmp(g_test, "cuda_tiering"))
		tiering(quick);
	else {
		emit_status("failed", "unknown test");
		return 2;
	}
	return 0;
}
