/*
 * pol_tiered — aiDAPTIV-style tiered middleware: GPU memory extended over host DRAM and flash.
 *
 * Weights (compute dtype) stream layer by layer from DRAM, or from flash through pinned DRAM
 * staging when DRAM is short, into `prefetch` GPU buffers (double buffering by default), for
 * the forward and again for the backward (the layer is recomputed from its checkpoint right
 * before its backward, from the same buffer). Every GPU trains on its own micro-batches (data
 * parallel) and streams the whole model; gradients go down to DRAM per layer. In the last
 * micro-batch each layer's optimizer state is read from flash, updated by CPU AdamW and written
 * back as soon as its gradients arrive, overlapping the rest of the backward, with the next
 * layer's state read and the previous one's written while a layer steps, so the CPU and the
 * drives work at once (Fuyou / Ratel "active gradient offloading", published.md 9.4).
 *
 * Two placements, two policies:
 *   tiered       what aiDAPTIV+ does: the fp32 master weights, both Adam moments and the
 *                gradients (in the compute dtype) live on the flash cache, DRAM only stages them
 *                (its measured cache footprint holds p_fp32, g_bf16, m and v on the SSDs,
 *                published.md 1.3); so every step reads and writes the optimizer state on
 *                flash, which bounds throughput at small batch and grows with the drive count
 *                until the host link saturates. The compute-dtype weights, read twice per
 *                micro-batch, stay in DRAM when they fit.
 *   tiered-dram  the DRAM-first optimum: DRAM filled in order of traffic per byte (weights, then
 *                gradients, then optimizer state), only the rest on flash; each GPU copies every
 *                whole block up from DRAM, where the node reads a block's flash part once.
 * Without drives both keep everything in DRAM. The variants try full recompute with checkpoints
 * on the GPU or in DRAM, selective and no recompute; sim_run keeps the fastest that fits (unless
 * --recompute fixed one).
 */
#include <math.h>

#include "../model/act.h"
#include "step.h"

static const struct {
	enum mdl_recompute rc;
	enum step_where ckpt;
} variants[] = {
	{MDL_RC_FULL, W_GPU},	    {MDL_RC_FULL, W_DRAM}, {MDL_RC_FULL, W_FLASH},
	{MDL_RC_SELECTIVE, W_GPU}, {MDL_RC_NONE, W_GPU}};

enum fill { FILL_CACHE, FILL_DRAM_FIRST };

static int place_with(struct step_ctx *x, int v, char *err, size_t errlen, enum fill mode)
{
	const struct mdl_hw *hw = x->hw;
	const struct mdl_arch *a = &x->w->arch;
	struct mdl_states layer;

	if (step_require_dp_only(x, err, errlen))
		return -1;
	if (x->c->recompute_fixed && x->w->job.recompute != variants[v].rc)
		return 1;
	x->job.recompute = variants[v].rc;
	/* aiDAPTIV-style middleware never materialises the full logits (published.md: its cache
	 * footprint holds no b x s x V tensor); --loss keeps the user's choice, and a quantised
	 * head its loss (the chunked loss's kernel reads the head's weight itself: inputs.c) */
	if (!x->c->loss_fixed && !x->job.quant_head)
		x->job.loss = MDL_LOSS_CHUNKED;
	x->pl.fetch = FETCH_STREAM;
	x->pl.ckpt = variants[v].ckpt;
	x->pl.grads = GRADS_HOST;
	/* the gradients on the host stay in the compute dtype: aiDAPTIV's measured cache holds
	 * g_bf16, 2 B per parameter beside the fp32 master and moments (published.md 1.3) */
	mdl_job_states_part(a, &x->job, 1, false, false, &layer);
	x->pl.host_grad_bytes = layer.gradients_bytes / fmax(1.0, (double)layer.trainable_params);
	x->pl.update = UPD_CPU_OVERLAP;
	x->pl.pipe_read = x->pl.pipe_write = true;
	/* aiDAPTIV partitions the states over the ranks (its cache footprint is per rank,
	 * published.md 1.3): each GPU streams its shard and the layer is all-gathered */
	x->pl.shard_stream = mode == FILL_CACHE;
	/* the layer is recomputed half by half, so large per-GPU batches fit small cards as
	 * they do under aiDAPTIV (8B at batch 56 per rank on 20 GB RTX 4000 Ada, published.md
	 * 1.3) */
	x->pl.half_layers = true;

	struct mdl_states st;
	mdl_job_states(a, &x->job, &st);
	/* n data-parallel GPUs, k of them on a node: DRAM and drives are a node's, each GPU's
	 * state share 1/n (step.c resident), so a node holds k/n of it */
	double n = x->c->layout.dp;
	double k = step_node_gpus(hw, x->c->layout.dp);
	/* a layer's checkpoint per GPU, and all of them; in DRAM, the node's k GPUs' */
	double layer_saved = mdl_act_layer_saved(a, &x->job, 1, false);
	double saved = (double)a->layers * layer_saved;
	double ckpt = x->pl.ckpt == W_DRAM ? k * saved : 0;
	/* staging the step allocates as it goes: the prefetched blocks read from flash, once a
	 * node, each GPU's shard or 1/k of the one read (step.c fetch); two layers' checkpoints
	 * on their way to or from flash per GPU; and the last backward's gradients waiting for
	 * the CPU optimizer, per GPU its shard of a block's (both placements reduce-scatter
	 * them over the ranks first: sim_policy.zero 3), in that many buffers (step.c). Not
	 * resident, but the fill below leaves room for it. The first and last blocks carry the
	 * embedding's and the head's weights and gradients beside their layer's, and one of
	 * them is in flight with the layers next to it. */
	struct mdl_states embed, head;
	mdl_job_states_part(a, &x->job, 0, true, false, &embed);
	mdl_job_states_part(a, &x->job, 0, false, true, &head);
	double outer_w = fmax(embed.weights_bytes, head.weights_bytes);
	double outer_g = fmax(embed.gradients_bytes, head.gradients_bytes);
	double down = step_grads_inflight(x->c, &layer, layer.gradients_bytes) *
			      layer.gradients_bytes +
		      outer_g;
	double stage_w = x->pl.prefetch * layer.weights_bytes + outer_w, stage_g = k * down / n;
	double staging = stage_w + stage_g;
	double to_flash = x->pl.ckpt == W_FLASH ? k * 2 * layer_saved : 0;
	x->pl.dram_fixed = mdl_dram_reserve(&x->hw->host);

	/* Skip variants the GPU cannot hold (analytic, 10 % margin over what the simulator will
	 * find), and checkpoints off the GPU when they fit on it: offloading them only adds
	 * traffic then. Checkpoints go to flash only with drives: in the cache placement always
	 * (its measured footprint keeps activations on the SSDs, published.md 1.3), DRAM-first only
	 * when DRAM cannot hold them. */
	double fixed = x->pl.prefetch * layer.weights_bytes + layer.gradients_bytes +
		       (x->job.recompute == MDL_RC_FULL ? mdl_act_half_working(a, &x->job, 1, false)
							: mdl_act_layer_working(a, &x->job, 1, false)) +
		       MDL_CUDA_CONTEXT_BYTES;
	/* "fits" only with a wide margin: this sum leaves out the head, the gradient buffers and
	 * the allocator's slack (15 % short of the simulated peak for 8B at batch 16 on a 20 GB
	 * card), so near the limit both variants run and the simulator decides */
	bool fits_on_gpu = fixed + saved <= 0.75 * hw->gpu.memory;
	bool drives = hw->flash_count > 0;
	/* checkpoints in DRAM beside what the step stages there whatever the placement (405B on
	 * 8 H100 at micro-batch 8 and 2 TiB: the checkpoints' 1.97 TiB fit alone, and with the
	 * staging overflowed by 58.7 GiB) */
	bool fits_in_dram = k * saved + x->pl.dram_fixed + staging <= hw->dram;
	enum step_where off = drives && (mode == FILL_CACHE || !fits_in_dram) ? W_FLASH : W_DRAM;
	x->pl.dram_short = drives && mode == FILL_DRAM_FIRST && !fits_in_dram;
	if (!x->force && (fixed + (x->pl.ckpt == W_GPU ? saved : 0) > 1.1 * hw->gpu.memory ||
			  (x->pl.ckpt != W_GPU && (fits_on_gpu || x->pl.ckpt != off))))
		return 1;

	/* the prefetched blocks are staged in DRAM only for the part of the weights on flash
	 * (step.c fetch): their room is kept where the weights do not all fit without it */
	double room = hw->dram - x->pl.dram_fixed - stage_g - to_flash - ckpt;
	double want[3] = {k / n * st.weights_bytes,
			  k / n * (double)st.trainable_params * step_host_grad_bytes(&x->pl),
			  k / n * st.optimizer_bytes};
	double *frac[3] = {&x->pl.weights_on_flash, &x->pl.grads_on_flash, &x->pl.opt_on_flash};
	double free = room - (want[0] <= room ? 0 : stage_w);
	for (int i = 0; i < 3; i++) {
		/* the cache placement keeps gradients and optimizer state on flash */
		double in = mode == FILL_CACHE && i > 0 && hw->flash_count > 0
				    ? 0
				    : fmin(want[i], fmax(0, free));
		free -= in;
		/* no drives: everything stays in DRAM and the DRAM pool reports the overflow */
		*frac[i] = hw->flash_count > 0 && want[i] > 0 ? (want[i] - in) / want[i] : 0;
		x->pl.dram_short |= *frac[i] > 0 && !(mode == FILL_CACHE && i > 0);
	}
	return 0;
}

static int place_cache(struct step_ctx *x, int v, char *err, size_t errlen)
{
	return place_with(x, v, err, errlen, FILL_CACHE);
}

static int place_dram_first(struct step_ctx *x, int v, char *err, size_t errlen)
{
	return place_with(x, v, err, errlen, FILL_DRAM_FIRST);
}

const struct sim_policy sim_pol_tiered = {
	"tiered", "aiDAPTIV+: optimizer state and gradients on the flash cache, update overlapping "
		  "backward",
	SIM_TIERED, 3, sizeof variants / sizeof variants[0], true, false, place_cache};

const struct sim_policy sim_pol_tiered_dram = {
	"tiered-dram", "weights and states DRAM-first, the rest on flash, update overlapping backward",
	SIM_TIERED, 3, sizeof variants / sizeof variants[0], true, false, place_dram_first};
