/* plan — see plan.h. */
#include "plan.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/act.h"
#include "engine.h"
#include "step.h"


uint64_t sim_plan_micro_batches(const struct sim_workload *w, uint32_t dp)
{
	uint64_t per = w->job.micro_batch * dp;

	if (w->grad_accum)
		return w->grad_accum;
	return (w->global_batch + per - 1) / per;
}

static const char *const objective_names[] = {"cost", "time", "power", "gpus"};

int sim_objective_parse(const char *s, enum sim_objective *o, char *err, size_t errlen)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(s, objective_names[i]) == 0) {
			*o = (enum sim_objective)i;
			return 0;
		}
	snprintf(err, errlen, "--objective: unknown objective '%s' (allowed: cost, time, power, gpus)",
		 s);
	return -1;
}

const char *sim_objective_name(enum sim_objective o)
{
	return objective_names[o];
}

/* Every fitting option the search simulated, and the closest misses. */
struct pool {
	struct sim_option *v;
	size_t n, cap;
};

static int keep(struct pool *p, const struct sim_option *o, char *err, size_t errlen)
{
	/* two DRAM sizes searched can buy the same hardware and run the same: keep one */
	for (size_t i = 0; i < p->n; i++) {
		const struct sim_option *q = &p->v[i];
		if (q->policy == o->policy && q->gpus == o->gpus && q->dram == o->dram &&
		    q->flash_count == o->flash_count && q->micro_batch == o->micro_batch &&
		    q->recompute == o->recompute && q->fits == o->fits &&
		    q->step_seconds == o->step_seconds && q->cost_total == o->cost_total)
			return 0;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct sim_option *v = realloc(p->v, cap * sizeof *v);
		if (!v) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = *o;
	return 0;
}

/* Keeps o as the closest miss when it needs less GPU memory than the one so far (the first of
 * equals stays). */
static void closer(struct sim_option *closest, const struct sim_option *o)
{
	if (!closest->gpus || o->peak_gpu < closest->peak_gpu)
		*closest = *o;
}

static double per_token(const struct sim_option *o)
{
	return o->step_seconds / o->tokens_per_step;
}

/* Context parallelism is searched from this sequence length up: below it the keys and values
 * a ring passes outweigh what splitting the sequence saves (Megatron-Core's long-context
 * recipes start CP at 16k-32k tokens) [U: a search bound, not a model constant] */
#define CP_MIN_SEQ 16384
/* and each context-parallel rank keeps at least this many of a sequence's tokens: the attention
 * kernel runs at one rate whatever its length (step_attention_rates), which holds from about 2k
 * tokens up (FlashAttention-2's forward and backward at head dimension 128 within about 10 % of
 * their long-sequence rate from 2k tokens, well below it at 512: Dao 2023, arXiv 2307.08691,
 * sec. 4.1) [C: a search bound] */
#define CP_MIN_RANK_TOKENS 2048

struct cand {
	struct mdl_layout l;
	enum mdl_recompute rc;
	uint32_t rc_layers; /* --recompute-layers (given, or the search's partial recompute) */
	uint64_t mb, m;
	double bound; /* seconds per token no schedule can beat: compute at the sustained rate */
	double mem;   /* analytic per-GPU bytes */
};

/* -1, 0 or 1 as a is below, equal to or above b */
static int cmp3(double a, double b)
{
	return (a > b) - (a < b);
}

static int by_bound(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	return cmp3(x->bound, y->bound);
}

struct search {
	struct eng *eng;
	const struct sim_workload *w;
	const struct mdl_hw *hw;
	const struct sim_econ *e;
	const struct sim_plan_req *req;
	struct pool pool;
	uint64_t *count, *pruned;
	char *err;
	size_t errlen;
	uint32_t fewest; /* the fewest GPUs a GPU-only layout fit on, 0 none */
	struct sim_plan *plan; /* its no_placement filled when the tasks merge */
	bool params_on_gpu;    /* the host-tier task's zero3-offload keeps the parameter shards
				* on the GPUs (--offload-param no) */
	double twin_gpu;       /* and this share of its optimizer sub-groups too (1 - the
				* Twin-Flow ratio: sim_config.twin_gpu) */
	bool misses_unused;    /* the GPU-only search has fit: no closest miss is reported */
};

const struct sim_config *sim_plan_framework(const struct sim_plan_req *r)
{
	static const struct sim_config defaults;
	return r->framework ? r->framework : &defaults;
}

/* Whether a candidate of policy pol and layout l runs --grad-sync last: the framework's setting
 * on FSDP's layouts on the GPUs (ZeRO-2/3, one pipeline stage); the plan's zero3-offload
 * options are DeepSpeed's ZeRO-3 offload, which reduces every micro-batch. */
static bool grad_sync_last(const struct sim_config *f, const struct sim_policy *pol,
			   const struct mdl_layout *l)
{
	return f->grad_sync_last && pol->kind == SIM_GPU_ONLY && l->zero >= 2 && l->pp == 1;
}

bool sim_plan_grad_sync_last(const struct sim_plan_req *req, const struct sim_option *o)
{
	const struct sim_policy *pol = sim_policy_find(o->policy);
	return pol && grad_sync_last(sim_plan_framework(req), pol, &o->layout);
}

/* The configuration of one candidate: the framework's settings (req->framework) that its
 * policy runs with recompute rc, the layout, micro-batches per step and policy the search
 * chose. */
static struct sim_config config_for(const struct sim_plan_req *req, const struct sim_policy *pol,
				    struct mdl_layout l, uint64_t m, enum mdl_recompute rc)
{
	const struct sim_config *f = sim_plan_framework(req);
	struct sim_config c = {l, m, pol};

	c.prefetch = f->prefetch;
	c.no_grad_overlap = f->no_grad_overlap;
	c.no_clip_grad = f->no_clip_grad;
	c.reduce_bucket = f->reduce_bucket;
	c.sub_group = f->sub_group;
	c.param_buffers = f->param_buffers;
	c.param_buffer_size = f->param_buffer_size;
	c.max_in_cpu = f->max_in_cpu;
	/* PyTorch's foreach AdamW and torchtune's activation offloading run on the GPU policy,
	 * the optimizer in backward there and under FSDP's CPU offload (search_all keeps to those
	 * two); Megatron-Core's TP overlap where the layout has sequence parallelism; the swap
	 * pipeline is ZeRO-Infinity's */
	bool gpu = pol->kind == SIM_GPU_ONLY, zinf = strcmp(pol->name, "zero-infinity") == 0;
	c.opt_foreach = f->opt_foreach && gpu;
	/* FSDP FULL_SHARD's: DeepSpeed runs its trace, and below ZeRO-3 nothing is gathered */
	c.bwd_prefetch_post = f->bwd_prefetch_post && gpu && l.zero == 3;
	c.ckpt_outside = f->ckpt_outside && gpu && l.zero == 3; /* FSDP's units */
	c.grad_sync_last = grad_sync_last(f, pol, &l);
	c.tp_comm_overlap = f->tp_comm_overlap && gpu && l.sp;
	/* where the layout and the recompute allow it (a full recompute's candidates run without) */
	c.ep_overlap = f->ep_overlap && gpu && sim_ep_overlap_allows(&l, rc);
	c.shared_overlap = f->shared_overlap && gpu && mdl_layout_ep(&l) > 1;
	c.dispatcher = f->dispatcher;
	c.act_offload = f->act_offload && gpu;
	c.fp8_all_gather = f->fp8_all_gather && gpu && l.zero == 3;
	c.overlap_param_gather = f->overlap_param_gather && gpu && l.zero == 1;
	c.act_offload_layers = f->act_offload_layers;
	c.opt_in_bwd = f->opt_in_bwd;
	c.swap_read_ahead = f->swap_read_ahead && zinf;
	c.swap_write_behind = f->swap_write_behind && zinf;
	c.weights_in_step = f->weights_in_step && strcmp(pol->name, "zero-offload") == 0;
	c.graph_next_fwd = f->graph_next_fwd && l.pp == 1; /* as simulate takes it */
	c.cpu_ckpt = sim_ds_offload(pol->name) ? f->cpu_ckpt : SIM_CPU_CKPT_AUTO;
	c.deepspeed = req->policy != NULL; /* --deepspeed: its ZeRO-3 buffers */
	return c;
}

void sim_plan_rerun(const struct sim_plan_req *req, const struct sim_option *o,
		    struct sim_workload *w, struct mdl_hw *hw, struct sim_config *c)
{
	w->job.micro_batch = o->micro_batch;
	w->job.recompute = o->recompute;
	w->job.recompute_layers = o->recompute_layers;
	w->job.loss = o->loss;
	if (o->kind == SIM_TIERED) { /* as host_one runs them */
		w->job.master = MDL_MASTER_FP32;
		hw->dram = o->dram;
		if (o->flash_count)
			hw->flash_count = o->flash_count;
	}
	*c = config_for(req, sim_policy_find(o->policy), o->layout, o->grad_accum, o->recompute);
	c->recompute_fixed = c->loss_fixed = true; /* the option's own */
	c->params_on_gpu = o->params_on_gpu;
	c->twin_gpu = o->twin_gpu;
}

/* Micro-batch sizes to try: the job's when --batch fixed it, else 1, 2, 4, 8 (within the
 * global batch); at most MICRO_SIZES of them. */
#define MICRO_SIZES 4
static int micro_sizes(const struct search *s, uint32_t dp, uint64_t *mb)
{
	if (s->req->batch_fixed || s->w->grad_accum)
		return mb[0] = s->w->job.micro_batch, 1;
	int n = 0;
	for (uint64_t b = 1; b <= 1u << (MICRO_SIZES - 1); b *= 2)
		if (b == 1 || b * dp <= s->w->global_batch)
			mb[n++] = b;
	return n;
}

/* Appends a candidate to the growing array. 0 ok, -1 out of memory (message in the search). */
static int add_cand(struct search *s, struct cand **c, size_t *nc, size_t *cap,
		    const struct cand *x)
{
	if (*nc == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		struct cand *q = realloc(*c, ncap * sizeof *q);
		if (!q) {
			snprintf(s->err, s->errlen, "out of memory");
			return -1;
		}
		*c = q;
		*cap = ncap;
	}
	(*c)[(*nc)++] = *x;
	return 0;
}

/* Virtual stages per GPU to try with pp stages: 1, and under Megatron's interleaved schedule
 * (micro-batches in groups of pp) each v of 2..8 whose chunks split the layers
 * (mdl_layout_splits). */
static int interleaves(const struct mdl_arch *a, uint32_t pp, uint64_t m, uint32_t *vp)
{
	int n = 0;
	vp[n++] = 1;
	if (pp < 2 || m % pp)
		return n;
	for (uint32_t v = 2; v <= 8; v++)
		if (mdl_layout_splits(a, pp, v, NULL))
			vp[n++] = v;
	return n;
}

static const enum mdl_recompute rcs[] = {MDL_RC_NONE, MDL_RC_SELECTIVE, MDL_RC_FULL};

const char *sim_plan_dp_only(const struct sim_workload *w, const struct sim_plan_req *r)
{
	if (r->dp_only)
		return "--model-parallel no";
	if (r->policy)
		return "--deepspeed: DeepSpeed without Megatron";
	if (sim_plan_framework(r)->opt_in_bwd)
		return "--optimizer-in-backward: torchtune runs it on FSDP alone";
	if (mdl_job_gptq(&w->job))
		return "GPTQ base weights: PEFT and auto-gptq";
	return NULL;
}

/* Whether cp context-parallel ranks can come out of dp_all data-parallel ranks: only for long
 * sequences (CP_MIN_SEQ), in Megatron-Core's 2 x cp chunks of at least CP_MIN_RANK_TOKENS a rank,
 * and where model parallelism is searched at all (sim_plan_dp_only); within a node or across
 * nodes, as Megatron-Core's recipes run it (NeMo's Llama 3.1 405B: tp 8 x cp 2 over two nodes;
 * the simulator's ring takes the network where the group spans nodes). cp 1 always can. */
static bool cp_allowed(const struct search *s, uint32_t dp_all, uint32_t cp)
{
	uint64_t seq = s->w->job.seq;
	return cp == 1 || (!sim_plan_dp_only(s->w, s->req) && dp_all % cp == 0 &&
			   seq >= CP_MIN_SEQ && seq % (2 * cp) == 0 &&
			   seq / cp >= CP_MIN_RANK_TOKENS);
}

/* The expert-parallel degrees to try with experts split over etp of the tp ranks, over the
 * dp x cp x tp / etp ranks that can hold them (mdl_layout_check): 1, and for a MoE model the
 * widest whose all-to-all stays in the node (its members etp apart) and the widest. Returns
 * how many (1 to 3) are in eps. */
static int ep_choices(const struct search *s, uint32_t tp, uint32_t etp, uint32_t dp,
		      uint32_t cp, uint32_t eps[3])
{
	int n = 1;
	uint32_t span = dp * cp * (tp / etp);

	eps[0] = 1;
	for (int wide = 0; wide < 2 && !sim_plan_dp_only(s->w, s->req) && s->w->arch.experts;
	     wide++)
		for (uint32_t d = span; d > 1; d--)
			if (span % d == 0 && s->w->arch.experts % d == 0 &&
			    (wide || etp * d <= s->hw->gpus_per_node)) {
				if (d != eps[n - 1])
					eps[n++] = d;
				break;
			}
	return n;
}

double sim_plan_bound(const struct sim_workload *w, const struct mdl_hw *hw,
		      const struct mdl_layout *l, uint64_t m, double ex_share, bool tp_overlap,
		      bool ep_overlap, bool ep_dedup)
{
	/* with --recompute-layers a chunk's first layers recompute and the rest do not: the
	 * floors take the smallest share any chunk recomputes */
	double share = mdl_layout_rc_share(&w->arch, &w->job, l);
	double eff = step_gemm_efficiency(NULL, hw, w->job.precision);
	double peak = eff * hw->gpu.bf16_flops;
	double hbm = step_hbm_rate(hw);
	uint32_t tp = l->tp, pp = l->pp, cp = mdl_layout_cp(l), dp = l->dp;
	/* no schedule beats: every micro-batch's stage time on the compute stream (the head's
	 * and its loss's share spread over the stages), the pipeline's bubble ((pp - 1)/vp stage
	 * times), and AdamW over the GPU's shard at HBM speed (experts / ep of it unless ZeRO
	 * shards the optimizer); nor, with stages, the last one's compute stream, which runs every
	 * micro-batch through its layers and the whole head between the first micro-batch's
	 * first chunk reaching it through the pp - 1 stages before and the last one's backward
	 * of that chunk returning through them */
	struct mdl_layout l0 = {tp, pp, dp, l->zero, tp > 1, 1, mdl_layout_ep(l), cp, 0, l->etp};
	struct mdl_flops fl;
	mdl_job_flops(&w->arch, &w->job, &fl);
	bool ov = tp_overlap && tp > 1;
	double loss_bwd, loss = mdl_job_loss_traffic(&w->arch, &w->job, tp, &loss_bwd);
	double head = (fl.head_fwd + fl.head_bwd) / (tp * cp) / peak + (loss + loss_bwd) / cp / hbm;
	bool eo = ep_overlap, dd = ep_dedup;
	double stage = step_stage_floor(&w->arch, &w->job, &l0, hw, eff,
					(double)w->arch.layers / pp, share, head / pp, ov, eo, dd);
	double pipe = 0;
	if (pp > 1) {
		uint32_t first = UINT32_MAX; /* the fewest layers a first chunk holds */
		for (uint32_t g = 0; g + 1 < pp; g++) {
			uint32_t n = mdl_layout_chunk_layers(&w->arch, l, g, 0);
			first = n < first ? n : first;
		}
		double last = (double)mdl_layout_stage_layers(&w->arch, l, pp - 1);
		const struct mdl_arch *a = &w->arch;
		double tail =
			step_stage_floor(a, &w->job, &l0, hw, eff, last, share, head, ov, eo, dd);
		double fill =
			step_stage_floor(a, &w->job, &l0, hw, eff, first, share, 0, ov, eo, dd);
		pipe = (double)m * tail + (pp - 1.0) * fill;
	}
	double shard = (double)mdl_job_trainable(&w->arch, &w->job) / (tp * pp) /
		       (l->zero ? dp * cp : 1);
	double adam = shard * mdl_job_update_bytes(&w->job) / hbm;
	if (!l->zero)
		adam *= 1.0 - ex_share * (1.0 - mdl_layout_expert_keep(l));
	double compute = fmax(((double)m + (pp - 1.0) / mdl_layout_vp(l)) * stage + adam, pipe);
	/* the collective stream cannot finish before its own data-parallel traffic */
	return fmax(compute, step_dp_floor(&w->arch, &w->job, l, hw, m));
}

/* Analytic bytes past which a candidate is not simulated, as a multiple of the GPU's memory:
 * cand_memory is a floor of the simulated peak within a few per cent (over 356,166 candidates of
 * 276 plans, 13 models on four GPUs and ten framework settings, it came at most 5.9 % above:
 * Gemma-2-9B with the chunked loss and partial recompute; tests/test_plan.c keeps it within 5 %
 * over a grid), and the 10 % guards that [U: a search guard, not a model constant: a wider one
 * only simulates more] */
#define CAND_MEMORY_SLACK 1.1

/* A candidate's analytic per-GPU bytes, m micro-batches a step: its floor (the memory bound
 * prunes by it, so that it prunes no candidate that fits) or its estimate of the peak
 * (mdl_gpu_memory: floor, total), less what its settings move off the GPU: a paged optimizer's
 * states give way to the rest (sim_run pages them out), gradients stepped in backward and
 * offloaded activations leave it, the weights gathered in FP8 take half. */
/* The layers of a chunk of n that offload their activations: all of them, or under
 * --activation-offload-layers the chunk's first ones (step.c, block_offloaded). */
static uint32_t offloading_layers(const struct sim_config *f, uint32_t n)
{
	return f->act_offload_layers && f->act_offload_layers < n ? f->act_offload_layers : n;
}

static double cand_memory(const struct search *s, const struct mdl_gpu_memory *gm,
			  const struct mdl_layout *l, uint64_t m, bool as_floor)
{
	const struct sim_config *f = sim_plan_framework(s->req);
	/* the share of a chunk's layers that offload */
	uint32_t n = mdl_layout_chunk_layers(&s->w->arch, l, 0, 0);
	double off = n ? (double)offloading_layers(f, n) / n : 1;
	/* --fp8-all-gather: the layers ZeRO-3 holds gathered, in FP8 (the floor's one, the
	 * estimate's two) */
	bool fp8_gather = f->fp8_all_gather && l->zero == 3 && l->dp > 1;
	double gathered = (as_floor ? 1.0 : 2.0) *
			  step_fp8_gathered_less(&s->w->arch, &s->w->job, fp8_gather) / l->tp;
	double grads = as_floor && m == 1 ? 0 : gm->gradients; /* what the bytes hold of them */
	return (as_floor ? gm->floor : gm->total) -
	       (mdl_optimizer_paged(s->w->job.optimizer) ? gm->optimizer : 0) -
	       (f->opt_in_bwd ? grads : 0) - (f->act_offload ? off * gm->layer_activations : 0) -
	       gathered;
}

/* The offloaded tensors of a step of m micro-batches: each stage's micro-batches send their
 * offloaded layers' saved tensors down the stage GPU's link in forward and bring them back up
 * for backward (step.c: the "d2h checkpoint" and "h2d checkpoint" copies, of each chunk's
 * first --activation-offload-layers where set) through every resource on their path
 * (host_copy_on): the link's direction and the pair's rate where the link moves less both ways
 * at once (mdl_host_link_bidir), the GPU's own, and the GPU's shares of its PCIe switch's
 * uplink and of the host's DRAM bandwidth, which every stage's copies share. On a stage the
 * two directions never overlap: a backward's copies come up only after every copy its stage
 * sent down before it (step.c: the stage's last one down), and the next forward, whose copies
 * go down, follows on the compute stream the backward their coming up fed; so each direction
 * takes the stage's bytes at its path's slowest rate, one after the other, and the shared
 * resources carry every stage's. The embedding's tensors are left out; 0 under a partial
 * recompute, whose layers save unlike amounts. */
double sim_plan_offload_bound(const struct sim_workload *w, const struct mdl_hw *hw,
			      const struct sim_config *f, const struct mdl_layout *l, uint64_t m)
{
	if (!f->act_offload || w->job.recompute_layers)
		return 0;
	const struct mdl_arch *a = &w->arch;
	double first = 0, all = 0; /* offloaded layers: the first stage's, every stage's */
	for (uint32_t g = 0; g < l->pp; g++)
		for (uint32_t c = 0; c < mdl_layout_vp(l); c++) {
			double off = offloading_layers(f, mdl_layout_chunk_layers(a, l, g, c));
			first += g == 0 ? off : 0;
			all += off;
		}
	struct mdl_job j = w->job;
	j.expert_gather = mdl_layout_etp(l);
	/* what one offloaded layer sends down (and brings up) over the step's micro-batches */
	double per_layer = (double)m * mdl_act_layer_saved(a, &j, l->tp, l->sp) / mdl_layout_cp(l);
	double own = first * per_layer, shared = all * per_layer; /* bytes each way */
	double down = mdl_host_link_dir(hw, false), up = mdl_host_link_dir(hw, true);
	double both = mdl_host_link_bidir(hw), k = step_node_gpus(hw, mdl_layout_gpus(l));
	double pair = both > 0 && both < down + up ? both : INFINITY;
	double sw = hw->host.switch_uplink > 0 && hw->host.gpus_per_switch > 1
			    ? hw->host.switch_uplink / fmin(k, hw->host.gpus_per_switch)
			    : INFINITY; /* each direction's */
	double dram = hw->host.dram_bandwidth > 0 ? hw->host.dram_bandwidth / k : INFINITY;
	double path = fmin(pair, fmin(sw, dram));
	return fmax(own / fmin(down, path) + own / fmin(up, path),
		    fmax(shared / sw, 2.0 * shared / dram));
}

/* Megatron-Core's partial recompute (--recompute-layers) for a layout whose full recompute
 * is estimated to need `full` bytes of the GPU (cand_memory's estimate): the fewest layers of a
 * chunk that must recompute for the rest to keep their activations within the GPU (the
 * estimate is linear in them: measured at one), or 0 where full recompute does not fit, where
 * none would, or a chunk has one layer. Megatron's alone: not where the search keeps to data
 * parallelism (sim_plan_dp_only). */
static uint32_t partial_layers(const struct search *s, const struct sim_workload *cw,
			       const struct mdl_layout *l, uint64_t m, double full)
{
	uint32_t c = mdl_layout_chunk_layers(&cw->arch, l, 0, 0);
	double room = s->hw->gpu.memory;
	if (c < 2 || full > room || sim_plan_dp_only(cw, s->req))
		return 0;
	struct sim_workload one = *cw;
	struct mdl_gpu_memory gm;
	one.job.recompute_layers = 1;
	mdl_layout_memory(&one.arch, &one.job, l, m, &gm);
	double per = (cand_memory(s, &gm, l, m, false) - full) / (c - 1); /* a layer left out adds */
	if (!(per > 0))
		return 0;
	double out = floor((room - full) / per); /* layers that may keep their activations */
	/* where every layer may keep them, no recompute is the candidate (and a faster one) */
	return out >= c ? 0 : out >= c - 1 ? 1 : c - (uint32_t)out;
}

/* Adds layout l's candidate under the job cw runs (its recompute mode and micro-batch, m
 * micro-batches of `tokens` a step in all), and where that recomputes every layer, Megatron-
 * Core's partial recompute of it too (partial_layers). 0 ok, -1 out of memory. */
static int add_layout(struct search *s, const struct sim_workload *cw, const struct mdl_layout *l,
		      uint64_t m, double tokens, double ex_share, struct cand **c, size_t *nc,
		      size_t *cap)
{
	const struct sim_config *f = sim_plan_framework(s->req);
	bool ov = f->tp_comm_overlap;
	/* the shared experts beside the all-to-alls: a stage takes at least the longer of its
	 * compute and its all-to-alls, as under --ep-overlap (compute) */
	bool eo = (f->ep_overlap && sim_ep_overlap_allows(l, cw->job.recompute)) ||
		  (f->shared_overlap && mdl_layout_ep(l) > 1);
	bool dd = f->dispatcher != SIM_DISPATCH_ALLTOALL;
	struct mdl_gpu_memory gm;
	mdl_layout_memory(&cw->arch, &cw->job, l, m, &gm);
	double mem = cand_memory(s, &gm, l, m, true);
	/* past the memory bound a candidate is never simulated (best_layout): its time bound
	 * would only sort it, so it goes last unbounded */
	double bound = mem > CAND_MEMORY_SLACK * s->hw->gpu.memory
			       ? INFINITY
			       : fmax(sim_plan_bound(cw, s->hw, l, m, ex_share, ov, eo, dd),
				      sim_plan_offload_bound(cw, s->hw, f, l, m)) /
				     tokens;
	struct cand x = {*l, cw->job.recompute, cw->job.recompute_layers, cw->job.micro_batch, m,
			 bound, mem};
	if (add_cand(s, c, nc, cap, &x))
		return -1;
	if (x.rc != MDL_RC_FULL || s->req->recompute_fixed)
		return 0;
	x.rc_layers = partial_layers(s, cw, l, m, cand_memory(s, &gm, l, m, false));
	if (!x.rc_layers)
		return 0;
	struct sim_workload pw = *cw;
	pw.job.recompute_layers = x.rc_layers;
	mdl_layout_memory(&pw.arch, &pw.job, l, m, &gm);
	x.mem = cand_memory(s, &gm, l, m, true);
	x.bound = sim_plan_bound(&pw, s->hw, l, m, ex_share, ov, false, dd) / tokens;
	return add_cand(s, c, nc, cap, &x);
}

/* The candidates of one tp x pp x cp split over dp data-parallel ranks: each micro-batch size,
 * ZeRO stage, recompute mode, expert-parallel degree and interleaving, with the time per token
 * no schedule can beat and the analytic memory. 0 ok, -1 out of memory. */
static int layout_cands(struct search *s, uint32_t tp, uint32_t pp, uint32_t cp, uint32_t dp,
			double ex_share, struct cand **c, size_t *nc, size_t *cap)
{
	const struct sim_workload *w = s->w;
	struct sim_workload cw = *w;
	bool ds = s->req->policy != NULL; /* DeepSpeed alone: its one ZeRO stage */
	uint64_t mbs[MICRO_SIZES];
	/* a MoE model's experts split over the tp ranks, and under tp whole on each (Megatron-Core's
	 * expert tp 1, MoE parallel folding: no gather of the routed tokens, the expert-parallel
	 * group over the TP ranks too), each with its expert-parallel degrees */
	uint32_t eps[2][3], etps[2] = {tp, 1};
	int nep[2], netp = w->arch.experts && tp > 1 && !sim_plan_dp_only(w, s->req) ? 2 : 1;
	for (int x = 0; x < netp; x++)
		nep[x] = ep_choices(s, tp, etps[x], dp, cp, eps[x]);

	/* every option trains the global batch asked: more data-parallel ranks than sequences
	 * would change the recipe */
	if (!w->grad_accum && dp > w->global_batch)
		return 0;
	int nmb = micro_sizes(s, dp, mbs);
	/* the recompute modes: the one --recompute fixed (any, per-op SAC included), else the
	 * three the search compares */
	const enum mdl_recompute *modes = s->req->recompute_fixed ? &w->job.recompute : rcs;
	int nrc = s->req->recompute_fixed ? 1 : (int)(sizeof rcs / sizeof rcs[0]);
	/* ZeRO-2/3 run without pipeline or context parallelism (Megatron's distributed optimizer
	 * is stage 1) */
	uint32_t zmax = dp * cp == 1 ? 0u : pp > 1 || cp > 1 ? 1u : 3u;
	if (mdl_job_gptq(&w->job) && zmax > 2)
		zmax = 2; /* GPTQ's buffers: no ZeRO-3 (sim_gptq_runs) */
	for (int b = 0; b < nmb; b++)
		for (uint32_t zero = 0; zero <= zmax; zero++) {
			if (ds && s->req->zero >= 0 && dp > 1 && zero != (uint32_t)s->req->zero)
				continue;
			for (int r = 0; r < nrc; r++) {
				cw.job.recompute = modes[r];
				cw.job.micro_batch = mbs[b];
				uint64_t m = sim_plan_micro_batches(&cw, dp);
				uint32_t vps[8];
				int nvp = interleaves(&w->arch, pp, m, vps);
				double tokens = (double)m * dp * mbs[b] * w->job.seq;
				for (int x = 0; x < netp; x++)
					for (int e = 0; e < nep[x]; e++)
						for (int v = 0; v < nvp; v++) {
							struct mdl_layout l = {
							    tp,	    pp,	     dp, zero, tp > 1,
							    vps[v], eps[x][e], cp, 0,    etps[x]};
							if (add_layout(s, &cw, &l, m, tokens,
								       ex_share, c, nc, cap))
								return -1;
						}
			}
		}
	return 0;
}

/*
 * The fastest fitting GPU-only layout on exactly n GPUs, kept in the pool; *found says whether
 * one fits. A miss with the smallest GPU peak goes to *closest.
 */
static int best_layout(struct search *s, uint32_t n, bool *found, struct sim_option *closest)
{
	const struct sim_workload *w = s->w;
	const struct mdl_hw *hw = s->hw;
	struct sim_workload cw = *w;
	struct sim_option o, best;
	struct cand *c = NULL;
	size_t nc = 0, cap = 0;
	int rc = 0;

	*found = false;
	bool dp_only = sim_plan_dp_only(w, s->req) != NULL;
	/* the routed experts' share of the trainable parameters (what expert parallelism splits) */
	struct mdl_states ex;
	mdl_job_expert_states(&w->arch, &w->job, w->arch.layers, &ex);
	double ex_share = (double)ex.trainable_params /
			  fmax(1.0, (double)mdl_job_trainable(&w->arch, &w->job));
	for (uint32_t tp = 1; tp <= (dp_only ? 1 : hw->gpus_per_node) && tp <= n; tp *= 2) {
		if (n % tp || w->arch.heads % tp || w->arch.kv_heads % tp)
			continue;
		for (uint32_t pp = 1; pp <= (dp_only ? 1 : w->arch.layers) && pp <= SIM_MAX_PP &&
				      tp * pp <= n;
		     pp++) {
			if ((n / tp) % pp || !mdl_layout_splits(&w->arch, pp, 1, NULL))
				continue;
			uint32_t dp_all = n / (tp * pp);
			for (uint32_t cp = 1; cp <= dp_all; cp *= 2)
				if (cp_allowed(s, dp_all, cp) &&
				    layout_cands(s, tp, pp, cp, dp_all / cp, ex_share, &c, &nc, &cap)) {
					free(c);
					return -1;
				}
		}
	}
	if (nc) /* no candidate at all (none of its splits divides): c is NULL */
		qsort(c, nc, sizeof *c, by_bound);
	size_t least = 0; /* the candidate with the smallest analytic memory */
	for (size_t i = 0; i < nc; i++)
		if (c[i].mem < c[least].mem)
			least = i;
	for (size_t i = 0; i < nc; i++) {
		if (*found && c[i].bound >= per_token(&best)) {
			*s->pruned += nc - i;
			break;
		}
		/* past the analytic memory bound: not simulated (the closest miss is below) */
		if (c[i].mem > CAND_MEMORY_SLACK * hw->gpu.memory) {
			(*s->pruned)++;
			continue;
		}
		cw.job.recompute = c[i].rc;
		cw.job.recompute_layers = c[i].rc_layers;
		cw.job.micro_batch = c[i].mb;
		struct sim_config cf =
		    config_for(s->req, sim_policy_find("gpu"), c[i].l, c[i].m, c[i].rc);
		cf.recompute_fixed = true;
		/* once a layout fits, a miss only needs to be known as one: its run stops where
		 * the GPU overflows (the miss reported is the closest before any fit) */
		cf.stop_unfit = *found || s->misses_unused;
		if (sim_run(s->eng, &cw, hw, s->e, &cf, &o, s->err, s->errlen)) {
			rc = -1;
			break;
		}
		(*s->count)++;
		if (o.fits && (!*found || per_token(&o) < per_token(&best))) {
			best = o;
			*found = true;
		}
		if (!o.fits)
			closer(closest, &o);
	}
	/* nothing fits: the layout that comes closest says what overflows, and by how much */
	if (rc == 0 && !*found && nc) {
		cw.job.recompute = c[least].rc;
		cw.job.recompute_layers = c[least].rc_layers;
		cw.job.micro_batch = c[least].mb;
		struct sim_config cf =
		    config_for(s->req, sim_policy_find("gpu"), c[least].l, c[least].m, c[least].rc);
		cf.recompute_fixed = true;
		if (sim_run(s->eng, &cw, hw, s->e, &cf, &o, s->err, s->errlen))
			rc = -1;
		else
			closer(closest, &o);
		(*s->count)++;
	}
	free(c);
	if (rc == 0 && *found)
		rc = keep(&s->pool, &best, s->err, s->errlen);
	return rc;
}

/* The shortest runtime of the fitting GPU-only options kept so far; INFINITY when none. */
static double fastest_gpu_only(const struct pool *p)
{
	double t = INFINITY;
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].kind == SIM_GPU_ONLY && p->v[i].fits && p->v[i].runtime_seconds < t)
			t = p->v[i].runtime_seconds;
	return t;
}

/* The power of two nearest m by ratio, the larger on a tie: the GPU counts a search steps to
 * beyond the fewest that fit. A count of 2^k GPUs splits a global batch of 2^j sequences into
 * whole micro-batches on every data-parallel rank (2x the fewest, 176 GPUs for 405B at 8k, took
 * 88 ranks, which train 176 sequences where 128 were asked), and it is how clusters are
 * allocated [U: a search choice, not a model constant]. */
static uint32_t pow2_near(uint32_t m)
{
	uint32_t lo = 1;
	while (lo <= m / 2)
		lo *= 2;
	return lo == m || (double)m / lo < 2.0 * lo / m ? lo : 2 * lo;
}

static int gpu_only(struct search *s)
{
	if (s->req->policy && strcmp(s->req->policy, "gpu") != 0)
		return 0; /* --deepspeed chose an offload policy */
	const struct sim_plan_req *req = s->req;
	uint32_t gpn = s->hw->gpus_per_node;
	struct sim_option closest = {0};
	bool found = false;
	uint32_t n, n0 = 0;

	if (req->counts) {
		for (int i = 0; i < req->ncounts; i++) {
			struct sim_option miss = {0};
			if (best_layout(s, req->counts[i], &found, &miss))
				return -1;
			if (!found && miss.gpus && keep(&s->pool, &miss, s->err, s->errlen))
				return -1;
		}
		return 0;
	}
	/* a host without a network stays one node (sim_run refuses more) */
	uint32_t cap = req->max_gpus;
	if (!(s->hw->host.network_per_gpu > 0) && cap > gpn)
		cap = gpn;
	for (n = 1; n <= cap; n = n < gpn ? n + 1 : n + gpn) {
		if (best_layout(s, n, &found, &closest))
			return -1;
		if (found) {
			n0 = n;
			s->fewest = n;
			break;
		}
	}
	if (!found)
		return closest.gpus ? keep(&s->pool, &closest, s->err, s->errlen) : 0;
	/* faster and pricier: the powers of two nearest 2x, 4x, 8x the fewest (pow2_near), in
	 * whole nodes beyond one; then, while a --deadline is missed, doubling on as long as each
	 * doubling still shortens the run */
	s->misses_unused = true;
	uint32_t last = n0;
	double fastest = fastest_gpu_only(&s->pool);
	for (uint32_t k = 2;; k *= 2) {
		bool chasing = req->deadline > 0 && fastest > req->deadline;
		if (k > 8 && !chasing)
			break;
		n = pow2_near(k > 8 ? 2 * last : n0 * k);
		if (n > gpn)
			n = (n + gpn - 1) / gpn * gpn;
		if (n > cap || n <= last)
			break;
		if (best_layout(s, n, &found, &closest))
			return -1;
		last = n;
		double f = fastest_gpu_only(&s->pool);
		if (k > 8 && !(f < fastest))
			break; /* more GPUs no longer buy time */
		fastest = f;
	}
	return 0;
}

/* One host-tier configuration; kept when it fits. `fit_only`: the caller reads o only if it
 * fits (no closest miss, no DRAM it asked for), so a candidate stops where a GPU overflows
 * (sim_config.stop_unfit). 0 simulated, 1 the policy has no placement for the fixed recompute
 * (no option: o does not fit), -1 error. */
static int host_one(struct search *s, const struct sim_policy *pol, uint32_t n, uint64_t mb,
		    const struct mdl_hw *hw, bool fit_only, struct sim_option *o)
{
	struct sim_workload cw = *s->w;
	cw.job.micro_batch = mb;
	/* Megatron-Core's partial recompute and an optimizer keeping master remainders are the
	 * GPU-only search's */
	cw.job.recompute_layers = 0;
	cw.job.master = MDL_MASTER_FP32;
	struct mdl_layout l = {1, 1, n, pol->zero >= 0 ? (uint32_t)pol->zero : 0u, false};
	struct sim_config cf =
	    config_for(s->req, pol, l, sim_plan_micro_batches(&cw, n), cw.job.recompute);
	cf.recompute_fixed = s->req->recompute_fixed;
	cf.loss_fixed = s->req->loss_fixed;
	cf.params_on_gpu = s->params_on_gpu;
	cf.twin_gpu = s->params_on_gpu ? s->twin_gpu : 0;
	cf.stop_unfit = fit_only;
	int rc = sim_run(s->eng, &cw, hw, s->e, &cf, o, s->err, s->errlen);
	if (rc > 0) { /* no placement for the fixed recompute: not an option */
		*o = (struct sim_option){.fits = false};
		return 1;
	}
	if (rc < 0)
		return -1;
	(*s->count)++;
	return o->fits ? keep(&s->pool, o, s->err, s->errlen) : 0;
}

/* 1 - the Twin-Flow ratio R that keeps g of a shard's n optimizer sub-groups on the GPU, R the
 * shortest decimal (at most 6 digits) whose int((1 - R) x n) is g: any R in
 * (1 - (g + 1) / n, 1 - g / n], as step_twin_gpu_share reads it back; 0 where none is. */
static double twin_ratio(const struct sim_config *f, double shard, double n, double g)
{
	struct sim_config c = {.sub_group = f->sub_group};
	double want = g * step_sub_group(f) / shard;
	for (int d = 1; d <= 6; d++) {
		double unit = pow(10, -d), top = floor((1 - g / n) / unit);
		for (double k = top; k >= top - 1 && k * unit > 1 - (g + 1) / n; k--) {
			char v[16];
			snprintf(v, sizeof v, "%.*f", d, k * unit);
			c.twin_gpu = 1 - strtod(v, NULL);
			if (step_twin_gpu_share(&c, shard) == want)
				return c.twin_gpu;
		}
	}
	return 0;
}

/* Runs host_twin makes for one option at most, a sub-group more or fewer each [U: a bound on
 * work, not a model constant] */
#define TWIN_TRIES 3

/*
 * DeepSpeed's advice for Twin-Flow (Megatron-DeepSpeed's offload_pp tutorial): the ratio as low
 * as the GPUs' memory allows. Beside a fitting zero3-offload run with the parameters on the GPUs
 * (`base`, the whole optimizer on the CPU): the most of a rank's optimizer sub-groups its GPU
 * has room for, each taking its fp32 master weights, moments and gradients there (the
 * optimizer's and the host gradients' bytes a parameter) in the allocator's reserve, less the
 * foreach temporary of one at the step; run at the ratio that keeps them (twin_ratio), then
 * with a sub-group more while the runs fit (the estimate is a floor where the policy's other
 * variant, activation checkpoints in DRAM, frees room), or fewer until one fits. Each run that
 * fits is kept (host_one; the front keeps the ones another does not beat). At least one whole
 * sub-group stays on the CPU: with less (a last sub-group of a few parameters) it is ZeRO-3 on
 * the GPUs in all but name, the GPU-only search's. 0 ok, -1 error.
 */
static int host_twin(struct search *s, const struct sim_policy *pol, uint32_t n, uint64_t mb,
		     const struct mdl_hw *hw, const struct sim_option *base)
{
	struct mdl_states st;
	mdl_job_states(&s->w->arch, &s->w->job, &st);
	const struct sim_config *f = sim_plan_framework(s->req);
	const struct step_place none = {0}; /* the host gradients' bytes of a plain placement */
	double shard = (double)st.trainable_params / n, sg = step_sub_group(f);
	double groups = ceil(shard / sg);
	double per = (st.optimizer_bytes / fmax(1.0, (double)st.trainable_params) +
		      step_host_grad_bytes(&none)) *
		     (1 + SIM_ALLOC_SLACK);
	double temp = mdl_job_state_bytes(&s->w->job) * fmin(sg, shard) * (1 + SIM_ALLOC_SLACK);
	double room = hw->gpu.memory - base->peak_gpu - temp;
	double top = floor(shard / sg) - 1; /* one whole sub-group left on the CPU */
	double g = fmax(1, fmin(top, floor(room / (sg * per))));
	int dir = 0; /* +1 climbing while the runs fit, -1 descending until one does */
	for (int k = 0; k < TWIN_TRIES && g >= 1 && g <= top; k++, g += dir) {
		double twin = twin_ratio(f, shard, groups, g);
		if (!(twin > 0))
			return 0; /* too many sub-groups for a ratio of 6 digits */
		struct sim_option x;
		s->twin_gpu = twin;
		int rc = host_one(s, pol, n, mb, hw, true, &x);
		s->twin_gpu = 0;
		if (rc < 0)
			return -1;
		if (dir == 0)
			dir = x.fits ? 1 : -1;
		else if (x.fits != (dir > 0))
			break; /* climbing, one more did not fit; descending, one fits */
	}
	return 0;
}

/* The fewest drives of hw's kind that hold what option o keeps on flash (0: drives of no
 * capacity hold nothing). */
static double drives_to_hold(const struct sim_option *o, const struct mdl_hw *hw)
{
	return hw->flash.capacity > 0 ? ceil(o->peak_flash / hw->flash.capacity) : 0;
}

/* The drive count after c on the ladder to a full bay: doubling, the bay count last. */
static uint32_t next_drives(uint32_t c, uint32_t bays)
{
	return c < bays && 2 * c > bays ? bays : 2 * c;
}

/* The host-tier configurations of one policy on n GPUs: micro-batch sizes, DRAM sizes and
 * drive counts, each stopping where the larger ones cannot fit or cannot help. DRAM-first
 * (tiered-dram) keeps more of the state off the drives the more DRAM it has, so where neither
 * of the two smallest sizes that fit writes its drives within their rating, its search goes on
 * up the sizes, with a full bay of drives (the fewest writes per drive) unless --flash fixed
 * the count, until one does (the recommendation takes such an option first: pick). Fitting
 * options go to s->pool, the closest miss to *closest. 0 ok, 1 the policy has no placement for
 * the fixed recompute, -1 error. */
static int host_count(struct search *s, const struct sim_policy *pol, uint32_t n,
		      const double *drams, int nd, struct sim_option *closest)
{
	const struct mdl_hw *base = s->hw;
	uint64_t mbs[MICRO_SIZES];
	int nmb = micro_sizes(s, n, mbs);
	/* the tiered placements fill DRAM to its size, leaving room for what the step stages
	 * there: an option of theirs buys the size it ran with, not a smaller one its peak would
	 * fit, where the fill would have placed otherwise (a run at that size is its own option);
	 * and only they gain from more DRAM (below) */
	bool fills = strncmp(pol->name, "tiered", 6) == 0;
	/* A GPU, or the host's largest DRAM, too small for one micro-batch is too small for the
	 * larger ones (sizes ascend; what a placement needs of either grows with the tokens) */
	bool full = false;
	for (int b = 0; b < nmb; b++) {
		if (full) {
			*s->pruned += (uint64_t)nd;
			continue;
		}
		int fits = 0, ran = 0;
		bool within = false, climb = strcmp(pol->name, "tiered-dram") == 0;
		for (int d = 0; d < nd && (fits < 2 || (climb && !within)); d++) {
			struct mdl_hw hw = *base;
			struct sim_option o;
			hw.dram = drams[d];
			hw.dram_set |= fills;
			if (fits >= 2 && !s->req->flash_fixed) /* a full bay spreads the writes */
				hw.flash_count = (uint32_t)hw.host.flash_bays;
			ran++;
			int rc = host_one(s, pol, n, mbs[b], &hw, false, &o);
			if (rc)
				return rc; /* 1: the policy has no such option at all */
			/* the drives too few to hold what it keeps there: the fewest that do, where
			 * the bays take them (the ladder below starts from them) */
			double hold = !o.fits && strncmp(o.overflow, "flash", 5) == 0 &&
						      !s->req->flash_fixed
					      ? drives_to_hold(&o, &hw)
					      : 0;
			if (hold > hw.flash_count && hold <= hw.host.flash_bays) {
				closer(closest, &o);
				hw.flash_count = (uint32_t)hold;
				if (host_one(s, pol, n, mbs[b], &hw, false, &o) < 0)
					return -1;
			}
			if (!o.fits) {
				closer(closest, &o);
				if (strncmp(o.overflow, "dram", 4) == 0) {
					/* more DRAM may fit: skip the sizes below the least any
					 * of its placements asked for */
					while (d + 1 < nd && drams[d + 1] < o.dram_need)
						d++;
					full = d + 1 == nd && !fits;
					continue;
				}
				full = strncmp(o.overflow, "gpu", 3) == 0;
				break;
			}
			fits++;
			within |= !o.flash_over_rating;
			if (s->params_on_gpu && !s->req->ratio_fixed && !o.stopped &&
			    host_twin(s, pol, n, mbs[b], &hw, &o) < 0)
				return -1;
			/* the drives: from the fewest that hold it, doubling, to a full bay (the
			 * count it ran with is simulated already); a count that does not fit is no
			 * option, and no closer miss than this one; past two sizes, none */
			if (o.peak_flash > 0 && !s->req->flash_fixed && fits <= 2) {
				uint32_t few = (uint32_t)drives_to_hold(&o, &hw);
				uint32_t bays = (uint32_t)hw.host.flash_bays;
				uint32_t ran_with = hw.flash_count;
				struct sim_option x;
				for (uint32_t c = few ? few : 1; c <= bays; c = next_drives(c, bays)) {
					if (c == ran_with)
						continue;
					hw.flash_count = c;
					if (host_one(s, pol, n, mbs[b], &hw, true, &x) < 0)
						return -1;
					within |= x.fits && !x.flash_over_rating;
				}
			}
			/* more DRAM helps only the tiered policies, and only when they spilled to
			 * flash for want of it: otherwise every placement at a larger size is this
			 * one's, with dearer DRAM (tiered's cache keeps the states on flash by
			 * design) */
			if (!fills || o.peak_flash == 0 || !o.dram_short)
				break;
		}
		*s->pruned += (uint64_t)(nd - ran); /* DRAM sizes that could not fit or help */
	}
	return 0;
}

/* One task of the search, run on a worker with its own engine: the GPU-only search (pol NULL;
 * the longest, so the first taken), or one (policy, GPU count) of the host-tier search. Its
 * options, closest miss and count merge into the search in task order, so the result does not
 * depend on the thread count. */
struct host_task {
	const struct sim_policy *pol;
	uint32_t n;
	bool params_on_gpu; /* zero3-offload with the optimizer alone offloaded */
	struct pool kept;
	struct sim_option closest;
	uint64_t count, pruned;
	uint32_t fewest; /* the GPU-only task's search.fewest */
	int rc;          /* 0, -1, or 1: the policy has no placement (host_count) */
	char err[512];
};

/* Workers of the search at most (a bound on threads, not a model constant). */
#define PLAN_MAX_WORKERS 64

struct host_work {
	const struct search *s;
	const double *drams;
	int nd;
	struct host_task *t;
	size_t nt;
	size_t next; /* atomic */
};

static void *host_worker(void *arg)
{
	struct host_work *hw = arg;
	struct eng *e = eng_new();
	if (e) /* the search reads peaks; reports re-simulate */
		eng_keep_history(e, false);
	for (;;) {
		size_t i = __atomic_fetch_add(&hw->next, 1, __ATOMIC_RELAXED);
		if (i >= hw->nt)
			break;
		struct host_task *t = &hw->t[i];
		if (!e) {
			t->rc = -1;
			snprintf(t->err, sizeof t->err, "out of memory");
			continue;
		}
		struct search ts = *hw->s; /* read-only inputs; its own engine, pool and count */
		ts.eng = e;
		ts.pool = (struct pool){0};
		ts.count = &t->count;
		ts.pruned = &t->pruned;
		ts.err = t->err;
		ts.errlen = sizeof t->err;
		ts.params_on_gpu = t->params_on_gpu;
		ts.twin_gpu = sim_plan_framework(hw->s->req)->twin_gpu; /* host_one: opt alone */
		t->rc = t->pol ? host_count(&ts, t->pol, t->n, hw->drams, hw->nd, &t->closest)
			       : gpu_only(&ts);
		t->fewest = ts.fewest;
		t->kept = ts.pool;
	}
	eng_free(e);
	return NULL;
}

/* The GPU-only and the host-tier searches, on req->threads workers. */
static int search_all(struct search *s, struct sim_option *closest)
{
	static const char *const pols[SIM_PLAN_HOST_POLICIES] = {
		"tiered", "tiered-dram", "zero-infinity", "zero3-offload", "zero-offload"};
	const struct mdl_hw *base = s->hw;
	/* the host tiers are searched on one node, or --tier-nodes: its GPUs as --gpus-per-node
	 * sets them (the host's slots by default), not the slots a smaller node leaves empty, and
	 * no more than --max-gpus, which bounds every option */
	uint32_t slots = base->gpus_per_node ? base->gpus_per_node : (uint32_t)base->host.gpu_slots;
	s->plan->host_tier_nodes = s->req->tier_nodes > 1 ? s->req->tier_nodes : 1;
	slots *= s->plan->host_tier_nodes;
	if (s->req->max_gpus && slots > s->req->max_gpus)
		slots = s->req->max_gpus;
	s->plan->host_tier_gpus = slots;
	uint32_t counts[16];
	int nn = 0;
	double drams[MDL_DRAM_SIZES];
	int nd = 0;

	if (s->req->counts) {
		for (int i = 0; i < s->req->ncounts && nn < 16; i++)
			if (s->req->counts[i] <= slots)
				counts[nn++] = s->req->counts[i];
	} else {
		for (uint32_t n = 1; n < slots && nn < 15; n *= 2)
			counts[nn++] = n;
		counts[nn++] = slots;
	}
	if (s->req->dram_fixed) {
		drams[nd++] = base->dram;
	} else {
		/* the sizes the host's DIMMs make, and its default, ascending */
		nd = mdl_dram_sizes(&base->host, drams);
	}
	/* zero3-offload twice, as DeepSpeed runs it with offload_param and without (the optimizer
	 * alone offloaded, the commoner config), unless --offload-param or --deepspeed said which */
	struct host_task t[1 + (sizeof pols / sizeof pols[0] + 1) * 16];
	size_t nt = 1;
	t[0] = (struct host_task){.pol = NULL};
	for (size_t p = 0; p < sizeof pols / sizeof pols[0]; p++) {
		if (s->req->policy && strcmp(s->req->policy, pols[p]) != 0)
			continue; /* --deepspeed chose another */
		if (strcmp(pols[p], "zero-infinity") == 0 && base->flash_count == 0)
			continue;
		if (mdl_job_gptq(&s->w->job) && !sim_gptq_runs(sim_policy_find(pols[p]), 2))
			continue; /* GPTQ's buffers stay on the GPU */
		bool z3 = strcmp(pols[p], "zero3-offload") == 0;
		bool in_bwd = sim_plan_framework(s->req)->opt_in_bwd;
		if (in_bwd && !z3)
			continue; /* the optimizer in backward: FSDP's CPU offload alone */
		/* a --deepspeed config's parameter swap buffers must hold the largest parameter
		 * partition, which DeepSpeed asserts: fewer ranks than that takes are no option
		 * (all of them too few: the first stays, and its refusal says why) */
		double buf = sim_plan_framework(s->req)->param_buffer_size;
		int first = 0;
		while (strcmp(pols[p], "zero-infinity") == 0 && buf > 0 && first < nn - 1 &&
		       buf < step_param_partition(&s->w->arch, counts[first]))
			first++;
		for (int on_gpu = 0; on_gpu <= (z3 && !in_bwd); on_gpu++) {
			if (z3 && s->req->params_fixed && on_gpu != s->req->params_on_gpu)
				continue;
			for (int i = first; i < nn; i++)
				t[nt++] = (struct host_task){.pol = sim_policy_find(pols[p]),
							     .n = counts[i],
							     .params_on_gpu = on_gpu};
		}
	}
	struct host_work work = {s, drams, nd, t, nt, 0};
	uint32_t nthreads = s->req->threads > 1 ? s->req->threads : 1;
	if (nthreads > nt)
		nthreads = (uint32_t)nt;
	pthread_t tid[PLAN_MAX_WORKERS];
	uint32_t started = 0;
	for (uint32_t i = 1; i < nthreads && i < PLAN_MAX_WORKERS; i++) /* the caller is worker 0 */
		if (pthread_create(&tid[started], NULL, host_worker, &work) == 0)
			started++;
	host_worker(&work);
	for (uint32_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	int rc = 0;
	for (size_t i = 0; i < nt; i++) {
		*s->count += t[i].count;
		*s->pruned += t[i].pruned;
		if (!t[i].pol)
			s->fewest = t[i].fewest;
		if (rc == 0 && t[i].rc < 0) {
			snprintf(s->err, s->errlen, "%s", t[i].err);
			rc = -1;
		}
		/* a policy's tasks are consecutive: name it once */
		struct sim_plan *p = s->plan;
		if (t[i].rc > 0 && (!p->nno_placement ||
				    p->no_placement[p->nno_placement - 1] != t[i].pol->name))
			p->no_placement[p->nno_placement++] = t[i].pol->name;
		for (size_t k = 0; rc == 0 && k < t[i].kept.n; k++)
			rc = keep(&s->pool, &t[i].kept.v[k], s->err, s->errlen);
		if (t[i].closest.gpus)
			closer(closest, &t[i].closest);
		free(t[i].kept.v);
	}
	return rc;
}

static bool feasible(const struct sim_option *o, const struct sim_plan_req *r)
{
	return o->fits && (r->deadline <= 0 || o->runtime_seconds <= r->deadline) &&
	       (r->budget <= 0 || o->cost_total <= r->budget);
}

/* The figure an objective ranks by. */
static double figure(const struct sim_option *o, enum sim_objective obj)
{
	switch (obj) {
	case OBJ_TIME:
		return o->runtime_seconds;
	case OBJ_POWER:
		return o->peak_power_watts;
	case OBJ_GPUS:
		return o->gpus;
	case OBJ_COST:
		break;
	}
	return o->cost_total;
}

/*
 * Which of a and b an objective prefers: its own figure first, ties broken by the cost, then
 * the runtime, then the power (so that of two options drawing the same peak, --objective power
 * takes the cheaper, not whichever the search met first). <0 a, >0 b, 0 neither.
 */
static int versus(const struct sim_option *a, const struct sim_option *b, enum sim_objective obj)
{
	int c = cmp3(figure(a, obj), figure(b, obj));
	if (!c)
		c = cmp3(a->cost_total, b->cost_total);
	if (!c)
		c = cmp3(a->runtime_seconds, b->runtime_seconds);
	if (!c)
		c = cmp3(a->peak_power_watts, b->peak_power_watts);
	return c;
}

/* Figures this share apart are no grounds to buy more: the simulator resolves step times to a
 * few per cent (validate's categories: 4 to 9 % mean error), so an option that costs and draws
 * no less for under 1 % less runtime (one more drive that moves nothing the step waits for) is
 * not a trade-off worth a row on the front, and one that beats the recommendation's figure by
 * under 1 % with more hardware (a drive and a host tier, for a loss kernel a little faster) is
 * not the one to buy [U: a decision tolerance, not a model constant]. */
#define FIGURE_TOLERANCE 0.01

/* Whether b dominates a on the front: no dearer, no more power, no slower beyond the tolerance,
 * and better in one of them (so no two options dominate each other). */
static bool dominated(const struct sim_option *a, const struct sim_option *b)
{
	return b->cost_total <= a->cost_total &&
	       b->runtime_seconds <= a->runtime_seconds * (1 + FIGURE_TOLERANCE) &&
	       b->peak_power_watts <= a->peak_power_watts &&
	       (b->cost_total < a->cost_total || b->runtime_seconds < a->runtime_seconds ||
		b->peak_power_watts < a->peak_power_watts);
}

/* What an option must be for a recommendation or a compare row to take it: it fits, is of the
 * kind (-1 any) and the GPU count (0 any), and meets need's deadline and budget (NULL: none). */
struct want {
	int kind;
	uint32_t gpus;
	const struct sim_plan_req *need;
};

static bool eligible(const struct sim_option *o, const struct want *w, bool rated)
{
	return o->fits && (w->kind < 0 || (int)o->kind == w->kind) &&
	       (!w->gpus || o->gpus == w->gpus) && !(rated && o->flash_over_rating) &&
	       (!w->need || feasible(o, w->need));
}

/* Index of the best option w admits by the objective (the first of equals), of those that write
 * their drives within their rating where any does; -1 none. Then, of the options within
 * FIGURE_TOLERANCE of its figure and its cost (the first tie-break, and the figure of
 * --objective gpus's equals), the one that buys the least hardware. *passed (NULL: not asked)
 * is the best where another was taken, else -1. */
static long choose(const struct pool *p, const struct want *w, enum sim_objective obj,
		   long *passed)
{
	long best = -1;
	bool rated = true;
	for (;;) {
		for (size_t i = 0; i < p->n; i++)
			if (eligible(&p->v[i], w, rated) &&
			    (best < 0 || versus(&p->v[i], &p->v[best], obj) < 0))
				best = (long)i;
		if (best >= 0 || !rated)
			break;
		rated = false;
	}
	if (passed)
		*passed = -1;
	if (best < 0)
		return -1;
	double near = figure(&p->v[best], obj) * (1 + FIGURE_TOLERANCE);
	double dear = p->v[best].cost_total * (1 + FIGURE_TOLERANCE);
	long take = best;
	for (size_t i = 0; i < p->n; i++) {
		const struct sim_option *o = &p->v[i];
		if (figure(o, obj) <= near && o->cost_total <= dear && eligible(o, w, rated) &&
		    o->purchase_usd < p->v[take].purchase_usd)
			take = (long)i;
	}
	if (passed && take != best)
		*passed = best;
	return take;
}

/* index of the option of a kind (-1 any) to recommend by the objective among feasible ones
 * (choose, which says in *passed what it passed over), else the nearest miss among fitting
 * ones; -1 when none fits. */
static long pick(const struct pool *p, int kind, const struct sim_plan_req *r,
		 enum sim_objective obj, bool *met, long *passed)
{
	/* level 0: meets the deadline and budget, by the objective; nothing does: level 1, within
	 * the budget the fastest; level 2, by the deadline the cheapest; level 3, the fastest where
	 * a deadline was set (what misses it least), else the cheapest (what misses the budget
	 * least). Each level takes an option that writes its drives within their rating first,
	 * else one at the drives' expense (choose). */
	struct sim_plan_req budget_only = *r, deadline_only = *r;
	budget_only.deadline = 0;
	deadline_only.budget = 0;
	bool both = r->deadline > 0 && r->budget > 0;
	const struct sim_plan_req *need[3] = {r, &budget_only, &deadline_only};
	enum sim_objective by[4] = {obj, OBJ_TIME, OBJ_COST,
				    r->deadline > 0 ? OBJ_TIME : OBJ_COST};
	for (int level = 0; level < 4; level++) {
		if ((level == 1 || level == 2) && !both)
			continue;
		struct want w = {kind, 0, level < 3 ? need[level] : NULL};
		long take = choose(p, &w, by[level], passed);
		if (take < 0)
			continue;
		if (met)
			*met = level == 0;
		return take;
	}
	return -1;
}

static int by_kind_gpus(const void *a, const void *b)
{
	const struct sim_option *x = a, *y = b;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	if (x->gpus != y->gpus)
		return cmp3(x->gpus, y->gpus);
	return cmp3(x->cost_total, y->cost_total);
}

/* The Pareto front (plus the recommendations; for compare, each kind's choice at each count) into
 * the plan's fixed table. */
static void select_options(struct search *s, struct sim_plan *p)
{
	struct pool *pl = &s->pool;
	const struct sim_plan_req *r = s->req;
	unsigned char *show = calloc(pl->n ? pl->n : 1, sizeof *show); /* 0 hide, 1 front, 2 taken */
	long rec[3], passed[3];

	if (!show)
		return;
	rec[0] = pick(pl, -1, r, r->objective, &p->deadline_met, &passed[0]);
	rec[1] = pick(pl, SIM_GPU_ONLY, r, OBJ_COST, NULL, &passed[1]);
	rec[2] = pick(pl, SIM_TIERED, r, OBJ_COST, NULL, &passed[2]);
	for (size_t i = 0; i < pl->n; i++) {
		if (!pl->v[i].fits) {
			show[i] = 1; /* the closest misses say what overflowed */
			continue;
		}
		p->fitting++;
		show[i] = 1;
		if (r->counts) { /* compare: each kind's choice at each count, as pick makes it */
			struct want w = {(int)pl->v[i].kind, pl->v[i].gpus, NULL};
			show[i] = choose(pl, &w, r->objective, NULL) == (long)i;
			continue;
		}
		for (size_t j = 0; j < pl->n && show[i]; j++)
			if (j != i && pl->v[j].fits && dominated(&pl->v[i], &pl->v[j]))
				show[i] = 0;
	}
	if (r->counts) /* a miss only where nothing of its kind fits at its count */
		for (size_t i = 0; i < pl->n; i++)
			for (size_t j = 0; j < pl->n && !pl->v[i].fits && show[i]; j++)
				if (pl->v[j].fits && pl->v[j].gpus == pl->v[i].gpus &&
				    pl->v[j].kind == pl->v[i].kind)
					show[i] = 0;
	/* recommendations first, what they passed over next (compare: where it is its count's
	 * row, one row a kind), then the front by cost until the table is full */
	long idx[SIM_PLAN_MAX_OPTIONS];
	int nt = 0;
	for (int k = 0; k < (r->counts ? 3 : 6); k++) {
		long o = k < 3 ? rec[k] : passed[k - 3];
		if (o >= 0 && show[o] != 2) {
			idx[nt++] = o;
			show[o] = 2;
		}
	}
	for (;;) {
		long next = -1;
		for (size_t i = 0; i < pl->n; i++)
			if (show[i] == 1 && (next < 0 || pl->v[i].cost_total < pl->v[next].cost_total))
				next = (long)i;
		if (next < 0 || nt == SIM_PLAN_MAX_OPTIONS)
			break;
		idx[nt++] = next;
		show[next] = 2;
	}
	/* the table in kind, GPU count, cost order (insertion sort of at most 32) */
	for (int i = 1; i < nt; i++)
		for (int j = i; j > 0 && by_kind_gpus(&pl->v[idx[j - 1]], &pl->v[idx[j]]) > 0; j--) {
			long t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	p->noptions = nt;
	p->rec_best = p->rec_gpu_only = p->rec_tiered = -1;
	for (int k = 0; k < 3; k++)
		p->rec_passed[k] = -1;
	for (int i = 0; i < nt; i++) {
		p->options[i] = pl->v[idx[i]];
		for (int k = 0; k < 3; k++) {
			if (idx[i] == rec[k])
				*(k == 0 ? &p->rec_best : k == 1 ? &p->rec_gpu_only : &p->rec_tiered) = i;
			if (idx[i] == passed[k])
				p->rec_passed[k] = i;
		}
	}
	free(show);
}

int sim_plan_run(const struct sim_workload *w, const struct mdl_hw *hw, const struct sim_econ *e,
		 const struct sim_plan_req *req, struct sim_plan *p, char *err, size_t errlen)
{
	struct search s = {.w = w,
			   .hw = hw,
			   .e = e,
			   .req = req,
			   .count = &p->layouts_evaluated,
			   .pruned = &p->layouts_pruned,
			   .plan = p,
			   .err = err,
			   .errlen = errlen};
	struct sim_option closest = {0};
	int rc = -1;

	memset(p, 0, sizeof *p);
	p->rec_best = p->rec_gpu_only = p->rec_tiered = -1;
	p->rec_passed[0] = p->rec_passed[1] = p->rec_passed[2] = -1;
	mdl_job_states(&w->arch, &w->job, &p->states);
	p->activations_bytes = mdl_act_total(&w->arch, &w->job);
	p->other_bytes = MDL_CUDA_CONTEXT_BYTES;
	if (!w->grad_accum && !w->global_batch) {
		snprintf(err, errlen, "the global batch must be at least 1 sequence");
		goto out;
	}
	if (search_all(&s, &closest))
		goto out;
	bool any_host = false;
	for (size_t i = 0; i < s.pool.n; i++)
		any_host |= s.pool.v[i].kind == SIM_TIERED && s.pool.v[i].fits;
	if (!any_host && closest.gpus && keep(&s.pool, &closest, err, errlen))
		goto out;
	select_options(&s, p);
	rc = 0;
out:
	p->gpus_for_memory = s.fewest;
	free(s.pool.v);
	return rc;
}
