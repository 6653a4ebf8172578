/*
 * calibrate — measure this machine and fit what the simulator's bandwidth and throughput models
 * need, in the manner of NVIDIA's nvbandwidth: a registry of named tests, each with a check that
 * waives it (with the reason) when its hardware or tool is absent, never a failure and never a
 * fake number; each reports median, min and max of several samples after a warm-up, with the
 * sizes it used.
 *
 *   host_dram_copy, host_dram_triad   multi-threaded STREAM copy / triad (bytes/s, STREAM counting)
 *   host_cpu_adamw                    vectorised multi-threaded AdamW over fp32 arrays (params/s)
 *   host_pinned_alloc                 mlock'ed allocation rate (bytes/s)
 *   flash_seq_read, flash_seq_write   fio, 1 MiB blocks, queue depth 32, direct I/O, time based
 *   flash_slc_fill                    opt-in (--flash-fill SIZE, under --dir): one sequential
 *                                     write stream of SIZE, its rate logged every 0.5 s, the
 *                                     drop past a consumer drive's SLC cache found (cal_fit_slc)
 *   cuda_*                            run by the CUDA helper (bin/tierplan-cuda, `make cuda`):
 *                                     copies over a size sweep, bidirectional, device-to-device,
 *                                     bf16 GEMM at layer shapes, and the tiering kernel
 *
 * Fit: t(S) = latency + S / bandwidth per link by weighted least squares (weights 1/t^2, so
 * relative errors count alike), the measured table kept beside it. The profile JSON holds the
 * machine, the date, every measurement and the fitted parameters that override the catalog
 * (`--profile FILE` on plan, compare, simulate). The simulator predicts the tiering kernel from
 * the fitted profile and calibrate prints the prediction error.
 * Safety: fio runs on one file it creates (O_EXCL|O_NOFOLLOW) in a fresh private directory
 * under --dir (a temporary directory by default), after checking free space; a raw device only
 * with both --device and --destroy-data (checked before measuring). Only that file and directory
 * are removed, on exit and on SIGINT/SIGTERM; the profile goes through cfg_out (model/file.h),
 * its path checked before measuring.
 */
#ifndef TIERPLAN_CALIBRATE_H
#define TIERPLAN_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The GEMM rate and each matrix kernel's fixed time from the same `kernels` GEMMs timed at two
 * token counts (flops[i] FLOPs at rate[i] FLOP/s): t = kernels x fixed + F / R through both
 * points. A pair that gives no positive rate, or a fixed time outside (0, 50 us] (noise, or one
 * timing only: flops[1] = 0), keeps the simulator's fixed time (STEP_MATMUL_FIXED) and takes the
 * rate net of it from the first timing. Returns 0 when both figures are fitted, 1 for the
 * fallback. */
int cal_fit_gemm(const double flops[2], const double rate[2], int kernels, double *r, double *fixed);

/* Fits t(S) = latency + S / bandwidth to n (size, time) points by weighted least squares
 * (weights 1/t^2); r2 is the weighted coefficient of determination. Leaves the outputs alone
 * when fewer than two points or a degenerate system. */
void cal_fit_link(const double *size, const double *t, int n, double *latency, double *bandwidth,
		  double *r2);

/* The L2 of back-to-back memory-bound kernels (the CUDA helper's cuda_l2_chain: n (size, time)
 * points, size the bytes one kernel reads and writes, ascending): t = fixed + size / bw fitted
 * as cal_fit_link does to the smallest sizes, taking the next while its rate stays within
 * CAL_L2_KNEE of the fit so far; *cache is the largest size taken. 0 when the rate fell past
 * it, 1 when it never did (no L2 regime in the sweep, or fewer than four points): the outputs
 * are left alone then. */
int cal_fit_l2(const double *size, const double *t, int n, double *fixed, double *bw,
	       double *cache);
/* How far below the fit a size's rate may fall and still be in the L2: 10 % (the rule the
 * catalog's l2_cache figures were read from gpu-benches' data by) [D] */
#define CAL_L2_KNEE 0.9

/* A consumer drive's SLC write cache from a sequential write stream's bandwidth log: n samples,
 * each bw[i] bytes/s over the interval ending t[i] seconds after the start. The cache is what
 * was written before the rate first fell below 0.6 of its opening rate (the median of the
 * first tenth) and stayed there three samples; after is the median rate from there on. 0 when
 * it fell, 1 when it did not (a drive without a cache, or one larger than the stream); the
 * outputs are left alone then. */
int cal_fit_slc(const double *t, const double *bw, int n, double *cache, double *after);
/* The fewest samples cal_fit_slc reads a drop from: an opening and a drop of three each */
#define CAL_SLC_MIN_SAMPLES 6

/* The tiering kernel's loop as the engine sees it: per layer an h2d copy of `bytes` (fitted
 * link) into one of two buffers and `flops` of GEMMs (fitted rate) plus `gemm_fixed` seconds (its
 * kernels' fixed times); copy i waits for the GEMM of layer i-2. Seconds per layer in the steady
 * state the helper times (its middle half of layers, without fill and drain), 0 without the
 * fits. */
double cal_predict_tiering(int layers, double bytes, double flops, double h2d_bw, double h2d_lat,
			   double gemm_flops, double gemm_fixed);

/* A calibration profile's tiering kernel, measured and replayed (cal_replay_tiering); a figure
 * the profile lacks is 0. */
struct cal_tiering {
	double measured, predicted; /* the helper's case, seconds per layer */
	double parts;               /* predicted from its own copy-only and compute-only times */
	int bal_tokens;             /* its balanced case (GEMMs about as long as the copy) */
	double bal_measured, bal_predicted;
};

/* The decoder layers the CUDA helper's GEMM tests take (tierplan-cuda --shape, calibrate
 * --model): widths up to these, at least 64 and in multiples of 16 (cuBLASLt's FP8 GEMMs), the
 * k/v width no wider than hidden; tokens in multiples of 128 (the small timing's eighth stays a
 * multiple of 16). validate/cuda/harness.cu checks the same figures itself: the helper builds
 * on its own, from that one file, on a GPU node. */
#define CAL_SHAPE_MIN 64
#define CAL_SHAPE_ALIGN 16
#define CAL_SHAPE_TOKENS_ALIGN 128
#define CAL_SHAPE_MAX_TOKENS 65536
#define CAL_SHAPE_MAX_HIDDEN 65536
#define CAL_SHAPE_MAX_INTER 262144

struct cJSON;
/* Replays the cuda_tiering measurement of a profile (calibrate's JSON) through the engine with
 * the profile's fits, as --profile applies them: pcie_h2d_bandwidth and _latency_s, gemm_flops
 * and matmul_fixed_s for each of the "kernels" the loop runs a layer (the simulator's fixed time
 * where the profile fitted none); and from its own copy-only and compute-only times, what the
 * overlap model alone gets wrong. 0 with the measured kernel predicted, 1 when the profile has
 * no usable tiering measurement or fits (t zeroed). */
int cal_replay_tiering(const struct cJSON *profile, struct cal_tiering *t);

/* What one calibration run does. */
struct cal_opts {
	bool quick;              /* short runs (seconds per test) */
	const char *dir;         /* where fio writes; NULL = a fresh temporary directory */
	const char *device;      /* fio on this raw device instead (needs destroy) */
	bool destroy;            /* --destroy-data: the device may be overwritten */
	const char *cuda_helper; /* NULL = tierplan-cuda beside the running binary */
	const char *out;         /* the profile; NULL = profile.json */
	const char *tests;       /* comma-separated test names; NULL = all */
	int threads;             /* 0 = the online CPUs */
	int gpu_index;           /* the CUDA device measured, in PCI bus order */
	int gemm_shape[4];       /* the GEMM tests' layer: tokens, hidden, k/v width and MLP
				  * width (calibrate --model); zeros = the helper's Llama-3.1-8B */
	int test_timeout;        /* seconds a CUDA test may run before it is killed and failed
				  * (the later ones then fail unrun); 0 = CAL_TEST_TIMEOUT */
	double fill;             /* --flash-fill: bytes flash_slc_fill writes in one stream under
				  * --dir; 0 = that test is waived (it wears the drive) */
	bool dir_given;          /* set by cal_run: dir is the user's, not a temporary one */
};

/* A CUDA test's longest run: full-mode tests run for seconds to tens of seconds (warm-ups of
 * a second, samples of ~200 ms, copy sweeps to 1 GiB), so three minutes is a hung GPU or
 * driver, not a slow test [U: a guard, not a model constant]. It also keeps a hang from
 * costing the other tests' results: calibrate still writes the profile. */
#define CAL_TEST_TIMEOUT 180

/* The registry of tests: count, and name (with a one-line description in *what) of test i;
 * NULL past the end. */
int cal_test_count(void);
const char *cal_test_name(int i, const char **what);

/* Runs the selected tests, progress and results on log, writes the profile. Returns EXIT_OK,
 * EXIT_INFEASIBLE when a test failed (waived tests do not), or EXIT_USAGE / EXIT_INVALID /
 * EXIT_SYSTEM with err naming the option or file (sim/opts.h). */
int cal_run(const struct cal_opts *o, FILE *log, char *err, size_t errlen);

#endif
