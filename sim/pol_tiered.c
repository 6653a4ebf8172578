/*
 * pol_tiered — aiDAPTIV-style tiered middleware: GPU memory extended over host DRAM and flash.
 *
 * Weights (compute dtype) stream layer by layer from DRAM, or from flash through pinned DRAM
 * staging when DRAM is short, into `prefetch` GPU buffers (double buffering by default), for
 * the forward and again for the backward (the layer is recomputed from its checkpoint right
 * before its backward, from the same buffer). Every GPU trains on its own micro-batches (data
 * parallel) and streams the whole model; gradients go down to DRAM per layer. In the last
 * micro-batch each layer's optimizer state is read from flash, updated by CPU AdamW and written
 * back as soon as its gradients arrive, overlapping the rest of the backward (Fuyou / Ratel
 * "active gradient offloading", published.md 9.4).
 *
 * Placement fills DRAM in order of traffic per byte: weights (read twice per micro-batch), then
 * fp32 gradients, then optimizer state (read and written once per step); the rest goes to flash.
 * The variants try full recompute with checkpoints on the GPU or in DRAM, selective and no
 * recompute; sim_run keeps the fastest that fits (unless --recompute fixed one).
 */
#include <math.h>

#include "../model/act.h"
#include "step.h"

static const struct {
	enum mdl_recompute rc;
	enum step_where ckpt;
} variants[] = {
	{MDL_RC_FULL, W_GPU}, {MDL_RC_FULL, W_DRAM}, {MDL_RC_SELECTIVE, W_GPU}, {MDL_RC_NONE, W_GPU}};

static int place(struct step_ctx *x, int v, char *err, size_t errlen)
{
	const struct mdl_hw *hw = x->hw;
	const struct mdl_arch *a = &x->w->arch;

	if (step_require_dp_only(x, err, errlen))
		return -1;
	if (x->c->recompute_fixed && x->w->job.recompute != variants[v].rc)
		return 1;
	x->job.recompute = variants[v].rc;
	/* aiDAPTIV-style middleware never materialises the full logits (published.md: its cache
	 * footprint holds no b x s x V tensor); --loss keeps the user's choice */
	if (!x->c->loss_fixed)
		x->job.loss = MDL_LOSS_CHUNKED;
	x->pl.fetch = FETCH_STREAM;
	x->pl.ckpt = variants[v].ckpt;
	x->pl.grads = GRADS_HOST;
	x->pl.update = UPD_CPU_OVERLAP;

	struct mdl_states st, layer;
	mdl_job_states(a, &x->job, &st);
	mdl_job_states_part(a, &x->job, 1, false, false, &layer);
	double n = x->c->layout.dp;
	double staging = x->pl.prefetch * layer.weights_bytes * n;
	double ckpt = x->pl.ckpt == W_DRAM ? n * (double)a->layers *
						     mdl_act_layer_saved(a, &x->job, 1, false)
					   : 0;
	x->pl.dram_fixed = STEP_DRAM_RESERVE + staging;

	/* Skip variants the GPU cannot hold (analytic, 10 % margin over what the simulator will
	 * find), and checkpoints in DRAM when they fit on the GPU: offloading them only adds PCIe
	 * traffic then. */
	double saved = (double)a->layers * mdl_act_layer_saved(a, &x->job, 1, false);
	double fixed = x->pl.prefetch * layer.weights_bytes + layer.gradients_bytes +
		       mdl_act_layer_working(a, &x->job, 1, false) + MDL_CUDA_CONTEXT_BYTES;
	bool fits_on_gpu = fixed + saved <= hw->gpu.memory;
	if (!x->force && (fixed + (x->pl.ckpt == W_GPU ? saved : 0) > 1.1 * hw->gpu.memory ||
			  (x->pl.ckpt == W_DRAM && fits_on_gpu)))
		return 1;

	double free = hw->dram - x->pl.dram_fixed - ckpt;
	double want[3] = {st.weights_bytes, (double)st.trainable_params * HOST_GRAD_BYTES,
			  st.optimizer_bytes};
	double *frac[3] = {&x->pl.weights_on_flash, &x->pl.grads_on_flash, &x->pl.opt_on_flash};
	for (int i = 0; i < 3; i++) {
		double in = fmin(want[i], fmax(0, free));
		free -= in;
		/* no drives: everything stays in DRAM and the DRAM pool reports the overflow */
		*frac[i] = hw->flash_count > 0 && want[i] > 0 ? (want[i] - in) / want[i] : 0;
	}
	return 0;
}

const struct sim_policy sim_pol_tiered = {
	"tiered", "weights streamed from DRAM/flash, update overlapping backward", SIM_TIERED,
	sizeof variants / sizeof variants[0], place};
