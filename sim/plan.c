/* plan — see plan.h. */
#include "plan.h"

#include <stdio.h>
#include <string.h>

#include "../model/act.h"

/* Micro-batches per step for a layout: --grad-accum when given, else enough to reach the global
 * batch, rounded up so every data-parallel rank gets whole micro-batches. */
static uint64_t micro_batches(const struct sim_workload *w, uint32_t dp)
{
	uint64_t per = w->job.micro_batch * dp;

	if (w->grad_accum)
		return w->grad_accum;
	return (w->global_batch + per - 1) / per;
}

static bool better(const struct sim_option *a, const struct sim_option *b)
{
	return a->step_seconds / a->tokens_per_step < b->step_seconds / b->tokens_per_step;
}

/* The fastest fitting GPU-only layout on exactly n GPUs; false if none fits. */
static bool best_layout(const struct sim_workload *w, const struct sim_hw *hw,
			const struct sim_econ *e, const struct sim_plan_req *req, uint32_t n,
			struct sim_option *best, struct sim_option *closest, uint64_t *count)
{
	struct sim_workload cw = *w;
	struct sim_option o;
	bool found = false;
	static const enum mdl_recompute rcs[] = {MDL_RC_NONE, MDL_RC_SELECTIVE, MDL_RC_FULL};

	for (uint32_t tp = 1; tp <= hw->gpus_per_node && tp <= n; tp *= 2) {
		if (n % tp || w->arch.heads % tp || w->arch.kv_heads % tp)
			continue;
		for (uint32_t pp = 1; pp <= w->arch.layers && tp * pp <= n; pp++) {
			if ((n / tp) % pp || w->arch.layers % pp)
				continue;
			uint32_t dp = n / (tp * pp);
			uint64_t m = micro_batches(w, dp);
			for (uint32_t zero = 0; zero <= (dp > 1 ? 3u : 0u); zero++) {
				for (int r = 0; r < 3; r++) {
					if (req->recompute_fixed && rcs[r] != w->job.recompute)
						continue;
					cw.job.recompute = rcs[r];
					struct mdl_layout l = {tp, pp, dp, zero, tp > 1};
					sim_estimate_gpu_only(&cw, hw, e, &l, m, &o);
					(*count)++;
					if (o.fits && (!found || better(&o, best))) {
						*best = o;
						found = true;
					}
					if (!o.fits && closest &&
					    (closest->gpus == 0 || o.peak_gpu < closest->peak_gpu))
						*closest = o;
				}
			}
		}
	}
	return found;
}

int sim_plan_run(const struct sim_workload *w, const struct sim_hw *hw, const struct sim_econ *e,
		 const struct sim_plan_req *req, struct sim_plan *p, char *err, size_t errlen)
{
	struct sim_option o, closest;
	uint32_t n;

	memset(p, 0, sizeof *p);
	memset(&closest, 0, sizeof closest);
	p->rec_gpu_only = p->rec_tiered = -1;
	mdl_job_states(&w->arch, &w->job, &p->states);
	p->activations_bytes = mdl_act_total(&w->arch, &w->job);
	p->other_bytes = MDL_CUDA_CONTEXT_BYTES;
	if (!w->grad_accum && !w->global_batch) {
		snprintf(err, errlen, "the global batch must be at least 1 sequence");
		return -1;
	}

	/* GPU-only: 1..gpus_per_node, then whole nodes */
	bool found = false;
	for (n = 1; n <= req->max_gpus; n = n < hw->gpus_per_node ? n + 1 : n + hw->gpus_per_node) {
		if (best_layout(w, hw, e, req, n, &o, &closest, &p->layouts_evaluated)) {
			found = true;
			break;
		}
	}
	if (found) {
		p->options[p->noptions] = o;
		p->rec_gpu_only = p->noptions++;
	} else if (closest.gpus) {
		p->options[p->noptions++] = closest; /* shows what overflowed, fits = false */
	}

	/* tiered: the fewest GPUs of one node that fit, then the whole node */
	uint32_t slots = (uint32_t)hw->host.gpu_slots;
	struct sim_option last = {0};
	for (n = 1; n <= slots; n++) {
		uint64_t m = micro_batches(w, n);
		sim_estimate_tiered(w, hw, e, n, m, &o);
		p->layouts_evaluated++;
		last = o;
		if (o.fits)
			break;
	}
	if (last.gpus) {
		p->options[p->noptions] = last;
		if (last.fits)
			p->rec_tiered = p->noptions;
		p->noptions++;
		if (last.fits && last.gpus < slots) {
			sim_estimate_tiered(w, hw, e, slots, micro_batches(w, slots), &o);
			p->layouts_evaluated++;
			if (o.fits) {
				p->options[p->noptions] = o;
				if (o.cost_total < p->options[p->rec_tiered].cost_total)
					p->rec_tiered = p->noptions;
				p->noptions++;
			}
		}
	}
	return 0;
}
