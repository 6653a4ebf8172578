/* json — the plan as the JSON document of DESIGN.md, built with cJSON. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/engine.h"
#include "../sim/step.h"
#include "report.h"

static cJSON *num(double v)
{
	return cJSON_CreateNumber(v);
}

/* A profile's figure: null where it measured none (0). */
static cJSON *measured(double v)
{
	return v > 0 ? num(v) : cJSON_CreateNull();
}

/* Prints the document and frees it; I/O errors are the caller's (ferror). */
static void emit(FILE *fp, cJSON *root)
{
	char *text = cJSON_Print(root);

	if (text) {
		fputs(text, fp);
		fputc('\n', fp);
	}
	free(text);
	cJSON_Delete(root);
}

static void add_layout(cJSON *o, const struct mdl_layout *l)
{
	cJSON *lay = cJSON_AddObjectToObject(o, "layout");
	cJSON_AddNumberToObject(lay, "tp", l->tp);
	cJSON_AddNumberToObject(lay, "pp", l->pp);
	cJSON_AddNumberToObject(lay, "dp", l->dp);
	cJSON_AddNumberToObject(lay, "zero", l->zero);
	cJSON_AddBoolToObject(lay, "sequence_parallel", l->sp);
	cJSON_AddNumberToObject(lay, "interleave", mdl_layout_vp(l));
	cJSON_AddNumberToObject(lay, "ep", mdl_layout_ep(l));
	/* the TP ranks a routed expert splits over: tp unless --expert-tp */
	cJSON_AddNumberToObject(lay, "expert_tp", mdl_layout_etp(l));
	cJSON_AddNumberToObject(lay, "cp", mdl_layout_cp(l));
	/* an uneven pipeline's end stages (--first/--last-stage-layers; 0: an even share) */
	cJSON_AddNumberToObject(lay, "first_stage_layers", mdl_layout_uneven(l) ? l->first : 0);
	cJSON_AddNumberToObject(lay, "last_stage_layers", mdl_layout_uneven(l) ? l->last : 0);
	/* the data-parallel ranks a ZeRO partition spans: dp unless hybrid (--dp-shard) */
	cJSON_AddNumberToObject(lay, "dp_shard", mdl_layout_shard(l));
}

/* A host tier's contents at its peak, per node (null where peak_bytes has none). */
static void add_tier(cJSON *j, const char *key, bool shown, const struct sim_tier_memory *t,
		     double total)
{
	if (!shown) {
		cJSON_AddNullToObject(j, key);
		return;
	}
	cJSON *m = cJSON_AddObjectToObject(j, key);
	cJSON_AddItemToObject(m, "weights", num(t->weights));
	cJSON_AddItemToObject(m, "gradients", num(t->gradients));
	cJSON_AddItemToObject(m, "optimizer", num(t->optimizer));
	cJSON_AddItemToObject(m, "activations", num(t->activations));
	cJSON_AddItemToObject(m, "other", num(t->other));
	cJSON_AddItemToObject(m, "total", num(total));
}

static cJSON *span(double v, const struct cfg_band *b)
{
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, num(v * b->lo));
	cJSON_AddItemToArray(a, num(v * b->hi));
	return a;
}

/* What published runs of the option's kind measured against predictions like it (the accuracy
 * record: rpt_step_band), applied to its step and runtime, and to its GPU peak; null without a
 * record or a time. */
void rpt_add_ranges(cJSON *j, const struct sim_option *o)
{
	struct cfg_band b, mem;
	const char *cat;
	if (!(o->step_seconds > 0) || !rpt_step_band(o, &b, &cat)) {
		cJSON_AddNullToObject(j, "ranges");
		return;
	}
	cJSON *r = cJSON_AddObjectToObject(j, "ranges");
	cJSON_AddStringToObject(r, "category", cat);
	cJSON_AddNumberToObject(r, "runs", b.cases);
	cJSON_AddItemToObject(r, "measured_over_predicted", span(1, &b));
	cJSON_AddItemToObject(r, "step_seconds", span(o->step_seconds, &b));
	cJSON_AddItemToObject(r, "runtime_seconds", span(o->runtime_seconds, &b));
	if (rpt_memory_band(&mem)) {
		cJSON_AddItemToObject(r, "gpu_peak_bytes", span(o->peak_gpu, &mem));
		cJSON_AddNumberToObject(r, "gpu_peak_runs", mem.cases);
	} else {
		cJSON_AddNullToObject(r, "gpu_peak_bytes");
		cJSON_AddNullToObject(r, "gpu_peak_runs");
	}
}

/* The fields a plan option and a simulate result share. */
static void add_result(cJSON *j, const struct sim_option *o)
{
	cJSON *pk, *gm;

	cJSON_AddNumberToObject(j, "gpus", o->gpus);
	cJSON_AddNumberToObject(j, "nodes", o->nodes);
	add_layout(j, &o->layout);
	cJSON_AddStringToObject(j, "policy", o->policy);
	/* zero3-offload: the parameters offloaded with the optimizer (DeepSpeed's offload_param
	 * cpu) or on the GPUs (none) */
	if (!strcmp(o->policy, "zero3-offload"))
		cJSON_AddStringToObject(j, "offload_param", o->params_on_gpu ? "none" : "cpu");
	else
		cJSON_AddNullToObject(j, "offload_param");
	/* zero3-offload (opt): the Twin-Flow ratio (offload_optimizer.ratio), and the share of
	 * the rank's parameters whose optimizer that keeps on the GPU */
	if (o->params_on_gpu) {
		cJSON_AddNumberToObject(j, "offload_ratio", 1 - o->twin_gpu);
		cJSON_AddNumberToObject(j, "optimizer_on_gpu", o->opt_gpu);
	} else {
		cJSON_AddNullToObject(j, "offload_ratio");
		cJSON_AddNullToObject(j, "optimizer_on_gpu");
	}
	cJSON_AddStringToObject(j, "recompute", mdl_recompute_name(o->recompute));
	cJSON_AddNumberToObject(j, "recompute_layers", o->recompute_layers);
	cJSON_AddStringToObject(j, "loss", mdl_loss_name(o->loss));
	cJSON_AddNumberToObject(j, "micro_batch", (double)o->micro_batch);
	cJSON_AddNumberToObject(j, "grad_accum", (double)o->grad_accum);
	cJSON_AddBoolToObject(j, "fits", o->fits);
	if (o->fits)
		cJSON_AddNullToObject(j, "overflow");
	else
		cJSON_AddStringToObject(j, "overflow", o->overflow);
	pk = cJSON_AddObjectToObject(j, "peak_bytes");
	cJSON_AddItemToObject(pk, "gpu", num(o->peak_gpu));
	cJSON_AddItemToObject(pk, "gpu_reserved", num(o->peak_gpu_reserved));
	cJSON_AddItemToObject(pk, "gpu_allocated", num(o->peak_gpu_allocated));
	if (rpt_shows_dram(o)) {
		cJSON_AddItemToObject(pk, "dram", num(o->peak_dram));
		cJSON_AddItemToObject(pk, "flash", num(o->peak_flash));
	} else {
		cJSON_AddNullToObject(pk, "dram");
		cJSON_AddNullToObject(pk, "flash");
	}
	gm = cJSON_AddObjectToObject(j, "gpu_memory_bytes");
	cJSON_AddItemToObject(gm, "weights", num(o->gpu_mem.weights));
	cJSON_AddItemToObject(gm, "gradients", num(o->gpu_mem.gradients));
	cJSON_AddItemToObject(gm, "optimizer", num(o->gpu_mem.optimizer));
	cJSON_AddItemToObject(gm, "activations", num(o->gpu_mem.activations));
	cJSON_AddItemToObject(gm, "other", num(o->gpu_mem.other));
	cJSON_AddItemToObject(gm, "total", num(o->gpu_mem.total));
	add_tier(j, "dram_memory_bytes", rpt_shows_dram(o), &o->dram_mem, o->peak_dram);
	add_tier(j, "flash_memory_bytes", rpt_shows_dram(o), &o->flash_mem, o->peak_flash);
	cJSON_AddItemToObject(j, "step_seconds", num(o->step_seconds));
	/* the step after the last backward (the update); null where a search's run did not
	 * time it */
	cJSON_AddItemToObject(j, "update_seconds",
			      o->update_seconds >= 0 ? num(o->update_seconds) : cJSON_CreateNull());
	cJSON_AddItemToObject(j, "tokens_per_step", num(o->tokens_per_step));
	cJSON_AddNumberToObject(j, "sequences_per_step", (double)o->sequences_per_step);
	cJSON_AddItemToObject(j, "tokens_per_second", num(o->tokens_per_second));
	cJSON_AddItemToObject(j, "model_tflops_per_gpu", num(o->model_tflops_per_gpu));
	cJSON_AddItemToObject(j, "mfu", num(o->mfu));
	cJSON_AddItemToObject(j, "peak_power_watts", num(o->peak_power_watts));
	cJSON_AddItemToObject(j, "average_power_watts", num(o->avg_power_watts));
	rpt_add_ranges(j, o);
}

static cJSON *option_json(const struct sim_option *o)
{
	cJSON *j = cJSON_CreateObject(), *c;

	cJSON_AddStringToObject(j, "name", o->name);
	cJSON_AddStringToObject(j, "kind", o->kind == SIM_GPU_ONLY ? "gpu-only" : "tiered");
	add_result(j, o);
	cJSON_AddItemToObject(j, "steps", num(o->steps));
	cJSON_AddItemToObject(j, "runtime_seconds", num(o->runtime_seconds));
	cJSON_AddItemToObject(j, "energy_kwh", num(o->energy_kwh));
	c = cJSON_AddObjectToObject(j, "cost_usd");
	cJSON_AddItemToObject(c, "capex", num(o->cost_capex));
	cJSON_AddItemToObject(c, "flash_wear", num(o->cost_flash_wear));
	cJSON_AddItemToObject(c, "energy", num(o->cost_energy));
	cJSON_AddItemToObject(c, "cloud", num(o->cost_cloud));
	cJSON_AddItemToObject(c, "total", num(o->cost_total));
	cJSON_AddItemToObject(j, "peak_power_facility_watts", num(o->peak_power_facility_watts));
	cJSON_AddItemToObject(j, "purchase_usd", num(o->purchase_usd));
	cJSON_AddItemToObject(j, "network_fabric_usd", num(o->fabric_usd));
	cJSON_AddItemToObject(j, "facility_power_usd", num(o->facility_usd));
	c = cJSON_AddObjectToObject(j, "usd_per_million_tokens");
	cJSON_AddItemToObject(c, "owned", num(o->usd_per_mtok_owned));
	cJSON_AddItemToObject(c, "cloud", num(o->usd_per_mtok_cloud));
	cJSON_AddItemToObject(j, "dram_bytes", num(o->dram));
	cJSON_AddNumberToObject(j, "flash_drives", o->flash_count);
	cJSON_AddItemToObject(j, "flash_bytes_written", num(o->flash_bytes_written));
	cJSON_AddItemToObject(j, "flash_life_fraction", num(o->flash_life_fraction));
	cJSON_AddItemToObject(j, "flash_drive_writes_per_day", num(o->flash_dwpd));
	cJSON_AddBoolToObject(j, "flash_over_rating", o->flash_over_rating);
	return j;
}

/* The resolved inputs every document echoes: model, job and the framework's settings it runs
 * with (f), hardware, economics. */
static void add_inputs(cJSON *root, const char *name, const char *path,
		       const struct sim_workload *w, const struct sim_config *f,
		       const struct mdl_hw *hw, const struct sim_econ *econ, bool recompute_auto,
		       const char *loss)
{
	const struct mdl_arch *a = &w->arch;
	const struct mdl_job *jb = &w->job;
	struct mdl_counts cnt;
	cJSON *m, *jj, *h, *g, *x;
	char targets[64];

	mdl_arch_counts(a, &cnt);
	m = cJSON_AddObjectToObject(root, "model");
	cJSON_AddStringToObject(m, "name", name);
	cJSON_AddStringToObject(m, "config", path);
	cJSON_AddStringToObject(m, "model_type", a->model_type);
	cJSON_AddItemToObject(m, "params", num((double)cnt.params));
	cJSON_AddItemToObject(m, "trainable_params", num((double)mdl_job_trainable(a, jb)));
	cJSON_AddItemToObject(m, "active_params", num((double)cnt.active_params));
	cJSON_AddNumberToObject(m, "layers", (double)a->layers);
	cJSON_AddNumberToObject(m, "hidden", (double)a->hidden);
	cJSON_AddNumberToObject(m, "heads", (double)a->heads);
	cJSON_AddNumberToObject(m, "kv_heads", (double)a->kv_heads);
	cJSON_AddNumberToObject(m, "head_dim", (double)a->head_dim);
	cJSON_AddNumberToObject(m, "intermediate", (double)a->intermediate);
	cJSON_AddNumberToObject(m, "vocab", (double)a->vocab);
	cJSON_AddNumberToObject(m, "experts", a->experts);
	cJSON_AddNumberToObject(m, "experts_per_token", a->experts_per_tok);
	cJSON_AddNumberToObject(m, "moe_layers", (double)a->moe_layers);
	cJSON_AddNumberToObject(m, "sliding_window", (double)a->sliding_window);
	cJSON_AddNumberToObject(m, "sliding_layers", (double)a->sliding_layers);
	cJSON_AddBoolToObject(m, "tied_embeddings", a->tied);
	/* the checkpoint's own quantisation, as its config or its release's name states it
	 * (job.quant says what the plan trains over) */
	if (a->quant_method[0]) {
		x = cJSON_AddObjectToObject(m, "quantization");
		cJSON_AddStringToObject(x, "method", a->quant_method);
		if (a->quant_bits)
			cJSON_AddNumberToObject(x, "bits", a->quant_bits);
		else
			cJSON_AddNullToObject(x, "bits");
		cJSON_AddStringToObject(x, "stated_by", a->quant_named ? "name" : "config");
	} else {
		cJSON_AddNullToObject(m, "quantization");
	}

	jj = cJSON_AddObjectToObject(root, "job");
	cJSON_AddStringToObject(jj, "method", mdl_method_name(jb->method));
	if (jb->method == MDL_FULL) {
		cJSON_AddNullToObject(jj, "lora_rank");
		cJSON_AddNullToObject(jj, "lora_targets");
	} else {
		cJSON_AddNumberToObject(jj, "lora_rank", jb->lora_rank);
		cJSON_AddStringToObject(jj, "lora_targets",
					mdl_targets_str(jb->lora_targets, targets, sizeof targets));
	}
	if (jb->method == MDL_QLORA)
		cJSON_AddStringToObject(jj, "quant", mdl_quant_name(jb->quant));
	else
		cJSON_AddNullToObject(jj, "quant");
	if (mdl_job_bnb(jb)) {
		cJSON_AddStringToObject(jj, "kbit_upcast", mdl_upcast_name(jb->upcast));
		cJSON_AddBoolToObject(jj, "quant_head", jb->quant_head);
		cJSON_AddBoolToObject(jj, "double_quant", !jb->plain_nf4);
		cJSON_AddStringToObject(jj, "quant_from", mdl_quant_from_name(jb->quant_fp16));
	} else {
		cJSON_AddNullToObject(jj, "kbit_upcast");
		cJSON_AddNullToObject(jj, "quant_head");
		cJSON_AddNullToObject(jj, "double_quant");
		cJSON_AddNullToObject(jj, "quant_from");
	}
	if (jb->method == MDL_FULL) {
		cJSON_AddNullToObject(jj, "lora_dtype");
		cJSON_AddNullToObject(jj, "dora");
		cJSON_AddNullToObject(jj, "lora_kernels");
	} else {
		cJSON_AddStringToObject(jj, "lora_dtype", mdl_lora_dtype_name(jb->lora_fp32));
		cJSON_AddBoolToObject(jj, "dora", jb->dora);
		cJSON_AddStringToObject(jj, "lora_kernels", mdl_lora_kernels_name(jb->fused_lora));
	}
	cJSON_AddStringToObject(jj, "precision", mdl_precision_name(jb->precision));
	if (jb->precision == MDL_FP8)
		cJSON_AddStringToObject(jj, "fp8_recipe", mdl_fp8_recipe_name(jb->fp8_recipe));
	else
		cJSON_AddNullToObject(jj, "fp8_recipe");
	cJSON_AddStringToObject(jj, "optimizer", mdl_optimizer_name(jb->optimizer));
	cJSON_AddStringToObject(jj, "recompute",
				recompute_auto ? "auto" : mdl_recompute_name(jb->recompute));
	cJSON_AddNumberToObject(jj, "recompute_layers", jb->recompute_layers);
	unsigned rmask = jb->recompute_modules ? jb->recompute_modules : MDL_RM_CORE_ATTN;
	cJSON *rm = cJSON_AddArrayToObject(jj, "recompute_modules");
	for (unsigned i = 0; rm && mdl_rc_module_name(i); i++)
		if (rmask >> i & 1)
			cJSON_AddItemToArray(rm, cJSON_CreateString(mdl_rc_module_name(i)));
	cJSON_AddBoolToObject(jj, "checkpoint_early_stop", jb->recompute_early_stop);
	cJSON_AddStringToObject(jj, "attention", mdl_attention_name(jb->attention));
	cJSON_AddBoolToObject(jj, "compile", jb->compile);
	cJSON_AddBoolToObject(jj, "fused_qkv", jb->fused_qkv);
	cJSON_AddBoolToObject(jj, "repeat_kv", jb->repeat_kv);
	cJSON_AddStringToObject(jj, "moe_gemm", jb->grouped_experts ? "grouped" : "loop");
	cJSON_AddStringToObject(jj, "pointwise", jb->eager_ops ? "eager" : "fused");
	cJSON_AddStringToObject(jj, "swiglu", jb->fused_glu ? "fused" : "eager");
	cJSON_AddStringToObject(jj, "loss", loss);
	cJSON_AddStringToObject(jj, "logits_upcast", jb->upcast_in_model ? "model" : "loss");
	cJSON_AddStringToObject(jj, "grad_dtype", mdl_grad_dtype_name(jb->grad_dtype));
	cJSON_AddStringToObject(jj, "master_weights", mdl_master_name(jb->master));
	cJSON_AddNumberToObject(jj, "seq", (double)jb->seq);
	cJSON_AddNumberToObject(jj, "doc_tokens", (double)jb->doc_tokens);
	cJSON_AddNumberToObject(jj, "micro_batch", (double)jb->micro_batch);
	if (w->grad_accum) {
		cJSON_AddNullToObject(jj, "global_batch");
		cJSON_AddNumberToObject(jj, "grad_accum", (double)w->grad_accum);
	} else {
		cJSON_AddNumberToObject(jj, "global_batch", (double)w->global_batch);
		cJSON_AddNullToObject(jj, "grad_accum");
	}
	cJSON_AddItemToObject(jj, "tokens", num(w->tokens));
	x = cJSON_AddObjectToObject(jj, "framework");
	cJSON_AddBoolToObject(x, "clip_grad", !f->no_clip_grad);
	cJSON_AddBoolToObject(x, "foreach_optimizer", f->opt_foreach);
	cJSON_AddBoolToObject(x, "optimizer_in_backward", f->opt_in_bwd);
	cJSON_AddBoolToObject(x, "activation_offload", f->act_offload);
	cJSON_AddNumberToObject(x, "activation_offload_layers", f->act_offload_layers);
	cJSON_AddBoolToObject(x, "tp_comm_overlap", f->tp_comm_overlap);
	cJSON_AddBoolToObject(x, "ep_overlap", f->ep_overlap);
	cJSON_AddBoolToObject(x, "shared_expert_overlap", f->shared_overlap);
	cJSON_AddStringToObject(x, "moe_dispatcher", sim_dispatcher_name(f));
	if (f->dispatcher == SIM_DISPATCH_ALLTOALL)
		cJSON_AddNullToObject(x, "moe_dispatcher_sms");
	else
		cJSON_AddNumberToObject(x, "moe_dispatcher_sms",
					sim_dispatcher_sms(f));
	cJSON_AddBoolToObject(x, "fp8_all_gather", f->fp8_all_gather);
	cJSON_AddBoolToObject(x, "overlap_grad_reduce", !f->no_grad_overlap);
	cJSON_AddBoolToObject(x, "overlap_param_gather", f->overlap_param_gather);
	cJSON_AddNumberToObject(x, "prefetch", step_prefetch(f));
	cJSON_AddStringToObject(x, "backward_prefetch", f->bwd_prefetch_post ? "post" : "pre");
	cJSON_AddStringToObject(x, "checkpoint_wrap", f->ckpt_outside ? "outside" : "inside");
	cJSON_AddStringToObject(x, "grad_sync", f->grad_sync_last ? "last" : "each");
	cJSON_AddItemToObject(x, "reduce_bucket", num(step_reduce_bucket(f)));
	cJSON_AddStringToObject(x, "swap_pipeline", sim_swap_pipeline_name(f));
	cJSON_AddItemToObject(x, "max_in_cpu", num(f->max_in_cpu));
	cJSON_AddStringToObject(x, "weights_up", f->weights_in_step ? "in-step" : "after");
	cJSON_AddStringToObject(x, "graph_freed", f->graph_next_fwd ? "next-forward" : "backward");
	cJSON_AddStringToObject(x, "cpu_checkpointing", sim_cpu_ckpt_name(f));
	cJSON_AddNumberToObject(x, "offload_ratio", 1 - f->twin_gpu);

	h = cJSON_AddObjectToObject(root, "hardware");
	g = cJSON_AddObjectToObject(h, "gpu");
	cJSON_AddStringToObject(g, "name", hw->gpu.name);
	cJSON_AddItemToObject(g, "memory_bytes", num(hw->gpu.memory));
	cJSON_AddItemToObject(g, "bf16_flops", num(hw->gpu.bf16_flops));
	cJSON_AddItemToObject(g, "tdp_watts", num(hw->gpu.tdp));
	cJSON_AddItemToObject(g, "price_usd", num(hw->gpu.price));
	cJSON_AddItemToObject(g, "cloud_usd_per_hour", num(hw->gpu.cloud_per_hour));
	cJSON_AddNumberToObject(h, "gpus_per_node", hw->gpus_per_node);
	x = cJSON_AddObjectToObject(h, "host");
	cJSON_AddStringToObject(x, "name", hw->host.name);
	cJSON_AddBoolToObject(x, "auto", hw->host_auto);
	cJSON_AddItemToObject(x, "cpu_cores", num(hw->host.cpu_cores));
	cJSON_AddItemToObject(h, "dram_bytes", num(hw->dram));
	x = cJSON_AddObjectToObject(h, "flash");
	cJSON_AddStringToObject(x, "name", hw->flash.name);
	cJSON_AddNumberToObject(x, "count", hw->flash_count);
	cJSON_AddItemToObject(x, "capacity_bytes", num(hw->flash.capacity));
	/* the calibrated profile (--profile), null without one: what of it the run used */
	if (hw->prof.file[0]) {
		x = cJSON_AddObjectToObject(h, "profile");
		cJSON_AddStringToObject(x, "file", hw->prof.file);
		cJSON_AddItemToObject(x, "gemm_share_of_peak", measured(hw->prof.gemm_efficiency));
		cJSON_AddItemToObject(x, "gemm_layer_hidden", measured(hw->prof.gemm_hidden));
		cJSON_AddItemToObject(x, "pcie_h2d_bytes_per_second", measured(hw->prof.pcie_h2d));
		cJSON_AddItemToObject(x, "pcie_d2h_bytes_per_second", measured(hw->prof.pcie_d2h));
		cJSON_AddItemToObject(x, "pcie_both_bytes_per_second",
				      measured(hw->prof.pcie_bidir));
	} else {
		cJSON_AddNullToObject(h, "profile");
	}
	x = cJSON_AddObjectToObject(root, "economics");
	cJSON_AddItemToObject(x, "amortize_years", num(econ->amortize_years));
	cJSON_AddItemToObject(x, "pue", num(econ->pue));
	cJSON_AddItemToObject(x, "usd_per_kwh", num(econ->usd_per_kwh));
	double sizes[MDL_DRAM_SIZES];
	int nsz = sim_dram_sizes(hw, sizes);
	cJSON *sz = cJSON_AddArrayToObject(x, "dram_sizes_bytes");
	for (int i = 0; i < nsz; i++)
		cJSON_AddItemToArray(sz, num(sizes[i]));

}

void rpt_plan_json(FILE *fp, const struct rpt_plan *r)
{
	const struct sim_plan *p = r->plan;
	const struct mdl_hw *hw = r->hw;
	cJSON *root = cJSON_CreateObject(), *x, *mem, *opts, *rec;

	cJSON_AddNumberToObject(root, "schema_version", TIERPLAN_SCHEMA_VERSION);
	cJSON_AddStringToObject(root, "tool_version", TIERPLAN_VERSION);
	cJSON_AddStringToObject(root, "command", r->command);
	cJSON_AddStringToObject(root, "estimator", "discrete-event simulation");

	add_inputs(root, r->model_name, r->model_path, r->w, sim_plan_framework(r->req), hw, r->econ,
		   r->recompute_auto,
		   r->loss_auto ? "auto" : mdl_loss_name(r->w->job.loss));

	mem = cJSON_AddObjectToObject(root, "memory");
	double states = p->states.weights_bytes + p->states.gradients_bytes +
			p->states.optimizer_bytes;
	cJSON_AddItemToObject(mem, "weights_bytes", num(p->states.weights_bytes));
	cJSON_AddItemToObject(mem, "gradients_bytes", num(p->states.gradients_bytes));
	cJSON_AddItemToObject(mem, "optimizer_bytes", num(p->states.optimizer_bytes));
	cJSON_AddItemToObject(mem, "activations_bytes", num(p->activations_bytes));
	cJSON_AddItemToObject(mem, "other_bytes", num(p->other_bytes));
	cJSON_AddItemToObject(mem, "total_bytes", num(states + p->activations_bytes +
						      p->other_bytes));
	cJSON_AddItemToObject(mem, "model_state_bytes_per_param",
			      num(states / (double)p->states.params));

	opts = cJSON_AddArrayToObject(root, "options");
	for (int i = 0; i < p->noptions; i++)
		cJSON_AddItemToArray(opts, option_json(&p->options[i]));
	rec = cJSON_AddObjectToObject(root, "recommendation");
	cJSON_AddStringToObject(rec, "objective", sim_objective_name(r->req->objective));
	cJSON_AddItemToObject(rec, "deadline_seconds",
			      r->req->deadline > 0 ? num(r->req->deadline) : cJSON_CreateNull());
	cJSON_AddItemToObject(rec, "budget_usd",
			      r->req->budget > 0 ? num(r->req->budget) : cJSON_CreateNull());
	if (p->rec_best >= 0)
		cJSON_AddNumberToObject(rec, "best", p->rec_best);
	else
		cJSON_AddNullToObject(rec, "best");
	cJSON_AddBoolToObject(rec, "constraints_met", p->deadline_met);
	if (p->rec_gpu_only >= 0)
		cJSON_AddNumberToObject(rec, "gpu_only", p->rec_gpu_only);
	else
		cJSON_AddNullToObject(rec, "gpu_only");
	if (p->rec_tiered >= 0)
		cJSON_AddNumberToObject(rec, "tiered", p->rec_tiered);
	else
		cJSON_AddNullToObject(rec, "tiered");
	cJSON *passed = cJSON_AddObjectToObject(rec, "passed_over");
	static const char *const roles[3] = {"best", "gpu_only", "tiered"};
	for (int k = 0; k < 3; k++)
		cJSON_AddItemToObject(passed, roles[k],
				      p->rec_passed[k] >= 0 ? num(p->rec_passed[k])
							    : cJSON_CreateNull());
	cJSON_AddItemToObject(rec, "gpus_for_memory",
			      p->gpus_for_memory ? num(p->gpus_for_memory) : cJSON_CreateNull());
	x = cJSON_AddObjectToObject(root, "search");
	cJSON_AddItemToObject(x, "configurations_evaluated", num((double)p->layouts_evaluated));
	cJSON_AddItemToObject(x, "fitting", num((double)p->fitting));
	cJSON_AddItemToObject(x, "configurations_pruned", num((double)p->layouts_pruned));
	/* the host tiers' reach: the nodes they may span (--tier-nodes) and the most GPUs */
	cJSON_AddItemToObject(x, "host_tier_nodes", num(p->host_tier_nodes));
	cJSON_AddItemToObject(x, "host_tier_gpus", num(p->host_tier_gpus));
	/* policies with no placement for the fixed recompute, which the search left out */
	cJSON *np = cJSON_AddArrayToObject(x, "policies_without_placement");
	for (int i = 0; i < p->nno_placement; i++)
		cJSON_AddItemToArray(np, cJSON_CreateString(p->no_placement[i]));
	/* GPU-only layouts over data parallelism alone, and why (NULL: model parallelism too) */
	const char *dp = sim_plan_dp_only(r->w, r->req);
	cJSON_AddItemToObject(x, "data_parallel_only",
			      dp ? cJSON_CreateString(dp) : cJSON_CreateNull());

	emit(fp, root);
}

void rpt_sim_json(FILE *fp, const struct rpt_sim *r)
{
	const struct sim_option *o = r->o;
	cJSON *root = cJSON_CreateObject(), *res, *x;

	cJSON_AddNumberToObject(root, "schema_version", TIERPLAN_SCHEMA_VERSION);
	cJSON_AddStringToObject(root, "tool_version", TIERPLAN_VERSION);
	cJSON_AddStringToObject(root, "command", "simulate");
	add_inputs(root, r->model_name, r->model_path, r->w, r->c, r->hw, r->econ, false,
		   mdl_loss_name(r->o->loss));
	add_result(root, o);
	cJSON_AddNumberToObject(root, "gpu_memory_stage", o->gpu_mem.stage);
	cJSON_AddBoolToObject(root, "checkpoints_in_dram", o->ckpt_in_dram > 0);
	cJSON_AddItemToObject(root, "energy_joules_per_step", num(o->energy_joules_per_step));
	cJSON_AddItemToObject(root, "flash_bytes_written_per_step",
			      num(o->flash_bytes_written_per_step));
	/* a drive's mean write rate over the step's writes (through and past an SLC cache) */
	cJSON_AddItemToObject(root, "flash_drive_write_bytes_per_second", num(o->flash_write_rate));
	/* what the step's writes found free of a drive's SLC cache (what it folded in the
	 * pauses), and the pauses; null without a cache or without writes */
	double cache, after;
	mdl_flash_slc(r->hw, &cache, &after);
	bool slc = cache > 0 && o->flash_bytes_written_per_step > 0;
	cJSON_AddItemToObject(root, "flash_drive_slc_free_bytes",
			      slc ? num(o->flash_slc_free) : cJSON_CreateNull());
	cJSON_AddItemToObject(root, "flash_pause_seconds",
			      slc ? num(o->flash_pause) : cJSON_CreateNull());
	res = cJSON_AddArrayToObject(root, "resources");
	for (int i = 0; i < eng_nresources(r->e); i++) {
		const struct eng_resource *er = eng_resource_at(r->e, i);
		double busy, work;
		sim_resource_usage(r->e, o, i, &busy, &work);
		x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", er->name);
		cJSON_AddItemToObject(x, "busy_seconds", num(busy));
		cJSON_AddItemToObject(x, "utilization",
				      num(o->step_seconds > 0 ? busy / o->step_seconds : 0));
		cJSON_AddItemToObject(x, "work", num(work));
		cJSON_AddStringToObject(x, "unit", er->unit);
		cJSON_AddItemToObject(x, "capacity_per_second", num(er->capacity));
		cJSON_AddItemToObject(x, "load", num(sim_resource_load(r->e, o, i)));
		cJSON_AddItemToArray(res, x);
	}
	cJSON_AddNumberToObject(root, "events", (double)o->events);
	cJSON_AddNumberToObject(root, "micro_batches_simulated", (double)o->micro_simulated);
	if (o->unsteady[0]) {
		x = cJSON_AddObjectToObject(root, "unsteady_queue");
		cJSON_AddStringToObject(x, "resource", o->unsteady);
		cJSON_AddItemToObject(x, "growth_of_period", num(o->unsteady_growth));
	} else {
		cJSON_AddNullToObject(root, "unsteady_queue");
	}
	x = cJSON_AddObjectToObject(root, "job_totals");
	cJSON_AddItemToObject(x, "steps", num(o->steps));
	cJSON_AddItemToObject(x, "runtime_seconds", num(o->runtime_seconds));
	cJSON_AddItemToObject(x, "energy_kwh", num(o->energy_kwh));
	cJSON_AddItemToObject(x, "flash_bytes_written", num(o->flash_bytes_written));
	cJSON_AddItemToObject(x, "flash_life_fraction", num(o->flash_life_fraction));

	emit(fp, root);
}
