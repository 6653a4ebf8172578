/* text — the plan for people (text, Markdown) and for spreadsheets (CSV). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../model/act.h"
#include "../model/units.h"
#include "../sim/engine.h"
#include "../sim/step.h"
#include "report.h"

/* Human bytes for one printf call: a ring of 16 buffers, enough for any line here. */
static const char *B(double x)
{
	static char ring[16][32];
	static unsigned i;
	return cfg_fmt_bytes(x, ring[i++ % 16], sizeof ring[0]);
}

/* An option's layout: "tp8 pp3 vp7 dp48 ep128 etp1 zero0"; `narrow` (the options table) writes
 * the expert TP size on the TP degree, "tp8e1", which the table's legend explains. */
/* The nodes the host tiers were searched on: "one node", or "up to N nodes" (--tier-nodes). */
static const char *tier_nodes(const struct sim_plan *p, char *buf, size_t n)
{
	if (p->host_tier_nodes > 1)
		snprintf(buf, n, "up to %u nodes", p->host_tier_nodes);
	else
		snprintf(buf, n, "one node");
	return buf;
}

static void layout_str(const struct sim_option *o, char *buf, size_t n, bool narrow)
{
	char d[32], v[16] = "";

	if (mdl_layout_vp(&o->layout) > 1)
		snprintf(v, sizeof v, " vp%u", o->layout.vp);
	char e[40], t[24];
	bool etp = mdl_layout_etp(&o->layout) < o->layout.tp; /* --expert-tp below tp */
	mdl_layout_groups_str(&o->layout, !narrow, e, sizeof e);
	snprintf(t, sizeof t, "tp%u%s%.0u", o->layout.tp, etp && narrow ? "e" : "",
		 etp && narrow ? mdl_layout_etp(&o->layout) : 0);
	char pol[SIM_POLICY_LABEL];
	if (o->kind == SIM_TIERED) /* the DRAM and drives are each node's */
		snprintf(buf, n, "%s dp%u, %s DRAM%s%.0u%s%s", sim_option_policy(o, pol, sizeof pol),
			 o->layout.dp, cfg_fmt_bytes(o->dram, d, sizeof d),
			 o->flash_count ? " + " : "", o->flash_count,
			 o->flash_count > 1 ? " drives"
			 : o->flash_count   ? " drive"
					    : "",
			 o->nodes > 1 ? " per node" : "");
	else
		snprintf(buf, n, "%s pp%u%s dp%u%s zero%u%s%.0u", t, o->layout.pp, v,
			 o->layout.dp, e, o->layout.zero,
			 mdl_layout_shard(&o->layout) < o->layout.dp ? " shard" : "",
			 mdl_layout_shard(&o->layout) < o->layout.dp ? mdl_layout_shard(&o->layout)
								      : 0);
}

/* An option's recompute in the narrow table's four columns: sel for selective, fN for a full
 * recompute of N layers a stage (--recompute-layers). */
static const char *narrow_rc(const struct sim_option *o, char *buf, size_t len)
{
	if (o->recompute_layers)
		snprintf(buf, len, "f%u", o->recompute_layers);
	else
		snprintf(buf, len, "%s",
			 o->recompute == MDL_RC_SELECTIVE ? "sel"
							  : mdl_recompute_name(o->recompute));
	return buf;
}

/* The narrow options table's layout cell: DRAM and drives have columns of their own there. */
static void narrow_layout(const struct sim_option *o, char *buf, size_t n)
{
	char pol[SIM_POLICY_LABEL];
	if (o->kind == SIM_TIERED)
		snprintf(buf, n, "%s dp%u", sim_option_policy(o, pol, sizeof pol), o->layout.dp);
	else
		layout_str(o, buf, n, true);
}


/* A labelled line: pre, the label in `width` columns, then text, broken after its ", "
 * separators onto lines indented under the text wherever it would pass CFG_TEXT_COLUMNS. */
static void wrap_at(FILE *fp, const char *pre, int width, const char *label, const char *text)
{
	fprintf(fp, "%s%-*s", pre, width, label);
	size_t indent = strlen(pre) + (size_t)width;
	cfg_wrap(fp, indent, indent, CFG_TEXT_COLUMNS, text, ", ");
}

/* An inputs line: its label in 11 columns (wrap_at). */
static void wrapped(FILE *fp, const char *pre, const char *label, const char *text)
{
	wrap_at(fp, pre, 11, label, text);
}

/* What DRAM holds besides the model's states and activations: the OS reserve, pinned buffers,
 * staging (the `other` of sim_tier_memory). */
#define DRAM_REST "OS and buffers"

/* The validate categories of a step's kinds: host tiers, GPU-only with model parallelism, data
 * parallelism alone (rpt_step_band), and what the ranges line calls them. */
static const char *const STEP_CATEGORY[3] = {"offload_throughput", "gpu_throughput",
					     "framework_throughput"};
static const char *const STEP_KIND[3] = {"host-tier", "model-parallel GPU-only",
					 "data-parallel GPU-only"};

/* A malformed record leaves the report without ranges and says so once, on stderr (make
 * validate rewrites a stale one; this is one edited by hand). */
static bool band_of(const char *category, struct cfg_band *b)
{
	static int said; /* sweep's workers ask too */
	char err[512];
	int rc = cfg_accuracy_get(category, b, err, sizeof err);
	if (rc < 0 && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "tierplan: warning: %s; the report goes without ranges\n", err);
	return rc > 0;
}

/* The index of an option's kind in STEP_CATEGORY and STEP_KIND. */
static int step_kind(const struct sim_option *o)
{
	const struct mdl_layout *l = &o->layout;
	bool mp = l->tp > 1 || l->pp > 1 || mdl_layout_cp(l) > 1 || mdl_layout_ep(l) > 1;
	return o->kind == SIM_TIERED ? 0 : mp ? 1 : 2;
}

bool rpt_step_band(const struct sim_option *o, struct cfg_band *b, const char **category)
{
	const char *cat = STEP_CATEGORY[step_kind(o)];
	if (category)
		*category = cat;
	return band_of(cat, b);
}

bool rpt_memory_band(struct cfg_band *b)
{
	return band_of("gpu_memory", b);
}

/* v times a band as "3.4-4.3 h", both ends in v's unit (cfg_fmt_seconds_as, cfg_fmt_bytes_as),
 * the unit once. */
static char *span(double v, const struct cfg_band *b,
		  char *(*fmt)(double, double, char *, size_t), char *buf, size_t n)
{
	char lo[32], hi[32];
	fmt(v * b->lo, v, lo, sizeof lo);
	fmt(v * b->hi, v, hi, sizeof hi);
	char *ul = strrchr(lo, ' ');
	if (ul)
		*ul = 0;
	snprintf(buf, n, "%s-%s", lo, hi);
	return buf;
}

/* A time and its band, "3.8 h (3.4-4.3 h)". */
static char *with_band(double t, const struct cfg_band *b, bool banded, char *buf, size_t n)
{
	char v[32], r[80];
	cfg_fmt_seconds(t, v, sizeof v);
	if (banded)
		snprintf(buf, n, "%s (%s)", v, span(t, b, cfg_fmt_seconds_as, r, sizeof r));
	else
		snprintf(buf, n, "%s", v);
	return buf;
}

/* What a tier holds at its peak into text, the kinds it holds in a fixed order, the last one
 * (t->other) named `rest` (a GPU's CUDA context and workspaces; DRAM's OS reserve, pinned
 * buffers and staging), with the peak itself when total > 0; false (text empty) for a tier
 * that holds nothing. */
static bool holds_text(char *text, size_t size, const char *tier, const char *rest,
		       const struct sim_tier_memory *t, double total)
{
	const double v[] = {t->weights, t->gradients, t->optimizer, t->activations, t->other};
	const char *const kind[] = {"weights", "gradients", "optimizer", "activations", rest};
	char kinds[256], b[32], all[40] = "";
	size_t n = 0;
	for (int i = 0; i < 5; i++)
		if (v[i] >= 0.5 && n < sizeof kinds)
			n += (size_t)snprintf(kinds + n, sizeof kinds - n, "%s%s %s", n ? ", " : "",
					      kind[i], cfg_fmt_bytes(v[i], b, sizeof b));
	text[0] = 0;
	if (!n)
		return false;
	if (total > 0)
		snprintf(all, sizeof all, " (%s)", cfg_fmt_bytes(total, b, sizeof b));
	snprintf(text, size, "%s at its peak%s: %s", tier, all, kinds);
	return true;
}

static void holds(FILE *fp, const char *tier, const char *rest, const struct sim_tier_memory *t)
{
	char text[320];
	if (holds_text(text, sizeof text, tier, rest, t, 0))
		wrap_at(fp, "  ", 13, "", text);
}

static void summary_line(FILE *fp, const char *label, const struct sim_option *o, uint64_t asked)
{
	char s[6][32], lay[64], rc[48], first[256];

	layout_str(o, lay, sizeof lay, false);
	/* a long layout and a partial recompute wrap after a comma (405B: "tp2 pp1 dp128 zero3,
	 * ..., recompute full (117 layers a stage)") */
	snprintf(first, sizeof first,
		 "%u GPU%s (%u node%s), %s, micro-batch %llu, recompute %s, %s loss", o->gpus,
		 o->gpus > 1 ? "s" : "", o->nodes, o->nodes > 1 ? "s" : "", lay,
		 (unsigned long long)o->micro_batch, sim_option_recompute(o, rc, sizeof rc),
		 mdl_loss_name(o->loss));
	wrap_at(fp, "  ", 10, label, first);
	struct cfg_band band;
	bool banded = rpt_step_band(o, &band, NULL);
	char run[128], line[320];
	snprintf(line, sizeof line,
		 "%s per step, %.0f tokens/s, runtime %s, peak %s, %s owned / %s cloud",
		 cfg_fmt_seconds(o->step_seconds, s[0], 32), o->tokens_per_second,
		 with_band(o->runtime_seconds, &band, banded, run, sizeof run),
		 cfg_fmt_watts(o->peak_power_watts, s[2], 32), cfg_fmt_usd(o->cost_total, s[3], 32),
		 cfg_fmt_usd(o->cost_cloud, s[4], 32));
	wrap_at(fp, "  ", 10, "", line);
	char fac[32];
	fprintf(fp, "  %-9s buys %s of hardware%s and %s of facility power\n", "",
		cfg_fmt_usd(o->purchase_usd, s[5], 32),
		o->fabric_usd > 0 ? " (network fabric included)" : "",
		cfg_fmt_usd(o->facility_usd, fac, sizeof fac));
	/* three significant digits, kept when they are zeros ($0.300, not $0.3) */
	fprintf(fp, "  %-9s $%#.3g owned / $%#.3g cloud per million tokens\n", "",
		o->usd_per_mtok_owned, o->usd_per_mtok_cloud);
	if (asked && o->sequences_per_step != asked)
		fprintf(fp, "  %-9s trains %llu sequences per step, not the %llu asked: whole "
			    "micro-batches on each of its %u data-parallel ranks\n",
			"", (unsigned long long)o->sequences_per_step, (unsigned long long)asked,
			o->layout.dp);
	if (o->kind == SIM_TIERED) { /* why it buys the DRAM and the drives it does (a node's) */
		char text[320];
		bool many = o->nodes > 1;
		if (holds_text(text, sizeof text, many ? "each node's DRAM" : "DRAM", DRAM_REST,
			       &o->dram_mem, o->peak_dram))
			wrap_at(fp, "  ", 10, "", text);
		if (holds_text(text, sizeof text, many ? "each node's flash" : "flash", "other",
			       &o->flash_mem, o->peak_flash))
			wrap_at(fp, "  ", 10, "", text);
	}
	if (o->flash_over_rating) {
		char wear[32];
		fprintf(fp, "  %-9s warning: writes %.1f drive writes per day, above the drives' "
			    "rating; %s of its owned cost is their wear\n",
			"", o->flash_dwpd, cfg_fmt_usd(o->cost_flash_wear, wear, sizeof wear));
	}
}

/* How the job runs the ops between its GEMMs: compiled, or its norms and rotary eager or fused
 * (nothing to say of a model with neither an RMSNorm nor rotary positions). */
static const char *pointwise(const struct mdl_job *j, const struct mdl_arch *a)
{
	if (j->compile)
		return ", torch.compile";
	if (j->eager_ops)
		return j->fused_glu ? ", norms and rotary as eager PyTorch ops, SwiGLU fused"
				    : ", norms and rotary as eager PyTorch ops";
	if (a->norm_bias && !mdl_arch_rotary(a))
		return j->fused_glu ? ", SwiGLU fused" : "";
	return j->fused_glu ? ", norms, rotary and SwiGLU fused (--pointwise, --swiglu)"
			    : ", norms and rotary fused (--pointwise)";
}

/* Why --host auto took the node it did, into buf; false when the user named it. */
static bool host_why(const struct mdl_hw *hw, char *buf, size_t n)
{
	if (!hw->host_auto)
		return false;
	if (hw->host_fallback > 0)
		snprintf(buf, n, "--host auto's stand-in: %s's usual %s holds %.0f GPUs",
			 hw->gpu.name, hw->gpu.host, hw->host_fallback);
	else if (hw->gpu.host[0])
		snprintf(buf, n, "--host auto: the usual node of %s", hw->gpu.name);
	else
		snprintf(buf, n, "--host auto: a stand-in, %s names no usual node", hw->gpu.name);
	return true;
}

/* The framework's settings a run goes with (f, the job j's optimizer), each where its policy runs
 * it: plan's inputs and simulate's summary, its label in width columns. */
static void framework_line(FILE *fp, const char *pre, int width, const struct sim_config *f,
			   const struct mdl_job *j)
{
	char fw[720], al[48] = "", tw[48] = "", md[64] = "", b[2][32];
	if (f->dispatcher != SIM_DISPATCH_ALLTOALL)
		snprintf(md, sizeof md, "moe-dispatcher %s (%u SMs), ", sim_dispatcher_name(f),
			 sim_dispatcher_sms(f));
	if (f->act_offload && f->act_offload_layers)
		snprintf(al, sizeof al, "activation-offload-layers %u, ", f->act_offload_layers);
	if (f->twin_gpu > 0)
		snprintf(tw, sizeof tw, ", offload-ratio %g", 1 - f->twin_gpu);
	char ck[40] = "";
	if (f->cpu_ckpt != SIM_CPU_CKPT_AUTO)
		snprintf(ck, sizeof ck, ", cpu-checkpointing %s", sim_cpu_ckpt_name(f));
	snprintf(fw, sizeof fw,
		 "clip-grad %s, %s%s%s%s%s%s%s%s%sprefetch %u, %s%s%soverlap-grad-reduce %s, %s"
		 "reduce-bucket %s, swap-pipeline %s, max-in-cpu %s%s%s%s%s "
		 "(each where its policy runs it)",
		 f->no_clip_grad ? "no" : "yes",
		 j->optimizer != MDL_ADAMW ? ""
		 : f->opt_foreach	   ? "foreach-optimizer yes, "
					   : "foreach-optimizer no (fused AdamW), ",
		 f->opt_in_bwd ? "optimizer-in-backward yes, " : "",
		 f->act_offload ? "activation-offload yes, " : "", al,
		 f->tp_comm_overlap ? "tp-comm-overlap yes, " : "",
		 f->ep_overlap ? "ep-overlap yes, " : "",
		 f->shared_overlap ? "shared-expert-overlap yes, " : "", md,
		 f->fp8_all_gather ? "fp8-all-gather yes, " : "", step_prefetch(f),
		 f->bwd_prefetch_post ? "backward-prefetch post, " : "backward-prefetch pre, ",
		 f->ckpt_outside ? "checkpoint-wrap outside, " : "",
		 f->grad_sync_last ? "grad-sync last, " : "", f->no_grad_overlap ? "no" : "yes",
		 f->overlap_param_gather ? "overlap-param-gather yes, " : "",
		 cfg_fmt_count(step_reduce_bucket(f), b[0], 32), sim_swap_pipeline_name(f),
		 cfg_fmt_count(f->max_in_cpu, b[1], 32), tw,
		 f->weights_in_step ? ", weights-up in-step" : "", ck,
		 f->graph_next_fwd ? ", graph-freed next-forward" : "");
	wrap_at(fp, pre, width, "framework", fw);
}

/* ", logits cast in the model" where the option's loss takes fp32 logits the model cast
 * (job.upcast_in_model: --logits-upcast model), else "" */
static const char *upcast_note(const struct mdl_job *j, enum mdl_loss loss)
{
	return j->upcast_in_model && mdl_loss_upcasts(loss) ? ", logits cast in the model" : "";
}

static void inputs(FILE *fp, const struct rpt_plan *r, const char *pre)
{
	const struct mdl_job *j = &r->w->job;
	const struct mdl_hw *hw = r->hw;
	char b[5][32], t[64], rank[448] = "", job[832];

	if (j->method != MDL_FULL)
		snprintf(rank, sizeof rank, " (rank %u on %s%s%s%s%s%s%s%s%s%s%s)", j->lora_rank,
			 mdl_targets_str(j->lora_targets, t, sizeof t),
			 j->dora ? ", as DoRA (--dora)" : "",
			 j->fused_lora ? ", in Unsloth's fused functions (--lora-kernels)" : "",
			 j->lora_fp32 ? ", fp32 adapters (--lora-dtype)"
				      : ", adapters in the model's dtype (--lora-dtype)",
			 j->method == MDL_QLORA ? ", base " : "",
			 j->method == MDL_QLORA ? mdl_quant_name(j->quant) : "",
			 j->method != MDL_QLORA || j->quant != MDL_QUANT_NF4_TORCHAO ? ""
			 : j->compile ? " dequantised by one fused kernel (--compile)"
				      : " dequantised eagerly, 13 ops a linear (--compile)",
			 j->plain_nf4 ? " without double quantisation (--double-quant)," : "",
			 mdl_job_upcast(j) == MDL_UPCAST_NORMS ? " with fp32 norms (--kbit-upcast)"
			 : mdl_job_upcast(j) == MDL_UPCAST_ALL
				 ? " with fp32 norms, embeddings and head (--kbit-upcast)"
			 : mdl_job_bnb(j)
				 ? " with the rest in the compute dtype (--kbit-upcast)"
				 : "",
			 j->quant_head ? ", the head quantised too (--quant-head)" : "",
			 j->quant_fp16 ? ", quantised from fp16 (--quant-from)" : "");
	snprintf(job, sizeof job, "%s fine-tune%s, %s%s, %s, %s attention%s%s%s%s%s%s",
		 mdl_method_name(j->method), rank, mdl_precision_name(j->precision),
		 j->precision != MDL_FP8 ? ""
		 : j->fp8_recipe == MDL_FP8_TORCHAO ? " (torchao's Float8Linear)"
						     : " (Transformer Engine)",
		 mdl_optimizer_name(j->optimizer), mdl_attention_name(j->attention),
		 mdl_act_kv_repeated(&r->w->arch, j)
			 ? " (keys and values repeated to every head: --repeat-kv)"
			 : "",
		 j->grad_dtype == MDL_GRAD_FP32 ? ", fp32 main grads" : "",
		 j->master == MDL_MASTER_REMAINDER ? ", fp32 masters as 16-bit remainders (policy gpu)"
						    : "",
		 pointwise(j, &r->w->arch),
		 mdl_act_fused_qkv_kept(&r->w->arch, j)
			 ? ", q/k/v from one projection kept whole (--fused-qkv)"
			 : "",
		 r->w->arch.experts ? (j->grouped_experts ? ", experts as grouped GEMMs"
							  : ", experts looped (Hugging Face)")
				    : "");
	wrapped(fp, pre, "job", job);
	char rcl[64] = "";
	if (j->recompute_layers && !r->recompute_auto)
		snprintf(rcl, sizeof rcl, " of the first %u layer%s of each stage",
			 j->recompute_layers, j->recompute_layers == 1 ? "" : "s");
	char rcm[96] = "", mods[64];
	if (mdl_job_rc_modules_named(j) && (r->recompute_auto || j->recompute == MDL_RC_SELECTIVE)) {
		mdl_rc_modules_str(j->recompute_modules, ',', mods, sizeof mods);
		snprintf(rcm, sizeof rcm, "%s of %s", r->recompute_auto ? ", selective" : "", mods);
	}
	fprintf(fp, "%s           recompute %s%s%s, loss %s\n", pre,
		r->recompute_auto ? "auto (fastest that fits)" : mdl_recompute_name(j->recompute),
		rcl, rcm,
		r->loss_auto ? "auto (chunked for tiered policies)" : mdl_loss_name(j->loss));
	if (j->upcast_in_model)
		fprintf(fp, "%s           the logits cast to fp32 by the model "
			    "(--logits-upcast model)\n",
			pre);
	if (j->recompute_early_stop)
		fprintf(fp, "%s           a full recompute stops early, each layer's down "
			    "projection not run again (--checkpoint-early-stop yes)\n",
			pre);
	/* the framework's settings every option runs with */
	framework_line(fp, pre, 11, sim_plan_framework(r->req), j);
	const char *dp = sim_plan_dp_only(r->w, r->req);
	char lay[224], most[48] = "";
	if (r->max_gpus_given)
		snprintf(most, sizeof most, "; up to %u GPUs (--max-gpus)", r->req->max_gpus);
	if (dp)
		snprintf(lay, sizeof lay, "data parallelism alone with ZeRO/FSDP sharding (%s)%s",
			 dp, most);
	else
		snprintf(lay, sizeof lay, "data parallelism with tensor, pipeline, context and "
					  "expert parallelism (searched), --model-parallel no for "
					  "data parallelism alone%s",
			 most);
	wrapped(fp, pre, "layouts", lay);
	char seq[512], docs[96] = "", accum[96] = "";
	if (j->doc_tokens && j->doc_tokens < j->seq)
		snprintf(docs, sizeof docs, ", documents of %llu tokens packed, attended apart",
			 (unsigned long long)j->doc_tokens);
	if (r->w->grad_accum)
		snprintf(accum, sizeof accum, ", grad-accum %llu micro-batch%s per step",
			 (unsigned long long)r->w->grad_accum, r->w->grad_accum == 1 ? "" : "es");
	if (r->batch_searched)
		snprintf(t, sizeof t, "1, 2, 4 or 8 per GPU (searched)");
	else
		snprintf(t, sizeof t, "%llu per GPU", (unsigned long long)j->micro_batch);
	snprintf(seq, sizeof seq, "%llu token%s x micro-batch %s%s%s", (unsigned long long)j->seq,
		 j->seq == 1 ? "" : "s", t, docs, accum);
	wrapped(fp, pre, "sequence", seq);
	if (!r->w->grad_accum)
		fprintf(fp, "%s           global batch %llu sequence%s per step%s\n", pre,
			(unsigned long long)r->w->global_batch, r->w->global_batch == 1 ? "" : "s",
			r->batch_default ? " (default; rounded up to whole micro-batches per rank)" : "");
	char ep[64] = "";
	if (r->epochs > 0)
		snprintf(ep, sizeof ep, " (%g epoch%s of %s)", r->epochs, r->epochs == 1 ? "" : "s",
			 cfg_fmt_count(r->w->tokens / r->epochs, b[1], 32));
	fprintf(fp, "%stokens     %s%s%s\n", pre, cfg_fmt_count(r->w->tokens, b[0], 32),
		r->tokens_default ? " (default; set --tokens)" : "", ep);
	char gpu[512];
	snprintf(gpu, sizeof gpu, "%s (%s): %s, %.0f TFLOPS dense bf16, %.0f W, %s, %s/GPU-h",
		 hw->gpu.name, hw->gpu.description, B(hw->gpu.memory), hw->gpu.bf16_flops / 1e12,
		 hw->gpu.tdp, cfg_fmt_usd(hw->gpu.price, b[1], 32),
		 cfg_fmt_usd(hw->gpu.cloud_per_hour, b[2], 32));
	wrapped(fp, pre, "gpu", gpu);
	if (hw->gpu_headroom > 0)
		fprintf(fp, "%sheadroom   GPU %.0f %% kept free (--gpu-headroom; memory above is what is "
			    "left) + allocator %.2f %%\n%s           DRAM %s per node for the OS and "
			    "data loader\n",
			pre, 100 * hw->gpu_headroom, 100 * SIM_ALLOC_SLACK, pre,
			B(mdl_dram_reserve(&hw->host)));
	else
		fprintf(fp, "%sheadroom   GPU allocator slack %.2f %% (--gpu-headroom keeps more free); "
			    "DRAM %s per node for the OS\n",
			pre, 100 * SIM_ALLOC_SLACK, B(mdl_dram_reserve(&hw->host)));
	char nodes[48] = "", reach[32];
	if (r->plan->host_tier_nodes > 1)
		snprintf(nodes, sizeof nodes, "; host tiers on %s",
			 tier_nodes(r->plan, reach, sizeof reach));
	fprintf(fp, "%shost       %s: %u GPU%s per node, %.0f CPU cores, up to %s DRAM, %s%s\n",
		pre, hw->host.name, hw->gpus_per_node, hw->gpus_per_node == 1 ? "" : "s",
		hw->host.cpu_cores,
		B(hw->host.dram_max > hw->dram ? hw->host.dram_max : hw->dram),
		hw->host.network_per_gpu > 0 ? "multi-node" : "single node (no network)", nodes);
	char why[256];
	if (host_why(hw, why, sizeof why))
		fprintf(fp, "%s           %s (--host names another)\n", pre, why);
	if (!(hw->gpu.host_link > 0) && hw->host.pcie_gen > 0 &&
	    hw->host.pcie_gen < hw->gpu.host_link_gen)
		fprintf(fp, "%s           each GPU's PCIe Gen%.0f link runs at the host's Gen%.0f: "
			    "%s each way\n",
			pre, hw->gpu.host_link_gen, hw->host.pcie_gen,
			cfg_fmt_rate(mdl_host_link_bandwidth(hw), b[0], 32));
	if (!hw->flash_count)
		fprintf(fp, "%sflash      none (--flash none): the host tiers end at DRAM, and "
			    "zero-infinity is not searched\n",
			pre);
	else if (r->req->flash_fixed)
		fprintf(fp, "%sflash      %u x %s (%s each) for tiered options\n", pre,
			hw->flash_count, hw->flash.name, B(hw->flash.capacity));
	else
		fprintf(fp, "%sflash      %s (%s each) for tiered options: %u; also the fewest that hold "
			    "the state, doubling to %.0f bays\n",
			pre, hw->flash.name, B(hw->flash.capacity), hw->flash_count,
			hw->host.flash_bays);
	double link = mdl_drive_link_bandwidth(hw->host.pcie_gen);
	if (hw->flash_count && link > 0 && !(hw->prof.flash_read > 0) &&
	    link < fmax(hw->flash.read_bandwidth, hw->flash.write_bandwidth)) {
		char cap[256];
		snprintf(cap, sizeof cap,
			 "each drive at most %s, its PCIe Gen%.0f x4 link on this host "
			 "(datasheet %s read, %s write)",
			 cfg_fmt_rate(link, b[0], 32), hw->host.pcie_gen,
			 cfg_fmt_rate(hw->flash.read_bandwidth, b[1], 32),
			 cfg_fmt_rate(hw->flash.write_bandwidth, b[2], 32));
		wrapped(fp, pre, "", cap);
	}
	if (r->req->policy && r->req->zero >= 0 && !strcmp(r->req->policy, "gpu"))
		fprintf(fp, "%sdeepspeed  the config's ZeRO stage %d, data parallelism only\n", pre,
			r->req->zero);
	else if (r->req->policy)
		fprintf(fp, "%sdeepspeed  the config's policy only: %s\n", pre, r->req->policy);
	/* --dram fixes the size every option buys (sim_dram_bought); else the DIMMs' sizes */
	char dram[128];
	double sizes[MDL_DRAM_SIZES];
	int nsz = mdl_dram_sizes(&hw->host, sizes);
	const struct cfg_host *h = &hw->host;
	if (r->req->dram_fixed)
		snprintf(dram, sizeof dram, "the DRAM given (--dram %s per node)", B(hw->dram));
	else if (nsz == 1)
		snprintf(dram, sizeof dram, "the node's DRAM (%s, fixed)", B(sizes[0]));
	else {
		char many[32]; /* a DIMM on every channel, or on every slot */
		if (h->dram_slots > h->dram_channels)
			snprintf(many, sizeof many, "%.0f or %.0f", h->dram_channels, h->dram_slots);
		else
			snprintf(many, sizeof many, "%.0f", h->dram_slots);
		snprintf(dram, sizeof dram,
			 "the DRAM it needs as DDR%.0f DIMMs make it\n%s           (%s of them: %s "
			 "to %s)",
			 h->dram_ddr, pre, many, B(sizes[0]), B(sizes[nsz - 1]));
	}
	fprintf(fp, "%saccounting each option buys its GPUs, their share of a host, %s\n%s"
		    "           and the drives it uses; power counts that hardware\n",
		pre, dram, pre);
	fprintf(fp, "%seconomics  capex over %g years, PUE %g, $%g/kWh\n", pre,
		r->econ->amortize_years, r->econ->pue, r->econ->usd_per_kwh);
	bool fp32 = j->precision == MDL_FP32;
	fprintf(fp, "%sestimator  discrete-event simulation, GEMMs at %.0f %% of the %s peak", pre,
		step_gemm_efficiency(NULL, hw, j->precision) * hw->gpu.bf16_flops /
			mdl_peak_flops(&hw->gpu, fp32) * 100,
		fp32 ? "fp32 (no tensor cores)" : "dense bf16");
	double fa_fwd, fa_bwd;
	const char *kernel = step_attention_rates(hw, j->attention, j->precision, &fa_fwd, &fa_bwd);
	if (kernel)
		fprintf(fp, ", %s attention at %.0f %% (backward %.0f %%)", kernel, fa_fwd * 100,
			fa_bwd * 100);
	fprintf(fp, "\n%s           and %.1f us per matrix kernel beyond its FLOPs (its fill and drain)",
		pre, step_matmul_fixed(hw) * 1e6);
	/* FlashAttention-2 far behind the GPU's cuDNN attention (the B200: no Blackwell kernels):
	 * the user may be running the faster one without saying so */
	double cu_fwd, cu_bwd;
	if (j->attention == MDL_ATTN_FLASH && hw->gpu.cudnn_attention > 0 &&
	    step_attention_rates(hw, MDL_ATTN_CUDNN, j->precision, &cu_fwd, &cu_bwd) &&
	    cu_fwd + cu_bwd > 2 * (fa_fwd + fa_bwd))
		fprintf(fp, "\n%s           cuDNN's attention runs at %.0f %% (backward %.0f %%) on this GPU: "
			    "--attention cudnn",
			pre, cu_fwd * 100, cu_bwd * 100);
	/* eager kernels (norms, rotary, LoRA's adapter path: act.c's chains) where the GPU's L2
	 * is known */
	double l2, l2_rate, l2_fixed, eager_bwd;
	char l2r[32];
	bool eager = mdl_act_layer_eager(&r->w->arch, j, 1, false, &eager_bwd, NULL) > 0;
	if (eager && step_l2(hw, &l2, &l2_rate, &l2_fixed))
		fprintf(fp, "\n%s           eager kernels' tensors in the L2 where three fit "
			    "%s: %s, %.2f us a kernel%s",
			pre, B(l2), cfg_fmt_rate(l2_rate, l2r, sizeof l2r), l2_fixed * 1e6,
			hw->prof.l2_bandwidth > 0 ? " (the profile's L2 test)" : "");
	bool fp8_measured = hw->prof.gemm_fp8_efficiency > 0;
	if (j->precision == MDL_FP8 && (hw->gpu.gemm_mamf_fp8 > 0 || fp8_measured))
		fprintf(fp, "\n%s           the linear layers' FP8 GEMMs at %.0f %% of the FP8 "
			    "peak%s",
			pre, step_gemm_efficiency(NULL, hw, j->precision) * step_fp8_share(hw) * 100,
			fp8_measured ? " (the profile's FP8 GEMM test)" : "");
	fputc('\n', fp);
	fprintf(fp, "%ssearch     %llu configurations simulated; %llu more pruned by a bound (could "
		    "not win or fit)\n",
		pre, (unsigned long long)r->plan->layouts_evaluated,
		(unsigned long long)r->plan->layouts_pruned);
	if (r->plan->nno_placement) {
		fprintf(fp, "%s           not searched: ", pre);
		for (int i = 0; i < r->plan->nno_placement; i++)
			fprintf(fp, "%s%s", i ? ", " : "", r->plan->no_placement[i]);
		fprintf(fp, " (no placement with --recompute %s)\n",
			mdl_recompute_name(j->recompute));
	}
	if (hw->prof.file[0]) {
		char prof[768], shape[192] = "";
		if (hw->prof.gemm_efficiency > 0 && hw->prof.gemm_hidden > 0 &&
		    hw->prof.gemm_hidden != (double)r->w->arch.hidden)
			snprintf(shape, sizeof shape,
				 "its GEMMs were timed at a layer of hidden %.0f, this model's is "
				 "%llu, and at a power cap their rate varies with the shape, "
				 "calibrate --model times them at this one",
				 hw->prof.gemm_hidden, (unsigned long long)r->w->arch.hidden);
		snprintf(prof, sizeof prof,
			 "%s (its measured %s%s%s%shost links, DRAM, CPU Adam and drives override "
			 "the catalog)",
			 hw->prof.file, hw->prof.gemm_efficiency > 0 ? "GEMMs, " : "",
			 hw->prof.gemm_fp8_efficiency > 0 ? "FP8 GEMMs, " : "",
			 hw->prof.matmul_fixed > 0 ? "kernel fixed time, " : "",
			 hw->prof.hbm_bandwidth > 0 ? "HBM, " : "");
		wrapped(fp, pre, "profile", prof);
		if (shape[0])
			wrapped(fp, pre, "", shape);
	}
}

/* "60 fewer GPUs", "the same number of GPUs", "93 % less ..." : one comparison of the trade-off */
static void compare_count(FILE *fp, uint32_t t, uint32_t g)
{
	if (t == g)
		fprintf(fp, "the same number of GPUs");
	else
		fprintf(fp, "%u %s GPU%s", t < g ? g - t : t - g, t < g ? "fewer" : "more",
			(t < g ? g - t : t - g) == 1 ? "" : "s");
}

static void compare_share(FILE *fp, const char *what, double t, double g)
{
	double d = g > 0 ? 100.0 * (t / g - 1) : 0;
	if (fabs(d) < 0.5)
		fprintf(fp, "about the same %s", what);
	else
		fprintf(fp, "%.0f %% %s %s", fabs(d), d < 0 ? "less" : "more", what);
}

/* Where the runtime ranges of the recommendation come from: the kinds of its options, and the
 * GPU peaks. */
static void ranges(FILE *fp, const struct sim_plan *p)
{
	const int rec[3] = {p->rec_best, p->rec_gpu_only, p->rec_tiered};
	bool kind[3] = {false};
	struct cfg_band b[3], mem;
	for (int i = 0; i < 3; i++) {
		if (rec[i] < 0)
			continue;
		int k = step_kind(&p->options[rec[i]]);
		kind[k] |= rpt_step_band(&p->options[rec[i]], &b[k], NULL);
	}
	char text[512];
	size_t n = (size_t)snprintf(text, sizeof text,
				    "the runtime ranges hold what 90 %% of published runs measured "
				    "over the prediction, by kind (tierplan validate): ");
	bool any = false;
	for (int k = 0; k < 3 && n < sizeof text; k++)
		if (kind[k]) {
			n += (size_t)snprintf(text + n, sizeof text - n, "%s%s %.2f-%.2fx (%d runs)",
					      any ? ", " : "", STEP_KIND[k], b[k].lo, b[k].hi,
					      b[k].cases);
			any = true;
		}
	if (!any)
		return;
	if (rpt_memory_band(&mem) && n < sizeof text)
		snprintf(text + n, sizeof text - n, "; GPU peaks %.2f-%.2fx (%d runs)", mem.lo,
			 mem.hi, mem.cases);
	wrap_at(fp, "  ", 11, "ranges:", text);
}

static void tradeoff(FILE *fp, const struct sim_plan *p)
{
	if (p->rec_gpu_only < 0 || p->rec_tiered < 0)
		return;
	const struct sim_option *g = &p->options[p->rec_gpu_only];
	const struct sim_option *t = &p->options[p->rec_tiered];
	double ratio = t->runtime_seconds >= g->runtime_seconds
			       ? t->runtime_seconds / g->runtime_seconds
			       : g->runtime_seconds / t->runtime_seconds;
	fprintf(fp, "  trade-off: tiered uses ");
	compare_count(fp, t->gpus, g->gpus);
	fprintf(fp, ", ");
	compare_share(fp, "hardware to buy", t->purchase_usd, g->purchase_usd);
	fprintf(fp, " and ");
	compare_share(fp, "peak power", t->peak_power_watts, g->peak_power_watts);
	fprintf(fp, ";\n             it costs ");
	compare_share(fp, "per job (owned)", t->cost_total, g->cost_total);
	if (ratio < 1.05)
		fprintf(fp, " and runs about as long\n");
	else
		fprintf(fp, " and runs %.1fx %s\n", ratio,
			t->runtime_seconds >= g->runtime_seconds ? "longer" : "shorter");
}

/* What a GPU-only option's GPUs are for: capacity (the fewest that fit), the deadline at the
 * option's throughput per GPU, and the rest, compute bought for speed. */
static void why_gpus(FILE *fp, const struct rpt_plan *r, const struct sim_option *o)
{
	uint32_t mem = r->plan->gpus_for_memory;
	if (!mem)
		return;
	fprintf(fp, "  %-9s memory needs %u GPU%s (the fewest that fit)", "", mem, mem > 1 ? "s" : "");
	if (o->gpus > mem)
		fprintf(fp, "; %u of its %u buy speed, not capacity", o->gpus - mem, o->gpus);
	fprintf(fp, "; MFU %.0f %%\n", 100.0 * o->mfu);
	if (r->req->deadline > 0)
		fprintf(fp, "  %-9s the deadline needs %.0f at its throughput per GPU\n", "",
			ceil(o->gpus * o->runtime_seconds / r->req->deadline));
}

/* Says when a kind's recommended option misses --deadline or --budget: then no option of its
 * kind meets both, and it is the nearest miss (plan.c, pick): the fastest within the budget,
 * the cheapest by the deadline, else the fastest (a deadline set) or the cheapest. */
static void misses(FILE *fp, const struct rpt_plan *r, const struct sim_option *o, const char *kind)
{
	const struct sim_plan_req *q = r->req;
	bool late = q->deadline > 0 && o->runtime_seconds > q->deadline;
	bool dear = q->budget > 0 && o->cost_total > q->budget;
	const char *sp = *kind ? " " : "";
	if (late && dear)
		fprintf(fp,
			"  %-9s no %s%soption meets the deadline or the budget: this is the "
			"fastest\n",
			"", kind, sp);
	else if (late)
		fprintf(fp, "  %-9s no %s%soption%s meets the deadline: this is the fastest%s\n", "",
			kind, sp, q->budget > 0 ? " within the budget" : "",
			q->budget > 0 ? " within it" : "");
	else if (dear)
		fprintf(fp, "  %-9s no %s%soption%s is within the budget: this is the cheapest%s\n",
			"", kind, sp, q->deadline > 0 ? " that meets the deadline" : "",
			q->deadline > 0 ? " that meets it" : "");
}

/* An option within --deadline or --budget as predicted that runs of its kind would take past
 * them (its range: the owned cost's time-bound part, capex over the runtime and energy, scales
 * with the runtime; the drives' wear does not). */
static void at_risk(FILE *fp, const struct rpt_plan *r, const struct sim_option *o)
{
	const struct sim_plan_req *q = r->req;
	struct cfg_band b;
	if (!(q->deadline > 0 || q->budget > 0) || !rpt_step_band(o, &b, NULL))
		return;
	bool late = q->deadline > 0 && o->runtime_seconds > q->deadline;
	bool dear = q->budget > 0 && o->cost_total > q->budget;
	char t[32], c[32];
	double slow = o->runtime_seconds * b.hi;
	double cost = (o->cost_total - o->cost_flash_wear) * b.hi + o->cost_flash_wear;
	if (!late && q->deadline > 0 && slow > q->deadline)
		fprintf(fp,
			"  %-9s at risk: runs of its kind took up to %.2fx the prediction "
			"(95th percentile): %s, past the deadline\n",
			"", b.hi, cfg_fmt_seconds(slow, t, sizeof t));
	if (!dear && q->budget > 0 && cost > q->budget)
		fprintf(fp,
			"  %-9s at risk: runs of its kind took up to %.2fx the prediction "
			"(95th percentile): %s owned, over the budget\n",
			"", b.hi, cfg_fmt_usd(cost, c, sizeof c));
}

/* "0.04 % cheaper" or "dearer" (less or more of a figure, as a share of the other's), or "as
 * cheap" within half a hundredth of a per cent. */
static const char *compared(double a, double b, const char *less, const char *more,
			    const char *same, char *buf, size_t n)
{
	double d = b > 0 ? 100.0 * (b - a) / b : 0;
	if (fabs(d) < 0.005)
		snprintf(buf, n, "%s", same);
	else
		snprintf(buf, n, "%.2g %% %s", fabs(d), d > 0 ? less : more);
	return buf;
}

/* Recommendation k (0 best, 1 gpu-only, 2 tiered) where near ties took it over the option its
 * figures alone would take (sim_plan.rec_passed): that option, what it would save and what it
 * would buy more. */
static void passed_over(FILE *fp, const struct sim_plan *p, int k)
{
	const int rec[3] = {p->rec_best, p->rec_gpu_only, p->rec_tiered};
	int i = p->rec_passed[k], t = rec[k];
	if (i < 0 || t < 0)
		return;
	const struct sim_option *a = &p->options[i], *b = &p->options[t];
	char c[32], s[32], u[32], line[256];
	snprintf(line, sizeof line,
		 "taken over #%d, which is %s and %s, but buys %s more hardware: figures within "
		 "1 %% are no grounds to buy more",
		 i, compared(a->cost_total, b->cost_total, "cheaper", "dearer", "as cheap", c, 32),
		 compared(a->runtime_seconds, b->runtime_seconds, "shorter", "longer",
			  "as long", s, 32),
		 cfg_fmt_usd(a->purchase_usd - b->purchase_usd, u, sizeof u));
	wrap_at(fp, "  ", 10, "", line);
}

/* No host-tier option fits: says so, and what overflows in the closest miss where the table
 * shows it (what overflows may be the GPU, not the host's DRAM or flash). */
static void tiered_none(FILE *fp, const struct rpt_plan *r)
{
	const struct sim_plan *p = r->plan;
	char nodes[32];
	tier_nodes(p, nodes, sizeof nodes);
	for (int i = 0; i < p->noptions; i++)
		if (!p->options[i].fits && p->options[i].kind == SIM_TIERED) {
			fprintf(fp, "  tiered    none fits %s of this host; the closest, #%d, %s\n",
				nodes, i, p->options[i].overflow);
			return;
		}
	fprintf(fp, "  tiered    none fits %s of this host\n", nodes);
}

/* The recommendation: the best by the objective, the cheapest GPU-only and host-tier options,
 * what the GPU-only option's GPUs are for, and the trade-off; text and Markdown share it. */
static void recommendation(FILE *fp, const struct rpt_plan *r)
{
	const struct sim_plan *p = r->plan;
	uint64_t asked = r->w->grad_accum ? 0 : r->w->global_batch;
	char b[4][32];

	fprintf(fp, "recommendation (objective: %s", sim_objective_name(r->req->objective));
	if (r->req->deadline > 0)
		fprintf(fp, ", deadline %s", cfg_fmt_seconds(r->req->deadline, b[2], 32));
	if (r->req->budget > 0)
		fprintf(fp, ", budget %s", cfg_fmt_usd(r->req->budget, b[3], 32));
	fprintf(fp, ")\n");
	if (p->rec_best >= 0) {
		summary_line(fp, "best", &p->options[p->rec_best], asked);
		passed_over(fp, p, 0);
		if (!p->deadline_met)
			misses(fp, r, &p->options[p->rec_best], "");
		at_risk(fp, r, &p->options[p->rec_best]);
	} else {
		fprintf(fp, "  best      nothing fits\n");
	}
	const char *only = r->req->policy; /* --deepspeed kept the search to one policy */
	if (p->rec_gpu_only >= 0) {
		summary_line(fp, "gpu-only", &p->options[p->rec_gpu_only], asked);
		passed_over(fp, p, 1);
		misses(fp, r, &p->options[p->rec_gpu_only], "GPU-only");
		at_risk(fp, r, &p->options[p->rec_gpu_only]);
		why_gpus(fp, r, &p->options[p->rec_gpu_only]);
	} else if (only && strcmp(only, "gpu"))
		fprintf(fp, "  gpu-only  not searched: --deepspeed keeps to %s\n", only);
	else if (r->req->counts)
		fprintf(fp, "  gpu-only  none fits at the GPU counts compared (--gpus)\n");
	else
		fprintf(fp, "  gpu-only  none fits %s\n",
			r->hw->host.network_per_gpu > 0
				? "within --max-gpus"
				: "on one node of this host (it has no network; --host "
				  CFG_HOST_STAND_IN " plans a cluster)");
	if (p->rec_tiered >= 0) {
		summary_line(fp, "tiered", &p->options[p->rec_tiered], asked);
		passed_over(fp, p, 2);
		misses(fp, r, &p->options[p->rec_tiered], "host-tier");
		at_risk(fp, r, &p->options[p->rec_tiered]);
	}
	else if (only && !strcmp(only, "gpu"))
		fprintf(fp, "  tiered    not searched: --deepspeed keeps to the GPU (ZeRO without "
			    "offload)\n");
	else
		tiered_none(fp, r);
	tradeoff(fp, p);
	ranges(fp, p);
}

/* compare: where a count it lists lies past the nodes the host tiers were searched on (one, or
 * --tier-nodes: sim_plan.host_tier_gpus), where only GPU-only options are searched, says so
 * into buf; NULL otherwise */
static const char *host_tiers_note(const struct rpt_plan *r, char *buf, size_t n)
{
	char nodes[32];
	for (int i = 0; r->req->counts && i < r->req->ncounts; i++)
		if (r->plan->host_tier_gpus > 0 && r->req->counts[i] > r->plan->host_tier_gpus) {
			snprintf(buf, n, "host tiers on %s: up to %u GPUs, GPU-only beyond",
				 tier_nodes(r->plan, nodes, sizeof nodes), r->plan->host_tier_gpus);
			return buf;
		}
	return NULL;
}

/* The recommended roles of option i, "" when none: "best (cost)", "gpu-only", "tiered", joined
 * by " + ". */
static const char *roles(const struct rpt_plan *r, int i, char *buf, size_t n)
{
	const struct sim_plan *p = r->plan;
	size_t k = 0;
	buf[0] = '\0';
	if (i == p->rec_best)
		k += (size_t)snprintf(buf + k, n - k, "best (%s)", sim_objective_name(r->req->objective));
	if (i == p->rec_gpu_only && k < n)
		k += (size_t)snprintf(buf + k, n - k, "%sgpu-only", k ? " + " : "");
	if (i == p->rec_tiered && k < n)
		snprintf(buf + k, n - k, "%stiered", k ? " + " : "");
	return buf;
}

void rpt_plan_text(FILE *fp, const struct rpt_plan *r)
{
	const struct sim_plan *p = r->plan;
	const struct mdl_arch *a = &r->w->arch;
	struct mdl_counts c;
	char b[4][32];

	mdl_arch_counts(a, &c);
	fprintf(fp, "tierplan %s: %s (%s, %s params, %llu layers, hidden %llu)\n\n", r->command,
		r->model_name,
		a->model_type, cfg_fmt_count((double)c.params, b[0], 32),
		(unsigned long long)a->layers, (unsigned long long)a->hidden);
	fprintf(fp, "inputs\n");
	inputs(fp, r, "  ");

	fprintf(fp, "\n");
	recommendation(fp, r);

	bool opt = false; /* a zero3-offload option with its parameters on the GPUs */
	bool twin = false; /* one with part of its optimizer on the GPUs too (Twin-Flow) */
	bool folded = false; /* an option with its experts over fewer TP ranks (tpNeM) */
	int lw = 26;      /* the narrow table's layout column: as wide as its widest cell */
	for (int i = 0; i < p->noptions; i++) {
		char lay[96];
		opt |= p->options[i].params_on_gpu;
		twin |= p->options[i].params_on_gpu && p->options[i].twin_gpu > 0;
		folded |= p->options[i].kind == SIM_GPU_ONLY &&
			  mdl_layout_etp(&p->options[i].layout) < p->options[i].layout.tp;
		narrow_layout(&p->options[i], lay, sizeof lay);
		lw = (int)strlen(lay) > lw ? (int)strlen(lay) : lw;
	}
	char note[112], beyond[128] = "";
	if (host_tiers_note(r, note, sizeof note))
		snprintf(beyond, sizeof beyond, ";\n   %s", note);
	fprintf(fp, "\n%s\n  (%s%s%s%s%s)\n",
		r->req->counts ? "options at each GPU count"
			       : "options: the Pareto front of cost, runtime and peak power",
		r->wide ? "GPU peak per GPU; DRAM used and flash per node; buy = hardware to buy"
			: "GPU peak per GPU; DRAM bought and drives per node; rc = recompute, "
			  "fN: full on\n   N layers a stage; --wide for more",
		folded && !r->wide ? ";\n   tpNeM = the routed experts split over M of the N TP "
				     "ranks (--expert-tp)"
				   : "",
		opt ? ";\n   (opt) = ZeRO-3 with the optimizer alone offloaded, the parameters on "
		      "the GPUs (--offload-param no)"
		    : "",
		twin ? ";\n   rR = the CPU steps that share of the optimizer, the GPUs the rest "
		       "(DeepSpeed's Twin-Flow, --offload-ratio R)"
		     : "",
		beyond);
	if (r->wide)
		fprintf(fp, "  %-2s %-8s %5s %-44s %2s %-9s %9s %9s %9s %9s %8s %8s %8s %9s %9s %11s "
			    "%7s\n",
			"#", "kind", "GPUs", "layout", "mb", "recompute", "GPU peak", "DRAM used",
			"flash", "step", "tok/s", "runtime", "peak", "owned", "cloud", "buy", "wear");
	else
		fprintf(fp, "  %-2s %4s %-*s %2s %-4s %8s %8s %6s %9s %9s %8s %9s %6s\n", "#",
			"GPUs", lw, "layout", "mb", "rc", "GPU peak", "DRAM", "drives", "step",
			"runtime", "power", "owned", "wear");
	bool over = false;
	for (int i = 0; i < p->noptions; i++) {
		const struct sim_option *o = &p->options[i];
		char lay[96], s[7][32], drv[16], rc[48];
		if (r->wide)
			layout_str(o, lay, sizeof lay, false);
		else
			narrow_layout(o, lay, sizeof lay);
		snprintf(drv, sizeof drv, "%u", o->flash_count);
		if (r->wide)
			fprintf(fp,
				"  %-2d %-8s %5u %-44s %2llu %-9s %9s %9s %9s %9s %8.0f %8s %8s %9s %9s "
				"%11s %6.2f%%%s\n",
				i, o->kind == SIM_GPU_ONLY ? "gpu-only" : "tiered", o->gpus, lay,
				(unsigned long long)o->micro_batch,
				sim_option_recompute(o, rc, sizeof rc), B(o->peak_gpu),
				rpt_shows_dram(o) ? B(o->peak_dram) : "-",
				o->kind == SIM_TIERED ? B(o->peak_flash) : "-",
				cfg_fmt_seconds(o->step_seconds, s[0], 32), o->tokens_per_second,
				cfg_fmt_seconds(o->runtime_seconds, s[1], 32),
				cfg_fmt_watts(o->peak_power_watts, s[2], 32),
				cfg_fmt_usd(o->cost_total, s[3], 32), cfg_fmt_usd(o->cost_cloud, s[4], 32),
				cfg_fmt_usd(o->purchase_usd, s[5], 32), 100 * o->flash_life_fraction,
				o->flash_over_rating ? "!" : "");
		else
			fprintf(fp,
				"  %-2d %4u %-*s %2llu %-4.4s %8s %8s %6s %9s %9s %8s %9s "
				"%5.2f%%%s\n",
				i, o->gpus, lw, lay, (unsigned long long)o->micro_batch,
				narrow_rc(o, rc, sizeof rc),
				B(o->peak_gpu), B(o->dram), o->flash_count ? drv : "-",
				cfg_fmt_seconds(o->step_seconds, s[0], 32),
				cfg_fmt_seconds(o->runtime_seconds, s[1], 32),
				cfg_fmt_watts(o->peak_power_watts, s[2], 32),
				cfg_fmt_usd(o->cost_total, s[3], 32), 100 * o->flash_life_fraction,
				o->flash_over_rating ? "!" : "");
		if (!o->fits)
			fprintf(fp, "     DOES NOT FIT: %s\n", o->overflow);
		over |= o->flash_over_rating;
	}
	if (over)
		fprintf(fp, "  ! writes its drives faster than their rated drive writes per day: the "
			    "recommendation\n    takes such an option only when none within the rating "
			    "meets --deadline and --budget\n");

	double states = p->states.weights_bytes + p->states.gradients_bytes +
			p->states.optimizer_bytes;
	fprintf(fp, "\nmemory (whole model, unsharded; activations of one micro-batch)\n");
	fprintf(fp, "  weights      %10s\n", B(p->states.weights_bytes));
	fprintf(fp, "  gradients    %10s   (%s trainable params)\n", B(p->states.gradients_bytes),
		cfg_fmt_count((double)p->states.trainable_params, b[1], 32));
	fprintf(fp, "  optimizer    %10s\n", B(p->states.optimizer_bytes));
	fprintf(fp, "  activations  %10s   (recompute %s)\n", B(p->activations_bytes),
		mdl_recompute_name(r->w->job.recompute));
	fprintf(fp, "  other        %10s   (CUDA context per GPU)\n", B(p->other_bytes));
	fprintf(fp, "  total        %10s\n", B(states + p->activations_bytes + p->other_bytes));
	fprintf(fp, "  model states %.2f bytes per parameter\n", states / (double)p->states.params);
	fprintf(fp, "\nsizes: GiB = 2^30 bytes; costs: owned = amortised capex + energy, cloud = "
		    "on-demand GPU-hours\n(tiered: + DRAM and drives at the GPU's rent-to-own ratio); "
		    "wear = share of the drives' rated endurance\n");
}

/* The options table's columns, shared by Markdown and HTML. */
#define OPT_COLS 19
static const char *const opt_head[OPT_COLS] = {
	"#",	  "kind",     "GPUs",	  "layout",	"mb",	  "recompute", "fits",
	"GPU peak", "DRAM",	  "flash",	  "step (s)", "tokens/s", "runtime",   "peak power",
	"owned",	  "cloud",    "buy",	  "wear",	"recommended"};

/* Option i's cells, in opt_head's order. */
static void option_cells(const struct rpt_plan *r, int i, char cell[OPT_COLS][96])
{
	const struct sim_option *o = &r->plan->options[i];
	snprintf(cell[0], 96, "%d", i);
	snprintf(cell[1], 96, "%s", o->kind == SIM_GPU_ONLY ? "gpu-only" : "tiered");
	snprintf(cell[2], 96, "%u", o->gpus);
	layout_str(o, cell[3], 96, false);
	snprintf(cell[4], 96, "%llu", (unsigned long long)o->micro_batch);
	sim_option_recompute(o, cell[5], 96);
	snprintf(cell[6], 96, "%s", o->fits ? "yes" : "no");
	snprintf(cell[7], 96, "%s", B(o->peak_gpu));
	snprintf(cell[8], 96, "%s", rpt_shows_dram(o) ? B(o->peak_dram) : "-");
	snprintf(cell[9], 96, "%s", o->kind == SIM_TIERED ? B(o->peak_flash) : "-");
	snprintf(cell[10], 96, "%.3f", o->step_seconds);
	snprintf(cell[11], 96, "%.0f", o->tokens_per_second);
	cfg_fmt_seconds(o->runtime_seconds, cell[12], 96);
	cfg_fmt_watts(o->peak_power_watts, cell[13], 96);
	cfg_fmt_usd(o->cost_total, cell[14], 96);
	cfg_fmt_usd(o->cost_cloud, cell[15], 96);
	cfg_fmt_usd(o->purchase_usd, cell[16], 96);
	snprintf(cell[17], 96, "%.2f %%%s", 100 * o->flash_life_fraction,
		 o->flash_over_rating ? " (over rating)" : "");
	roles(r, i, cell[18], 96);
}

/* The whole-model memory rows: label and bytes. */
static int memory_rows(const struct sim_plan *p, const char *label[5], double bytes[5])
{
	static const char *const l[5] = {"weights", "gradients", "optimizer",
					 "activations (one micro-batch)", "other (per GPU)"};
	double b[5] = {p->states.weights_bytes, p->states.gradients_bytes,
		       p->states.optimizer_bytes, p->activations_bytes, p->other_bytes};
	for (int i = 0; i < 5; i++) {
		label[i] = l[i];
		bytes[i] = b[i];
	}
	return 5;
}

void rpt_plan_md(FILE *fp, const struct rpt_plan *r)
{
	const struct sim_plan *p = r->plan;
	const char *label[5];
	double bytes[5];

	fprintf(fp, "# tierplan %s: %s\n\n## Inputs\n\n```\n", r->command, r->model_name);
	inputs(fp, r, "");
	fprintf(fp, "```\n\n## Recommendation\n\n```\n");
	recommendation(fp, r);
	char note[112];
	fprintf(fp, "```\n\n## Options\n\n");
	if (host_tiers_note(r, note, sizeof note))
		fprintf(fp, "(%s)\n\n", note);
	fputc('|', fp);
	for (int c = 0; c < OPT_COLS; c++)
		fprintf(fp, " %s |", opt_head[c]);
	fprintf(fp, "\n|");
	for (int c = 0; c < OPT_COLS; c++)
		fputs("---|", fp);
	fputc('\n', fp);
	for (int i = 0; i < p->noptions; i++) {
		char cell[OPT_COLS][96];
		option_cells(r, i, cell);
		fputc('|', fp);
		for (int c = 0; c < OPT_COLS; c++)
			fprintf(fp, " %s |", cell[c]);
		fputc('\n', fp);
	}
	fprintf(fp, "\n## Memory (whole model, unsharded)\n\n| state | bytes |\n|---|---|\n");
	for (int i = 0, n = memory_rows(p, label, bytes); i < n; i++)
		fprintf(fp, "| %s | %s |\n", label[i], B(bytes[i]));
}

void rpt_html_escape(FILE *fp, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '<')
			fputs("&lt;", fp);
		else if (s[i] == '>')
			fputs("&gt;", fp);
		else if (s[i] == '&')
			fputs("&amp;", fp);
		else if (s[i] == '"')
			fputs("&quot;", fp);
		else
			fputc(s[i], fp);
	}
}

static void html_text(FILE *fp, const char *s)
{
	rpt_html_escape(fp, s, strlen(s));
}

/* A text section's lines as a preformatted block (the recommendation and the inputs keep their
 * aligned columns). */
static void html_pre(FILE *fp, const char *cls, void (*fn)(FILE *, const struct rpt_plan *),
		     const struct rpt_plan *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return;
	fn(m, r);
	fclose(m);
	fprintf(fp, "<pre class=\"%s\">", cls);
	rpt_html_escape(fp, text, len);
	fprintf(fp, "</pre>\n");
	free(text);
}

static void inputs_plain(FILE *fp, const struct rpt_plan *r)
{
	inputs(fp, r, "");
}

void rpt_plan_html(FILE *fp, const struct rpt_plan *r)
{
	const struct sim_plan *p = r->plan;
	const char *label[5];
	double bytes[5];

	fprintf(fp, "<section id=\"recommendation\"><h2>Recommendation</h2>\n");
	html_pre(fp, "recommendation", recommendation, r);
	char note[112];
	fprintf(fp, "</section>\n<section id=\"options\"><h2>Options</h2>\n");
	if (host_tiers_note(r, note, sizeof note)) {
		fprintf(fp, "<p>(");
		html_text(fp, note);
		fprintf(fp, ")</p>\n");
	}
	fprintf(fp, "<div class=\"scroll\"><table id=\"options-table\"><thead><tr>");
	for (int c = 0; c < OPT_COLS; c++) {
		fprintf(fp, "<th>");
		html_text(fp, opt_head[c]);
		fprintf(fp, "</th>");
	}
	fprintf(fp, "</tr></thead><tbody>\n");
	for (int i = 0; i < p->noptions; i++) {
		char cell[OPT_COLS][96];
		option_cells(r, i, cell);
		fprintf(fp, "<tr%s>", cell[18][0] ? " class=\"recommended\"" : "");
		for (int c = 0; c < OPT_COLS; c++) {
			fprintf(fp, "<td>");
			html_text(fp, cell[c]);
			fprintf(fp, "</td>");
		}
		fprintf(fp, "</tr>\n");
	}
	fprintf(fp, "</tbody></table></div></section>\n<section id=\"memory\"><h2>Memory (whole "
		    "model, unsharded)</h2>\n<table><thead><tr><th>state</th><th>bytes</th></tr>"
		    "</thead><tbody>\n");
	for (int i = 0, n = memory_rows(p, label, bytes); i < n; i++) {
		fprintf(fp, "<tr><td>");
		html_text(fp, label[i]);
		fprintf(fp, "</td><td>%s</td></tr>\n", B(bytes[i]));
	}
	fprintf(fp, "</tbody></table></section>\n<section id=\"inputs\"><h2>Inputs</h2>\n");
	html_pre(fp, "inputs", inputs_plain, r);
	fprintf(fp, "</section>\n");
}

void rpt_plan_csv(FILE *fp, const struct rpt_plan *r)
{
	const struct sim_plan *p = r->plan;

	fprintf(fp, "index,kind,name,gpus,nodes,tp,pp,dp,zero,policy,recompute,micro_batch,grad_accum,"
		    "fits,peak_gpu_bytes,peak_dram_bytes,peak_flash_bytes,step_seconds,tokens_per_second,"
		    "runtime_seconds,peak_power_watts,energy_kwh,cost_capex_usd,cost_energy_usd,"
		    "cost_cloud_usd,cost_total_usd,flash_bytes_written,flash_life_fraction,interleave,"
		    "purchase_usd,flash_over_rating,recommended,ep,expert_tp,cp,"
		    "recompute_layers,runtime_seconds_low,runtime_seconds_high\n");
	for (int i = 0; i < p->noptions; i++) {
		const struct sim_option *o = &p->options[i];
		char rl[64], range[64] = ",";
		struct cfg_band b;
		if (rpt_step_band(o, &b, NULL)) /* empty without an accuracy record */
			snprintf(range, sizeof range, "%.6g,%.6g", o->runtime_seconds * b.lo,
				 o->runtime_seconds * b.hi);
		fprintf(fp,
			"%d,%s,\"%s\",%u,%u,%u,%u,%u,%u,%s,%s,%llu,%llu,%s,%.0f,%.0f,%.0f,%.6g,%.6g,%.6g,"
			"%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.0f,%.6g,%u,%.2f,%s,\"%s\",%u,%u,%u,%u,%s\n",
			i, o->kind == SIM_GPU_ONLY ? "gpu-only" : "tiered", o->name, o->gpus, o->nodes,
			o->layout.tp, o->layout.pp, o->layout.dp, o->layout.zero, o->policy,
			mdl_recompute_name(o->recompute), (unsigned long long)o->micro_batch,
			(unsigned long long)o->grad_accum, o->fits ? "true" : "false", o->peak_gpu,
			o->peak_dram, o->peak_flash, o->step_seconds, o->tokens_per_second,
			o->runtime_seconds, o->peak_power_watts, o->energy_kwh, o->cost_capex,
			o->cost_energy, o->cost_cloud, o->cost_total, o->flash_bytes_written,
			o->flash_life_fraction, mdl_layout_vp(&o->layout), o->purchase_usd,
			o->flash_over_rating ? "true" : "false", roles(r, i, rl, sizeof rl),
			mdl_layout_ep(&o->layout), mdl_layout_etp(&o->layout),
			mdl_layout_cp(&o->layout), o->recompute_layers, range);
	}
}

/* The summary lines of a simulated configuration (text and Markdown): host, step, throughput,
 * fit, peaks per tier, power, flash writes. */
static void sim_summary(FILE *fp, const struct rpt_sim *r)
{
	const struct sim_option *o = r->o;
	char s[6][32], rc[48], why[256];

	if (host_why(r->hw, why, sizeof why))
		fprintf(fp, "  host         %s (%s)\n", r->hw->host.name, why);
	else
		fprintf(fp, "  host         %s\n", r->hw->host.name);
	if (r->hw->prof.file[0])
		fprintf(fp, "  profile      %s\n", r->hw->prof.file);
	framework_line(fp, "  ", 13, r->c, &r->w->job);
	if (o->params_on_gpu && o->twin_gpu > 0) {
		char tw[200];
		if (o->opt_gpu > 0)
			snprintf(
			    tw, sizeof tw,
			    "Twin-Flow (--offload-ratio %g): %.0f %% of each rank's parameters "
			    "stepped on its GPU, their fp32 state and gradients kept there; the "
			    "rest by CPU Adam",
			    1 - o->twin_gpu, 100 * o->opt_gpu);
		else
			snprintf(
			    tw, sizeof tw,
			    "Twin-Flow (--offload-ratio %g): no whole optimizer sub-group of a "
			    "rank falls to the GPU at this ratio (DeepSpeed's sub_group_size): "
			    "all on the CPU",
			    1 - o->twin_gpu);
		wrap_at(fp, "  ", 13, "optimizer", tw);
	}
	/* the sequences a step trains: the global batch rounded up to whole micro-batches on every
	 * data-parallel replica */
	char step[320];
	snprintf(step, sizeof step,
		 "%s (%llu micro-batch%s of %llu x %llu token%s, %llu sequence%s a step, recompute "
		 "%s, %s loss%s%s)",
		 cfg_fmt_seconds(o->step_seconds, s[0], 32), (unsigned long long)o->grad_accum,
		 o->grad_accum == 1 ? "" : "es", (unsigned long long)o->micro_batch,
		 (unsigned long long)r->w->job.seq, r->w->job.seq == 1 ? "" : "s",
		 (unsigned long long)o->sequences_per_step,
		 o->sequences_per_step == 1 ? "" : "s",
		 sim_option_recompute(o, rc, sizeof rc), mdl_loss_name(o->loss),
		 upcast_note(&r->w->job, o->loss),
		 o->ckpt_in_dram > 0 ? ", activations kept in DRAM" : "");
	wrap_at(fp, "  ", 13, "step", step);
	if (o->update_seconds >= 0) {
		/* the split DeepSpeed's wall_clock_breakdown and Megatron's timers report: the
		 * micro-batches, then the update once the last gradients landed */
		char ph[240];
		snprintf(ph, sizeof ph,
			 "%s forward and backward, %s of update after the last backward",
			 cfg_fmt_seconds(o->step_seconds - o->update_seconds, s[1], 32),
			 cfg_fmt_seconds(o->update_seconds, s[2], 32));
		wrap_at(fp, "  ", 13, "phases", ph);
	}
	fprintf(fp, "  throughput   %.0f tokens/s, %.1f model TFLOPS per GPU\n",
		o->tokens_per_second, o->model_tflops_per_gpu);
	struct cfg_band band, mem;
	if (o->step_seconds > 0 && rpt_step_band(o, &band, NULL)) {
		char range[512], t[80], g[80];
		size_t n = (size_t)snprintf(
		    range, sizeof range, "step %s",
		    span(o->step_seconds, &band, cfg_fmt_seconds_as, t, sizeof t));
		bool m = rpt_memory_band(&mem) && n < sizeof range;
		if (m) {
			span(o->peak_gpu, &mem, cfg_fmt_bytes_as, g, sizeof g);
			n += (size_t)snprintf(range + n, sizeof range - n, ", GPU peak %s", g);
		}
		if (n < sizeof range)
			n += (size_t)snprintf(range + n, sizeof range - n,
					      ", where 90 %% of %d published %s runs took "
					      "%.2f-%.2fx the predicted time",
					      band.cases, STEP_KIND[step_kind(o)], band.lo, band.hi);
		if (m && n < sizeof range)
			n += (size_t)snprintf(range + n, sizeof range - n,
					      ", and 90 %% of %d held %.2f-%.2fx the predicted "
					      "GPU peak",
					      mem.cases, mem.lo, mem.hi);
		if (n < sizeof range)
			snprintf(range + n, sizeof range - n, " (tierplan validate)");
		wrap_at(fp, "  ", 13, "range", range);
	}
	fprintf(fp, "  fits         %s%s%s\n", o->fits ? "yes" : "no", o->fits ? "" : ": ",
		o->fits ? "" : o->overflow);
	fprintf(fp, "  peak memory  GPU %s per GPU, DRAM %s per node, flash %s per node\n",
		cfg_fmt_bytes(o->peak_gpu, s[1], 32), cfg_fmt_bytes(o->peak_dram, s[2], 32),
		cfg_fmt_bytes(o->peak_flash, s[3], 32));
	/* what a training log prints: PyTorch's allocator counts without the CUDA context */
	fprintf(fp, "               PyTorch max_memory_reserved %s, max_memory_allocated %s\n",
		cfg_fmt_bytes(o->peak_gpu_reserved, s[1], 32),
		cfg_fmt_bytes(o->peak_gpu_allocated, s[2], 32));
	char gpu[32] = "GPU";
	if (o->layout.pp > 1) /* the busiest stage's */
		snprintf(gpu, sizeof gpu, "stage %u's GPU", o->gpu_mem.stage);
	holds(fp, gpu, "other", &(struct sim_tier_memory){o->gpu_mem.weights, o->gpu_mem.gradients,
						   o->gpu_mem.optimizer, o->gpu_mem.activations,
						   o->gpu_mem.other});
	if (rpt_shows_dram(o)) {
		holds(fp, "DRAM", DRAM_REST, &o->dram_mem);
		holds(fp, "flash", "other", &o->flash_mem);
	}
	fprintf(fp, "  power        peak %s, average %s, %.0f kJ per step\n",
		cfg_fmt_watts(o->peak_power_watts, s[4], 32),
		cfg_fmt_watts(o->avg_power_watts, s[5], 32), o->energy_joules_per_step / 1e3);
	fprintf(fp, "  flash writes %s per step",
		cfg_fmt_bytes(o->flash_bytes_written_per_step, s[0], 32));
	/* a drive with an SLC cache: what it takes of a drive's writes, and the mean rate; where
	 * that is less than the whole cache, why (what the drive folded free in the pauses) */
	double per = r->hw->flash_count ? o->flash_bytes_written_per_step / r->hw->flash_count : 0;
	double cache, after, free = o->flash_slc_free;
	mdl_flash_slc(r->hw, &cache, &after);
	if (cache > 0 && per > 0) {
		cfg_fmt_bytes(per, s[1], 32);
		if (per > free)
			fprintf(fp, ", %s a drive: %s into its SLC cache, the rest at %s past it, "
				    "%s mean",
				s[1], cfg_fmt_bytes(free, s[2], 32), cfg_fmt_rate(after, s[3], 32),
				cfg_fmt_rate(o->flash_write_rate, s[4], 32));
		else
			fprintf(fp, ", %s a drive, all into its %s SLC cache", s[1],
				cfg_fmt_bytes(cache, s[2], 32));
		if (free < cache)
			fprintf(fp, "\n               (a drive folds its %s SLC cache free at %s, "
				    "only in the %s a step it does not write)",
				cfg_fmt_bytes(cache, s[1], 32), cfg_fmt_rate(after, s[2], 32),
				cfg_fmt_seconds(o->flash_pause, s[3], 32));
	}
	fputc('\n', fp);
}

/* The resources that ran, each with its busy time, busy share and load, as rows of `fmt` (text
 * columns or a Markdown table). busy: the share of the step anything runs on the resource;
 * load (sim_resource_load): the bottleneck is the resource near 100 % load, not the one busy
 * longest. */
static void sim_resources(FILE *fp, const struct rpt_sim *r, const char *fmt)
{
	const struct sim_option *o = r->o;
	char t[32];
	for (int i = 0; i < eng_nresources(r->e); i++) {
		double busy, work;
		sim_resource_usage(r->e, o, i, &busy, &work);
		if (busy <= 0)
			continue;
		fprintf(fp, fmt, eng_resource_at(r->e, i)->name, cfg_fmt_seconds(busy, t, sizeof t),
			100 * busy / o->step_seconds, 100 * sim_resource_load(r->e, o, i));
	}
}

static void sim_title(FILE *fp, const struct rpt_sim *r)
{
	char lay[64];
	layout_str(r->o, lay, sizeof lay, false);
	fprintf(fp, "tierplan simulate: %s on %u x %s, policy %s, %s", r->model_name, r->o->gpus,
		r->hw->gpu.name, r->o->policy, lay);
}

static void sim_events(FILE *fp, const struct sim_option *o)
{
	bool all = o->micro_simulated >= o->grad_accum;
	fprintf(fp, "%llu events, %llu of %llu micro-batches simulated%s",
		(unsigned long long)o->events, (unsigned long long)o->micro_simulated,
		(unsigned long long)o->grad_accum, all ? "" : " (the rest repeat the steady one)");
	if (o->unsteady[0])
		fprintf(fp, " (no steady period to repeat: the queue on %s grew by %.0f %% of a "
			"period from one to the next)",
			o->unsteady, 100 * o->unsteady_growth);
	fputc('\n', fp);
}

void rpt_sim_text(FILE *fp, const struct rpt_sim *r)
{
	sim_title(fp, r);
	fputs("\n\n", fp);
	sim_summary(fp, r);
	fprintf(fp, "\n  %-24s %12s %6s %6s\n", "resource", "busy time", "busy", "load");
	sim_resources(fp, r, "  %-24s %12s %5.1f%% %5.1f%%\n");
	fputs("\n  ", fp);
	sim_events(fp, r->o);
}

void rpt_sim_md(FILE *fp, const struct rpt_sim *r)
{
	fputs("# ", fp);
	sim_title(fp, r);
	fputs("\n\n## Step\n\n```\n", fp);
	sim_summary(fp, r);
	fputs("```\n\n## Resources\n\n| resource | busy time | busy | load |\n"
	      "|---|---:|---:|---:|\n",
	      fp);
	sim_resources(fp, r, "| %s | %s | %.1f %% | %.1f %% |\n");
	fputc('\n', fp);
	sim_events(fp, r->o);
}

void rpt_csv_field(FILE *fp, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

void rpt_sim_csv_row(FILE *fp, const struct sim_option *o, const char *error)
{
	if (!o) {
		fputs("false,", fp);
		rpt_csv_field(fp, error);
		for (const char *c = strchr(RPT_SIM_CSV_COLS, ',') + 1; (c = strchr(c, ',')); c++)
			fputc(',', fp); /* the result columns after the error, empty */
		return;
	}
	fprintf(fp, "%s,,%s,%u,%u,%u,%u,%u,%u,%u,%u,%llu,%llu,%s,", o->fits ? "true" : "false",
		o->policy, o->gpus, o->layout.tp, o->layout.pp, mdl_layout_vp(&o->layout),
		mdl_layout_ep(&o->layout), mdl_layout_cp(&o->layout), o->layout.dp, o->layout.zero,
		(unsigned long long)o->micro_batch, (unsigned long long)o->grad_accum,
		mdl_recompute_name(o->recompute));
	if (o->stopped) /* step_seconds to cost_cloud_usd not known */
		fputs(",,,,,,,,,,,,", fp);
	else
		fprintf(fp, "%.6g,%.6g,%.6g,%.0f,%.0f,%.0f,%.6g,%.6g,%.0f,%.6g,%.6g,%.6g,",
			o->step_seconds, o->tokens_per_second, o->model_tflops_per_gpu, o->peak_gpu,
			o->peak_dram, o->peak_flash, o->peak_power_watts, o->energy_joules_per_step,
			o->flash_bytes_written_per_step, o->runtime_seconds, o->cost_total,
			o->cost_cloud);
	rpt_csv_field(fp, o->fits ? "" : o->overflow);
	struct cfg_band b;
	if (!o->stopped && rpt_step_band(o, &b, NULL))
		fprintf(fp, ",%.6g,%.6g", o->step_seconds * b.lo, o->step_seconds * b.hi);
	else
		fputs(",,", fp);
}

void rpt_sim_csv(FILE *fp, const struct rpt_sim *r)
{
	fputs(RPT_SIM_CSV_COLS "\n", fp);
	rpt_sim_csv_row(fp, r->o, NULL);
	fputc('\n', fp);
}
