/* test_calibrate — the link fit and the tiering-kernel prediction calibrate relies on. */
#include <math.h>

#include <string.h>

#include "../model/hw.h"
#include "../sim/step.h"
#include "../validate/calibrate.h"
#include "tests.h"

/* hw zeroed but for the catalog's GPU `name`, as a profile finds it */
static void on_gpu(const char *name, struct mdl_hw *hw)
{
	char err[256];
	memset(hw, 0, sizeof *hw);
	CU_ASSERT_EQUAL_FATAL(cfg_gpu_get(name, &hw->gpu, err, sizeof err), 0);
}

/* The same with the profile `json` applied. */
static void profiled(const char *name, const char *json, struct mdl_hw *hw)
{
	char err[256];
	on_gpu(name, hw);
	CU_ASSERT_EQUAL_FATAL(mdl_profile_parse(json, "p.json", hw, err, sizeof err), 0);
}

/* Exact data t = 5 us + S / 25 GB/s over 4 KiB ... 1 GiB: the weighted fit recovers both. */
static void fit_recovers_latency_and_bandwidth(void)
{
	double s[10], t[10], lat = 0, bw = 0, r2 = 0;
	for (int i = 0; i < 10; i++) {
		s[i] = 4096.0 * pow(4, i);
		t[i] = 5e-6 + s[i] / 25e9;
	}
	cal_fit_link(s, t, 10, &lat, &bw, &r2);
	ASSERT_NEAR_REL(lat, 5e-6, 1e-6);
	ASSERT_NEAR_REL(bw, 25e9, 1e-6);
	ASSERT_NEAR_REL(r2, 1, 1e-9);
	/* one point cannot be fitted: outputs untouched */
	double l2 = -1, b2 = -1, q2 = -1;
	cal_fit_link(s, t, 1, &l2, &b2, &q2);
	CU_ASSERT(l2 == -1 && b2 == -1 && q2 == -1);
}

/* The helper's L2 sweep as an L40's (gpu-benches): t = 1.56 us + S / 4.94 TB/s while both
 * arrays fit (to 64 MiB of the sweep's 1-512 MiB), the GDDR6's 0.76 TB/s past it: the fit
 * recovers the fixed time and the rate from the L2's points and puts the cache at 64 MiB, the
 * largest size still within 10 % of them. A sweep that never leaves one line (no L2 in
 * reach, or all of it in the L2) gives nothing, as do three points. */
static void l2_fit_finds_the_cache(void)
{
	static const double mib[] = {1,  2,  3,  4,   6,   8,   12,  16,  24,  32,
				     48, 64, 80, 96, 112, 128, 192, 256, 384, 512};
	double s[20], t[20], line[20], fixed = 0, bw = 0, cache = 0;
	for (int i = 0; i < 20; i++) {
		s[i] = mib[i] * 1048576.0;
		t[i] = 1.56e-6 + s[i] / (s[i] <= 80e6 ? 4.94e12 : 0.76e12);
		line[i] = 1.56e-6 + s[i] / 0.76e12;
	}
	CU_ASSERT_EQUAL(cal_fit_l2(s, t, 20, &fixed, &bw, &cache), 0);
	ASSERT_NEAR_REL(fixed, 1.56e-6, 1e-6);
	ASSERT_NEAR_REL(bw, 4.94e12, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(cache, 64.0 * 1048576.0, 0);
	double f2 = -1, b2 = -1, c2 = -1;
	CU_ASSERT_EQUAL(cal_fit_l2(s, line, 20, &f2, &b2, &c2), 1);
	CU_ASSERT_EQUAL(cal_fit_l2(s, t, 3, &f2, &b2, &c2), 1);
	CU_ASSERT(f2 == -1 && b2 == -1 && c2 == -1);

	/* the profile's figures replace the catalog's */
	struct mdl_hw hw;
	profiled("l40s",
		 "{\"fitted\": {\"l2_cache\": 67108864, \"l2_bandwidth\": 4.94e12, "
		 "\"l2_kernel_fixed_s\": 1.56e-6}}",
		 &hw);
	CU_ASSERT_DOUBLE_EQUAL(hw.prof.l2_cache, 67108864.0, 0);
	CU_ASSERT_DOUBLE_EQUAL(hw.prof.l2_bandwidth, 4.94e12, 0);
	CU_ASSERT_DOUBLE_EQUAL(hw.prof.l2_kernel_fixed, 1.56e-6, 0);
}

/* Double buffering hides the shorter of copy and compute: in the steady state the helper times
 * (the middle half of the layers, no fill or drain) each layer takes the longer of the two,
 * copy-bound and compute-bound alike; a loop too short for a middle half is averaged whole,
 * (L x longer + shorter) / L. */
static void tiering_prediction_overlaps_copy_and_compute(void)
{
	int L = 16;
	/* copy 10 ms, GEMMs 2 ms */
	double p = cal_predict_tiering(L, 250e6, 2e12, 25e9, 0, 1e15, 0);
	ASSERT_NEAR_REL(p, 0.010, 1e-6);
	/* copy 2 ms, GEMMs 10 ms */
	p = cal_predict_tiering(L, 50e6, 10e12, 25e9, 0, 1e15, 0);
	ASSERT_NEAR_REL(p, 0.010, 1e-6);
	p = cal_predict_tiering(3, 50e6, 10e12, 25e9, 0, 1e15, 0);
	ASSERT_NEAR_REL(p, (0.002 + 3 * 0.010) / 3, 1e-6);
	CU_ASSERT_EQUAL(cal_predict_tiering(L, 50e6, 10e12, 0, 0, 1e15, 0), 0);
}

/* The helper's layer GEMMs (Llama-3.1-8B's: 218,103,808 parameters, 21 kernels) timed at 4096
 * and 512 tokens on a GPU whose kernels take 7 us + F / 700 TFLOPS: the two-point fit returns
 * both, and the profile carries them into the step. One timing, or a pair that would need a
 * negative fixed time, keeps the simulator's 6.5 us and nets it out of the rate. */
static void gemm_fit_separates_rate_and_fixed_time(void)
{
	double P = 218103808.0, F[2] = {6 * 4096 * P, 6 * 512 * P}, rate[2], r = 0, fixed = 0;
	for (int i = 0; i < 2; i++)
		rate[i] = F[i] / (21 * 7e-6 + F[i] / 700e12);
	CU_ASSERT_EQUAL(cal_fit_gemm(F, rate, 21, &r, &fixed), 0);
	ASSERT_NEAR_REL(r, 700e12, 1e-9);
	ASSERT_NEAR_REL(fixed, 7e-6, 1e-9);
	double one[2] = {F[0], 0};
	CU_ASSERT_EQUAL(cal_fit_gemm(one, rate, 21, &r, &fixed), 1);
	CU_ASSERT_DOUBLE_EQUAL(fixed, 6.5e-6, 1e-15);
	ASSERT_NEAR_REL(r, F[0] / (F[0] / rate[0] - 21 * 6.5e-6), 1e-12);
	double odd[2] = {rate[0], rate[0] * 1.2}; /* the small shape faster: no fixed time fits */
	CU_ASSERT_EQUAL(cal_fit_gemm(F, odd, 21, &r, &fixed), 1);
	CU_ASSERT_DOUBLE_EQUAL(fixed, 6.5e-6, 1e-15);

	struct mdl_hw hw;
	char err[256];
	on_gpu("h100-sxm", &hw);
	const char *prof = "{\"fitted\": {\"gemm_flops\": 700e12, \"matmul_fixed_s\": 7e-6}}";
	CU_ASSERT_EQUAL_FATAL(mdl_profile_parse(prof, "p.json", &hw, err, sizeof err), 0);
	CU_ASSERT_DOUBLE_EQUAL(step_matmul_fixed(&hw), 7e-6, 1e-18);
	memset(&hw.prof, 0, sizeof hw.prof);
	CU_ASSERT_DOUBLE_EQUAL(step_matmul_fixed(&hw), 6.5e-6, 1e-18);
}

/* A profile's measured pair of directions caps them together; a GPU with one copy engine
 * (asyncEngineCount 1) moves one direction at a time, so without that measurement the pair gets
 * the one-direction rate. */
static void profile_caps_the_pair_of_directions(void)
{
	struct mdl_hw hw;
	char err[256];
	on_gpu("rtx4090", &hw);
	const char *both = "{\"fitted\": {\"pcie_h2d_bandwidth\": 25e9, \"pcie_d2h_bandwidth\": 26e9, "
			   "\"pcie_bidir_bandwidth\": 38e9}}";
	CU_ASSERT_EQUAL_FATAL(mdl_profile_parse(both, "p.json", &hw, err, sizeof err), 0);
	CU_ASSERT_DOUBLE_EQUAL(hw.prof.pcie_bidir, 38e9, 1);
	memset(&hw.prof, 0, sizeof hw.prof);
	const char *one = "{\"fitted\": {\"pcie_h2d_bandwidth\": 25e9, \"pcie_d2h_bandwidth\": 26e9}, "
			  "\"device\": {\"name\": \"NVIDIA GeForce RTX 4090\", "
			  "\"async_engine_count\": 1}}";
	CU_ASSERT_EQUAL_FATAL(mdl_profile_parse(one, "p.json", &hw, err, sizeof err), 0);
	CU_ASSERT_DOUBLE_EQUAL(hw.prof.pcie_bidir, 26e9, 1);
}

/* A profile's pageable copy rates (calibrate's cuda_h2d_pageable, cuda_d2h_pageable) replace the
 * project's one measured host's, which stand without them. */
static void profile_sets_the_pageable_rates(void)
{
	struct mdl_hw hw;
	char err[256];
	on_gpu("h100-sxm", &hw);
	CU_ASSERT_DOUBLE_EQUAL(step_pageable_rate(&hw, true), 7.91e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(step_pageable_rate(&hw, false), 13.56e9, 1);
	const char *prof = "{\"fitted\": {\"pcie_h2d_pageable_bandwidth\": 5e9, "
			   "\"pcie_d2h_pageable_bandwidth\": 6e9}}";
	CU_ASSERT_EQUAL_FATAL(mdl_profile_parse(prof, "p.json", &hw, err, sizeof err), 0);
	CU_ASSERT_DOUBLE_EQUAL(step_pageable_rate(&hw, true), 5e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(step_pageable_rate(&hw, false), 6e9, 1);
}

/* A profile's FP8 GEMM rate (calibrate's cuda_gemm_fp8) sets the rate an FP8 linear runs at: the
 * 0.81 of it a step sustains of a benchmark GEMM (GEMM_MAMF_SHARE), whether the bf16 rate was
 * measured beside it or comes from the catalog: the H100's 1,300 TFLOPS measured give 1,053 by
 * hand. Without it the catalog's FP8 MAMF share stands; a GPU with no FP8 peak ignores it. */
static void profile_fp8_gemm_sets_the_fp8_rate(void)
{
	struct mdl_hw hw;
	char err[256];
	on_gpu("h100-sxm", &hw);
	double catalog = step_fp8_share(&hw);
	CU_ASSERT_DOUBLE_EQUAL(catalog, hw.gpu.gemm_mamf_fp8 / hw.gpu.gemm_mamf, 1e-12);
	const char *both = "{\"fitted\": {\"gemm_flops\": 700e12, \"gemm_fp8_flops\": 1300e12}}";
	CU_ASSERT_EQUAL_FATAL(mdl_profile_parse(both, "p.json", &hw, err, sizeof err), 0);
	double rate = step_gemm_efficiency(NULL, &hw, MDL_FP8) * step_fp8_share(&hw) *
		      hw.gpu.fp8_flops;
	ASSERT_NEAR_REL(rate, 0.81 * 1300e12, 1e-12);
	memset(&hw.prof, 0, sizeof hw.prof);
	const char *fp8 = "{\"fitted\": {\"gemm_fp8_flops\": 1300e12}}";
	CU_ASSERT_EQUAL_FATAL(mdl_profile_parse(fp8, "p.json", &hw, err, sizeof err), 0);
	rate = step_gemm_efficiency(NULL, &hw, MDL_FP8) * step_fp8_share(&hw) * hw.gpu.fp8_flops;
	ASSERT_NEAR_REL(rate, 0.81 * 1300e12, 1e-12);
	memset(&hw, 0, sizeof hw);
	CU_ASSERT_EQUAL_FATAL(cfg_gpu_get("a100-80g", &hw.gpu, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(mdl_profile_parse(fp8, "p.json", &hw, err, sizeof err), 0);
	CU_ASSERT_EQUAL(hw.prof.gemm_fp8_efficiency, 0);
}

/* A fill of a Samsung 980 as TechPowerUp measured it: 2.5 GB/s for 160 GB, then 500 MB/s,
 * logged every half second with 5 % jitter, and a two-sample stall early on that is no drop.
 * The fit finds the cache within one sample (1.25 GB) and the rate past it; a drive whose rate
 * never falls has no cache to report; the profile carries both into the hardware. */
static void slc_fit_finds_the_cache(void)
{
	double t[400], bw[400], cache = 0, after = 0;
	int n = 0;
	for (; n < 400; n++) {
		t[n] = 0.5 * (n + 1);
		double jitter = 1 + 0.05 * ((n * 7919) % 11 - 5) / 5.0;
		bw[n] = (n < 128 ? 2.5e9 : 0.5e9) * jitter;
		if (n == 20 || n == 21)
			bw[n] = 0.3e9; /* a stall of one second */
	}
	CU_ASSERT_EQUAL(cal_fit_slc(t, bw, n, &cache, &after), 0);
	CU_ASSERT(fabs(cache - 160e9 + 0.5 * 2 * (2.5e9 - 0.3e9)) < 1.3e9);
	ASSERT_NEAR_REL(after, 0.5e9, 0.05);
	double flat[400];
	for (int i = 0; i < 400; i++)
		flat[i] = 6.9e9;
	cache = after = -1;
	CU_ASSERT_EQUAL(cal_fit_slc(t, flat, 400, &cache, &after), 1);
	CU_ASSERT_EQUAL(cache, -1);
	CU_ASSERT_EQUAL(cal_fit_slc(t, bw, 5, &cache, &after), 1); /* too short a log */

	struct mdl_hw hw;
	char err[256];
	memset(&hw, 0, sizeof hw);
	const char *prof = "{\"fitted\": {\"flash_slc_cache\": 160e9, "
			   "\"flash_write_after_cache\": 5e8}}";
	CU_ASSERT_EQUAL_FATAL(mdl_profile_parse(prof, "p.json", &hw, err, sizeof err), 0);
	hw.flash_count = 2;
	mdl_flash_slc(&hw, &cache, &after);
	CU_ASSERT_DOUBLE_EQUAL(cache, 80e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(after, 2.5e8, 1);
}

int suite_calibrate(void)
{
	static const struct test_case cases[] = {
		{"fit recovers latency and bandwidth", fit_recovers_latency_and_bandwidth},
		{"tiering prediction overlaps copy and compute",
		 tiering_prediction_overlaps_copy_and_compute},
		{"profile caps the pair of directions", profile_caps_the_pair_of_directions},
		{"profile sets the pageable rates", profile_sets_the_pageable_rates},
		{"profile fp8 gemm sets the fp8 rate", profile_fp8_gemm_sets_the_fp8_rate},
		{"gemm fit separates rate and fixed time", gemm_fit_separates_rate_and_fixed_time},
		{"slc fit finds the cache", slc_fit_finds_the_cache},
		{"l2 fit finds the cache", l2_fit_finds_the_cache},
	};
	return add_suite("calibrate", cases, sizeof cases / sizeof cases[0]);
}
