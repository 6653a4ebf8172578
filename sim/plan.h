/*
 * plan — the sizing search behind `tierplan plan`.
 *
 * GPU-only: the fewest GPUs of the chosen type that fit (1..gpus_per_node, then whole nodes), and
 * at that count the fastest layout over TP (powers of two within a node, dividing the heads),
 * PP (dividing the layers), DP, ZeRO stage 0-3 and, unless the job fixes it, recompute mode.
 * Every option trains with the same global batch (sequences per optimizer step), so all of them
 * take the same optimizer steps and differ only in how fast and at what cost: micro-batches per
 * step m = ceil(global / (micro-batch x dp)), or --grad-accum when given. Tiered: the fewest GPUs of one node on which the tiered policy fits the host's
 * DRAM and flash, plus the whole node when that is different (more GPUs, same host).
 * Options are sorted GPU-only first; the recommendation indexes the cheapest of each kind.
 *
 * Each candidate runs through the simulator (policy gpu or tiered). Layouts are pruned by the
 * analytic memory bound and simulated in order of a compute lower bound on time per token,
 * stopping once no remaining layout can beat the best simulated one.
 * Failure: returns -1 with err only for an empty global batch;
 * a model that fits nowhere gives options with fits = false and a recommendation of -1.
 */
#ifndef TIERPLAN_PLAN_H
#define TIERPLAN_PLAN_H

#include "sim.h"

#define SIM_PLAN_MAX_OPTIONS 8
#define SIM_PLAN_MAX_GPUS 65536

struct sim_plan {
	struct mdl_states states; /* whole model */
	double activations_bytes; /* one micro-batch, whole model, the job's recompute */
	double other_bytes;       /* per-GPU runtime overhead */
	struct sim_option options[SIM_PLAN_MAX_OPTIONS];
	int noptions;
	int rec_gpu_only, rec_tiered; /* indexes into options, -1 = none fits */
	uint64_t layouts_evaluated;
};

struct sim_plan_req {
	uint32_t max_gpus;    /* search bound for GPU-only */
	bool recompute_fixed; /* the user chose --recompute */
};

/* Micro-batches per step on dp data-parallel ranks (see above). */
uint64_t sim_plan_micro_batches(const struct sim_workload *w, uint32_t dp);

int sim_plan_run(const struct sim_workload *w, const struct sim_hw *hw, const struct sim_econ *e,
		 const struct sim_plan_req *req, struct sim_plan *p, char *err, size_t errlen);

#endif
