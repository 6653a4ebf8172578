/* sim — see sim.h. */
#include "sim.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "step.h"
#include "../model/act.h"
#include "../model/units.h"


/* Seconds per year for amortisation. */
#define YEAR_SECONDS (365.0 * 86400.0)

static double flash_endurance_bytes(const struct cfg_flash *f)
{
	if (f->tbw > 0)
		return f->tbw;
	return f->dwpd * f->capacity * 365.0 * f->warranty_years;
}

/*
 * A cluster of more than one node also buys its network fabric (NICs, switch ports, cables):
 * 15 % over the servers, Epoch AI's CLUSTER_INTERCONNECT_COST_OVERHEAD = 1.15
 * (epoch-research/training-cost-trends parameters.py; calibration-power-cost.md 3.1) [A].
 */
#define INTERCONNECT_OVERHEAD 0.15
/* Facility capex per provisioned watt: $5/W (llm_spice datacenter.py, calibration-power-cost.md
 * 3.1) [A]; shown beside the hardware, not amortised into the job's cost. */
#define FACILITY_USD_PER_W 5.0

/*
 * Runtime, energy, cost and wear from step time and power; shared by both kinds. Owned: capex
 * (GPUs, hosts, DRAM, drives) amortised over the job's runtime, drives by their writes where
 * those wear them out sooner, plus energy x PUE x price (calibration-power-cost.md 3.4).
 * Rented: GPU-hours at the cloud rate, which pays for a standard host; a host-tier option also
 * rents its DRAM and drives (tier_capex), priced at the GPU's own rent-to-own ratio (its cloud
 * rate over its price amortised over the same lifetime) since clouds list no $/GB-hour for
 * attached DRAM [D].
 */
static void finish(const struct sim_workload *w, const struct mdl_hw *hw, const struct sim_econ *e,
		   struct sim_option *o, double node_capex, double tier_capex, uint32_t flash_drives)
{
	double hours;

	o->tokens_per_second = o->step_seconds > 0 ? o->tokens_per_step / o->step_seconds : 0;
	o->steps = ceil(w->tokens / o->tokens_per_step);
	o->runtime_seconds = o->steps * o->step_seconds;
	hours = o->runtime_seconds / 3600.0;
	o->model_tflops_per_gpu = mdl_job_model_flops(&w->arch, &w->job) * (double)o->grad_accum *
				  (double)o->layout.dp / o->step_seconds / o->gpus / 1e12;
	o->energy_kwh = o->avg_power_watts * hours / 1000.0;
	o->mfu = o->model_tflops_per_gpu * 1e12 /
		 mdl_peak_flops(&hw->gpu, w->job.precision == MDL_FP32);

	double capex = o->gpus * hw->gpu.price + node_capex;
	o->fabric_usd = o->nodes > 1 ? INTERCONNECT_OVERHEAD * capex : 0;
	capex += o->fabric_usd;
	o->purchase_usd = capex;
	double life = o->runtime_seconds / (e->amortize_years * YEAR_SECONDS);
	o->cost_capex = capex * life;
	o->flash_bytes_written = o->flash_bytes_written_per_step * o->steps;
	o->flash_life_fraction =
		flash_drives ? o->flash_bytes_written /
				       (flash_drives * flash_endurance_bytes(&hw->flash))
			     : 0;
	/* A drive written faster than its rating wears out before the amortisation period ends:
	 * the job pays the share of the drive it used, the larger of its share of the drive's life
	 * and its share of the drive's rated writes (a consumable's accounting) [D]. */
	o->cost_flash_wear = flash_drives * hw->flash.price * fmax(0, o->flash_life_fraction - life);
	o->cost_capex += o->cost_flash_wear;
	o->cost_energy = o->energy_kwh * e->pue * e->usd_per_kwh;
	o->cost_cloud = o->gpus * hw->gpu.cloud_per_hour * hours;
	if (tier_capex > 0 && hw->gpu.price > 0) {
		double rent_ratio = hw->gpu.cloud_per_hour * e->amortize_years * YEAR_SECONDS /
				    3600.0 / hw->gpu.price;
		o->cost_cloud += tier_capex * rent_ratio * o->runtime_seconds /
				 (e->amortize_years * YEAR_SECONDS);
	}
	o->cost_total = o->cost_capex + o->cost_energy;
	double mtok = o->steps * o->tokens_per_step / 1e6;
	o->usd_per_mtok_owned = mtok > 0 ? o->cost_total / mtok : 0;
	o->usd_per_mtok_cloud = mtok > 0 ? o->cost_cloud / mtok : 0;

	o->peak_power_facility_watts = o->peak_power_watts * e->pue;
	o->facility_usd = o->peak_power_facility_watts * FACILITY_USD_PER_W;
	/* drive writes per day while the job runs, against the rating (DWPD, or TBW spread over
	 * the warranty) */
	o->flash_count = flash_drives ? hw->flash_count : 0;
	if (flash_drives && o->runtime_seconds > 0) {
		double rated = hw->flash.dwpd > 0 ? hw->flash.dwpd
						   : hw->flash.tbw / (hw->flash.capacity * 365.0 *
								      hw->flash.warranty_years);
		o->flash_dwpd = o->flash_bytes_written_per_step / o->step_seconds * 86400.0 /
				(flash_drives * hw->flash.capacity);
		o->flash_over_rating = o->flash_dwpd > rated;
	}
}


extern const struct sim_policy sim_pol_gpu, sim_pol_zero_offload, sim_pol_zero3_offload,
	sim_pol_zero_infinity, sim_pol_tiered, sim_pol_tiered_dram;
static const struct sim_policy *const policies[] = {
	&sim_pol_gpu,		&sim_pol_zero_offload, &sim_pol_zero3_offload,
	&sim_pol_zero_infinity, &sim_pol_tiered,       &sim_pol_tiered_dram};
#define NPOLICIES (int)(sizeof policies / sizeof policies[0])

const struct sim_policy *sim_policy_at(int i)
{
	return i >= 0 && i < NPOLICIES ? policies[i] : NULL;
}

const struct sim_policy *sim_policy_find(const char *name)
{
	for (int i = 0; i < NPOLICIES; i++)
		if (strcmp(policies[i]->name, name) == 0)
			return policies[i];
	return NULL;
}

/* The policies' names, written once (pthread_once: a sweep's workers may report a bad policy
 * at the same time), cut short where they outgrow the buffer (never past it). */
static char policy_names[256];
static pthread_once_t policy_names_once = PTHREAD_ONCE_INIT;

static void policy_names_init(void)
{
	size_t used = 0;
	for (int i = 0; i < NPOLICIES && used < sizeof policy_names; i++)
		used += (size_t)snprintf(policy_names + used, sizeof policy_names - used, "%s%s",
					 i ? ", " : "", policies[i]->name);
}

const char *sim_policy_names(void)
{
	pthread_once(&policy_names_once, policy_names_init);
	return policy_names;
}

/* The index of s among the n names, or -1. */
static int name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

static const char *const swap_names[4] = {"none", "read", "write", "both"};

const char *sim_swap_pipeline_name(const struct sim_config *c)
{
	return swap_names[c->swap_read_ahead + 2 * c->swap_write_behind];
}

int sim_swap_pipeline_parse(const char *s, struct sim_config *c)
{
	int i = name_index(swap_names, 4, s);
	if (i < 0)
		return -1;
	c->swap_read_ahead = i & 1;
	c->swap_write_behind = i >> 1;
	return 0;
}

static const char *const cpu_ckpt_names[3] = {"auto", "yes", "no"}; /* enum sim_cpu_ckpt */

const char *sim_cpu_ckpt_name(const struct sim_config *c)
{
	return cpu_ckpt_names[c->cpu_ckpt];
}

int sim_cpu_ckpt_parse(const char *s, struct sim_config *c)
{
	int i = name_index(cpu_ckpt_names, 3, s);
	if (i < 0)
		return -1;
	c->cpu_ckpt = (enum sim_cpu_ckpt)i;
	return 0;
}

/* enum sim_dispatcher */
static const char *const dispatcher_names[3] = {"alltoall", "deepep", "hybridep"};

const char *sim_dispatcher_name(const struct sim_config *c)
{
	return dispatcher_names[c->dispatcher];
}

int sim_dispatcher_parse(const char *s, struct sim_config *c)
{
	int i = name_index(dispatcher_names, 3, s);
	if (i < 0)
		return -1;
	c->dispatcher = (enum sim_dispatcher)i;
	return 0;
}

bool sim_ds_offload(const char *policy)
{
	return strncmp(policy, "zero", 4) == 0;
}

const char *sim_option_policy(const struct sim_option *o, char *buf, size_t n)
{
	if (o->params_on_gpu && o->twin_gpu > 0)
		snprintf(buf, n, "zero3-offload (opt r%g)", 1 - o->twin_gpu);
	else
		snprintf(buf, n, "%s", o->params_on_gpu ? "zero3-offload (opt)" : o->policy);
	return buf;
}

const char *sim_option_recompute(const struct sim_option *o, char *buf, size_t len)
{
	if (o->recompute_layers)
		snprintf(buf, len, "%s (%u layer%s a %s)", mdl_recompute_name(o->recompute),
			 o->recompute_layers, o->recompute_layers > 1 ? "s" : "",
			 mdl_layout_vp(&o->layout) > 1 ? "chunk" : "stage");
	else
		snprintf(buf, len, "%s", mdl_recompute_name(o->recompute));
	return buf;
}

/* Fits first, then the faster step, then the smaller GPU peak. */
static bool better(const struct sim_option *a, const struct sim_option *b)
{
	if (a->fits != b->fits)
		return a->fits;
	if (a->fits)
		return a->step_seconds < b->step_seconds;
	return a->peak_gpu < b->peak_gpu;
}

static void overflow(struct sim_option *o, const char *tier, double need, double have)
{
	char b1[32], b2[32], b3[32];

	if (!o->fits)
		return;
	o->fits = false;
	snprintf(o->overflow, sizeof o->overflow, "%s: needs %s of %s (over by %s)", tier,
		 cfg_fmt_bytes(need, b1, sizeof b1), cfg_fmt_bytes(have, b2, sizeof b2),
		 cfg_fmt_bytes(need - have, b3, sizeof b3));
}

/* The GPU's bytes as the device sees them for a pool peak (the CUDA context, the allocator's
 * reserve around what the rest allocated, a paged optimizer's resident states), and the
 * largest pool level that fits a GPU of `memory` bytes without paged states: its inverse, a
 * MiB clear of rounding. */
static double gpu_device_bytes(double pool_peak, double managed)
{
	return (pool_peak - MDL_CUDA_CONTEXT_BYTES - managed) * (1 + SIM_ALLOC_SLACK) + managed +
	       MDL_CUDA_CONTEXT_BYTES;
}

static int64_t gpu_pool_fits(double memory)
{
	return (int64_t)(MDL_CUDA_CONTEXT_BYTES +
			 (memory - MDL_CUDA_CONTEXT_BYTES) / (1 + SIM_ALLOC_SLACK)) +
	       1048576;
}

/* A host tier's pool at its peak, by category (step.c's CAT_W ... CAT_X), for the k GPUs of a
 * node the pool stands for. */
static void tier_memory(const struct eng_pool *p, uint32_t k, struct sim_tier_memory *t)
{
	t->weights = (double)p->peak_cat[0] * k;
	t->gradients = (double)p->peak_cat[1] * k;
	t->optimizer = (double)p->peak_cat[2] * k;
	t->activations = (double)p->peak_cat[3] * k;
	t->other = (double)p->peak_cat[4] * k;
}

/* Reads the run back: peaks, fit, time and energy with the steady micro-batches added. */
static void collect(const struct step_ctx *x, const struct eng_stats *st, struct sim_option *o)
{
	const struct eng *e = x->e;
	const struct mdl_hw *hw = x->hw;
	const struct mdl_layout *l = &x->c->layout;
	const struct step_machine *mc = &x->mc;
	uint32_t gpn = hw->gpus_per_node ? hw->gpus_per_node : 1;
	char b[32];

	memset(o, 0, sizeof *o);
	o->policy = x->c->policy->name;
	o->kind = x->c->policy->kind;
	o->layout = *l;
	o->gpus = (uint32_t)mdl_layout_gpus(l);
	o->nodes = (o->gpus + gpn - 1) / gpn;
	o->recompute = x->job.recompute;
	/* a partial recompute only where some chunk has layers past the ones that recompute */
	if (mdl_layout_rc_share(&x->w->arch, &x->job, l) < 1)
		o->recompute_layers = x->job.recompute_layers;
	o->loss = x->job.loss;
	o->micro_batch = x->job.micro_batch;
	o->grad_accum = x->m;
	o->events = st->events;
	o->micro_simulated = x->built;
	if (x->unsteady >= 0) {
		snprintf(o->unsteady, sizeof o->unsteady, "%s",
			 eng_resource_at(e, x->unsteady)->name);
		o->unsteady_growth = x->unsteady_growth;
	}
	o->ckpt_in_dram = x->pl.ckpt == W_DRAM;
	o->params_on_gpu = x->c->params_on_gpu;
	o->twin_gpu = x->c->twin_gpu;
	o->opt_gpu = x->pl.opt_gpu;
	o->host_fixed = x->pl.dram_fixed;
	o->mark0 = o->mark1 = -1;

	double end = st->end_ns * 1e-9, energy = st->energy_j, fw = 0, wbusy = 0;
	if (mc->nvme_wr >= 0) {
		fw = eng_resource_at(e, mc->nvme_wr)->work;
		wbusy = eng_resource_at(e, mc->nvme_wr)->busy_ns * 1e-9;
	}
	if (x->mb_end[0] >= 0) {
		const struct eng_snapshot *s0 = eng_snapshot_at(e, 0), *s1 = eng_snapshot_at(e, 1);
		o->mark0 = 0;
		o->mark1 = 1;
		o->extra_periods = (double)(x->m - x->built) / (double)x->mb_span;
		end += o->extra_periods * (double)(s1->t_ns - s0->t_ns) * 1e-9;
		energy += o->extra_periods * (s1->energy_j - s0->energy_j);
		if (mc->nvme_wr >= 0) {
			fw += o->extra_periods * (s1->work[mc->nvme_wr] - s0->work[mc->nvme_wr]);
			wbusy += o->extra_periods *
				 (s1->busy_ns[mc->nvme_wr] - s0->busy_ns[mc->nvme_wr]) * 1e-9;
		}
	}
	o->step_seconds = end;
	/* the tail after the last backward lies past both marks: the extrapolated micro-batches
	 * come before it, so the run as built times it (with its task times kept: folds and
	 * stopped runs leave them the compressed run's) */
	o->update_seconds = -1;
	if (eng_keeps_history(e) && !eng_pool_stopped(e)) {
		double bwd = -1;
		for (uint32_t g = 0; g < l->pp; g++)
			if (x->bwd_end[g] >= 0)
				bwd = fmax(bwd, eng_task_at(e, x->bwd_end[g])->t_end * 1e-9);
		if (bwd >= 0)
			o->update_seconds = fmax(st->end_ns * 1e-9 - bwd, 0);
	}
	o->sequences_per_step = x->m * l->dp * x->job.micro_batch;
	o->tokens_per_step = (double)o->sequences_per_step * (double)x->job.seq;
	o->energy_joules_per_step = energy;
	o->avg_power_watts = end > 0 ? energy / end : 0;
	o->peak_power_watts = st->peak_power_w * o->nodes;
	o->flash_bytes_written_per_step = fw * mc->k;
	o->flash_pause = fmax(end - wbusy, 0);

	/* the most loaded GPU and its breakdown at its peak */
	const struct eng_pool *worst = NULL;
	for (uint32_t g = 0; g < l->pp; g++) {
		const struct eng_pool *p = eng_pool_at(e, mc->gpu_pool[g]);
		if (!worst || p->peak > worst->peak) {
			worst = p;
			o->gpu_mem.stage = g;
		}
	}
	/* the pool holds the CUDA context for the whole step (step.c): the allocator's peak is
	 * the rest, its reserve that plus the slack, and the device holds both. A paged
	 * optimizer's states live in CUDA managed memory, outside PyTorch's allocator
	 * (bitsandbytes get_paged: cudaMallocManaged through its cget_managed_ptr): the device
	 * holds the resident part, the allocator's figures leave it out */
	double slack = 1 + SIM_ALLOC_SLACK;
	double managed = mdl_optimizer_paged(x->job.optimizer) ? worst->peak_cat[2] : 0;
	o->peak_gpu_allocated = worst->peak - MDL_CUDA_CONTEXT_BYTES - managed;
	o->peak_gpu_reserved = o->peak_gpu_allocated * slack;
	o->gpu_mem.weights = worst->peak_cat[0] * slack;
	o->gpu_mem.gradients = worst->peak_cat[1] * slack;
	o->gpu_mem.optimizer = worst->peak_cat[2] * (managed > 0 ? 1 : slack);
	o->gpu_mem.activations = worst->peak_cat[3] * slack;
	o->gpu_mem.other = (worst->peak_cat[4] - MDL_CUDA_CONTEXT_BYTES) * slack +
			   MDL_CUDA_CONTEXT_BYTES;
	o->gpu_mem.total = gpu_device_bytes((double)worst->peak, managed);
	o->peak_gpu = o->gpu_mem.total;
	o->peak_dram = eng_pool_at(e, mc->dram_pool)->peak * (double)mc->k;
	tier_memory(eng_pool_at(e, mc->dram_pool), mc->k, &o->dram_mem);
	o->peak_flash = 0;
	o->flash_mem = (struct sim_tier_memory){0};
	if (mc->flash_pool >= 0) {
		o->peak_flash = eng_pool_at(e, mc->flash_pool)->peak * (double)mc->k;
		tier_memory(eng_pool_at(e, mc->flash_pool), mc->k, &o->flash_mem);
	}
	if (o->kind == SIM_GPU_ONLY) { /* DRAM only for offloaded activations, paged states */
		o->peak_flash = 0;
		o->flash_mem = (struct sim_tier_memory){0};
		if (!x->c->act_offload && !(x->pl.opt_paged > 0)) {
			o->peak_dram = 0;
			o->dram_mem = (struct sim_tier_memory){0};
		}
	}

	o->fits = true;
	if (o->peak_gpu > hw->gpu.memory)
		overflow(o, "gpu", o->peak_gpu, hw->gpu.memory);
	if (o->peak_dram > hw->dram)
		overflow(o, "dram", o->peak_dram, hw->dram);
	double fcap = hw->flash_count * hw->flash.capacity;
	if (o->peak_flash > fcap)
		overflow(o, "flash", o->peak_flash, fcap);
	if (eng_pool_stopped(e)) { /* a GPU passed what fits: the rest of the step did not run */
		char b2[32];
		o->stopped = true;
		o->fits = false;
		snprintf(o->overflow, sizeof o->overflow,
			 x->resident_only ? "gpu: what it holds all step (weights, gradients, "
					    "optimizer state) needs %s of %s, whatever the recompute"
					  : "gpu: needs at least %s of %s (the run stopped there)",
			 cfg_fmt_bytes(o->peak_gpu, b, sizeof b),
			 cfg_fmt_bytes(hw->gpu.memory, b2, sizeof b2));
	}

	char epn[40], pol[SIM_POLICY_LABEL];
	mdl_layout_groups_str(l, true, epn, sizeof epn);
	char shn[24] = ""; /* a hybrid layout's shard groups */
	if (mdl_layout_shard(l) < l->dp)
		snprintf(shn, sizeof shn, " shard%u", mdl_layout_shard(l));
	if (o->kind == SIM_GPU_ONLY && mdl_layout_vp(l) > 1)
		snprintf(o->name, sizeof o->name, "%u GPU%s tp%u pp%u vp%u dp%u%s zero%u%s", o->gpus,
			 o->gpus > 1 ? "s" : "", l->tp, l->pp, l->vp, l->dp, epn, l->zero, shn);
	else if (o->kind == SIM_GPU_ONLY)
		snprintf(o->name, sizeof o->name, "%u GPU%s tp%u pp%u dp%u%s zero%u%s", o->gpus,
			 o->gpus > 1 ? "s" : "", l->tp, l->pp, l->dp, epn, l->zero, shn);
	else if (o->peak_flash > 0)
		snprintf(o->name, sizeof o->name, "%u GPU%s + %s DRAM + %ux %s (%s)", o->gpus,
			 o->gpus > 1 ? "s" : "", cfg_fmt_bytes(hw->dram, b, sizeof b),
			 hw->flash_count, hw->flash.name, sim_option_policy(o, pol, sizeof pol));
	else
		snprintf(o->name, sizeof o->name, "%u GPU%s + %s DRAM (%s)", o->gpus,
			 o->gpus > 1 ? "s" : "", cfg_fmt_bytes(hw->dram, b, sizeof b),
			 sim_option_policy(o, pol, sizeof pol));
}

/* Recompute modes sim_run tries when the user left --recompute to it and the policy does not
 * choose one itself, fastest first. */
static const enum mdl_recompute auto_rc[] = {MDL_RC_NONE, MDL_RC_SELECTIVE, MDL_RC_FULL};
#define N_AUTO_RC (int)(sizeof auto_rc / sizeof auto_rc[0])

/* Candidates of a configuration: the policy's variants, times the recompute modes when sim_run
 * picks the recompute. */
static int candidates(const struct sim_config *c)
{
	return c->policy->variants * (c->recompute_fixed || c->policy->own_recompute ? 1 : N_AUTO_RC);
}

/* Builds the step of x's placement (only its resident memory: x->resident_only) on x's
 * engine, set to stop where a GPU overflows when the option need only say "does not fit"
 * (sim_config.stop_unfit; not with a paged optimizer, whose states leave the GPU as it fills).
 * 0 ok, -1 + err. */
static int build(struct step_ctx *x, char *err, size_t errlen)
{
	eng_reset(x->e);
	x->nfold = 0;
	x->fold_bwd = 0;
	if (step_build(x, err, errlen))
		return -1;
	if (x->mb_end[0] >= 0 &&
	    (eng_mark(x->e, x->mb_end[0]) < 0 || eng_mark(x->e, x->mb_end[1]) < 0)) {
		snprintf(err, errlen, "simulator: %s", eng_error(x->e));
		return -1;
	}
	bool stop = x->c->stop_unfit && !mdl_optimizer_paged(x->job.optimizer);
	int64_t fits = gpu_pool_fits(x->hw->gpu.memory);
	for (uint32_t g = 0; stop && g < x->c->layout.pp; g++)
		if (eng_pool_stop(x->e, x->mc.gpu_pool[g], fits)) {
			snprintf(err, errlen, "simulator: %s", eng_error(x->e));
			return -1;
		}
	return 0;
}

/* o, collected from the resident-only run, as stopped where stage 0 holds `level` pool bytes
 * at the end of the warm-up of its n micro-batches in flight (a floor of its peak). */
static void inflight_overflow(const struct step_ctx *x, struct sim_option *o, double level,
			      uint64_t n)
{
	char b[32], b2[32];
	o->stopped = true;
	o->fits = false;
	o->peak_gpu = o->gpu_mem.total = gpu_device_bytes(level, 0);
	o->gpu_mem.stage = 0;
	snprintf(o->overflow, sizeof o->overflow,
		 "gpu: what it holds all step and the activations of the %llu micro-batch%s in "
		 "flight need at least %s of %s",
		 (unsigned long long)n, n == 1 ? "" : "es", cfg_fmt_bytes(o->peak_gpu, b, sizeof b),
		 cfg_fmt_bytes(x->hw->gpu.memory, b2, sizeof b2));
}

/*
 * A floor of what stage 0's GPU holds beyond its resident memory once 1F1B's warm-up is done:
 * the activations kept by the min(pp, m) micro-batches it has run forward before its first
 * backward (step.c's schedule: pp - 1 warm-up forwards, then one more; each block's kept
 * activations allocated as its forward starts and freed as its backward ends), each the
 * stage's layers x what a layer keeps under the job's recompute (less than a partial
 * recompute's mix; the embedding's left out). *n gets the micro-batches. 0 where no such floor
 * holds: a policy other than gpu, activations leaving the GPU (--activation-offload,
 * checkpoints in DRAM), interleaving (its chunks in flight hold a share of the layers each).
 */
static double inflight_floor(const struct step_ctx *x, uint64_t *n)
{
	const struct sim_config *c = x->c;
	const struct mdl_layout *l = &c->layout;
	if (c->policy->kind != SIM_GPU_ONLY || c->act_offload || x->pl.ckpt != W_GPU ||
	    mdl_layout_vp(l) > 1)
		return 0;
	*n = x->m < l->pp ? x->m : l->pp;
	return (double)*n * (double)mdl_layout_stage_layers(&x->w->arch, l, 0) *
	       mdl_act_layer_saved(&x->w->arch, &x->job, l->tp, l->sp) / mdl_layout_cp(l);
}

/* How much a queue may grow in one steady period, as a share of it, before the period is taken
 * for not steady (steady_period): the tolerance the repeated period already has where it
 * stands, pp + 3 micro-batches' steps within 0.6 % of whole ones over 36 random pipeline
 * layouts (step.c, step_build). Of the 330 published runs validate folds, 326 have no queue
 * growing by 0.0001 %; the interleaved Llama-3.1-405B FP8 four grow 0.52-0.56 %, and their
 * repeated period was 0.5 % short of the whole run's. */
#define SIM_STEADY_GROWTH 0.005
_Static_assert(sizeof((struct sim_option *)0)->unsteady == ENG_NAME,
	       "sim_option.unsteady holds a resource's name");

/*
 * Whether the period between the two marked micro-batches (step.c, steady_marks) is one the
 * step repeats: no resource's queue of ready work (eng_snapshot.queued: what runs on it, and
 * what waits only for its stream's turn) grows from one mark to the next by more than
 * SIM_STEADY_GROWTH of the period, in the seconds it would take the resource. Where one grows,
 * the micro-batches outrun it and each period leaves it further behind, so the ones left out
 * would not repeat the measured one: pipeline stages offloading activations through the PCIe
 * switch and DRAM they share (Gemma-2-9B at 32k tokens on 6 A100-40GB stages: its copies'
 * queue on the switch grows by 16 % of the period between the 2nd and 3rd micro-batches, and
 * that period made a step of 2,044 s where all 128 micro-batches take 2,742 s). A queue that
 * only fills once, as a downstream stage's forwards do in 1F1B's warm-up, reads the same and
 * costs a whole build that repeating would have matched. Where it is not steady, x->unsteady
 * gets the resource whose queue grew most, x->unsteady_growth that growth over the period.
 */
static bool steady_period(struct step_ctx *x)
{
	const struct eng_snapshot *s0 = eng_snapshot_at(x->e, 0), *s1 = eng_snapshot_at(x->e, 1);
	double period = (double)(s1->t_ns - s0->t_ns) * 1e-9;
	for (int r = 0; r < eng_nresources(x->e); r++) {
		double grew = (s1->queued[r] - s0->queued[r]) / eng_resource_at(x->e, r)->capacity;
		if (grew > SIM_STEADY_GROWTH * period && grew / period > x->unsteady_growth) {
			x->unsteady = r;
			x->unsteady_growth = grew / period;
		}
	}
	return x->unsteady < 0;
}

/* Builds and runs the step of x's placement and collects its option. */
static int simulate(struct step_ctx *x, struct eng_stats *st, struct sim_option *o, char *err,
		    size_t errlen)
{
	x->unsteady = -1;
	x->unsteady_growth = 0;
	/* a run that may stop where a GPU overflows first holds only the step's resident memory:
	 * where that alone overflows, the whole step would stop there too (at t = 0, setup), and
	 * its passes need not be built */
	if (x->c->stop_unfit && !mdl_optimizer_paged(x->job.optimizer)) {
		x->resident_only = true;
		int rc = build(x, err, errlen);
		if (!rc && eng_run(x->e, st)) {
			snprintf(err, errlen, "simulator: %s", eng_error(x->e));
			rc = -1;
		}
		bool stopped = !rc && eng_pool_stopped(x->e);
		/* where the resident memory fits but it and the activations 1F1B's warm-up keeps
		 * cannot, the whole step would stop too (at the warm-up's end at the latest) */
		uint64_t n = 0;
		double held = rc || stopped ? 0 : inflight_floor(x, &n);
		double level = held > 0 ? (double)eng_pool_at(x->e, x->mc.gpu_pool[0])->peak + held
					: 0;
		if (stopped || level > (double)gpu_pool_fits(x->hw->gpu.memory)) {
			collect(x, st, o);
			if (!stopped)
				inflight_overflow(x, o, level, n);
			stopped = true;
		}
		x->resident_only = false;
		if (rc || stopped)
			return rc;
	}
	/* passes the engine found not periodic are built again (step.c, fold_gap), and the step
	 * run again; what it found stays for the configuration's next candidate (sim_run starts
	 * x with none): its variants and recompute modes build the same passes, which mostly
	 * fold or fail alike (the 405B plan: 1.6 % fewer instructions, results unchanged) */
	for (;;) {
		if (build(x, err, errlen))
			return -1;
		if (eng_run(x->e, st)) {
			snprintf(err, errlen, "simulator: %s", eng_error(x->e));
			return -1;
		}
		uint64_t bad = eng_fold_failed(x->e);
		if (!bad && x->mb_end[0] >= 0 && !eng_pool_stopped(x->e) && !steady_period(x))
			continue;
		if (!bad)
			break;
		/* the run stopped at the first pass that was not; the same passes of the later
		 * micro-batches repeat its placement, so they are built as it is next: with a gap
		 * its period divides where the engine found one, wide where it found none the
		 * first time (step.c, fold_gap), else whole */
		for (uint32_t i = 0; i < x->nfold; i++) {
			if (!(bad >> i & 1))
				continue;
			uint8_t seg = x->fold_seg[i], had = x->fold_unit[seg];
			uint32_t p = eng_fold_period(x->e, (int)i);
			uint8_t next = STEP_FOLD_WHOLE;
			if (had == 0)
				next = p ? (uint8_t)p : STEP_FOLD_WIDE;
			else if (had == STEP_FOLD_WIDE)
				next = p ? (uint8_t)(STEP_FOLD_WIDE | p) : STEP_FOLD_WHOLE;
			for (uint32_t j = i; j < x->nfold; j++) {
				uint8_t sj = x->fold_seg[j];
				if ((x->fold_bwd >> sj & 1) == (x->fold_bwd >> seg & 1) &&
				    x->fold_unit[sj] != STEP_FOLD_WHOLE)
					x->fold_unit[sj] = next;
			}
		}
	}
	collect(x, st, o);
	return 0;
}

static int run_variant(struct step_ctx *x, int i, struct sim_option *o, char *err, size_t errlen)
{
	struct eng_stats st;
	const struct sim_config *c = x->c;
	int v = i % c->policy->variants;

	x->job = x->w->job;
	x->job.expert_gather = mdl_layout_etp(&c->layout);
	if (candidates(c) > c->policy->variants && i / c->policy->variants < N_AUTO_RC - 1) {
		/* a lighter recompute is worth simulating only if the checkpoints of one micro-batch
		 * on the first stage (a lower bound of what it keeps: a context-parallel rank keeps
		 * 1/cp of the sequence's) fit the GPU at all; full recompute, the last resort,
		 * always runs */
		const struct mdl_layout *l = &c->layout;
		x->job.recompute = auto_rc[i / c->policy->variants];
		double kept = (double)mdl_layout_stage_layers(&x->w->arch, l, 0) *
			      mdl_act_layer_saved(&x->w->arch, &x->job, l->tp, l->sp) /
			      mdl_layout_cp(l);
		if (kept > x->hw->gpu.memory && !c->act_offload) /* offloaded: they leave it */
			return 1;
	} else if (candidates(c) > c->policy->variants) {
		if (c->ep_overlap) /* Megatron-Core asserts no full recompute with it */
			return 1;
		x->job.recompute = MDL_RC_FULL;
	}
	memset(&x->pl, 0, sizeof x->pl);
	x->pl.prefetch = step_prefetch(c);
	int rc = c->policy->place(x, v, err, errlen);
	if (rc)
		return rc; /* -1 error, 1 variant not applicable */
	if (simulate(x, &st, o, err, errlen))
		return -1;
	/* the drives' power follows step_uses_flash: a placement that put bytes on them without
	 * saying so would run them unpowered */
	if (o->peak_flash > 0 && !step_uses_flash(&x->pl)) {
		snprintf(err, errlen,
			 "simulator: policy %s put %.0f bytes on the drives its placement does not "
			 "name (internal error)",
			 c->policy->name, o->peak_flash);
		return -1;
	}
	/* a paged optimizer stepped on the GPU leaves in host DRAM what the GPU cannot hold at
	 * its peak: the states are static, so moving that much out lowers the peak by as much */
	if (!o->fits && mdl_optimizer_paged(x->job.optimizer) && x->pl.update == UPD_GPU &&
	    o->gpu_mem.optimizer > 0 && !strncmp(o->overflow, "gpu", 3)) {
		double out = o->peak_gpu - x->hw->gpu.memory + 1048576.0; /* a MiB clear of the edge */
		x->pl.opt_paged = fmin(1.0, out / o->gpu_mem.optimizer);
		if (simulate(x, &st, o, err, errlen))
			return -1;
	}
	return 0;
}

bool sim_gptq_runs(const struct sim_policy *p, uint32_t zero)
{
	return (p->kind == SIM_GPU_ONLY && zero <= 2) || strcmp(p->name, "zero-offload") == 0;
}

static int run_config(struct eng *e, const struct sim_workload *w, const struct mdl_hw *hw,
		      const struct sim_econ *ec, const struct sim_config *c, struct sim_option *o,
		      char *err, size_t errlen)
{
	struct step_ctx x = {.e = e, .w = w, .hw = hw, .c = c, .m = c->grad_accum};
	struct sim_option cand;
	int best = -1, last = -1;

	if (!c->policy) {
		snprintf(err, errlen, "no policy (allowed: %s)", sim_policy_names());
		return -1;
	}
	if (c->grad_accum < 1) {
		snprintf(err, errlen, "--grad-accum must be at least 1");
		return -1;
	}
	if (mdl_layout_check(&w->arch, &c->layout,
			     mdl_layout_gpus(&c->layout), err, errlen))
		return -1;
	/* never silently another sharding than the layout says (tp_sim_config resolves it) */
	if (c->policy->zero >= 0 && c->layout.zero != (uint32_t)c->policy->zero) {
		snprintf(err, errlen, "policy %s runs ZeRO-%d, not the layout's ZeRO-%u",
			 c->policy->name, c->policy->zero, c->layout.zero);
		return -1;
	}
	if (mdl_job_gptq(&w->job) && !sim_gptq_runs(c->policy, c->layout.zero)) {
		bool gpu = c->policy->kind == SIM_GPU_ONLY;
		snprintf(err, errlen,
			 "--quant gptq: auto-gptq keeps the packed weights as module buffers, "
			 "which ZeRO-3 neither partitions nor offloads and no host tier streams: "
			 "policy gpu with --zero 0 to 2, or zero-offload (got %s %s)",
			 gpu ? "--zero" : "policy", gpu ? "3" : c->policy->name);
		return -1;
	}
	if (c->opt_in_bwd && ((c->policy->kind != SIM_GPU_ONLY &&
			       strcmp(c->policy->name, "zero3-offload") != 0) ||
			      c->grad_accum > 1 || c->layout.tp > 1 || c->layout.pp > 1)) {
		snprintf(err, errlen,
			 "--optimizer-in-backward yes steps the optimizer inside backward: policy "
			 "gpu or zero3-offload (FSDP's CPU offload), --tp 1, --pp 1 and one "
			 "micro-batch per step (--grad-accum 1), as torchtune requires");
		return -1;
	}
	if (c->params_on_gpu && (strcmp(c->policy->name, "zero3-offload") != 0 || c->opt_in_bwd)) {
		snprintf(err, errlen,
			 "--offload-param no keeps DeepSpeed ZeRO-3's parameters on the GPUs with "
			 "only the optimizer offloaded: policy zero3-offload without "
			 "--optimizer-in-backward (got %s%s)",
			 c->policy->name, c->opt_in_bwd ? ", --optimizer-in-backward yes" : "");
		return -1;
	}
	if (c->twin_gpu > 0 && !(c->params_on_gpu && !c->opt_in_bwd &&
				 strcmp(c->policy->name, "zero3-offload") == 0)) {
		snprintf(
		    err, errlen,
		    "--offload-ratio %g keeps part of DeepSpeed ZeRO-3's offloaded optimizer on "
		    "the GPUs (ZeRO-Offload++ Twin-Flow): policy zero3-offload with "
		    "--offload-param no (got %s%s)",
		    1 - c->twin_gpu, c->policy->name,
		    strcmp(c->policy->name, "zero3-offload") != 0 ? ""
		    : c->opt_in_bwd				  ? ", --optimizer-in-backward yes"
								  : ", --offload-param yes");
		return -1;
	}
	/* the loops that hold a graph run one micro-batch's forward and backward at a time; a
	 * pipeline schedule runs forwards ahead of backwards and frees each output as it sends it
	 * (Megatron-Core's deallocate_output_tensor) */
	if (c->graph_next_fwd && c->layout.pp > 1) {
		snprintf(err, errlen,
			 "--graph-freed next-forward is a training loop holding its last loss "
			 "through the next forward, one micro-batch at a time: --pp 1 (got %u)",
			 c->layout.pp);
		return -1;
	}
	/* Megatron-Core's combined 1F1B schedule (sim_ep_overlap) */
	const struct mdl_layout *l = &c->layout;
	if (c->ep_overlap && (c->policy->kind != SIM_GPU_ONLY || mdl_layout_ep(l) < 2 ||
			      (l->pp > 1 && mdl_layout_vp(l) < 2))) {
		snprintf(err, errlen,
			 "--ep-overlap yes hides the expert all-to-alls of Megatron-Core's expert "
			 "parallelism: policy gpu, --ep 2 or more, and with --pp 2 or more "
			 "--interleave 2 or more (got policy %s, --ep %u, --pp %u, --interleave %u)",
			 c->policy->name, mdl_layout_ep(l), l->pp, mdl_layout_vp(l));
		return -1;
	}
	if (c->dispatcher != SIM_DISPATCH_ALLTOALL && hw->gpu.sm_count > 0 &&
	    c->dispatcher_sms >= hw->gpu.sm_count) {
		snprintf(err, errlen,
			 "--moe-dispatcher-sms %u leaves no SM of the %s's %.0f for the compute "
			 "(allowed: 1 to %.0f)",
			 c->dispatcher_sms, hw->gpu.name, hw->gpu.sm_count, hw->gpu.sm_count - 1);
		return -1;
	}
	if (c->shared_overlap && (c->policy->kind != SIM_GPU_ONLY || !w->arch.shared_experts ||
				  mdl_layout_ep(l) < 2 || c->ep_overlap)) {
		snprintf(err, errlen,
			 "--shared-expert-overlap yes runs the shared experts beside the expert "
			 "all-to-alls: policy gpu, a model with shared experts, --ep 2 or more, and "
			 "not with --ep-overlap yes, as Megatron-Core asserts (got policy %s, %u "
			 "shared experts, --ep %u, --ep-overlap %s)",
			 c->policy->name, w->arch.shared_experts, mdl_layout_ep(l),
			 c->ep_overlap ? "yes" : "no");
		return -1;
	}
	if (c->ep_overlap && c->recompute_fixed && w->job.recompute == MDL_RC_FULL) {
		snprintf(err, errlen,
			 "--ep-overlap yes runs without full recompute, as Megatron-Core asserts: "
			 "--recompute none or selective (or auto)");
		return -1;
	}
	if (c->cpu_ckpt == SIM_CPU_CKPT_YES && sim_fsdp_offload(c)) {
		snprintf(err, errlen,
			 "--cpu-checkpointing yes is DeepSpeed's; --grad-sync last, "
			 "--checkpoint-wrap outside or --optimizer-in-backward make zero3-offload "
			 "FSDP's CPU offload, which keeps its checkpoints on the GPU "
			 "(--activation-offload moves activations under policy gpu)");
		return -1;
	}
	if (c->cpu_ckpt != SIM_CPU_CKPT_AUTO && !sim_ds_offload(c->policy->name)) {
		snprintf(err, errlen,
			 "--cpu-checkpointing places the checkpoints of DeepSpeed's offload "
			 "policies: zero-offload, zero3-offload or zero-infinity (got %s; policy "
			 "gpu offloads activations with --activation-offload, the tiered policies "
			 "place their own)",
			 c->policy->name);
		return -1;
	}
	/* DeepSpeed 0.3-0.8 passed fp16_param_groups to DeepSpeedCPUAdam only where its ZeRO-1/2
	 * optimizer's dtype was torch.half (stage_1_and_2.py, _optimizer_step) */
	if (c->weights_in_step && (strcmp(c->policy->name, "zero-offload") != 0 ||
				   w->job.precision != MDL_FP16_MIXED)) {
		snprintf(err, errlen,
			 "--weights-up in-step is DeepSpeed 0.3-0.8's ZeRO-1/2 CPU offload under "
			 "fp16: policy zero-offload with --precision fp16-mixed "
			 "(got policy %s, --precision %s)",
			 c->policy->name, mdl_precision_name(w->job.precision));
		return -1;
	}
	if ((c->swap_read_ahead || c->swap_write_behind) &&
	    strcmp(c->policy->name, "zero-infinity") != 0) {
		snprintf(err, errlen,
			 "--swap-pipeline pipelines ZeRO-Infinity's optimizer swaps to flash: policy "
			 "zero-infinity (got %s)",
			 c->policy->name);
		return -1;
	}
	if (w->job.recompute_layers && c->policy->kind != SIM_GPU_ONLY) {
		snprintf(err, errlen,
			 "--recompute-layers is Megatron-Core's partial recompute, for policy gpu: "
			 "policy %s places the activation checkpoints itself",
			 c->policy->name);
		return -1;
	}
	if (c->act_offload && c->policy->kind != SIM_GPU_ONLY) {
		snprintf(err, errlen,
			 "--activation-offload yes is for policy gpu: policy %s places the "
			 "activation checkpoints itself",
			 c->policy->name);
		return -1;
	}
	bool fsdp_fp8 = c->policy->kind == SIM_GPU_ONLY && c->layout.zero == 3 &&
			w->job.precision == MDL_FP8;
	if (c->fp8_all_gather && !fsdp_fp8) {
		snprintf(err, errlen,
			 "--fp8-all-gather yes gathers FSDP's sharded weights in FP8: policy gpu, "
			 "--zero 3 and --precision fp8 (got policy %s, --zero %u, --precision %s)",
			 c->policy->name, c->layout.zero, mdl_precision_name(w->job.precision));
		return -1;
	}
	if (c->overlap_param_gather && (c->policy->kind != SIM_GPU_ONLY || c->layout.zero != 1)) {
		snprintf(err, errlen,
			 "--overlap-param-gather yes defers the all-gather of Megatron-Core's "
			 "distributed optimizer: policy gpu and --zero 1 (got policy %s, --zero %u)",
			 c->policy->name, c->layout.zero);
		return -1;
	}
	if (c->opt_foreach && (c->policy->kind != SIM_GPU_ONLY || w->job.optimizer != MDL_ADAMW)) {
		snprintf(err, errlen,
			 "--foreach-optimizer yes is PyTorch's AdamW stepped on the GPU: policy gpu and "
			 "--optimizer adamw (got %s, %s)",
			 c->policy->name, mdl_optimizer_name(w->job.optimizer));
		return -1;
	}
	if (w->job.precision == MDL_FP8 && !(hw->gpu.fp8_flops > 0)) {
		snprintf(err, errlen,
			 "gpu %s: its catalog entry has no FP8 tensor-core rate (fp8_flops): GPUs "
			 "before Hopper and Ada have none; for one that has, add \"fp8_flops\" (dense, "
			 "from its datasheet) to a GPU file and give --gpu that file",
			 hw->gpu.name);
		return -1;
	}
	if (w->job.precision == MDL_FP32 && !(hw->gpu.fp32_flops > 0)) {
		snprintf(err, errlen,
			 "gpu %s: fp32_flops unknown; --precision fp32 needs the GPU's fp32 peak "
			 "(add \"fp32_flops\" to its file, e.g. \"19.5TFLOPS\")",
			 hw->gpu.name);
		return -1;
	}
	/* a host without a network is one node: no silent cluster of workstations over PCIe */
	uint64_t gpus = mdl_layout_gpus(&c->layout);
	if (!(hw->host.network_per_gpu > 0) && gpus > hw->gpus_per_node) {
		uint32_t per = hw->gpus_per_node;
		bool set = per < hw->host.gpu_slots; /* --gpus-per-node left slots empty */
		snprintf(err, errlen,
			 "host %s is a single node (network_per_gpu 0): at most %u GPU%s%s, not "
			 "%llu (choose a host with a network, e.g. hgx-8gpu)",
			 hw->host.name, per, per == 1 ? "" : "s",
			 set ? " as --gpus-per-node sets it" : "", (unsigned long long)gpus);
		return -1;
	}
	int n = candidates(c);
	bool tolerant = n > c->policy->variants; /* a recompute mode may fail where another runs */
	char first_err[512] = ""; /* as long as the commands' own error buffers */
	bool fit_before = false; /* the previous variant of this recompute mode fit */
	bool dram_short = false; /* a variant placed or overflowed for want of DRAM */
	double dram_need = INFINITY; /* sim_option.dram_need */
	for (int v = 0; v < n; v++) {
		if (v % c->policy->variants == 0)
			fit_before = false;
		else if (c->policy->fallback && fit_before)
			continue;
		int rc = run_variant(&x, v, &cand, err, errlen);
		dram_short |= x.pl.dram_short ||
			      (rc == 0 && !cand.fits && strstr(cand.overflow, "dram") != NULL);
		if (rc < 0 && tolerant) {
			if (!first_err[0])
				snprintf(first_err, sizeof first_err, "%s", err);
			last = -1; /* the engine no longer holds a finished run */
			continue;
		}
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		last = v;
		fit_before = cand.fits;
		if (cand.fits || strncmp(cand.overflow, "dram", 4) == 0)
			dram_need = fmin(dram_need, cand.peak_dram);
		if (best < 0 || better(&cand, o)) {
			*o = cand;
			best = v;
		}
	}
	for (int v = 0; best < 0 && v < n; v++) {
		/* none applies: place anyway to report what overflows */
		x.force = true;
		int rc = run_variant(&x, v, o, err, errlen);
		if (rc < 0 && tolerant)
			continue;
		if (rc < 0)
			return -1;
		if (rc == 0)
			best = last = v;
	}
	if (best < 0) {
		if (first_err[0]) {
			snprintf(err, errlen, "%s", first_err);
		} else if (c->recompute_fixed) {
			snprintf(err, errlen, "policy %s: no placement with --recompute %s (leave it to "
					      "auto, or choose another policy)",
				 c->policy->name, mdl_recompute_name(w->job.recompute));
			return 1;
		} else if (c->ep_overlap) {
			snprintf(err, errlen,
				 "--ep-overlap yes runs without full recompute, and no lighter "
				 "recompute keeps one micro-batch's activations on the GPU");
		} else {
			snprintf(err, errlen, "policy %s: no placement applies", c->policy->name);
		}
		return -1;
	}
	/* leave the engine holding the chosen run for traces and per-resource figures; an engine
	 * that keeps no history serves a search, which reads the option alone */
	if (best != last && eng_keeps_history(e) && run_variant(&x, best, o, err, errlen))
		return -1;

	o->dram_short = dram_short;
	/* none of its placements applied, and one was placed anyway: what that one asked */
	o->dram_need = dram_need < INFINITY ? dram_need : o->peak_dram;
	/* One accounting rule for every option: it buys the GPUs' share of the host, the DRAM it
	 * needs in a purchasable size, and the drives it uses; the DRAM draws power by its size */
	bool flash = o->peak_flash > 0;
	uint32_t gpn = hw->gpus_per_node ? hw->gpus_per_node : 1;
	double hosts = o->gpus < gpn ? (double)o->gpus / gpn : (double)o->nodes;
	double reserve = o->kind == SIM_GPU_ONLY ? mdl_dram_reserve(&hw->host) : 0;
	o->dram = sim_dram_bought(hw, reserve + o->peak_dram);
	double dram_w = hw->host.dram_power_per_gb * o->dram / 1e9 * o->nodes;
	o->peak_power_watts += dram_w;
	o->energy_joules_per_step += dram_w * o->step_seconds;
	o->avg_power_watts = o->step_seconds > 0 ? o->energy_joules_per_step / o->step_seconds : 0;
	double tiers = o->dram / 1e9 * hw->host.dram_price_per_gb +
		       (flash ? hw->flash_count * hw->flash.price : 0);
	finish(w, hw, ec, o, hosts * hw->host.price + o->nodes * tiers,
	       o->kind == SIM_TIERED ? o->nodes * tiers : 0, flash ? hw->flash_count * o->nodes : 0);
	return 0;
}

/* Runs of a configuration on drives with an SLC cache at most: the first with the whole cache
 * free, then each at the bytes and pauses of the run before, until the write rate they give
 * settles (a placement could write less at a slower rate, and slower writes pause the drives
 * less) [U: a bound on work, not a model constant]. */
#define SLC_RUNS 6

/* The relative change in a drive's write rate below which the runs have settled [U: a
 * convergence tolerance] */
#define SLC_SETTLED 1e-3

int sim_run(struct eng *e, const struct sim_workload *w, const struct mdl_hw *hw,
	    const struct sim_econ *ec, const struct sim_config *c, struct sim_option *o,
	    char *err, size_t errlen)
{
	/* a drive with an SLC cache writes a step's bytes at their mean rate, which depends on
	 * how many it writes and on how much of the cache it folded free in the step's pauses
	 * (mdl_flash_cached_write, mdl_flash_slc_free): the step runs again at what the run
	 * before gave, until they agree. Each run's free cache is no more than the last's (a
	 * slower write pauses the drive no longer), so the runs settle from above. */
	int rc = run_config(e, w, hw, ec, c, o, err, errlen);
	bool flash = !rc && !o->stopped && o->peak_flash > 0 && hw->flash_count > 0;
	bool slc = flash && mdl_flash_slc_free(hw) > 0;
	struct mdl_hw at = *hw; /* what the last run took */
	for (int i = 2; slc; i++) {
		struct mdl_hw next = at;
		next.flash_step_write = o->flash_bytes_written_per_step / hw->flash_count;
		next.flash_step_pause = o->flash_pause;
		next.flash_pause_known = true;
		double ran = mdl_flash_bandwidth(&at, false);
		double gives = mdl_flash_bandwidth(&next, false);
		if (fabs(gives - ran) <= SLC_SETTLED * ran || i > SLC_RUNS)
			break;
		at = next;
		if ((rc = run_config(e, w, &at, ec, c, o, err, errlen)) != 0)
			return rc;
	}
	o->flash_write_rate = flash ? mdl_flash_bandwidth(&at, false) / hw->flash_count : 0;
	o->flash_slc_free = flash ? mdl_flash_slc_free(&at) : 0;
	return rc;
}

int sim_dram_sizes(const struct mdl_hw *hw, double *out)
{
	if (!hw->dram_set)
		return mdl_dram_sizes(&hw->host, out);
	out[0] = hw->dram; /* --dram: the size the user buys */
	return 1;
}

double sim_dram_bought(const struct mdl_hw *hw, double need)
{
	/* the sizes the host's DIMMs make (the planner's DRAM search); the configured size where
	 * the need exceeds them all */
	if (hw->dram_set)
		return hw->dram;
	double sizes[MDL_DRAM_SIZES];
	int n = sim_dram_sizes(hw, sizes);
	for (int i = 0; i < n; i++)
		if (sizes[i] >= need)
			return sizes[i];
	double max = hw->host.dram_max > hw->dram ? hw->host.dram_max : hw->dram;
	return need <= max ? max : hw->dram;
}

void sim_resource_usage(const struct eng *e, const struct sim_option *o, int r, double *busy_s,
			double *work)
{
	const struct eng_resource *res = eng_resource_at(e, r);
	double b = res->busy_ns, wk = res->work;

	if (o->mark0 >= 0) {
		const struct eng_snapshot *s0 = eng_snapshot_at(e, o->mark0);
		const struct eng_snapshot *s1 = eng_snapshot_at(e, o->mark1);
		b += o->extra_periods * (s1->busy_ns[r] - s0->busy_ns[r]);
		wk += o->extra_periods * (s1->work[r] - s0->work[r]);
	}
	*busy_s = b * 1e-9;
	*work = wk;
}

double sim_resource_load(const struct eng *e, const struct sim_option *o, int r)
{
	double busy, work, cap = eng_resource_at(e, r)->capacity;
	sim_resource_usage(e, o, r, &busy, &work);
	return o->step_seconds > 0 && cap > 0 ? work / (cap * o->step_seconds) : 0;
}
