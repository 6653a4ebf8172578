/* plan — see plan.h. */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/act.h"
#include "engine.h"

/* Micro-batches per step for a layout: --grad-accum when given, else enough to reach the global
 * batch, rounded up so every data-parallel rank gets whole micro-batches. */
uint64_t sim_plan_micro_batches(const struct sim_workload *w, uint32_t dp)
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

struct cand {
	struct mdl_layout l;
	enum mdl_recompute rc;
	uint64_t m;
	double bound; /* seconds per token no schedule can beat: compute at the sustained rate */
	double mem;   /* analytic per-GPU bytes */
};

static int by_bound(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	return (x->bound > y->bound) - (x->bound < y->bound);
}

/*
 * The fastest fitting GPU-only layout on exactly n GPUs; false if none fits. Candidates whose
 * analytic memory (model/layout) exceeds the GPU by more than 10 % are pruned; the rest are
 * simulated in order of their compute lower bound, stopping once the bound is slower than the
 * best simulated step (branch and bound: the bound never exceeds the simulated time).
 */
static int best_layout(struct eng *eng, const struct sim_workload *w, const struct sim_hw *hw,
		       const struct sim_econ *e, const struct sim_plan_req *req, uint32_t n,
		       struct sim_option *best, struct sim_option *closest, bool *found,
		       uint64_t *count, char *err, size_t errlen)
{
	static const enum mdl_recompute rcs[] = {MDL_RC_NONE, MDL_RC_SELECTIVE, MDL_RC_FULL};
	struct sim_workload cw = *w;
	struct sim_option o;
	struct cand *c = NULL;
	size_t nc = 0, cap = 0;
	double peak = SIM_GEMM_EFFICIENCY * hw->gpu.bf16_flops;
	int rc = 0;

	*found = false;
	for (uint32_t tp = 1; tp <= hw->gpus_per_node && tp <= n; tp *= 2) {
		if (n % tp || w->arch.heads % tp || w->arch.kv_heads % tp)
			continue;
		for (uint32_t pp = 1; pp <= w->arch.layers && pp <= SIM_MAX_PP && tp * pp <= n;
		     pp++) {
			if ((n / tp) % pp || w->arch.layers % pp)
				continue;
			uint32_t dp = n / (tp * pp);
			uint64_t m = sim_plan_micro_batches(w, dp);
			for (uint32_t zero = 0; zero <= (dp > 1 ? 3u : 0u); zero++)
				for (int r = 0; r < 3; r++) {
					if (req->recompute_fixed && rcs[r] != w->job.recompute)
						continue;
					cw.job.recompute = rcs[r];
					struct mdl_layout l = {tp, pp, dp, zero, tp > 1};
					struct mdl_gpu_memory gm;
					mdl_layout_memory(&w->arch, &cw.job, &l, m, &gm);
					if (nc == cap) {
						cap = cap ? 2 * cap : 256;
						struct cand *q = realloc(c, cap * sizeof *c);
						if (!q) {
							free(c);
							snprintf(err, errlen, "out of memory");
							return -1;
						}
						c = q;
					}
					double tokens = (double)m * dp * w->job.micro_batch * w->job.seq;
					c[nc++] = (struct cand){
						l, rcs[r], m,
						(double)m * mdl_job_hardware_flops(&w->arch, &cw.job) /
							(tp * pp) / peak / tokens,
						gm.total};
				}
		}
	}
	qsort(c, nc, sizeof *c, by_bound);
	for (size_t i = 0; i < nc; i++) {
		if (*found && c[i].bound >= best->step_seconds / best->tokens_per_step)
			break;
		if (c[i].mem > 1.1 * hw->gpu.memory && !(closest && closest->gpus == 0))
			continue;
		cw.job.recompute = c[i].rc;
		struct sim_config cf = {c[i].l, c[i].m, sim_policy_find("gpu"), 0, 0, true};
		if (sim_run(eng, &cw, hw, e, &cf, &o, err, errlen)) {
			rc = -1;
			break;
		}
		(*count)++;
		if (o.fits && (!*found || better(&o, best))) {
			*best = o;
			*found = true;
		}
		if (!o.fits && closest && (closest->gpus == 0 || o.peak_gpu < closest->peak_gpu))
			*closest = o;
	}
	free(c);
	return rc;
}

int sim_plan_run(const struct sim_workload *w, const struct sim_hw *hw, const struct sim_econ *e,
		 const struct sim_plan_req *req, struct sim_plan *p, char *err, size_t errlen)
{
	struct sim_option o, closest;
	struct eng *eng = eng_new();
	bool found = false;
	uint32_t n;
	int rc = -1;

	memset(p, 0, sizeof *p);
	memset(&closest, 0, sizeof closest);
	p->rec_gpu_only = p->rec_tiered = -1;
	mdl_job_states(&w->arch, &w->job, &p->states);
	p->activations_bytes = mdl_act_total(&w->arch, &w->job);
	p->other_bytes = MDL_CUDA_CONTEXT_BYTES;
	if (!eng) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!w->grad_accum && !w->global_batch) {
		snprintf(err, errlen, "the global batch must be at least 1 sequence");
		goto out;
	}

	/* GPU-only: 1..gpus_per_node, then whole nodes */
	for (n = 1; n <= req->max_gpus; n = n < hw->gpus_per_node ? n + 1 : n + hw->gpus_per_node) {
		if (best_layout(eng, w, hw, e, req, n, &o, &closest, &found, &p->layouts_evaluated,
				err, errlen))
			goto out;
		if (found)
			break;
	}
	if (found) {
		p->options[p->noptions] = o;
		p->rec_gpu_only = p->noptions++;
	} else if (closest.gpus) {
		p->options[p->noptions++] = closest; /* shows what overflowed, fits = false */
	}

	/* tiered: the fewest GPUs of one node that fit, then the whole node */
	uint32_t slots = (uint32_t)hw->host.gpu_slots;
	struct sim_config cf = {{1, 1, 1, 0, false}, 1, sim_policy_find("tiered"), 0, 0,
				req->recompute_fixed};
	struct sim_option last = {0};
	for (n = 1; n <= slots; n++) {
		cf.layout.dp = n;
		cf.grad_accum = sim_plan_micro_batches(w, n);
		if (sim_run(eng, w, hw, e, &cf, &o, err, errlen))
			goto out;
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
			cf.layout.dp = slots;
			cf.grad_accum = sim_plan_micro_batches(w, slots);
			if (sim_run(eng, w, hw, e, &cf, &o, err, errlen))
				goto out;
			p->layouts_evaluated++;
			if (o.fits) {
				p->options[p->noptions] = o;
				if (o.cost_total < p->options[p->rec_tiered].cost_total)
					p->rec_tiered = p->noptions;
				p->noptions++;
			}
		}
	}
	rc = 0;
out:
	eng_free(eng);
	return rc;
}
