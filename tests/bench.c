/*
 * bench — the engine and the simulator under load, for `make bench` (not a test: timing
 * assertions on a shared machine are noise). Prints one JSON object:
 *   events_per_second        engine alone: a synthetic graph of layer-like tasks on a few
 *                            shared resources (compute, copies, a shared host link)
 *   step_ms_70b_<policy>     one Llama-3.1-70B step (80 layers, seq 4096) per policy
 *   configs_per_second       gpu-policy 70B candidate configurations on 16 GPUs (every TP, PP
 *                            and ZeRO stage that runs: ZeRO 2-3 not with PP) simulated per
 *                            second, over half a second
 * Each figure is the median of several repetitions. BENCH_ROUNDS=N runs the configuration loop
 * exactly N times (for callgrind, whose instruction counts do not depend on a noisy machine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../model/catalog.h"
#include "../sim/engine.h"
#include "../sim/sim.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof *v, cmp);
	return v[n / 2];
}

/* 20,000 tasks: per "layer" a copy, a compute and a copy back, sharing a host link. */
static double engine_events_per_second(void)
{
	struct eng *e = eng_new();
	double rates[7];
	for (int rep = 0; rep < 7; rep++) {
		eng_reset(e);
		int sm = eng_resource(e, "sm", 1e15, "FLOP"), h2d = eng_resource(e, "h2d", 5e10, "B");
		int d2h = eng_resource(e, "d2h", 5e10, "B"), host = eng_resource(e, "dram", 2e11, "B");
		int cs = eng_stream(e, "c"), hs = eng_stream(e, "h"), ds = eng_stream(e, "d");
		int pool = eng_pool(e, "hbm", 8e10, 1);
		int prev_c = -1, ring[2] = {-1, -1};
		for (int i = 0; i < 6667; i++) {
			int p1[2] = {h2d, host}, p2[2] = {d2h, host};
			int up = eng_task(e, "up", hs, 1.7e9, 0, 2, p1, NULL);
			int c = eng_task(e, "c", cs, 3e13 * (1 + i % 3), 0, 1, &sm, NULL);
			int dn = eng_task(e, "dn", ds, 0.4e9, 0, 2, p2, NULL);
			eng_dep(e, up, c);
			eng_dep(e, c, dn);
			if (ring[i % 2] >= 0)
				eng_dep(e, ring[i % 2], up);
			ring[i % 2] = c;
			eng_effect(e, up, pool, 0, 1700000000, ENG_AT_START);
			eng_effect(e, c, pool, 0, -1700000000, ENG_AT_END);
			prev_c = c;
		}
		(void)prev_c;
		struct eng_stats st;
		double t0 = now();
		if (eng_run(e, &st)) {
			fprintf(stderr, "bench: %s\n", eng_error(e));
			exit(4);
		}
		rates[rep] = st.events / (now() - t0);
	}
	eng_free(e);
	return median(rates, 7);
}

int main(void)
{
	static struct sim_workload w;
	struct mdl_hw hw;
	struct sim_econ ec = {3, 1.58, 0.083};
	struct sim_option o;
	char err[512], path[4096], name[96];
	struct eng *e = eng_new();

	memset(&hw, 0, sizeof hw);
	if (cfg_model_resolve("70b", path, sizeof path, name, sizeof name, NULL, err, sizeof err) ||
	    mdl_arch_load(path, &w.arch, err, sizeof err) ||
	    cfg_gpu_get("h100-sxm", &hw.gpu, err, sizeof err) ||
	    cfg_host_get("hgx-8gpu", &hw.host, err, sizeof err) ||
	    cfg_flash_get("pm1743", &hw.flash, err, sizeof err)) {
		fprintf(stderr, "bench: %s\n", err);
		return 4;
	}
	hw.flash_count = 4;
	hw.dram = 256.0 * 1073741824.0;
	hw.gpus_per_node = 8;
	w.job = (struct mdl_job){MDL_FULL, 8, MDL_T_ALL, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_FULL,
				 MDL_ATTN_FLASH, 4096, 1};
	w.tokens = 1e8;

	printf("{\n  \"events_per_second\": %.0f,\n", engine_events_per_second());
	static const char *pols[] = {"gpu", "zero-offload", "zero-infinity", "tiered"};
	static const struct mdl_layout lays[] = {
		{4, 2, 2, 1, true}, {1, 1, 8, 2, false}, {1, 1, 8, 3, false}, {1, 1, 1, 3, false}};
	for (int p = 0; p < 4; p++) {
		struct sim_config c = {lays[p], 128 / lays[p].dp, sim_policy_find(pols[p]), 0, 0,
				       true};
		double t[9];
		for (int r = 0; r < 9; r++) {
			double t0 = now();
			if (sim_run(e, &w, &hw, &ec, &c, &o, err, sizeof err)) {
				fprintf(stderr, "bench: %s\n", err);
				return 4;
			}
			t[r] = (now() - t0) * 1e3;
		}
		printf("  \"step_ms_70b_%s\": %.3f,\n  \"step_events_70b_%s\": %llu,\n", pols[p],
		       median(t, 9), pols[p], (unsigned long long)o.events);
	}
	/* gpu-policy candidates as the planner forms them on 16 GPUs, repeated for half a second,
	 * with the planner's engine settings (peaks, no pool histories) */
	eng_keep_history(e, false);
	int n = 0, rounds = getenv("BENCH_ROUNDS") ? atoi(getenv("BENCH_ROUNDS")) : 0;
	double t0 = now();
	for (int round = 0; rounds ? round < rounds : now() - t0 < 0.5; round++)
		for (uint32_t tp = 1; tp <= 8; tp *= 2)
			for (uint32_t pp = 1; pp <= 16 / tp; pp *= 2)
				for (uint32_t z = 0; z <= (pp > 1 ? 1u : 3u); z++) {
					uint32_t dp = 16 / (tp * pp);
					struct sim_config c = {{tp, pp, dp, z, tp > 1},
							       (128 + dp - 1) / dp,
							       sim_policy_find("gpu"),
							       0,
							       0,
							       true};
					if (sim_run(e, &w, &hw, &ec, &c, &o, err, sizeof err)) {
						fprintf(stderr, "bench: %s\n", err);
						return 4;
					}
					n++;
				}
	printf("  \"configs_per_second\": %.0f,\n  \"configs_timed\": %d\n}\n", n / (now() - t0),
	       n);
	eng_free(e);
	return 0;
}
