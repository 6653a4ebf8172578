/* test_layout — per-GPU bytes under TP, PP, DP and ZeRO. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../model/act.h"
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
	struct mdl_job j = job70;

	/* the chunked loss keeps the last stage's logits out of the comparison */
	j.loss = MDL_LOSS_CHUNKED;
	mdl_layout_memory(&a, &j, &l, 1, &m1);  /* one micro-batch in flight */
	mdl_layout_memory(&a, &j, &l, 16, &m4); /* 1F1B: pp = 4 in flight on stage 0 */
	CU_ASSERT(m4.activations > m1.activations);
	CU_ASSERT_EQUAL(m4.stage, 0);
}

/*
 * Korthikanti et al. 2022, figure 1 (published.md B.11a): activations per GPU of stage 0, GiB,
 * without recompute or sequence parallelism and with selective recompute plus sequence
 * parallelism, on the paper's layouts (175B and 530B interleaved 3 ways). Within 5 %.
 */
static void korthikanti_figure1_activations(void)
{
	static const struct {
		const char *path;
		uint32_t pp, vp;
		uint64_t micro_batch, m;
		double none, selective_sp;
	} fig[] = {
		{"traces/published/models/korthikanti-22b.json", 1, 1, 4, 1, 59.25, 9.56},
		{"configs/models/gpt3-175b.json", 8, 3, 1, 64, 66.84, 12.35},
		{"traces/published/models/megatron-530b.json", 35, 3, 1, 280, 114.02, 23.08},
		{"traces/published/models/megatron-1t.json", 64, 1, 1, 512, 131.25, 26.56},
	};
	for (size_t i = 0; i < sizeof fig / sizeof fig[0]; i++) {
		struct mdl_arch a;
		char err[256];
		CU_ASSERT_EQUAL_FATAL(mdl_arch_load(fig[i].path, &a, err, sizeof err), 0);
		struct mdl_job j = {.method = MDL_FULL, .precision = MDL_FP16_MIXED,
				    .optimizer = MDL_ADAMW, .recompute = MDL_RC_NONE,
				    .attention = MDL_ATTN_EAGER, .seq = 2048,
				    .micro_batch = fig[i].micro_batch};
		struct mdl_layout l = {8, fig[i].pp, 1, 0, false, fig[i].vp};
		struct mdl_gpu_memory m;
		mdl_layout_memory(&a, &j, &l, fig[i].m, &m);
		double got = m.layer_activations / 1073741824.0;
		CU_ASSERT(fabs(got / fig[i].none - 1) < 0.05);
		j.recompute = MDL_RC_SELECTIVE;
		l.sp = true;
		mdl_layout_memory(&a, &j, &l, fig[i].m, &m);
		double sel = m.layer_activations / 1073741824.0;
		CU_ASSERT(fabs(sel / fig[i].selective_sp - 1) < 0.05);
		if (fabs(got / fig[i].none - 1) >= 0.05 || fabs(sel / fig[i].selective_sp - 1) >= 0.05)
			printf("\n  %s: %.2f / %.2f GiB, figure 1 %.2f / %.2f\n", fig[i].path, got,
			       sel, fig[i].none, fig[i].selective_sp);
	}
}

/* Interleaving raises stage 0's in-flight activations by 1 + (pp - 1)/(pp vp) micro-batches'
 * worth (Korthikanti et al. 2022, sec. 4.2.3): 4 stages, 2 virtual stages, 8 micro-batches:
 * 4 x (1 + 3/8) = 5.5 micro-batches of the stage's layers, against 4 without interleaving. */
static void interleaving_holds_more_activations(void)
{
	struct mdl_arch a = load70b();
	struct mdl_job j = job70;
	struct mdl_gpu_memory m1, m2;
	struct mdl_layout l1 = {1, 4, 1, 0, false, 1}, l2 = {1, 4, 1, 0, false, 2};
	char err[256];

	j.recompute = MDL_RC_NONE;
	mdl_layout_memory(&a, &j, &l1, 8, &m1);
	mdl_layout_memory(&a, &j, &l2, 8, &m2);
	CU_ASSERT_DOUBLE_EQUAL(m2.layer_activations / m1.layer_activations, 5.5 / 4, 1e-12);
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &l2, 4, err, sizeof err), 0);
	/* 80 layers: 4 x 3 does not divide them; interleaving needs pp > 1 */
	struct mdl_layout bad = {1, 4, 1, 0, false, 3}, nopp = {1, 1, 4, 0, false, 2};
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &bad, 4, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "interleave 3"));
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &nopp, 4, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "pipeline"));
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

/*
 * Megatron-Core's account-for-embedding/loss split (NeMo's Llama 3.1 405B recipe): 126 layers
 * plus the embedding and the loss are 128 units, so pp 8 x vp 2 gives chunks of 8 with 7 on
 * the first chunk of the first stage and the last chunk of the last; pp 4 gives 31, 32, 32,
 * 31. Where neither the layers nor the layers plus two divide, or an end chunk would be left
 * without a layer, the layout is refused.
 */
static void pipeline_ends_split_counts_embedding_and_loss(void)
{
	struct mdl_arch a;
	char err[512]; /* the refusal names the uneven splits too */
	bool ends;
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path("llama-3.1-405b.json"), &a, err, sizeof err),
			      0);
	CU_ASSERT_EQUAL_FATAL(a.layers, 126);
	struct mdl_layout l82 = {8, 8, 1, 1, true, 2}, l4 = {1, 4, 1, 0, false, 1};
	CU_ASSERT(mdl_layout_splits(&a, 8, 2, &ends) && ends);
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &l82, 64, err, sizeof err), 0);
	CU_ASSERT_EQUAL(mdl_layout_chunk_layers(&a, &l82, 0, 0), 7);
	CU_ASSERT_EQUAL(mdl_layout_chunk_layers(&a, &l82, 0, 1), 8);
	CU_ASSERT_EQUAL(mdl_layout_chunk_layers(&a, &l82, 3, 0), 8);
	CU_ASSERT_EQUAL(mdl_layout_chunk_layers(&a, &l82, 7, 0), 8);
	CU_ASSERT_EQUAL(mdl_layout_chunk_layers(&a, &l82, 7, 1), 7);
	uint64_t sum = 0;
	for (uint32_t p = 0; p < 8; p++)
		sum += mdl_layout_stage_layers(&a, &l82, p);
	CU_ASSERT_EQUAL(sum, 126);
	CU_ASSERT_EQUAL(mdl_layout_stage_layers(&a, &l4, 0), 31);
	CU_ASSERT_EQUAL(mdl_layout_stage_layers(&a, &l4, 1), 32);
	CU_ASSERT_EQUAL(mdl_layout_stage_layers(&a, &l4, 3), 31);
	/* an even split stays even: 126 on pp 2 x vp 3 is 21 a chunk */
	CU_ASSERT(mdl_layout_splits(&a, 2, 3, &ends) && !ends);
	/* 126 and 128 on pp 5; 128 on 64 x 2 leaves the end chunks no layer; one stage never */
	struct mdl_layout l5 = {1, 5, 1, 0, false, 1}, l642 = {1, 64, 1, 0, false, 2};
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &l5, 5, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "divides neither"));
	/* and names the uneven splits that would take it: a first (or last) stage of f layers
	 * leaves 126 - f for 4 even stages, f = 2 mod 4 */
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "; an uneven split takes first stage layers 2, 6, 10, "
					   "14, ..., 122 or last stage layers 2, 6, 10, 14, ..., "
					   "122 instead"));
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &l642, 64, err, sizeof err), -1);
	/* odd counts split too: 127 layers on pp 3 are 42, 43, 42 */
	a.layers = 127;
	struct mdl_layout l3 = {1, 3, 1, 0, false, 1};
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &l3, 3, err, sizeof err), 0);
	CU_ASSERT_EQUAL(mdl_layout_stage_layers(&a, &l3, 0), 42);
	CU_ASSERT_EQUAL(mdl_layout_stage_layers(&a, &l3, 1), 43);
	CU_ASSERT_EQUAL(mdl_layout_stage_layers(&a, &l3, 2), 42);

	/* the first stage keeps pp micro-batches of its 15 layers (pp 8: 16 on the others) */
	a.layers = 126;
	struct mdl_job j = job70;
	struct mdl_layout l8 = {1, 8, 1, 0, false, 1};
	struct mdl_gpu_memory m;
	j.recompute = MDL_RC_NONE;
	mdl_layout_memory(&a, &j, &l8, 16, &m);
	CU_ASSERT_EQUAL(m.stage, 0);
	ASSERT_NEAR_REL(m.layer_activations, 8 * 15 * mdl_act_layer_saved(&a, &j, 1, false), 1e-12);
}

/*
 * An uneven pipeline (Megatron-Core's --decoder-first/last-pipeline-num-layers): DeepSeek-V3's 61
 * layers over 16 stages with one on the first stage leave 60 for the other 15, four each; one on
 * the last alike; four first and one last leave 56 for 14. Two first leaves 59 for 15, which do
 * not split; nor does a stage whose layers interleave 2 does not divide; two stages take exactly
 * what first and last say. The most loaded stage holds the peak: with no recompute the second
 * stage's 4 layers for 15 micro-batches in flight outweigh the first's 1 for 16.
 */
static void uneven_pipeline_sets_the_end_stages(void)
{
	struct mdl_arch a;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path("deepseek-v3.json"), &a, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(a.layers, 61);
	struct mdl_layout l = {1, 16, 1, 0, false, 1};
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &l, 16, err, sizeof err), -1); /* 61 or 63 on 16 */
	l.first = 1;
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &l, 16, err, sizeof err), 0);
	CU_ASSERT_EQUAL(mdl_layout_stage_layers(&a, &l, 0), 1);
	CU_ASSERT_EQUAL(mdl_layout_stage_layers(&a, &l, 1), 4);
	CU_ASSERT_EQUAL(mdl_layout_stage_layers(&a, &l, 15), 4);
	l.first = 0, l.last = 1;
	CU_ASSERT_EQUAL(mdl_layout_stage_layers(&a, &l, 0), 4);
	CU_ASSERT_EQUAL(mdl_layout_stage_layers(&a, &l, 15), 1);
	l.first = 4;
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &l, 16, err, sizeof err), 0);
	uint64_t sum = 0;
	for (uint32_t p = 0; p < 16; p++)
		sum += mdl_layout_stage_layers(&a, &l, p);
	CU_ASSERT_EQUAL(sum, 61);
	l.first = 2, l.last = 0;
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &l, 16, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "first stage 2"));
	l.first = 1, l.vp = 2;
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &l, 16, err, sizeof err), -1);
	struct mdl_layout two = {1, 2, 1, 0, false, 1};
	two.first = 30, two.last = 31;
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &two, 2, err, sizeof err), 0);
	two.last = 30;
	CU_ASSERT_EQUAL(mdl_layout_check(&a, &two, 2, err, sizeof err), -1);

	struct mdl_job j = job70;
	struct mdl_gpu_memory m;
	j.recompute = MDL_RC_NONE;
	l = (struct mdl_layout){1, 16, 1, 0, false, 1};
	l.first = 1;
	mdl_layout_memory(&a, &j, &l, 32, &m);
	CU_ASSERT_EQUAL(m.stage, 1);
	ASSERT_NEAR_REL(m.layer_activations, 15 * 4 * mdl_act_layer_saved(&a, &j, 1, false), 1e-12);
}

int suite_layout(void)
{
	static const struct test_case c[] = {
		{"zero_paper_per_gpu_figures", zero_paper_per_gpu_figures},
		{"zero3_model_states_fall_as_one_over_n", zero3_model_states_fall_as_one_over_n},
		{"pipeline_first_stage_holds_pp_micro_batches",
		 pipeline_first_stage_holds_pp_micro_batches},
		{"layouts_that_do_not_divide_are_rejected", layouts_that_do_not_divide_are_rejected},
		{"korthikanti_figure1_activations", korthikanti_figure1_activations},
		{"interleaving_holds_more_activations", interleaving_holds_more_activations},
		{"pipeline_ends_split_counts_embedding_and_loss",
		 pipeline_ends_split_counts_embedding_and_loss},
		{"uneven_pipeline_sets_the_end_stages", uneven_pipeline_sets_the_end_stages},
	};
	return add_suite("layout", c, (int)(sizeof c / sizeof c[0]));
}
