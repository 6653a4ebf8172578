/*
 * pol_zero_offload — ZeRO-Offload (Ren et al., USENIX ATC'21, arXiv 2101.06840).
 *
 * ZeRO-2 over the data-parallel ranks with the optimizer offloaded to the CPU: compute-dtype
 * weights stay on the GPU; each backward block's gradients are reduce-scattered and copied down
 * to DRAM, where DeepSpeed keeps fp32 gradients, master weights and Adam moments; after the last
 * micro-batch's backward the CPU runs AdamW (DeepSpeedCPUAdam) over its shard, then the updated
 * weights go up over PCIe and are all-gathered. The update does not overlap backward (the
 * paper's one-step delayed update is an option we do not model). The paper's minimum traffic is
 * 2 bytes per parameter down and 2 up per step (published.md 9.1); DeepSpeed's code copies more
 * (step.c grads_to_host): the boundary's gradients go down in fp32, and with accumulation each
 * micro-batch's running sum comes back up, is added to on the GPU and goes down again.
 * Activation checkpoints stay on the GPU or, as DeepSpeed's
 * activation_checkpointing.cpu_checkpointing does, go to DRAM (the second variant); sim_run
 * keeps the faster that fits.
 */
#include "step.h"

static int place(struct step_ctx *x, int v, char *err, size_t errlen)
{
	if (step_ckpt_variant(x, v))
		return 1;
	if (step_require_dp_only(x, err, errlen))
		return -1;
	x->pl.fetch = FETCH_RESIDENT;
	x->pl.grads = GRADS_HOST;
	x->pl.grads_copy = COPY_DS_ZERO2;
	x->pl.update = UPD_CPU_AFTER;
	x->pl.shard_stream = true; /* ZeRO-2: gradients reduce-scattered before they go down */
	x->pl.dram_fixed = mdl_dram_reserve(&x->hw->host);
	return 0;
}

const struct sim_policy sim_pol_zero_offload = {
	"zero-offload", "ZeRO-2 with optimizer state and AdamW on the CPU", SIM_TIERED, 2, 2,
	false, true, place};
