/* test_layout — per-GPU bytes under TP, PP, DP and ZeRO. */
#include <math.h>
#include <string.h>

#include "../model/layout.h"
#include "tests.h"

static void zero_paper_per_gpu_figures(void)
{
	/* ZeRO paper Table 1 (published.md 9.1): 7.5B params, N_d = 64, K = 12 */
	static const struct {
		uint32_t stage;
		double gb;
	} want[] = {{1, 31.4}, {2, 16.6}, {3, 1.88}};
	double psi = 7.5e9;

	for (size_t i = 0; i < 3; i++) {
		double w = 2 * psi, g = 2 * psi, o = 12 * psi;
		mdl_zero_shard(want[i].stage, 64, &w, &g, &o);
		/* the paper prints three significant digits: 16.64 GB reads 16.6 */
		CU_ASSERT_DOUBLE_EQUAL((w + g + o) / 1e9, want[i].gb, 0.05);
	}
	/* 1T params, N_d = 1024, ZeRO-3: 15.6 GB */
	double w = 2e12, g = 2e12, o = 12e12;
	mdl_zero_shard(3, 1024, &w, &g, &o);
	CU_ASSERT_DOUBLE_EQUAL((w + g + o) / 1e9, 15.6, 0.05);
}

static struct mdl_arch load70b(void)
{
	struct mdl_arch a;
	char err[256];
	if (mdl_arch_load(model_path("llama-3.1-70b.json"), &a, err, sizeof err) < 0)
		memset(&a, 0, sizeof a);
	return a;
}

static const struct mdl_job job70 = {.method = MDL_FULL, .precision = MDL_BF16_MIXED,
				     .optimizer = MDL_ADAMW, .recompute = MDL_RC_FULL,
				     .attention = MDL_ATTN_FLASH, .seq = 4096, .micro_batch = 1};

static void zero3_model_states_fall_as_one_over_n(void)
{
	struct mdl_arch a = load70b();
	struct mdl_gpu_memory m8, m16;
	struct mdl_layout l8 = {1, 1, 8, 3, false}, l16 = {1, 1, 16, 3, false};

	mdl_layout_memory(&a, &job70, &l8, 1, &m8);
	mdl_layout_memory(&a, &job70, &l16, 1, &m16);
	double s8 = m8.weights + m8.gradients + m8.optimizer;
	double s16 = m16.weights + m16.gradients + m16.optimizer;
	CU_ASSERT_DOUBLE_EQUAL(s8 / s16, 2.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(s8 * 8, 16.0 * 70553706496.0, 1e3);
}

static void pipeline_first_stage_holds_pp_micro_batches(void)
{
	struct mdl_arch a = load70b();
	struct mdl_gpu_memory m1, m4;
	struct mdl_layout l = {1, 4, 1, 0, false};

	mdl_layout_memory(&a, &job70, &l, 1, &m1);  /* one micro-batch in flight */
	mdl_layout_memory(&a, &job70, &l, 16, &m4); /* 1F1B: pp = 4 in flight on stage 0 */
	CU_ASSERT(m4.activations > m1.activations);
	CU_ASSERT_EQUAL(m4.stage, 0);
}

static void layouts_that_do_not_divide_are_rejected(void)
{
	struct mdl_arch a = load70b();
	char err[256];
	struct mdl_layout ok = {8, 2, 1, 0, true}, badtp = {3, 1, 1, 0, false},
			  badpp = {1, 3, 1, 0, false}, badn = {2, 2, 2, 0, false};

	CU_ASSERT_EQUAL(mdl_layout_check(&a, &ok, 16, err, sizeof err), 0);
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &badtp, 3, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "heads"));
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &badpp, 3, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "layers"));
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &badn, 16, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not the 16 GPUs"));
}

int suite_layout(void)
{
	static const struct test_case c[] = {
		{"zero_paper_per_gpu_figures", zero_paper_per_gpu_figures},
		{"zero3_model_states_fall_as_one_over_n", zero3_model_states_fall_as_one_over_n},
		{"pipeline_first_stage_holds_pp_micro_batches",
		 pipeline_first_stage_holds_pp_micro_batches},
		{"layouts_that_do_not_divide_are_rejected", layouts_that_do_not_divide_are_rejected},
	};
	return add_suite("layout", c, (int)(sizeof c / sizeof c[0]));
}
