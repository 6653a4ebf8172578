/* layout — see layout.h. */
#include "layout.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "act.h"

bool mdl_layout_splits(const struct mdl_arch *a, uint32_t pp, uint32_t vp, bool *ends)
{
	bool unused;
	if (!ends)
		ends = &unused;
	uint64_t chunks = (uint64_t)pp * (vp > 1 ? vp : 1);
	*ends = false;
	if (chunks == 0)
		return false;
	if (a->layers % chunks == 0)
		return true;
	/* the embedding and the loss as a layer each: only across stages, and every end chunk keeps
	 * a layer (Megatron-Core's account-for-embedding/loss split) */
	*ends = pp > 1 && (a->layers + 2) % chunks == 0 && (a->layers + 2) / chunks >= 2;
	return *ends;
}

void mdl_layout_groups_str(const struct mdl_layout *l, bool etp, char *buf, size_t n)
{
	bool cp = mdl_layout_cp(l) > 1, ep = mdl_layout_ep(l) > 1;
	etp = etp && mdl_layout_etp(l) < l->tp;
	snprintf(buf, n, "%s%.0u%s%.0u%s%.0u", cp ? " cp" : "", cp ? l->cp : 0, ep ? " ep" : "",
		 ep ? l->ep : 0, etp ? " etp" : "", etp ? mdl_layout_etp(l) : 0);
}

/* An uneven pipeline's stage p layers: first and last as set, the middle stages an even share of
 * the rest (a stage left unset takes the middle's share); 0 where they do not split. */
static uint64_t uneven_stage(const struct mdl_arch *a, const struct mdl_layout *l, uint32_t p)
{
	uint64_t set = (uint64_t)l->first + l->last, free = (l->first == 0) + (l->last == 0);
	uint64_t others = l->pp - 2 + free; /* stages sharing the rest evenly */
	if (set > a->layers)
		return 0;
	uint64_t rest = a->layers - set, mid = others ? rest / others : 0;
	if (others ? rest % others != 0 || mid == 0 : rest != 0)
		return 0;
	if (p == 0 && l->first)
		return l->first;
	if (p == l->pp - 1 && l->last)
		return l->last;
	return mid;
}

bool mdl_layout_split_ok(const struct mdl_arch *a, const struct mdl_layout *l)
{
	uint32_t vp = mdl_layout_vp(l);
	if (!mdl_layout_uneven(l))
		return mdl_layout_splits(a, l->pp, vp, NULL);
	for (uint32_t p = 0; p < l->pp; p++) {
		uint64_t n = uneven_stage(a, l, p);
		if (n == 0 || n % vp)
			return false;
	}
	return true;
}

uint32_t mdl_layout_chunk_layers(const struct mdl_arch *a, const struct mdl_layout *l, uint32_t p,
				 uint32_t c)
{
	uint32_t vp = mdl_layout_vp(l);
	if (mdl_layout_uneven(l))
		return mdl_layout_split_ok(a, l) ? (uint32_t)(uneven_stage(a, l, p) / vp) : 0;
	bool ends;
	if (!mdl_layout_splits(a, l->pp, vp, &ends))
		return 0;
	uint64_t chunks = (uint64_t)l->pp * vp;
	uint32_t k = (uint32_t)((a->layers + (ends ? 2 : 0)) / chunks);
	return k - (ends && p == 0 && c == 0) - (ends && p == l->pp - 1 && c == vp - 1);
}

uint64_t mdl_layout_stage_layers(const struct mdl_arch *a, const struct mdl_layout *l, uint32_t p)
{
	uint64_t n = 0;
	for (uint32_t c = 0; c < mdl_layout_vp(l); c++)
		n += mdl_layout_chunk_layers(a, l, p, c);
	return n;
}

double mdl_layout_rc_share(const struct mdl_arch *a, const struct mdl_job *j,
			   const struct mdl_layout *l)
{
	double share = 1;
	for (uint32_t g = 0; g < l->pp; g++)
		for (uint32_t c = 0; c < mdl_layout_vp(l); c++) {
			uint32_t n = mdl_layout_chunk_layers(a, l, g, c);
			share = fmin(share, (double)mdl_job_rc_layers(j, n) / n);
		}
	return share;
}

/* The counts the stage the user set (the first, else the last) may take with the other end as it
 * is, into buf: "2, 5, 8, ..., 77", or "none" where no count splits the rest. */
static void uneven_allowed(const struct mdl_arch *a, const struct mdl_layout *l, char *buf,
			  size_t n)
{
	struct mdl_layout t = *l;
	uint32_t *end = l->first ? &t.first : &t.last, ok[6], total = 0, last = 0;
	for (uint64_t v = 1; v <= a->layers; v++) {
		*end = (uint32_t)v;
		if (!mdl_layout_split_ok(a, &t))
			continue;
		if (total < 6)
			ok[total] = (uint32_t)v;
		last = (uint32_t)v;
		total++;
	}
	size_t o = 0;
	if (total == 0) {
		snprintf(buf, n, "none");
		return;
	}
	uint32_t shown = total > 6 ? 4 : total;
	for (uint32_t i = 0; i < shown && o < n; i++)
		o += (size_t)snprintf(buf + o, n - o, "%s%u", i ? ", " : "", ok[i]);
	if (total > shown && o < n)
		snprintf(buf + o, n - o, ", ..., %u", last);
}

int mdl_layout_check(const struct mdl_arch *a, const struct mdl_layout *l, uint64_t gpus,
		     char *err, size_t errlen)
{
	if (l->tp < 1 || l->pp < 1 || l->dp < 1) {
		snprintf(err, errlen, "tp, pp and dp must each be at least 1");
		return -1;
	}
	if (mdl_layout_gpus(l) != gpus) {
		snprintf(err, errlen, "tp %u x cp %u x pp %u x dp %u = %llu, not the %llu GPUs", l->tp,
			 mdl_layout_cp(l), l->pp, l->dp, (unsigned long long)mdl_layout_gpus(l),
			 (unsigned long long)gpus);
		return -1;
	}
	if (a->heads % l->tp || a->kv_heads % l->tp) {
		snprintf(err, errlen,
			 "tp %u does not divide the model's %llu attention heads and %llu "
			 "key/value heads",
			 l->tp, (unsigned long long)a->heads, (unsigned long long)a->kv_heads);
		return -1;
	}
	uint32_t vp = mdl_layout_vp(l);
	if (vp > 1 && l->pp < 2) {
		snprintf(err, errlen, "interleave %u needs pipeline parallelism (pp at least 2)", vp);
		return -1;
	}
	if (mdl_layout_uneven(l) && !mdl_layout_split_ok(a, l)) {
		char allowed[96];
		uneven_allowed(a, l, allowed, sizeof allowed);
		snprintf(err, errlen,
			 "first stage %u and last stage %u layers (0: an even share) leave the "
			 "model's %llu layers no even split over the other %u stages, or a stage's "
			 "layers not a multiple of interleave %u (allowed %s stage layers with pp "
			 "%u%s: %s)",
			 l->first, l->last, (unsigned long long)a->layers,
			 l->pp - (l->first > 0) - (l->last > 0), vp, l->first ? "first" : "last",
			 l->pp, l->first && l->last ? " and the last stage as set" : "", allowed);
		return -1;
	}
	if (!mdl_layout_uneven(l) && !mdl_layout_splits(a, l->pp, vp, NULL)) {
		/* what an uneven split would take instead, first stage or last (Megatron-Core's
		 * decoder-first/last-pipeline-num-layers) */
		struct mdl_layout f = *l, e = *l;
		char first[96] = "none", last[96] = "none", hint[320] = "";
		f.first = 1, e.last = 1;
		if (l->pp >= 2) {
			uneven_allowed(a, &f, first, sizeof first);
			uneven_allowed(a, &e, last, sizeof last);
		}
		bool fo = strcmp(first, "none") != 0, lo = strcmp(last, "none") != 0;
		if (fo || lo)
			snprintf(hint, sizeof hint, "; an uneven split takes %s%s%s%s%s instead",
				 fo ? "first stage layers " : "", fo ? first : "",
				 fo && lo ? " or " : "", lo ? "last stage layers " : "",
				 lo ? last : "");
		snprintf(err, errlen,
			 "pp %u x interleave %u divides neither the model's %llu layers nor %llu (the "
			 "layers with the embedding and the loss counted as one each, leaving each end "
			 "a layer)%s",
			 l->pp, vp, (unsigned long long)a->layers,
			 (unsigned long long)a->layers + 2, hint);
		return -1;
	}
	if (l->zero > 3) {
		snprintf(err, errlen, "zero stage %u is not one of 0, 1, 2, 3", l->zero);
		return -1;
	}
	uint32_t ep = mdl_layout_ep(l), etp = mdl_layout_etp(l);
	if (l->etp && (l->etp > l->tp || l->tp % l->etp)) {
		snprintf(err, errlen, "expert tp %u must divide tp %u", l->etp, l->tp);
		return -1;
	}
	if (etp != l->tp && !a->experts) {
		snprintf(err, errlen,
			 "expert tp %u splits routed experts over TP ranks: a dense model has none "
			 "(0 or %u: as tp)",
			 etp, l->tp);
		return -1;
	}
	/* the expert-parallel group spans the data- and context-parallel ranks and tp / etp TP
	 * ranks of each: Megatron-Core's expert rank generator lays out etp, ep, expert-dp, pp
	 * over the ranks the attention lays out as tp, cp, dp, pp (parallel_state.py, "MoE
	 * parallel folding"), so ep x etp divides tp x cp x dp */
	uint32_t span = l->tp / etp * mdl_layout_cp(l) * l->dp;
	if (ep > 1 && !a->experts) {
		snprintf(err, errlen,
			 "ep %u splits routed experts over ranks: a dense model has none (ep 1)",
			 ep);
		return -1;
	}
	if (ep > 1 && (a->experts % ep || span % ep)) {
		snprintf(err, errlen,
			 "ep %u must divide the model's %u routed experts and the %u ranks that can "
			 "split them, dp %u x cp %u x tp %u / expert tp %u",
			 ep, a->experts, span, l->dp, mdl_layout_cp(l), l->tp, etp);
		return -1;
	}
	if (l->shard && (l->shard < 2 || l->shard > l->dp || l->dp % l->shard)) {
		snprintf(err, errlen,
			 "shard %u must divide dp %u and be at least 2 (dp: every rank)", l->shard,
			 l->dp);
		return -1;
	}
	if (mdl_layout_shard(l) < l->dp && (l->zero == 0 || ep > 1)) {
		snprintf(err, errlen,
			 "shard %u of dp %u: hybrid sharding splits ZeRO's partition (zero 1-3), "
			 "without expert parallelism",
			 l->shard, l->dp);
		return -1;
	}
	/* DeepSpeed's pipeline engine asserts "ZeRO-2 and ZeRO-3 are incompatible with pipeline
	 * parallelism" (deepspeed/runtime/pipe/engine.py); Megatron's distributed optimizer shards
	 * only optimizer state (stage 1) under PP */
	if (l->pp > 1 && l->zero >= 2) {
		snprintf(err, errlen, "zero stage %u with pp %u: ZeRO-2 and ZeRO-3 do not run with "
				      "pipeline parallelism (use zero 0 or 1)",
			 l->zero, l->pp);
		return -1;
	}
	return 0;
}

void mdl_ep_local(const struct mdl_states *all, const struct mdl_states *experts, double keep,
		  struct mdl_states *local)
{
	double more = keep - 1.0; /* below 0: the share other ranks hold */

	*local = *all;
	local->params = (uint64_t)((double)all->params + more * (double)experts->params);
	local->trainable_params =
	    (uint64_t)((double)all->trainable_params + more * (double)experts->trainable_params);
	local->weights_bytes += more * experts->weights_bytes;
	local->gradients_bytes += more * experts->gradients_bytes;
	local->optimizer_bytes += more * experts->optimizer_bytes;
}

void mdl_ep_shard(uint32_t zero, uint32_t dp, double keep, const struct mdl_states *all,
		  const struct mdl_states *experts, double tp, double *weights, double *grads,
		  double *opt)
{
	struct mdl_states loc;

	mdl_ep_local(all, experts, keep, &loc);
	*weights = (zero >= 3 ? all->weights_bytes / dp : loc.weights_bytes) / tp;
	*grads = (zero >= 2 ? all->gradients_bytes / dp : loc.gradients_bytes) / tp;
	*opt = (zero >= 1 ? all->optimizer_bytes / dp : loc.optimizer_bytes) / tp;
}

void mdl_zero_shard(uint32_t zero, uint32_t dp, double *weights, double *grads, double *opt)
{
	if (zero >= 1)
		*opt /= dp;
	if (zero >= 2)
		*grads /= dp;
	if (zero >= 3)
		*weights /= dp;
}

static void stage_memory(const struct mdl_arch *a, const struct mdl_job *j,
			 const struct mdl_layout *l, uint64_t m, uint32_t p,
			 struct mdl_gpu_memory *mem)
{
	uint64_t nl = mdl_layout_stage_layers(a, l, p);
	bool first = p == 0, last = p == l->pp - 1;
	/* a tied head needs the embedding matrix on the last stage as well */
	bool head_copy = last && (!first) && a->tied;
	struct mdl_states s;
	uint64_t in_flight = l->pp - p < m ? l->pp - p : m, embed_flight = in_flight;
	double layers_flight;
	uint32_t vp = mdl_layout_vp(l);
	if (vp > 1) {
		/* chunks of nl / vp layers: Megatron's interleaved warm-up plus the steady one */
		uint64_t units = 2ull * (l->pp - p - 1) + (uint64_t)(vp - 1) * l->pp + 1;
		if (m == l->pp || units > m * vp)
			units = m * vp;
		layers_flight = (double)units * (double)nl / vp;
		embed_flight = units < l->pp ? units : l->pp; /* chunk 0 of the first pp micro-batches */
	} else {
		layers_flight = (double)in_flight * (double)nl;
	}

	struct mdl_states ex;
	mdl_job_states_part(a, j, nl, first || head_copy, last, &s);
	mdl_job_expert_states(a, j, nl, &ex);
	/* ZeRO and the distributed optimizer shard over the data- and context-parallel ranks (a
	 * hybrid layout's shard group of them) */
	mdl_ep_shard(l->zero, mdl_layout_shard(l) * mdl_layout_cp(l), mdl_layout_expert_keep(l), &s,
		     &ex, l->tp, &mem->weights, &mem->gradients, &mem->optimizer);

	uint32_t chunk = mdl_layout_chunk_layers(a, l, p, 0);
	/* context parallelism: every activation of a GPU is its 1/cp of the tokens (the
	 * attention scores too: its queries against all keys) */
	double cp = mdl_layout_cp(l);
	mem->layer_activations = layers_flight * mdl_act_chunk_saved(a, j, l->tp, l->sp, chunk) / cp;
	double kept = mem->layer_activations; /* kept for backward, and the embedding's */
	if (first)
		kept += (double)embed_flight * mdl_act_embed(a, j, l->tp, l->sp) / cp;
	/* a layer's backward: its recompute's working set and the gradients its MLP makes */
	double layer = mdl_act_layer_grads(a, j, l->tp) / cp;
	if (j->recompute == MDL_RC_FULL || j->recompute == MDL_RC_OP)
		layer += mdl_act_layer_working(a, j, l->tp, l->sp) / cp;
	/* the head's saved tensors, and the loss's backward transient on top of them */
	double head = last ? mdl_act_head(a, j, l->tp, l->sp) / cp +
				     mdl_act_head_backward(a, j, l->tp, mdl_layout_cp(l))
			   : 0;
	mem->activations = kept + layer + head;

	mem->other = MDL_CUDA_CONTEXT_BYTES;
	double gathered = 0; /* under ZeRO-3, one layer as a GPU of the layout gathers it */
	if (l->zero == 3 && mdl_layout_shard(l) > 1) {
		struct mdl_states one, one_ex, local;
		mdl_job_states_part(a, j, 1, false, false, &one);
		mdl_job_expert_states(a, j, 1, &one_ex);
		mdl_ep_local(&one, &one_ex, mdl_layout_expert_keep(l), &local);
		gathered = local.weights_bytes / l->tp;
		/* the layer being computed and the prefetched next one, gathered, plus the full
		 * gradient of one layer before its reduce-scatter */
		mem->other += (2.0 * one.weights_bytes + one.gradients_bytes) / l->tp;
	}
	mem->total = mem->weights + mem->gradients + mem->optimizer + mem->activations + mem->other;
	mem->stage = p;
	/* A floor: what the stage holds at once at some point of every step. The weights and the
	 * optimizer state; the gradients only where micro-batches accumulate them (with one, a
	 * step begins without any: zero_grad sets them to None); the CUDA context and, under
	 * ZeRO-3, the one layer being computed, gathered (its expert-parallel share); the
	 * activations kept for backward, with, whichever is larger, the loss's (its saved tensors
	 * and its backward's transient, before any layer's backward) or a layer's backward (its
	 * working set and its gradients, after the loss's are freed). Not the total's sum of all
	 * of them, which the simulated peak can undercut by 10-30 % (full recompute of long
	 * sequences, a large vocabulary, mixture-of-experts layers under ZeRO-3). */
	mem->floor = mem->weights + mem->optimizer + (m > 1 ? mem->gradients : 0) +
		     MDL_CUDA_CONTEXT_BYTES + gathered + kept + (layer > head ? layer : head);
}

void mdl_layout_memory(const struct mdl_arch *a, const struct mdl_job *job,
		       const struct mdl_layout *l, uint64_t m, struct mdl_gpu_memory *mem)
{
	struct mdl_gpu_memory cur;
	struct mdl_job jl = *job; /* the layout's expert TP size gathers the routed tokens */
	const struct mdl_job *j = &jl;

	jl.expert_gather = mdl_layout_etp(l);
	if (m < 1)
		m = 1;
	stage_memory(a, j, l, m, 0, mem);
	double most = mem->floor; /* the most any stage's floor says: each is one of the peak */
	if (mdl_layout_uneven(l)) { /* any stage may hold the most */
		for (uint32_t p = 1; p < l->pp; p++) {
			stage_memory(a, j, l, m, p, &cur);
			most = cur.floor > most ? cur.floor : most;
			if (cur.total > mem->total)
				*mem = cur;
		}
		mem->floor = most;
		return;
	}
	/* the last stage holds the head; under an ends split the second holds a layer more than
	 * the first and one micro-batch less */
	bool ends;
	mdl_layout_splits(a, l->pp, mdl_layout_vp(l), &ends);
	uint32_t more[2] = {ends && l->pp > 2 ? 1 : 0, l->pp - 1};
	for (int i = 0; i < 2; i++) {
		if (more[i] == 0)
			continue;
		stage_memory(a, j, l, m, more[i], &cur);
		most = cur.floor > most ? cur.floor : most;
		if (cur.total > mem->total)
			*mem = cur;
	}
	mem->floor = most;
}
