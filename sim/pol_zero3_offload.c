/*
 * pol_zero3_offload — DeepSpeed ZeRO-3 with offload_param and offload_optimizer on the CPU: the
 * usual DeepSpeed recipe for fine-tuning 70B on one node (DeepSpeed config docs, "ZeRO-3
 * Offload"; Rajbhandari et al., SC'21, the CPU tier of ZeRO-Infinity).
 *
 * ZeRO-3 over the data-parallel ranks: each rank's shard of the compute-dtype weights lives in
 * pinned DRAM and is copied to the GPU and all-gathered layer by layer, for the forward and again
 * for the backward, prefetched (--prefetch buffers). Gradients are reduce-scattered, copied down
 * and kept in fp32 (4 B/param) next to the fp32 master weights and Adam moments (12 B/param); the
 * CPU runs AdamW over its shard after backward, not overlapping it (DeepSpeedCPUAdam). Nothing
 * touches the drives. DRAM: the states themselves (the pools count them), the reserve, and the
 * pinned-allocation overhead MemAscend measures on the CPU-resident parameters (published.md
 * 9.5: "CPU-resident fp16 params when offload_param: cpu (2 Psi) ... x2").
 */
#include "../model/act.h"
#include "step.h"

/* pinned-allocation overhead: "≈ x2 per MemAscend" (published.md 9.5; arXiv 2505.23254) [C] */
#define PINNED_OVERHEAD 2.0

static int place(struct step_ctx *x, int v, char *err, size_t errlen)
{
	(void)v;
	if (step_require_dp_only(x, err, errlen))
		return -1;
	x->pl.fetch = FETCH_STREAM;
	x->pl.weights_on_flash = 0;
	x->pl.shard_stream = true;
	x->pl.ckpt = W_GPU;
	x->pl.grads = GRADS_HOST;
	x->pl.grads_on_flash = 0;
	x->pl.update = UPD_CPU_AFTER;
	x->pl.opt_on_flash = 0;
	struct mdl_states st;
	mdl_job_states(&x->w->arch, &x->job, &st);
	/* the pinned fp16 parameters counted once more: the allocation overhead over the pool */
	x->pl.dram_fixed = STEP_DRAM_RESERVE + (PINNED_OVERHEAD - 1) * st.weights_bytes;
	return 0;
}

const struct sim_policy sim_pol_zero3_offload = {
	"zero3-offload", "ZeRO-3 with weights and optimizer state in DRAM, AdamW on the CPU",
	SIM_TIERED, 1, place};
