/* test_plan — the sizing search and the analytic estimates. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/plan.h"
#include "tests.h"

struct fixture {
	struct sim_workload w;
	struct sim_hw hw;
	struct sim_econ e;
	struct sim_plan_req req;
};

static void setup(struct fixture *f, const char *model, const char *gpu, const char *host,
		  const char *flash, uint32_t nflash)
{
	char err[512];
	memset(f, 0, sizeof *f);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path(model), &f->w.arch, err, sizeof err), 0);
	f->w.job = (struct mdl_job){MDL_FULL, 8, MDL_T_ALL, MDL_BF16_MIXED, MDL_ADAMW,
				    MDL_RC_FULL, MDL_ATTN_FLASH, 4096, 1};
	f->w.global_batch = 128;
	f->w.tokens = 1e8;
	CU_ASSERT_EQUAL_FATAL(cfg_gpu_get(gpu, &f->hw.gpu, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(cfg_host_get(host, &f->hw.host, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(cfg_flash_get(flash, &f->hw.flash, err, sizeof err), 0);
	f->hw.flash_count = nflash;
	f->hw.dram = f->hw.host.dram;
	f->hw.gpus_per_node = (uint32_t)f->hw.host.gpu_slots;
	f->e = (struct sim_econ){3, 1.58, 0.083};
	f->req = (struct sim_plan_req){4096, false};
}

static void plan_70b_finds_gpu_only_and_tiered_options(void)
{
	struct fixture f;
	struct sim_plan *p = calloc(1, sizeof *p);
	char err[256];

	setup(&f, "llama-3.1-70b.json", "h100-sxm", "hgx-8gpu", "pm1743", 4);
	CU_ASSERT_EQUAL_FATAL(sim_plan_run(&f.w, &f.hw, &f.e, &f.req, p, err, sizeof err), 0);
	CU_ASSERT_EQUAL(p->states.params, 70553706496ull);
	CU_ASSERT_DOUBLE_EQUAL((p->states.weights_bytes + p->states.gradients_bytes +
				p->states.optimizer_bytes) / (double)p->states.params, 16.0, 1e-12);
	CU_ASSERT_FATAL(p->rec_gpu_only >= 0 && p->rec_tiered >= 0);
	const struct sim_option *g = &p->options[p->rec_gpu_only], *t = &p->options[p->rec_tiered];
	CU_ASSERT(g->fits && t->fits);
	CU_ASSERT(g->peak_gpu <= f.hw.gpu.memory);
	/* 1.13 TB of model state cannot fit fewer than 15 GPUs of 80 GB */
	CU_ASSERT(g->gpus >= 15);
	CU_ASSERT(t->gpus < g->gpus);
	CU_ASSERT(t->peak_power_watts < g->peak_power_watts);
	CU_ASSERT(t->runtime_seconds > g->runtime_seconds);
	CU_ASSERT(g->step_seconds > 0 && g->cost_total > 0 && g->energy_kwh > 0);
	/* every option trains the same global batch */
	CU_ASSERT(g->tokens_per_step >= 128 * 4096.0 && t->tokens_per_step >= 128 * 4096.0);
	free(p);
}

static void the_smallest_fitting_gpu_count_is_chosen(void)
{
	struct fixture f;
	struct sim_plan *p = calloc(1, sizeof *p);
	char err[256];

	/* 8B full fine-tune: 128 GB of states; on 80 GB GPUs, one does not fit and two do */
	setup(&f, "llama-3.1-8b.json", "h100-sxm", "hgx-8gpu", "pm1743", 4);
	CU_ASSERT_EQUAL_FATAL(sim_plan_run(&f.w, &f.hw, &f.e, &f.req, p, err, sizeof err), 0);
	CU_ASSERT_FATAL(p->rec_gpu_only >= 0);
	CU_ASSERT_EQUAL(p->options[p->rec_gpu_only].gpus, 2);
	/* LoRA on the same model fits one GPU */
	f.w.job.method = MDL_LORA;
	CU_ASSERT_EQUAL_FATAL(sim_plan_run(&f.w, &f.hw, &f.e, &f.req, p, err, sizeof err), 0);
	CU_ASSERT_EQUAL(p->options[p->rec_gpu_only].gpus, 1);
	free(p);
}

static void a_compute_bound_step_is_its_compute_time(void)
{
	struct fixture f;
	struct sim_option o;
	struct mdl_layout l = {1, 1, 1, 0, false};

	/* one GPU, no communication: step = hardware FLOPs / sustained rate, plus the AdamW
	 * step streaming 28 bytes per parameter through HBM */
	setup(&f, "qwen2.5-0.5b.json", "h100-sxm", "hgx-8gpu", "pm1743", 4);
	f.w.job.recompute = MDL_RC_NONE;
	sim_estimate_gpu_only(&f.w, &f.hw, &f.e, &l, 4, &o);
	double compute = 4 * mdl_job_hardware_flops(&f.w.arch, &f.w.job) /
			 (SIM_GEMM_EFFICIENCY * f.hw.gpu.bf16_flops);
	double adam = 494032768.0 * 28 / f.hw.gpu.hbm_bandwidth;
	ASSERT_NEAR_REL(o.step_seconds, compute + adam, 0.01);
	CU_ASSERT(adam < 0.1 * compute);
	CU_ASSERT(o.t_comm == 0);
}

static void tiered_is_bound_by_pcie_when_weights_stream(void)
{
	struct fixture f;
	struct sim_option o;

	/* 70B on one RTX 4000 Ada (20 GB, PCIe Gen4): streaming 3 x 141 GB of weights and 141 GB
	 * of gradients per micro-batch at 24.8 GB/s dominates the 4 x forward compute */
	setup(&f, "llama-3.1-70b.json", "rtx4000ada", "workstation-4gpu", "aidaptiv-ai100e", 2);
	f.hw.dram = 128.0 * 1073741824.0;
	sim_estimate_tiered(&f.w, &f.hw, &f.e, 1, 64, &o);
	CU_ASSERT(o.fits);
	CU_ASSERT(o.peak_flash > 0.8e12); /* most of ~1.1 TB of state on flash */
	double pcie = 4.0 * 2 * 70553706496.0 / 24.8e9;
	CU_ASSERT(o.t_pcie / 64 >= pcie * 0.99);
	CU_ASSERT(o.flash_bytes_written_per_step > 0);
	CU_ASSERT(o.flash_life_fraction > 0);
}

static void tiered_reports_the_tier_that_overflows(void)
{
	struct fixture f;
	struct sim_option o;

	setup(&f, "llama-3.1-405b.json", "h100-pcie", "workstation-4gpu", "samsung-990pro", 1);
	f.hw.dram = 64.0 * 1073741824.0;
	sim_estimate_tiered(&f.w, &f.hw, &f.e, 1, 1, &o);
	CU_ASSERT_FALSE(o.fits);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.overflow, "flash"));
}

int suite_plan(void)
{
	static const struct test_case c[] = {
		{"plan_70b_finds_gpu_only_and_tiered_options",
		 plan_70b_finds_gpu_only_and_tiered_options},
		{"the_smallest_fitting_gpu_count_is_chosen", the_smallest_fitting_gpu_count_is_chosen},
		{"a_compute_bound_step_is_its_compute_time", a_compute_bound_step_is_its_compute_time},
		{"tiered_is_bound_by_pcie_when_weights_stream",
		 tiered_is_bound_by_pcie_when_weights_stream},
		{"tiered_reports_the_tier_that_overflows", tiered_reports_the_tier_that_overflows},
	};
	return add_suite("plan", c, (int)(sizeof c / sizeof c[0]));
}
